"""Findings: what an oracle reports, how sure it is (``Severity``), what it rests on (``Evidence``) and what
happened to the obligation, in one word (``Outcome``), carried unchanged to every report."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from harness._base._model import Fact

__all__ = ["Severity", "Evidence", "Outcome", "outcome_of", "Finding"]


class Severity(StrEnum):
    """``violate``: the context must not be consumed. ``degrade``: honest but coarser. ``unclear``: the
    literal is there, and the reading found words of force or structure it could not attach either way:
    shown for a person to review, never a failure unless a team asks (``--unclear fail``)."""

    VIOLATE = "violate"
    DEGRADE = "degrade"
    UNCLEAR = "unclear"


class Evidence(StrEnum):
    """What a finding rests on. A violation needs one of these positive observations; a reading that
    recognised nothing it could attach is *unclear*, never a violation (DESIGN section 9)."""

    ABSENT = "absent"  # the literal (or its value) is not in the context
    NEAR_MISS = "near-miss"  # a near miss of the literal stands where it should
    CONTRARY = "contrary"  # a contrary word governs it: allowed, cancelled, handed off, fixed, brought back
    WEAKENED = "weakened"  # a weakening or hedging word governs it: a preference, an option, "about 5"
    CHANGED = "changed"  # another number, operator or value is stated for it
    STALE = "stale"  # the value from before a change is stated as current
    ENDED_BINDING = "ended-binding"  # an obligation that ended is stated with binding words
    FALSE_COMPLETION = "false-completion"  # an open obligation is stated as done
    BARE_MENTION = "bare-mention"  # named with no word of force governing it anywhere (sentence, heading, key)
    INVENTED = "invented"  # an obligation the source never stated
    SHAPE = "shape"  # the result's own shape: pairing, budget, journal, marker, a self-report, growth
    # Why a reading stays unclear:
    UNATTACHED = "unattached"  # words of force stand near the literal, none the reading can attach to it
    CONFLICTING = "conflicting"  # words of force and contrary words both govern it
    ELSEWHERE = "elsewhere"  # the value is in the context, not where the reading links it to its field
    UNSETTLED = "unsettled"  # the session ended before it showed which way it goes (a summary still growing)


class Outcome(StrEnum):
    """What happened to the obligation, in one word every report carries: it follows from the evidence
    (``outcome_of``), and an oracle that knows better names it (an error "stated as fixed" is falsely
    resolved, a contrary word on a call "says it finished")."""

    DROPPED = "dropped"  # its turn is gone and nothing stands in for it
    REWRITTEN = "rewritten"  # the context holds it changed: another spelling, case, value or operator
    INVERTED = "inverted"  # stated with the opposite polarity: allowed, forbidden, brought back, handed off
    WEAKENED = "weakened"  # kept without its force: a preference, an option, an approximation, a bare mention
    FALSELY_COMPLETED = "falsely-completed"  # an open call, commitment or error stated as done or resolved
    STALE = "stale"  # an ended obligation, or an old value, stated as holding
    INVENTED = "invented"  # an obligation the source never stated
    MALFORMED = "malformed"  # the result's own shape: pairing, budget, journal, marker, growth
    UNCLEAR = "unclear"  # the reading could not settle it either way


_OUTCOME_OF = {
    "absent": Outcome.DROPPED, "near-miss": Outcome.REWRITTEN, "contrary": Outcome.INVERTED,
    "weakened": Outcome.WEAKENED, "changed": Outcome.REWRITTEN, "stale": Outcome.STALE,
    "ended-binding": Outcome.STALE, "false-completion": Outcome.FALSELY_COMPLETED,
    "bare-mention": Outcome.WEAKENED, "invented": Outcome.INVENTED, "shape": Outcome.MALFORMED,
}


def outcome_of(evidence: Evidence | str | None, severity: Severity | str = Severity.VIOLATE) -> Outcome | None:
    """The word for what happened that ``evidence`` shows (an unclear reading is ``unclear``)."""
    if str(severity) == Severity.UNCLEAR:
        return Outcome.UNCLEAR
    return None if evidence is None else _OUTCOME_OF.get(str(evidence))


@dataclass(frozen=True, slots=True)
class Finding:
    """One broken (or coarsened) invariant, with evidence a person can act on."""

    invariant: str
    severity: Severity
    detail: str
    fact_id: str | None = None
    fact_kind: str | None = None
    expected: str | None = None
    found: str | None = None
    call_id: str | None = None  # the tool call a finding is about, so shrinking keeps that call and its answer
    round: int | None = None  # a session oracle's finding: the round (0 is the first) that shows it
    evidence: Evidence | None = None  # what a violation rests on, or why an unclear reading stayed unclear
    outcome: Outcome | None = None  # what happened, in one word: from the evidence unless an oracle names it

    def __post_init__(self) -> None:
        if self.outcome is None:
            object.__setattr__(self, "outcome", outcome_of(self.evidence, self.severity))

    @classmethod
    def about(cls, invariant: str, fact: Fact, detail: str, *, expected: str | None = None,
              found: str | None = None, severity: Severity = Severity.VIOLATE,
              evidence: Evidence | None = None, outcome: Outcome | None = None) -> Finding:
        return cls(invariant, severity, detail, fact.id, str(fact.kind), expected, found, evidence=evidence,
                   outcome=outcome)

    @classmethod
    def unclear(cls, invariant: str, fact: Fact, detail: str, *, why: Evidence, expected: str | None = None,
                found: str | None = None) -> Finding:
        """A reading that could not be settled either way: for a person to review."""
        return cls.about(invariant, fact, detail, expected=expected, found=found, severity=Severity.UNCLEAR,
                         evidence=why)

    @classmethod
    def unattached(cls, invariant: str, fact: Fact, literal: str, word: str, reading: str, *, expected: str,
                   found: str) -> Finding:
        """Words of force stand by ``literal`` and the reading could attach none of them (``reading`` says as
        what): unclear, never a bare mention."""
        return cls.unclear(invariant, fact, f"{literal} stands with {word!r}, which the reading could not {reading}",
                           why=Evidence.UNATTACHED, expected=expected, found=found)
