"""Oracles judged over a whole session of repeated compactions."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

from harness._base._kinds import kind_def
from harness._base._model import Fact, FactKind, Status, live_facts
from harness._base._result_codec import result_to_dict
from harness._base._tokens import message_tokens
from harness._base._wholetoken import has_token
from harness.oracles._context import Context
from harness.oracles._units import call_text
from harness.oracles._core import Evidence, Finding, SessionCase, Severity, oracle

MIN_ROUNDS = 4
GROWTH_FACTOR = 2.0
# A summary under this share of the budget crowds nothing out, however fast it grows from a tiny start.
MIN_SHARE = 0.1
# A run of growth measured from a summary this small (a forced compaction of a turn or two) proves nothing.
MIN_START_SHARE = 0.05
# Growth is settled once the summary takes this share of the budget without having stopped: with compaction
# at 80%, a summary past it leaves new work less than a quarter of the room. Below it, a summary that
# stops growing filled a room of its own (a compactor capped at a fixed share), and is no finding.
CEILING_SHARE = 0.6
PLATEAU = 2  # rounds without growing...
PLATEAU_SLACK = 0.05  # ...by more than this share, after a run of growth: the summary stopped


def growth_reason(sizes: list[int], live_counts: list[int], *, min_rounds: int = MIN_ROUNDS,
                  factor: float = GROWTH_FACTOR, floor: float = 0, start_floor: float = 0) -> str | None:
    """Why the summary grew without bound, or None (``growth_round`` says where)."""
    found = growth_round(sizes, live_counts, min_rounds=min_rounds, factor=factor, floor=floor, start_floor=start_floor)
    return found[1] if found else None


def growth_round(sizes: list[int], live_counts: list[int], *, min_rounds: int = MIN_ROUNDS,
                 factor: float = GROWTH_FACTOR, floor: float = 0, start_floor: float = 0,
                 ceiling: float = math.inf) -> tuple[int, str, bool] | None:
    """The round by which the summary had grown without bound, why, and whether that is settled; or None.

    A run of growth counts when the summary grew in each of at least ``min_rounds`` consecutive
    compactions and ended ``factor`` times its size at the start of that run, more than the growth of
    the live ledger explains, and is by then at least ``floor`` tokens; the run must start from at least
    ``start_floor`` tokens. It is settled (a violation, at the round that shows it) once the summary
    reaches ``ceiling`` tokens without having stopped growing first. A summary that then stops growing
    (``PLATEAU`` rounds without growing by more than ``PLATEAU_SLACK``) below the ceiling filled a fixed
    room and is no finding; one the session ends on while still growing below it is unsettled.
    """
    run_start, r = 0, 1
    while r < len(sizes):
        if sizes[r] <= sizes[r - 1]:
            run_start, r = r, r + 1
            continue
        # Growth is measured from the first round of the run that is big enough to matter.
        base = next((i for i in range(run_start, r) if sizes[i] >= start_floor), None)
        if base is None or r - base < min_rounds:
            r += 1
            continue
        growth = sizes[r] / max(1, sizes[base])
        ledger = max(1, live_counts[r]) / max(1, live_counts[base])
        if growth < factor * ledger or sizes[r] < floor:
            r += 1
            continue
        reason = (f"the summary grew in {r - base} consecutive compactions, {sizes[base]} -> {sizes[r]} tokens "
                  f"({growth:.1f}x) while live obligations went {live_counts[base]} -> {live_counts[r]}")
        peak, flat = sizes[r], 0
        for v in range(r, len(sizes)):
            if sizes[v] >= ceiling:
                more = "" if v == r else f", and on to {sizes[v]} tokens by compaction {v + 1} without stopping"
                return v, reason + more, True
            flat = flat + 1 if v > r and sizes[v] <= peak * (1 + PLATEAU_SLACK) else 0
            peak = max(peak, sizes[v])
            if flat >= PLATEAU:
                break  # it filled a fixed room: bounded
        else:
            return r, reason + "; the session ended before it showed whether it stops", False
        run_start, r = v, v + 1
    return None


@oracle("summary-growth", reference="field reports", scope="session")
def summary_growth(case: SessionCase) -> Iterator[Finding]:
    """Across repeated compactions the summary stays bounded instead of growing each round."""
    # The summary is what the compactor wrote: turns it kept verbatim from the source are the source's.
    verbatim = {(t.role, t.text) for t in case.transcript.turns}
    sizes = [sum(message_tokens(t, case.count_tokens) for t in result.messages if (t.role, t.text) not in verbatim)
             for _, result in case.rounds]
    live = [len(live_facts(case.transcript, boundary)) for boundary, _ in case.rounds]
    found = growth_round(sizes, live, floor=MIN_SHARE * case.budget, start_floor=MIN_START_SHARE * case.budget,
                         ceiling=CEILING_SHARE * case.budget)
    if found:
        # The round the growth was settled by: the rounds after it cannot undo it (shrinking cuts them).
        r, reason, settled = found
        expected = f"no {GROWTH_FACTOR:g}x growth over {MIN_ROUNDS} rounds up to {CEILING_SHARE:.0%} of the budget"
        if settled:
            yield Finding("summary-growth", Severity.VIOLATE, reason, expected=expected, found=f"{sizes[:r + 1]}",
                          round=r, evidence=Evidence.SHAPE)
        else:
            yield Finding("summary-growth", Severity.UNCLEAR, reason, expected=expected, found=f"{sizes}", round=r,
                          evidence=Evidence.UNSETTLED)


def _carries(ctx: Context, fact: Fact) -> bool:
    """Every literal of ``fact`` is in the context as a whole token (text, kept call or ledger entry)."""
    return all(ctx.mentions(lit) for lit in fact.literals)


def _obligation(fact: Fact) -> bool:
    """A fact some oracle holds the context to (a retraction binds nothing; a team's kind with no judge
    says nothing about what keeping it means)."""
    return bool(kind_def(fact.kind).judges)


@oracle("ledger-monotone", reference="004", scope="session")
def ledger_monotone(case: SessionCase) -> Iterator[Finding]:
    """No live obligation a compaction carried is lost by a later one without a retraction in the source."""
    carried = _carried_by_round(case)
    lost: set[str] = set()
    for r in range(1, len(case.rounds)):
        before, now = case.rounds[r - 1][0], case.rounds[r][0]
        for fact in live_facts(case.transcript, now):
            if fact.id in lost or not fact.is_live_at(before) or not _obligation(fact):
                continue
            if fact.id not in carried[r - 1] or fact.id in carried[r]:
                continue
            lost.add(fact.id)
            back = next((k for k in range(r + 1, len(case.rounds))
                         if fact.is_live_at(case.rounds[k][0]) and fact.id in carried[k]), None)
            later = f"; it came back in compaction {back + 1}" if back is not None else ""
            yield Finding("ledger-monotone", Severity.VIOLATE,
                          f"compaction {r} carried {fact.kind} {' '.join(fact.literals)}, compaction {r + 1} lost it, "
                          f"and the source never ended it{later}", fact.id, str(fact.kind),
                          expected=" ".join(fact.literals), round=r, evidence=Evidence.ABSENT)


def _carried_by_round(case: SessionCase) -> list[frozenset[str]]:
    """Per round, the obligations live then or at the next round that its context carries: each round's context
    read once and let go (a session of long contexts held all at once would take gigabytes)."""
    boundaries = [boundary for boundary, _ in case.rounds]
    out = []
    for r, (_, result) in enumerate(case.rounds):
        ctx = Context(result, case.rules)
        near = boundaries[r:r + 2]
        out.append(frozenset(f.id for f in case.transcript.facts
                             if any(f.is_live_at(b) for b in near) and _obligation(f) and _carries(ctx, f)))
    return out


def _operative(case: SessionCase, turn: int) -> int | None:
    """The last round that compacted before ``turn``: its result is the context the agent acts on there."""
    prior = [r for r, (boundary, _) in enumerate(case.rounds) if boundary <= turn]
    return prior[-1] if prior else None


def _in_turns(turns, literal: str) -> bool:
    return any(has_token(t.text, literal) or any(literal == c.id or has_token(call_text(c), literal)
                                                 for c in t.tool_calls) for t in turns)


@oracle("effect-window", reference="002", scope="session")
def effect_window(case: SessionCase) -> Iterator[Finding]:
    """No irreversible effect happens while the operative context lacks a gating token that governs it."""
    for effect in case.transcript.effects:
        r = _operative(case, effect.turn)
        if r is None:
            continue  # before any compaction the agent still sees the source itself
        boundary, result = case.rounds[r]
        ctx = Context(result, case.rules)
        since = case.transcript.turns[boundary:effect.turn]
        for fact in (case.transcript.fact(f) for f in effect.governed_by):
            if not fact.is_live_at(effect.turn):
                continue
            missing = [lit for lit in fact.literals if not ctx.mentions(lit) and not _in_turns(since, lit)]
            if missing:
                yield Finding("effect-window", Severity.VIOLATE,
                              f"{effect.action} ({effect.call_id}) at turn {effect.turn} ran while compaction {r + 1}'s "
                              f"context was operative, and that context had lost the {fact.kind} governing it: "
                              f"missing {', '.join(missing)}", fact.id, str(fact.kind),
                              expected=" ".join(fact.literals), call_id=effect.call_id, round=r, evidence=Evidence.ABSENT)
                break


def _handle_in(result, call_id: str) -> bool:
    """Carried as a handle: a structured tool call, or a structured ledger entry of an in-flight call."""
    return any(c.id == call_id for t in result.messages for c in t.tool_calls) or any(
        e.kind == FactKind.IN_FLIGHT_CALL.value and call_id in e.literals for e in result.ledger or ())


@oracle("handle-carried", reference="000", scope="session")
def handle_carried(case: SessionCase) -> Iterator[Finding]:
    """A call in flight across compactions is carried as a handle, summary to summary, never as prose alone."""
    for fact in case.transcript.facts:
        if fact.kind is not FactKind.IN_FLIGHT_CALL or fact.detail("mode") == "background":
            continue  # a background job's outcome is fetched by its handle as text: handle-retained judges it
        call_id = fact.literals[0]
        during = [r for r, (boundary, _) in enumerate(case.rounds) if fact.is_live_at(boundary)]
        arrives = fact.fate.turn if fact.fate.status is Status.RESOLVED else None
        if len(during) < 2 and not (during and arrives is not None):
            continue  # compacted once and never answered: handle-retained judges it
        for r in during:
            result = case.rounds[r][1]
            if _handle_in(result, call_id):
                continue
            prose = has_token(result.summary_text, call_id)
            how = ("names it only in prose, so its result cannot be re-attached (unless the runtime keeps "
                   "pending calls itself)" if prose else "lost its handle")
            when = (f"its result arrives at turn {arrives}" if arrives is not None
                    else f"it is still in flight after {len(during)} compactions")
            at = (f"compaction {during[0] + 1}" if len(during) == 1
                  else f"compactions {during[0] + 1}..{during[-1] + 1}")
            yield Finding("handle-carried", Severity.VIOLATE,
                          f"call {call_id} was in flight at {at} and "
                          f"{when}, but compaction {r + 1} {how}", fact.id, str(fact.kind),
                          expected=f"{call_id} as a tool call or ledger entry", found=call_id if prose else None,
                          call_id=call_id, round=r, evidence=Evidence.SHAPE)
            break


def _shown(result) -> str:
    """A result as text for a side-by-side: its messages, then each side channel."""
    data = result_to_dict(result)
    lines = [f"{m['role']}: {m.get('content') or ''}" + "".join(
        f" [{c['id']} {c['function']['name']}({c['function']['arguments']})]" for c in m.get("tool_calls") or [])
        for m in data["messages"]]
    lines += [f"{key}: {json.dumps(data[key], ensure_ascii=False, sort_keys=True)}"
              for key in ("ledger", "self_report", "marker", "journal", "verified") if key in data]
    return "\n".join(lines)


def _clipped(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


@oracle("deterministic", reference="001", scope="session")
def deterministic(case: SessionCase) -> Iterator[Finding]:
    """The same request asked twice (cache bypassed, worker restarted) gets the same result."""
    for r, again in enumerate(case.again):
        if again is None or r >= len(case.rounds):
            continue
        first = case.rounds[r][1]
        if result_to_dict(first) == result_to_dict(again):
            continue
        a, b = _shown(first).splitlines(), _shown(again).splitlines()
        n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        at = lambda lines: _clipped(lines[n]) if n < len(lines) else "(nothing)"  # noqa: E731
        note = " (the summarizer is marked as allowed to vary: a note)" if case.may_vary else ""
        yield Finding("deterministic", Severity.DEGRADE if case.may_vary else Severity.VIOLATE,
                      f"compaction {r + 1} asked again gave another result{note}; first difference, line {n + 1}: "
                      f"{at(a)!r} then {at(b)!r}", expected=_clipped("\n".join(a[n:])), found=_clipped("\n".join(b[n:])),
                      round=r, evidence=Evidence.SHAPE)
        return
