"""What each of the shrinker's passes cost and earned, so the passes that do not earn their calls show.

Hypothesis's shrinker keeps its passes small and measured (``ShrinkPass`` counts calls and successes);
ours are the shrinker's moves, each run under a name (``Shrinker._run``) and tallied here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PassTally"]


@dataclass(frozen=True, slots=True)
class PassTally:
    """What one named pass of the shrinker cost and earned over one shrink: how often it ran, the checks
    (sessions judged) and summarizer calls it spent, and how many of its runs changed what is reported (a
    smaller transcript, a lower budget, or the run's own budget restored). ``benchmarks/shrink_passes.py``
    sums them, so a pass that never earns its calls shows."""

    name: str
    runs: int = 0
    checks: int = 0
    calls: int = 0
    successes: int = 0

    def plus(self, other: PassTally) -> PassTally:
        return PassTally(self.name, self.runs + other.runs, self.checks + other.checks, self.calls + other.calls,
                         self.successes + other.successes)
