"""The HTML report: one self-contained page (no network at view time) drawn from JSON reports.

Everything is rendered from the JSON report (``report_dict``), so ``--report-html``
on a run and ``compaction-harness report`` on files saved from earlier runs
give the same page. The page has its style and its one script (the copy
button, and opening folded blocks an in-page link points into) inline and a
Content-Security-Policy that forbids loading anything, so it opens the same
from a CI artifact, a laptop or a phone.

A page is navigated from its indexes: each report's section opens with an index of its findings, one
row per finding linking to its block (``id="runN-failureK"``, K the finding's place in ``violations``,
from 1), and each block links back; a block's minimal transcript and what the summarizer returned are
folded (``<details>``). Several plain reports (nights, oldest first) get NEW / FIXED / STILL FAILING at
the top (``_trend``), and every section but the newest is folded.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness._base._wholetoken import token_spans
from harness._app._outcome import ExitCode
from harness._app.reports._chart import DEFAULT_THRESHOLD, chart_columns, kind_colour, survival_section, survival_svg
from harness._app.reports._document import report_survival
from harness._app.reports._html_assets import CSP, SCRIPT, STYLE
from harness._app.reports._text import message_text, printable
from harness._app.reports._trend import Trend, findings_of, nightly, trend_html

__all__ = ["render_html", "comparison_html", "block_id", "Report"]

#: A JSON report and where it came from (a file name, or "this run").
Report = tuple[str, dict[str, Any]]

_EXIT = {ExitCode.OK: "no violation found", ExitCode.VIOLATIONS: "violations found",
         ExitCode.USAGE: "usage or input error", ExitCode.SUMMARIZER: "the summarizer itself failed",
         ExitCode.INCOMPLETE: "incomplete: not every example was judged"}


def _e(value: Any) -> str:
    """Any value as HTML text: escaped, with control characters (escape codes, NUL) shown, never sent raw."""
    return escape(printable(str(value)))


def block_id(anchor: str, violation: int) -> str:
    """The ``id`` of the block of ``violations[violation]`` in the section ``anchor`` ("run1", ...)."""
    return f"{anchor}-failure{violation + 1}"


def render_html(reports: Sequence[Report], *, threshold: float = DEFAULT_THRESHOLD, title: str | None = None,
                comparison: str = "", html_path: str | None = None, trend: Trend | None = None) -> str:
    """One page for one or more JSON reports (``comparison`` is extra HTML placed first, from ``compare``).

    ``html_path`` is where the page will be written, so corpus entries are linked relative to it; ``trend``
    is what changed between the last two (default: computed when there are several and no comparison)."""
    heading = title or ("compaction-harness report" if len(reports) == 1 else
                        f"compaction-harness: {len(reports)} reports")
    body = [f"<h1>{_e(heading)}</h1>", comparison]
    if trend is None and len(reports) > 1 and not comparison:
        trend = nightly(reports)
    marks: dict[int, str] = {}
    if trend is not None:
        last, before = f"run{len(reports)}", f"run{len(reports) - 1}"
        body.append(trend_html(trend, lambda side, n: "#" + block_id(last if side == "new" else before, n)))
        marks = {f.violation: "new" for f in trend.new if f.violation is not None}
        marks.update({m.new.violation: "still failing" for m in trend.still if m.new.violation is not None})
    if len(reports) > 1 and not comparison:  # a comparison has its own table of the sides, corpus included
        body.append(_runs_table(reports))
    for n, (source, document) in enumerate(reports):
        newest = n == len(reports) - 1
        body.append(_run_section(source, document, threshold, anchor=f"run{n + 1}", many=len(reports) > 1,
                                 html_path=html_path, marks=marks if newest else {},
                                 folded=trend is not None and not newest))
    return (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{_e(heading)}</title>\n'
            f"<style>{STYLE}</style>\n</head>\n<body>\n<main>\n" + "\n".join(body)
            + f"\n</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n")


# -- one run ----------------------------------------------------------------------------------------------------------

def _runs_table(reports: Sequence[Report]) -> str:
    rows = []
    for n, (source, d) in enumerate(reports, 1):
        code = d.get("exit_code")
        rows.append(f'<tr><td><a href="#run{n}">{_e(source)}</a></td><td>{_e(d.get("summarizer"))}</td>'
                    f'<td>{_e(d.get("seed"))}</td><td>{_e(d.get("examples_run"))}</td>'
                    f'<td>{len(d.get("violations", []))}</td><td class="status-{_e(code)}">{_e(_EXIT.get(code, str(code)))}'
                    f"</td></tr>")
    return ('<h2>Reports</h2><div class="scroll"><table class="diff"><tr><th>report</th><th>summarizer</th><th>seed</th>'
            "<th>examples</th><th>violations</th><th>status</th></tr>" + "".join(rows) + "</table></div>")


_PARTS = (("index", "findings"), ("survival", "survival"), ("failures", "failures"), ("unclear", "unclear readings"),
          ("notices", "summarizer failures and notices"))


def _run_section(source: str, d: dict[str, Any], threshold: float, *, anchor: str, many: bool,
                 html_path: str | None = None, marks: dict[int, str] | None = None, folded: bool = False) -> str:
    out = [f'<section id="{anchor}">']
    violations = d.get("violations", [])
    if many:
        out.append(f"<h2>{_e(source)}: {_e(d.get('summarizer'))}</h2>")
    if folded:  # an older night: one click away, opened by any link into it
        out.append(f'<details class="run"><summary>An earlier report: {len(violations)} failure(s), '
                   f"{_e(_EXIT.get(d.get('exit_code'), d.get('exit_code')))} (open it)</summary>")
    out.append(_summary(d))
    out.append('<nav class="toc">' + " · ".join(f'<a href="#{anchor}-{h}">{t}</a>' for h, t in _PARTS) + "</nav>")
    out.append(_index(source, d, anchor, html_path, marks or {}))
    out.append(survival_section(d, source, threshold, anchor=anchor))
    out.append(f'<h2 id="{anchor}-failures">Failures ({len(violations)})</h2>')
    if not violations:
        out.append('<p class="muted">No invariant was violated in what was judged.</p>')
    out.extend(_failure(v, i, anchor, _corpus_link(v.get("corpus_file"), v.get("corpus_new"), source, html_path))
               for i, v in enumerate(violations))
    out.append(_unclear(d, anchor))
    if d.get("corpus_replay") is not None:
        out.append(_corpus_replay(d["corpus_replay"]))
    out.append(_degradations(d))
    out.append(_infra(d, anchor))
    out.append("</details></section>" if folded else "</section>")
    return "\n".join(out)


def _index(source: str, d: dict[str, Any], anchor: str, html_path: str | None, marks: dict[int, str]) -> str:
    """One row per finding, linked to its block; then any violation no ``findings`` row names."""
    violations = d.get("violations") or []
    rows = [f for f in findings_of(d) if f.violation is not None]
    named = {f.violation for f in rows}
    rows += [f for f in findings_of({"violations": violations}) if f.violation not in named]
    head = f'<h2 id="{anchor}-index">Findings ({len(rows)})</h2>'
    if not rows:
        return head + '<p class="muted">None: no invariant was violated in what was judged.</p>'
    out = []
    for k, f in enumerate(rows, 1):
        v = violations[f.violation]
        where = f"compaction {v['round'] + 1}" if isinstance(v.get("round"), int) else "the session"
        turns = f.minimal_turns if f.minimal_turns is not None else len((v.get("transcript") or {}).get("turns", []))
        mark = marks.get(f.violation, "")
        mark = f'<td class="{"new" if mark == "new" else ""}">{_e(mark)}</td>' if marks else ""
        kinds = f.fact_kind + (f" (+ {', '.join(f.also_kinds)})" if f.also_kinds else "")
        out.append(f'<tr><td>{k}</td><td><a href="#{block_id(anchor, f.violation)}">{_e(" + ".join(f.invariants))}'
                   f"</a></td><td>{_e(kinds)}</td><td>{_e(f.happened)}</td><td>{_e(turns)}</td><td>{_e(where)}</td>{mark}"
                   f"<td>{_corpus_link(f.corpus_file, None, source, html_path) or '-'}</td></tr>")
    since = "<th>since the report before</th>" if marks else ""
    return (head + '<div class="scroll"><table class="diff index"><tr><th>#</th><th>invariants</th><th>fact kind</th>'
            f"<th>what happened</th><th>minimal turns</th><th>first failed at</th>{since}<th>corpus entry</th></tr>" + "".join(out)
            + "</table></div>")


def _corpus_link(path: Any, new: Any, source: str, html_path: str | None) -> str:
    """The corpus entry saved for a finding, linked (relative to the page when its place is known), or ""."""
    if not isinstance(path, str) or not path:
        return ""
    note = {True: " (new entry)", False: " (already in the corpus)"}.get(new, "") if isinstance(new, bool) else ""
    return (f'<a class="corpus-link" href="{escape(_corpus_href(path, source, html_path), quote=True)}">'
            f"{_e(path)}</a>{note}")


def _corpus_href(path: str, source: str, html_path: str | None) -> str:
    entry = Path(path)
    if html_path is None:  # where the page will be is unknown: as written (relative to where the run was started)
        return entry.as_uri() if entry.is_absolute() else quote(entry.as_posix())
    if not entry.is_absolute():  # relative to the run's directory; a report read from a file may sit beside it
        beside = Path(source).parent / entry
        entry = beside if not entry.exists() and beside.exists() else entry
    try:
        return quote(Path(os.path.relpath(os.path.abspath(entry), os.path.dirname(os.path.abspath(html_path))))
                     .as_posix())
    except ValueError:  # another drive
        return Path(os.path.abspath(entry)).as_uri()


def _summary(d: dict[str, Any]) -> str:
    calls = d.get("calls") or {}
    items = [("summarizer", d.get("summarizer")), ("protocol", d.get("protocol")), ("seed", d.get("seed")),
             ("examples run", d.get("examples_run")),
             ("summarizer calls", f"{calls.get('calls', d.get('summarizer_calls', '?'))} "
                                  f"({d.get('cache_hits', 0)} cache hits)")]
    if calls.get("usage_known"):
        items.append(("tokens spent", f"{calls.get('prompt_tokens', 0):,} prompt + "
                                      f"{calls.get('completion_tokens', 0):,} completion"))
    elif calls.get("handed_tokens"):
        items.append(("tokens handed over", f"{calls['handed_tokens']:,} (no usage reported)"))
    else:
        items.append(("cost", "not reported by the summarizer"))
    sessions = d.get("sessions") or {}
    if sessions.get("compactions"):
        items.append(("compactions", f"{sum(sessions['compactions']):,}: {sessions.get('by_trigger', 0):,} by the "
                                     f"trigger, {sessions.get('forced_by_planned_cuts', 0):,} forced by planned cuts"))
    if d.get("first_failure_calls") is not None:
        items.append(("calls to first failure", d["first_failure_calls"]))
    code = d.get("exit_code")
    label = "exit status of its run (its corpus replay is below)" if d.get("corpus_replay") is not None \
        else "exit status"
    items.append((label, f"{code}: {_EXIT.get(code, 'unknown')}"))
    cells = "".join(f'<div{_WIDE if name == "summarizer" else ""}><dt>{_e(name)}</dt>'
                    f'<dd{_status(name, _side_code(d))}>{_e(value)}</dd></div>' for name, value in items)
    return f'<dl class="summary">{cells}</dl>'


_WIDE = ' class="wide"'


def _status(name: str, code: Any) -> str:
    return f' class="status status-{_e(code)}"' if name.startswith("exit status") else ""


def _side_code(d: dict[str, Any]) -> Any:
    """A compared side's status colour: its run's exit code, or 1 when its corpus replay still fails."""
    failing = any(o.get("status") == "failing" for o in d.get("corpus_replay") or [])
    return 1 if failing and d.get("exit_code") == 0 else d.get("exit_code")


# -- one failure ------------------------------------------------------------------------------------------------------

def _failure(v: dict[str, Any], index: int, anchor: str, corpus: str = "") -> str:
    transcript = v.get("transcript") or {}
    facts = [f for f in transcript.get("facts", []) if isinstance(f, dict)]
    failing = next((f for f in facts if f.get("id") == v.get("fact_id")), None)
    forced = " (forced by a planned cut)" if v.get("forced") else ""
    where = (f"compaction {v['round'] + 1}{forced}, after turn {v.get('boundary')}" if isinstance(v.get("round"), int)
             else "across the session")
    kind = (v.get("fact_kind") or "structure") + (f", {v['outcome']}" if v.get("outcome") else "")
    out = [f'<article class="failure" id="{block_id(anchor, index)}" data-invariant="{_e(v["invariant"])}">',
           f'<h3>✗ {_e(v["invariant"])} — {_e(kind)} <span class="muted">({_e(v.get("severity"))}; '
           f"{_e(where)})</span></h3>", f"<p>{_e(v.get('detail', ''))}</p>"]
    also = [a for a in v.get("also") or [] if isinstance(a, dict)]
    if also:  # the same root cause, seen by other invariants on the same minimal transcript
        out.append('<ul class="also">' + "".join(f"<li>also broken: <strong>{_e(a.get('invariant'))}</strong>: "
                                                  f"{_e(a.get('detail', ''))}</li>" for a in also) + "</ul>")
    if v.get("also_seen"):
        out.append(f'<p class="muted">Also seen with it, not on the minimal transcript: '
                   f"{_e(', '.join(map(str, v['also_seen'])))}</p>")
    if v.get("also_kinds"):
        out.append(f'<p class="muted">The same loss seen on other kinds of fact too: '
                   f"{_e(', '.join(map(str, v['also_kinds'])))}</p>")
    evidence = [(name, v.get(key)) for name, key in (("expected", "expected"), ("found", "found")) if v.get(key)]
    if not v.get("found") and v.get("outcome") == "dropped":
        evidence.append(("found", "nothing that stands in for it"))
    if evidence:
        out.append('<table class="evidence-table">' + "".join(
            f"<tr><th>{name}</th><td>{_e(value)}</td></tr>" for name, value in evidence) + "</table>")
    turns = transcript.get("turns", [])
    original = v.get("original_turns")
    budget = f", fails at budget {v['budget']}" if v.get("budget") else ""
    out.append(f'<p class="muted">Shrunk to {len(turns)} turns from {_e(original)} in {_e(v.get("shrink_checks"))} '
               f"checks ({_e(v.get('shrink_summarizer_calls'))} new summarizer calls){_e(budget)}"
               + (f"; {_e(v['rate'])}" if v.get("rate") else "") + "</p>")
    if v.get("shrink_stopped"):
        out.append(f'<p class="notice">Shrinking stopped early ({_e(v["shrink_stopped"])}): this is the '
                   f"smallest failing transcript found so far.</p>")
    if corpus:
        out.append(f'<p class="corpus">Corpus entry: {corpus}</p>')
    out.append(_turns(turns, facts, failing, v.get("elided") or []))
    out.append(_context(v, facts, failing))
    command = str(v.get("reproduce", ""))
    out.append(f'<div class="reproduce"><pre><code>{_e(command)}</code></pre>'
               f'<button class="copy" type="button" data-copy="{escape(command, quote=True)}">Copy</button></div>')
    out.append(f'<p class="back"><a href="#{anchor}-index">↑ back to the index</a></p></article>')
    return "\n".join(out)


def _turns(turns: list, facts: list, failing: dict | None, elided: list) -> str:
    merged = {e.get("turn"): e for e in elided if isinstance(e, dict)}
    stated_at = {f.get("origin_turn"): f for f in facts}
    ended_at = {(f.get("fate") or {}).get("turn"): f for f in facts if isinstance(f.get("fate"), dict)}
    items = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict):
            continue
        role = _e(turn.get("role", "?"))
        if i in merged:
            e = merged[i]
            items.append(f'<li class="elided"><span class="role">[{i}] {role}</span>… {_e(e.get("tokens", "?"))} tokens '
                         f"of unrelated work ({_e(e.get('merged_turns', '?'))} turns merged)</li>")
            continue
        fact = stated_at.get(i)
        needles = [(lit, "obligation") for lit in (fact or {}).get("literals", []) if isinstance(lit, str)]
        text = _highlight(str(turn.get("text", "")), needles)
        calls = "".join(f' <code>[call {_e(c.get("name"))} id={_e(c.get("id"))}]</code>'
                        for c in turn.get("tool_calls", []) if isinstance(c, dict))
        answer = f' <code>[result for {_e(turn["tool_call_id"])}]</code>' if turn.get("tool_call_id") else ""
        cls = ""
        if fact is not None:
            cls = ' class="stated"'
            owner = "the failing obligation" if fact is failing else "an obligation"
            text += f' <span class="muted">← {owner} {_e(fact.get("id"))} ({_e(fact.get("kind"))}) ' \
                    f"stated here</span>"
        ended = ended_at.get(i)
        if ended is not None and ended is not fact:
            text += (f' <span class="muted">← {_e(ended.get("id"))} '
                     f'{_e((ended.get("fate") or {}).get("status"))} here</span>')
        items.append(f'<li{cls} data-turn="{i}"><span class="role">[{i}] {role}</span>{text}{calls}{answer}</li>')
    stated = f", the failing one stated at turn {failing.get('origin_turn')}" if failing else ""
    return (f'<details class="fold transcript"><summary>minimal transcript: {len(turns)} turns, {len(facts)} '
            f'obligation(s){_e(stated)}</summary><ol class="turns">' + "".join(items) + "</ol></details>")


def _context(v: dict[str, Any], facts: list, failing: dict | None) -> str:
    context = v.get("context")
    if not isinstance(context, dict):
        return '<p class="muted">No single context to show: the violation is about the session as a whole.</p>'
    texts = [message_text(m) for m in context.get("messages", []) if isinstance(m, dict)]
    ledger = context.get("ledger")
    if ledger:
        texts.append("ledger: " + json.dumps(ledger, ensure_ascii=False))
    text = "\n---\n".join(texts)
    needles: list[tuple[str, str]] = []
    if v.get("found"):
        needles.append((str(v["found"]), "evidence"))
    for fact in facts:
        cls = "bent" if fact is failing else "kept"
        needles += [(lit, cls) for lit in fact.get("literals", []) if isinstance(lit, str)]
    lost = [lit for lit in (failing or {}).get("literals", []) if isinstance(lit, str)
            and next(token_spans(text, lit), None) is None]
    notes = ""
    if lost:
        notes = '<p class="lost">Lost: ' + ", ".join(f"<code>{_e(lit)}</code>" for lit in lost) + \
                " (the obligation's words appear nowhere in what came back)</p>"
    key = ('<p class="muted">Marked: <mark class="evidence">what the oracle found</mark>, <mark class="bent">the failing '
           'obligation\'s words</mark>, <mark class="kept">other obligations\' words that survived</mark>.</p>')
    shown = _highlight(text, needles) if text.strip() else '<span class="muted">(no text at all)</span>'
    size = f"{len(texts)} message(s), {len(text):,} characters" + (", words lost" if lost else "")
    return (f'{notes}<details class="fold returned"><summary>what the summarizer returned: {size}</summary>{key}'
            f'<div class="context">{shown}</div></details>')


def _occurrences(text: str, needle: str):
    start = text.find(needle)
    while start != -1:
        yield start, start + len(needle)
        start = text.find(needle, start + len(needle))


def _highlight(text: str, needles: Sequence[tuple[str, str]]) -> str:
    """``text`` escaped, with each occurrence of a needle wrapped in ``<mark class=...>``; earlier needles win
    where they overlap, then longer ones."""
    text = printable(text)
    spans: list[tuple[int, int, str]] = []
    taken = [False] * len(text)
    for needle, cls in needles:
        needle = printable(needle)
        if not needle.strip():
            continue
        # As the oracles read literals: whole tokens ("6.24.1" is not in "6.24.10"); evidence as it was quoted.
        found = token_spans(text, needle) if cls != "evidence" else _occurrences(text, needle)
        for start, end in found:
            if not any(taken[start:end]):
                spans.append((start, end, cls))
                for i in range(start, end):
                    taken[i] = True
    out, at = [], 0
    for start, end, cls in sorted(spans):
        out.append(escape(text[at:start]))
        out.append(f'<mark class="{cls}">{escape(text[start:end])}</mark>')
        at = end
    out.append(escape(text[at:]))
    return "".join(out)


# -- what is not a failure --------------------------------------------------------------------------------------------

def _corpus_replay(outcomes: list[dict]) -> str:
    failing = [o for o in outcomes if o.get("status") != "fixed"]
    rows = "".join(f'<tr><td>{_e(o.get("entry"))}</td><td>{_e(o.get("invariant"))}</td>'
                   f'<td class="{"new" if o.get("status") == "failing" else "status-4"}">{_e(o.get("status"))}</td>'
                   f'<td>{_e(o.get("detail"))}</td></tr>' for o in failing)
    summary = f"{len(outcomes)} entries replayed, {len(outcomes) - len(failing)} fixed"
    table = (f'<div class="scroll"><table class="diff"><tr><th>entry</th><th>invariant</th><th>status</th>'
             f"<th>detail</th></tr>{rows}</table></div>") if rows else ""
    return f'<h2>Corpus replay</h2><p class="muted">{_e(summary)}.</p>{table}'


def _unclear(d: dict[str, Any], anchor: str) -> str:
    """The readings the oracles could not settle, each with its obligation, sentence and why: for review."""
    unclear = d.get("unclear") or []
    head = f'<h2 id="{anchor}-unclear">Unclear readings ({len(unclear)})</h2>'
    if not unclear:
        return head + '<p class="muted">None: every reading was settled either way.</p>'
    fails = d.get("unclear_mode") == "fail"
    rows = "".join(f"<tr><td>{_e(u.get('invariant'))}</td><td>{_e(u.get('fact_kind') or 'structure')}</td>"
                   f"<td>{_e(u.get('why'))}</td><td>{_e(u.get('obligation'))}</td><td>{_e(u.get('sentence'))}</td>"
                   f"<td>{_e(u.get('detail'))}</td><td>{_e(u.get('count'))}</td></tr>" for u in unclear)
    note = ("They fail this run (--unclear fail)." if fails else
            "For a person to review: not violations, and not shrunk (--unclear fail makes them fail the run).")
    return (head + f'<p class="muted">The oracles found words of force they could not attach to the obligation '
            f'either way. {note}</p><div class="scroll"><table class="diff"><tr><th>oracle</th><th>kind</th>'
            "<th>why</th><th>obligation</th><th>sentence</th><th>detail</th><th>times</th></tr>"
            f"{rows}</table></div>")


def _degradations(d: dict[str, Any]) -> str:
    degradations = d.get("degradations") or {}
    head = "<h2>Degradations</h2>"
    if not degradations:
        return head + '<p class="muted">None.</p>'
    rows = "".join(f"<tr><td>{_e(k)}</td><td>{_e(n)}</td></tr>" for k, n in sorted(degradations.items()))
    return (head + '<p class="muted">Honest but coarser (a range instead of a number, an unverified claim): not '
            f'failures, counted per oracle.</p><table class="diff"><tr><th>oracle</th><th>times</th></tr>{rows}</table>')


def _infra(d: dict[str, Any], anchor: str) -> str:
    items = []
    kinds: dict[str, list[dict]] = {}  # grouped by kind, as the text report does: a run can crash thousands of times
    for e in d.get("infra_errors") or []:
        kinds.setdefault(str(e.get("kind")), []).append(e)
    for kind, errors in kinds.items():
        first = errors[0]
        output = f"<pre>{_e(first.get('output'))}</pre>" if first.get("output") else ""
        examples = ", ".join(str(e.get("example")) for e in errors[:20]) + (", ..." if len(errors) > 20 else "")
        items.append(f'<div class="notice infra" data-kind="{_e(kind)}"><strong>the summarizer failed ({_e(kind)})'
                     f"</strong> in {len(errors)} example(s) ({_e(examples)}); the first: {_e(first.get('message'))}"
                     f"{output}</div>")
    for name, text in (("incomplete", d.get("incomplete")), ("spend cap", d.get("cap_reached"))):
        if text:
            items.append(f'<div class="notice"><strong>{name}</strong>: {_e(text)}</div>')
    items += [f'<div class="notice">{_e(w)}</div>' for w in d.get("warnings") or []]
    if d.get("cache_discarded"):
        items.append(f'<div class="notice">call cache: {len(d["cache_discarded"])} damaged entries ignored and '
                     f"recomputed</div>")
    head = f'<h2 id="{anchor}-notices">Summarizer failures and notices</h2>'
    return head + ("".join(items) if items else '<p class="muted">None: the summarizer answered every call.</p>')


# -- compare ----------------------------------------------------------------------------------------------------------

_MARK_CLASS = {"✗": "new", "✓": "fixed", "?": "muted"}


def comparison_html(document: dict[str, Any], *, threshold: float = DEFAULT_THRESHOLD) -> str:
    """The head of a ``compare`` page: what is new and fixed against the baseline, survival side by side."""
    baseline = document["baseline"]
    code = document.get("exit_code")
    out = [f'<p class="status status-{_e(code)}"><strong>{_e(document.get("verdict", ""))}</strong> '
           f'(exit {_e(code)}; baseline <code>{_e(baseline)}</code>, seed {_e(document.get("seed"))})</p>']
    sides = document.get("sides", [])
    status = []
    for i, side in enumerate(sides):
        report = side["report"]
        corpus = side.get("corpus")
        failing = [c for c in corpus or [] if c.get("status") == "failing"]
        corpus_cell = "-" if corpus is None else f"{len(failing)} of {len(corpus)} failing"
        problems = [text for text in (f"{len(report.get('infra_errors') or [])} summarizer failure(s)"
                                      if report.get("infra_errors") else "", side.get("incomplete") or "") if text]
        status.append(f"<tr><td>[{i + 1}] {_e(side['summarizer'])}</td><td>{_e(report.get('examples_run'))}</td>"
                      f"<td>{len(report.get('violations', []))}</td><td>{_e(corpus_cell)}</td>"
                      f'<td class="{"status-4" if problems else ""}">{_e("; ".join(problems) or "none")}</td></tr>')
    status += [f'<tr><td>{_e(label)}</td><td colspan="4" class="status-4">not run (interrupted)</td></tr>'
               for label in document.get("not_run", [])]
    out.append('<h2>Summarizers</h2><div class="scroll"><table class="diff"><tr><th>summarizer</th><th>examples</th>'
               "<th>violations</th><th>corpus replay</th><th>summarizer failures, not judged</th></tr>"
               + "".join(status) + "</table></div>")
    head = "".join(f"<th>[{i + 1}] {_e(side['summarizer'])}</th>" for i, side in enumerate(sides))
    matrix = "".join(f"<tr><td>{_e(row['failure'])}</td>"
                     + "".join(f'<td class="{_MARK_CLASS.get(mark, "")}">{_e(mark)}</td>' for mark in row["marks"])
                     + "</tr>" for row in document.get("matrix", []))
    kept = "".join(f"<tr><td>{_e(row['kind'])}</td>" + "".join(f"<td>{_e(k)}</td>" for k in row["kept"])
                   + "</tr>" for row in document.get("kept_per_kind", []))
    out.append('<h2>Per invariant and fact kind</h2><div class="scroll"><table class="diff matrix"><tr><th>failure '
               f'(✗ has it, ? not reached)</th>{head}</tr>{matrix}</table></div>'
               f'<h3>Share of live obligations kept, over every round</h3><div class="scroll"><table class="diff">'
               f"<tr><th>fact kind</th>{head}</tr>{kept}</table></div>")
    for against in document.get("against_baseline", []):
        unsure = against.get("unsure") or []  # a varying summarizer's difference chance explains (compare v2)
        rows = [f'<tr data-change="{change}"><td class="{css}">{change}</td><td>{_e(_failure_name(item))}</td>'
                f'<td>{_e(item["detail"])}</td></tr>' for change, css, items in (("new", "new", against["new"]),
                ("fixed", "fixed", against["fixed"]), ("unsure", "muted", unsure)) for item in items]
        table = ('<div class="scroll"><table class="diff" data-against="' + _e(against["summarizer"]) + '">'
                 "<tr><th></th><th>failure</th><th>what it is</th></tr>" + "".join(rows) + "</table></div>") \
            if rows else '<p class="muted">Nothing new and nothing fixed.</p>'
        out.append(f"<h2>{_e(against['summarizer'])} against {_e(baseline)}: {len(against['new'])} new, "
                   f"{len(against['fixed'])} fixed{f', {len(unsure)} unsure' if document.get('rates') else ''}</h2>{table}")
    charts = []
    survivals = [report_survival(side["report"], side["summarizer"]) for side in document.get("sides", [])]
    order = sorted({kind for s in survivals if s is not None for kind in s.kinds()})
    for side, survival in zip(document.get("sides", []), survivals):
        chart = survival_svg(chart_columns(survival), threshold, title=f"Survival: {side['summarizer']}",
                             colour_order=order) if survival is not None and survival.kinds() else \
            '<p class="muted">No survival counts.</p>'
        charts.append(f'<div><h3>{_e(side["summarizer"])}</h3><div class="chart">{chart}</div></div>')
    legend = "".join(f'<li><span class="swatch" style="background:{kind_colour(i)[0]}"></span>{_e(kind)}</li>'
                     for i, kind in enumerate(order))
    out.append(f'<h2>Survival side by side</h2><div class="side-by-side">{"".join(charts)}</div>'
               f'<ul class="legend">{legend}</ul>')
    return "\n".join(out)


def _failure_name(item: dict[str, str]) -> str:
    if item["where"] == "run":
        return f"{item['invariant']} ({item['fact_kind']})"
    if item["where"] == "corpus":
        return f"corpus entry {item['entry']} ({item['invariant']})"
    return f"the summarizer itself failed ({item['infra_kind']})"
