"""The public Hypothesis strategies: ``facts``, ``cuts``, ``skeletons``, ``transcripts``.

Only the small skeleton is drawn through Hypothesis; ``expand`` builds the
turns. So shrinking acts on what matters: fewer facts, shorter transcripts,
earlier positions, plainer phrasing, simpler literals.
"""

from __future__ import annotations

from collections.abc import Collection

from hypothesis import assume
from hypothesis import strategies as st

from harness._base._errors import InvalidArgument
from harness._base._kinds import defined_kinds, kind_def, placed_kinds
from harness._base._model import FactKind, Status, Transcript
from strategies._internal._expand import event_turn_count, expand
from strategies._internal._kinds import call_hook, generator_for, has_generator
from strategies._internal._skeleton import Anchor, Cut, FactSpec, Skeleton

__all__ = ["facts", "cuts", "skeletons", "transcripts", "MAX_TURNS_PER_FACT"]

# The most turns one spec can take (gating: call, config, plan; plus its fate).
MAX_TURNS_PER_FACT = 4


def _plan(kinds: Collection[str]) -> tuple[tuple[str, ...], frozenset[Status]]:
    """Placed kinds to draw and the fates allowed, from a user's ``kinds``."""
    wanted = {str(k) for k in kinds}
    events = {Status.RETRACTED: FactKind.RETRACTION, Status.SUPERSEDED: FactKind.SUPERSESSION}
    placed = placed_kinds()
    fates_of = {d.name: d.fates for d in placed}
    primaries = tuple(d.name for d in placed if d.name in wanted)
    if primaries:
        fates = {s for k in primaries for s in fates_of[k] if s not in events or events[s] in wanted}
        return primaries, frozenset(fates)
    # Only retraction / supersession asked for: place kinds that can undergo them, and make them happen.
    fates = frozenset(s for s, k in events.items() if k in wanted)
    return tuple(d.name for d in placed if fates & set(d.fates)), fates


def facts(
    *,
    kinds: Collection[FactKind | str] | None = None,
    phrasings: st.SearchStrategy[int] | None = None,
) -> st.SearchStrategy[FactSpec]:
    """Planned facts of the given kinds, with Faker literals and varied phrasing.

    By default every defined kind the strategies can write: the built-in ones
    and each of a team's kinds that carries a generator.

    ``kinds`` may include RETRACTION and SUPERSESSION, which happen *to* an
    earlier fact (a threshold that changes, a prohibition withdrawn), and the
    names of a team's own kinds (``harness.define_kind``).
    Shrinks towards the first kind listed, an open fate, the earliest position,
    phrasing 0 and the canonical literal of each category.
    """
    kinds = _generated_kinds() if kinds is None else tuple(kinds)
    if not kinds or not all(isinstance(k, str) for k in kinds):
        raise InvalidArgument(f"kinds must be a non-empty collection of FactKind or kind names, got {kinds!r}")
    for kind in kinds:
        kind_def(kind)  # an unknown name fails here, naming the defined ones
    primaries, fates = _plan(kinds)
    generators = {k: generator_for(k) for k in primaries}
    phrasing_strategy = st.integers(0, 63) if phrasings is None else phrasings
    if not isinstance(phrasing_strategy, st.SearchStrategy):
        raise InvalidArgument(f"phrasings must be a strategy of non-negative ints, got {phrasings!r}")

    # One flat choice of (kind, fate), open fates first: a single draw shrinks
    # better than a fate list whose length depends on the kind drawn before it.
    choices = tuple((k, f) for f in Status for k in primaries if f in kind_def(k).fates and f in fates)

    @st.composite
    def _fact_specs(draw) -> FactSpec:
        kind, fate = draw(st.sampled_from(choices))
        literals, params = call_hook(kind, "draw", generators[kind].draw, draw, fate)
        return FactSpec(
            kind=kind,
            literals=tuple(literals),
            params=tuple(sorted(params.items())),
            phrasing=draw(phrasing_strategy),
            position=draw(st.integers(0, 1000)),
            fate=fate,
            fate_delay=draw(st.integers(0, 1000)) if fate is not Status.OPEN else 0,
        )

    return _fact_specs()


def cuts() -> st.SearchStrategy[Cut]:
    """Compaction cuts, many of them adversarial: just after a fact is stated or
    changes (inside a tool call / result pair, a run of parallel calls, right
    after a retraction). Shrinks towards a cut at the very start."""

    @st.composite
    def _cuts(draw) -> Cut:
        anchor = draw(st.sampled_from((Anchor.FRACTION, Anchor.AFTER_ORIGIN, Anchor.AFTER_FATE)))
        value = draw(st.integers(0, 1000)) if anchor is Anchor.FRACTION else draw(st.integers(0, 15))
        return Cut(anchor, value, draw(st.integers(0, 2)))

    return _cuts()


def _check_sizes(**sizes: int) -> None:
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidArgument(f"{name}={value!r} must be a non-negative integer")
    for low, high in (("min_turns", "max_turns"), ("min_facts", "max_facts"), ("min_cuts", "max_cuts")):
        if sizes[low] > sizes[high]:
            raise InvalidArgument(f"Cannot have {high}={sizes[high]} < {low}={sizes[low]}")
    if sizes["min_turns"] < 1:
        raise InvalidArgument("min_turns=0; a transcript needs at least one turn")
    if sizes["min_facts"] * MAX_TURNS_PER_FACT > sizes["max_turns"]:
        raise InvalidArgument(
            f"max_turns={sizes['max_turns']} cannot hold min_facts={sizes['min_facts']} facts "
            f"(each may take up to {MAX_TURNS_PER_FACT} turns)"
        )


def skeletons(
    *,
    min_turns: int = 20,
    max_turns: int = 400,
    facts: st.SearchStrategy[FactSpec] | None = None,
    min_facts: int = 1,
    max_facts: int = 6,
    cuts: st.SearchStrategy[Cut] | None = None,
    min_cuts: int = 1,
    max_cuts: int = 3,
) -> st.SearchStrategy[Skeleton]:
    """Skeletons whose expansion has between ``min_turns`` and ``max_turns`` turns.

    About half of them are drawn from the upper half of that range.

    Shrinks towards ``min_turns``, ``min_facts`` simple facts, ``min_cuts`` cuts and seed 0.
    """
    _check_sizes(min_turns=min_turns, max_turns=max_turns, min_facts=min_facts, max_facts=max_facts,
                 min_cuts=min_cuts, max_cuts=max_cuts)
    fact_strategy = _default_facts() if facts is None else facts
    cut_strategy = _default_cuts() if cuts is None else cuts
    for name, value in (("facts", fact_strategy), ("cuts", cut_strategy)):
        if not isinstance(value, st.SearchStrategy):
            raise InvalidArgument(f"{name} must be a strategy, got {value!r}")

    @st.composite
    def _skeletons(draw) -> Skeleton:
        seed = draw(st.integers(0, 2**32 - 1))
        # Half the draws come from the upper half of the range, so a large max_turns really
        # yields long transcripts; shrinking still prefers the first branch and min_turns.
        length = draw(st.one_of(st.integers(min_turns, max_turns),
                                st.integers(max(min_turns, max_turns // 2), max_turns)))
        specs = _distinct(draw(st.lists(fact_strategy, min_size=min_facts, max_size=max_facts)), min_facts)
        plan = draw(st.lists(cut_strategy, min_size=min_cuts, max_size=max_cuts))
        skeleton = Skeleton(seed, length, tuple(specs), tuple(plan))
        needed = event_turn_count(skeleton)
        # A fact strategy of a team's own may take more turns than ours; keep within max_turns.
        while needed > max_turns and len(specs) > min_facts:
            specs.pop()
            skeleton = Skeleton(seed, length, tuple(specs), tuple(plan))
            needed = event_turn_count(skeleton)
        if needed > length:
            skeleton = Skeleton(seed, min(needed, max_turns), tuple(specs), tuple(plan))
        return skeleton

    return _skeletons()


def _key_literals(spec: FactSpec) -> set[str]:
    """The literals that identify a fact; two facts sharing one would make the ledger ambiguous."""
    keys = {spec.literals[0]}
    keys.update(v for k, v in spec.params if k in ("allowed", "replacement") and not v.isdigit())
    return keys


def _distinct(specs: list[FactSpec], min_facts: int) -> list[FactSpec]:
    """Drop later specs that reuse an earlier one's identifying literal (same bucket, same field)."""
    seen: set[str] = set()
    out = []
    for spec in specs:
        keys = _key_literals(spec)
        if keys & seen:
            continue
        seen |= keys
        out.append(spec)
    assume(len(out) >= min_facts)
    return out


def transcripts(
    *,
    min_turns: int = 20,
    max_turns: int = 400,
    facts: st.SearchStrategy[FactSpec] | None = None,
    min_facts: int = 1,
    max_facts: int = 6,
    cuts: st.SearchStrategy[Cut] | None = None,
    min_cuts: int = 1,
    max_cuts: int = 3,
) -> st.SearchStrategy[Transcript]:
    """Long transcripts with a ground-truth ledger, expanded from ``skeletons(...)``.

    Takes the same arguments as ``skeletons`` and shrinks the same way; use
    ``skeletons`` plus ``expand`` when you also want the skeleton (to save it).
    """
    return skeletons(
        min_turns=min_turns, max_turns=max_turns, facts=facts, min_facts=min_facts, max_facts=max_facts,
        cuts=cuts, min_cuts=min_cuts, max_cuts=max_cuts,
    ).map(expand)


def _generated_kinds() -> tuple[str, ...]:
    return tuple(d.name for d in defined_kinds() if not d.placed or has_generator(d.name))


def _default_facts() -> st.SearchStrategy[FactSpec]:
    return facts()


def _default_cuts() -> st.SearchStrategy[Cut]:
    return cuts()
