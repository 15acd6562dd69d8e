"""When work must stop: the run's deadline, an interrupt, the spend caps, and one failure's shrink allowance.

Every stop is a ``Stop`` (``harness._app._outcome``), so each command reports it the same way.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from harness._base._errors import InfraError
from harness._base._protocol import CompactionRequest, CompactionResult
from harness._app._outcome import Stop, StopReason
from harness._app.calling._summarizer import Summarizer
from harness._app.judging._judge import StopJudging
from harness._app.running._options import (DEFAULT_SHRINK_CALLS, FAST_CALL_SECONDS, FAST_SECONDS_PER_KTOKEN,
                                           FAST_SHRINK_CALLS, Limits)

__all__ = ["Budget", "asker", "SHRINK_RESERVE", "SHRINK_TIMEOUTS"]

#: Timeouts one failure's shrinking may meet before it stops (each costs a whole --timeout).
SHRINK_TIMEOUTS = 3
#: Under --max-calls, the calls exploration leaves for each distinct failure found so far (shrinking and the
#: trials that confirm it; each failure's shrinking spends its equal share of what is left, less what its
#: trials will cost: --trials times the rounds its transcript takes to fail).
SHRINK_RESERVE = 40


class Budget:
    """When work must stop: the run's deadline, an interrupt, the spend caps, and the current failure's
    shrink allowance (new calls, and timeouts: each costs a whole ``--timeout``, so a summarizer that hangs
    now and then would otherwise make shrinking last hours).

    Under ``--max-calls`` (or ``--max-tokens``), exploration stops while ``SHRINK_RESERVE`` calls per
    failure found so far are left; each failure's shrinking may then spend its equal share of what is
    left (never more than ``--shrink-calls``); trials use what remains after that. Without
    ``--shrink-calls``, the allowance is chosen by the summarizer's speed (``shrink_allowance``).
    """

    def __init__(self, limits: Limits, summarizer: Summarizer):
        self._deadline = time.monotonic() + limits.max_time if limits.max_time else None
        self._max_time = limits.max_time
        self._given_shrink_calls = limits.shrink_calls
        self._shrink_calls = limits.shrink_calls or DEFAULT_SHRINK_CALLS
        self._max_calls = limits.max_calls
        self._max_tokens = limits.max_tokens
        self._trial_reserve = 0  # calls the current failure's trials will need (its trials x its failing round)
        self._summarizer = summarizer
        self._calls_at_start: int | None = None
        self._allowance = self._shrink_calls
        self._timeouts = 0
        self._reserve = 0  # calls exploration must leave (SHRINK_RESERVE per failure found)
        self._halted = False  # exploration ended early: sessions still running in other threads stop
        self.stopped: Stop | None = None  # why the run stopped early (a deadline, an interrupt), for the report
        self.cap_reached: Stop | None = None  # which spend cap ended or limited work

    @property
    def ended(self) -> Stop | None:
        """Why judging ended before it was done, if it did: a run-wide stop, or a spend cap."""
        return self.stopped or self.cap_reached

    def interrupt(self) -> None:
        self.stopped = self.stopped or Stop(StopReason.INTERRUPTED)

    def halt_sessions(self, halted: bool) -> None:
        self._halted = halted

    def reserve_for(self, failures: int) -> None:
        self._reserve = SHRINK_RESERVE * failures

    def shrink_allowance(self) -> int:
        """``--shrink-calls``, or when not given, the default for the summarizer's speed so far: a summarizer
        answering in under ``FAST_CALL_SECONDS`` a call, or ``FAST_SECONDS_PER_KTOKEN`` per thousand tokens it
        was handed, may spend ``FAST_SHRINK_CALLS``."""
        if self._given_shrink_calls is not None:
            return self._given_shrink_calls
        stats = self._summarizer.stats
        if not stats.latencies:
            return DEFAULT_SHRINK_CALLS
        per_ktoken = sum(stats.latencies) / max(1.0, stats.handed_tokens / 1000)
        fast = statistics.median(stats.latencies) < FAST_CALL_SECONDS or per_ktoken < FAST_SECONDS_PER_KTOKEN
        return FAST_SHRINK_CALLS if fast else DEFAULT_SHRINK_CALLS

    @property
    def allowance(self) -> int:
        """The calls the current (or last) failure's shrinking was allowed."""
        return self._allowance

    def start_shrinking(self, failures_left: int = 1) -> None:
        """A new failure's allowance: ``--shrink-calls`` (or the default for the summarizer's speed), or its
        share of what the caps leave."""
        self._calls_at_start = self._summarizer.calls
        self._timeouts = 0
        self._shrink_calls = self._allowance = self.shrink_allowance()
        self._trial_reserve = 0
        left = self._calls_left()
        if left is not None:  # the trials that confirm it come out of its share too (see keep_for_trials)
            self._allowance = min(self._allowance, left // max(1, failures_left))

    def keep_for_trials(self, calls: int) -> None:
        """Under a spend cap, what the current failure's trials will cost: shrinking leaves it unspent."""
        self._trial_reserve = calls

    def end_shrinking(self) -> None:
        """Trials next: only the run-wide limits apply."""
        self._calls_at_start = None

    def _calls_left(self) -> int | None:
        """New calls the caps still allow (tokens converted at this run's mean per call), or None without caps."""
        left = self._limits()
        return None if not left else max(0, min(left.values()))

    def _limits(self) -> dict[Stop, int]:
        """Calls left under each spend cap, by the stop it would be."""
        stats = self._summarizer.stats
        left = {}
        if self._max_calls is not None:
            left[Stop(StopReason.MAX_CALLS, f"--max-calls {self._max_calls} reached")] = self._max_calls - stats.calls
        if self._max_tokens is not None and stats.usage_known and stats.calls:
            per_call = max(1, stats.tokens // stats.calls)
            left[Stop(StopReason.MAX_TOKENS, f"--max-tokens {self._max_tokens} reached")] = \
                (self._max_tokens - stats.tokens) // per_call
        return left

    def _nearest_cap(self) -> Stop:
        left = self._limits()
        return min(left, key=left.get)

    def shrink_calls(self) -> int:
        return self._summarizer.calls - (self._calls_at_start or 0)

    def check(self) -> Stop | None:
        """Why to stop now, or None. Run-wide reasons stick; the shrink allowance is per failure."""
        if self.stopped is None and self._deadline is not None and time.monotonic() >= self._deadline:
            self.stopped = Stop(StopReason.MAX_TIME, f"--max-time {self._max_time:g} s reached")
        if self.stopped is not None:
            return self.stopped
        left = self._calls_left()
        shrinking = self._calls_at_start is not None
        if left is not None and left <= (self._trial_reserve if shrinking else self._reserve):
            self.cap_reached = self.cap_reached or self._nearest_cap()
            return self.cap_reached
        if not shrinking:
            return None
        kept = self._trial_reserve if left is not None else 0
        if self.shrink_calls() >= self._allowance - kept:
            if self._allowance < self._shrink_calls:
                cap = str(self._nearest_cap()).removesuffix(" reached")
                return Stop(StopReason.CAP_SHARE, f"its share of what {cap} left spent")
            chosen = "" if self._given_shrink_calls is not None else " (the default for its speed)"
            return Stop(StopReason.SHRINK_CALLS, f"--shrink-calls {self._shrink_calls} spent{chosen}")
        if self._timeouts >= SHRINK_TIMEOUTS:
            return Stop(StopReason.TIMEOUTS, f"the summarizer timed out {self._timeouts} times while shrinking")
        return None

    def metered(self, summarize: Callable[[CompactionRequest], CompactionResult]):
        """``summarize``, refusing to start a call once the budget is spent."""
        def call(request: CompactionRequest) -> CompactionResult:
            if self._halted or self.check() is not None:
                raise StopJudging
            calls = self._summarizer.calls
            try:
                return summarize(request)
            except KeyboardInterrupt:  # SIGINT, or SIGTERM as the CLI maps it: stop, keep what was found
                self.interrupt()
                raise StopJudging from None
            except InfraError as exc:
                if exc.kind == "timeout" and self._summarizer.calls > calls:  # a fresh one, not a cached one
                    self._timeouts += 1
                raise
        return call


def asker(summarizer: Summarizer, budget: Budget):
    """What ``judge_session`` asks a session's requests again with: a restarted worker, within the budget."""
    def ask(requests):
        if budget.check() is not None:
            raise StopJudging
        return summarizer.ask_fresh(requests)
    return ask

