"""The oracle for what a compactor adds: an obligation on a name the source never mentions, or a
prohibition on what the source requires."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from harness._base._model import FactKind, Polarity
from harness.oracles._lexicon import identifier_tokens, name_shaped, near_miss_among, phrase_pattern, tokens_of
from harness.oracles._units import Clause, call_text, part_reading
from harness.oracles._core import Case, Evidence, Finding, Outcome, Severity, oracle
from harness.oracles._numbers import operators_in, relation_key
from harness.oracles._cues import cue_in, negated


class _SourceText:
    """The source window as no-invented-obligation searches it: its joined text, and for many lookups
    its identifier tokens (extended from the last window of the same transcript: a session's window
    grows at every compaction, and rereading all of it each time would make a session quadratic)."""

    def __init__(self, case: Case):
        self._turns, self._boundary = case.transcript.turns, case.boundary
        self._text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = _joined(self._turns[:self._boundary])
        return self._text

    def known(self, tokens: set[str]) -> set[str]:
        """Those of ``tokens`` the source holds (as a substring: a whole token is one too). A few are
        looked for in the text; for many, the window's own tokens answer most of them first, read
        from its oldest turns on and only as far as it takes (a summary names what it summarizes, and
        it summarizes the oldest turns)."""
        unsure = set(tokens)
        read = _held_boundary(self._turns, self._boundary)
        if read and len(unsure) > _FEW_LOOKUPS:
            unsure -= _window_tokens(self._turns, read)  # remembered: nothing is read
        while len(unsure) > _FEW_LOOKUPS and read < self._boundary:
            read = min(self._boundary, read + max(_FIRST_READ, read))  # doubling: at most twice the turns needed
            unsure -= _window_tokens(self._turns, read)
        return tokens - {t for t in unsure if t not in self.text}


_FEW_LOOKUPS = 16  # up to this many tokens are looked up in the source text, one scan each at most
_FIRST_READ = 256  # turns read first


def _joined(turns) -> str:
    """The turns' texts and tool calls, one per line."""
    parts = []
    for turn in turns:
        parts.append(turn.text)
        parts.extend(f"{call.id} {call.name} {call.arguments}" for call in turn.tool_calls)
    return "\n".join(parts)


# The last window read per transcript, by identity (the entry holds the turns, so the identity stays
# theirs): id(turns) -> (turns, boundary, tokens of turns[:boundary]).
_WINDOWS_READ: dict[int, tuple[tuple, int, frozenset[str]]] = {}
_WINDOWS_READ_LIMIT = 8


def _held_boundary(turns: tuple, boundary: int) -> int:
    """How much of ``turns[:boundary]`` was read last (0 if none, or if that read went past it)."""
    held = _WINDOWS_READ.get(id(turns))
    return held[1] if held is not None and held[0] is turns and held[1] <= boundary else 0


def _window_tokens(turns: tuple, boundary: int) -> frozenset[str]:
    """``tokens_of`` the window ``turns[:boundary]``; only the turns after the last window read of the
    same transcript are read (tokens never cross a line, so the parts' tokens are the whole's)."""
    held = _WINDOWS_READ.get(id(turns))
    if held is not None and held[0] is turns and held[1] <= boundary:
        tokens = held[2] | tokens_of(_joined(turns[held[1]:boundary])) if held[1] < boundary else held[2]
    else:
        tokens = tokens_of(_joined(turns[:boundary]))
    if len(_WINDOWS_READ) >= _WINDOWS_READ_LIMIT:
        _WINDOWS_READ.clear()
    _WINDOWS_READ[id(turns)] = (turns, boundary, tokens)
    return tokens


@functools.lru_cache(maxsize=16384)
def _maybe_identifiers(reading: str) -> tuple[str, ...]:
    """The tokens of one message's reading that could be identifiers (they hold a digit, '_' or '/'):
    a superset of what ``Context.identifiers`` finds in any of its clauses."""
    return tuple(t for t in identifier_tokens(reading) if name_shaped(t))


@oracle("no-invented-obligation", reference="field reports")
def no_invented_obligation(case: Case) -> Iterator[Finding]:
    """Every prohibition, threshold or commitment the context states traces to the source."""
    ctx = case.context
    rules = ctx.rules
    source = _SourceText(case)
    # What "forbidding a requirement" can invert: a bound value, not a threshold's field or a commitment's
    # object ("don't re-run X until the review" is how a pending commitment is often put).
    # (force-kept reads a bound value stated forbidden, of any shape: this reads a superseding value)
    required = {f.literals[0] for f in case.live
                if f.kind is FactKind.SUPERSESSION and f.polarity is Polarity.REQUIRE and len(f.literals) == 1}
    forbidden = {f.literals[0] for f in case.transcript.facts if f.kind is FactKind.PROHIBITION and f.origin_turn < case.boundary}
    # Only clauses holding a token the source lacks, or a required value, can state an invented
    # obligation; find those from the tokens instead of reading every clause. A message kept verbatim
    # from the window invents nothing, whatever its identifiers.
    window = {turn.text for turn in case.window} | {call_text(c) for turn in case.window for c in turn.tool_calls}
    candidates = {t for raw in ctx.parts if raw not in window for t in _maybe_identifiers(part_reading(raw))}
    unknown_anywhere = {t for t in candidates - source.known(candidates)
                        if not _joined_from(t, source.text) and not _located(t, source.text) and not _notation(t)
                        and not relation_key(t, rules)
                        and not _rewrites_a_literal(t, case, rules)}
    suspected = {lit for lit in required - forbidden if ctx.mentions(lit)}
    reported: set[str] = set()
    for clause in ctx.clauses_holding(unknown_anywhere | suspected):
        tokens = ctx.identifiers(clause)
        unknown = [t for t in tokens if t not in reported and t in unknown_anywhere]
        suspects = [t for t in tokens if t in suspected and t not in reported]
        if not (unknown or suspects):
            continue  # cheap exit: nothing in this clause could be invented
        has_prohibition = cue_in(clause, rules.prohibition_cues)
        if not (has_prohibition or cue_in(clause, rules.pending_cues) or operators_in(clause.text, ctx)):
            continue
        for token in unknown:
            if not _obligation_outside(ctx, clause, token):
                continue  # "open_items: 0": the only cue is the token's own word
            reported.add(token)
            yield Finding("no-invented-obligation", Severity.VIOLATE,
                          f"the context states an obligation on {token}, which the source never mentions",
                          expected="only obligations from the source", found=clause.text, evidence=Evidence.INVENTED)
        if not (has_prohibition and suspects):
            continue
        for target in _prohibition_targets(ctx, clause):
            if target in suspects and target not in reported:
                reported.add(target)
                fact = next(f for f in case.live if f.literals[0] == target and f.kind is FactKind.SUPERSESSION)
                yield Finding.about("no-invented-obligation", fact,
                                    f"the context forbids {target}, which the source requires: the requirement inverted",
                                    expected=f"use {target}", found=clause.text, evidence=Evidence.CONTRARY,
                                    outcome=Outcome.INVERTED)


# Notation, not names: a tally or multiplier ("x3", "2x", "#4"), a number with a unit, a date or a time
# ("30s", "2024-05-01", "10:30"), slash-joined short words ("w/o", "n/a", "and/or", "use/touch"), anything
# under 4 characters.
_NOTATION = re.compile(r"[x\u00d7#]\d+|\d+[x\u00d7]|\d+(?:[./:\-]\d+)*[A-Za-z%]{0,3}|[A-Za-z]{1,4}(?:/[A-Za-z]{1,4})+\.?"
                       r"|[A-Za-z]{1,8}/[A-Za-z]{1,8}", re.IGNORECASE)


def _notation(token: str) -> bool:
    """A token that is shorthand rather than an identifier a summary could invent an obligation on."""
    return len(token) < 4 or _NOTATION.fullmatch(token) is not None


def _obligation_outside(ctx, clause, token: str) -> bool:
    """A cue of obligation, not negated, stands in ``clause`` outside ``token`` itself (a key such as
    "open_items" reads "open items", and its own word binds nothing; "nothing outstanding" binds nothing)."""
    text = clause.text.replace(token, " " * len(token))
    lower = Clause.of(text, ctx.lowered).lower
    rules = ctx.rules
    cues = phrase_pattern(rules.prohibition_cues + rules.pending_cues)
    return any(not negated(ctx.rules, lower, m.start()) for m in cues.finditer(lower)) or bool(operators_in(text, ctx))


def _rewrites_a_literal(token: str, case: Case, rules) -> bool:
    """``token`` is one of the source's literals rewritten (another case, a near miss): the literal's own
    oracle reports it changed, and an obligation stated on it is that obligation, not an invented one."""
    literals, lowered = _literals_of(case.transcript)
    if token.lower() in lowered:
        return True
    near = near_miss_among(token, literals, rules.near_miss_ratio)
    return near is not None and not case.context.mentions(near)


def _literals_of(transcript) -> tuple[frozenset[str], frozenset[str]]:
    literals = frozenset(lit for f in transcript.facts for lit in f.literals if name_shaped(lit))
    return literals, frozenset(lit.lower() for lit in literals)


# A place in a file or a listing ("src/lexer.rs:88-94", "app.py:12:5", "README.md#L40-L52"): the name before
# it is what the token is about.
_LOCATION = re.compile(r"(?::\d+(?:[-:]\d+)*|#L\d+(?:-L?\d+)?)$")


def _located(token: str, source: str) -> bool:
    """``token`` is a name the source holds with a line, column or range after it: notation, not a new name."""
    base = _LOCATION.sub("", token)
    return base != token and len(base) >= 3 and base in source


def _joined_from(token: str, source: str) -> bool:
    """Source words joined with a slash ("run_tests/TimeoutError"): a notation, not a new name."""
    parts = token.split("/")
    return "://" not in token and len(parts) > 1 and all(p and p in source for p in parts)


def _prohibition_targets(ctx, clause) -> list[str]:
    """The identifier each prohibition cue in ``clause`` points at (after it, or before a postfix cue)."""
    idents = [(clause.text.find(t), t) for t in ctx.identifiers(clause)]
    out = []
    lower = clause.lower
    for cue in ctx.rules.prohibition_cues:
        at = lower.find(cue)
        if at < 0 or any(trap in lower for trap in ctx.rules.negation_traps if cue in trap):
            continue
        if cue in ctx.rules.postfix_prohibition_cues:
            before = [t for pos, t in idents if 0 <= pos < at]
            if before:
                out.append(before[-1])
        else:
            after = [t for pos, t in idents if pos > at]
            if after:
                out.append(after[0])
    return out
