"""A rule-based compactor with a bug behind a rarely taken branch: what ``compaction-harness fuzz`` is for.

It is the correct ledger compactor (``ledgered``) with one special case for deploy runbooks. When the
oldest live obligation is a deploy still in flight and the next is the error that interrupted it (a
bucket sync that failed), it takes the window for a runbook and keeps only the limits that cap the
rollout (``<``, ``<=``, ``==``), on the theory that a floor (``min_replicas >= 3``) cannot matter
mid-deploy. It can, and then a threshold silently disappears from the context.

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

_FLOORS = (">=", ">")


def summarize(request: CompactionRequest) -> CompactionResult:
    """The ledger compactor, with a runbook ledger that drops floors while a deploy is in flight."""
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
    floors = {fact.id for fact in request.tags
              if fact.kind is FactKind.THRESHOLD and fact.detail("operator") in _FLOORS}
    if not floors:
        return result
    return CompactionResult(
        result.messages,
        ledger=tuple(entry for entry in result.ledger if entry.fact_id not in floors),
        self_report=tuple(fact_id for fact_id in result.self_report if fact_id not in floors),
    )


summarize.compaction_protocol = "rich"
