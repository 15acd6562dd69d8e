"""Expand a skeleton into a full transcript and its ledger, deterministically.

Obligation turns are rendered from the skeleton's facts; the filler between
them comes from ``_filler`` seeded with ``skeleton.seed``. The ledger is
written here, while each turn is placed, never recovered from the text.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from dataclasses import dataclass, field

from harness._base._model import Fact, FactKind, Fate, Polarity, Role, Status, ToolCall, Transcript, Turn
from strategies._internal import _phrasing as P
from strategies._internal._filler import filler_units
from strategies._internal._skeleton import Anchor, FactSpec, Skeleton

__all__ = ["expand", "event_turn_count"]

_POLARITY = {
    FactKind.PROHIBITION: Polarity.FORBID,
    FactKind.LITERAL_BINDING: Polarity.REQUIRE,
    FactKind.THRESHOLD: Polarity.REQUIRE,
    FactKind.COMMITMENT: Polarity.REQUIRE,
    FactKind.GATING_FIELD: Polarity.REQUIRE,
}

# Phases order events anchored at the same place: a fact is stated before it is
# restated, and restated before its fate.
_ORIGIN, _RESTATE, _FATE = 0, 1, 2


@dataclass(slots=True)
class _Event:
    """Turns to place for one spec; ``anchor`` is the index of the turn that counts."""

    spec: int
    phase: int
    turns: tuple[Turn, ...]
    anchor: int = 0
    offset: int = 0
    placed_at: int = field(default=-1)


def _derived_id(seed_text: str, n: int) -> str:
    """A call id for helper calls, shaped like a fact's but never equal to or inside one."""
    digest = hashlib.sha256(f"{seed_text}#{n}".encode()).hexdigest()
    return "call_" + digest[:12]


def _bound(spec: FactSpec, value: str, variant: int) -> str:
    forms = P.BOUND_FORMS[spec.param("operator")]
    return P.pick(forms, variant).format(v=value)


def _origin_event(i: int, spec: FactSpec) -> _Event:
    k, lit, ph = spec.kind, spec.literals[0], spec.phrasing
    if k is FactKind.PROHIBITION:
        text = P.pick(P.PROHIBITIONS, ph).format(lit=lit)
        allowed = spec.param("allowed")
        if allowed:
            text = P.pick(P.BINDINGS, ph).format(lit=allowed, category=spec.param("category")) + " " + text
        if (ph // len(P.PROHIBITIONS)) % 2:
            text += P.pick(P.PREFERENCE_DECOYS, ph)
        return _Event(i, _ORIGIN, (Turn(Role.USER, text),))
    if k is FactKind.LITERAL_BINDING:
        return _Event(i, _ORIGIN, (Turn(Role.USER, P.pick(P.BINDINGS, ph).format(lit=lit, category=spec.param("category"))),))
    if k is FactKind.THRESHOLD:
        text = P.pick(P.THRESHOLD_FRAMES, ph).format(field=lit, bound=_bound(spec, spec.literals[1], ph))
        return _Event(i, _ORIGIN, (Turn(Role.USER, text),))
    if k is FactKind.COMMITMENT:
        text = P.pick(P.COMMITMENTS, ph).format(
            action=spec.param("action"), noun=spec.param("noun"), lit=lit, trigger=spec.param("trigger")
        )
        return _Event(i, _ORIGIN, (Turn(Role.ASSISTANT, text),))
    if k is FactKind.IN_FLIGHT_CALL:
        name = spec.param("name")
        siblings = [ToolCall(_derived_id(lit, n), name, spec.param("arguments")) for n in range(int(spec.param("parallel", "0")))]
        call = ToolCall(lit, name, spec.param("arguments"))
        start = Turn(Role.ASSISTANT, P.pick(P.CALL_STARTS, ph).format(name=name), tool_calls=(call, *siblings))
        results = tuple(
            Turn(Role.TOOL, P.pick(P.CALL_RESULTS, ph + n + 1).format(name=name), tool_call_id=s.id)
            for n, s in enumerate(siblings)
        )
        return _Event(i, _ORIGIN, (start, *results))
    if k is FactKind.UNRESOLVED_ERROR:
        name = spec.param("name")
        call = ToolCall(_derived_id(lit, 0), name, "{}")
        text = P.pick(P.ERROR_RESULTS, ph).format(lit=lit, exc=spec.param("exception"), name=name)
        return _Event(i, _ORIGIN, (Turn(Role.ASSISTANT, "", tool_calls=(call,)), Turn(Role.TOOL, text, tool_call_id=call.id)), anchor=1)
    if k is FactKind.NEGATIVE_FACT:
        disposition = spec.param("disposition")
        role = Role.USER if disposition == "rejected" else Role.ASSISTANT
        return _Event(i, _ORIGIN, (Turn(role, P.pick(P.NEGATIVE_FACTS[disposition], ph).format(lit=lit)),))
    if k is FactKind.ARTIFACT_REFERENCE:
        return _Event(i, _ORIGIN, (Turn(Role.ASSISTANT, P.pick(P.ARTIFACTS, ph).format(lit=lit, what=spec.param("what"))),))
    if k is FactKind.GATING_FIELD:
        call = ToolCall(_derived_id(lit, 0), "read_file", '{"path": "settings"}')
        config = P.pick(P.GATING_CONFIGS, ph).format(field=lit, value=spec.literals[1])
        plan = f"Config read. Next I will {spec.param('write')}."
        turns = (
            Turn(Role.ASSISTANT, "", tool_calls=(call,)),
            Turn(Role.TOOL, config, tool_call_id=call.id),
            Turn(Role.ASSISTANT, plan),
        )
        return _Event(i, _ORIGIN, turns, anchor=1)
    raise AssertionError(f"unhandled kind {k}")  # FactSpec validation makes this unreachable


def _fate_event(i: int, spec: FactSpec) -> _Event | None:
    k, lit, ph, fate = spec.kind, spec.literals[0], spec.phrasing, spec.fate
    if fate is Status.OPEN:
        return None
    if fate is Status.RETRACTED:
        return _Event(i, _FATE, (Turn(Role.USER, P.pick(P.RETRACTIONS, ph).format(lit=lit)),))
    if fate is Status.FULFILLED:
        text = P.pick(P.FULFILMENTS, ph).format(past=spec.param("past"), noun=spec.param("noun"), lit=lit)
        return _Event(i, _FATE, (Turn(Role.ASSISTANT, text),))
    if fate is Status.RESOLVED and k is FactKind.IN_FLIGHT_CALL:
        text = P.pick(P.CALL_RESULTS, ph).format(name=spec.param("name"))
        return _Event(i, _FATE, (Turn(Role.TOOL, text, tool_call_id=lit),))
    if fate is Status.RESOLVED:
        text = P.pick(P.ERROR_FIXES, ph).format(lit=lit, name=spec.param("name"))
        return _Event(i, _FATE, (Turn(Role.ASSISTANT, text),))
    new = spec.param("replacement")
    if k is FactKind.THRESHOLD:
        text = P.pick(P.THRESHOLD_SUPERSESSIONS, ph).format(
            field=lit, old=spec.literals[1], new=new, bound=_bound(spec, new, ph + 1)
        )
    elif k is FactKind.LITERAL_BINDING:
        text = P.pick(P.BINDING_SUPERSESSIONS, ph).format(old=lit, new=new, category=spec.param("category"))
    else:
        text = P.pick(P.GATING_SUPERSESSIONS, ph).format(field=lit, old=spec.literals[1], new=new)
    return _Event(i, _FATE, (Turn(Role.USER, text),))


def _restate_event(i: int, spec: FactSpec) -> _Event | None:
    if spec.kind is not FactKind.THRESHOLD or spec.param("restate") != "yes":
        return None
    text = P.pick(P.THRESHOLD_RESTATEMENTS, spec.phrasing).format(
        field=spec.literals[0], bound=_bound(spec, spec.literals[1], spec.phrasing + 2)
    )
    return _Event(i, _RESTATE, (Turn(Role.USER, text),))


def _events(skeleton: Skeleton) -> list[list[_Event]]:
    return [
        [e for e in (_origin_event(i, s), _restate_event(i, s), _fate_event(i, s)) if e is not None]
        for i, s in enumerate(skeleton.facts)
    ]


def event_turn_count(skeleton: Skeleton) -> int:
    """How many turns the skeleton's obligations take, filler aside."""
    return sum(len(e.turns) for per_spec in _events(skeleton) for e in per_spec)


def _schedule(spec: FactSpec, events: list[_Event], filler: int) -> None:
    origin = spec.position * filler // 1000
    fate = origin + spec.fate_delay * (filler - origin) // 1000
    for event in events:
        if event.phase == _ORIGIN:
            event.offset = origin
        elif event.phase == _FATE:
            event.offset = fate
        else:
            end = fate if spec.fate is not Status.OPEN else filler
            event.offset = origin + (end - origin) // 2


def _anchors(events: list[list[_Event]]) -> list[tuple[int, int | None]]:
    """(origin turn, fate turn or None) of each placed spec."""
    out = []
    for per_spec in events:
        origin = per_spec[0].placed_at + per_spec[0].anchor
        fate = next((e.placed_at + e.anchor for e in per_spec if e.phase == _FATE), None)
        out.append((origin, fate))
    return out


def _ledger(skeleton: Skeleton, anchors: list[tuple[int, int | None]]) -> list[Fact]:
    facts: list[Fact] = []
    for i, (spec, (origin, fate_turn)) in enumerate(zip(skeleton.facts, anchors)):
        base = f"F{i}"
        details = dict(spec.params)
        for transient in ("restate", "replacement", "parallel", "allowed"):
            details.pop(transient, None)
        if spec.kind is FactKind.THRESHOLD:
            details.update(field=spec.literals[0], value=spec.literals[1])
        if spec.kind is FactKind.GATING_FIELD:
            details.update(field=spec.literals[0], value=spec.literals[1])
        if spec.kind is FactKind.COMMITMENT:
            details["object"] = spec.literals[0]
        by = None
        if spec.fate is Status.RETRACTED:
            by = f"{base}.retraction"
        elif spec.fate is Status.SUPERSEDED:
            by = f"{base}.supersession"
        fate = Fate() if fate_turn is None else Fate(spec.fate, fate_turn, by)
        facts.append(
            Fact(base, spec.kind, spec.literals, origin, _POLARITY.get(spec.kind), fate, tuple(sorted(details.items())))
        )
        allowed = spec.param("allowed")
        if allowed:
            facts.append(
                Fact(f"{base}.allowed", FactKind.LITERAL_BINDING, (allowed,), origin, Polarity.REQUIRE, Fate(),
                     (("category", spec.param("category")),))
            )
        if by is not None and fate_turn is not None:
            facts.append(_event_fact(by, spec, base, fate_turn))
    return facts


def _event_fact(fact_id: str, spec: FactSpec, target: str, turn: int) -> Fact:
    if spec.fate is Status.RETRACTED:
        return Fact(fact_id, FactKind.RETRACTION, (spec.literals[0],), turn, None, Fate(), (("target", target),))
    new = spec.param("replacement")
    if spec.kind is FactKind.LITERAL_BINDING:
        details = {"target": target, "old": spec.literals[0], "category": spec.param("category")}
        return Fact(fact_id, FactKind.SUPERSESSION, (new,), turn, Polarity.REQUIRE, Fate(), tuple(sorted(details.items())))
    details = {"target": target, "field": spec.literals[0], "old": spec.literals[1], "value": new}
    if spec.kind is FactKind.THRESHOLD:
        details["operator"] = spec.param("operator")
    return Fact(fact_id, FactKind.SUPERSESSION, (spec.literals[0], new), turn, Polarity.REQUIRE, Fate(),
                tuple(sorted(details.items())))


def _cut_points(skeleton: Skeleton, facts_by_spec: list[tuple[int, int | None]], n: int) -> tuple[int, ...]:
    points = set()
    for cut in skeleton.cuts:
        if cut.anchor is Anchor.FRACTION or not facts_by_spec:
            point = round(n * (cut.value if cut.anchor is Anchor.FRACTION else 500) / 1000)
        else:
            origin, fate = facts_by_spec[cut.value % len(facts_by_spec)]
            base = fate if cut.anchor is Anchor.AFTER_FATE and fate is not None else origin
            point = base + 1
        points.add(min(max(point + cut.offset, 1), n))
    return tuple(sorted(points))


def expand(skeleton: Skeleton) -> Transcript:
    """The transcript a skeleton stands for; the same skeleton always gives the same one."""
    events = _events(skeleton)
    obligation_turns = sum(len(e.turns) for per_spec in events for e in per_spec)
    filler = max(0, skeleton.length - obligation_turns)
    for spec, per_spec in zip(skeleton.facts, events):
        _schedule(spec, per_spec, filler)

    units = filler_units(skeleton.seed, filler)
    starts, total = [], 0
    for unit in units:
        starts.append(total)
        total += len(unit)
    # An event never splits a filler tool call from its result: it moves to the next unit boundary.
    slots: list[list[_Event]] = [[] for _ in range(len(units) + 1)]
    flat = [e for per_spec in events for e in per_spec]
    for event in sorted(flat, key=lambda e: (e.offset, e.phase, e.spec)):
        slots[bisect_left(starts, event.offset)].append(event)

    turns: list[Turn] = []
    for u in range(len(units) + 1):
        for event in slots[u]:
            event.placed_at = len(turns)
            turns.extend(event.turns)
        if u < len(units):
            turns.extend(units[u])

    anchors = _anchors(events)
    facts = _ledger(skeleton, anchors)
    points = _cut_points(skeleton, anchors, len(turns))
    return Transcript(tuple(turns), tuple(facts), points, skeleton.seed)
