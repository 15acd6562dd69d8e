"""Root causes: the violations one session showed, grouped by what went wrong.

A trimming compactor that drops an old commitment breaks several invariants at once (the commitment
is not retained, the ledger shrinks, a later effect runs unguarded); that is one loss, to be shrunk once
and reported once with every invariant that saw it. Within a session, violations about the same fact
(or, with no fact, the same tool call) are one cause; its *primary* violation is the one that showed
first (a per-compaction invariant before a session-wide one at the same round).

Across a run, causes are told apart by what the compactor did. When it *dropped* the obligation (the
turn stating it is not in what it returned, and nothing it wrote itself carries the obligation's
literal: whatever is left of it stands in source turns it kept unchanged, such as a decoy's near miss
or a later bare mention), every such loss is one cause, whatever invariant first saw it and whatever
the kind of fact: a window that cuts old turns drops commitments, thresholds and error codes alike, and
the fix is one. Otherwise the compactor wrote something wrong, and causes are told apart by the
primary's invariant and evidence: a near miss it wrote and a literal it left out stay two findings,
while one invariant broken with one evidence on two kinds of fact is one (the kinds are listed with it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness._base._model import Transcript, Turn
from harness._base._protocol import CompactionResult
from harness._base._result_codec import result_from_dict
from harness._base._wholetoken import has_token
from harness._app.judging._judge import Evaluation, Violation
from harness.oracles import registered

__all__ = ["Cause", "causes", "shown_violations", "Key", "Signature", "signature_of", "DROPPED", "dropped"]

#: A violation's (invariant, fact kind), as ``Evaluation.violations`` keys them.
Key = tuple[str, str | None]
#: What tells two causes apart over a run: ``(DROPPED, None)``, or the primary's invariant and evidence.
Signature = tuple[str, str | None]

#: The root cause of every loss in which the compactor dropped the obligation's own turns (see above).
DROPPED = "dropped"

#: Of two invariants seeing one cause at the same round, this one is never the primary if another can be.
_BROAD = "provider-valid"


@dataclass(frozen=True)
class Cause:
    """One root cause in one session: the violation that showed it first, the others it caused, and
    whether the compactor dropped the obligation (``DROPPED``) rather than wrote it wrong (None)."""

    key: Key
    violation: Violation
    others: tuple[tuple[Key, Violation], ...] = ()
    mechanism: str | None = None
    # Set when the run saw its (invariant, fact kind) rest on other evidence too (another root cause): the
    # evidence its violation rests on, which shrinking and trials then ask for, or they would find the other.
    evidence: str | None = None

    @property
    def signature(self) -> Signature:
        return signature_of(self.key[0], self.violation, self.mechanism)

    @property
    def cost(self) -> tuple[float, int]:
        """How early its primary showed (round; a session-wide finding last): the representative of a cause
        seen in several sessions is the one cheapest to shrink."""
        rnd = self.violation[1]
        return (math.inf if rnd is None else rnd, self.violation[2] or 0)


def signature_of(invariant: str, violation: Violation, mechanism: str | None = None) -> Signature:
    """The signature of a cause whose primary violation is ``violation`` of ``invariant``."""
    if mechanism == DROPPED:
        return (DROPPED, None)
    evidence = violation[0].evidence
    return (invariant, None if evidence is None else str(evidence))


def dropped(transcript: Transcript, violation: Violation) -> bool:
    """Whether the compactor dropped the violation's obligation: the turn stating it is not among the
    messages it returned, and no message or ledger entry it wrote itself holds the obligation's literal
    or what the finding found in its place. False for a finding about no fact, or with no round."""
    finding, _, _, context = violation
    if finding.fact_id is None or context is None:
        return False
    fact = next((f for f in transcript.facts if f.id == finding.fact_id), None)
    if fact is None or not 0 <= fact.origin_turn < len(transcript.turns):
        return False
    result: CompactionResult = result_from_dict(context)
    if transcript.turns[fact.origin_turn] in result.messages:
        return False
    needles = (*fact.literals, *((finding.found,) if finding.found else ()))
    source = set(transcript.turns)
    written = [_text(m) for m in result.messages if m not in source]
    written += [entry.render() for entry in result.ledger or ()]
    return not any(has_token(text, needle) for text in written for needle in needles)


def _text(turn: Turn) -> str:
    return "\n".join((turn.text, *(f"{c.id} {c.name} {c.arguments}" for c in turn.tool_calls)))


def shown_violations(ev: Evaluation) -> list[tuple[Key, Violation]]:
    """Every violation a session showed: the first per (invariant, fact kind), then the later ones another
    root cause would otherwise hide (``Evaluation.more``)."""
    return [*ev.violations.items(), *(((invariant, kind), v) for (invariant, kind, _), v in ev.more.items())]


def causes(ev: Evaluation, transcript: Transcript | None = None) -> list[Cause]:
    """The session's violations grouped by cause, in a stable order (by signature, then primary key). With
    the ``transcript`` judged, each cause says whether its obligation was dropped."""
    groups: dict[tuple, list[tuple[Key, Violation]]] = {}
    for key, violation in shown_violations(ev):
        finding = violation[0]
        subject = ("fact", finding.fact_id) if finding.fact_id is not None else \
            ("call", finding.call_id) if finding.call_id is not None else ("alone", key)
        groups.setdefault(subject, []).append((key, violation))
    scopes = {o.id: o.scope for o in registered()}

    def first(item: tuple[Key, Violation]):
        (invariant, kind), (_, rnd, _, _) = item
        # provider-valid restates in the dialect's terms a shape defect that tool-pairing names more narrowly
        return (math.inf if rnd is None else rnd, scopes.get(invariant) == "session", invariant == _BROAD,
                invariant, str(kind))

    out = []
    for members in groups.values():
        members.sort(key=first)
        (key, violation), *others = members
        mechanism = DROPPED if transcript is not None and dropped(transcript, violation) else None
        out.append(Cause(key, violation, tuple(others), mechanism))
    return sorted(out, key=lambda c: (str(c.signature), str(c.key)))
