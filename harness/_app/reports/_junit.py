"""JUnit XML, so CI systems show a run's failures natively.

A run is one ``<testsuite>`` with one ``<testcase>`` per selected oracle: it
fails with each distinct minimal failure of that invariant (detail, evidence
and the reproduce command). Two more cases keep a run from looking green when
it is not: ``summarizer`` (an ``<error>`` when the summarizer itself failed)
and ``complete`` (an ``<error>`` when not every example was judged). One more,
``unclear``, lists the readings the oracles could not settle: ``<skipped>`` (for
review, not a pass of them) by default, a ``<failure>`` under ``--unclear fail``. A corpus
replay is one case per entry. The layout follows the Jenkins JUnit schema
(junit-10.xsd), which GitLab, GitHub test-report actions and Jenkins read.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree as ET

from harness._app.corpus._replay import Replay

__all__ = ["run_junit", "replay_junit", "compare_junit"]


def run_junit(document: dict[str, Any], *, oracles: Sequence[str], seconds: float = 0.0) -> str:
    """The JUnit XML of one run's JSON report (``report_dict``); ``oracles`` are the ids it selected. One
    the report lists as ``unjudged`` is a ``<skipped>`` case, never a pass."""
    unjudged = {item["oracle"]: item["reason"] for item in document.get("unjudged") or []}
    summarizer = str(document.get("summarizer"))
    cases = []
    by_invariant: dict[str, list[dict]] = {}
    for v in document.get("violations", []):  # a finding fails the case of every invariant it breaks
        for invariant in v.get("invariants") or [v["invariant"]]:
            by_invariant.setdefault(invariant, []).append(v)
    degradations = document.get("degradations") or {}
    for oracle in list(oracles) + sorted(set(by_invariant) - set(oracles)):
        found = by_invariant.get(oracle, [])
        case = _case(summarizer, oracle)
        if found:
            first = found[0]
            failure = ET.SubElement(case, "failure", message=_one_line(f"{len(found)} distinct failure(s): "
                                                                         f"{first.get('detail', '')}"),
                                    type=oracle)
            failure.text = "\n\n".join(_violation_text(v) for v in found)
        elif oracle in unjudged:
            ET.SubElement(case, "skipped", message=_one_line(f"{oracle} judged nothing: {unjudged[oracle]}"))
        if degradations.get(oracle):
            ET.SubElement(case, "system-out").text = (f"degraded {degradations[oracle]} time(s): honest but coarser, "
                                                      f"not a failure")
        cases.append(case)
    health = _case(summarizer, "summarizer")
    infra = document.get("infra_errors") or []
    if infra:
        error = ET.SubElement(health, "error", message=_one_line(f"the summarizer failed in {len(infra)} example(s): "
                                                                 f"{infra[0].get('message', '')}"),
                              type=str(infra[0].get("kind")))
        error.text = "\n".join(f"{e.get('kind')} in example {e.get('example')}: {e.get('message')}" for e in infra)
    cases.append(health)
    unclear = document.get("unclear") or []
    review = _case(summarizer, "unclear")
    if unclear:
        listed = "\n\n".join(_unclear_text(u) for u in unclear)
        head = _one_line(f"{len(unclear)} unclear reading(s): {unclear[0].get('detail', '')}")
        if document.get("unclear_mode") == "fail":
            ET.SubElement(review, "failure", message=head, type="unclear").text = listed
        else:
            ET.SubElement(review, "skipped", message=_one_line(f"for review, not violations: {head}"))
            ET.SubElement(review, "system-out").text = listed
    cases.append(review)
    complete = _case(summarizer, "complete")
    if document.get("incomplete"):
        ET.SubElement(complete, "error", message=_one_line(f"incomplete: {document['incomplete']}"), type="incomplete")
    cases.append(complete)
    sessions = document.get("sessions") or {}
    said = (f"sessions: {sum(sessions['compactions'])} compactions, {sessions.get('by_trigger', 0)} fired by the "
            f"trigger, {sessions.get('forced_by_planned_cuts', 0)} forced by planned cuts"
            if sessions.get("compactions") else "")
    return _document(f"compaction-harness {summarizer} (seed {document.get('seed')})", cases, seconds,
                     "\n".join(line for line in (*(document.get("warnings") or []), said) if line))


def _unclear_text(u: dict[str, Any]) -> str:
    return (f"{u.get('invariant')} ({u.get('fact_kind') or 'structure'}, {u.get('why') or 'unclear'}; seen "
            f"{u.get('count', 1)} time(s), first in example {u.get('example')}): {u.get('detail')}\n"
            f"obligation: {u.get('obligation')}\nsentence: {u.get('sentence')}")


def replay_junit(replay: Replay, summarizer: str, *, seconds: float = 0.0) -> str:
    """One case per corpus entry: failing is a ``<failure>``, a summarizer failure or an entry that could not be
    judged or read an ``<error>``, an entry of a flaky summarizer not reproduced is ``<skipped>`` (not a fix)."""
    cases = []
    for o in replay.outcomes:
        case = _case(f"corpus.{o.entry.invariant}", o.path.name)
        command = f"compaction-harness shrink {o.path} --summarizer {summarizer} --only {o.entry.invariant}"
        if o.status == "failing":
            failure = ET.SubElement(case, "failure", message=_one_line(o.detail), type=o.entry.invariant)
            failure.text = (f"{o.entry.invariant} ({o.entry.fact_kind or 'structure'}), "
                            f"{len(o.entry.transcript.turns)} turns: {o.detail}\nreproduce: {command}")
        elif o.status in ("infra", "unjudged"):
            ET.SubElement(case, "error", message=_one_line(o.detail), type=o.status).text = o.detail
        elif o.status == "not-reproduced":
            ET.SubElement(case, "skipped", message=_one_line(o.detail))
        cases.append(case)
    for error in replay.corpus.errors:
        case = _case("corpus", str(getattr(error, "path", "") or "unreadable entry"))
        ET.SubElement(case, "error", message=_one_line(str(error)), type="unreadable").text = str(error)
        cases.append(case)
    if replay.interrupted:
        case = _case("corpus", "complete")
        ET.SubElement(case, "error", message=f"interrupted after {len(replay.outcomes)} of "
                                             f"{len(replay.corpus.entries)} entries", type="incomplete")
        cases.append(case)
    return _document(f"compaction-harness replay {summarizer}", cases, seconds, "")


def compare_junit(document: dict[str, Any]) -> str:
    """``compare``: one case per later summarizer, failing with every failure it has that the baseline has not."""
    baseline = document["baseline"]
    cases = []
    for against in document.get("against_baseline", []):
        case = _case(f"compare.{baseline}", f"no new failures in {against['summarizer']}")
        if against["new"]:
            failure = ET.SubElement(case, "failure", message=f"{len(against['new'])} failure(s) {baseline} did not have",
                                    type="new-failure")
            failure.text = "\n".join(f"new: {item.get('invariant') or item.get('infra_kind')} "
                                     f"{item.get('fact_kind') or item.get('entry') or ''}: {item['detail']}"
                                     for item in against["new"])
        said = [(word, item) for word in ("fixed", "unsure") for item in against.get(word) or []]
        if said:  # unsure: a varying summarizer's difference chance explains, never a failure of the case
            ET.SubElement(case, "system-out").text = "\n".join(
                f"{word}: {item.get('invariant') or item.get('infra_kind')} {item.get('fact_kind') or item.get('entry') or ''}"
                + (f": {item['detail']}" if word == "unsure" else "") for word, item in said)
        cases.append(case)
    for side in document.get("sides", []):
        crashed = side["report"].get("infra_errors") or []
        corpus_crashed = [c for c in side.get("corpus") or [] if c.get("status") == "infra"]
        case = _case(f"compare.{baseline}", f"{side['summarizer']} answered every call")
        if crashed or corpus_crashed:  # present, passing, when it did: so CI history shows it fixed
            first = (crashed or corpus_crashed)[0]
            ET.SubElement(case, "error", message=_one_line(
                f"the summarizer failed in {len(crashed)} example(s) and {len(corpus_crashed)} corpus entr(ies): "
                f"{first.get('message') or first.get('detail')}"), type="summarizer-failed")
        cases.append(case)
    for label in document.get("not_run") or []:
        case = _case(f"compare.{baseline}", f"{label} was run")
        ET.SubElement(case, "error", message="not run: the comparison was interrupted before it", type="incomplete")
        cases.append(case)
    incomplete = [side["summarizer"] for side in document.get("sides", []) if side.get("incomplete")]
    complete = _case(f"compare.{baseline}", "complete")
    if incomplete:
        ET.SubElement(complete, "error", message=f"not every example was judged for {', '.join(incomplete)}",
                      type="incomplete")
    cases.append(complete)
    return _document(f"compaction-harness compare against {baseline} (seed {document.get('seed')})", cases, 0.0, "")


def _case(classname: str, name: str) -> ET.Element:
    return ET.Element("testcase", name=name, classname=classname, time="0")


def _violation_text(v: dict[str, Any]) -> str:
    forced = " (forced by a planned cut)" if v.get("forced") else ""
    where = f"compaction {v['round'] + 1}{forced}, after turn {v.get('boundary')}" if isinstance(v.get("round"), int) \
        else "across the session"
    outcome = f", {v['outcome']}" if v.get("outcome") else ""
    lines = [f"{v['invariant']} - {v.get('fact_kind') or 'structure'}{outcome} ({where})", str(v.get("detail", ""))]
    if v.get("expected"):
        lines.append(f"expected: {v['expected']}")
    if v.get("found"):
        lines.append(f"context had: {v['found']}")
    elif v.get("outcome") == "dropped":
        lines.append("context had: nothing that stands in for it")
    lines.append(f"minimal transcript: {v.get('minimal_turns')} turns (from {v.get('original_turns')}), "
                 f"budget {v.get('budget')}")
    lines.append(f"reproduce: {v.get('reproduce', '')}")
    return "\n".join(lines)


_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_safe(text: str | None) -> str | None:
    """``text`` with each character XML 1.0 forbids (escape codes, NUL, lone surrogates) written as ``\\xNN``."""
    if text is None:
        return None
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _document(name: str, cases: list[ET.Element], seconds: float, system_out: str) -> str:
    suite = ET.Element("testsuite", name=name, tests=str(len(cases)),
                       failures=str(sum(c.find("failure") is not None for c in cases)),
                       errors=str(sum(c.find("error") is not None for c in cases)),
                       skipped=str(sum(c.find("skipped") is not None for c in cases)),
                       time=f"{seconds:.3f}", timestamp=datetime.datetime.now().replace(microsecond=0).isoformat())
    suite.extend(cases)
    if system_out:
        ET.SubElement(suite, "system-out").text = system_out
    root = ET.Element("testsuites")
    root.append(suite)
    for element in root.iter():  # what the summarizer wrote may hold characters XML 1.0 cannot carry
        element.text = _xml_safe(element.text)
        for key, value in element.attrib.items():
            element.attrib[key] = _xml_safe(value)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
