"""A correct rich compactor in the spirit of reference 004.

Lossy compression of narrative, lossless compression of obligations: a short
narrative, and every obligation the runtime tagged at write time copied
verbatim into a structured ledger that is never itself summarized.
"""

from __future__ import annotations

from harness._base._kinds import kind_def
from harness._base._model import Fact, Role, Turn
from harness._base._protocol import CompactionRequest, CompactionResult, LedgerEntry
from harness.summarizers._render import narrative


def entry_for(fact: Fact) -> LedgerEntry:
    """The fact verbatim, with the details its kind says a ledger keeps (``KindDef.ledger_details``)."""
    keys = kind_def(fact.kind).ledger_details
    details = tuple((k, v) for k, v in fact.details if k in keys)
    return LedgerEntry(
        kind=str(fact.kind),
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
