"""Oracles judged over a whole session of repeated compactions."""

from __future__ import annotations

from collections.abc import Iterator

from harness._base._model import live_facts
from harness._base._tokens import message_tokens
from oracles._core import Finding, SessionCase, Severity, oracle

MIN_ROUNDS = 4
GROWTH_FACTOR = 2.0
# A summary under this share of the budget crowds nothing out, however fast it grows from a tiny start.
MIN_SHARE = 0.1
# A run of growth measured from a summary this small (a forced compaction of a turn or two) proves nothing.
MIN_START_SHARE = 0.05


def growth_reason(sizes: list[int], live_counts: list[int], *, min_rounds: int = MIN_ROUNDS,
                  factor: float = GROWTH_FACTOR, floor: float = 0, start_floor: float = 0) -> str | None:
    """Why the summary grew without bound, or None.

    Violated when the summary grew in each of at least ``min_rounds``
    consecutive compactions and ended ``factor`` times its size at the start of
    that run, more than the growth of the live ledger explains, and is by then
    at least ``floor`` tokens; the run must start from at least ``start_floor`` tokens.
    """
    run_start = 0
    for r in range(1, len(sizes)):
        if sizes[r] <= sizes[r - 1]:
            run_start = r
            continue
        # Growth is measured from the first round of the run that is big enough to matter.
        base = next((i for i in range(run_start, r) if sizes[i] >= start_floor), None)
        if base is not None and r - base >= min_rounds:
            growth = sizes[r] / max(1, sizes[base])
            ledger = max(1, live_counts[r]) / max(1, live_counts[base])
            if growth >= factor * ledger and sizes[r] >= floor:
                return (f"the summary grew in {r - base} consecutive compactions, {sizes[base]} -> "
                        f"{sizes[r]} tokens ({growth:.1f}x) while live obligations went "
                        f"{live_counts[base]} -> {live_counts[r]}")
    return None


@oracle("summary-growth", reference="field reports", scope="session")
def summary_growth(case: SessionCase) -> Iterator[Finding]:
    """Across repeated compactions the summary stays bounded instead of growing each round."""
    # The summary is what the compactor wrote: turns it kept verbatim from the source are the source's.
    verbatim = {(t.role, t.text) for t in case.transcript.turns}
    sizes = [sum(message_tokens(t, case.count_tokens) for t in result.messages if (t.role, t.text) not in verbatim)
             for _, result in case.rounds]
    live = [len(live_facts(case.transcript, boundary)) for boundary, _ in case.rounds]
    reason = growth_reason(sizes, live, floor=MIN_SHARE * case.budget, start_floor=MIN_START_SHARE * case.budget)
    if reason:
        yield Finding("summary-growth", Severity.VIOLATE, reason,
                      expected=f"no {GROWTH_FACTOR:g}x growth over {MIN_ROUNDS} rounds", found=f"{sizes}")
