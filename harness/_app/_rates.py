"""Failure rates, and whether two of them differ beyond what chance explains.

A summarizer that varies (a model at a temperature above zero) fails a transcript in some trials and not
in others, so one run finding a failure that another did not says little: the other may simply not have
drawn it. A gate between two runs therefore compares *rates*, how often each failed in how many trials,
with Fisher's exact test (the probability, given how many failures the two had together, that they fall
as unevenly as they did or more so, by chance alone). It makes no assumption about the rates and stays
exact at the handful of trials a model's cost allows.

Every gate tests several failures at once, so each test's threshold is the family's (``FAMILY_ALPHA``)
divided by the number of tests (Bonferroni): over the whole comparison, the chance of calling anything new
or fixed when nothing changed stays below ``FAMILY_ALPHA``. A test that could not reach that threshold
whatever the split (one failure in all, or none) is not counted (Tarone's refinement for discrete tests:
the count stays valid, and a failure never seen does not dilute the others). A difference chance may explain is UNSURE when
one side never failed and the other did (what a presence-only gate would have called new or fixed), and
SHARED when both failed; more trials settle an unsure one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

__all__ = ["FAMILY_ALPHA", "Rate", "Change", "RateVerdict", "judge_rates", "alpha_per_test", "family_threshold"]

#: The chance, over one whole comparison, of calling a failure new or fixed when nothing changed.
FAMILY_ALPHA = 0.01


@dataclass(frozen=True, slots=True)
class Rate:
    """How often a failure showed: ``failed`` of ``of`` trials."""

    failed: int
    of: int

    def __post_init__(self) -> None:
        if not 0 <= self.failed <= self.of:
            raise ValueError(f"a rate of {self.failed} failures in {self.of} trials")

    def plus(self, more: Rate) -> Rate:
        """This rate with ``more`` trials of the same failure added."""
        return Rate(self.failed + more.failed, self.of + more.of)

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        """Wilson's score interval for the true rate (95% at the default ``z``); (0, 1) with no trial."""
        if not self.of:
            return (0.0, 1.0)
        share, n = self.failed / self.of, self.of
        centre = (share + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return (max(0.0, centre - half), min(1.0, centre + half))

    @property
    def text(self) -> str:
        """"3 of 12 (9-53%)": the count, and the 95% interval of the true rate it gives."""
        if not self.of:
            return "none of no trial"
        low, high = self.interval()
        return f"{self.failed} of {self.of} ({100 * low:.0f}-{100 * high:.0f}%)"

    def to_dict(self) -> dict[str, int]:
        return {"failed": self.failed, "of": self.of}


class Change(str, Enum):
    """What happened to one failure between a baseline and another run."""

    NEW = "new"  # fails more often, beyond chance
    FIXED = "fixed"  # fails less often, beyond chance
    UNSURE = "unsure"  # one side never failed, the other did, and chance may explain it: more trials settle it
    SHARED = "shared"  # both fail, at rates chance explains
    ABSENT = "absent"  # neither failed in its trials

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class RateVerdict:
    """The change from ``base`` to ``other``, the two-sided Fisher exact p-value it rests on, and the
    threshold it was held to."""

    change: Change
    base: Rate
    other: Rate
    p_value: float
    alpha: float

    @property
    def text(self) -> str:
        """"failed 12 of 12 trials (76-100%), the baseline 0 of 12 (0-24%); Fisher exact p=7.4e-07 <= 0.0025"."""
        sign = "<=" if self.p_value <= self.alpha else ">"
        return (f"failed {self.other.text} trials, the baseline {self.base.text}; Fisher exact "
                f"p={self.p_value:.2g} {sign} {self.alpha:.2g}")


def alpha_per_test(tests: int) -> float:
    """One test's threshold when a comparison makes ``tests`` of them (Bonferroni)."""
    return FAMILY_ALPHA / max(1, tests)


def family_threshold(tables: Sequence[tuple[Rate, Rate]], *, looks: int = 1) -> tuple[float, int]:
    """Each test's threshold for the comparisons ``tables`` (each a baseline's rate and another's), looked at
    ``looks`` times, and how many tests it counts: the fewest ``m`` such that at most ``m`` of them could
    reach ``FAMILY_ALPHA / (m * looks)`` at all (Tarone)."""
    best = [_best_p(base, other) for base, other in tables]
    for m in range(1, len(tables) + 1):
        if sum(p <= alpha_per_test(m * looks) for p in best) <= m:
            return alpha_per_test(m * looks), m
    return alpha_per_test(max(1, len(tables)) * looks), len(tables)


def _best_p(base: Rate, other: Rate) -> float:
    """The smallest two-sided p-value any split of these failures between the two could give."""
    failed = base.failed + other.failed
    splits = [(failed - k, k) for k in (max(0, failed - base.of), min(failed, other.of))]
    return min(judge_rates(Rate(a, base.of), Rate(b, other.of), alpha=0).p_value for a, b in splits)


def judge_rates(base: Rate, other: Rate, *, alpha: float) -> RateVerdict:
    """NEW or FIXED when Fisher's exact test says the rates differ at ``alpha`` (two-sided), else UNSURE,
    SHARED or ABSENT by who failed at all."""
    more, fewer = _tails(base, other)
    p_value = min(1.0, 2 * min(more, fewer))
    if p_value <= alpha:
        change = Change.NEW if more < fewer else Change.FIXED
    elif base.failed and other.failed:
        change = Change.SHARED
    elif base.failed or other.failed:
        change = Change.UNSURE
    else:
        change = Change.ABSENT
    return RateVerdict(change, base, other, p_value, alpha)


def _tails(base: Rate, other: Rate) -> tuple[float, float]:
    """Fisher's one-sided p-values: that ``other`` has as many failures as it had or more, and as few or fewer,
    given the failures of both together (the hypergeometric distribution of the table's margins)."""
    total, failed, drawn = base.of + other.of, base.failed + other.failed, other.of
    if not base.of or not other.of:
        return (1.0, 1.0)
    low, high = max(0, drawn - (total - failed)), min(drawn, failed)
    whole = math.comb(total, drawn)
    weights = {k: math.comb(failed, k) * math.comb(total - failed, drawn - k) for k in range(low, high + 1)}
    more = sum(w for k, w in weights.items() if k >= other.failed) / whole
    fewer = sum(w for k, w in weights.items() if k <= other.failed) / whole
    return (more, fewer)
