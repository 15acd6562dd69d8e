"""Plain-prose statements of tagged obligations, shared by the prose compactor and its mutants."""

from __future__ import annotations

from collections.abc import Callable

from harness._base._model import Fact, FactKind, Role, Turn
from harness._base._protocol import CompactionRequest, CompactionResult

__all__ = ["state", "Renderer", "prose_result", "narrative"]

Renderer = Callable[[Fact], str]


def state(fact: Fact) -> str:
    """One sentence that carries ``fact`` by reference: literals byte-exact, negation first-class."""
    d = fact.detail
    lit = fact.literals[0]
    match fact.kind:
        case FactKind.PROHIBITION:
            return f"Never use {lit}."
        case FactKind.LITERAL_BINDING:
            return f"Use {lit} for the {d('category') or 'target'}."
        case FactKind.THRESHOLD:
            return f"{lit} {d('operator')} {fact.literals[1]}."
        case FactKind.COMMITMENT:
            return f"Pending: {d('action')} {d('noun')} {lit} once {d('trigger')}."
        case FactKind.IN_FLIGHT_CALL:
            return f"Tool call {lit} ({d('name')}) is still in flight: UNRESOLVED."
        case FactKind.UNRESOLVED_ERROR:
            return f"Unresolved error {lit} ({d('exception')}) from {d('name')}."
        case FactKind.NEGATIVE_FACT:
            return f"Approach {lit} was {d('disposition')}; do not propose it again."
        case FactKind.ARTIFACT_REFERENCE:
            return f"Existing {d('what')}: {lit} (reuse it)."
        case FactKind.GATING_FIELD:
            return f"Gating config {lit}: {fact.literals[1]} (holds before we {d('write')})."
        case FactKind.SUPERSESSION if d("field"):
            return f"{d('field')} {d('operator') or '='} {fact.literals[1]} (changed from {d('old')})."
        case FactKind.SUPERSESSION:
            return f"Use {lit} now; it replaced {d('old')}."
        case FactKind.RETRACTION:
            return f"Withdrawn: the earlier rule on {lit} no longer applies."
    raise AssertionError(fact.kind)


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
