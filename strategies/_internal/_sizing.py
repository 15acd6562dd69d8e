"""Sessions sized to a budget: how many tokens a session's filler holds, and how big its tool results are.

A runtime compacts when its context passes a share of the window (the trigger); a session that never
fills the window tests nothing of a summarizer's behaviour at depth. So a session sized to a budget is
drawn as a number of *windows*: how many times its turns would fill the context up to the trigger if
nothing were compacted. A compactor that keeps everything compacts about once a window; one that
compacts compacts more often. Its tool results are of real size (``_tools.sized_tool_unit``), none over
an eighth of a window: a runtime cuts longer output (Claude Code keeps 25,000 tokens of a tool's output in a
200,000-token window, about an eighth of its window), and a few results that size would fill the window by
themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from harness._base._errors import InvalidArgument
from harness.strategies._internal._tools import OUTPUT_MAX_TOKENS

__all__ = ["Sizing", "DEFAULT_MAX_WINDOWS", "MAX_SIZED_TURNS", "DEFAULT_TRIGGER"]

#: The longest session, in windows, when not told: the reference notes' runs compacted 11 times.
DEFAULT_MAX_WINDOWS = 12
#: The share of the budget at which a runtime compacts, when not told.
DEFAULT_TRIGGER = 0.8
#: The most turns a session sized to a budget may take when ``max_turns`` does not say (a guard, not a size:
#: at 2,000 tokens a window is about 60 turns, at 200,000 about 450).
MAX_SIZED_TURNS = 50_000


@dataclass(frozen=True, slots=True)
class Sizing:
    """How big the sessions of a strategy are: ``min_windows`` to ``max_windows`` windows of ``trigger`` times
    ``budget`` tokens, at most ``max_turns`` turns."""

    budget: int
    trigger: float = DEFAULT_TRIGGER
    min_windows: int = 1
    max_windows: int = DEFAULT_MAX_WINDOWS
    max_turns: int = MAX_SIZED_TURNS

    def __post_init__(self) -> None:
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 1:
            raise InvalidArgument(f"budget={self.budget!r} must be a positive number of tokens")
        if not isinstance(self.trigger, int | float) or isinstance(self.trigger, bool) or not 0 < self.trigger <= 1:
            raise InvalidArgument(f"trigger={self.trigger!r} must be a share of the budget in (0, 1]")
        for name in ("min_windows", "max_windows", "max_turns"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidArgument(f"{name}={value!r} must be an integer >= 1")
        if self.min_windows > self.max_windows:
            raise InvalidArgument(f"Cannot have max_windows={self.max_windows} < min_windows={self.min_windows}")

    @property
    def window(self) -> int:
        """Tokens from an empty context to the trigger."""
        return max(1, round(self.trigger * self.budget))

    @property
    def output_cap(self) -> int:
        """The largest tool result: an eighth of a window, and never over what a runtime keeps of one."""
        return max(1, min(OUTPUT_MAX_TOKENS, self.window // 8))

    def windows(self) -> st.SearchStrategy[int]:
        """How many windows a session spans: half the draws from the upper half of the range, so long sessions
        are common; shrinks towards ``min_windows``."""
        low, high = self.min_windows, self.max_windows
        return st.one_of(st.integers(low, high), st.integers(max(low, high // 2), high))
