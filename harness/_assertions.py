"""One call for a team's own ``@given`` test: run a session and fail readably on a violation."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from harness._compact import compact_once
from harness._model import Transcript
from harness._session import SessionConfig, run_session

__all__ = ["CompactionViolation", "assert_compaction_holds"]


class CompactionViolation(AssertionError):
    """A compaction broke an invariant; the message lists each finding with its evidence."""


def assert_compaction_holds(
    summarize: Callable[..., Any],
    transcript: Transcript,
    *,
    protocol: str | None = None,
    budget: int = 2000,
    only: Iterable[str] | None = None,
    skip: Iterable[str] = (),
) -> None:
    """Stream ``transcript`` through ``summarize`` as a long session; raise on any violation.

    Use it inside ``@given(transcripts(...))``; Hypothesis then shrinks the transcript.
    ``protocol`` None means the function's own ``compaction_protocol``, else messages
    (the same rule as the CLI and the plugin).
    """
    from oracles import Case, SessionCase, check, check_session, select

    chosen = select(only=only, skip=skip)
    rounds = run_session(transcript, lambda request: compact_once(summarize, request, protocol=protocol),
                         SessionConfig(budget=budget))
    problems = []
    for rnd in rounds:
        for finding in check(Case(transcript, rnd.boundary, budget, rnd.result), chosen).violations:
            problems.append(f"compaction {rnd.index + 1} (after turn {rnd.boundary}): {finding.invariant}"
                            f" [{finding.fact_kind or 'structure'}] {finding.detail}"
                            + (f"; expected {finding.expected!r}" if finding.expected else "")
                            + (f"; context had {finding.found!r}" if finding.found else ""))
    for finding in check_session(SessionCase(transcript, budget, tuple((r.boundary, r.result) for r in rounds)), chosen):
        problems.append(f"session: {finding.invariant} {finding.detail}")
    if problems:
        raise CompactionViolation("\n".join(problems))
