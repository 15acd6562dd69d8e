"""How each kind of obligation is drawn and written into turns: one generator per kind.

What a kind *is* (literal count, fates, polarity, required params, how a
correct compactor states it) is its ``harness.KindDef``; this module adds how
the strategies fabricate one. Each built-in kind's generator is one block
below, reading its phrasings from ``_phrasing``; a team's kind carries its own
``KindGenerator`` in ``KindDef.generator``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from harness._base._errors import HarnessError, InvalidArgument
from harness._base._kinds import THRESHOLD_OPERATORS, kind_def
from harness._base._model import FactKind, Role, Status, ToolCall, Turn
from harness.strategies._internal import _phrasing as P
from harness.strategies._internal._literals import GATING_FIELDS, make_literal
from harness.strategies._internal._skeleton import FactSpec

__all__ = ["KindGenerator", "Companion", "generator_for", "has_generator", "derived_id", "literal_seeds", "call_hook",
           "turns_from"]

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[T]], T]
Companion = tuple[str, str, tuple[str, ...], dict[str, str]]


@dataclass(frozen=True, slots=True)
class KindGenerator:
    """How the strategies draw one kind and write it into a transcript.

    - ``draw(draw, fate)``: the literals and params of one planned fact (use
      Hypothesis's ``draw``, so what it picks shrinks);
    - ``state(spec)``: the turns that state it; turn ``anchor`` of them is the fact's origin
      (``anchor`` an index, or a function of the spec giving one);
    - ``fate(spec)``: the turns in which it is fulfilled, resolved or superseded
      (a retraction is written the same way for every kind); turn ``fate_anchor`` of them is where
      it ends (negative counts from the end);
    - ``fate_after_cut(spec)``: True when the fate comes right after the statement with a compaction
      between them (a call in flight as the last message when compaction fires); default never;
    - ``restate(spec)``: reminder turns placed halfway to its fate, or ``()``;
    - ``details(spec)``: the ledger details of the fact (default: its params but ``replacement``);
    - ``replaced_by(spec)``: the literals and details of the supersession fact
      (default: ``harness._base._kinds.ending_event``: the field and new value of a
      two-literal kind, else the new literal, with ``old`` and what it was about);
    - ``companions(spec)``: further facts the same turns state, as
      (id suffix, kind, literals, details).
    """

    draw: Callable[[Any, Status], tuple[tuple[str, ...], dict[str, str]]]
    state: Callable[[FactSpec], tuple[Turn, ...]]
    anchor: int | Callable[[FactSpec], int] = 0
    fate: Callable[[FactSpec], tuple[Turn, ...]] | None = None
    restate: Callable[[FactSpec], tuple[Turn, ...]] | None = None
    details: Callable[[FactSpec], dict[str, str]] | None = None
    replaced_by: Callable[[FactSpec], tuple[tuple[str, ...], dict[str, str]]] | None = None
    companions: Callable[[FactSpec], tuple[Companion, ...]] | None = None
    fate_anchor: int = 0
    fate_after_cut: Callable[[FactSpec], bool] | None = None

    def __post_init__(self) -> None:
        for name in ("draw", "state", "fate", "restate", "details", "replaced_by", "companions", "fate_after_cut"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise InvalidArgument(f"KindGenerator.{name} must be a function, got {value!r}")
        if not callable(self.anchor) and (isinstance(self.anchor, bool) or not isinstance(self.anchor, int)
                                          or self.anchor < 0):
            raise InvalidArgument(f"KindGenerator.anchor must be an int >= 0 or a function, got {self.anchor!r}")
        if isinstance(self.fate_anchor, bool) or not isinstance(self.fate_anchor, int):
            raise InvalidArgument(f"KindGenerator.fate_anchor must be an int, got {self.fate_anchor!r}")

    def anchor_of(self, spec: FactSpec) -> int:
        """The index of the turn of ``state(spec)`` that is the fact's origin."""
        return self.anchor(spec) if callable(self.anchor) else self.anchor


def generator_for(kind: str) -> KindGenerator:
    """The generator of a placed kind: its own, or the built-in one; a clear error if it has none."""
    definition = kind_def(kind)
    generator = definition.generator if definition.generator is not None else _BUILT_IN.get(kind)
    if not isinstance(generator, KindGenerator):
        raise InvalidArgument(
            f"kind {definition.name!r} has no generator, so the strategies cannot place it; "
            f"give its KindDef generator=KindGenerator(...), got {generator!r}"
        )
    needs_fate = [s.value for s in definition.fates if s not in (Status.OPEN, Status.RETRACTED)]
    if needs_fate and generator.fate is None:
        raise InvalidArgument(f"kind {definition.name!r} may end {needs_fate} but its KindGenerator has no fate function")
    return generator


def call_hook(kind: str, hook: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Call one of a kind's generator functions; a bug in it is an error naming the kind and the function."""
    try:
        return fn(*args)
    except (HarnessError, HypothesisException):
        raise  # our own errors, and Hypothesis's control flow (an assume, a spent example), pass through
    except Exception as exc:
        raise InvalidArgument(f"kind {str(kind)!r}: its KindGenerator.{hook} raised {type(exc).__name__}: {exc}") from exc


def turns_from(kind: str, hook: str, value: Any) -> tuple[Turn, ...]:
    """What a ``state``/``fate``/``restate`` function returned, checked to be turns."""
    turns = tuple(value) if isinstance(value, list | tuple) else None
    if turns is None or not all(isinstance(t, Turn) for t in turns):
        raise InvalidArgument(f"kind {str(kind)!r}: its KindGenerator.{hook} returned {value!r}; "
                              "expected a tuple of harness.Turn")
    return turns


def has_generator(kind: str) -> bool:
    """Whether the strategies can write facts of ``kind`` (a team may define a kind only to judge it)."""
    return kind_def(kind).generator is not None or kind in _BUILT_IN


# -- shared helpers ---------------------------------------------------------------------------------

literal_seeds = st.integers(0, 2**16 - 1)


def _literal(draw, category: str) -> str:
    return make_literal(category, draw(literal_seeds))


def _distinct_literal(draw, category: str, other: str) -> str:
    """A second literal of ``category`` that differs from ``other`` (neighbouring seeds first)."""
    seed = draw(literal_seeds)
    for bump in range(1, 9):
        value = make_literal(category, seed + bump)
        if value != other:
            return value
    return other.rstrip("/") + "-2"


def derived_id(seed_text: str, n: int) -> str:
    """A call id for helper calls, shaped like a fact's but never equal to or inside one."""
    digest = hashlib.sha256(f"{seed_text}#{n}".encode()).hexdigest()
    return "call_" + digest[:12]


def _said(role: Role, text: str) -> tuple[Turn, ...]:
    return (Turn(role, text),)


def _without(params: tuple[tuple[str, str], ...], *transient: str) -> dict[str, str]:
    return {k: v for k, v in params if k not in transient}


# -- prohibition: "never B" (sometimes with "use A" in the same turn, and a preference decoy) ---------

def _prohibition_draw(draw, fate: Status):
    category = draw(st.sampled_from(("bucket", "host", "service", "path")))
    lit = _literal(draw, category)
    params = {"category": category}
    if draw(st.booleans()):  # "use A, never B": a binding and a prohibition in one turn
        params["allowed"] = _distinct_literal(draw, category, lit)
    return (lit,), params


def _prohibition_state(spec: FactSpec):
    ph = spec.phrasing
    text = P.pick(P.PROHIBITIONS, ph).format(lit=spec.literals[0])
    allowed = spec.param("allowed")
    if allowed:
        text = P.pick(P.BINDINGS, ph).format(lit=allowed, category=spec.param("category")) + " " + text
    if (ph // len(P.PROHIBITIONS)) % 2:
        text += P.pick(P.PREFERENCE_DECOYS, ph)
    return _said(Role.USER, text)


def _prohibition_companions(spec: FactSpec):
    allowed = spec.param("allowed")
    if not allowed:
        return ()
    return (("allowed", FactKind.LITERAL_BINDING.value, (allowed,), {"category": spec.param("category")}),)


# -- literal binding: "use exactly this bucket / host / version" ---------------------------------------

def _binding_draw(draw, fate: Status):
    category = draw(st.sampled_from(("bucket", "host", "ticket", "version", "service", "path")))
    lit = _literal(draw, category)
    params = {"category": category}
    if fate is Status.SUPERSEDED:
        params["replacement"] = _distinct_literal(draw, category, lit)
    return (lit,), params


def _binding_state(spec: FactSpec):
    return _said(Role.USER, P.pick(P.BINDINGS, spec.phrasing).format(lit=spec.literals[0], category=spec.param("category")))


def _binding_fate(spec: FactSpec):
    text = P.pick(P.BINDING_SUPERSESSIONS, spec.phrasing).format(
        old=spec.literals[0], new=spec.param("replacement"), category=spec.param("category"))
    return _said(Role.USER, text)


# -- threshold: field, operator, number; sometimes restated, sometimes changed ----------------------------

def _bound(spec: FactSpec, value: str, variant: int) -> str:
    return P.pick(P.BOUND_FORMS[spec.param("operator")], variant).format(v=value)


def _threshold_draw(draw, fate: Status):
    field = _literal(draw, "field")
    value = draw(st.integers(1, 64))
    params = {"operator": draw(st.sampled_from(THRESHOLD_OPERATORS))}
    if draw(st.booleans()):
        params["restate"] = "yes"
    if fate is Status.SUPERSEDED:
        params["replacement"] = str(value + draw(st.integers(1, 16)))
    return (field, str(value)), params


def _threshold_state(spec: FactSpec):
    field, value = spec.literals
    text = P.pick(P.THRESHOLD_FRAMES, spec.phrasing).format(field=field, bound=_bound(spec, value, spec.phrasing))
    return _said(Role.USER, text)


def _threshold_restate(spec: FactSpec):
    if spec.param("restate") != "yes":
        return ()
    field, value = spec.literals
    text = P.pick(P.THRESHOLD_RESTATEMENTS, spec.phrasing).format(field=field, bound=_bound(spec, value, spec.phrasing + 2))
    return _said(Role.USER, text)


def _threshold_fate(spec: FactSpec):
    field, old = spec.literals
    new = spec.param("replacement")
    text = P.pick(P.THRESHOLD_SUPERSESSIONS, spec.phrasing).format(
        field=field, old=old, new=new, bound=_bound(spec, new, spec.phrasing + 1))
    return _said(Role.USER, text)


def _field_value_details(spec: FactSpec):
    return {**_without(spec.params, "restate", "replacement"), "field": spec.literals[0], "value": spec.literals[1]}


# -- commitment: a pending action on an object, after a trigger; sometimes fulfilled ------------------

# Commitment noun -> the literal category its object is drawn from.
_OBJECT_CATEGORY = {"migration": "migration", "release": "version", "table": "migration", "key": "service", "change": "ticket"}


def _commitment_draw(draw, fate: Status):
    action, noun, past = draw(st.sampled_from(P.COMMITMENT_ACTIONS))
    trigger = draw(st.sampled_from(P.COMMITMENT_TRIGGERS))
    return (_literal(draw, _OBJECT_CATEGORY[noun]),), {"action": action, "noun": noun, "past": past, "trigger": trigger}


def _commitment_state(spec: FactSpec):
    text = P.pick(P.COMMITMENTS, spec.phrasing).format(
        action=spec.param("action"), noun=spec.param("noun"), lit=spec.literals[0], trigger=spec.param("trigger"))
    return _said(Role.ASSISTANT, text)


def _commitment_fate(spec: FactSpec):
    text = P.pick(P.FULFILMENTS, spec.phrasing).format(past=spec.param("past"), noun=spec.param("noun"), lit=spec.literals[0])
    return _said(Role.ASSISTANT, text)


def _commitment_details(spec: FactSpec):
    return {**dict(spec.params), "object": spec.literals[0]}


# -- in-flight call: a call whose outcome has not come back when compaction fires ---------------------
# No provider accepts a history with an unanswered call followed by other messages, and no runtime sends
# one to its compactor, so a call is in flight the two ways real runtimes have:
# - trailing: the call is the last message when compaction fires; its result comes right after (note 000).
#   The fact's literal is the call id; ``fate_after_cut`` makes expand put a compaction point between them.
# - background: the call is answered at once with a placeholder carrying a job handle, and the outcome
#   arrives later, as a notification or as the result of a poll call. The literal is the job handle.

TRAILING, BACKGROUND = "trailing", "background"


def _call_draw(draw, fate: Status):
    target = _literal(draw, "service")
    mode = draw(st.sampled_from((TRAILING, BACKGROUND))) if fate is Status.RESOLVED else BACKGROUND
    params = {"name": draw(st.sampled_from(P.CALL_TOOLS)), "arguments": json.dumps({"target": target}),
              "parallel": str(draw(st.integers(0, 2))), "mode": mode}
    if mode == TRAILING:
        return (_literal(draw, "call_id"),), params
    job = _literal(draw, "job_id")
    # The job's own call id comes from its handle: a drawn one could equal another fact's call id (two facts
    # drawn alike, as shrinking makes them), and one call id would then stand for two calls.
    params["call_id"] = derived_id(job, 0)
    params["outcome"] = draw(st.sampled_from(("notification", "poll")))
    return (job,), params


def _call_mode(spec: FactSpec) -> str:
    """How the call is in flight; a plan written before modes (no ``mode``) is trailing when it resolves."""
    mode = spec.param("mode")
    if mode:
        return mode
    return TRAILING if spec.fate is Status.RESOLVED else BACKGROUND


def _call_id(spec: FactSpec) -> str:
    """The id of the call that starts it: the literal of a trailing call, a background job's own."""
    return spec.literals[0] if _call_mode(spec) == TRAILING else (spec.param("call_id") or spec.literals[0])


def _siblings(spec: FactSpec) -> tuple[ToolCall, ...]:
    """The calls made in parallel with it, in the same assistant message."""
    call_id = _call_id(spec)
    return tuple(ToolCall(derived_id(call_id, n), spec.param("name"), spec.param("arguments"))
                 for n in range(int(spec.param("parallel", "0"))))


def _sibling_results(spec: FactSpec) -> tuple[Turn, ...]:
    name, ph = spec.param("name"), spec.phrasing
    return tuple(Turn(Role.TOOL, P.pick(P.CALL_RESULTS, ph + n + 1).format(name=name), tool_call_id=s.id)
                 for n, s in enumerate(_siblings(spec)))


def _call_state(spec: FactSpec):
    """The call (with its parallel siblings). A trailing call is the last message when compaction fires,
    its siblings' results still to come with its own (a provider takes the results of one message
    together); a background job is answered at once with its handle, the siblings' results after it."""
    lit, name, ph = spec.literals[0], spec.param("name"), spec.phrasing
    call = ToolCall(_call_id(spec), name, spec.param("arguments"))
    start = Turn(Role.ASSISTANT, P.pick(P.CALL_STARTS, ph).format(name=name), tool_calls=(call, *_siblings(spec)))
    if _call_mode(spec) == TRAILING:
        return (start,)
    accepted = Turn(Role.TOOL, P.pick(P.JOB_ACCEPTED, ph).format(name=name, job=lit), tool_call_id=call.id)
    return (start, accepted, *_sibling_results(spec))


def _call_anchor(spec: FactSpec) -> int:
    """Where it is first in flight: at the call, or at the placeholder that hands over the job handle."""
    return 0 if _call_mode(spec) == TRAILING else 1


def _call_fate(spec: FactSpec):
    lit, name, ph = spec.literals[0], spec.param("name"), spec.phrasing
    if _call_mode(spec) == TRAILING:  # the siblings' results, then its own: where it ends (fate_anchor -1)
        return (*_sibling_results(spec), Turn(Role.TOOL, P.pick(P.CALL_RESULTS, ph).format(name=name), tool_call_id=lit))
    if spec.param("outcome") == "poll":
        poll = ToolCall(derived_id(lit, 1000), P.JOB_POLL, json.dumps({"job": lit}))
        return (Turn(Role.ASSISTANT, "", tool_calls=(poll,)),
                Turn(Role.TOOL, P.pick(P.JOB_OUTCOMES, ph).format(name=name, job=lit), tool_call_id=poll.id))
    return (Turn(Role.USER, P.pick(P.JOB_NOTIFICATIONS, ph).format(name=name, job=lit)),)


def _call_details(spec: FactSpec) -> dict[str, str]:
    details = _without(spec.params, "parallel")
    details["mode"] = _call_mode(spec)
    return details


# -- unresolved error: a tool result carrying an error code; sometimes fixed later -------------------

_EXCEPTIONS = ("TimeoutError", "PermissionError", "ConnectionResetError", "ValueError", "OSError")


def _error_draw(draw, fate: Status):
    return (_literal(draw, "error_code"),), {
        "name": draw(st.sampled_from(P.ERROR_CALLS)),
        "exception": draw(st.sampled_from(_EXCEPTIONS)),
    }


def _error_state(spec: FactSpec):
    lit, name = spec.literals[0], spec.param("name")
    call = ToolCall(derived_id(lit, 0), name, "{}")
    text = P.pick(P.ERROR_RESULTS, spec.phrasing).format(lit=lit, exc=spec.param("exception"), name=name)
    return (Turn(Role.ASSISTANT, "", tool_calls=(call,)), Turn(Role.TOOL, text, tool_call_id=call.id))


def _error_fate(spec: FactSpec):
    text = P.pick(P.ERROR_FIXES, spec.phrasing).format(lit=spec.literals[0], name=spec.param("name"))
    return _said(Role.ASSISTANT, text)


# -- negative fact: an approach rejected, failed or superseded ------------------------------------------

def _negative_draw(draw, fate: Status):
    disposition = draw(st.sampled_from(tuple(P.NEGATIVE_FACTS)))
    return (_literal(draw, "approach"),), {"disposition": disposition}


def _negative_state(spec: FactSpec):
    disposition = spec.param("disposition")
    role = Role.USER if disposition == "rejected" else Role.ASSISTANT
    return _said(role, P.pick(P.NEGATIVE_FACTS[disposition], spec.phrasing).format(lit=spec.literals[0]))


# -- artifact reference: something that already exists and must be reused ------------------------------

def _artifact_draw(draw, fate: Status):
    return (_literal(draw, "path"),), {"what": draw(st.sampled_from(P.ARTIFACT_KINDS))}


def _artifact_state(spec: FactSpec):
    return _said(Role.ASSISTANT, P.pick(P.ARTIFACTS, spec.phrasing).format(lit=spec.literals[0], what=spec.param("what")))


# -- gating field: a config value read before a write it gates -------------------------------------------

def _gating_draw(draw, fate: Status):
    field, values = draw(st.sampled_from(GATING_FIELDS))
    value = draw(st.sampled_from(values))
    params = {"write": draw(st.sampled_from(P.GATING_WRITES))}
    if fate is Status.SUPERSEDED:
        params["replacement"] = next(v for v in values if v != value)
    return (field, value), params


def _gating_state(spec: FactSpec):
    field, value = spec.literals
    call = ToolCall(derived_id(field, 0), "read_file", '{"path": "settings"}')
    config = P.pick(P.GATING_CONFIGS, spec.phrasing).format(field=field, value=value)
    plan = f"Config read. Next I will {spec.param('write')}."
    return (Turn(Role.ASSISTANT, "", tool_calls=(call,)), Turn(Role.TOOL, config, tool_call_id=call.id),
            Turn(Role.ASSISTANT, plan))


def _gating_fate(spec: FactSpec):
    field, old = spec.literals
    text = P.pick(P.GATING_SUPERSESSIONS, spec.phrasing).format(field=field, old=old, new=spec.param("replacement"))
    return _said(Role.USER, text)


_BUILT_IN: dict[str, KindGenerator] = {
    FactKind.PROHIBITION: KindGenerator(_prohibition_draw, _prohibition_state,
                                        details=lambda s: _without(s.params, "allowed"),
                                        companions=_prohibition_companions),
    FactKind.LITERAL_BINDING: KindGenerator(_binding_draw, _binding_state, fate=_binding_fate),
    FactKind.THRESHOLD: KindGenerator(_threshold_draw, _threshold_state, fate=_threshold_fate,
                                      restate=_threshold_restate, details=_field_value_details),
    FactKind.COMMITMENT: KindGenerator(_commitment_draw, _commitment_state, fate=_commitment_fate,
                                       details=_commitment_details),
    FactKind.IN_FLIGHT_CALL: KindGenerator(_call_draw, _call_state, anchor=_call_anchor, fate=_call_fate,
                                           details=_call_details, fate_anchor=-1,
                                           fate_after_cut=lambda s: _call_mode(s) == TRAILING),
    FactKind.UNRESOLVED_ERROR: KindGenerator(_error_draw, _error_state, anchor=1, fate=_error_fate),
    FactKind.NEGATIVE_FACT: KindGenerator(_negative_draw, _negative_state),
    FactKind.ARTIFACT_REFERENCE: KindGenerator(_artifact_draw, _artifact_state),
    FactKind.GATING_FIELD: KindGenerator(_gating_draw, _gating_state, anchor=1, fate=_gating_fate,
                                         details=_field_value_details),
}
