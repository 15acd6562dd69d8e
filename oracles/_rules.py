"""How the oracles read prose: every cue list, status word, distance and reading unit in one place.

Free-text checks are strict on purpose (DESIGN section 4): obligations must be
carried by reference (the literal, byte-exact) and negations must stay
first-class. What counts as a prohibition, a softening, a disposition, an
operator or an UNRESOLVED mark is decided here, case-insensitively, and so is
the *unit* of text each cue is looked for in (the ``*_unit`` fields):

- ``clause``: a piece of a sentence split at ``. ! ? ;`` (followed by a space or
  the end), newlines, and contrastive joins such as " but ", " whereas ";
- ``sentence``: split at ``. ! ?`` and newlines only;
- ``line``: split at newlines only (a disposition often follows in the next
  sentence: "Dropping X. Rejected.").

Within the unit, ``cue_near`` cues must also sit within a window of words of
the literal (``cue_window`` unless a check names its own window here); ``cue_in``
cues may be anywhere in the unit. Build your own with
``dataclasses.replace(DEFAULT_RULES, ...)`` and pass it to ``oracles.check``
(``Case(rules=...)``), ``assert_compaction_holds(rules=...)``, the CLI
(``--rules module:OBJECT``) or the pytest plugin (``--summarizer-rules``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from harness._base._errors import InvalidArgument

__all__ = ["ProseRules", "DEFAULT_RULES", "UNITS"]

#: The units of text a cue can be looked for in.
UNITS = ("clause", "sentence", "line")


@dataclass(frozen=True, slots=True)
class ProseRules:
    # A prohibition: one of these within ``cue_window`` words of the literal.
    prohibition_cues: tuple[str, ...] = (
        "never", "must not", "mustn't", "do not", "don't", "does not", "shall not", "cannot", "can't",
        "may not", "not allowed", "forbidden", "forbid", "prohibited", "off limits", "off-limits",
        "under no circumstances", "banned", "not permitted", "no writes to", "not to use", "not use",
        "must never", "is blocked", "blocklisted", "denylisted", "deny", "not touch", "no access to",
        "hands off", "away from", "go near", "stay out of", "keep out of", "no deploys", "no deploy", "no writes",
        "no reads", "frozen", "untouchable", "do not use", "not be used", "disallowed", "excluded", "nothing should",
        "not a single", "never to be",
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
        "blocked by", "blocked until", "blocked on", "no need to worry",
    )
    # A negative fact keeps its disposition: one of these in its clause.
    disposition_cues: tuple[str, ...] = (
        "rejected", "reject", "ruled out", "dropped", "abandoned", "declined", "vetoed", "refused",
        "failed", "fails", "failure", "did not work", "didn't work", "does not work", "broke", "unsuccessful",
        "superseded", "replaced", "obsolete", "deprecated", "no longer", "do not retry", "don't retry",
        "do not propose", "don't propose", "do not re-propose", "not to retry", "no-go", "discarded",
        "turned down", "dead end", "off the table", "blew up", "said no", "don't go back", "do not go back",
        "not viable", "gave up", "scrapped", "shelved", "nixed", "won't work", "doesn't work", "not an option",
        "ruled against", "do not revisit", "don't revisit", "not pursue", "not to be retried", "do not try",
        "don't try", "never again",
    )
    # An open tool call explicitly marked open.
    unresolved_cues: tuple[str, ...] = (
        "unresolved", "in flight", "in-flight", "pending", "awaiting", "waiting for", "still running",
        "not yet returned", "no result yet", "outstanding", "still open", "not returned", "open call",
        "yet", "so far", "come back", "came back", "no response", "no reply", "no answer", "heard back",
        "not returned", "not been answered", "not answered", "not reported", "no confirmation", "unknown",
        "not back", "still no", "waiting", "in progress", "not finished", "not completed", "not complete",
        "unanswered", "running",
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
        "need to", "needs to", "going to", "scheduled", "owe", "parked", "on hold", "blocked", "hold off",
        "holding off", "waits", "waiting", "not started", "first thing", "until", "queued", "later", "deferred",
        "postponed", "still to", "to be", "awaiting", "open", "backlog", "upcoming", "planned",
    )
    # A number stated loosely: any of these beside a threshold's number voids it.
    approximation_cues: tuple[str, ...] = (
        "roughly", "about", "around", "approximately", "approx", "~", "or so", "give or take", "circa",
        "a few", "several", "some", "limited", "a handful", "a couple", "modest", "reasonable",
        "close to", "near", "nearly", "generally", "usually", "mostly", "typically", "try to", "aim for",
        "ideally", "preferably", "if possible", "in the region of", "ballpark", "or thereabouts", "expected to be",
        "discouraged", "where possible", "more or less", "give or take", "loosely", "soft limit", "rule of thumb",
    )
    # Operator phrases, strongest first; ":", "=", "is", "set to" are neutral assignments.
    operator_phrases: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("<=", ("<=", "≤", "=<", "no higher than", "not above", "not over", "no greater than", "at most", "no more than", "not more than", "never more than", "up to",
                "capped at", "cap of", "cap at", "maximum of", "maximum", "max", "not exceed", "limited to",
                "at or below", "at or under", "or less", "or fewer", "or lower", "or below", "ceiling of", "ceiling",
                "cap", "capped", "no more", "tops", "not to exceed", "must not exceed", "never exceed")),
        (">=", (">=", "≥", "=>", "no lower than", "not below", "not under", "at least", "no fewer than", "no less than", "not less than", "minimum of",
                "minimum", "min", "or more", "or higher", "at or above", "at or over", "or above", "floor of", "floor",
                "never below", "never under", "never fewer")),
        ("<", ("<", "fewer than", "less than", "strictly below", "below", "under", "lower than")),
        (">", (">", "more than", "greater than", "strictly above", "above", "over", "exceeds", "exceeding",
               "higher than")),
        ("==", ("==", "exactly", "precisely", "equal to", "equals", "fixed at", "pinned to")),
    )
    # A cue right after one of these (within ``negation_window`` words) is negated: "hasn't been fixed"
    # is no fix, "must not go above 5" is "<= 5". Strict operators flip; completions and resolutions void.
    negators: tuple[str, ...] = (
        "not", "never", "no", "without", "yet to", "nor", "cannot", "hasn't", "haven't", "hadn't", "isn't",
        "aren't", "wasn't", "weren't", "didn't", "doesn't", "don't", "won't", "can't", "couldn't", "shouldn't",
    )
    # Between a snake_case name and a number, one of these makes the name the number's field: so in
    # "retry_limit 3, max_retries: 5" the 5 belongs to max_retries, not to retry_limit.
    field_links: tuple[str, ...] = (":", "=", "<", ">", "≤", "≥", "is", "at", "must")
    # A stale value is fine when marked as the old one.
    staleness_cues: tuple[str, ...] = (
        "was", "were", "previously", "formerly", "old", "no longer", "instead of", "replaced", "replaces",
        "retired", "superseded", "from", "not ", "changed", "used to", "earlier", "deprecated",
    )
    # A prohibition whose cue follows its target ("X is off limits"), not precedes it.
    postfix_prohibition_cues: tuple[str, ...] = (
        "off limits", "off-limits", "forbidden", "prohibited", "banned", "is blocked", "not permitted",
    )
    # An unresolved error stated as fixed, unless a resolution negator shares its unit.
    resolution_cues: tuple[str, ...] = (
        "fixed", "resolved", "no longer", "gone", "cleared", "solved", "works now", "passes again",
    )
    resolution_negators: tuple[str, ...] = ("not ", "n't", "unresolved", "still")
    # Ledger entry statuses: an open call marked with one of these stays open; an open commitment
    # marked with one of these was claimed done.
    open_statuses: tuple[str, ...] = ("open", "unresolved", "pending", "in_flight", "in-flight", "running")
    done_statuses: tuple[str, ...] = ("done", "fulfilled", "complete", "completed", "closed")
    # How far (in words) a cue or a number may sit from the literal it qualifies.
    cue_window: int = 8
    completion_window: int = 5
    resolution_window: int = 6
    disposition_window: int = 12
    unresolved_window: int = 12
    number_window: int = 6
    negation_window: int = 4
    # Where each check reads (see the module docstring for the units).
    prohibition_unit: str = "sentence"
    softening_unit: str = "clause"
    pending_unit: str = "sentence"
    completion_unit: str = "clause"
    resolution_unit: str = "clause"
    disposition_unit: str = "line"
    unresolved_unit: str = "sentence"
    staleness_unit: str = "clause"
    # The near-miss report: a token at least this similar to a missing literal is named as a paraphrase.
    near_miss_ratio: float = 0.6
    # ledger-budget: the structured ledger's share of the budget before it degrades.
    ledger_budget_share: float = 0.12


    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.endswith(("_cues", "_traps", "_negators", "_statuses", "_links")) or f.name == "negators":
                if not isinstance(value, tuple) or not all(isinstance(v, str) and v for v in value):
                    raise InvalidArgument(f"ProseRules({f.name}={value!r}): expected a tuple of non-empty strings")
            if f.name == "operator_phrases" and not (isinstance(value, tuple) and all(
                    isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)
                    and isinstance(pair[1], tuple) and all(isinstance(p, str) and p for p in pair[1])
                    for pair in value)):
                raise InvalidArgument("ProseRules(operator_phrases=...): expected a tuple of (operator, tuple of "
                                      "non-empty phrases) pairs")
            if f.name in ("near_miss_ratio", "ledger_budget_share") and not (
                    isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1):
                raise InvalidArgument(f"ProseRules({f.name}={value!r}): expected a number in (0, 1]")
            if f.name.endswith("_unit") and value not in UNITS:
                raise InvalidArgument(f"ProseRules({f.name}={value!r}): expected one of {', '.join(UNITS)}")
            if f.name.endswith("_window") and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise InvalidArgument(f"ProseRules({f.name}={value!r}): expected a whole number of words >= 0")


DEFAULT_RULES = ProseRules()
