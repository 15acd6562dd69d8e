"""Summarizers for the report tests: correct ones that go wrong only at a known point of a session.

The prose compactor (harness.summarizers.prose) with one change: it numbers its summaries, reads the
number back from the context it is given, and from its fifth compaction on leaves every prohibition out.
Its survival curve should hold at 100% for four rounds and fall off a cliff at round 5.
"""

from __future__ import annotations

import re

from harness._base._model import FactKind
from harness._base._protocol import CompactionRequest, CompactionResult
from harness.summarizers._render import handle_turn, in_flight_calls, prose_result, state

_NUMBER = re.compile(r"\(compaction (\d+)\)")
CLIFF_ROUND = 5


def forgets_prohibitions_late(request: CompactionRequest) -> CompactionResult:
    n = max((int(m.group(1)) for t in request.turns for m in _NUMBER.finditer(t.text)), default=0) + 1

    def render(fact):
        return "" if n >= CLIFF_ROUND and fact.kind is FactKind.PROHIBITION else state(fact)

    return prose_result(request, render, preamble=f"(compaction {n})", kept=handle_turn(in_flight_calls(request)))


forgets_prohibitions_late.compaction_protocol = "rich"


def raises_sometimes(request: CompactionRequest) -> CompactionResult:
    """The correct prose compactor, except that about one request in twenty raises (the same ones every time,
    chosen by the request's size: a hiccup that a rerun would show again)."""
    if sum(len(t.text) for t in request.turns) % 20 == 0:
        raise RuntimeError("transient hiccup")
    return prose_result(request, kept=handle_turn(in_flight_calls(request)))


raises_sometimes.compaction_protocol = "rich"


def always_raises(request: CompactionRequest) -> CompactionResult:
    """A broken deploy: it never answers."""
    raise RuntimeError("prompt template missing")


always_raises.compaction_protocol = "rich"
