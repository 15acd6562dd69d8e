"""How the oracles read prose: every cue list and distance in one documented place.

Free-text checks are strict on purpose (DESIGN section 4): obligations must be
carried by reference (the literal, byte-exact) and negations must stay
first-class. What counts as a prohibition, a softening, a disposition, an
operator or an UNRESOLVED mark is decided here, case-insensitively, within one
*clause* of the literal. A clause is a piece of a sentence split at ``. ! ? ;``
(followed by a space or the end), newlines, and contrastive joins such as
" but ", " whereas ", " however ". Build your own with
``dataclasses.replace(DEFAULT_RULES, ...)`` and pass it to ``oracles.check``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ProseRules", "DEFAULT_RULES"]


@dataclass(frozen=True, slots=True)
class ProseRules:
    # A prohibition: one of these within ``cue_window`` words of the literal.
    prohibition_cues: tuple[str, ...] = (
        "never", "must not", "mustn't", "do not", "don't", "does not", "shall not", "cannot", "can't",
        "may not", "not allowed", "forbidden", "forbid", "prohibited", "off limits", "off-limits",
        "under no circumstances", "banned", "not permitted", "no writes to", "not to use", "not use",
        "must never", "is blocked", "blocklisted", "denylisted", "deny", "not touch", "no access to",
    )
    # A prohibition turned into a preference or a ranking: present anywhere in the clause, it wins.
    softening_cues: tuple[str, ...] = (
        "prefer", "rather", "if possible", "where possible", "ideally", "try to", "try not to",
        "avoid", "better not", "should probably", "preferably", "when feasible", "if you can",
        "over ", "ranked", "ranking", "favour", "favor", "lean towards", "discouraged",
    )
    # Phrases that contain a negation word but are not prohibitions.
    negation_traps: tuple[str, ...] = (
        "don't worry", "do not worry", "don't forget", "do not forget", "do not hesitate",
        "don't hesitate", "not only", "never mind", "not sure", "no longer", "not needed",
    )
    # A negative fact keeps its disposition: one of these in its clause.
    disposition_cues: tuple[str, ...] = (
        "rejected", "reject", "ruled out", "dropped", "abandoned", "declined", "vetoed", "refused",
        "failed", "fails", "failure", "did not work", "didn't work", "does not work", "broke", "unsuccessful",
        "superseded", "replaced", "obsolete", "deprecated", "no longer", "do not retry", "don't retry",
        "do not propose", "don't propose", "do not re-propose", "not to retry", "no-go", "discarded",
    )
    # An open tool call explicitly marked open.
    unresolved_cues: tuple[str, ...] = (
        "unresolved", "in flight", "in-flight", "pending", "awaiting", "waiting for", "still running",
        "not yet returned", "no result yet", "outstanding", "still open", "not returned", "open call",
    )
    # Something stated as finished.
    completion_cues: tuple[str, ...] = (
        "done", "complete", "completed", "finished", "succeeded", "has been", "have been", "was run",
        "were run", "already", "carried out", "executed", "applied", "shipped", "accomplished",
    )
    # Cancel a completion cue when in the same clause: the thing is still ahead.
    pending_cues: tuple[str, ...] = (
        "will", "pending", "todo", "to do", "to-do", "still need", "still needs", "not yet", "yet to",
        "must", "should", "outstanding", "remaining", "next", "promised", "committed to", "plan to",
        "once", "after", "when", "open", "not done", "isn't done", "not complete", "incomplete",
        "need to", "needs to", "going to", "scheduled",
    )
    # A number stated loosely: any of these beside a threshold's number voids it.
    approximation_cues: tuple[str, ...] = (
        "roughly", "about", "around", "approximately", "approx", "~", "or so", "give or take", "circa",
        "a few", "several", "some", "limited", "a handful", "a couple", "modest", "reasonable",
    )
    # Operator phrases, strongest first; ":", "=", "is", "set to" are neutral assignments.
    operator_phrases: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("<=", ("<=", "≤", "=<", "no higher than", "not above", "not over", "no greater than", "at most", "no more than", "not more than", "never more than", "up to",
                "capped at", "cap of", "cap at", "maximum of", "maximum", "max", "not exceed", "limited to")),
        (">=", (">=", "≥", "=>", "no lower than", "not below", "not under", "at least", "no fewer than", "no less than", "not less than", "minimum of",
                "minimum", "min", "or more", "or higher")),
        ("<", ("<", "fewer than", "less than", "strictly below", "below", "under", "lower than")),
        (">", (">", "more than", "greater than", "strictly above", "above", "over", "exceeds", "exceeding",
               "higher than")),
        ("==", ("==", "exactly", "precisely", "equal to", "equals", "fixed at", "pinned to")),
    )
    neutral_assignments: tuple[str, ...] = (":", "=", "is", "set to", "to", "of", "at", "stays", "be", "remains")
    # A stale value is fine when marked as the old one.
    staleness_cues: tuple[str, ...] = (
        "was", "were", "previously", "formerly", "old", "no longer", "instead of", "replaced", "replaces",
        "retired", "superseded", "from", "not ", "changed", "used to", "earlier", "deprecated",
    )
    # How far (in words) a cue or a number may sit from the literal it qualifies.
    cue_window: int = 8
    number_window: int = 6
    # The near-miss report: a token at least this similar to a missing literal is named as a paraphrase.
    near_miss_ratio: float = 0.6
    # ledger-budget: the structured ledger's share of the budget before it degrades.
    ledger_budget_share: float = 0.12


DEFAULT_RULES = ProseRules()
