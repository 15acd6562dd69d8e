"""A correct rich compactor with no side channel: every tagged obligation stated in prose."""

from __future__ import annotations

from harness._base._protocol import CompactionRequest, CompactionResult
from harness.summarizers._render import prose_result


def summarize(request: CompactionRequest) -> CompactionResult:
    return prose_result(request, self_report=tuple(f.id for f in request.tags))


summarize.compaction_protocol = "rich"
