"""What each kind of obligation is: one definition per kind, read by every layer.

A ``KindDef`` is the single answer to "what is a threshold?": how many literals
it has, its polarity, what may later happen to it, the parameters a planned
one needs, which of its details a correct ledger copies, whether
``literal-verbatim`` judges its literal, and the sentence a correct compactor
states it with. Generation (``strategies``), the bundled compactors
(``harness.summarizers``) and the oracles all read it from here.

How a kind is drawn and written into turns is its ``generator`` (a
``harness.strategies.KindGenerator``); the built-in kinds' generators live with the
strategies, a team's kind carries its own. A team defines a kind with
``define_kind`` in the module it passes to ``--extend``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness._base._errors import InvalidArgument
from harness._base._model import Fact, FactKind, Polarity, Status, normalise_kind
from harness._base._schema import Reader

__all__ = ["KindDef", "define_kind", "undefine_kind", "kind_def", "defined_kinds", "placed_kinds", "read_kind",
           "ending_event", "THRESHOLD_OPERATORS"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

#: The operators a threshold's ``operator`` detail may hold.
THRESHOLD_OPERATORS = ("<=", ">=", "<", ">", "==")


@dataclass(frozen=True, slots=True)
class KindDef:
    """Everything the harness knows about one kind of obligation.

    ``fates`` lists what may happen to a placed fact, OPEN first (shrinking
    prefers it). ``params`` are the keys a planned fact (``FactSpec``) must
    have, and ``literal_count`` how many literals it has. ``ledger_details`` are the detail keys a correct ledger entry keeps.
    ``verbatim``: the ``literal-verbatim`` oracle requires the first literal
    byte-exact. ``statement`` is one sentence carrying the fact by reference.
    ``placed`` is False for kinds that only happen *to* another fact
    (retraction, supersession). ``generator`` tells the strategies how to
    draw and write it; None for the built-in kinds, whose generators ship
    with the strategies. ``judged_by`` names the oracles that judge it
    (``literal-verbatim`` is implied by ``verbatim``): a run warns when a kind
    it generates is judged by none of the selected oracles.
    """

    name: str
    statement: Callable[[Fact], str]
    literal_count: int = 1
    polarity: Polarity | None = None
    fates: tuple[Status, ...] = (Status.OPEN,)
    params: tuple[str, ...] = ()
    ledger_details: tuple[str, ...] = ()
    verbatim: bool = False
    placed: bool = True
    generator: Any = None
    judged_by: tuple[str, ...] = ()

    @property
    def judges(self) -> frozenset[str]:
        """The ids of the oracles that judge this kind."""
        return frozenset(self.judged_by) | ({"literal-verbatim"} if self.verbatim else set())

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InvalidArgument(f"kind name {self.name!r} must be snake_case, like 'approval_gate'")
        if not callable(self.statement):
            raise InvalidArgument(f"kind {self.name!r}: statement must be a function (fact) -> str")
        if isinstance(self.literal_count, bool) or not isinstance(self.literal_count, int) or self.literal_count < 1:
            raise InvalidArgument(f"kind {self.name!r}: literal_count must be an int >= 1, got {self.literal_count!r}")
        if self.polarity is not None and not isinstance(self.polarity, Polarity):
            raise InvalidArgument(f"kind {self.name!r}: polarity must be a Polarity or None, got {self.polarity!r}")
        fates = tuple(self.fates)
        if not fates or fates[0] is not Status.OPEN or not all(isinstance(s, Status) for s in fates):
            raise InvalidArgument(f"kind {self.name!r}: fates must be Status values starting with Status.OPEN, got {fates!r}")
        if len(set(fates)) != len(fates):
            raise InvalidArgument(f"kind {self.name!r}: fates repeat a status: {fates!r}")
        for field in ("params", "ledger_details", "judged_by"):
            value = getattr(self, field)
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise InvalidArgument(f"kind {self.name!r}: {field} must be a tuple of names, got {value!r}")
            object.__setattr__(self, field, tuple(value))
        object.__setattr__(self, "fates", fates)


# The second module-level registry (the oracle registry is the first): teams add their kinds to it.
_KINDS: dict[str, KindDef] = {}


def define_kind(definition: KindDef, *, replace: bool = False) -> KindDef:
    """Register a kind so facts, plans, compactors and oracles accept it; returns it."""
    if not isinstance(definition, KindDef):
        raise InvalidArgument(f"define_kind takes a KindDef, got {definition!r}")
    if definition.name in _KINDS and not replace:
        raise InvalidArgument(f"a kind named {definition.name!r} is already defined; pass replace=True to override it")
    _KINDS[definition.name] = definition
    return definition


def undefine_kind(name: str) -> None:
    """Remove a team's kind (for tests that define temporary ones); built-in kinds stay."""
    if name in {k.value for k in FactKind}:
        raise InvalidArgument(f"{name!r} is a built-in kind and cannot be removed")
    _KINDS.pop(name, None)


def kind_def(kind: str) -> KindDef:
    """The definition of ``kind``; an unknown kind is an error that says how to define it."""
    try:
        return _KINDS[kind]
    except (KeyError, TypeError):
        raise InvalidArgument(
            f"unknown fact kind {kind!r}; defined: {sorted(_KINDS)}. A team's own kind must be defined with "
            "harness.define_kind before facts of it are built or loaded (pass its module with --extend)"
        ) from None


def read_kind(r: Reader, key: str = "kind") -> FactKind | str:
    """A defined kind read from a JSON field, or a ``SchemaError`` naming the field and the choices."""
    name = r.str(key, nonempty=True)
    if name not in _KINDS:
        r.fail(key, f"a defined fact kind (one of {', '.join(sorted(_KINDS))}; a team's own kind is defined "
                    "by the module passed with --extend)", name)
    return normalise_kind(name, key)


def defined_kinds() -> tuple[KindDef, ...]:
    """Every defined kind, built-in ones first, in the order they were defined."""
    return tuple(_KINDS.values())


def placed_kinds() -> tuple[KindDef, ...]:
    """The kinds a plan can place directly (everything but retraction and supersession)."""
    return tuple(k for k in _KINDS.values() if k.placed)


def ending_event(fact: Fact, replacement: str | None = None) -> Fact | None:
    """The retraction or supersession fact that ended ``fact`` (at its fate's turn), or None.

    A supersession of a two-literal kind (field and value) carries the field and
    the new value; of any other kind, the new literal. Its details keep what the
    change is about (``old``, and ``field``, ``operator``, ``category`` where the fact has them). Both
    name what they end: ``target`` its id, ``target_kind`` its kind, so a runtime reading the tags can tell
    a withdrawn prohibition from a withdrawn commitment without looking the target up.
    """
    fate = fact.fate
    if fate.status is Status.RETRACTED:
        return Fact(fate.by or f"{fact.id}.retraction", FactKind.RETRACTION, (fact.literals[0],), fate.turn, None,
                    details=(("target", fact.id), ("target_kind", str(fact.kind))))
    if fate.status is not Status.SUPERSEDED:
        return None
    if not replacement:
        raise InvalidArgument(f"fact {fact.id!r} was superseded: its replacement value is needed")
    if len(fact.literals) == 2:
        literals = (fact.literals[0], replacement)
        details = {"field": fact.literals[0], "old": fact.literals[1], "value": replacement}
        keep = ("operator",)
    else:
        literals, details, keep = (replacement,), {"old": fact.literals[0]}, ("category",)
    details.update({k: fact.detail(k) for k in keep if fact.detail(k)})
    details.update(target=fact.id, target_kind=str(fact.kind))
    return Fact(fate.by or f"{fact.id}.supersession", FactKind.SUPERSESSION, literals, fate.turn,
                kind_def(FactKind.SUPERSESSION).polarity, details=tuple(sorted(details.items())))


# -- the built-in kinds ---------------------------------------------------------------------------
# Each ``statement`` is the sentence the bundled correct compactors write: literals byte-exact,
# negation first-class, one fact per sentence.

def _supersession(fact: Fact) -> str:
    d = fact.detail
    if d("field"):
        return f"{d('field')} {d('operator') or '='} {fact.literals[1]} (changed from {d('old')})."
    return f"Use {fact.literals[0]} now; it replaced {d('old')}."


_BUILT_IN = (
    KindDef(
        FactKind.PROHIBITION.value, lambda f: f"Never use {f.literals[0]}.",
        polarity=Polarity.FORBID, fates=(Status.OPEN, Status.RETRACTED), params=("category",), verbatim=True,
        judged_by=("negation-polarity", "force-kept"),
    ),
    KindDef(
        FactKind.LITERAL_BINDING.value, lambda f: f"Use {f.literals[0]} for the {f.detail('category') or 'target'}.",
        polarity=Polarity.REQUIRE, fates=(Status.OPEN, Status.RETRACTED, Status.SUPERSEDED), params=("category",),
        verbatim=True, judged_by=("force-kept",),
    ),
    KindDef(
        FactKind.THRESHOLD.value, lambda f: f"{f.literals[0]} {f.detail('operator')} {f.literals[1]}.",
        literal_count=2, polarity=Polarity.REQUIRE, fates=(Status.OPEN, Status.RETRACTED, Status.SUPERSEDED),
        params=("operator",), ledger_details=("operator",), judged_by=("threshold-exact", "force-kept"),
    ),
    KindDef(
        FactKind.COMMITMENT.value,
        lambda f: f"Pending: {f.detail('action')} {f.detail('noun')} {f.literals[0]} once {f.detail('trigger')}.",
        polarity=Polarity.REQUIRE, fates=(Status.OPEN, Status.FULFILLED, Status.RETRACTED),
        params=("action", "noun", "past", "trigger"), judged_by=("commitment-retained", "completion-honest", "force-kept"),
    ),
    KindDef(
        FactKind.IN_FLIGHT_CALL.value,
        lambda f: (f"Background job {f.literals[0]} ({f.detail('name')}) is still running: UNRESOLVED."
                   if f.detail("mode") == "background" else
                   f"Tool call {f.literals[0]} ({f.detail('name')}) is still in flight: UNRESOLVED."),
        fates=(Status.OPEN, Status.RESOLVED), params=("name", "arguments"), ledger_details=("name",),
        judged_by=("handle-retained", "closure"),
    ),
    KindDef(
        FactKind.UNRESOLVED_ERROR.value,
        lambda f: f"Unresolved error {f.literals[0]} ({f.detail('exception')}) from {f.detail('name')}.",
        fates=(Status.OPEN, Status.RESOLVED), params=("name", "exception"), judged_by=("error-retained",),
    ),
    KindDef(
        FactKind.NEGATIVE_FACT.value,
        lambda f: f"Approach {f.literals[0]} was {f.detail('disposition')}; do not propose it again.",
        params=("disposition",), ledger_details=("disposition",), judged_by=("negative-fact-disposition", "force-kept"),
    ),
    KindDef(
        FactKind.ARTIFACT_REFERENCE.value, lambda f: f"Existing {f.detail('what')}: {f.literals[0]} (reuse it).",
        params=("what",), verbatim=True, judged_by=("force-kept",),
    ),
    KindDef(
        FactKind.GATING_FIELD.value,
        lambda f: f"Gating config {f.literals[0]}: {f.literals[1]} (holds before we {f.detail('write')}).",
        literal_count=2, polarity=Polarity.REQUIRE, fates=(Status.OPEN, Status.SUPERSEDED), params=("write",),
        judged_by=("gating-field-retained", "force-kept"),
    ),
    KindDef(
        FactKind.RETRACTION.value, lambda f: f"Withdrawn: the earlier rule on {f.literals[0]} no longer applies.",
        placed=False,
    ),
    KindDef(
        FactKind.SUPERSESSION.value, _supersession, polarity=Polarity.REQUIRE, placed=False,
        ledger_details=("field", "old", "operator"), judged_by=("supersession",),
    ),
)
for _definition in _BUILT_IN:
    define_kind(_definition)
