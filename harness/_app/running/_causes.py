"""Root causes: the violations one session showed, grouped by what went wrong.

A trimming compactor that drops an old commitment breaks several invariants at once (the commitment
is not retained, the ledger shrinks, a later effect runs unguarded); that is one loss, to be shrunk once
and reported once with every invariant that saw it. Within a session, violations about the same fact
(or, with no fact, the same tool call) are one cause; its *primary* violation is the one that showed
first (a per-compaction invariant before a session-wide one at the same round). Across a run, causes are
told apart by the primary's invariant and evidence, so a dropped literal and a near miss of it stay two
findings, while literals dropped from a prohibition in one session and from an artifact reference in
another are one (the kinds it was seen on are listed with it: the fix is the same).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness._app.judging._judge import Evaluation, Violation
from oracles import registered

__all__ = ["Cause", "causes", "Key", "Signature", "signature_of"]

#: A violation's (invariant, fact kind), as ``Evaluation.violations`` keys them.
Key = tuple[str, str | None]
#: What tells two causes apart over a run: the primary's invariant and evidence.
Signature = tuple[str, str | None]


@dataclass(frozen=True)
class Cause:
    """One root cause in one session: the violation that showed it first, and the others it caused."""

    key: Key
    violation: Violation
    others: tuple[tuple[Key, Violation], ...] = ()

    @property
    def signature(self) -> Signature:
        return signature_of(self.key[0], self.violation)


def signature_of(invariant: str, violation: Violation) -> Signature:
    """The signature of a cause whose primary violation is ``violation`` of ``invariant``."""
    evidence = violation[0].evidence
    return (invariant, None if evidence is None else str(evidence))


def causes(ev: Evaluation) -> list[Cause]:
    """The session's violations grouped by cause, in a stable order (by primary key)."""
    groups: dict[tuple, list[tuple[Key, Violation]]] = {}
    for key, violation in ev.violations.items():
        finding = violation[0]
        subject = ("fact", finding.fact_id) if finding.fact_id is not None else \
            ("call", finding.call_id) if finding.call_id is not None else ("alone", key)
        groups.setdefault(subject, []).append((key, violation))
    scopes = {o.id: o.scope for o in registered()}

    def first(item: tuple[Key, Violation]):
        (invariant, kind), (_, rnd, _, _) = item
        return (math.inf if rnd is None else rnd, scopes.get(invariant) == "session", invariant, str(kind))

    out = []
    for members in groups.values():
        members.sort(key=first)
        (key, violation), *others = members
        out.append(Cause(key, violation, tuple(others)))
    return sorted(out, key=lambda c: str(c.signature))
