"""The skeleton: the small, shrinkable plan a transcript is expanded from.

Hypothesis draws only this (facts, their literals, positions, fates, decoys,
effects, budget tightenings, length, compaction cuts, one seed); ``expand`` turns
it into thousands of turns. It
serialises to a few hundred bytes of JSON (``skeleton_to_dict``), handy for a
team's own fixtures; corpora store the expanded, minimized transcript instead,
since shrinking removes turns no skeleton describes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from harness._base._errors import InvalidArgument
from harness._base._kinds import kind_def, placed_kinds, read_kind
from harness._base._model import FactKind, Status, Tightening, normalise_kind
from harness._base._schema import Reader

__all__ = [
    "SKELETON_VERSION",
    "PRIMARY_KINDS",
    "Anchor",
    "Cut",
    "FactSpec",
    "DecoyKind",
    "DecoySpec",
    "EffectSpec",
    "Skeleton",
    "skeleton_to_dict",
    "skeleton_from_dict",
]

SKELETON_VERSION = 4
# Version 1 had no decoys, version 2 no effects or tightenings, version 3 no size in tokens; all still read,
# as skeletons without them (and keep their version, so they write back as they were).
_READABLE_VERSIONS = (1, 2, 3, 4)
# The lists each version may carry beyond facts and cuts, and the version that introduced each.
_SINCE = {"decoys": 2, "effects": 3, "tightenings": 3}
# The sizes version 4 added: a session's filler in tokens and the largest tool result, 0 when sized by turns.
_SIZES_SINCE = 4

# The built-in kinds a spec can place directly, in the order the default strategy
# offers them. Retractions and supersessions happen *to* one of these, so they
# appear as fates instead. What each kind allows is its ``harness.KindDef``.
PRIMARY_KINDS = tuple(FactKind(k.name) for k in placed_kinds() if k.name in {b.value for b in FactKind})


class Anchor(StrEnum):
    """Where a compaction cut is placed: at a fraction, or just after a fact's event."""

    FRACTION = "fraction"
    AFTER_ORIGIN = "after_origin"
    AFTER_FATE = "after_fate"


@dataclass(frozen=True, slots=True)
class Cut:
    """A compaction point. ``value`` is permille for FRACTION, else a fact index (mod count)."""

    anchor: Anchor
    value: int = 0
    offset: int = 0

    def __post_init__(self) -> None:
        if self.value < 0 or self.offset < 0:
            raise InvalidArgument(f"cut value and offset must be >= 0, got {self.value}, {self.offset}")
        if self.anchor is Anchor.FRACTION and self.value > 1000:
            raise InvalidArgument(f"a fraction cut's value is permille, 0..1000, got {self.value}")


@dataclass(frozen=True, slots=True)
class FactSpec:
    """One planned fact: what it is, its literals, and when things happen to it.

    ``position`` (permille of the filler) says where it is stated;
    ``fate_delay`` (permille of the filler left after it) says when its fate
    happens. ``params`` holds kind-specific words, sorted (key, value) pairs.
    """

    kind: FactKind | str
    literals: tuple[str, ...]
    params: tuple[tuple[str, str], ...] = ()
    phrasing: int = 0
    position: int = 0
    fate: Status = Status.OPEN
    fate_delay: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", normalise_kind(self.kind, "FactSpec"))
        definition = kind_def(self.kind)
        if not definition.placed:
            raise InvalidArgument(f"kind={definition.name!r} is not placed directly; use it as a fate of a primary kind")
        if self.fate not in definition.fates:
            allowed = ", ".join(s.value for s in definition.fates)
            raise InvalidArgument(f"a {definition.name} cannot have fate={self.fate.value!r}; expected one of {allowed}")
        want = definition.literal_count
        if len(self.literals) != want or not all(self.literals):
            raise InvalidArgument(f"a {definition.name} needs {want} non-empty literal(s), got {self.literals!r}")
        keys = dict(self.params)
        if list(self.params) != sorted(keys.items()):
            raise InvalidArgument("params must be unique keys in sorted order")
        missing = [k for k in definition.params if k not in keys]
        if self.fate is Status.SUPERSEDED and "replacement" not in keys:
            missing.append("replacement")
        if missing:
            raise InvalidArgument(f"a {definition.name} needs params {missing}")
        for name in ("phrasing", "position", "fate_delay"):
            value = getattr(self, name)
            if value < 0 or (name != "phrasing" and value > 1000):
                raise InvalidArgument(f"{name}={value} is out of range (0..1000 permille; phrasing >= 0)")

    def param(self, key: str, default: str = "") -> str:
        return dict(self.params).get(key, default)

    def stated_literals(self) -> tuple[str, ...]:
        """Every literal the transcript will state for this fact: its own, an allowed value, a replacement."""
        return (*self.literals, *(v for k, v in self.params if k in ("allowed", "replacement")))


class DecoyKind(StrEnum):
    """What a decoy is: text that looks like an obligation's literal and binds nothing.

    - NEAR_MISS: the same shape with other characters (``0866_image_son`` beside ``0865_image_son``);
    - OLD_VALUE: another value of a threshold's or gating field's field, as history;
    - STALE: a superseded value mentioned again after the change;
    - PASSING: a retracted, fulfilled or resolved obligation's literal mentioned again in passing;
    - HYPOTHETICAL: a new identifier of the same kind in a sentence that binds nothing ("if we ever...").

    A decoy is about the drawn fact, or the next one its kind fits; when no fact fits (a STALE
    decoy and nothing superseded) it is written as a NEAR_MISS. It is left out only when no value
    clear of the ledger's literals exists.
    """

    NEAR_MISS = "near_miss"
    OLD_VALUE = "old_value"
    STALE = "stale"
    PASSING = "passing"
    HYPOTHETICAL = "hypothetical"


@dataclass(frozen=True, slots=True)
class DecoySpec:
    """One planned decoy about fact ``target`` (an index, taken modulo the number of facts).

    ``position`` (permille) places it in the filler after the target is stated (after its fate,
    for STALE and PASSING); ``variant`` picks the phrasing; ``nudge`` picks which characters
    a near miss changes and which other value an old one had.
    """

    kind: DecoyKind
    target: int = 0
    position: int = 0
    variant: int = 0
    nudge: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.kind, DecoyKind):
            raise InvalidArgument(f"DecoySpec kind={self.kind!r}; expected one of {[k.value for k in DecoyKind]}")
        for name in ("target", "position", "variant", "nudge"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgument(f"DecoySpec {name}={value!r} must be an int >= 0")
        if self.position > 1000:
            raise InvalidArgument(f"DecoySpec position={self.position} is permille, 0..1000")


@dataclass(frozen=True, slots=True)
class EffectSpec:
    """One planned effect: an irreversible tool call (a deploy, a write, a sent message).

    It is governed by fact ``target`` (an index, taken modulo the number of facts) when that is a
    gating field or a prohibition, else by the next fact that is one; with none, it is left out.
    ``position`` (permille) places it in the span where the governing fact is live, after the
    fact is stated (for a gating field, after the plan its config read leads to) and before its
    fate; ``variant`` picks the action (``deploy_service``, ``write_file``, ``send_message``...).
    """

    target: int = 0
    position: int = 0
    variant: int = 0

    def __post_init__(self) -> None:
        for name in ("target", "position", "variant"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgument(f"EffectSpec {name}={value!r} must be an int >= 0")
        if self.position > 1000:
            raise InvalidArgument(f"EffectSpec position={self.position} is permille, 0..1000")


@dataclass(frozen=True, slots=True)
class Skeleton:
    """Everything a transcript is expanded from. ``length`` is the target turn count.

    ``effects`` plan irreversible tool calls governed by facts; ``tightenings`` (copied to the
    transcript) lower the budget from a compaction round on. A session sized to a budget has
    ``tokens``: its filler is drawn until it holds that many tokens, ``length`` then only the most
    turns it may take; and ``output_cap``: its tool results are of real size (tens to thousands of
    tokens), none over the cap. ``version`` is the skeleton schema version it was written for: a
    version 1 skeleton has no decoys, a version 2 one no effects or tightenings, a version 3 one no
    sizes.
    """

    seed: int
    length: int
    facts: tuple[FactSpec, ...] = ()
    cuts: tuple[Cut, ...] = ()
    decoys: tuple[DecoySpec, ...] = ()
    effects: tuple[EffectSpec, ...] = ()
    tightenings: tuple[Tightening, ...] = ()
    version: int = SKELETON_VERSION
    tokens: int = 0
    output_cap: int = 0

    def __post_init__(self) -> None:
        if self.length < 1:
            raise InvalidArgument(f"length={self.length}; a transcript needs at least one turn")
        for name in ("tokens", "output_cap"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgument(f"Skeleton {name}={value!r} must be an int >= 0")
            if value and self.version < _SIZES_SINCE:
                raise InvalidArgument(f"a version {self.version} skeleton has no {name} (sizes came in version "
                                      f"{_SIZES_SINCE})")
        if self.version not in _READABLE_VERSIONS:
            raise InvalidArgument(f"Skeleton version={self.version!r}; expected one of {list(_READABLE_VERSIONS)}")
        for name, cls in (("effects", EffectSpec), ("tightenings", Tightening)):
            bad = [x for x in getattr(self, name) if not isinstance(x, cls)]
            if bad:
                raise InvalidArgument(f"Skeleton {name} must be {cls.__name__}s, got {bad[0]!r}")
        for name, since in _SINCE.items():
            if getattr(self, name) and self.version < since:
                raise InvalidArgument(f"a version {self.version} skeleton has no {name} (they came in version {since})")
        rounds = [t.round for t in self.tightenings]
        if rounds != sorted(set(rounds)):
            raise InvalidArgument(f"Skeleton tightenings must be in strictly increasing round order, got {rounds!r}")


def skeleton_to_dict(skeleton: Skeleton) -> dict[str, Any]:
    """The skeleton as JSON-ready data, in the schema of its ``version`` (only the lists that version has)."""
    out = {
        "schema_version": skeleton.version,
        "seed": skeleton.seed,
        "length": skeleton.length,
        "facts": [
            {
                "kind": str(f.kind),
                "literals": list(f.literals),
                "params": dict(f.params),
                "phrasing": f.phrasing,
                "position": f.position,
                "fate": f.fate.value,
                "fate_delay": f.fate_delay,
            }
            for f in skeleton.facts
        ],
        "cuts": [{"anchor": c.anchor.value, "value": c.value, "offset": c.offset} for c in skeleton.cuts],
        "decoys": [{"kind": d.kind.value, "target": d.target, "position": d.position, "variant": d.variant,
                    "nudge": d.nudge} for d in skeleton.decoys],
        "effects": [{"target": e.target, "position": e.position, "variant": e.variant} for e in skeleton.effects],
        "tightenings": [{"round": t.round, "share": t.share} for t in skeleton.tightenings],
    }
    for name, since in _SINCE.items():
        if skeleton.version < since:
            del out[name]
    if skeleton.version >= _SIZES_SINCE:
        out.update(tokens=skeleton.tokens, output_cap=skeleton.output_cap)
    return out


def skeleton_from_dict(data: Any, *, source: str = "<document>") -> Skeleton:
    """Inverse of ``skeleton_to_dict``; raises SchemaError naming the bad field.

    Versions 1 and 2 read as skeletons of that version (without effects and tightenings; a
    version 1 one without decoys); a list of a later version in an older document must be
    empty. A version 3 document lists every part (facts, cuts, decoys, effects, tightenings),
    even when empty: one without them was written for an older version.
    """
    r = Reader(data, source=source)
    version = r.int("schema_version")
    if version not in _READABLE_VERSIONS:
        r.fail("schema_version", f"one of {list(_READABLE_VERSIONS)} (this release reads those)", version)
    if version >= 3:
        for key in ("facts", "cuts", *_SINCE):
            if key not in data:
                r.fail(key, f"a list (every schema_version {version} skeleton lists its {key}, even when empty)",
                       "nothing")
    for key, since in _SINCE.items():
        if version < since and data.get(key):
            r.fail(key, f"no {key} (schema_version {version} has none; they came in version {since})", data[key])
    specs = tuple(
        f.wrap(
            FactSpec,
            read_kind(f),
            f.str_list("literals", nonempty_items=True),
            tuple(sorted(f.str_map("params").items())),
            f.int("phrasing", default=0, minimum=0),
            f.int("position", default=0, minimum=0),
            f.enum("fate", Status, default=Status.OPEN),
            f.int("fate_delay", default=0, minimum=0),
        )
        for f in r.children("facts", default=[])
    )
    cuts = tuple(
        c.wrap(Cut, c.enum("anchor", Anchor), c.int("value", default=0), c.int("offset", default=0))
        for c in r.children("cuts", default=[])
    )
    decoys = tuple(
        d.wrap(DecoySpec, d.enum("kind", DecoyKind), d.int("target", default=0, minimum=0),
               d.int("position", default=0, minimum=0), d.int("variant", default=0, minimum=0),
               d.int("nudge", default=0, minimum=0))
        for d in r.children("decoys", default=[])
    )
    effects = tuple(
        e.wrap(EffectSpec, e.int("target", default=0, minimum=0), e.int("position", default=0, minimum=0),
               e.int("variant", default=0, minimum=0))
        for e in r.children("effects", default=[])
    )
    tightenings = tuple(
        t.wrap(Tightening, t.int("round", minimum=0), t.int("share", minimum=1))
        for t in r.children("tightenings", default=[])
    )
    rounds = [t.round for t in tightenings]
    if rounds != sorted(set(rounds)):
        r.fail("tightenings", "rounds in strictly increasing order", rounds)
    for key in ("tokens", "output_cap"):
        if version < _SIZES_SINCE and data.get(key):
            r.fail(key, f"no {key} (schema_version {version} has none; sizes came in version {_SIZES_SINCE})",
                   data[key])
    sizes = (r.int("tokens", default=0, minimum=0), r.int("output_cap", default=0, minimum=0)) \
        if version >= _SIZES_SINCE else (0, 0)
    return r.wrap(Skeleton, r.int("seed", minimum=0), r.int("length", minimum=1), specs, cuts, decoys, effects,
                  tightenings, version, *sizes)


def dumps_skeleton(skeleton: Skeleton) -> str:
    return json.dumps(skeleton_to_dict(skeleton), sort_keys=True)
