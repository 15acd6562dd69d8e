"""The project's exception hierarchy, all in one place: one base class, builtin-compatible subclasses.

The CLI prints any of these as ``TypeName: message`` with exit code 2, except
``InfraError``, which is a finding about the summarizer (exit code 3), never a
usage error.
"""

from __future__ import annotations

import difflib

__all__ = ["HarnessError", "SchemaError", "InvalidArgument", "PathError", "SpecError", "MalformedResult",
           "InfraError", "INFRA_KINDS", "CompactionViolation", "DatabaseError"]


class HarnessError(Exception):
    """Base class of every error compaction-harness raises on purpose."""


class SchemaError(HarnessError, ValueError):
    """A document (transcript, skeleton, corpus entry) does not match its schema.

    The message names the source (file or "<document>"), the field path and what
    was expected, so a user can fix the file without reading our code.
    """

    def __init__(self, field: str, expected: str, got: object, *, source: str = "<document>"):
        self.source = source
        self.field = field
        self.expected = expected
        self.got = got
        super().__init__(f"{source}: field {field!r}: expected {expected}, got {_short(got)}")

    @classmethod
    def from_malformed(cls, exc: MalformedResult, *, source: str) -> SchemaError:
        """A ``MalformedResult`` ("WHERE: expected X, got Y") found in a file, as that file's schema error."""
        where, _, problem = str(exc).partition(": ")
        error = cls(where, "", None, source=source)
        error.args = (f"{source}: field {where!r}: {problem}",)
        return error


class InvalidArgument(HarnessError, ValueError):
    """A public function or strategy was called with an argument it cannot accept."""


class PathError(HarnessError, OSError):
    """A path given on the command line (or to a library call) cannot be used as asked.

    Raised before any work starts, so a typo in CI fails at once instead of
    "passing" on an empty directory or losing a finished run's report.
    """


class DatabaseError(HarnessError, ConnectionError):
    """The example database ``--database`` names cannot be used (a Redis that does not answer): raised when
    the run opens it, before any summarizer call."""


class SpecError(HarnessError, ValueError):
    """A ``--summarizer`` (or ``--token-counter``) spec that cannot be loaded."""


class MalformedResult(HarnessError, TypeError):
    """A summarizer returned something that is not a valid post-compaction context."""


#: How a summarizer can fail, as reported: ``exception`` (it raised or exited), ``timeout``,
#: ``malformed`` (not a context), ``oversized`` (over the result size limit), ``mutated-input``,
#: ``crashed`` (its worker process died), ``unavailable`` (a remote summarizer kept refusing: 429, 5xx or a
#: dropped connection after every retry).
INFRA_KINDS = ("exception", "timeout", "malformed", "oversized", "mutated-input", "crashed", "unavailable")


class InfraError(HarnessError, RuntimeError):
    """The summarizer itself failed: it raised, hung, returned garbage or mutated its input.

    ``output`` is the tail of what it printed during the call, when anything.
    """

    def __init__(self, kind: str, message: str, output: str = ""):
        self.kind = kind
        self.message = message
        self.output = output
        super().__init__(f"{kind}: {message}")


class CompactionViolation(AssertionError):
    """A compaction broke an invariant; the message lists each finding with its evidence.

    An ``AssertionError`` rather than a ``HarnessError``: it is a test's verdict about the
    summarizer, raised by ``harness.testing.assert_compaction_holds``.
    """


def _short(value: object, limit: int = 60) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # an int over Python's 4300-digit limit, a list nested too deep, a repr that raises
        return f"<{type(value).__name__} that cannot be shown ({type(exc).__name__})>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def did_you_mean(word: str, choices, *, cutoff: float = 0.6) -> str:
    """" (did you mean 'x'?)" for the choice closest to a misspelled ``word``, or "" when none is close."""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f" (did you mean {near[0]!r}?)" if near else ""
