"""How a command ends: its exit code, and why work stopped before it was done.

Every command decides its exit code with ``exit_code`` and every early stop is a ``Stop``, so a spend
cap, a time limit, an interrupt or a summarizer failure ends ``run``, ``shrink``, ``replay``,
``compare`` and ``fuzz`` alike, and none can say 0 without having judged what it was asked to.
"""

from __future__ import annotations

import enum

__all__ = ["ExitCode", "StopReason", "Stop", "exit_code"]


class ExitCode(enum.IntEnum):
    """The process exit codes of every command (docs/reference/cli.md, "Exit codes")."""

    OK = 0  # everything asked for was judged, and nothing was violated
    VIOLATIONS = 1  # a violation (or, with --unclear fail, an unclear reading); compare: a new failure
    USAGE = 2  # a usage or input error, something the command was given that it could not judge, or an InternalError
    SUMMARIZER = 3  # the summarizer itself failed (and nothing was violated)
    INCOMPLETE = 4  # work stopped before everything was judged (and nothing was violated)


def exit_code(*, violated: bool, summarizer_failed: bool, incomplete: bool, unusable: bool = False) -> ExitCode:
    """The one rule: a violation outranks bad input, which outranks a summarizer failure, which outranks a
    stop; only when none of them holds is it ``OK``."""
    if violated:
        return ExitCode.VIOLATIONS
    if unusable:
        return ExitCode.USAGE
    if summarizer_failed:
        return ExitCode.SUMMARIZER
    return ExitCode.INCOMPLETE if incomplete else ExitCode.OK


class StopReason(enum.StrEnum):
    """Why work ended before it was done, or why what was done judged nothing."""

    INTERRUPTED = "interrupted"  # Ctrl-C, SIGTERM or SIGHUP
    HALTED = "halted"  # stopped by the harness itself (another part of the run ended it)
    MAX_TIME = "max-time"
    MAX_CALLS = "max-calls"
    MAX_TOKENS = "max-tokens"
    CAP_SHARE = "cap-share"  # one failure's share of what a spend cap left
    SHRINK_CALLS = "shrink-calls"  # one failure's --shrink-calls
    TIMEOUTS = "timeouts"  # the summarizer timed out too often while one failure was shrunk
    NOTHING_COMPACTED = "nothing-compacted"  # no transcript reached a compaction: nothing was judged
    FEW_EXAMPLES = "few-examples"  # Hypothesis generated fewer examples than asked
    NOT_REPEATED = "not-repeated"  # fuzz: a finding the summarizer did not show again when judged here

    @property
    def spend_cap(self) -> bool:
        """A run-wide cap on what may be spent (``--max-calls``, ``--max-tokens``)."""
        return self in (StopReason.MAX_CALLS, StopReason.MAX_TOKENS)


class Stop(str):
    """A stop as the reports print it ("--max-calls 3 reached"), carrying its ``reason``.

    A ``str``, so the JSON and text reports write it as they always did; code asks ``reason``, never
    the wording.
    """

    reason: StopReason

    def __new__(cls, reason: StopReason, text: str | None = None) -> Stop:
        stop = super().__new__(cls, text or reason.value)
        stop.reason = StopReason(reason)
        return stop

    def __repr__(self) -> str:
        return f"Stop({self.reason.name}, {str(self)!r})"

    def __reduce__(self):
        return (Stop, (self.reason, str(self)))
