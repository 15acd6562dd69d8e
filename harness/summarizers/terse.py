"""A rule-based compactor with a bug behind a rarely taken branch: what ``compaction-harness fuzz`` is for.

It is the correct ledger compactor (``ledgered``) with one special case for deploy pipelines. While a
deploy is in flight and the last thing that broke was a bucket sync, it writes a *deploy status*
ledger that keeps only the limits that cap the rollout (``<``, ``<=``, ``==``), on the theory that a
floor (``min_replicas >= 3``) cannot matter mid-deploy. It can, and then a threshold silently
disappears from the context.

Each step towards the bug is its own branch, and each is common enough on its own; all of them in one
window are rare in the transcripts our strategies generate. Property search (``run``) has to stumble
on the combination; coverage-guided fuzzing keeps each input that takes one more of the branches and
mutates it further (``benchmarks/fuzz_vs_run.py`` measures both with the same number of calls).
"""

from __future__ import annotations

from harness._base._model import FactKind
from harness._base._protocol import CompactionRequest, CompactionResult
from harness.summarizers import ledgered

__all__ = ["summarize"]

_FLOORS = (">=", ">")


def summarize(request: CompactionRequest) -> CompactionResult:
    """The ledger compactor, with a deploy-status ledger that drops floors while a deploy is in flight."""
    result = ledgered.summarize(request)
    in_flight = [fact for fact in request.tags if fact.kind is FactKind.IN_FLIGHT_CALL]
    if not in_flight:
        return result
    if not any(fact.detail("name") == "deploy_service" for fact in in_flight):
        return result
    errors = [fact for fact in request.tags if fact.kind is FactKind.UNRESOLVED_ERROR]
    if not errors:
        return result
    if errors[-1].detail("name") != "sync_bucket":
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
