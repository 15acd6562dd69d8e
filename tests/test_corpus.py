"""Regression corpora: content-addressed, atomic, concurrent-safe, and replayed forever after."""

import dataclasses
import json
import multiprocessing
import re
from pathlib import Path

import pytest

from harness import Role, Transcript, Turn
from harness._app.calling._options import CallOptions
from harness._app.calling._summarizer import Summarizer
from harness._app.cli._main import main
from harness._app.corpus._entries import (
    CorpusEntry,
    dedupe_corpus,
    entry_from_dict,
    entry_name,
    entry_to_dict,
    load_corpus,
    load_entry,
    merge_corpora,
    save_entry,
)
from harness._app.corpus._replay import replay_entry
from harness.summarizers.mutants import MUTANTS, SESSION_MUTANTS

SEEDED = Path(__file__).resolve().parent.parent / "corpora"
ALL_MUTANTS = {**MUTANTS, **SESSION_MUTANTS}


def _entry(n: int, invariant="negation-polarity", summarizer="pkg:fn") -> CorpusEntry:
    turns = tuple(Turn(Role.USER, f"turn {i}") for i in range(n))
    return CorpusEntry(invariant, "prohibition", summarizer, "messages", 2000, Transcript(turns, (), (n,)),
                       "0.1.0", "2026-11-29T00:00:00+00:00", "detail")


def test_names_are_content_hashes_that_ignore_when_and_by_which_release():
    a = _entry(3)
    later = CorpusEntry(*[getattr(a, f) for f in ("invariant", "fact_kind", "summarizer", "protocol", "budget",
                                                   "transcript")], "0.2.0", "2027-01-01T00:00:00+00:00", "x")
    assert entry_name(a) == entry_name(later)
    assert entry_name(a) != entry_name(_entry(4))
    assert re.fullmatch(r"[0-9a-f]{20}\.json", entry_name(a))


def test_save_is_idempotent_and_round_trips(tmp_path):
    path, new = save_entry(_entry(3), tmp_path)
    assert new and load_entry(path) == _entry(3)
    assert save_entry(_entry(3), tmp_path) == (path, False)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary files left behind


def _writer(directory: str, start: int, count: int) -> None:
    for n in range(start, start + count):
        save_entry(_entry(1 + n % 150), directory)


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_writer, args=(str(tmp_path), start, 200)) for start in (0, 100)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    corpus = load_corpus(tmp_path)
    assert corpus.errors == ()
    assert len(corpus.entries) == 150  # lengths 1..150, each written by both processes, saved once
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_a_corrupt_file_is_named_and_the_rest_still_load(tmp_path):
    save_entry(_entry(2), tmp_path)
    save_entry(_entry(3), tmp_path)
    (tmp_path / "broken.json").write_text('{"schema_version": 1, "invariant": "x"')
    bad = json.loads((tmp_path / entry_name(_entry(2))).read_text())
    bad["transcript"]["turns"][0]["role"] = "robot"
    (tmp_path / "badfield.json").write_text(json.dumps(bad))
    corpus = load_corpus(tmp_path)
    assert len(corpus.entries) == 2
    messages = sorted(str(e) for e in corpus.errors)
    assert messages[0].startswith(f"{tmp_path / 'badfield.json'}: field 'transcript.turns[0].role': expected one of")
    assert messages[1].startswith(f"{tmp_path / 'broken.json'}: field '<root>': expected valid JSON")


def test_replay_cli_reports_unreadable_files_and_replays_the_rest(tmp_path, capsys):
    save_entry(_entry(2), tmp_path)
    (tmp_path / "broken.json").write_text("{")
    code = main(["replay", str(tmp_path), "--summarizer", "harness.summarizers.identity:summarize", "--inline",
                 "--quiet"])
    captured = capsys.readouterr()
    assert code == 2  # nothing still failing, but a file could not be read
    assert "1 replayed: 0 still failing, 1 fixed" in captured.out
    assert "broken.json: field '<root>': expected valid JSON" in captured.err


def test_merge_and_dedupe(tmp_path):
    a, b, dest = tmp_path / "a", tmp_path / "b", tmp_path / "dest"
    save_entry(_entry(5), a)
    save_entry(_entry(3), a)
    save_entry(_entry(3), b)
    save_entry(_entry(4, invariant="closure"), b)
    assert merge_corpora(dest, [a, b])[:2] == (3, 1)
    removed, _ = dedupe_corpus(dest)
    assert [p.name for p in removed] == [entry_name(_entry(5))]  # the larger of the two negation-polarity entries
    assert sorted(len(e.transcript.turns) for _, e in load_corpus(dest).entries) == [3, 4]


def test_corpus_cli_list_add_merge_dedupe(tmp_path, capsys):
    path, _ = save_entry(_entry(2), tmp_path / "src")
    assert main(["corpus", "add", str(tmp_path / "c"), str(path)]) == 0
    assert main(["corpus", "merge", str(tmp_path / "c"), str(tmp_path / "src")]) == 0
    assert main(["corpus", "dedupe", str(tmp_path / "c")]) == 0
    assert main(["corpus", "list", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "added 1 new entry" in out and "1 added" not in out and "0 added, 1 already there" in out
    assert "1 entries, 0 unreadable" in out


def test_run_saves_new_failures(tmp_path):
    args = ["run", "--summarizer", "harness.summarizers.mutants:softens_prohibition", "--only", "negation-polarity",
            "--examples", "30", "--max-turns", "200", "--seed", "5", "--quiet", "--inline", "--corpus", str(tmp_path)]
    assert main(args) == 1
    (path, entry), = load_corpus(tmp_path).entries
    assert entry.invariant == "negation-polarity" and entry.summarizer.endswith("softens_prohibition")
    assert main(args) == 1 and len(list(tmp_path.glob("*.json"))) == 1  # found again: same file


def test_the_reports_name_each_finding_s_corpus_file_and_whether_this_run_added_it(tmp_path, capsys):
    corpus, report = tmp_path / "corpus", tmp_path / "report.json"
    args = ["run", "--summarizer", "harness.summarizers.mutants:softens_prohibition", "--only", "negation-polarity",
            "--examples", "30", "--max-turns", "200", "--seed", "5", "--quiet", "--inline", "--corpus", str(corpus),
            "--report-json", str(report)]
    for night, new in ((1, True), (2, False)):
        assert main(args) == 1
        (row,) = json.loads(report.read_text())["findings"]
        (saved,) = corpus.glob("*.json")
        assert Path(row["corpus_file"]) == saved and row["corpus_new"] is new, night
        assert f"corpus entry: {saved} ({'new' if new else 'already saved'})" in capsys.readouterr().out


def _seeded():
    corpus = load_corpus(SEEDED)
    assert corpus.errors == () and corpus.entries
    return corpus.entries


def test_seeded_corpus_covers_every_mutant():
    invariants = {e.invariant for _, e in _seeded() if e.summarizer.startswith("harness.summarizers.mutants:")}
    assert invariants == set(ALL_MUTANTS) - {"ledger-budget"}  # a degrade never makes a corpus entry


@pytest.mark.parametrize("path, entry", _seeded() if SEEDED.exists() else [], ids=lambda v: getattr(v, "name", ""))
def test_seeded_entry_is_fixed_by_the_correct_compactor_and_kept_by_its_mutant(path, entry):
    with Summarizer(CallOptions("harness.summarizers.ledgered:summarize", protocol="rich", isolation="inline")) as correct:
        assert replay_entry(path, entry, correct).status == "fixed"
    with Summarizer(CallOptions(entry.summarizer, protocol=entry.protocol, isolation="inline")) as original:
        assert replay_entry(path, entry, original).status == "failing"


def test_replaying_an_empty_corpus_still_loads_the_summarizer(tmp_path, capsys):
    empty = tmp_path / "corpus"
    empty.mkdir()
    good = ["replay", str(empty), "--allow-empty", "--summarizer", "harness.summarizers.ledgered:summarize"]
    assert main(good) == 0
    assert main(["replay", str(empty), "--allow-empty", "--summarizer", "harness.summarizers.nope:summarize"]) == 2
    assert "harness.summarizers.nope" in capsys.readouterr().err  # a clean night with a typo is not green


def test_dedupe_keeps_two_root_causes_of_one_invariant_and_kind_apart(tmp_path):
    """A dropped literal and a near miss of it are two causes: dedupe keeps one entry of each (and the
    evidence round-trips through the file without changing its name)."""
    absent, near, larger_near = (dataclasses.replace(_entry(n), evidence=e)
                                 for n, e in ((3, "absent"), (4, "near-miss"), (6, "near-miss")))
    for entry in (absent, near, larger_near):
        save_entry(entry, tmp_path)
    assert entry_name(absent) == entry_name(dataclasses.replace(absent, evidence=None))
    removed, _ = dedupe_corpus(tmp_path)
    assert [p.name for p in removed] == [entry_name(larger_near)]
    kept = sorted((e.evidence, len(e.transcript.turns)) for _, e in load_corpus(tmp_path).entries)
    assert kept == [("absent", 3), ("near-miss", 4)]


def test_dedupe_keeps_one_entry_of_a_dropped_obligation_whatever_invariant_saved_it(tmp_path):
    """A compactor that drops obligations is one cause however each night's run first saw it: dedupe keeps the
    smallest entry; an entry of the same invariant that is no drop stays, and the cause does not rename a file."""
    small = dataclasses.replace(_entry(3, "threshold-exact"), evidence="absent", cause="dropped")
    large = dataclasses.replace(_entry(5, "negation-polarity"), evidence="absent", cause="dropped")
    written = dataclasses.replace(_entry(4, "negation-polarity"), evidence="weakened")
    elsewhere = dataclasses.replace(large, summarizer="other:fn")
    for entry in (small, large, written, elsewhere):
        save_entry(entry, tmp_path)
    assert entry_name(small) == entry_name(dataclasses.replace(small, cause=None))
    assert entry_from_dict(entry_to_dict(large)).cause == "dropped"
    removed, _ = dedupe_corpus(tmp_path)
    assert [p.name for p in removed] == [entry_name(large)]
    kept = sorted((e.summarizer, e.invariant, e.cause) for _, e in load_corpus(tmp_path).entries)
    assert kept == [("other:fn", "negation-polarity", "dropped"), ("pkg:fn", "negation-polarity", None),
                    ("pkg:fn", "threshold-exact", "dropped")]


def test_dedupe_keeps_a_dropped_obligation_of_each_kind(tmp_path):
    """The same dropped cause on a prohibition and a commitment: both stay, so a fix of one that breaks the
    other again is still replayed; two of one kind are still one."""
    prohibition = dataclasses.replace(_entry(3, "negation-polarity"), evidence="absent", cause="dropped")
    commitment = dataclasses.replace(_entry(5, "commitment-retained"), fact_kind="commitment", evidence="absent",
                                     cause="dropped")
    larger = dataclasses.replace(_entry(7, "literal-verbatim"), evidence="absent", cause="dropped")
    for entry in (prohibition, commitment, larger):
        save_entry(entry, tmp_path)
    removed, _ = dedupe_corpus(tmp_path)
    assert [p.name for p in removed] == [entry_name(larger)]
    assert sorted(e.fact_kind for _, e in load_corpus(tmp_path).entries) == ["commitment", "prohibition"]


def test_a_run_saves_the_evidence_of_each_finding_with_its_entry(tmp_path):
    from harness._app.cli._main import main

    code = main(["run", "--summarizer", "harness.summarizers.mutants:rounds_threshold", "--only", "threshold-exact",
                 "--examples", "10", "--seed", "3", "--max-turns", "60", "--inline", "--quiet",
                 "--corpus", str(tmp_path / "c")])
    assert code == 1
    entries = load_corpus(tmp_path / "c").entries
    assert entries and all(e.evidence in {"weakened", "absent", "changed"} for _, e in entries)


def test_dedupe_keeps_the_entry_that_fails_most_surely_before_the_smallest(tmp_path):
    """A flaky summarizer's smaller transcript failed in one trial of three: the larger one that failed every
    time is the regression case worth keeping."""
    import dataclasses

    sure, _ = save_entry(_entry(9), tmp_path)
    flaky, _ = save_entry(dataclasses.replace(_entry(3), trials=(1, 3)), tmp_path)
    removed, _ = dedupe_corpus(tmp_path)
    assert removed == [flaky] and sure.exists()


def test_dedupe_never_removes_an_entry_that_still_fails_for_one_that_does_not(tmp_path):
    small, _ = save_entry(_entry(3), tmp_path)
    large, _ = save_entry(_entry(9), tmp_path)
    larger, _ = save_entry(_entry(12), tmp_path)
    asked = []

    def still_fails(path, entry):
        asked.append(path)
        return path != small  # the summarizer was fixed for the smallest transcript only

    removed, _ = dedupe_corpus(tmp_path, still_fails=still_fails)
    assert sorted(asked) == sorted([small, large, larger])
    assert large.exists() and set(removed) == {small, larger}  # the smallest of those that still fail is kept


def test_dedupe_with_a_summarizer_replays_and_keeps_a_failing_entry(tmp_path, capsys):
    corpus = tmp_path / "c"
    mutant = "harness.summarizers.mutants:softens_prohibition"
    assert main(["run", "--summarizer", mutant, "--examples", "8", "--seed", "3", "--max-turns", "200", "--quiet",
                 "--inline", "--corpus", str(corpus)]) == 1
    (entry_path,) = [p for p in corpus.glob("*.json") if load_entry(p).invariant == "negation-polarity"]
    entry = load_entry(entry_path)
    passing = dataclasses.replace(entry, transcript=dataclasses.replace(entry.transcript, facts=()))
    save_entry(passing, corpus)  # the same cause on a transcript that no longer shows it
    capsys.readouterr()
    assert main(["corpus", "dedupe", str(corpus), "--summarizer", mutant, "--inline"]) == 0
    assert entry_path.exists() and not (corpus / entry_name(passing)).exists()


def test_corpus_changes_tells_new_unsure_and_replaced_by_dedupes_own_grouping(tmp_path, capsys):
    before, after = tmp_path / "before", tmp_path / "after"
    known, _ = save_entry(_entry(9), before)
    save_entry(_entry(9), after)
    smaller, _ = save_entry(dataclasses.replace(_entry(5), summarizer="other:fn"), after)  # another failure: new
    one_off, _ = save_entry(dataclasses.replace(_entry(4, "threshold-exact"), trials=(0, 3)), after)
    old_drop, _ = save_entry(dataclasses.replace(_entry(8, "literal-verbatim"), cause="dropped"), before)
    new_drop, _ = save_entry(dataclasses.replace(_entry(3, "commitment-retained"), cause="dropped"), after)  # same cause
    report = tmp_path / "changes.json"
    assert main(["corpus", "changes", str(before), str(after), "--report-json", str(report)]) == 0
    document = json.loads(report.read_text())
    assert [r["entry"] for r in document["new"]] == [smaller.name]
    assert [r["entry"] for r in document["unsure"]] == [one_off.name]
    assert [(r["entry"], r["replacing"]) for r in document["replaced"]] == [(new_drop.name, old_drop.name)]
    assert document["removed"] == []
    assert "1 new, 1 unsure, 1 replaced, 0 removed" in capsys.readouterr().out
