"""A correct rich compactor with no side channel: every tagged obligation stated in prose.

Each tagged call still in flight is also kept as a structured tool call (an
assistant message whose ``tool_calls`` hold it, id, name and arguments as made),
so its result can be re-attached when it arrives; a call whose result arrived is
never in that message. Rich protocol 2's marker, journal and ``verified`` are
added as in ``ledgered`` (``_render.with_protocol2``).
"""

from __future__ import annotations

from harness._base._protocol import CompactionRequest, CompactionResult
from harness.summarizers._render import handle_turn, in_flight_calls, prose_result, with_protocol2


def summarize(request: CompactionRequest) -> CompactionResult:
    result = prose_result(request, kept=handle_turn(in_flight_calls(request), request),
                          self_report=tuple(f.id for f in request.tags))
    return with_protocol2(request, result)


summarize.compaction_protocol = "rich"
