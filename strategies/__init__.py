"""Hypothesis strategies for long agent transcripts with a ground-truth ledger.

Use them in your own ``@given`` tests::

    from hypothesis import given
    from strategies import transcripts

    @given(transcripts(min_turns=500, max_turns=2000))
    def test_my_summarizer(transcript): ...
"""

from strategies._internal._expand import expand
from strategies._internal._kinds import KindGenerator
from strategies._internal._literals import make_literal
from strategies._internal._skeleton import (
    PRIMARY_KINDS,
    Anchor,
    Cut,
    FactSpec,
    Skeleton,
    skeleton_from_dict,
    skeleton_to_dict,
)
from strategies._internal._strategies import MAX_TURNS_PER_FACT, cuts, facts, skeletons, transcripts

__all__ = [
    "MAX_TURNS_PER_FACT",
    "PRIMARY_KINDS",
    "Anchor",
    "Cut",
    "FactSpec",
    "KindGenerator",
    "Skeleton",
    "cuts",
    "expand",
    "facts",
    "make_literal",
    "skeleton_from_dict",
    "skeleton_to_dict",
    "skeletons",
    "transcripts",
]
