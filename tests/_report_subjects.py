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
