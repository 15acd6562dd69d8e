"""A correct rich compactor in the spirit of reference 004.

Lossy compression of narrative, lossless compression of obligations: a short
narrative, and every obligation the runtime tagged at write time copied
verbatim into a structured ledger that is never itself summarized.
"""

from __future__ import annotations

from harness._base._model import Fact, FactKind, Role, Turn
from harness._base._protocol import CompactionRequest, CompactionResult, LedgerEntry
from harness.summarizers._render import narrative

_KEPT_DETAILS = {
    FactKind.THRESHOLD: ("operator",),
    FactKind.NEGATIVE_FACT: ("disposition",),
    FactKind.SUPERSESSION: ("field", "old", "operator"),
    FactKind.IN_FLIGHT_CALL: ("name",),
}


def entry_for(fact: Fact) -> LedgerEntry:
    keys = _KEPT_DETAILS.get(fact.kind, ())
    details = tuple((k, v) for k, v in fact.details if k in keys)
    return LedgerEntry(
        kind=fact.kind.value,
        literals=fact.literals,
        polarity=fact.polarity.value if fact.polarity else None,
        status="open",
        details=details,
        fact_id=fact.id,
    )


def summarize(request: CompactionRequest) -> CompactionResult:
    """Narrative plus a verbatim ledger of every tagged obligation."""
    ledger = tuple(entry_for(f) for f in request.tags)
    return CompactionResult(
        (Turn(Role.SYSTEM, narrative(request)),),
        ledger=ledger,
        self_report=tuple(f.id for f in request.tags),
    )


summarize.compaction_protocol = "rich"
