"""NEW, FIXED and STILL FAILING between two runs' JSON reports (``harness._app.reports._trend``), on
hand-built documents, and ``compaction-harness report`` on a list of nights end to end."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from harness._app.cli._main import main
from harness._app.reports._document import check_report
from harness._app.reports._trend import Finding, diff_reports, findings_of, nightly, trend_text


def violation(invariant: str, kind: str | None = "literal_binding", evidence: str = "absent", literal: str = "v1.2.3",
              *, invariants: tuple[str, ...] = (), also_kinds: tuple[str, ...] = (),
              corpus_file: str | None = None, cause: str | None = None) -> dict:
    """One violation as ``report_dict`` writes it (the fields the page and the trend read)."""
    fact_kind = kind or "literal_binding"
    return {"invariant": invariant, "invariants": list(invariants or (invariant,)), "also_kinds": list(also_kinds),
            "fact_kind": kind, "fact_id": "F1", "severity": "violate", "evidence": evidence,
            "detail": f"{literal} was dropped ({invariant})", "round": 0, "boundary": 1, "minimal_turns": 2,
            "original_turns": 40, "shrink_checks": 3, "shrink_summarizer_calls": 2,
            "transcript": {"schema_version": 1, "seed": 0, "compaction_points": [1],
                           "facts": [{"id": "F1", "kind": fact_kind, "literals": [literal], "origin_turn": 0}],
                           "turns": [{"role": "user", "text": f"Pin {literal}, please."},
                                     {"role": "assistant", "text": "Noted."}]},
            "context": {"messages": [{"role": "system", "content": "Summary: the user pinned a version."}]},
            "reproduce": f"compaction-harness run --only {invariant}", "corpus_file": corpus_file, "cause": cause}


def night(*violations: dict, seed: int = 7, summarizer: str = "team:compactor", examples: int = 30) -> dict:
    """A run's JSON report holding ``violations``, one finding each (as ``report_dict`` writes them)."""
    findings = [{"invariants": v["invariants"], "also_seen": [], "fact_kind": v["fact_kind"],
                 "also_kinds": v["also_kinds"], "fact_id": v["fact_id"], "round": v["round"],
                 "minimal_turns": v["minimal_turns"], "evidence": v["evidence"], "reproduce": v["reproduce"],
                 "corpus_file": v["corpus_file"], "cause": v["cause"], "violation": n}
                for n, v in enumerate(violations)]
    document = {"report_version": 3, "summarizer": summarizer, "seed": seed, "examples_run": examples,
                "exit_code": 1 if violations else 0, "violations": list(violations), "findings": findings}
    check_report(document, "night")  # what ``report`` reads back
    return document


LITERAL = violation("literal-verbatim", "literal_binding", literal="v1.2.3")
SUPERSESSION = violation("supersession", "supersession", literal="gateway-5")
THRESHOLD = violation("threshold-exact", "threshold", literal="max_jobs == 58")
PROHIBITION = violation("negation-polarity", "prohibition", "weakened", literal="prod.db")


def _keys(findings) -> set[tuple[str, str, str]]:
    return {f.key for f in findings}


def test_a_finding_in_both_is_still_failing_one_only_before_fixed_one_only_now_new():
    trend = diff_reports(night(LITERAL, SUPERSESSION), night(LITERAL, THRESHOLD), old_source="mon.json",
                         new_source="tue.json")
    assert _keys(m.new for m in trend.still) == {("literal-verbatim", "literal_binding", "absent")}
    assert all(m.exact for m in trend.still)
    assert _keys(trend.fixed) == {("supersession", "supersession", "absent")}
    assert _keys(trend.new) == {("threshold-exact", "threshold", "absent")}
    # Each finding keeps its place in its own report, for the page's links.
    assert [f.violation for f in trend.fixed] == [1] and [f.violation for f in trend.new] == [1]
    assert trend.still[0].old.violation == 0 and trend.still[0].new.violation == 0
    assert trend.caveats == ()  # the same summarizer, seed and examples: nothing to qualify
    text = trend_text(trend)
    assert text.splitlines()[0] == "tue.json against mon.json: 1 new, 1 fixed, 1 still failing"
    assert "  new    ✗ threshold-exact (threshold; absent)" in text
    assert "  fixed  ✓ supersession (supersession; absent)" in text


def test_the_same_reports_change_nothing_and_empty_ones_fix_everything():
    same = diff_reports(night(LITERAL, PROHIBITION), night(LITERAL, PROHIBITION))
    assert (same.new, same.fixed, len(same.still)) == ((), (), 2)
    clean = diff_reports(night(LITERAL, PROHIBITION), night())
    assert _keys(clean.fixed) == {LITERAL_KEY, ("negation-polarity", "prohibition", "weakened")}
    assert clean.new == () and clean.still == ()


LITERAL_KEY = ("literal-verbatim", "literal_binding", "absent")


def test_other_evidence_or_another_primary_invariant_is_related_not_new_and_fixed():
    # Tonight the same invariant on the same kind fails with other evidence: still failing, saying what changed.
    altered = violation("literal-verbatim", "literal_binding", "altered")
    trend = diff_reports(night(LITERAL), night(altered))
    assert trend.new == () and trend.fixed == ()
    (match,) = trend.still
    assert not match.exact and match.change == "evidence absent → altered"
    # The root cause grouped under another invariant it also broke: the shared (invariant, kind) pair matches.
    grouped = violation("ledger-monotone", "literal_binding", invariants=("ledger-monotone", "literal-verbatim"))
    assert [m.exact for m in diff_reports(night(LITERAL), night(grouped)).still] == [False]
    # Found first on another kind this time, the old kind listed among also_kinds: still the same cause.
    moved = violation("literal-verbatim", "threshold", also_kinds=("literal_binding",))
    assert len(diff_reports(night(LITERAL), night(moved)).still) == 1
    # Another invariant on the same kind shares no pair: a new failure and a fixed one, not a match.
    other = violation("dead-obligation", "literal_binding", "ended-binding")
    unrelated = diff_reports(night(LITERAL), night(other))
    assert _keys(unrelated.new) == {("dead-obligation", "literal_binding", "ended-binding")}
    assert _keys(unrelated.fixed) == {LITERAL_KEY} and unrelated.still == ()


def test_a_dropped_obligation_is_the_same_finding_whichever_invariant_and_kind_showed_it_first():
    monday = violation("commitment-retained", "commitment", also_kinds=("threshold",), cause="dropped")
    tuesday = violation("threshold-exact", "threshold", also_kinds=("gating_field",), cause="dropped")
    trend = diff_reports(night(monday, PROHIBITION), night(tuesday, PROHIBITION))
    assert trend.new == () and trend.fixed == () and all(m.exact for m in trend.still)
    # A drop and an obligation the summarizer wrote wrong are two causes: not the same finding, only related
    # by the (invariant, kind) they share (the safe side: never claimed fixed and new at once).
    written = violation("threshold-exact", "threshold", "weakened")
    (match,) = diff_reports(night(tuesday), night(written)).still
    assert not match.exact and match.old.key == ("dropped", "", "")
    assert "  fixed  ✓ threshold-exact (threshold; absent; dropped)" in trend_text(diff_reports(night(tuesday), night()))


def test_the_same_finding_beats_a_related_one_and_each_is_matched_once():
    altered = violation("literal-verbatim", "literal_binding", "altered")
    trend = diff_reports(night(altered, LITERAL), night(LITERAL))
    (match,) = trend.still
    assert match.exact and match.old.violation == 1
    assert _keys(trend.fixed) == {("literal-verbatim", "literal_binding", "altered")}
    # Two of one key tonight against one before: one still failing, one new.
    twice = diff_reports(night(LITERAL), night(LITERAL, violation("literal-verbatim", literal="v9")))
    assert len(twice.still) == 1 and len(twice.new) == 1 and twice.fixed == ()


def test_a_list_of_nights_compares_the_newest_with_the_one_before():
    monday, tuesday, wednesday = night(PROHIBITION), night(LITERAL, SUPERSESSION), night(LITERAL, THRESHOLD)
    trend = nightly([("mon.json", monday), ("tue.json", tuesday), ("wed.json", wednesday)])
    assert (trend.old_source, trend.new_source) == ("tue.json", "wed.json")
    assert _keys(trend.new) == {("threshold-exact", "threshold", "absent")}
    assert _keys(trend.fixed) == {("supersession", "supersession", "absent")}  # not Monday's prohibition
    assert _keys(m.new for m in trend.still) == {LITERAL_KEY}
    assert nightly([("mon.json", monday)]) is None


def test_a_fixed_finding_is_qualified_when_the_newest_run_may_not_have_reached_it():
    cut = dict(night(seed=8, examples=10), incomplete="--max-time 60 reached")
    (caveat,) = diff_reports(night(LITERAL), cut).caveats
    assert "incomplete" in caveat and "seeds differ (7 then 8)" in caveat
    assert "fewer examples (10, against 30)" in caveat
    # Nothing fixed: nothing to qualify, whatever the seeds.
    assert diff_reports(night(LITERAL), night(LITERAL, seed=9)).caveats == ()
    assert "different summarizers" in diff_reports(night(), night(summarizer="team:other")).caveats[0]


def test_reports_before_findings_and_evidence_are_read_from_their_violations():
    old = {"summarizer": "x", "exit_code": 1, "violations": [
        {k: v for k, v in LITERAL.items() if k not in ("evidence", "invariants", "also_kinds")}]}
    assert findings_of(old) == (Finding("literal-verbatim", "literal_binding", "", ("literal-verbatim",), (), 0, 2,
                                        LITERAL["detail"], None),)
    trend = diff_reports(old, night(LITERAL, THRESHOLD))
    assert [m.exact for m in trend.still] == [False]
    assert _keys(trend.new) == {("threshold-exact", "threshold", "absent")}
    structure = findings_of(night(violation("tool-pairing", None, "shape")))
    assert structure[0].fact_kind == "structure" and structure[0].key == ("tool-pairing", "structure", "shape")


class _Links(HTMLParser):
    """Every element id, every in-page link (with the table it sits in) and every heading's text."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[tuple[str, str | None]] = []  # (href, data-trend of the enclosing table)
        self.headings: list[str] = []
        self._table: list[str | None] = []
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "table":
            self._table.append(attrs.get("data-trend"))
        if tag == "a" and (attrs.get("href") or "").startswith("#"):
            self.links.append((attrs["href"], self._table[-1] if self._table else None))
        if tag in ("h2", "h3"):
            self._heading = []

    def handle_endtag(self, tag):
        if tag == "table" and self._table:
            self._table.pop()
        if tag in ("h2", "h3") and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None

    def handle_data(self, data):
        if self._heading is not None:
            self._heading.append(data)


def test_report_on_three_nights_writes_new_fixed_and_still_and_prints_them(tmp_path, capsys):
    files = []
    for name, document in (("mon", night(PROHIBITION)), ("tue", night(LITERAL, SUPERSESSION)),
                           ("wed", night(LITERAL, THRESHOLD))):
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(document))
    out = tmp_path / "nightly.html"
    assert main(["report", *map(str, files), "-o", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert f"{files[2]} against {files[1]}: 1 new, 1 fixed, 1 still failing" in stdout
    assert "new    ✗ threshold-exact" in stdout and "fixed  ✓ supersession" in stdout
    page = _Links()
    page.feed(out.read_text())
    assert {"trend", "trend-new", "trend-fixed", "trend-still"} <= page.ids
    assert {"NEW (1)", "FIXED (1)", "STILL FAILING (1)"} <= set(page.headings)
    trend_links = {kind: href for href, kind in page.links if kind in ("new", "fixed", "still")}
    # New and still failing point into Wednesday's section (the third), fixed into Tuesday's; each resolves.
    assert trend_links == {"new": "#run3-failure2", "still": "#run3-failure1", "fixed": "#run2-failure2"}
    assert all(href[1:] in page.ids for href, _ in page.links)
    # The newest section's index marks what is new since the report before.
    html = out.read_text()
    assert html.count('<section id="run') == 3
    index = html[html.index('id="run3-index"'):html.index('id="run3-survival"')]
    assert index.count('<td class="new">new</td>') == 1 and index.count(">still failing</td>") == 1
    # The older nights are folded; the newest is not.
    assert html.count('<details class="run">') == 2
    assert html.index('<details class="run">', html.index('<section id="run2"')) < html.index('<section id="run3"')


def test_report_on_one_night_has_no_trend(tmp_path, capsys):
    file = tmp_path / "one.json"
    file.write_text(json.dumps(night(LITERAL)))
    assert main(["report", str(file), "-o", str(tmp_path / "one.html")]) == 0
    assert "against" not in capsys.readouterr().out
    html = (tmp_path / "one.html").read_text()
    assert 'id="trend"' not in html and '<details class="run">' not in html


def _seen(v: dict, sessions: int, of: int = 30) -> dict:
    return {**v, "sightings": {"sessions": sessions, "of": of}}


def _varying(*violations: dict, **options) -> dict:
    return {**night(*violations, **options), "may_vary": True}


def test_a_varying_summarizers_nights_call_new_and_fixed_only_beyond_chance():
    old = _varying(_seen(LITERAL, 12), _seen(SUPERSESSION, 1))
    new = _varying(_seen(LITERAL, 9), _seen(THRESHOLD, 2), _seen(PROHIBITION, 15))
    trend = diff_reports(old, new)
    assert trend.rated
    assert _keys(trend.new) == {("negation-polarity", "prohibition", "weakened")}  # 15 of 30 against none of 30
    assert _keys(trend.fixed) == set()
    assert _keys(trend.unsure_new) == {("threshold-exact", "threshold", "absent")}  # 2 of 30: chance may explain it
    assert _keys(trend.unsure_old) == {("supersession", "supersession", "absent")}
    assert _keys(m.new for m in trend.still) == {("literal-verbatim", "literal_binding", "absent")}
    text = trend_text(trend)
    assert "1 new, 0 fixed, 1 still failing, 2 unsure" in text and "Fisher exact p=" in text


def test_the_same_nights_of_a_summarizer_that_does_not_vary_keep_every_difference():
    trend = diff_reports(night(_seen(LITERAL, 12), _seen(SUPERSESSION, 1)),
                         night(_seen(LITERAL, 9), _seen(THRESHOLD, 2)))
    assert not trend.rated and trend.unsure == ()
    assert _keys(trend.new) == {("threshold-exact", "threshold", "absent")}
    assert _keys(trend.fixed) == {("supersession", "supersession", "absent")}


def test_a_varying_night_without_sightings_is_unsure_not_new():
    trend = diff_reports(_varying(), _varying(THRESHOLD))  # a report written before sightings were recorded
    assert trend.new == () and _keys(trend.unsure_new) == {("threshold-exact", "threshold", "absent")}


def test_the_shards_of_a_night_add_up_their_sightings():
    from harness._app.reports._shards import merge_shards

    first = {**_varying(_seen(LITERAL, 4, 10), examples=10), "shard": {"index": 1, "of": 2}}
    second = {**_varying(_seen(LITERAL, 3, 10), examples=10), "shard": {"index": 2, "of": 2}}
    merged = merge_shards([first, second])
    (finding,) = findings_of(merged)
    assert finding.sightings == 7 and merged["examples_run"] == 20 and merged["may_vary"] is True
