"""Readable reports: one block per distinct failure, and the JSON report."""

from __future__ import annotations

import json
import shlex
import unicodedata
from pathlib import Path
from typing import Any

from harness._base._codec import transcript_to_dict
from harness._base._files import write_atomic
from harness._base._model import FactKind
from harness._app.judging._audit import Audit
from harness._app.fuzzing._fuzz import FuzzResult
from harness._app.running._run import Failure, RunResult, Unclear, turn_stats
from oracles import select

__all__ = ["render_text", "report_dict", "unclear_dict", "write_json", "REPORT_VERSION", "reproduce_command", "printable", "render_fuzz_text",
           "fuzz_report_dict"]


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters (escape codes) shown as ``\\x1b``, never sent raw."""
    return "".join(ch if ch in "\n\t" or unicodedata.category(ch)[0] != "C" else ch.encode("unicode_escape")
                   .decode("ascii") for ch in text)


def reproduce_command(result: RunResult, *, only: str | None = None, transcript_file: str | None = None) -> str:
    c = result.config
    transcript_file = transcript_file or c.transcript_file
    if transcript_file is not None:
        parts = ["compaction-harness", "shrink", transcript_file, "--summarizer", c.summarizer,
                 "--protocol", result.protocol, "--budget", str(c.budget)]
    else:
        parts = ["compaction-harness", "run", "--summarizer", c.summarizer, "--protocol", result.protocol,
                 "--seed", str(result.seed), "--examples", str(c.examples), "--max-turns", str(c.max_turns),
                 "--budget", str(c.budget)]
    for option, value in (("--base-url", c.base_url), ("--prompt", c.prompt), ("--api-key-env", c.api_key_env)):
        if value:
            parts += [option, value]
    if c.background and transcript_file is None:
        parts += ["--background", c.background]
    if transcript_file is None:  # a transcript file carries its own consumers
        for consumer in c.consumers:
            parts += ["--consumer", f"{consumer.name}={','.join(consumer.requires)}"]
    if c.may_vary:
        parts.append("--may-vary")
    if c.token_counter:
        parts += ["--token-counter", c.token_counter]
    for module in c.extend:
        parts += ["--extend", module]
    if c.rules:
        parts += ["--rules", c.rules]
    if only or c.only:
        parts += ["--only", only or ",".join(c.only)]
    if c.skip and not only:
        parts += ["--skip", ",".join(c.skip)]
    if c.unclear != "review":
        parts += ["--unclear", c.unclear]
    return shlex.join(parts)


def _clip(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _stopped(reason: str) -> str:
    """Why shrinking stopped, as a reader wants it: a spent allowance of calls is "shrunk within N calls"."""
    if reason.startswith("--shrink-calls "):
        return f"shrunk within {reason.split()[1]} calls (--shrink-calls)"
    return f"shrinking stopped early ({reason})"


def _failure_block(result: RunResult, f: Failure) -> list[str]:
    t = f.transcript
    where = f"compaction {f.round + 1}, after turn {f.boundary}" if f.round is not None else "across the session"
    lines = [
        f"✗ {f.invariant} — {f.fact_kind or 'structure'} ({f.severity}; {where})",
        f"  {f.detail}",
    ]
    if f.invariant == "deterministic" and f.expected is not None and f.found is not None:
        lines.extend(_side_by_side(f.expected, f.found))
    else:
        if f.expected:
            lines.append(f"  expected: {_clip(f.expected)}")
        if f.found:
            lines.append(f"  context had: {_clip(f.found)}")
    at_budget = "" if f.budget == result.config.budget else \
        f", fails at budget {f.budget} (the run's {result.config.budget}, lowered while shrinking; at the run's budget it needs more filler)"
    lines.append(f"  minimal transcript: {len(t.turns)} turns (from {f.original_turns}), {len(t.facts)} facts{at_budget}, "
                 f"shrunk in {f.shrink_checks} checks, {f.shrink_calls} new summarizer calls")
    if f.shrink_stopped:
        lines.append(f"  {_stopped(f.shrink_stopped)}: the smallest failing transcript found so far")
    session = _session_line(t, f)
    if session:
        lines.append(f"  {session}")
    if f.rate:
        flaky = f.trials[0] < f.trials[1]
        lines.append(f"  {f.rate} (the minimal transcript asked again, cache bypassed)"
                     + ("; the summarizer answers it differently from one time to the next" if flaky else ""))
    elided = {index: (merged, tokens) for index, merged, tokens in f.elided}
    for i, turn in enumerate(t.turns[:12]):
        if i in elided:
            merged, tokens = elided[i]
            lines.append(f"    [{i}] {turn.role.value}: … {tokens:,} tokens of unrelated work ({merged} turns no "
                         f"obligation is in, merged)")
            continue
        calls = "".join(f" [call {c.name} id={c.id}]" for c in turn.tool_calls)
        answer = f" [result for {turn.tool_call_id}]" if turn.tool_call_id else ""
        lines.append(f"    [{i}] {turn.role.value}: {_clip(turn.text, 90)}{calls}{answer}")
    if len(t.turns) > 12:
        lines.append(f"    … {len(t.turns) - 12} more turns")
    for fact in t.facts:
        lines.append(f"    ledger: {fact.id} {fact.kind} {' | '.join(fact.literals)} "
                     f"(turn {fact.origin_turn}, {fact.fate.status.value})")
    if f.context:
        summary = " / ".join(m.get("content") or "" for m in f.context["messages"])
        lines.append(f"  summarizer returned: {_clip(summary, 200) if summary.strip() else '(no text at all)'}")
    lines.append(f"  reproduce: {reproduce_command(result, only=f.invariant, transcript_file=result.reproduce_files.get(f.key))}")
    return lines


def _unclear_block(result: RunResult) -> list[str]:
    """The readings the oracles could not settle: each with the obligation, the sentence and why; a person
    decides. They are not violations (unless the run said ``--unclear fail``) and were not shrunk."""
    fails = result.config.unclear == "fail"
    lines = [f"? unclear readings ({len(result.unclear)}): the oracles could not settle these either way; "
             + ("they fail this run (--unclear fail)" if fails else "for review, not violations (--unclear fail makes them fail)")]
    for u in result.unclear:
        where = f"compaction {u.round + 1}, after turn {u.boundary}" if u.round is not None else "across the session"
        seen = f"seen {u.count} times, first" if u.count > 1 else "seen"
        lines.append(f"  ? {u.invariant} — {u.fact_kind or 'structure'} ({u.why or 'unclear'}; {seen} in example "
                     f"{u.example}, {where})")
        lines.append(f"    {_clip(u.detail, 200)}")
        if u.obligation:
            lines.append(f"    obligation: {_clip(u.obligation)}")
        if u.sentence:
            lines.append(f"    sentence: {_clip(u.sentence, 200)}")
    return lines


def unclear_dict(u: Unclear) -> dict[str, Any]:
    """One unclear reading as the JSON report holds it."""
    return {"invariant": u.invariant, "fact_kind": u.fact_kind, "fact_id": u.fact_id, "why": u.why,
            "detail": u.detail, "obligation": u.obligation, "sentence": u.sentence, "example": u.example,
            "round": u.round, "boundary": u.boundary, "count": u.count}


def _session_line(t, f: Failure) -> str:
    """The minimal session's rounds and what it declares (tightenings, effects, consumers), when it has more
    than one round or any of them: the session is part of what was shrunk."""
    parts = []
    if len(f.boundaries) > 1:
        parts.append(f"{len(f.boundaries)} compactions, after turns {', '.join(map(str, f.boundaries))}")
    parts += [f"budget {s.share / 10:g}% from compaction {s.round + 1}" for s in t.tightenings]
    parts += [f"effect {e.action} ({e.call_id}) at turn {e.turn}, governed by {', '.join(e.governed_by)}"
              for e in t.effects]
    parts += [f"consumer {c.name} requires {', '.join(c.requires)}" for c in t.consumers]
    return "session: " + "; ".join(parts) if parts else ""


def _side_by_side(first: str, again: str, *, width: int = 46, rows: int = 8) -> list[str]:
    """Two answers to one request in two columns, from their first difference; ``|`` marks a differing row."""
    a, b = first.splitlines(), again.splitlines()
    out = [f"  {'first answer':<{width}}   asked again"]
    for i in range(min(rows, max(len(a), len(b)))):
        left = a[i] if i < len(a) else ""
        right = b[i] if i < len(b) else ""
        mark = "|" if left != right else " "
        out.append(f"  {_clip(left, width - 1):<{width}} {mark} {_clip(right, width - 1)}")
    return out


def render_text(result: RunResult) -> str:
    """The report people read; everything from the summarizer is made printable first."""
    return printable(_render(result))


def render_fuzz_text(fuzz: FuzzResult) -> str:
    """The ``fuzz`` report: what the fuzzing did, then every failure as ``run`` reports it."""
    s, result = fuzz.stats, fuzz.run
    first = "no violation seen" if s.first_failure_calls is None else \
        f"first violation after {s.first_failure_calls:,} summarizer calls ({s.first_failure_executions:,} " \
        f"example{'' if s.first_failure_executions == 1 else 's'})"
    head = [f"compaction-harness fuzz: {result.config.summarizer} ({result.protocol}) · seed {result.seed} · "
            f"{s.executions:,} executions in {s.seconds:.0f} s ({s.per_second:,.0f}/s), {s.examples:,} judged as "
            f"transcripts",
            f"coverage of the summarizer's code: {s.coverage} edges, {s.features} features; {s.inputs} inputs kept "
            f"in {s.directory}",
            f"fuzzing: {s.calls:,} summarizer calls (cache hits not counted); {first}"
            + (f"; fuzzing process restarted {s.restarts} time(s)" if s.restarts else "")]
    lines = _render(result, head=head).splitlines()
    if len(lines) > len(head) and lines[len(head)].startswith("summarizer: "):  # the calls after fuzzing
        lines[len(head)] = "shrinking and confirming: " + lines[len(head)].removeprefix("summarizer: ")
    verdict = lines[-1].split(" · reproduce the run:")[0]
    lines[-1] = verdict + (" · reproduce: each failure's line" if result.failures else "")
    return printable("\n".join(lines))


def fuzz_report_dict(fuzz: FuzzResult) -> dict[str, Any]:
    """``report_dict`` of the shrunk result, with the fuzzing counters under ``fuzz``."""
    s = fuzz.stats
    document = report_dict(fuzz.run)
    document["fuzz"] = {"executions": s.executions, "examples": s.examples, "calls": s.calls,
                        "seconds": round(s.seconds, 3), "executions_per_second": round(s.per_second, 1),
                        "coverage": s.coverage, "features": s.features, "inputs": s.inputs,
                        "first_failure_calls": s.first_failure_calls,
                        "first_failure_executions": s.first_failure_executions, "restarts": s.restarts,
                        "directory": s.directory}
    return document


def _render(result: RunResult, *, head: list[str] | None = None) -> str:
    c = result.config
    out = list(head) if head else [
        f"compaction-harness: {c.summarizer} ({result.protocol}) · seed {result.seed} · {result.examples_run} examples "
        f"({turn_stats(result.turns)})",
    ]
    if head is None or result.summarizer_calls:
        out.append(_calls_line(result))
    if result.stats.asked_again:
        out.append(_determinism_line(result))
    for f in result.failures:
        out.append("")
        out.extend(_failure_block(result, f))
    if result.unclear:
        out.append("")
        out.extend(_unclear_block(result))
    if result.infra_errors:
        out.append("")
        kinds: dict[str, list] = {}
        for e in result.infra_errors:
            kinds.setdefault(e.kind, []).append(e)
        for kind, errors in kinds.items():
            out.append(f"! summarizer failure ({kind}) in {len(errors)} example(s): {errors[0].message}")
            if errors[0].output:
                out.append("  it printed (last lines):")
                out.extend(f"    | {line}" for line in errors[0].output.splitlines()[-8:])
    if result.cache_discarded:
        out.append("")
        out.append(f"! call cache: {len(result.cache_discarded)} damaged entr"
                   f"{'y' if len(result.cache_discarded) == 1 else 'ies'} ignored and recomputed "
                   f"(first: {result.cache_discarded[0]})")
    if result.cap_reached and result.cap_reached != result.incomplete:
        out.append("")
        out.append(f"! spend cap: {result.cap_reached}; exploration stopped early and shrinking shared what was left")
    if result.incomplete:
        out.append("")
        out.append(f"! incomplete: {result.incomplete} after judging {result.examples_run} of {c.examples} "
                   f"example(s)" if c.transcript_file is None else f"! incomplete: {result.incomplete}")
    for warning in result.warnings:
        out.append("")
        out.append(f"! {warning}")
    if result.degradations:
        out.append("")
        out.append("degraded (honest but coarser; not failures): "
                   + ", ".join(f"{k} ×{v}" for k, v in sorted(result.degradations.items())))
    out.append("")
    verdict = {0: "no violation found", 1: f"{len(result.failures)} distinct violation(s) found",
               3: "the summarizer itself failed; no violation found",
               4: "incomplete; no violation found in what was judged"}[result.exit_code]
    if result.exit_code == 1 and not result.failures:
        verdict = f"no violation found; {len(result.unclear)} unclear reading(s) fail the run (--unclear fail)"
    elif result.unclear:
        verdict += f"; {len(result.unclear)} unclear reading(s) for review"
    if result.failures and result.infra_errors:
        verdict += f"; the summarizer also failed in {len(result.infra_errors)} example(s)"
    out.append(f"{verdict} · reproduce the run: {reproduce_command(result)}")
    return "\n".join(out)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"


def _calls_line(result: RunResult) -> str:
    """What the summarizer cost: calls, re-asks, retries, tokens where known, latency per call."""
    stats = result.stats
    parts = [f"{stats.calls} calls ({stats.asked_again} of them re-asks with the cache bypassed)",
             f"{result.cache_hits} cache hits", f"{stats.retries} retries"]
    if stats.usage_known:
        parts.append(f"{stats.prompt_tokens:,} prompt + {stats.completion_tokens:,} completion tokens")
    parts.append(f"latency p50 {_seconds(stats.latency(0.5))}, p95 {_seconds(stats.latency(0.95))} per call")
    return "summarizer: " + " · ".join(parts)


def _determinism_line(result: RunResult) -> str:
    stats = result.stats
    if result.nondeterministic:
        return (f"! non-deterministic summarizer: {stats.answered_differently} of {stats.reasked} requests asked again "
                f"were answered differently; each failure below carries its rate over --trials "
                f"{result.config.trials}")
    return f"deterministic as far as seen: {stats.reasked} requests asked again got the same answers"


#: The JSON report's layout version: 2 added ``report_version``, ``oracles``, ``unjudged``, ``budget`` and
#: ``survival``; 3 added ``unclear`` (readings for review), ``unclear_mode`` and each violation's ``evidence``.
REPORT_VERSION = 3


def report_dict(result: RunResult) -> dict[str, Any]:
    """The JSON report (``--report-json``), from which the HTML and JUnit reports are also drawn."""
    return {
        "report_version": REPORT_VERSION,
        "summarizer": result.config.summarizer,
        "protocol": result.protocol,
        "seed": result.seed,
        "examples_run": result.examples_run,
        "budget": result.config.budget,
        "oracles": [o.id for o in select(only=result.config.only, skip=result.config.skip)],
        "unjudged": [{"oracle": oracle, "reason": reason} for oracle, reason in result.unjudged],
        "summarizer_calls": result.summarizer_calls,
        "first_failure_calls": result.first_failure_calls,
        "cache_hits": result.cache_hits,
        "calls": {
            "calls": result.stats.calls, "asked_again": result.stats.asked_again, "cache_hits": result.cache_hits,
            "retries": result.stats.retries, "usage_known": result.stats.usage_known,
            "prompt_tokens": result.stats.prompt_tokens, "completion_tokens": result.stats.completion_tokens,
            "latency_p50_s": result.stats.latency(0.5), "latency_p95_s": result.stats.latency(0.95),
        },
        "nondeterministic": {"detected": result.nondeterministic, "reasked": result.stats.reasked,
                             "answered_differently": result.stats.answered_differently},
        "cap_reached": result.cap_reached,
        "unclear_mode": result.config.unclear,
        "unclear": [unclear_dict(u) for u in result.unclear],
        "violations": [
            {
                "invariant": f.invariant,
                "severity": f.severity,
                "fact_kind": f.fact_kind,
                "fact_id": f.fact_id,
                "minimal_turns": len(f.transcript.turns),
                "budget": f.budget,
                "elided": [{"turn": index, "merged_turns": merged, "tokens": tokens}
                           for index, merged, tokens in f.elided],
                "original_turns": f.original_turns,
                "shrink_checks": f.shrink_checks,
                "shrink_summarizer_calls": f.shrink_calls,
                "shrink_stopped": f.shrink_stopped,
                "trials": None if f.trials is None else {"failed": f.trials[0], "of": f.trials[1]},
                "rate": f.rate,
                "round": f.round,
                "boundary": f.boundary,
                "boundaries": list(f.boundaries),
                "transcript": transcript_to_dict(f.transcript),
                "context": f.context,
                "detail": f.detail,
                "evidence": f.evidence,
                "expected": f.expected,
                "found": f.found,
                "reproduce": reproduce_command(result, only=f.invariant, transcript_file=result.reproduce_files.get(f.key)),
            }
            for f in result.failures
        ],
        "degradations": result.degradations,
        "infra_errors": [{"kind": e.kind, "message": e.message, "example": e.example, "output": e.output}
                         for e in result.infra_errors],
        "incomplete": result.incomplete,
        "cache_discarded": list(result.cache_discarded),
        "warnings": list(result.warnings),
        "exit_code": result.exit_code,
        "survival": result.survival.to_dict(),
    }


def write_json(result: RunResult, path: str | Path) -> None:
    write_atomic(Path(path), json.dumps(report_dict(result), indent=2, ensure_ascii=False) + "\n")


def audit_report(result: Audit, *, before: str, after: str, obligations: str,
                 unclear: str = "review") -> tuple[str, dict[str, Any]]:
    """The text and JSON report of one audited compaction: each obligation kept, or what was found."""
    case, verdict = result.case, result.verdict
    by_fact: dict[str | None, list] = {}
    for finding in verdict.findings:
        by_fact.setdefault(finding.fact_id, []).append(finding)
    events = sum(1 for f in case.transcript.facts if f.kind in (FactKind.RETRACTION, FactKind.SUPERSESSION))
    given = len(case.transcript.facts) - events
    lines = [f"audit of {printable(after)} against {given} obligations"
             + (f" (and the {events} event(s) that ended some)" if events else "")
             + f" ({printable(before)}: {len(case.transcript.turns)} messages; {printable(obligations)})"]
    for fact in case.transcript.facts:
        found = by_fact.get(fact.id, [])
        status = "live" if fact in case.live else f"ended ({fact.fate.status.value})"
        head = f"{fact.id} {fact.kind} {' | '.join(fact.literals)} [{status}]"
        if not found and fact.id in result.unjudged:
            lines.append(f"  ? {printable(head)}: not judged (none of the selected oracles judges it)")
            continue
        if not found:
            lines.append(f"  ✓ {printable(head)}")
            continue
        mark = "✗" if any(f.severity.value == "violate" for f in found) else (
            "?" if any(f.severity.value == "unclear" for f in found) else "~")
        lines.append(f"  {mark} {printable(head)}")
        for f in found:
            lines.append(f"      {f.invariant} ({f.severity.value}): {printable(_clip(f.detail, 200))}")
            if f.found:
                lines.append(f"        found: {printable(_clip(f.found, 200))}")
    for f in by_fact.get(None, []):
        lines.append(f"  ✗ {f.invariant} ({f.severity.value}): {printable(_clip(f.detail, 200))}")
    # As for a run: violations first (unclear readings too, when told to fail on them); otherwise an
    # obligation nobody judged makes the audit incomplete.
    code = 1 if verdict.violations or (verdict.unclear and unclear == "fail") else 4 if result.unjudged else 0
    lines.append(f"{len(verdict.violations)} violations, {len(verdict.unclear)} unclear (for review"
                 + ("; they fail this audit" if unclear == "fail" and verdict.unclear else "")
                 + f"), {len(verdict.degradations)} degradations, loss ratio {verdict.loss_ratio:.2f}"
                 + (f"; {len(result.unjudged)} obligation(s) not judged by the selected oracles" if result.unjudged else ""))
    document = {
        "schema_version": 1,
        "before": before, "after": after, "obligations": obligations,
        "kept": [f.id for f in case.transcript.facts if f.id not in by_fact and f.id not in result.unjudged],
        "unjudged": list(result.unjudged),
        "findings": [{"invariant": f.invariant, "severity": f.severity.value, "fact_id": f.fact_id,
                      "fact_kind": f.fact_kind, "detail": f.detail, "expected": f.expected, "found": f.found,
                      "evidence": f.evidence and str(f.evidence)}
                     for f in verdict.findings],
        "violations": len(verdict.violations),
        "unclear": len(verdict.unclear),
        "degradations": len(verdict.degradations),
        "loss_ratio": verdict.loss_ratio,
        "exit_code": code,
    }
    return "\n".join(lines), document
