"""One finding per root cause: a loss several invariants see is shrunk once and reported once, with each of them."""

import dataclasses
import json

import pytest

from harness._app._compare import Side
from harness._app.corpus._entries import CorpusSaver, entry_from_dict, entry_name, entry_to_dict, load_corpus
from harness._app.corpus._replay import replay_corpus
from harness._app.judging._judge import Evaluation
from harness._app.reports._document import report_dict
from harness._app.reports._junit import run_junit
from harness._app.reports._text import render_text
from harness._app.running._causes import DROPPED, causes, dropped
from harness._app.running._evaluate import evaluate
from harness._app.running._options import RunConfig
from harness._app.running._run import open_summarizer, run
from harness._base._model import Fact, Polarity, Role, Transcript, Turn
from harness._base._protocol import CompactionResult, LedgerEntry
from harness._base._result_codec import result_to_dict
from harness.oracles import Evidence, Finding, Severity, select

EXAMPLE = "harness.summarizers.example:summarize"


def _v(invariant, fact_id, rnd, kind="commitment", evidence=Evidence.ABSENT):
    return (Finding(invariant, Severity.VIOLATE, f"{invariant} on {fact_id}", fact_id, kind, evidence=evidence),
            rnd, None if rnd is None else 10 * (rnd + 1), None)


def test_violations_about_one_fact_are_one_cause_whose_primary_showed_first():
    ev = Evaluation(violations={
        ("ledger-monotone", "commitment"): _v("ledger-monotone", "F1", 2),
        ("commitment-retained", "commitment"): _v("commitment-retained", "F1", 1),
        ("dead-obligation", "commitment"): _v("dead-obligation", "F1", None),
        ("literal-verbatim", "literal_binding"): _v("literal-verbatim", "F2", 0, "literal_binding"),
    })
    found = {c.key: c for c in causes(ev)}
    assert set(found) == {("commitment-retained", "commitment"), ("literal-verbatim", "literal_binding")}
    others = [key for key, _ in found[("commitment-retained", "commitment")].others]
    assert others == [("ledger-monotone", "commitment"), ("dead-obligation", "commitment")]
    assert found[("literal-verbatim", "literal_binding")].others == ()


def test_a_pairing_cut_seen_by_tool_pairing_and_provider_valid_is_named_by_tool_pairing():
    def shape(invariant):
        return Finding(invariant, Severity.VIOLATE, "cut", call_id="call_1", evidence=Evidence.SHAPE), 0, 5, None

    ev = Evaluation(violations={("provider-valid", None): shape("provider-valid"),
                                ("tool-pairing", None): shape("tool-pairing")})
    (cause,) = causes(ev)
    assert cause.key == ("tool-pairing", None) and [key for key, _ in cause.others] == [("provider-valid", None)]


def test_a_near_miss_and_a_dropped_literal_are_two_causes_as_first_seen():
    one = causes(Evaluation(violations={("literal-verbatim", "k"): _v("literal-verbatim", "F1", 0, "k")}))[0]
    other = causes(Evaluation(violations={("literal-verbatim", "k"): _v("literal-verbatim", "F1", 0, "k",
                                                                        Evidence.NEAR_MISS)}))[0]
    assert one.key == other.key and one.signature != other.signature


def test_the_same_loss_on_two_kinds_of_fact_is_one_cause_and_a_near_miss_is_another():
    def first_cause(kind, evidence=Evidence.ABSENT):
        return causes(Evaluation(violations={("literal-verbatim", kind): _v("literal-verbatim", "F1", 0, kind, evidence)}))[0]

    assert first_cause("prohibition").signature == first_cause("artifact_reference").signature
    assert first_cause("prohibition").signature != first_cause("prohibition", Evidence.NEAR_MISS).signature


# -- what the compactor did: dropped the obligation, or wrote it wrong --------------------------------

_TURNS = (
    Turn(Role.USER, "Never write to s3://acme-prod-07/ from this job."),
    Turn(Role.ASSISTANT, "Understood, staging only."),
    Turn(Role.USER, "Check how much s3://acme-prod-01/ holds when you have a minute."),  # a near miss, in the source
    Turn(Role.ASSISTANT, "The report is done."),
)
_SOURCE = Transcript(_TURNS, (Fact("F0", "prohibition", ("s3://acme-prod-07/",), 0, Polarity.FORBID),), (4,))


def _about_f0(messages, found=None, evidence=Evidence.ABSENT, ledger=None):
    finding = Finding("negation-polarity", Severity.VIOLATE, "lost", "F0", "prohibition", found=found,
                      evidence=evidence)
    return finding, 0, 4, result_to_dict(CompactionResult(tuple(messages), ledger=ledger))


@pytest.mark.parametrize("messages, found, expected", [
    ((_TURNS[1], _TURNS[3]), None, True),  # a window that cut the statement and kept the rest unchanged
    ((_TURNS[2], _TURNS[3]), "s3://acme-prod-01/", True),  # what stands in its place is the source's own near miss
    ((Turn(Role.SYSTEM, "Summary: the user and the agent talked about a report."),), None, True),  # left out
    ((_TURNS[0], _TURNS[3]), "s3://acme-prod-07/", False),  # the statement is kept: something else went wrong
    ((Turn(Role.SYSTEM, "Stay off s3://acme-prod-01/."), _TURNS[3]), "s3://acme-prod-01/", False),  # a near miss it wrote
    ((Turn(Role.SYSTEM, "Prefers to avoid s3://acme-prod-07/."),), "Prefers to avoid s3://acme-prod-07/.", False),
], ids=["window", "decoy-kept", "left-out", "statement-kept", "near-miss-written", "weakened-written"])
def test_a_loss_is_a_drop_only_when_nothing_the_compactor_wrote_carries_the_obligation(messages, found, expected):
    assert dropped(_SOURCE, _about_f0(messages, found)) is expected


def test_a_ledger_entry_carrying_the_literal_is_written_by_the_compactor():
    entry = LedgerEntry("prohibition", ("s3://acme-prod-07/",), polarity="require")
    assert dropped(_SOURCE, _about_f0((_TURNS[3],))) is True
    assert dropped(_SOURCE, _about_f0((_TURNS[3],), ledger=(entry,))) is False


def test_no_fact_or_no_round_is_never_a_drop():
    structural = (Finding("budget-respected", Severity.VIOLATE, "over", evidence=Evidence.SHAPE), 0, 4,
                  result_to_dict(CompactionResult((_TURNS[3],))))
    session = (_about_f0((_TURNS[3],))[0], None, None, None)
    assert not dropped(_SOURCE, structural) and not dropped(_SOURCE, session)


def test_drops_of_two_kinds_by_two_invariants_are_one_cause_and_a_written_loss_is_not():
    facts = (*_SOURCE.facts, Fact("F1", "threshold", ("max_retries", "3"), 1))
    source = dataclasses.replace(_SOURCE, facts=facts)
    context = result_to_dict(CompactionResult((_TURNS[3],)))

    def violation(invariant, fact_id, kind, evidence=Evidence.ABSENT):
        return Finding(invariant, Severity.VIOLATE, "lost", fact_id, kind, evidence=evidence), 0, 4, context

    window = Evaluation(violations={("negation-polarity", "prohibition"): violation("negation-polarity", "F0", "prohibition")})
    other = Evaluation(violations={("threshold-exact", "threshold"): violation("threshold-exact", "F1", "threshold")})
    (one,), (two,) = causes(window, source), causes(other, source)
    assert one.mechanism == two.mechanism == DROPPED and one.signature == two.signature == (DROPPED, None)
    written = dict(context, messages=[{"role": "system", "content": "max_retries: a few"}])
    bent = Evaluation(violations={("threshold-exact", "threshold"): (violation("threshold-exact", "F1", "threshold",
                                                                              Evidence.WEAKENED)[0], 0, 4, written)})
    (three,) = causes(bent, source)
    assert three.mechanism is None and three.signature == ("threshold-exact", "weakened")


@pytest.fixture(scope="module")
def example_run():
    return run(RunConfig.of(EXAMPLE, examples=20, max_turns=200, seed=1, quiet=True, isolation="inline"))


def test_a_run_reports_each_cause_once_with_every_invariant_it_breaks(example_run):
    failures = example_run.failures
    assert any(f.also for f in failures), "the example breaks more than one invariant with one loss"
    broken = {(i, f.fact_kind) for f in failures for i in (*f.invariants, *f.also_seen)}
    assert len(failures) < len(broken)  # fewer blocks than (invariant, kind) pairs: losses grouped
    assert len({f.signature for f in failures}) == len(failures)  # no cause twice


def test_a_cause_seen_on_several_kinds_is_one_finding_and_compare_still_sees_each_kind(example_run):
    merged = [f for f in example_run.failures if f.also_kinds]
    assert merged, "the example drops literals of more than one kind"
    failing = Side("example", example_run).failures()
    for f in merged:
        assert f.fact_kind not in f.also_kinds
        for kind in f.also_kinds:  # seen by the same invariant, or by any invariant when the cause is a drop
            pairs = [(i, k) for i, k in f.seen if k == kind and (f.cause == "dropped" or i == f.invariant)]
            assert pairs, (f.invariant, kind)
            for invariant, _ in pairs:
                assert ("run", invariant, kind) in failing  # a side that fixes one kind is seen to fix it
    text = render_text(example_run)
    assert all(f"seen on other kinds of fact too: {', '.join(f.also_kinds)}" in text for f in merged)
    rows = {tuple(row["invariants"]): row for row in report_dict(example_run)["findings"]}
    assert all(rows[f.invariants]["also_kinds"] == list(f.also_kinds) for f in merged)


def test_what_a_finding_says_it_also_breaks_its_minimal_transcript_does_break(example_run):
    config = example_run.config
    with open_summarizer(config) as summarizer:
        for f in example_run.failures:
            if not f.also:
                continue
            ev = evaluate(f.transcript, summarizer, config.judging, select(), budget=f.budget)
            for invariant, _ in f.also:
                violation = ev.violations.get((invariant, f.fact_kind))
                assert violation is not None, (f.invariant, invariant)
                assert violation[0].fact_id == f.fact_id


def test_the_reports_list_findings_and_fail_every_invariant_a_finding_breaks(example_run):
    document = report_dict(example_run)
    json.dumps(document)
    assert len(document["findings"]) == len(document["violations"])
    for row, v in zip(document["findings"], document["violations"]):
        assert row["invariants"] == v["invariants"] == [v["invariant"], *(a["invariant"] for a in v["also"])]
        assert row["minimal_turns"] == len(v["transcript"]["turns"])
        assert "--only " + ",".join(row["invariants"]) in row["reproduce"]
    secondary = next(a["invariant"] for v in document["violations"] for a in v["also"])
    xml = run_junit(document, oracles=document["oracles"])
    case = xml.split(f'name="{secondary}"', 1)[1].split("</testcase>", 1)[0]
    assert "<failure" in case
    text = render_text(example_run)
    assert text.index("findings: ") < text.index("✗ ")
    assert "also broken: " in text


def test_every_report_says_the_same_word_for_what_happened(example_run):
    """The one word (``harness.oracles.Outcome``) travels from the finding to the text, JSON, HTML and JUnit reports."""
    from harness._app.reports._html import render_html

    document = report_dict(example_run)
    text, xml = render_text(example_run), run_junit(document, oracles=document["oracles"])
    page = render_html([("this run", document)])
    words = [f.outcome for f in example_run.failures]
    assert words and all(words) and "dropped" in words
    for failure, v, row in zip(example_run.failures, document["violations"], document["findings"]):
        assert v["outcome"] == row["outcome"] == failure.outcome
        head = f"✗ {failure.invariant} — {failure.fact_kind or 'structure'}, {failure.outcome} ("
        assert head in text
        assert f"{failure.invariant} - {failure.fact_kind or 'structure'}, {failure.outcome} (" in xml
        assert f"<td>{failure.outcome}" in page  # the index's "what happened" cell opens with the word
    dropped = next(v for v in document["violations"] if v["outcome"] == "dropped" and not v["found"])
    assert "context had: nothing that stands in for it" in run_junit({**document, "violations": [dropped]},
                                                                     oracles=document["oracles"])


def test_a_corpus_entry_keeps_what_else_its_cause_broke_and_replay_judges_it(example_run, tmp_path):
    saver = CorpusSaver(tmp_path, summarizer=EXAMPLE, budget=2000)
    for f in example_run.failures:
        saver(f, example_run.protocol)
    entries = load_corpus(tmp_path).entries
    with_also = [e for _, e in entries if e.also]
    assert with_also
    entry = with_also[0]
    assert entry_from_dict(json.loads(json.dumps(entry_to_dict(entry)))) == entry
    assert entry_name(entry) == entry_name(dataclasses.replace(entry, also=()))  # the same failure, one file
    replay = replay_corpus(tmp_path, RunConfig.of(EXAMPLE, isolation="inline", quiet=True))
    assert {o.status for o in replay.outcomes} == {"failing"}


@pytest.mark.parametrize("spec", ["harness.summarizers.naive:head_tail", "harness.summarizers.naive:tail"])
def test_trimming_compactors_shrink_to_small_well_formed_histories(spec):
    """head_tail keeps a session's first and last messages: its losses show many rounds in, and the round's
    request often holds a tool result whose call it cut. The restart from that request drops the half call,
    so the finding still shrinks to a few turns, and no minimal transcript is a history a provider refuses."""
    result = run(RunConfig.of(spec, examples=60, seed=5, quiet=True, isolation="inline"))
    assert result.failures
    for f in result.failures:
        if f.invariant in ("tool-pairing", "provider-valid"):
            # A pairing finding keeps unpaired halves on purpose, and its window's edge may need a few of them
            # where a parallel call's block was cut (seen: 11 turns, shrinking stopped by --shrink-calls).
            assert len(f.transcript.turns) <= 12, (f.invariants, len(f.transcript.turns))
            continue
        assert len(f.transcript.turns) <= 10, (f.invariants, len(f.transcript.turns))
        calls = {c.id for t in f.transcript.turns for c in t.tool_calls}
        assert all(t.tool_call_id in calls for t in f.transcript.turns if t.tool_call_id), f.invariants


def test_every_loss_of_a_window_trimmer_is_one_finding_listing_what_saw_it():
    """naive.tail keeps the newest messages: whatever it drops, and whichever invariant first sees it, the cause
    is one (a window that cuts obligations), shrunk once; the kinds and invariants it was seen with are listed."""
    result = run(RunConfig.of("harness.summarizers.naive:tail", examples=40, seed=5, quiet=True, isolation="inline"))
    drops = [f for f in result.failures if f.cause == DROPPED]
    assert len(drops) == 1
    (drop,) = drops
    assert len(drop.kinds) >= 3 and len({i for i, _ in drop.seen}) >= 3
    assert all(f.cause is None for f in result.failures if f.fact_id is None)
    document = report_dict(result)
    row = next(r for r in document["findings"] if r["cause"] == DROPPED)
    assert row["transcript"] == document["violations"][row["violation"]]["transcript"]
    assert "root cause: the compactor dropped it" in render_text(result)


def test_a_rewriting_mutant_keeps_its_own_cause():
    result = run(RunConfig.of("harness.summarizers.mutants:softens_prohibition", examples=20, max_turns=200, seed=5,
                              quiet=True, isolation="inline"))
    assert [(f.invariant, f.cause) for f in result.failures] == [("negation-polarity", None)]


def test_a_later_violation_of_the_same_key_on_another_fact_with_other_evidence_is_its_own_cause():
    near_miss = _v("literal-verbatim", "F2", 0, "literal_binding", Evidence.NEAR_MISS)
    ev = Evaluation(violations={("literal-verbatim", "literal_binding"): _v("literal-verbatim", "F1", 0, "literal_binding")},
                    more={("literal-verbatim", "literal_binding", "near-miss"): near_miss})
    assert sorted(str(c.signature) for c in causes(ev)) == sorted(
        [str(("literal-verbatim", "absent")), str(("literal-verbatim", "near-miss"))])
    assert ev.shown(("literal-verbatim", "literal_binding"), "near-miss") is near_miss
    assert ev.shown(("literal-verbatim", "literal_binding"), "absent")[0].fact_id == "F1"
    assert ev.shown(("literal-verbatim", "literal_binding"), "contrary") is None


def test_one_cause_does_not_hide_another_of_the_same_invariant_and_kind():
    """A compactor that drops old turns and, in the same compactions, rewrites the identifiers it keeps: the
    drop shows first in every session, and still both are found, each shrunk to its own few turns."""
    from pathlib import Path

    spec = f"{Path(__file__).resolve().parent / 'fixtures' / 'drops_and_rewrites.py'}:rewrites_bindings"
    result = run(RunConfig.of(spec, examples=30, seed=4, quiet=True, isolation="inline", only=("literal-verbatim",)))
    by_cause = {(f.cause or f.evidence): f for f in result.failures}
    assert set(by_cause) == {DROPPED, "near-miss"}, [(f.cause, f.evidence) for f in result.failures]
    assert all(len(f.transcript.turns) <= 10 for f in result.failures)
    assert by_cause["near-miss"].trials == (3, 3)  # its own trials ask for the rewrite, not the drop
