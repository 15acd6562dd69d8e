"""Hypothesis strategies for long agent transcripts with a ground-truth ledger.

Use them in your own ``@given`` tests::

    from hypothesis import given
    from harness.strategies import transcripts

    @given(transcripts(min_turns=500, max_turns=2000))
    def test_my_summarizer(transcript): ...

Besides the ledger, each transcript carries session-level ground truth: the
irreversible tool calls it makes and the facts governing them
(``transcript.effects``, planned by ``EffectSpec``), the rounds from which the
budget tightens (``transcript.tightenings``), and the ``consumers`` you pass.
"""

from harness.strategies._internal._background import Background, load_background
from harness.strategies._internal._expand import expand
from harness.strategies._internal._kinds import KindGenerator
from harness.strategies._internal._literals import make_literal
from harness.strategies._internal._parts import PART_DIALECTS, with_provider_parts
from harness.strategies._internal._sizing import DEFAULT_MAX_WINDOWS, DEFAULT_TRIGGER
from harness.strategies._internal._skeleton import (
    PRIMARY_KINDS,
    Anchor,
    Cut,
    DecoyKind,
    DecoySpec,
    EffectSpec,
    FactSpec,
    Skeleton,
    skeleton_from_dict,
    skeleton_to_dict,
)
from harness.strategies._internal._strategies import (
    MAX_TURNS_PER_DECOY,
    MAX_TURNS_PER_FACT,
    cuts,
    decoys,
    effects,
    facts,
    skeletons,
    transcripts,
)

__all__ = [
    "DEFAULT_MAX_WINDOWS",
    "DEFAULT_TRIGGER",
    "MAX_TURNS_PER_DECOY",
    "MAX_TURNS_PER_FACT",
    "PART_DIALECTS",
    "PRIMARY_KINDS",
    "Anchor",
    "Background",
    "Cut",
    "DecoyKind",
    "DecoySpec",
    "EffectSpec",
    "FactSpec",
    "KindGenerator",
    "Skeleton",
    "cuts",
    "decoys",
    "effects",
    "expand",
    "facts",
    "load_background",
    "make_literal",
    "skeleton_from_dict",
    "skeleton_to_dict",
    "skeletons",
    "transcripts",
    "with_provider_parts",
]
