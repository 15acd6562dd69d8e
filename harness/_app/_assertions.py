"""One call for a team's own ``@given`` test: run a session and fail readably on a violation."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from harness._base._compact import compact_once
from harness._base._dialects import DEFAULT_DIALECT, DIALECTS
from harness._base._errors import CompactionViolation, InvalidArgument
from harness._base._model import Transcript
from harness._app.judging._judge import judge_session
from harness._app.calling._loading import may_vary
from harness._app.reports._text import clip
from harness.oracles import DEFAULT_RULES, ProseRules, select

__all__ = ["assert_compaction_holds"]


def assert_compaction_holds(
    summarize: Callable[..., Any],
    transcript: Transcript,
    *,
    protocol: str | None = None,
    budget: int = 2000,
    only: Iterable[str] | None = None,
    skip: Iterable[str] = (),
    rules: ProseRules = DEFAULT_RULES,
    unclear: str = "review",
    dialect: str = DEFAULT_DIALECT,
) -> None:
    """Stream ``transcript`` through ``summarize`` as a long session; raise on any violation.

    Use it inside ``@given(transcripts(...))``; Hypothesis then shrinks the transcript.
    ``protocol`` None means the function's own ``compaction_protocol``, else messages
    (the same rule as the CLI and the plugin). The session is judged by the same
    code as a CLI run (``judge_session``), one violation per invariant and fact
    kind. If the summarizer fails (raises, returns garbage, mutates its input),
    its ``InfraError`` is raised, chained to the original exception, unless
    violations came first: then ``CompactionViolation`` names both. Every request is asked a second
    time, in this process, for the ``deterministic`` oracle (skip it to save the calls); a summarizer
    with ``compaction_may_vary = True`` is only noted. A reading the oracles could not settle is
    never a violation unless ``unclear="fail"``. ``dialect`` is the message shape a
    messages summarizer is called with and answers in (``DIALECTS``: chat, anthropic,
    openai-responses).
    """
    __tracebackhide__ = True  # pytest shows the team's test failing, not our frames and their defaults
    if unclear not in ("review", "fail"):
        raise InvalidArgument(f"unclear={unclear!r}: expected 'review' or 'fail'")
    if dialect not in DIALECTS:
        raise InvalidArgument(f"dialect={dialect!r}: expected one of {', '.join(map(repr, DIALECTS))}")

    def call(request):
        return compact_once(summarize, request, protocol=protocol)

    def again(requests):  # a second answer that fails is the summarizer's failure, raised like the first
        return [call(request) for request in requests]

    ev = judge_session(transcript, call, budget=budget, rules=rules, oracles=select(only=only, skip=skip),
                       ask_again=again, may_vary=may_vary(summarize), dialect=dialect)
    problems = ev.describe()
    if unclear == "fail":
        problems += [f"unclear: {finding.invariant} [{finding.fact_kind or 'structure'}] {finding.detail}"
                     + (f"; context had {finding.found!r}" if finding.found else "")
                     for finding, *_ in ev.unclear.values()]
    if problems:
        if ev.infra is not None:
            problems.append(f"and then the summarizer failed: {ev.infra}")
        raise CompactionViolation("\n".join([*problems, *_turns(transcript)]))
    if ev.infra is not None:
        raise ev.infra


def _turns(transcript: Transcript, *, shown: int = 12) -> list[str]:
    """The transcript as turns (Hypothesis prints the example as the strategy built it, not as a reader wants)."""
    turns = transcript.turns
    lines = [f"the transcript ({len(turns)} turns{f', the first {shown} shown' if len(turns) > shown else ''}):"]
    for index, turn in enumerate(turns[:shown]):
        calls = "".join(f" [calls {c.name} {c.id}]" for c in turn.tool_calls)
        answered = f" [result for {turn.tool_call_id}]" if turn.tool_call_id else ""
        lines.append(f"  [{index}] {turn.role.value}: {clip(turn.text)}{calls}{answered}")
    return lines
