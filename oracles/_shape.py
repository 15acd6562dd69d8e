"""Oracles on the shape of the result: message pairing, budgets, and the self-report."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

from harness._base._model import FactKind, Role, Turn
from harness._base._protocol import LedgerEntry
from harness._base._tokens import context_tokens, count_tokens
from harness._base._wholetoken import has_token, token_spans
from harness.oracles._lexicon import identifier_tokens, nearest
from harness.oracles._units import line_at
from harness.oracles._core import Case, Evidence, Finding, Severity, oracle


@oracle("tool-pairing", reference="field reports")
def tool_pairing(case: Case) -> Iterator[Finding]:
    """A kept tool result keeps its call, and a kept call keeps its result (unless still in flight)."""
    answered_in_window = {t.tool_call_id for t in case.window if t.role is Role.TOOL}
    # A result whose call was never in the source is the source's own defect, not the compactor's.
    called_in_window = {c.id for t in case.window for c in t.tool_calls}
    given_calls = {c.id for t in case.given for c in t.tool_calls}
    seen_calls: set[str] = set()
    results = {t.tool_call_id for t in case.result.messages if t.role is Role.TOOL}
    for turn in case.result.messages:
        for call in turn.tool_calls:
            seen_calls.add(call.id)
            if call.id in answered_in_window and call.id not in results:
                yield Finding("tool-pairing", Severity.VIOLATE,
                              f"the context keeps call {call.id} ({call.name}) but drops its result; chat APIs reject this",
                              expected=f"result for {call.id}", found=None, call_id=call.id, evidence=Evidence.SHAPE)
        if turn.role is Role.TOOL and turn.tool_call_id not in seen_calls and turn.tool_call_id in called_in_window:
            # In a session, a result handed over without its call came after an earlier compaction dropped the
            # call while it was in flight: that is where the pair was broken.
            dropped = case.request is not None and turn.tool_call_id not in given_calls
            why = " (an earlier compaction dropped the call while it was in flight)" if dropped else ""
            yield Finding("tool-pairing", Severity.VIOLATE,
                          f"the context keeps a result for {turn.tool_call_id} without the call before it{why}; "
                          "chat APIs reject this",
                          expected=f"call {turn.tool_call_id} before its result", found=turn.text[:80],
                          call_id=turn.tool_call_id, evidence=Evidence.SHAPE)


@oracle("budget-respected", reference="all")
def budget_respected(case: Case) -> Iterator[Finding]:
    """The result fits the token budget it was given; an overrun names what it spent the budget on.

    A budget smaller than the least a correct result holds (``_least_to_carry``) cannot be met: a result
    no larger than that least is a degradation, not a violation."""
    used = case.context_tokens()
    if used <= case.budget:
        return
    least = _least_to_carry(case)
    if used <= least:
        yield Finding("budget-respected", Severity.DEGRADE,
                      f"the context takes {used} tokens, over the budget of {case.budget}, but no correct result "
                      f"fits it: the live obligations written verbatim and the calls still in flight take {least}",
                      expected=f"<= {case.budget} tokens", found=f"{used} tokens", evidence=Evidence.SHAPE)
        return
    spent, example = _spent_on_nothing_live(case)
    detail = f"the context takes {used} tokens; the budget was {case.budget}"
    if least > case.budget:
        detail += f" (and the least a correct result holds, {least})"
    if spent:
        detail += f"; {spent} of them are lines that carry no live obligation, such as {example!r}"
    yield Finding("budget-respected", Severity.VIOLATE, detail, expected=f"<= {max(case.budget, least)} tokens",
                  found=example or f"{used} tokens", evidence=Evidence.SHAPE)


def _least_to_carry(case: Case) -> int:
    """The tokens of the least a correct result holds: each live obligation as a verbatim ledger entry, and
    the calls in flight at the end of what it was given (no in-flight tag covering them) re-attached in
    one assistant message, as a provider needs them before their results arrive."""
    tagged = {lit for f in case.live if f.kind is FactKind.IN_FLIGHT_CALL for lit in f.literals}
    answered = {t.tool_call_id for t in case.given if t.role is Role.TOOL}
    calls = {c.id: c for t in case.given for c in t.tool_calls if c.id not in answered and c.id not in tagged}
    handles = (Turn(Role.ASSISTANT, "", tool_calls=tuple(calls.values())),) if calls else ()
    return context_tokens(handles, tuple(LedgerEntry.verbatim(f) for f in case.live), case.count_tokens)


def _spent_on_nothing_live(case: Case) -> tuple[int, str | None]:
    """Tokens of context lines naming no live obligation, and the line to show for them: a near
    miss of a live literal if one was kept (the decoy a surface-level summarizer keeps: a token with the
    literal's punctuation, ``_marks``), else the longest such line.

    What each message holds is read once (``_idle_reading``, by its text and the transcript's literals),
    so a context that keeps what the last one had costs what its new messages cost, not its length."""
    live = frozenset(lit for f in case.live for lit in f.literals if not lit.isdigit())
    ratio, counter = case.context.rules.near_miss_ratio, case.count_tokens
    every = frozenset(lit for lit in case.context.literals if not lit.isdigit()) | live
    readings = []  # (idle text, its reading): a message whose lines hold a live literal is read without them
    for part in case.context.parts:
        reading = _idle_reading(part, every, ratio, counter)
        if reading.holds & live:
            idle = _without_lines(part, reading.holds & live)
            reading = _idle_reading(idle, every, ratio, counter)
        else:
            idle = part
        if reading.tokens:
            readings.append((idle, reading))
    if not readings:
        return 0, None
    spent = sum(reading.tokens for _, reading in readings)
    for literal in sorted(live):
        found = [near for _, reading in readings for lit, near in reading.near if lit == literal]
        if found:
            _, near = max(found, key=lambda hit: (hit[0], _before(hit[1])))
            part = next(idle for idle, _ in readings if near in idle)
            start = part.index(near)
            left, right = line_at(part, start, start + len(near))
            return spent, _clip(part[left:right].strip())
    return spent, _clip(max((reading.longest for _, reading in readings), key=len))


def _before(token: str) -> tuple[int, ...]:
    """A key under which the first token in sorted order is the largest (``max`` picks it among equals)."""
    return tuple(-ord(ch) for ch in token) + (float("inf"),)


@dataclass(frozen=True, slots=True)
class _IdleReading:
    """What one message's text spends and holds, for the budget oracle: its tokens (blank text: none), its
    longest line, the literals it states as whole tokens, and its nearest miss of each other literal."""

    tokens: int
    longest: str
    holds: frozenset[str]
    near: tuple[tuple[str, tuple[float, str]], ...]


@functools.lru_cache(maxsize=1 << 16)
def _idle_reading(text: str, literals: frozenset[str], ratio: float, counter) -> _IdleReading:
    if not text.strip():
        return _IdleReading(0, "", frozenset(), ())
    holds = frozenset(lit for lit in literals if lit in text and has_token(text, lit))
    tokens = identifier_tokens(text)
    marked: dict[frozenset[str], list[str]] = {}
    for token in tokens:
        if not token.isalnum():  # a plain word has no marks: only a literal without any could be near it
            marked.setdefault(_marks(token), []).append(token)
    near = []
    for lit in sorted(literals - holds):  # a near miss keeps the literal's shape: every mark of it
        wanted = _marks(lit)
        shaped = tokens if not wanted else frozenset(
            t for marks, group in marked.items() if wanted <= marks for t in group)
        if shaped and (hit := nearest(lit, shaped, ratio)) is not None:
            near.append((lit, hit))
    longest = max((line.strip() for line in text.split("\n")), key=len)
    return _IdleReading(_tokens(text, counter), longest, holds, tuple(near))


_LETTERS_AND_DIGITS = {ord(ch): None for ch in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}


@functools.lru_cache(maxsize=1 << 16)
def _marks(token: str) -> frozenset[str]:
    """The punctuation of a token (``/``, ``:``, ``-``, ``_``, ``.``): what a near miss of it keeps."""
    return frozenset(token.translate(_LETTERS_AND_DIGITS))


def _without_lines(text: str, literals: frozenset[str]) -> str:
    """``text`` without its lines that hold one of ``literals`` as a whole token."""
    cut = sorted({line_at(text, a, b) for lit in literals for a, b in token_spans(text, lit)})
    kept, at = [], 0
    for a, b in cut:
        kept.append(text[at:a])
        at = b + 1
    kept.append(text[at:])
    return "".join(kept)


def _tokens(text: str, counter) -> int:
    """The tokens of ``text``'s lines; the default counter is additive over lines, so it counts once."""
    if counter is count_tokens:
        return count_tokens(text)
    return sum(counter(line) for line in text.split("\n") if line.strip())


def _clip(line: str, limit: int = 160) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


@oracle("ledger-budget", reference="004", severity=Severity.DEGRADE)
def ledger_budget(case: Case) -> Iterator[Finding]:
    """A structured ledger stays within about 12% of the budget (degrade when over)."""
    if not case.result.ledger:
        return
    used = case.count_tokens("\n".join(e.render() for e in case.result.ledger))
    cap = case.rules.ledger_budget_share * case.budget
    if used > cap:
        yield Finding("ledger-budget", Severity.DEGRADE,
                      f"the ledger takes {used} tokens, over {case.rules.ledger_budget_share:.0%} of the budget ({cap:.0f})",
                      expected=f"<= {cap:.0f} tokens", found=f"{used} tokens", evidence=Evidence.SHAPE)


def _carried(case: Case, fact) -> bool:
    ctx = case.context
    if ctx.ledger_entry(fact):
        return True
    if fact.kind is FactKind.IN_FLIGHT_CALL:
        return ctx.mentions(fact.literals[0])
    return all(ctx.mentions(lit) for lit in fact.literals)


@oracle("self-report-honest", reference="000")
def self_report_honest(case: Case) -> Iterator[Finding]:
    """What the compactor claims it kept is really in the context, checked against the source."""
    claims = case.result.self_report
    if claims is None:
        return
    live = {f.id: f for f in case.live}
    by_literal = {lit: f for f in case.live for lit in f.literals}
    known = {f.id for f in case.transcript.facts} | {lit for f in case.transcript.facts for lit in f.literals}
    for claim in claims:
        fact = live.get(claim) or by_literal.get(claim)
        if fact is not None:
            if not _carried(case, fact):
                yield Finding.about("self-report-honest", fact,
                                    f"the compactor reports {claim} as retained, but the context does not carry it",
                                    expected=" | ".join(fact.literals), found="claimed retained", evidence=Evidence.ABSENT)
        elif claim not in known:
            yield Finding("self-report-honest", Severity.DEGRADE,
                          f"the compactor claims to retain {claim!r}, which names nothing in the source",
                          expected="claims that name source facts", found=claim, evidence=Evidence.ABSENT)
