"""A correct rich compactor in the spirit of reference 004.

Lossy compression of narrative, lossless compression of obligations: a short
narrative, and every obligation the runtime tagged at write time copied
verbatim into a structured ledger that is never itself summarized.

Rich protocol 2: a recovery marker at the request's tier naming a node fresh
to that tier, with the calls whose results arrived; a journal of the one edit
(everything given replaced by the narrative), payload kept so it rolls back; and
as ``verified`` only the classes checked on the result itself (``_render.with_protocol2``).
A tagged call still in flight is carried as its ledger entry (kind ``in_flight_call``,
literal the call id), so its result can be re-attached when it arrives; a call in
flight that no tag covers (a cut between a call and its result) has no ledger entry
to ride in, so it is kept as a structured call (an assistant message holding it).
"""

from __future__ import annotations

from harness._base._model import Turn
from harness._base._protocol import CompactionRequest, CompactionResult, LedgerEntry
from harness._base._tokens import context_tokens
from harness.summarizers._render import (handle_turn, in_flight_calls, narrative, summary_role, tagged_calls,
                                         with_protocol2)


def summarize(request: CompactionRequest) -> CompactionResult:
    """Narrative plus a verbatim ledger of every tagged obligation."""
    ledger = tuple(LedgerEntry.verbatim(f) for f in request.tags)
    tagged = tagged_calls(request)
    untagged = tuple(c for c in in_flight_calls(request) if c.id not in tagged)
    kept = handle_turn(untagged, request)
    # The narrative is the one part that may give way to the budget: to a stub, then to nothing.
    role = summary_role(request)
    stories = ((Turn(role, narrative(request)),), (Turn(role, "Earlier turns summarized."),), ())
    story = next((s for s in stories if context_tokens((*s, *kept), ledger) <= request.budget), ())
    result = CompactionResult((*story, *kept), ledger=ledger, self_report=tuple(f.id for f in request.tags))
    return with_protocol2(request, result)


summarize.compaction_protocol = "rich"
