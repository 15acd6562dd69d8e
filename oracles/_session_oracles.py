"""Oracles judged over a whole session of repeated compactions."""

from __future__ import annotations

from collections.abc import Iterator

from harness._base._model import live_facts
from oracles._core import Finding, SessionCase, Severity, oracle

MIN_ROUNDS = 4
GROWTH_FACTOR = 2.0
# A summary under this share of the budget crowds nothing out, however fast it grows from a tiny start.
MIN_SHARE = 0.1


def growth_reason(sizes: list[int], live_counts: list[int], *, min_rounds: int = MIN_ROUNDS,
                  factor: float = GROWTH_FACTOR, floor: float = 0) -> str | None:
    """Why the summary grew without bound, or None.

    Violated when the summary grew in each of at least ``min_rounds``
    consecutive compactions and ended ``factor`` times its size at the start of
    that run, more than the growth of the live ledger explains, and is by then
    at least ``floor`` tokens.
    """
    run_start = 0
    for r in range(1, len(sizes)):
        if sizes[r] <= sizes[r - 1]:
            run_start = r
            continue
        if r - run_start >= min_rounds:
            growth = sizes[r] / max(1, sizes[run_start])
            ledger = max(1, live_counts[r]) / max(1, live_counts[run_start])
            if growth >= factor * ledger and sizes[r] >= floor:
                return (f"the summary grew in {r - run_start} consecutive compactions, {sizes[run_start]} -> "
                        f"{sizes[r]} tokens ({growth:.1f}x) while live obligations went "
                        f"{live_counts[run_start]} -> {live_counts[r]}")
    return None


@oracle("summary-growth", reference="field reports", scope="session")
def summary_growth(case: SessionCase) -> Iterator[Finding]:
    """Across repeated compactions the summary stays bounded instead of growing each round."""
    sizes = [case.count_tokens(result.summary_text) for _, result in case.rounds]
    live = [len(live_facts(case.transcript, boundary)) for boundary, _ in case.rounds]
    reason = growth_reason(sizes, live, floor=MIN_SHARE * case.budget)
    if reason:
        yield Finding("summary-growth", Severity.VIOLATE, reason,
                      expected=f"no {GROWTH_FACTOR:g}x growth over {MIN_ROUNDS} rounds", found=f"{sizes}")
