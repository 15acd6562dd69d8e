"""What a gate says, for people: the Markdown of a GitHub job's step summary, and a few lines for the terminal.

The summary says first whether the job fails and why, then counts the failures by what they are against the
baseline (new, still failing, fixed, unsure), then lists them, one row per root cause, with the path of its
block in the HTML report and of its corpus entry, and each new one's minimal transcript folded under it.
Everything is escaped for GitHub's Markdown: a summarizer's words never become a table cell break or a tag.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import escape
from typing import Any

from harness._app.reports._gate import EntryChange, Gate, short_transcript, violation_of
from harness._app.reports._text import printable
from harness._app.reports._trend import Finding, trend_text

__all__ = ["step_summary", "gate_text", "DETAILED"]

#: Findings listed with their minimal transcript, per section; the rest are rows of the table only.
DETAILED = 10
_MODES = {"nightly": "nightly", "pull-request": "pull request"}
_ENTRY_TITLES = (("new", "new: it passed in the baseline's replay"), ("still", "still failing"),
                 ("fixed", "fixed"), ("unsure", "unsure"), ("problem", "not judged"))


def _md(text: Any) -> str:
    """Text for a Markdown line or table cell: no control characters, no tag, no cell break."""
    return escape(" ".join(printable(str(text)).split()), quote=False).replace("|", "\\|")


def _code(text: Any) -> str:
    text = printable(str(text))
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}".replace("|", "\\|")


def _fenced(lines: list[str]) -> list[str]:
    body = printable("\n".join(lines))
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    return [f"{fence}text", body, fence]


def step_summary(gate: Gate, current: dict[str, Any], *, files: dict[str, str | None],
                 anchor: Callable[[Finding], str | None], run_url: str | None = None) -> str:
    """The step summary of ``gate`` on ``current`` (its run report): ``files`` are the paths written
    (``report_html``, ``report_json``, ``sarif``, ``corpus``...), ``anchor`` a finding's block in the HTML."""
    spec = current.get("summarizer")
    out = [f"## compaction-harness · {_MODES.get(gate.mode, gate.mode)} · {_code(spec)}", ""]
    if not gate.passed:
        out.append(f":x: **fails** (fail-on: {gate.fail_on}): " + "; ".join(_md(r) for r in gate.reasons))
    elif gate.fail_on == "none":
        out.append(":white_check_mark: **passes** (fail-on: none): what the run finds never fails the job")
    else:
        known = f"; {gate.still} known failure(s) still failing" if gate.still else ""
        out.append(f":white_check_mark: **passes** (fail-on: {gate.fail_on}): no new failure{known}")
    out += ["", "| | run findings | corpus entries |", "| --- | ---: | ---: |"]
    for label, change, trend in (("new", "new", gate.trend.new), ("still failing", "still", gate.trend.still),
                                 ("fixed", "fixed", gate.trend.fixed), ("unsure", "unsure", gate.trend.unsure)):
        out.append(f"| {label} | {len(trend)} | {len(gate.entries_of(change)) if gate.replayed else '-'} |")
    out += ["", *_context(gate, current, files)]
    if not current.get("findings") and not any(e.status == "failing" for e in gate.entries):
        out += ["", "No findings: every example judged held every invariant"
                + (", and no corpus entry fails." if gate.replayed else ".")]
    link = {"report": files.get("report_html")}
    sections = (("New", "new", [(f, True) for f in gate.trend.new]),
                ("Still failing", "still", [(m.new, True) for m in gate.trend.still]),
                ("Unsure", "unsure", [(f, f in gate.trend.unsure_new) for f in gate.trend.unsure]),
                ("Fixed since the baseline", "fixed", [(f, False) for f in gate.trend.fixed]))
    for title, change, found in sections:
        if found:
            out += ["", f"### {title} ({len(found)})", "", *_findings(gate, current, found, change, anchor, link)]
    listed = [e for e in gate.entries if e.change != "passing"]
    if listed:
        out += ["", f"### Corpus entries ({len(listed)} of {len(gate.entries)} replayed)", "",
                "| entry | invariant | fact kind | against the baseline | detail |", "| --- | --- | --- | --- | --- |"]
        titles = dict(_ENTRY_TITLES)
        where = f"{gate.corpus.rstrip('/')}/" if gate.corpus else ""
        out += [f"| {_code(where + e.entry)} | {_md(e.invariant)} | {_md(e.fact_kind)} | {_md(titles[e.change])} | "
                f"{_md(e.detail + ('; ' + e.rates if e.rates else ''))} |" for e in _ordered(listed)]
    out += ["", "### Files", ""]
    names = (("report_html", "HTML report"), ("report_json", "JSON report (a later run's baseline)"),
             ("junit_xml", "JUnit XML"), ("sarif", "SARIF"), ("corpus", "this run's minimal failures, as corpus "
                                                                         "entries (merge them with `corpus merge`)"))
    out += [f"- {label}: {_code(files[key])}" for key, label in names if files.get(key)]
    if run_url:
        out.append(f"- upload them as an artifact to find them under [this run]({run_url})")
    return "\n".join(out) + "\n"


def _context(gate: Gate, current: dict[str, Any], files: dict[str, str | None]) -> list[str]:
    """The run, the baseline and the corpus in a line each, and the caveats."""
    examples = f"{current.get('examples_run')} of {current.get('examples')} examples judged"
    shard = current.get("shard")
    lines = [f"- run: seed {current.get('seed')}, {examples}"
             + (f" (shard {shard['index']}/{shard['of']})" if isinstance(shard, dict) else "")
             + f", {len(current.get('findings') or [])} finding(s), exit {current.get('exit_code')}"]
    if gate.baseline:
        lines.append(f"- baseline: {_code(gate.baseline)}"
                     + ("" if gate.baseline_replayed or not gate.replayed else
                        "; it holds no corpus replay, so a corpus entry that fails now counts as known"))
    elif gate.missing:
        lines.append(f"- baseline: {', '.join(_code(m) for m in gate.missing)} not found (a first run, or a cache that "
                     f"missed), so every failure counts as new")
    else:
        lines.append("- baseline: none given, so every failure counts as new")
    if gate.replayed:
        failing = sum(e.status == "failing" for e in gate.entries)
        lines.append(f"- corpus {_code(files.get('replayed') or '')}: {len(gate.entries)} "
                     f"entr{'y' if len(gate.entries) == 1 else 'ies'} replayed, {failing} failing")
    if gate.trend.rated:
        lines.append("- the summarizer may vary: new and fixed rest on rates (Fisher's exact test), and a "
                     "difference chance explains is unsure, never new")
    lines += [f"- :warning: {_md(c)}" for c in gate.trend.caveats]
    if gate.incomplete:
        lines.append(f"- :warning: incomplete: {_md(gate.incomplete)}")
    lines += [f"- :x: the summarizer itself failed: {_md(f)}" for f in gate.summarizer_failures[:5]]
    lines += [f"- :x: {_md(p)}" for p in gate.problems[:5]]
    return lines


def _findings(gate: Gate, current: dict[str, Any], found: list[tuple[Finding, bool]], change: str,
              anchor: Callable[[Finding], str | None], link: dict[str, str | None]) -> list[str]:
    """A table of root causes, then the first ``DETAILED`` new ones with their minimal transcripts."""
    out = ["| # | root cause | fact kind | what happened | minimal transcript | in the HTML report | corpus entry |",
           "| ---: | --- | --- | --- | ---: | --- | --- |"]
    for n, (f, now) in enumerate(found, 1):
        block = anchor(f) if now and link["report"] else None
        where = _code(f"{link['report']}#{block}") if block else "-"
        turns = f"{f.minimal_turns} turn(s)" if f.minimal_turns is not None else "-"
        out.append(f"| {n} | {_md(' + '.join(f.invariants) or f.invariant)} | {_md(f.fact_kind)} | {_md(f.happened)} "
                   f"| {turns} | {where} | {_code(f.corpus_file) if f.corpus_file and now else '-'} |")
    if change not in ("new", "unsure"):
        return out
    for n, (f, now) in enumerate(found[:DETAILED], 1):
        violation = violation_of(current, f) if now else {}
        rates = gate.trend.rates.get(f, "")
        lines = short_transcript(violation) + ([f"reproduce: {violation['reproduce']}"] if violation.get("reproduce")
                                               else []) + ([f"rates: {rates}"] if rates else [])
        out += ["", f"<details><summary>{n}. {_md(f.invariant)}: {_md(f.detail)}</summary>", "",
                *(_fenced(lines) if lines else ["(in the baseline's report only)"]), "", "</details>"]
    if len(found) > DETAILED:
        out += ["", f"{len(found) - DETAILED} more: see the HTML report."]
    return out


def _ordered(entries: list[EntryChange]) -> list[EntryChange]:
    order = [change for change, _ in _ENTRY_TITLES]
    return sorted(entries, key=lambda e: (order.index(e.change), e.entry))


def gate_text(gate: Gate) -> str:
    """A few lines for the terminal: what changed since the baseline, the corpus, and the verdict."""
    if gate.baseline:
        lines = [trend_text(gate.trend)]
    else:
        lines = [f"no baseline: {len(gate.trend.new)} finding(s), every one new"]
    if gate.replayed:
        counts = {change: len(gate.entries_of(change)) for change, _ in _ENTRY_TITLES}
        lines.append(f"corpus: {len(gate.entries)} replayed: {counts['new']} new (passed in the baseline's replay), "
                     f"{counts['still']} still failing, {counts['fixed']} fixed, {counts['unsure']} unsure, "
                     f"{counts['problem']} not judged")
    verdict = "passes" if gate.passed else "FAILS: " + "; ".join(gate.reasons)
    lines.append(f"gate ({_MODES.get(gate.mode, gate.mode)}, fail-on {gate.fail_on}): {verdict}")
    return printable("\n".join(lines))
