"""Expand a skeleton into a full transcript and its ledger, deterministically.

Obligation turns are written by each fact kind's generator (``_kinds``), decoys
by ``_decoys``, effects (irreversible tool calls a gating field or prohibition
governs) here; the filler between them comes from ``_filler`` seeded with
``skeleton.seed`` (or from a team's own logs, ``_background``). The ledger and
the effects are written here, while each turn is placed, never recovered from
the text.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from harness._base._errors import InvalidArgument
from harness._base._kinds import ending_event, kind_def
from harness._base._model import Effect, Fact, FactKind, Fate, Role, Status, ToolCall, Transcript, Turn, mid_results
from harness._base._wholetoken import has_token
from harness.strategies._internal import _phrasing as P
from harness.strategies._internal._decoys import _clear, effective_kind, render
from harness.strategies._internal._filler import filler_units
from harness.strategies._internal._kinds import KindGenerator, call_hook, derived_id, generator_for, turns_from
from harness.strategies._internal._skeleton import Anchor, DecoyKind, EffectSpec, FactSpec, Skeleton

__all__ = ["expand", "event_turn_count"]

# Phases order events anchored at the same place: a fact is stated before it is
# restated, restated before an effect it governs, and all of them before its fate;
# a decoy comes after all four.
_ORIGIN, _RESTATE, _EFFECT, _FATE, _DECOY = 0, 1, 2, 3, 4
# The kinds that govern an effect: a config value gating a write, a rule against a target.
_GOVERNING = frozenset({FactKind.GATING_FIELD.value, FactKind.PROHIBITION.value})


@dataclass(slots=True)
class _Event:
    """Turns to place for one spec; ``anchor`` is the index of the turn that counts."""

    spec: int
    phase: int
    turns: tuple[Turn, ...]
    anchor: int = 0
    offset: int = 0
    placed_at: int = field(default=-1)
    fate_at: int | None = None  # an origin event holding its fate too: where the fate's turns start (a cut goes there)
    anchor_fate: int = 0  # then the fate's anchor, within its turns


def _origin_event(i: int, spec: FactSpec) -> _Event:
    generator = generator_for(spec.kind)
    turns = turns_from(spec.kind, "state", call_hook(spec.kind, "state", generator.state, spec))
    anchor = call_hook(spec.kind, "anchor", generator.anchor_of, spec)
    if not turns or isinstance(anchor, bool) or not isinstance(anchor, int) or not 0 <= anchor < len(turns):
        raise InvalidArgument(f"the {spec.kind} generator stated it in {len(turns)} turn(s) with anchor={anchor!r}")
    return _Event(i, _ORIGIN, turns, anchor=anchor)


def _fate_event(i: int, spec: FactSpec) -> _Event | None:
    if spec.fate is Status.OPEN:
        return None
    if spec.fate is Status.RETRACTED:  # withdrawn the same way whatever the kind
        return _Event(i, _FATE, (Turn(Role.USER, P.pick(P.RETRACTIONS, spec.phrasing).format(lit=spec.literals[0])),))
    generator = generator_for(spec.kind)
    turns = turns_from(spec.kind, "fate", call_hook(spec.kind, "fate", generator.fate, spec))
    if not turns:
        raise InvalidArgument(f"the {spec.kind} generator wrote no turns for fate {spec.fate.value!r}")
    if not -len(turns) <= generator.fate_anchor < len(turns):
        raise InvalidArgument(f"the {spec.kind} generator wrote {len(turns)} fate turn(s) with "
                              f"fate_anchor={generator.fate_anchor}")
    return _Event(i, _FATE, turns, anchor=generator.fate_anchor % len(turns))


def _joined_after_cut(spec: FactSpec, origin: _Event, fate: _Event | None) -> bool:
    """Join ``fate`` to ``origin`` when the kind puts its fate right after a compaction (a trailing call)."""
    after_cut = generator_for(spec.kind).fate_after_cut
    if fate is None or spec.fate is Status.RETRACTED or after_cut is None:
        return False
    if not call_hook(spec.kind, "fate_after_cut", after_cut, spec):
        return False
    origin.fate_at = len(origin.turns)
    origin.turns = (*origin.turns, *fate.turns)
    origin.anchor_fate = fate.anchor
    return True


def _restate_event(i: int, spec: FactSpec) -> _Event | None:
    restate = generator_for(spec.kind).restate
    turns = turns_from(spec.kind, "restate", call_hook(spec.kind, "restate", restate, spec)) if restate else ()
    return _Event(i, _RESTATE, turns) if turns else None


def _events(skeleton: Skeleton) -> list[list[_Event]]:
    out = []
    for i, spec in enumerate(skeleton.facts):
        origin, fate = _origin_event(i, spec), _fate_event(i, spec)
        if _joined_after_cut(spec, origin, fate):
            fate = None
        out.append([e for e in (origin, _restate_event(i, spec), fate) if e is not None])
    return out


def _decoy_events(skeleton: Skeleton, taken: set[str]) -> list[tuple[_Event, bool, int]]:
    """Each decoy that renders, whether it belongs after its target's fate (stale, passing), its position."""
    if not skeleton.facts:
        return []
    out = []
    count = len(skeleton.facts)
    for n, decoy in enumerate(skeleton.decoys):
        # The drawn fact, or the next one the decoy's kind fits (a stale value needs a superseded fact).
        target = next((t % count for t in range(decoy.target, decoy.target + count)
                       if effective_kind(decoy, skeleton.facts[t % count]) is decoy.kind), decoy.target % count)
        rendered = render(decoy, skeleton.facts[target], taken, n)
        if rendered is not None:
            after_fate = rendered.kind in (DecoyKind.STALE, DecoyKind.PASSING)
            out.append((_Event(target, _DECOY, rendered.turns), after_fate, decoy.position))
    return out


@dataclass(slots=True)
class _PlannedEffect:
    """An effect's two turns (``event``), where in its governing fact's live span, and what it records."""

    event: _Event
    position: int
    call_id: str
    action: str


def _governor(effect: EffectSpec, facts: tuple[FactSpec, ...]) -> int | None:
    """The index of the fact governing ``effect``: its target if a gating field or prohibition, else the next one."""
    count = len(facts)
    candidates = (t % count for t in range(effect.target, effect.target + count))
    return next((i for i in candidates if str(facts[i].kind) in _GOVERNING), None)


def _call_ids(events: list[list[_Event]], decoys: list[tuple[_Event, bool, int]]) -> set[str]:
    """Every call id the obligations and decoys use (a fact's call id is its literal)."""
    turns = [t for per_spec in events for e in per_spec for t in e.turns] + [t for e, _, _ in decoys for t in e.turns]
    return {c.id for t in turns for c in t.tool_calls} | {t.tool_call_id for t in turns if t.tool_call_id}


def _effect_events(skeleton: Skeleton, taken: set[str], used_ids: set[str]) -> list[_PlannedEffect]:
    """Each effect that has a governing fact and a phrasing clear of every literal, with a fresh call id."""
    if not skeleton.facts or not skeleton.effects:
        return []
    out = []
    used = set(used_ids)
    for n, effect in enumerate(skeleton.effects):
        governor = _governor(effect, skeleton.facts)
        if governor is None:
            continue
        turns = _effect_turns(effect, skeleton.facts[governor], taken, used, n)
        if turns is None:
            continue
        call = turns[0].tool_calls[0]
        used.add(call.id)
        out.append(_PlannedEffect(_Event(governor, _EFFECT, turns), effect.position, call.id, call.name))
    return out


def _effect_turns(effect: EffectSpec, spec: FactSpec, taken: set[str], used: set[str],
                  n: int) -> tuple[Turn, ...] | None:
    """The call and its result: an action on what ``spec`` is about (its pending write, its kind of target),
    no literal of the ledger in either (digits included), a call id no other call has."""
    own = _effect_calls(spec)
    # The fact's own actions first, from the variant on; the general ones only when each of those holds a literal.
    calls = [P.pick(own, effect.variant + k) for k in range(len(own))] + [
        P.pick(P.EFFECT_CALLS, effect.variant + k) for k in range(len(P.EFFECT_CALLS))]
    for name, arguments, result in calls:
        note = P.pick(P.EFFECT_NOTES, effect.variant // len(P.EFFECT_CALLS))
        if any(has_token(text, lit) for text in (name, arguments, result, note) for lit in taken):
            continue
        call_id = next(cid for k in range(n, n + 64 * 64, 64)
                       if (cid := derived_id(f"effect:{spec.literals[0]}", k)) not in used and _clear(cid, taken))
        return (Turn(Role.ASSISTANT, note, (ToolCall(call_id, name, arguments),)),
                Turn(Role.TOOL, result, (), call_id))
    return None


def _effect_calls(spec: FactSpec) -> tuple[tuple[str, str, str], ...]:
    """The actions ``spec`` plausibly governs: a gating field's own write, a call on a prohibition's kind of
    target; the general list for what neither table knows."""
    if str(spec.kind) == FactKind.GATING_FIELD.value:
        own = P.EFFECT_CALLS_BY_WRITE.get(spec.param("write") or "")
    else:
        own = P.EFFECT_CALLS_BY_CATEGORY.get(spec.param("category") or "")
    return own or P.EFFECT_CALLS


def _planned(
    skeleton: Skeleton,
) -> tuple[list[list[_Event]], set[str], list[tuple[_Event, bool, int]], list[_PlannedEffect]]:
    """Every event the skeleton places, filler aside: obligations, decoys, effects (and the literals they avoid)."""
    events = _events(skeleton)
    literals = _all_literals(skeleton)
    decoys = _decoy_events(skeleton, literals)
    effects = _effect_events(skeleton, literals, _call_ids(events, decoys)) if skeleton.effects else []
    return events, literals, decoys, effects


def event_turn_count(skeleton: Skeleton) -> int:
    """How many turns the skeleton's obligations, decoys and effects take, filler aside."""
    events, _, decoys, effects = _planned(skeleton)
    return (sum(len(e.turns) for per_spec in events for e in per_spec) + sum(len(e.turns) for e, _, _ in decoys)
            + sum(len(p.event.turns) for p in effects))


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
        first = per_spec[0]
        origin = first.placed_at + first.anchor
        fate = next((e.placed_at + e.anchor for e in per_spec if e.phase == _FATE), None)
        if first.fate_at is not None:
            fate = first.placed_at + first.fate_at + first.anchor_fate
        out.append((origin, fate))
    return out


def _ledger(skeleton: Skeleton, anchors: list[tuple[int, int | None]]) -> list[Fact]:
    """The ground truth, written from the plan and where its turns landed."""
    facts: list[Fact] = []
    for i, (spec, (origin, fate_turn)) in enumerate(zip(skeleton.facts, anchors)):
        base = f"F{i}"
        generator = generator_for(spec.kind)
        details = (call_hook(spec.kind, "details", generator.details, spec) if generator.details
                   else _without_replacement(spec))
        fate = Fate()
        if fate_turn is not None:
            by = {Status.RETRACTED: f"{base}.retraction", Status.SUPERSEDED: f"{base}.supersession"}.get(spec.fate)
            fate = Fate(spec.fate, fate_turn, by)
        fact = Fact(base, spec.kind, spec.literals, origin, kind_def(spec.kind).polarity, fate, _sorted(details))
        facts.append(fact)
        companions = call_hook(spec.kind, "companions", generator.companions, spec) if generator.companions else ()
        for suffix, kind, literals, extra in companions:
            facts.append(Fact(f"{base}.{suffix}", kind, tuple(literals), origin, kind_def(kind).polarity, Fate(),
                              _sorted(extra)))
        event = _event_fact(fact, spec, generator)
        if event is not None:
            facts.append(event)
    return facts


def _sorted(details: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(details.items()))


def _without_replacement(spec: FactSpec) -> dict[str, str]:
    return {k: v for k, v in spec.params if k != "replacement"}


def _event_fact(fact: Fact, spec: FactSpec, generator: KindGenerator) -> Fact | None:
    """The retraction or supersession that ends ``fact``, as a fact of its own."""
    if fact.fate.status is Status.SUPERSEDED and generator.replaced_by is not None:
        literals, details = call_hook(spec.kind, "replaced_by", generator.replaced_by, spec)
        return Fact(fact.fate.by, FactKind.SUPERSESSION, tuple(literals), fact.fate.turn,
                    kind_def(FactKind.SUPERSESSION).polarity, Fate(), _sorted({**details, "target": fact.id, "target_kind": str(fact.kind)}))
    return ending_event(fact, spec.param("replacement"))


def _cut_points(skeleton: Skeleton, facts_by_spec: list[tuple[int, int | None]], turns: list[Turn],
                pinned: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The compaction points: the skeleton's cuts, and ``pinned`` (between a trailing call and its result).

    A cut that would fall inside a block of tool results (some of one message's calls answered, some
    not) moves to the end of the block: runtimes compact between model calls, and a request cut there
    is one no provider accepts. A cut right after the call message stays: the call is in flight."""
    n = len(turns)
    inside = mid_results(turns)
    points = set(pinned)
    for cut in skeleton.cuts:
        if cut.anchor is Anchor.FRACTION or not facts_by_spec:
            point = round(n * (cut.value if cut.anchor is Anchor.FRACTION else 500) / 1000)
        else:
            origin, fate = facts_by_spec[cut.value % len(facts_by_spec)]
            base = fate if cut.anchor is Anchor.AFTER_FATE and fate is not None else origin
            point = base + 1
        point = min(max(point + cut.offset, 1), n)
        while point in inside:
            point += 1
        points.add(point)
    return tuple(sorted(points))


def _all_literals(skeleton: Skeleton) -> set[str]:
    """Every literal the plan states (replacements and allowed values included): none may turn up in filler."""
    return {lit for spec in skeleton.facts for lit in spec.stated_literals()}


def _schedule_decoy(event: _Event, after_fate: bool, position: int, target: list[_Event], filler: int) -> None:
    base = next((e.offset for e in target if e.phase == (_FATE if after_fate else _ORIGIN)), target[0].offset)
    event.offset = base + position * (filler - base) // 1000


def _schedule_effect(planned: _PlannedEffect, target: list[_Event], filler: int) -> None:
    """At ``position`` permille of the span its fact is live: from its statement to its fate (or the end).

    The phase keeps it after the statement and before the fate when they share an offset, and an
    event's turns stay together, so a gating field's call, config and plan all come before it.
    """
    start = target[0].offset
    end = next((e.offset for e in target if e.phase == _FATE), filler)
    planned.event.offset = start + planned.position * (end - start) // 1000


def _filler(skeleton: Skeleton, count: int, literals: set[str], background: Any) -> list[tuple[Turn, ...]]:
    """The filler units: ``count`` turns of them, or, for a skeleton sized in tokens, units until they hold
    ``skeleton.tokens`` (at most ``count`` turns); the team's logs where there is a background."""
    if background is None:
        return filler_units(skeleton.seed, count, avoid=literals, output_cap=skeleton.output_cap,
                            tokens=skeleton.tokens)
    if skeleton.tokens:
        return background.units(skeleton.seed, count, avoid=literals, tokens=skeleton.tokens,
                                output_cap=skeleton.output_cap)
    return background.units(skeleton.seed, count, avoid=literals)


def _placed(skeleton: Skeleton, events: list[list[_Event]], decoys: list[tuple[_Event, bool, int]],
            effects: list[_PlannedEffect], flat: list[_Event], units: list[tuple[Turn, ...]]) -> list[Turn]:
    """Every event scheduled in the filler ``units``, and the turns they make (``placed_at`` set)."""
    filler = sum(len(unit) for unit in units)
    for spec, per_spec in zip(skeleton.facts, events):
        _schedule(spec, per_spec, filler)
    for event, after_fate, position in decoys:
        _schedule_decoy(event, after_fate, position, events[event.spec], filler)
    for planned in effects:
        _schedule_effect(planned, events[planned.event.spec], filler)

    starts, total = [], 0
    for unit in units:
        starts.append(total)
        total += len(unit)
    # An event never splits a filler tool call from its result: it moves to the next unit boundary.
    slots: list[list[_Event]] = [[] for _ in range(len(units) + 1)]
    for event in sorted(flat, key=lambda e: (e.offset, e.phase, e.spec)):
        slots[bisect_left(starts, event.offset)].append(event)

    turns: list[Turn] = []
    for u in range(len(units) + 1):
        for event in slots[u]:
            event.placed_at = len(turns)
            turns.extend(event.turns)
        if u < len(units):
            turns.extend(units[u])
    return turns


def _first_spoken(turns: list[Turn]) -> int | None:
    return next((i for i, t in enumerate(turns) if t.role is not Role.SYSTEM), None)


def _needs_opener(turns: list[Turn]) -> bool:
    first = _first_spoken(turns)
    return first is not None and turns[first].role is not Role.USER


def _open_with_user(turns: list[Turn], events: list[_Event], literals: set[str]) -> None:
    """Begin the conversation with a user message, as every provider requires: an opening request goes
    before the first turn after any system turns (and every event after it moves down one)."""
    first = _first_spoken(turns)
    if first is None:
        first = len(turns)
    opener = next((o for o in P.OPENERS if not any(has_token(o, lit) for lit in literals)), P.OPENERS[0])
    turns.insert(first, Turn(Role.USER, opener))
    for event in events:
        if event.placed_at >= first:
            event.placed_at += 1


def expand(skeleton: Skeleton, *, background: Any = None) -> Transcript:
    """The transcript a skeleton stands for; the same skeleton always gives the same one.

    ``background`` (a ``Background`` of a team's logs) replaces the generated filler. Each
    effect the skeleton plans becomes a tool call and its result, recorded in
    ``Transcript.effects`` with the fact governing it; the skeleton's tightenings are copied.
    """
    events, literals, decoys, effects = _planned(skeleton)
    placed_turns = (sum(len(e.turns) for per_spec in events for e in per_spec) + sum(len(e.turns) for e, _, _ in decoys)
                    + sum(len(p.event.turns) for p in effects))
    filler = max(0, skeleton.length - placed_turns)
    flat = [e for per_spec in events for e in per_spec] + [e for e, _, _ in decoys] + [p.event for p in effects]
    units = _filler(skeleton, filler, literals, background)
    turns = _placed(skeleton, events, decoys, effects, flat, units)
    if _needs_opener(turns):  # one turn of filler fewer makes room for the user's opening message
        if filler:
            units = _filler(skeleton, filler - 1, literals, background)
            turns = _placed(skeleton, events, decoys, effects, flat, units)
        _open_with_user(turns, flat, literals)  # even if the first turn is the user's now: the length is kept

    anchors = _anchors(events)
    facts = _ledger(skeleton, anchors)
    pinned = tuple(e.placed_at + e.fate_at for per_spec in events for e in per_spec if e.fate_at is not None)
    points = _cut_points(skeleton, anchors, turns, pinned)
    recorded = tuple(sorted((Effect(p.event.placed_at, p.call_id, p.action, (f"F{p.event.spec}",)) for p in effects),
                            key=lambda e: e.turn))
    return Transcript(tuple(turns), tuple(facts), points, skeleton.seed, effects=recorded,
                      tightenings=skeleton.tightenings)
