"""A rule-based compactor with a bug behind a rarely taken branch: what ``compaction-harness fuzz`` is for.

It is the correct ledger compactor (``ledgered``) with one special case for deploy runbooks. When the
oldest live obligation is a deploy still in flight and the next is the error that interrupted it (a
bucket sync that failed), it takes the window for a runbook and leaves the limits out of its ledger, on
the theory that the deploy tool enforces them. It does not, and then every threshold silently
disappears from the context.

Each step towards the bug is its own branch, and each is common enough on its own; all of them in one
window, in that order, are rare in the transcripts our strategies generate. Property search (``run``)
has to stumble on the combination; coverage-guided fuzzing keeps each input that takes one more of
the branches and mutates it further (``benchmarks/fuzz_vs_run.py`` measures both with the same number
of summarizer calls).
"""

from __future__ import annotations

from harness._base._model import FactKind
from harness._base._protocol import CompactionRequest, CompactionResult
from harness.summarizers import ledgered

__all__ = ["summarize"]

def summarize(request: CompactionRequest) -> CompactionResult:
    """The ledger compactor, with a runbook ledger that drops the limits while a deploy is in flight."""
    result = ledgered.summarize(request)
    if len(request.tags) < 2:
        return result
    deploy, interruption = request.tags[0], request.tags[1]
    if deploy.kind is not FactKind.IN_FLIGHT_CALL:
        return result
    if deploy.detail("name") != "deploy_service":
        return result
    if interruption.kind is not FactKind.UNRESOLVED_ERROR:
        return result
    if interruption.detail("name") != "sync_bucket":
        return result
    limits = {fact.id for fact in request.tags if fact.kind is FactKind.THRESHOLD}
    if not limits:
        return result
    return CompactionResult(
        result.messages,
        ledger=tuple(entry for entry in result.ledger if entry.fact_id not in limits),
        self_report=tuple(fact_id for fact_id in result.self_report if fact_id not in limits),
    )


summarize.compaction_protocol = "rich"
