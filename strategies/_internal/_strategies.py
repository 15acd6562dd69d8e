"""The public Hypothesis strategies: ``facts``, ``cuts``, ``decoys``, ``effects``, ``skeletons``, ``transcripts``.

Only the small skeleton is drawn through Hypothesis; ``expand`` builds the
turns. So shrinking acts on what matters: fewer facts, shorter transcripts,
earlier positions, plainer phrasing, simpler literals, no effects, no
tightenings.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from harness._base._errors import InvalidArgument
from harness._base._kinds import defined_kinds, kind_def, placed_kinds
from harness._base._model import Consumer, FactKind, Status, Tightening, Transcript
from harness.strategies._internal._expand import event_turn_count, expand
from harness.strategies._internal._kinds import call_hook, generator_for, has_generator
from harness.strategies._internal._sizing import DEFAULT_MAX_WINDOWS, DEFAULT_TRIGGER, MAX_SIZED_TURNS, Sizing
from harness.strategies._internal._skeleton import Anchor, Cut, DecoyKind, DecoySpec, EffectSpec, FactSpec, Skeleton

__all__ = ["facts", "cuts", "decoys", "effects", "skeletons", "transcripts", "MAX_TURNS_PER_FACT",
           "MAX_TURNS_PER_DECOY", "MAX_TURNS_PER_EFFECT", "TIGHTENING_SHARES", "TIGHTENING_ROUNDS"]

# The most turns one spec can take (gating: call, config, plan; plus its fate).
MAX_TURNS_PER_FACT = 4
# A decoy is one chat turn, or a search call and its result.
MAX_TURNS_PER_DECOY = 2
# An effect is a tool call and its result.
MAX_TURNS_PER_EFFECT = 2
# The budget shares (permille) tightenings are drawn from, each lower than the one before, and the
# compaction rounds they may start at (round 0 is the first compaction, framed at tier 1 anyway).
TIGHTENING_SHARES = (800, 650, 500, 350)
TIGHTENING_ROUNDS = range(1, 7)


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


def decoys(*, kinds: Collection[DecoyKind | str] | None = None) -> st.SearchStrategy[DecoySpec]:
    """Planned decoys: near misses, old and stale values, passing mentions, hypotheticals.

    Each is about one of the skeleton's facts (``target``, taken modulo their number) and is
    placed after it. Shrinks towards the first kind listed (a near miss), the first fact, right
    after its statement, the plainest phrasing.
    """
    if isinstance(kinds, str):
        raise InvalidArgument(f"decoys(kinds=...) takes a list of kinds, got the string {kinds!r}; "
                              f"write kinds=[{kinds!r}]")
    chosen = tuple(DecoyKind) if kinds is None else tuple(kinds)
    try:
        chosen = tuple(DecoyKind(k) for k in chosen)
    except ValueError:
        raise InvalidArgument(f"decoy kinds must be among {[k.value for k in DecoyKind]}, got {kinds!r}") from None
    if not chosen:
        raise InvalidArgument("decoys(kinds=...) needs at least one kind")

    @st.composite
    def _decoys(draw) -> DecoySpec:
        return DecoySpec(
            kind=draw(st.sampled_from(chosen)),
            target=draw(st.integers(0, 15)),
            position=draw(st.integers(0, 1000)),
            variant=draw(st.integers(0, 63)),
            nudge=draw(st.integers(0, 255)),
        )

    return _decoys()


def effects() -> st.SearchStrategy[EffectSpec]:
    """Planned effects: irreversible tool calls (a deploy, a write, a sent message).

    Each is governed by one of the skeleton's facts (``target``, taken modulo their number, or the
    next gating field or prohibition after it) and placed while that fact is live. Shrinks
    towards the first fact, right after its statement, the first action.
    """

    @st.composite
    def _effects(draw) -> EffectSpec:
        return EffectSpec(
            target=draw(st.integers(0, 15)),
            position=draw(st.integers(0, 1000)),
            variant=draw(st.integers(0, 63)),
        )

    return _effects()


def _tightenings(draw, count: int) -> tuple[Tightening, ...]:
    """``count`` tightenings: rounds strictly increasing, shares strictly decreasing.

    Shrinks towards (1, 800), (2, 650)...: the earliest rounds, the mildest shares.
    """
    out = []
    first_round, first_share = TIGHTENING_ROUNDS[0], 0
    for k in range(count):
        left = count - k - 1  # room kept for the ones still to draw
        round_ = draw(st.integers(first_round, TIGHTENING_ROUNDS[-1] - left))
        share = draw(st.integers(first_share, len(TIGHTENING_SHARES) - 1 - left))
        out.append(Tightening(round_, TIGHTENING_SHARES[share]))
        first_round, first_share = round_ + 1, share + 1
    return tuple(out)


def _check_sizes(**sizes: int) -> None:
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidArgument(f"{name}={value!r} must be a non-negative integer")
    most = min(len(TIGHTENING_SHARES), len(TIGHTENING_ROUNDS))
    if sizes["max_tightenings"] > most:
        raise InvalidArgument(f"max_tightenings={sizes['max_tightenings']}; at most {most} (each tightening's share "
                              f"is lower than the one before, from {TIGHTENING_SHARES} permille)")
    for low, high in (("min_turns", "max_turns"), ("min_facts", "max_facts"), ("min_cuts", "max_cuts"),
                      ("min_decoys", "max_decoys"), ("min_effects", "max_effects")):
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
    min_turns: int | None = None,
    max_turns: int | None = None,
    facts: st.SearchStrategy[FactSpec] | None = None,
    min_facts: int = 1,
    max_facts: int = 6,
    cuts: st.SearchStrategy[Cut] | None = None,
    min_cuts: int = 1,
    max_cuts: int = 3,
    decoys: st.SearchStrategy[DecoySpec] | None = None,
    min_decoys: int = 1,
    max_decoys: int = 4,
    background: Any = None,
    effects: st.SearchStrategy[EffectSpec] | None = None,
    min_effects: int = 0,
    max_effects: int = 2,
    max_tightenings: int = 2,
    budget: int | None = None,
    trigger: float = DEFAULT_TRIGGER,
    min_windows: int = 1,
    max_windows: int = DEFAULT_MAX_WINDOWS,
) -> st.SearchStrategy[Skeleton]:
    """Skeletons whose expansion has between ``min_turns`` and ``max_turns`` turns (20 and 400 by default),
    or, with a ``budget``, sessions sized to it.

    Sized by turns, about half of them are drawn from the upper half of that range. Sized to a
    ``budget``, a session spans ``min_windows`` to ``max_windows`` windows (a window: the tokens from an
    empty context to the ``trigger`` share of the budget; about half from the upper half of the range),
    its tool results of real size (tens to thousands of tokens, none over an eighth of a window), and
    ``max_turns`` (default 50,000) caps its turns; ``min_turns`` does not apply. Decoys are planted
    (``min_decoys`` to ``max_decoys``) where ``max_turns`` leaves room, and so are effects
    (``min_effects`` to ``max_effects``: irreversible tool calls, each governed by a gating field
    or prohibition and placed while it is live; left out of a transcript without one). Decoys are
    the first thing left out of a crowded transcript, effects the next, and the minimizer removes
    any its failure does not need. Up to ``max_tightenings`` budget tightenings (at most 4) lower
    the budget from a compaction round on: rounds strictly increasing within 1..6, shares strictly
    decreasing from ``TIGHTENING_SHARES``. ``background`` (a ``Background``, see
    ``load_background``) rejects facts whose literals occur in it.

    Shrinks towards ``min_turns`` (or ``min_windows``), ``min_facts`` simple facts, ``min_cuts`` cuts,
    ``min_decoys`` near misses, ``min_effects`` effects, no tightenings and seed 0.
    """
    sizing = None
    if budget is not None:
        sizing = Sizing(budget, trigger, min_windows, max_windows, MAX_SIZED_TURNS if max_turns is None else max_turns)
        min_turns = max_turns = sizing.max_turns
    min_turns = 20 if min_turns is None else min_turns
    max_turns = 400 if max_turns is None else max_turns
    _check_sizes(min_turns=min_turns, max_turns=max_turns, min_facts=min_facts, max_facts=max_facts,
                 min_cuts=min_cuts, max_cuts=max_cuts, min_decoys=min_decoys, max_decoys=max_decoys,
                 min_effects=min_effects, max_effects=max_effects, max_tightenings=max_tightenings)
    fact_strategy = _default_facts() if facts is None else facts
    cut_strategy = _default_cuts() if cuts is None else cuts
    decoy_strategy = _default_decoys() if decoys is None else decoys
    effect_strategy = _default_effects() if effects is None else effects
    _check_background(background)
    for name, value in (("facts", fact_strategy), ("cuts", cut_strategy), ("decoys", decoy_strategy),
                        ("effects", effect_strategy)):
        if not isinstance(value, st.SearchStrategy):
            raise InvalidArgument(f"{name} must be a strategy, got {value!r}")

    @st.composite
    def _skeletons(draw) -> Skeleton:
        seed = draw(st.integers(0, 2**32 - 1))
        if sizing is None:
            # Half the draws come from the upper half of the range, so a large max_turns really
            # yields long transcripts; shrinking still prefers the first branch and min_turns.
            length = draw(st.one_of(st.integers(min_turns, max_turns),
                                    st.integers(max(min_turns, max_turns // 2), max_turns)))
            tokens = output_cap = 0
        else:
            length, tokens, output_cap = max_turns, draw(sizing.windows()) * sizing.window, sizing.output_cap
        specs = _distinct(draw(st.lists(fact_strategy, min_size=min_facts, max_size=max_facts)), min_facts)
        if background is not None:
            specs = _absent_from(background, specs, min_facts)
        plan = draw(st.lists(cut_strategy, min_size=min_cuts, max_size=max_cuts))
        # How many decoys: shrinks to min_decoys (Hypothesis draws the least count about
        # half the time, so the default of one keeps decoys in most transcripts).
        planted = [draw(decoy_strategy) for _ in range(draw(st.sampled_from(range(min_decoys, max_decoys + 1))))]
        # Effects and tightenings are drawn after everything above, so the choices for facts, cuts
        # and decoys stay where they were; each count shrinks to its least (no effects, no tightenings).
        acts = [draw(effect_strategy) for _ in range(draw(st.integers(min_effects, max_effects)))]
        tightenings = _tightenings(draw, draw(st.integers(0, max_tightenings)))

        def build(length: int) -> Skeleton:
            return Skeleton(seed, length, tuple(specs), tuple(plan), tuple(planted), tuple(acts), tightenings,
                            tokens=tokens, output_cap=output_cap)

        skeleton = build(length)
        needed = event_turn_count(skeleton)
        # A fact strategy of a team's own may take more turns than ours; keep within max_turns,
        # leaving out decoys first, then effects, then facts. One turn stays free: when the events fill the
        # transcript and the first is not the user's, expand opens it with a user message.
        while needed >= max_turns and (planted or acts or len(specs) > min_facts):
            (planted if planted else acts if acts else specs).pop()
            skeleton = build(length)
            needed = event_turn_count(skeleton)
        if needed > length:
            skeleton = build(min(needed, max_turns))
        return skeleton

    return _skeletons()


def _check_background(background: Any) -> None:
    if background is not None and not (callable(getattr(background, "units", None))
                                       and callable(getattr(background, "occurs", None))):
        raise InvalidArgument(f"background must be a Background (strategies.load_background), got {background!r}")


def _absent_from(background: Any, specs: list[FactSpec], min_facts: int) -> list[FactSpec]:
    """Drop specs with a literal the team's logs already contain: the ledger must stay the only source."""
    # A bare number ("3") means nothing alone and is in any log; every other literal must be absent.
    kept = [s for s in specs if not any(background.occurs(lit) for lit in s.stated_literals() if not lit.isdigit())]
    assume(len(kept) >= min_facts)
    return kept


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
    min_turns: int | None = None,
    max_turns: int | None = None,
    facts: st.SearchStrategy[FactSpec] | None = None,
    min_facts: int = 1,
    max_facts: int = 6,
    cuts: st.SearchStrategy[Cut] | None = None,
    min_cuts: int = 1,
    max_cuts: int = 3,
    decoys: st.SearchStrategy[DecoySpec] | None = None,
    min_decoys: int = 1,
    max_decoys: int = 4,
    background: Any = None,
    effects: st.SearchStrategy[EffectSpec] | None = None,
    min_effects: int = 0,
    max_effects: int = 2,
    max_tightenings: int = 2,
    consumers: Sequence[Consumer] = (),
    budget: int | None = None,
    trigger: float = DEFAULT_TRIGGER,
    min_windows: int = 1,
    max_windows: int = DEFAULT_MAX_WINDOWS,
) -> st.SearchStrategy[Transcript]:
    """Long transcripts with a ground-truth ledger, expanded from ``skeletons(...)``.

    Takes the same arguments as ``skeletons`` and shrinks the same way; use
    ``skeletons`` plus ``expand`` when you also want the skeleton (to save it).
    With ``background``, the filler is the team's own logs. Each transcript records its
    effects and tightenings (``Transcript.effects``, ``.tightenings``) and carries
    ``consumers`` (``harness._base._model.Consumer``: who reads the compacted context and
    the invariant classes it relies on), the same for every transcript.
    """
    readers = _check_consumers(consumers)
    strategy = skeletons(
        min_turns=min_turns, max_turns=max_turns, facts=facts, min_facts=min_facts, max_facts=max_facts,
        cuts=cuts, min_cuts=min_cuts, max_cuts=max_cuts, decoys=decoys, min_decoys=min_decoys,
        max_decoys=max_decoys, background=background, effects=effects, min_effects=min_effects,
        max_effects=max_effects, max_tightenings=max_tightenings, budget=budget, trigger=trigger,
        min_windows=min_windows, max_windows=max_windows,
    )
    if not readers:
        return strategy.map(lambda skeleton: expand(skeleton, background=background))
    return strategy.map(lambda skeleton: replace(expand(skeleton, background=background), consumers=readers))


def _check_consumers(consumers: Any) -> tuple[Consumer, ...]:
    if isinstance(consumers, Consumer | str | bytes) or not isinstance(consumers, Sequence):
        raise InvalidArgument(f"consumers must be a sequence of Consumer, got {consumers!r}")
    bad = [c for c in consumers if not isinstance(c, Consumer)]
    if bad:
        raise InvalidArgument(f"consumers must be Consumer instances (harness._base._model.Consumer), got {bad[0]!r}")
    names = [c.name for c in consumers]
    if len(set(names)) != len(names):
        raise InvalidArgument(f"consumer names must be unique, got {names!r}")
    return tuple(consumers)


def _generated_kinds() -> tuple[str, ...]:
    return tuple(d.name for d in defined_kinds() if not d.placed or has_generator(d.name))


def _default_facts() -> st.SearchStrategy[FactSpec]:
    return facts()


def _default_cuts() -> st.SearchStrategy[Cut]:
    return cuts()


def _default_decoys() -> st.SearchStrategy[DecoySpec]:
    return decoys()


def _default_effects() -> st.SearchStrategy[EffectSpec]:
    return effects()
