"""Decoys: text that looks like an obligation and binds nothing.

A real session is full of values that do not bind: a bucket one digit away
from the one that does, last quarter's setting, the old value after a change,
a withdrawn rule's literal in a later log line, a "we could use X some day".
A summarizer that keeps whatever looks like an identifier keeps these too, and
one that restates them as rules invents obligations. Each decoy is planned by
the skeleton (``DecoySpec``), so Hypothesis draws and shrinks them; here it is
written into turns. What a decoy may carry is fixed by its kind, and
``render`` refuses any text that would state another literal of the ledger.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from harness._base._model import FactKind, Role, Status, ToolCall, Turn
from harness._base._wholetoken import has_token
from harness.strategies._internal import _phrasing as P
from harness.strategies._internal._literals import CATEGORIES, make_literal
from harness.strategies._internal._skeleton import DecoyKind, DecoySpec, FactSpec

__all__ = ["Decoy", "effective_kind", "near_miss", "render"]

_TWO_LITERAL = {FactKind.THRESHOLD.value, FactKind.GATING_FIELD.value}
_ENDED = {Status.RETRACTED, Status.FULFILLED, Status.RESOLVED}
# Suffixes that make a different, plausible name of a word-only identifier ("max_retries_total").
_NAME_SUFFIXES = ("_total", "_default", "_per_host", "_hard", "_legacy")
_OTHER_WORDS = ("read_write", "full_access", "prod_only", "unrestricted")
# The literal category a commitment's object is drawn from, by its noun.
_OBJECT_CATEGORY = {"migration": "migration", "release": "version", "table": "migration", "key": "service",
                    "change": "ticket"}


@dataclass(frozen=True, slots=True)
class Decoy:
    """A rendered decoy: its turns and the ledger literal it deliberately repeats (if any)."""

    kind: DecoyKind
    turns: tuple[Turn, ...]
    carries: str | None


def effective_kind(decoy: DecoySpec, spec: FactSpec) -> DecoyKind:
    """The kind written for ``decoy`` about ``spec``: a kind that does not fit becomes a near miss."""
    kind = decoy.kind
    if kind is DecoyKind.OLD_VALUE and str(spec.kind) not in _TWO_LITERAL:
        return DecoyKind.NEAR_MISS
    if kind is DecoyKind.STALE and (spec.fate is not Status.SUPERSEDED or not spec.param("replacement")):
        return DecoyKind.NEAR_MISS
    if kind is DecoyKind.PASSING and spec.fate not in _ENDED:
        return DecoyKind.NEAR_MISS
    return kind


def _clear(candidate: str, taken: Collection[str]) -> bool:
    """Neither states a ledger literal nor sits inside one, as a whole token."""
    return all(candidate != t and not has_token(candidate, t) and not has_token(t, candidate)
               for t in taken if not t.isdigit())


def near_miss(literal: str, nudge: int, taken: Collection[str]) -> str | None:
    """A literal of the same shape as ``literal`` with other characters; None if none is clear of ``taken``."""
    body = literal.find("://") + 3 if "://" in literal else 0  # "s3://" is the scheme, never the value
    digits = [i for i, c in enumerate(literal) if c.isdigit() and i >= body]
    letters = [i for i, c in enumerate(literal) if c.isalpha() and c.islower() and i >= body]
    for attempt in range(12):
        n = nudge + attempt
        if digits:  # another digit in one place: 0866_image_son for 0865_image_son
            i = digits[-1 - n % len(digits)]
            step = 1 + (n // len(digits)) % 9
            candidate = literal[:i] + str((int(literal[i]) + step) % 10) + literal[i + 1:]
        elif "_" in literal:  # a word-only name: a longer name of the same family
            candidate = literal + _NAME_SUFFIXES[n % len(_NAME_SUFFIXES)]
        elif letters:
            i = letters[-1 - n % len(letters)]
            step = 1 + (n // len(letters)) % 25
            candidate = literal[:i] + chr((ord(literal[i]) - 97 + step) % 26 + 97) + literal[i + 1:]
        else:
            return None
        if _clear(candidate, taken):
            return candidate
    return None


def _category(spec: FactSpec) -> str:
    """The literal category of ``spec``'s first literal, when one of ours; else ''."""
    kind = str(spec.kind)
    if spec.param("category") in CATEGORIES:
        return spec.param("category")
    return {
        FactKind.COMMITMENT.value: _OBJECT_CATEGORY.get(spec.param("noun"), ""),
        FactKind.ARTIFACT_REFERENCE.value: "path",
        FactKind.UNRESOLVED_ERROR.value: "error_code",
        FactKind.NEGATIVE_FACT.value: "approach",
    }.get(kind, "")


def _noun(spec: FactSpec) -> str:
    """What the decoy's sentence calls the thing ("bucket", "setting", "runbook")."""
    kind = str(spec.kind)
    if kind in _TWO_LITERAL:
        return "setting"
    return (spec.param("category") or spec.param("noun") or spec.param("what")
            or {FactKind.IN_FLIGHT_CALL.value: "job", FactKind.UNRESOLVED_ERROR.value: "error",
                FactKind.NEGATIVE_FACT.value: "approach"}.get(kind, "value")).replace("_", " ")


def _other_value(value: str, spec: FactSpec, nudge: int) -> str:
    """A value the field never bound to: not the bound one, not its replacement."""
    avoid = {value, spec.param("replacement")}
    if value.isdigit():
        for step in range(1, 20):
            other = str(int(value) + 1 + (nudge + step) % 9)
            if other not in avoid:
                return other
    return next(w for w in _OTHER_WORDS[nudge % len(_OTHER_WORDS):] + _OTHER_WORDS if w not in avoid)


def _hypothetical(spec: FactSpec, decoy: DecoySpec, taken: Collection[str]) -> str | None:
    category = _category(spec)
    if category and category not in ("field", "call_id"):
        for bump in range(8):
            candidate = make_literal(category, (decoy.nudge * 7919 + bump * 104729) % 65536)
            if _clear(candidate, taken):
                return candidate
    return near_miss(spec.literals[0], decoy.nudge + 5, taken)


def _said(decoy: DecoySpec, text: str) -> tuple[Turn, ...]:
    return (Turn(Role.USER if decoy.variant % 2 else Role.ASSISTANT, text),)


def _logged(decoy: DecoySpec, index: int, value: str) -> tuple[Turn, ...]:
    """A near miss as it usually turns up: in a search through logs."""
    call = ToolCall(f"decoy-{index:03d}", "search_code", f'{{"pattern": "{value[:6]}", "path": "logs/"}}')
    line = P.pick(P.DECOY_LOG_LINES, decoy.variant).format(value=value, n=17 + decoy.nudge % 300)
    return Turn(Role.ASSISTANT, "", (call,)), Turn(Role.TOOL, line, (), call.id)


def render(decoy: DecoySpec, spec: FactSpec, taken: Collection[str], index: int) -> Decoy | None:
    """The turns of ``decoy`` about ``spec``; None when no clear value exists (it is then left out).

    ``taken`` is every literal of the ledger; the text repeats at most the one the kind calls
    for (``carries``), and only in a sentence that binds nothing.
    """
    kind = effective_kind(decoy, spec)
    v, noun, lit = decoy.variant, _noun(spec), spec.literals[0]
    carries: str | None = None
    if kind is DecoyKind.NEAR_MISS:
        value = near_miss(lit, decoy.nudge, taken)
        if value is None:
            return None
        if v % 3 == 2:
            return Decoy(kind, _logged(decoy, index, value), None)
        turns = _said(decoy, P.pick(P.DECOY_NEAR_MISSES, v).format(value=value, noun=noun, n=3 + decoy.nudge % 40))
    elif kind is DecoyKind.OLD_VALUE:
        field, value = spec.literals
        carries = field
        turns = _said(decoy, P.pick(P.DECOY_OLD_VALUES, v).format(field=field, value=_other_value(value, spec, decoy.nudge)))
    elif kind is DecoyKind.STALE:
        if str(spec.kind) in _TWO_LITERAL:
            carries = spec.literals[0]
            turns = _said(decoy, P.pick(P.DECOY_STALE_SETTINGS, v).format(field=lit, value=spec.literals[1]))
        else:
            carries = lit
            turns = _said(decoy, P.pick(P.DECOY_STALE_VALUES, v).format(value=lit, noun=noun))
    elif kind is DecoyKind.PASSING:
        carries = lit
        turns = _said(decoy, P.pick(P.DECOY_PASSING, v).format(value=lit, noun=noun))
    else:
        value = _hypothetical(spec, decoy, taken)
        if value is None:
            return None
        turns = _said(decoy, P.pick(P.DECOY_HYPOTHETICALS, v).format(value=value, noun=noun))
    text = "\n".join(t.text for t in turns)
    if not _clear_except(text, taken, carries):
        return None
    return Decoy(kind, turns, carries)


def _clear_except(text: str, taken: Collection[str], carries: str | None) -> bool:
    return all(t == carries or t.isdigit() or not has_token(text, t) for t in taken)
