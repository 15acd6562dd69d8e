"""Plain-prose statements of tagged obligations, shared by the prose compactor and its mutants."""

from __future__ import annotations

from collections.abc import Callable

from harness._base._errors import InvalidArgument
from harness._base._kinds import kind_def
from harness._base._model import Fact, Role, Turn
from harness._base._protocol import CompactionRequest, CompactionResult

__all__ = ["state", "Renderer", "prose_result", "narrative"]

Renderer = Callable[[Fact], str]


def state(fact: Fact) -> str:
    """One sentence that carries ``fact`` by reference: its kind's own statement (``KindDef.statement``)."""
    try:
        text = kind_def(fact.kind).statement(fact)
    except Exception as exc:  # a team's statement with a bug: say whose it is
        raise InvalidArgument(f"kind {str(fact.kind)!r}: its KindDef.statement raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(text, str):
        raise InvalidArgument(f"kind {str(fact.kind)!r}: its KindDef.statement returned {text!r}; expected a str")
    return text


def narrative(request: CompactionRequest) -> str:
    calls = sum(len(t.tool_calls) for t in request.turns)
    users = sum(1 for t in request.turns if t.role is Role.USER)
    return f"Summary of {len(request.turns)} earlier turns ({users} from the user, {calls} tool calls)."


def prose_result(request: CompactionRequest, render: Renderer = state, *, extra: str = "", preamble: str = "",
                 kept: tuple[Turn, ...] = (), self_report: tuple[str, ...] | None = None) -> CompactionResult:
    lines = [narrative(request)] + ([preamble] if preamble else [])
    lines += [line for line in (render(f) for f in request.tags) if line]
    if extra:
        lines.append(extra)
    return CompactionResult((Turn(Role.SYSTEM, "\n".join(lines)), *kept), self_report=self_report)
