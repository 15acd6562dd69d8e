"""The text report people read: one block per distinct failure, the unclear readings, and the verdict."""

from __future__ import annotations

import statistics
import unicodedata

from harness._app._outcome import ExitCode, Stop, StopReason
from harness._base._model import PartKind
from harness._app.fuzzing._fuzz import FuzzResult
from harness._app.reports._reproduce import reproduce_command
from harness._app.running._causes import DROPPED
from harness._app.running._results import Failure, RunResult, turn_stats

__all__ = ["render_text", "render_fuzz_text", "render_finding", "printable", "clip", "message_text"]


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters (escape codes) shown as ``\\x1b``, never sent raw."""
    return "".join(ch if ch in "\n\t" or unicodedata.category(ch)[0] != "C" else ch.encode("unicode_escape")
                   .decode("ascii") for ch in text)


def message_text(message: dict) -> str:
    """One chat message of a compacted context as a report shows it: its text, then its tool calls and the
    call it answers marked, so what a pairing finding is about is never hidden."""
    calls = "".join(f" [call {(c.get('function') or {}).get('name', c.get('name', '?'))} id={c.get('id')}]"
                    for c in message.get("tool_calls") or () if isinstance(c, dict))
    answer = f" [result for {message['tool_call_id']}]" if message.get("tool_call_id") else ""
    text = message.get("content") or ""
    if not isinstance(text, str):  # content parts
        text = " ".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in text)
    return (text + calls + answer).strip()


#: What a messages summarizer is given in each provider dialect (said when one fails on every example).
_DIALECT_SHAPES = {"anthropic": 'an Anthropic Messages body {"system", "messages"}',
                   "openai-responses": "a list of OpenAI Responses input items"}

#: Parts a transcript line shows by kind alone.
_UNNAMED = frozenset({PartKind.REASONING, PartKind.COMPACTION})


def turn_marks(turn) -> str:
    """What a transcript line shows after a turn's text: its calls, the call it answers and its provider parts,
    named where a finding may name them (an attachment, an approval, a server-side call; reasoning and compaction
    items only by kind, their ids say nothing to a reader)."""
    calls = "".join(f" [call {c.name} id={c.id}]" for c in turn.tool_calls)
    answer = f" [result for {turn.tool_call_id}]" if turn.tool_call_id else ""
    parts = "".join(f" [{p.kind.value}]" if p.kind in _UNNAMED or not p.id else f" [{p.kind.value} {p.id}]"
                    for p in turn.parts)
    return f"{calls}{answer}{parts}"


def clip(text: str, limit: int = 110) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _stopped(stop: Stop, shrink_calls: int | None) -> str:
    """Why shrinking stopped, as a reader wants it: a spent allowance of calls is "shrunk within N calls"."""
    if stop.reason is StopReason.SHRINK_CALLS:
        return f"shrunk within {shrink_calls} calls (--shrink-calls)"
    return f"shrinking stopped early ({stop})"


def _failure_block(result: RunResult, f: Failure, show_context: bool = False) -> list[str]:
    t = f.transcript
    where = f"compaction {f.round + 1}{' (forced by a planned cut)' if f.forced else ''}, after turn {f.boundary}" \
        if f.round is not None else "across the session"
    lines = [
        f"✗ {f.invariant} — {f.fact_kind or 'structure'}{f', {f.outcome}' if f.outcome else ''} ({f.severity}; {where})",
        f"  {f.detail}",
    ]
    if f.cause == DROPPED:
        lines.append("  root cause: the compactor dropped it (the turn stating it is gone, and nothing it wrote "
                     "carries it); every such loss in the run is this one finding")
    lines += [f"  also broken: {invariant}: {clip(detail, 150)}" for invariant, detail in f.also]
    if f.also_seen:
        lines.append(f"  also seen with it (not on the minimal transcript): {', '.join(f.also_seen)}")
    if f.also_kinds:
        lines.append(f"  the same loss seen on other kinds of fact too: {', '.join(f.also_kinds)}")
    if f.invariant == "deterministic" and f.expected is not None and f.found is not None:
        lines.extend(_side_by_side(f.expected, f.found))
    else:
        if f.expected:
            lines.append(f"  expected: {clip(f.expected)}")
        if f.found:
            lines.append(f"  context had: {clip(f.found)}")
        elif f.outcome == "dropped":
            lines.append("  context had: nothing that stands in for it")
    at_budget = "" if f.budget == result.config.judging.budget else \
        f", fails at budget {f.budget} (the run's {result.config.judging.budget}, lowered while shrinking; at the run's budget it needs more filler)"
    lines.append(f"  minimal transcript: {len(t.turns)} turns (from {f.original_turns}), {len(t.facts)} facts{at_budget}, "
                 f"shrunk in {f.shrink_checks} checks, {f.shrink_calls} new summarizer calls"
                 + (f" ({f.spent_tokens:,} tokens with its trials)" if f.spent_tokens else ""))
    if f.kept_window is not None:
        lines.append(f"  at the compactor's own floor: it kept {f.kept_window} messages verbatim and drops nothing "
                     f"from fewer, so no transcript much shorter can show this")
    if f.shrink_stopped:
        allowance = f.shrink_allowance or result.config.limits.shrink_calls
        lines.append(f"  {_stopped(f.shrink_stopped, allowance)}: the smallest failing transcript found so far")
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
        lines.append(f"    [{i}] {turn.role.value}: {clip(turn.text, 90)}{turn_marks(turn)}")
    if len(t.turns) > 12:
        lines.append(f"    … {len(t.turns) - 12} more turns")
    for fact in t.facts:
        lines.append(f"    ledger: {fact.id} {fact.kind} {' | '.join(fact.literals)} "
                     f"(turn {fact.origin_turn}, {fact.fate.status.value})")
    if f.context:
        messages = [message_text(m) for m in f.context["messages"]]
        if show_context:
            lines.append(f"  summarizer returned ({len(messages)} messages):")
            lines.extend(f"    | {line}" for m in messages for line in m.splitlines() or [""])
        else:
            summary = " / ".join(messages)
            lines.append(f"  summarizer returned: {clip(summary, 200) if summary.strip() else '(no text at all)'}"
                         + ("  (--show-context shows it whole)" if len(summary) > 200 else ""))
    file = result.reproduce_files.get(f.signature)
    lines.append(f"  reproduce: {reproduce_command(result, only=','.join(f.invariants), transcript_file=file)}")
    saved = result.corpus_files.get(f.signature)
    if saved is not None:
        lines.append(f"  corpus entry: {saved[0]} ({'new' if saved[1] else 'already saved'})")
    return lines


def render_finding(result: RunResult, f: Failure, *, show_context: bool = False) -> str:
    """One finding as the text report shows it: what broke, the minimal transcript, what came back, how to
    reproduce it (the pytest plugin's item for an invariant fails with these)."""
    return "\n".join(_failure_block(result, f, show_context))


def _findings_table(failures: tuple[Failure, ...]) -> list[str]:
    """What the details below are about, one row per root cause: its kind, and every invariant it breaks."""
    broken = {invariant for f in failures for invariant in f.invariants}
    lines = [f"findings: {len(failures)} root cause(s), breaking {len(broken)} invariant(s)"]
    kinds = [(f.fact_kind or "structure") + (f" (+{len(f.also_kinds)})" if f.also_kinds else "")
             + (f" {DROPPED}" if f.cause == DROPPED else "") for f in failures]
    width = max(map(len, kinds))
    for n, (f, kind) in enumerate(zip(failures, kinds), 1):
        seen = f" (+ {', '.join(f.also_seen)} where it was seen)" if f.also_seen else ""
        lines.append(f"  {n:>2}. {kind:{width}}  {', '.join(f.invariants)}{seen} · "
                     f"{len(f.transcript.turns)} turns")
    return lines


def _unclear_block(result: RunResult) -> list[str]:
    """The readings the oracles could not settle: each with the obligation, the sentence and why; a person
    decides. They are not violations (unless the run said ``--unclear fail``) and were not shrunk."""
    fails = result.config.judging.unclear == "fail"
    lines = [f"? unclear readings ({len(result.unclear)}): the oracles could not settle these either way; "
             + ("they fail this run (--unclear fail)" if fails else "for review, not violations (--unclear fail makes them fail)")]
    for u in result.unclear:
        where = f"compaction {u.round + 1}, after turn {u.boundary}" if u.round is not None else "across the session"
        seen = f"seen {u.count} times, first" if u.count > 1 else "seen"
        lines.append(f"  ? {u.invariant} — {u.fact_kind or 'structure'} ({u.why or 'unclear'}; {seen} in example "
                     f"{u.example}, {where})")
        lines.append(f"    {clip(u.detail, 200)}")
        if u.obligation:
            lines.append(f"    obligation: {clip(u.obligation)}")
        if u.sentence:
            lines.append(f"    sentence: {clip(u.sentence, 200)}")
    return lines


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
        out.append(f"  {clip(left, width - 1):<{width}} {mark} {clip(right, width - 1)}")
    return out


def render_text(result: RunResult, *, show_context: bool = False) -> str:
    """The report people read; everything from the summarizer is made printable first."""
    return printable(_render(result, show_context=show_context))


def render_fuzz_text(fuzz: FuzzResult, *, show_context: bool = False) -> str:
    """The ``fuzz`` report: what the fuzzing did, then every failure as ``run`` reports it."""
    s, result = fuzz.stats, fuzz.run
    first = "no violation seen" if s.first_failure_calls is None else \
        f"first violation after {s.first_failure_calls:,} summarizer calls ({s.first_failure_executions:,} " \
        f"example{'' if s.first_failure_executions == 1 else 's'})"
    head = [f"compaction-harness fuzz: {result.config.calling.summarizer} ({_shape(result)}) · seed {result.seed} · "
            f"{s.executions:,} executions in {s.seconds:.0f} s ({s.per_second:,.0f}/s), {s.examples:,} judged as "
            f"transcripts",
            f"coverage of the summarizer's code: {s.coverage} edges, {s.features} features; {s.inputs} inputs kept "
            f"in {s.directory}",
            f"fuzzing: {s.calls:,} summarizer calls (cache hits not counted); {first}"
            + (f"; fuzzing process restarted {s.restarts} time(s)" if s.restarts else "")]
    # The calls after fuzzing are shrinking's; a fuzzing session is reproduced by each failure's own file.
    return printable(_render(result, head=head, calls="shrinking and confirming", show_context=show_context,
                             reproduce=" · reproduce: each failure's line" if result.failures else ""))


def _shape(result: RunResult) -> str:
    """The protocol the summarizer was called with, and the dialect when it is not chat."""
    dialect = result.config.judging.dialect
    return result.protocol if dialect == "chat" else f"{result.protocol}, {dialect}"


def _render(result: RunResult, *, head: list[str] | None = None, calls: str = "summarizer", show_context: bool = False,
            reproduce: str | None = None) -> str:
    c = result.config
    out = list(head) if head else [
        f"compaction-harness: {c.calling.summarizer} ({_shape(result)}) · seed {result.seed} · "
        + (f"shard {c.generation.shard[0]}/{c.generation.shard[1]} · " if c.generation.shard else "")
        + f"{result.examples_run} examples ({turn_stats(result.turns)})"
        + (f" · {result.replayed} saved failure(s) judged first" if result.replayed else ""),
    ]
    if head is None or result.summarizer_calls:
        out.append(_calls_line(result, calls))
    if result.sessions.tokens:
        out.append(_sessions_line(result))
    if result.background:
        out.append(_background_line(result))
    if result.stats.asked_again:
        out.append(_determinism_line(result))
    if result.failures:
        out.append("")
        out.extend(_findings_table(result.failures))
    for f in result.failures:
        out.append("")
        out.extend(_failure_block(result, f, show_context))
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
            if kind == "exception" and len(errors) >= result.examples_run and result.protocol == "messages" \
                    and result.config.judging.dialect in _DIALECT_SHAPES:
                dialect = result.config.judging.dialect
                out.append(f"  (every example: in the {dialect} dialect a messages summarizer is given "
                           f"{_DIALECT_SHAPES[dialect]} and a budget, not chat messages; see the dialects reference)")
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
        out.append(f"! incomplete: {result.incomplete} after judging {result.examples_run} of {c.generation.examples} "
                   f"example(s)" if c.transcript_file is None else f"! incomplete: {result.incomplete}")
    for oracle, why in result.unjudged:  # a run that asks nothing twice must say so, never look like a pass
        if oracle == "deterministic":  # (the JUnit report skips every unjudged oracle)
            out.append("")
            out.append(f"! {oracle} was not judged: {why}")
    for warning in result.warnings:
        out.append("")
        out.append(f"! {warning}")
    if result.degradations:
        out.append("")
        out.append("degraded (honest but coarser, or a loss a correct compactor may make; not failures): "
                   + ", ".join(f"{k} ×{v}" for k, v in sorted(result.degradations.items())))
        first = {}
        for degradation in result.degraded:
            first.setdefault(degradation.invariant, degradation)
        out.extend(f"  e.g. {k}: {clip(first[k].detail, 140)}" for k in sorted(first))
    out.append("")
    verdict = {ExitCode.OK: "no violation found",
               ExitCode.VIOLATIONS: f"{len(result.failures)} finding(s) found, one per root cause",
               ExitCode.SUMMARIZER: "the summarizer itself failed; no violation found",
               ExitCode.INCOMPLETE: "incomplete; no violation found in what was judged"}[result.exit_code]
    if result.exit_code == ExitCode.VIOLATIONS and not result.failures:
        verdict = f"no violation found; {len(result.unclear)} unclear reading(s) fail the run (--unclear fail)"
    elif result.unclear:
        verdict += f"; {len(result.unclear)} unclear reading(s) for review"
    if result.failures and result.infra_errors:
        verdict += f"; the summarizer also failed in {len(result.infra_errors)} example(s)"
    out.append(verdict + (f" · reproduce the run: {reproduce_command(result)}" if reproduce is None else reproduce))
    return "\n".join(out)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"


def _calls_line(result: RunResult, label: str) -> str:
    """What the summarizer cost: calls, re-asks, retries, tokens where known, latency per call."""
    stats = result.stats
    parts = [f"{stats.calls} calls ({stats.asked_again} of them re-asks with the cache bypassed)",
             f"{result.cache_hits} cache hits", f"{stats.retries} retries"]
    if stats.usage_known:
        parts.append(f"{stats.prompt_tokens:,} prompt + {stats.completion_tokens:,} completion tokens")
    elif stats.handed_tokens:
        parts.append(f"{stats.handed_tokens:,} tokens of context handed over")
    parts.append(f"latency p50 {_seconds(stats.latency(0.5))}, p95 {_seconds(stats.latency(0.95))} per call")
    return f"{label}: " + " · ".join(parts)


def _sessions_line(result: RunResult) -> str:
    """How big the sessions were and what made them compact: the trigger, or a planned cut (forced)."""
    s, judging = result.sessions, result.config.judging
    fill = statistics.median(s.requests) / judging.budget if s.requests else 0.0
    parts = [f"{statistics.median(s.tokens):,.0f} tokens median ({max(s.tokens):,} max)",
             f"{sum(s.rounds):,} compactions, {statistics.median(s.rounds):g} per session median: "
             f"{s.by_trigger:,} fired by the trigger at {judging.trigger:.0%} of {judging.budget:,} tokens, "
             f"{s.planned:,} forced by planned cuts" + ("" if judging.planned_cuts else " (--no-planned-cuts)"),
             f"contexts {fill:.0%} of the budget median when compacted"]
    if s.tightened or not judging.tighten:
        parts.append(f"budget lowered in {s.tightened} session(s)" if judging.tighten else "one budget throughout "
                                                                                          "(--no-tighten)")
    return "sessions: " + " · ".join(parts)


def _background_line(result: RunResult) -> str:
    """The team's logs the filler came from: how many, read as what, and what no turn could carry."""
    bg = result.background
    formats = ", ".join(f"{name} {count}" for name, count in bg["formats"].items())
    left = ", ".join(f"{count} {what}" for what, count in bg["left_out"].items())
    return (f"background: {result.config.generation.background} ({bg['files']} file(s), {bg['sessions']} session(s): "
            f"{formats})" + (f" · left out, having no place in a turn: {left}" if left else ""))


def _determinism_line(result: RunResult) -> str:
    stats = result.stats
    if result.nondeterministic:
        return (f"! non-deterministic summarizer: {stats.answered_differently} of {stats.reasked} requests asked again "
                f"were answered differently; each failure below carries its rate over --trials "
                f"{result.config.limits.trials}")
    return f"deterministic as far as seen: {stats.reasked} requests asked again got the same answers"


