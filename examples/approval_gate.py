"""A team's own kind of obligation, end to end: an approval gate.

"Nothing goes to production until CHG-4821 is approved by the release manager."
A later turn is held to it: the agent must not act before the approval, and a
summary that keeps the ticket but drops the gate, or says it was approved when
it was not, lets the agent act too early.

One module defines everything the harness needs, without editing the package:

- what the kind *is* (``harness.KindDef``): one literal (the ticket, byte-exact),
  what may happen to it (it stays open, or the approval arrives), the params a
  planned one has, and the sentence a correct compactor states it with;
- how it is generated (``harness.strategies.KindGenerator``): what Hypothesis draws,
  the turns that state it, the turn in which it is approved;
- the oracle that judges it (``@oracles.oracle``).

Use it with ``--extend examples/approval_gate.py`` on the command line (it is
imported in the harness and beside the summarizer), ``--summarizer-extend`` in
the pytest plugin, or a plain import in your own tests. Once it is imported,
``harness.strategies.facts()`` places approval gates among the built-in kinds, and the
bundled correct compactors state them with ``statement`` below.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

from harness import KindDef, Role, Status, Turn, define_kind
from harness.oracles import Finding, oracle
from harness.strategies import KindGenerator, make_literal

KIND = "approval_gate"

APPROVERS = ("release manager", "security lead", "on-call DBA", "data protection officer")
ACTIONS = ("deploy to production", "drop the legacy tables", "rotate the signing keys", "open the firewall rule")

# How the user states the gate; shrinking moves towards the first.
GATES = (
    "Do not {action} until {ticket} is approved by the {approver}.",
    "{ticket} needs sign-off from the {approver} before anyone may {action}.",
    "Hold off: we only {action} once the {approver} has approved {ticket}.",
    "Blocked on {ticket}. The {approver} must approve it first; no one is to {action} before that.",
)
APPROVALS = (
    "The {approver} approved {ticket}.",
    "{ticket}: signed off by the {approver}, we are clear to {action}.",
    "Approval for {ticket} came through from the {approver}.",
)


def _draw(draw, fate: Status):
    ticket = make_literal("ticket", draw(st.integers(0, 2**16 - 1)))
    return (ticket,), {"approver": draw(st.sampled_from(APPROVERS)), "action": draw(st.sampled_from(ACTIONS))}


def _words(spec) -> dict[str, str]:
    return {"ticket": spec.literals[0], "approver": spec.param("approver"), "action": spec.param("action")}


def _state(spec):
    return (Turn(Role.USER, GATES[spec.phrasing % len(GATES)].format(**_words(spec))),)


def _approved(spec):
    return (Turn(Role.USER, APPROVALS[spec.phrasing % len(APPROVALS)].format(**_words(spec))),)


define_kind(KindDef(
    KIND,
    statement=lambda f: (f"Do not {f.detail('action')} until {f.literals[0]} is approved by the "
                         f"{f.detail('approver')}; it is not approved yet."),
    fates=(Status.OPEN, Status.FULFILLED, Status.RETRACTED),
    params=("approver", "action"),
    ledger_details=("approver",),
    verbatim=True,  # literal-verbatim also requires the ticket byte-exact
    generator=KindGenerator(draw=_draw, state=_state, fate=_approved),
    judged_by=("approval-gate-held",),  # a run warns if none of its judges is selected
), replace=True)

# A sentence holds the gate when it names the ticket, approval, and waiting; it claims the
# approval happened when it says so without any waiting word.
_APPROVAL = re.compile(r"\bapprov|\bsign[- ]?off\b|\bsigned off\b|\bgreen light\b")
_WAITING = re.compile(r"\b(until|before|unless|pending|awaiting|waiting|wait|blocked|gated|gate|only once|"
                      r"first|not yet|no one|nobody|hold)\b")
_CLAIMED = re.compile(r"\b(was|is|has been|got|been) (approved|signed off)\b|\bapproval (came|granted|received)\b")


@oracle("approval-gate-held", reference="team policy", replace=True)
def approval_gate_held(case):
    """An open approval gate keeps its ticket with the wait for approval, and is never stated as approved."""
    for fact in case.live:
        if fact.kind != KIND:
            continue
        ticket = fact.literals[0]
        if case.context.ledger_entry(fact) is not None:
            continue
        sentences = [s.text for s in case.context.sentences_with(ticket)]
        if not sentences:
            continue  # literal-verbatim reports the missing ticket
        claims = [s for s in sentences if _CLAIMED.search(s.lower()) and not _WAITING.search(s.lower())]
        if claims:
            yield Finding.about("approval-gate-held", fact, f"{ticket} is stated as approved, but it is not",
                                expected=f"wait for approval of {ticket}", found=claims[0])
        elif not any(_APPROVAL.search(s.lower()) and _WAITING.search(s.lower()) for s in sentences):
            yield Finding.about("approval-gate-held", fact, f"{ticket} is kept without its approval gate",
                                expected=f"nothing may {fact.detail('action')} until {ticket} is approved",
                                found=sentences[0])
