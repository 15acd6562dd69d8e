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
``dataclasses.replace(DEFAULT_RULES, ...)`` and pass it to ``harness.oracles.check``
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
        "may not", "not allowed", "forbidden", "forbid", "forbade", "forbids", "prohibits", "prohibited", "bans",
        "vetoed", "off limits", "off-limits",
        "under no circumstances", "banned", "not permitted", "no writes to", "not to use", "not use",
        "must never", "is blocked", "blocklisted", "denylisted", "deny", "not touch", "no access to",
        "hands off", "away from", "go near", "stay out of", "keep out of", "no deploys", "no deploy", "no writes",
        "no reads", "frozen", "untouchable", "do not use", "not be used", "disallowed", "excluded", "nothing should",
        "not a single", "never to be", "nothing under", "nothing in", "nothing inside", "may not", "not be modified",
        "not be touched", "not be deleted", "not be changed", "out of bounds", "must stay untouched", "leave alone",
        "leave it alone", "no changes to", "no edits to", "ban", "ruled out", "not to be used", "not to be touched",
        "is not to be", "are not to be", "rather than", "instead of",
    )
    # A prohibition turned into a preference or a ranking: present anywhere in the clause, it wins.
    softening_cues: tuple[str, ...] = (
        "prefer", "rather", "if possible", "where possible", "ideally", "try to", "try not to",
        "avoid", "better not", "should probably", "preferably", "when feasible", "if you can", "mostly",
        "usually", "generally", "typically", "normally", "where practical", "as a rule", "most of the time",
        " over ", "ranked", "ranking", "favour", "favor", "lean towards", "discouraged", "not recommended",
        "not preferred", "less preferred", "not ideal", "only when", "only if", "if unavoidable", "when unavoidable",
    )
    # Phrases that contain a negation word but are not prohibitions.
    negation_traps: tuple[str, ...] = (
        "don't worry", "do not worry", "don't forget", "do not forget", "do not hesitate",
        "don't hesitate", "not only", "never mind", "not sure", "no longer", "not needed",
        "no need to worry", "rather than", "instead of",
    )
    # Phrases that hold a cue word but say where a requirement applies, not that it is waived or weakened:
    # "use X for any measurement", "in every case". A cue inside one of these is no cue (as in a trap).
    scope_traps: tuple[str, ...] = (
        "for any", "in any", "on any", "to any", "of any", "at any", "across any", "with any", "by any", "from any",
        "before any", "after any", "prior to any", "during any", "without any", "under any", "in every", "on every",
        "at every", "across all", "any time", "anytime", "at all times", "in all cases", "for every", "for all",
    )
    # Idioms that hold a cue word and mean something else: "it fell over on prepared statements" ranks nothing.
    idiom_traps: tuple[str, ...] = ("fell over", "falls over", "fall over", "falling over", "keeled over", "ran over",
                                    "run over", "went over", "go over", "goes over", "took over", "take over",
                                    "start over", "over and over", "all over", "over time", "hand over")
    # A modal (or "to be") right before a cue word makes it an obligation, not a claim: "must be fixed before
    # the review", "needs to be deployed", "is to be completed", "has yet to run" state nothing as done.
    # ``modal_window`` words may stand between the modal and the word ("must first be fixed").
    modal_cues: tuple[str, ...] = (
        "must", "should", "shall", "need to", "needs to", "needed to", "has to", "have to", "ought to", "is to",
        "are to", "to be", "will", "would", "going to", "gonna", "want to", "wants to", "yet to", "required to",
        "expected to", "supposed to", "scheduled to", "planned to", "plan to", "aim to", "until it is",
        "until they are", "before it is", "before they are", "get", "gets", "getting",
    )
    modal_window: int = 2
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
    # Which disposition cues state which disposition: a negative fact kept only with another's (a failed approach
    # labelled REJECTED) has its disposition rewritten; a cue in no list ("dead end") fits any. A rejection often
    # follows a failure, so "rejected" accepts the failure words too.
    disposition_classes: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("rejected", ("rejected", "reject", "declined", "vetoed", "refused", "turned down", "said no", "ruled against",
                      "nixed", "failed", "fails", "failure", "did not work", "didn't work", "does not work", "broke",
                      "unsuccessful", "blew up", "won't work", "doesn't work")),
        ("failed", ("failed", "fails", "failure", "did not work", "didn't work", "does not work", "broke",
                    "unsuccessful", "blew up", "won't work", "doesn't work", "gave up")),
        ("superseded", ("superseded", "replaced", "obsolete", "deprecated", "no longer")),
    )
    # An open tool call explicitly marked open.
    unresolved_cues: tuple[str, ...] = (
        "unresolved", "in flight", "in-flight", "pending", "awaiting", "waiting for", "still running",
        "not yet returned", "no result yet", "outstanding", "still open", "not returned", "open call",
        "yet", "so far", "come back", "came back", "no response", "no reply", "no answer", "heard back",
        "not returned", "not been answered", "not answered", "not reported", "no confirmation", "unknown",
        "not back", "still no", "waiting", "in progress", "not finished", "not completed", "not complete",
        "unanswered", "running", "dispatched", "submitted", "kicked off", "launched", "queued",
        "in the background", "not done", "has not finished", "awaiting completion", "underway", "under way",
    )
    # Something stated as finished.
    completion_cues: tuple[str, ...] = (
        "done", "complete", "completed", "finished", "succeeded", "has been", "have been", "was run",
        "were run", "already", "carried out", "executed", "applied", "shipped", "accomplished",
        "struck through", "merged", "wrapped up",
    )
    # Cancel a completion cue when in the same clause: the thing is still ahead.
    pending_cues: tuple[str, ...] = (
        "will", "pending", "todo", "to do", "to-do", "still need", "still needs", "not yet", "yet to",
        "must", "should", "outstanding", "remaining", "next", "promised", "committed to", "plan to",
        "once", "after", "when", "open", "not done", "isn't done", "not complete", "incomplete",
        "need to", "needs to", "going to", "scheduled", "owe", "parked", "on hold", "blocked", "hold off",
        "holding off", "waits", "waiting", "not started", "first thing", "until", "queued", "later", "deferred",
        "postponed", "still to", "to be", "awaiting", "open", "backlog", "upcoming", "planned", "'ll",
    )
    # Pending cues that only say when ("after", "once"): beside a completion they do not make it pending
    # ("re-applied after the security review" is a claim it happened; "will re-apply after..." is not).
    conditional_cues: tuple[str, ...] = ("after", "once", "when", "until")
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
        (">", (">", "more than", "greater than", "strictly above", "above", "over", "exceeds", "exceeding", "exceed",
               "higher than")),
        ("==", ("==", "exactly", "precisely", "equal to", "equals", "fixed at", "pinned to")),
    )
    # A cue right after one of these (within ``negation_window`` words) is negated: "hasn't been fixed"
    # is no fix, "must not go above 5" is "<= 5". Strict operators flip; completions and resolutions void.
    negators: tuple[str, ...] = (
        "not", "never", "no", "without", "yet to", "nor", "cannot", "hasn't", "haven't", "hadn't", "isn't",
        "aren't", "wasn't", "weren't", "didn't", "doesn't", "don't", "won't", "can't", "couldn't", "shouldn't",
        "nothing", "none",
    )
    # Negators that state a fact ("we haven't touched X"), not a rule: before a prohibited target they do
    # not forbid it. The others ("not", "no", "never", "nothing", "don't") do, anywhere earlier in its clause.
    factual_negators: tuple[str, ...] = (
        "hasn't", "haven't", "hadn't", "isn't", "aren't", "wasn't", "weren't", "didn't", "doesn't", "without",
        "yet to", "none",
    )
    # Between a snake_case name and a number, one of these makes the name the number's field: so in
    # "retry_limit 3, max_retries: 5" the 5 belongs to max_retries, not to retry_limit.
    field_links: tuple[str, ...] = (":", "=", "<", ">", "≤", "≥", "is", "at", "must")
    # An obligation's force weakened: a requirement turned preference, habit, option or default.
    weakening_cues: tuple[str, ...] = (
        "ideally", "preferably", "if possible", "where possible", "where practical", "when possible", "optional",
        "optionally", "may also", "can also", "could also", "mostly", "usually", "generally", "typically", "often",
        "sometimes", "normally", "not required", "not mandatory", "not strictly", "not critical", "free to",
        "feel free", "if needed", "if necessary", "as needed", "can be relaxed", "can be raised", "can be lowered",
        "suggested", "suggestion", "recommended", "nice to have", "nice-to-have", "nice for", "prefer", "if you like",
        "if it gets in the way", "unless it", "should probably", "probably", "might", "could", "may want", "one option",
        "an option", "defaults to", "is the default", "default;", "starting point", "tune", "a guideline",
        "guideline", "rule of thumb", "soft", "flexible", "negotiable", "tolerable", "or so", "or any", "any other",
        "any replica", "works too", "works as well", "is fine too", "fine too", "or something", "unverified",
        "under consideration", "candidates", "ideas", "whichever", "either", "alternatively", "or write",
        "fine to raise", "fine to skip", "fine to go", "go higher", "go lower", "tune upward", "tune downward",
        "could serve", "as a reference", "if practical", "try to", "aim for", "no longer relevant",
        "not relevant", "irrelevant", "obsolete", "consider", "if there's time", "if there is time", "if time allows",
        "time permitting", "maybe", "perhaps", "at some point", "eventually", "you can", "is a target", "discouraged",
        "a soft target",
    )
    # Cues that re-assert a requirement in its unit, so a waiver word there is about something else, and a
    # weakening word there that does not stand right before one of them conflicts with it (unclear).
    reassert_cues: tuple[str, ...] = (
        "must", "only", "exactly", "pinned", "required", "always", "reuse", "re-use", "reused", "reusing",
        "had to", "has to", "have to", "needs to", "need to", "required to", "mandatory", "non-negotiable",
        "existing", "already exists", "already exist", "already have", "already at", "already in", "in place",
        "do not recreate", "don't recreate", "never", "no need to recreate", "no need to rewrite",
        "no need to regenerate", "no need to write", "no need to create", "no need for a new",
    )
    # What states a withdrawn binding, limit or value as still in force (with the operator phrases).
    binding_cues: tuple[str, ...] = (
        "must", "only", "exactly", "required", "pinned", "always", "never", "reminder", "next step", "keep",
        "use ", "stays", "limit", "cap",
    )
    # A prohibition contradicted: the target said to be allowed after all.
    permission_cues: tuple[str, ...] = (
        "fine to use", "ok to use", "okay to use", "is fine", "is allowed", "are allowed", "now allowed",
        "allowed now", "allowed again", "permitted", "cleared", "lifted", "approved", "can use", "may use",
        "can be used", "free to use", "go ahead", "acceptable", "unblocked", "no longer forbidden",
        "no longer off", "no longer banned", "no longer blocked", "green light", "can go", "may go",
        "is fine to", "are fine to", "can be written", "can write", "may write", "recommended", "encouraged",
        "designated", "is the target",
    )
    # A rejected, failed or superseded approach brought back.
    reversal_cues: tuple[str, ...] = (
        "chosen", "chose", "adopted", "going with", "go with", "back on the table", "reconsidered", "reinstated",
        "revived", "switching back", "switch back", "back to", "approved", "is the plan", "the current plan",
        "now the plan", "now preferred", "preferred approach", "selected", "fixed and", "has been fixed",
        "works now", "we will use", "will use", "retry it", "try it again", "worth retrying", "give it another",
        "use it", "recommended", "works", "supported", "viable", "next step", "next steps", "enable",
    )
    # A binding or a reuse given up: the value no longer required, another one as good.
    waiver_cues: tuple[str, ...] = (
        "no longer needed", "not needed", "no longer required", "not required", "no need", "is dropped",
        "was dropped", "were dropped", "any ", "will do", "works too", "works as well", "take the latest",
        "instead", "not pinned", "unpinned", "no longer applies", "no longer",
        "doesn't matter", "does not matter", "isn't critical", "not critical", "at first", "cleaned up", "wiped",
    )
    # An existing artifact to be made anew instead of reused (waives an artifact reference only: "write every
    # number as English words" or "a new dashboard" says nothing against a bound value).
    remake_cues: tuple[str, ...] = (
        "start over", "from scratch", "write a new", "write something", "a new ", "fresh", "to create", "create",
        "missing", "deleted", "stale", "removed", "rewrite", "regenerate", "todo", "to do", "to write", "write ",
    )
    # A requirement or a statement negated, besides the prohibition cues: "need not reflect X", "does not
    # offer X" for "must reflect X", "offers X" (force-kept reads it as the requirement inverted).
    inversion_cues: tuple[str, ...] = (
        "need not", "needn't", "does not need to", "doesn't need to", "do not need to", "don't need to",
        "does not have to", "doesn't have to", "do not have to", "don't have to", "not required to", "does not",
        "doesn't", "is not", "isn't", "are not", "aren't", "no longer", "not necessarily", "instead of",
        "fails to", "failed to", "fail to", "lacks", "lacking", "omits", "omitted", "excludes", "excluding",
        "neither", "nor", "rather than", "stop", "stopped", "stop using", "cease", "ceased", "quit", "no more",
        "discontinue", "discontinued",
    )
    # A sentence opening with one of these states something; one opening with another word is read as an
    # instruction ("Reference OPS-1187 in the request", "Deploy to us-east-1"): it has force of its own.
    statement_openers: tuple[str, ...] = (
        "the", "a", "an", "this", "that", "these", "those", "we", "i", "you", "he", "she", "it", "they", "our",
        "my", "your", "his", "her", "its", "their", "there", "here", "what", "which", "who", "how", "why", "when",
        "where", "is", "are", "was", "were", "do", "does", "did", "can", "could", "would", "yes", "no", "ok",
        "okay", "sure", "great", "thanks", "thank", "hi", "hello", "well", "so", "and", "but", "or", "if",
        "as", "in", "on", "at", "for", "with", "by", "from", "of", "to", "after", "before", "some", "all", "each",
        "every", "both", "one", "many", "most", "mr", "mrs", "ms", "dr", "let's", "i'm", "we're", "you're",
        "it's", "that's", "there's", "sounds", "absolutely", "actually", "also", "just", "currently", "today",
    )
    # Between a negation and a literal, one of these makes the literal the exception the negation leaves
    # ("do not use any region other than X", "nothing but X", "not only A but also X"): X kept, not inverted.
    exception_words: tuple[str, ...] = (
        "except", "except for", "excepting", "other than", "besides", "apart from", "aside from", "beyond", "but",
        "save for", "rather than", "instead of", "unless", "outside of", "only",
    )
    # A required literal made the edge of something allowed past it ("sending outside acme.com is approved"): one
    # of these right before it, with a permission in its sentence (or ``broadening_permissions``), inverts it.
    broadening_words: tuple[str, ...] = (
        "outside", "outside of", "other than", "besides", "beyond", "not just", "not only", "no longer only",
        "in addition to", "as well as", "not limited to", "not restricted to",
    )
    broadening_permissions: tuple[str, ...] = ("can", "may", "could", "any", "anywhere", "whenever", "also")
    # A line under one of these labels is a list of words, not a statement ("keywords: s3://x/ never must"), as is
    # a bracketed or comma list of four or more short items: no cue in it governs anything.
    list_labels: tuple[str, ...] = ("keywords", "keyword", "tags", "tag", "terms", "labels", "topics", "glossary")
    # A permission in a clause holding one of these restricts ("only read-only queries are allowed").
    restriction_words: tuple[str, ...] = ("only", "solely", "exclusively")
    # A modal of permission before a forbidden act ("the agent can email customers"), written with its space so
    # "can't" and "cannot" are none; words that hold a commitment until its condition ("do not merge X until");
    # words after which a name says where the literal is, not what another thing is ("E7 in sync_catalog").
    permission_modals: tuple[str, ...] = ("can ", "may ", "can be ", "may be ")
    hold_cues: tuple[str, ...] = ("until", "before", "unless", "so far")
    qualifier_words: tuple[str, ...] = ("in", "of", "at", "inside", "within", "from", "on")
    # A limit stated as gone, beside a threshold's field: the bound inverted ("the $500 cap no longer applies").
    lifted_cues: tuple[str, ...] = ("no longer applies", "no longer apply", "does not apply", "doesn't apply", "lifted",
                                    "cancelled", "canceled", "waived", "removed", "suspended", "unlimited", "no limit",
                                    "no cap", "uncapped", "not capped", "scrapped", "dropped", "not enforced")
    # A revision note ("Update: the pin is no longer needed") that starts with one of these, shares a
    # content word with an obligation's sentence and follows it, waives or permits like a cue beside it.
    revision_markers: tuple[str, ...] = (
        "update", "updated", "edit", "edited", "later", "correction", "actually", "change of plan", "ps", "p.s.",
        "note", "since then", "afterwards", "in the end",
    )
    # Words too common to tie a revision note to an obligation.
    common_words: tuple[str, ...] = (
        "about", "after", "again", "before", "being", "could", "every", "first", "other", "should", "their",
        "there", "these", "thing", "those", "which", "while", "would", "still", "where", "since", "using",
        "until", "user", "users", "said", "says", "will", "with", "from", "that", "this", "into", "have",
        "they", "them", "then", "than", "when", "what", "were", "been", "also", "only", "must", "never",
        "keep", "kept", "next", "step", "steps", "now", "later", "update", "edit", "note",
    )
    # An obligation stated as ended: withdrawn, cancelled, dropped.
    withdrawal_cues: tuple[str, ...] = (
        "withdrawn", "withdrew", "withdrawing", "withdraw", "retracted", "retracting", "retract", "no longer",
        "lifted", "cancelled", "canceled", "dropped", "revoked", "never mind", "forget", "scratch",
        "rescinded", "not needed", "not necessary", "scrapped", "abandoned", "void", "removed", "struck through",
        "not relevant", "obsolete", "won't do", "will not do", "was", "previously", "used to", "anymore",
        "any more", "formerly", "earlier", "old", "past",
    )
    # A pending obligation filed as cancelled (a heading "Dropped", a struck-through item).
    cancellation_cues: tuple[str, ...] = (
        "dropped", "not needed", "no longer needed", "cancelled", "canceled", "struck through", "won't do",
        "will not do", "abandoned", "scrapped", "withdrawn", "descoped", "de-scoped", "skipped", "skip it",
    )
    # A fulfilled commitment told as past ("X was re-run"): with the completion cues, it ends the obligation.
    past_cues: tuple[str, ...] = ("was", "were", "nothing left", "earlier", "already")
    # A setting told as history: beside a gating field, its value no longer says what holds.
    history_cues: tuple[str, ...] = ("was", "were", "previous", "previously", "formerly", "used to", "old", "had been",
                                     "last quarter", "last month", "last year", "years ago", "back in", "for the record",
                                     "legacy", "in the past", "yesterday")
    # A commitment of the assistant's handed to someone else ("the user will publish X"), unless the
    # same unit keeps the assistant's own part ("the user reviews, then I will publish X").
    handoff_cues: tuple[str, ...] = (
        "the user will", "user will", "the user is going to", "user to", "they will", "they'll", "someone will",
        "somebody will", "the team will", "on their side", "their side", "left to the user", "up to the user",
        "handed over to", "handed to", "owned by the user", "the customer will", "the client will",
    )
    own_cues: tuple[str, ...] = (
        "i will", "i'll", "we will", "we'll", "i am going to", "i'm going to", "assistant will", "agent will",
        "my side", "our side", "on me", "i still", "we still", "assistant still", "agent still", "i need to",
        "we need to", "i must", "we must",
    )
    # An error stated as still open.
    still_failing_cues: tuple[str, ...] = (
        "still failing", "still fails", "failing", "unresolved", "open", "not fixed", "blocked by", "blocks",
        "blocking", "persists", "keeps failing", "outstanding", "still", "not resolved", "remains",
        "yet to be fixed", "broken",
    )
    # A tool call stated as answered.
    call_done_cues: tuple[str, ...] = (
        "done", "completed", "complete", "finished", "succeeded", "returned", "came back", "answered",
        "responded", "ok", "success", "struck through", "failed", "timed out", "cancelled", "canceled", "aborted",
        "errored",
    )
    # A call told as having ended without its result ("the restore did not complete -> re-issue it"): a
    # finished call, unless an open mark ("yet", "still running") shares the sentence.
    failed_outcome_cues: tuple[str, ...] = (
        "did not complete", "didn't complete", "did not finish", "didn't finish", "did not return", "didn't return",
        "did not succeed", "didn't succeed", "never completed", "never finished", "never returned", "failed to complete",
        "failed to finish", "failed to return", "gave up on", "abandoned",
    )
    # A structured status ("status: done", "state = resolved"): its value is read like a cue, and wins
    # over the words around it (a JSON item under "pending_actions" with status done is claimed done).
    status_keys: tuple[str, ...] = ("status", "state", "result")
    # A stale value is fine when marked as the old one.
    staleness_cues: tuple[str, ...] = (
        "was", "were", "previously", "formerly", "old", "no longer", "instead of", "replaced", "replaces",
        "retired", "superseded", "from", "not ", "changed", "used to", "earlier", "deprecated",
        # told as the past, not as what holds now
        "last quarter", "last month", "last year", "last week", "years ago", "back in", "for the record", "legacy",
        "in the past", "yesterday", "before the", "archived",
    )
    # A prohibition whose cue follows its target ("X is off limits"), not precedes it.
    postfix_prohibition_cues: tuple[str, ...] = (
        "off limits", "off-limits", "forbidden", "prohibited", "banned", "is blocked", "not permitted",
    )
    # An unresolved error stated as fixed, unless a resolution negator shares its unit.
    resolution_cues: tuple[str, ...] = (
        "fixed", "resolved", "no longer", "gone", "cleared", "solved", "works now", "passes again",
        "worked around", "went away", "hiccup", "transient", "recovered", "not an issue", "struck through",
        "succeeded after", "a blip",
        # dismissed as harmless: as lost as fixed for the agent that reads it
        "only a warning", "just a warning", "safe to ignore", "can be ignored", "ignorable", "cosmetic", "harmless",
        "benign", "nothing to act on", "sorted", "not a blocker", "no action needed", "noise",
        # a ticked task-list box the structure stage reads as "done:"
        "done: fix", "done: resolve",
    )
    resolution_negators: tuple[str, ...] = ("not ", "n't", "unresolved", "still")
    # Ledger entry statuses: an open call marked with one of these stays open; an open commitment
    # marked with one of these was claimed done.
    open_statuses: tuple[str, ...] = ("open", "unresolved", "pending", "in_flight", "in-flight", "running")
    done_statuses: tuple[str, ...] = ("done", "fulfilled", "complete", "completed", "closed")
    # Words of force in general: with a check's own cues (and the negators), they tell an *unclear* reading
    # from a bare mention. A literal whose line holds none of them has nothing that could make it binding
    # (a violation); one whose line holds some the check could not attach is shown for review instead.
    force_words: tuple[str, ...] = (
        "must", "need", "needs", "needed", "required", "requires", "require", "requirement", "have to", "has to",
        "had to", "should", "shall", "only", "always", "never", "not", "no", "nor", "rule", "rules", "constraint",
        "constraints", "guardrail", "guardrails", "policy", "mandatory", "strict", "strictly", "hard", "keep",
        "avoid", "stay", "stays", "allowed", "allow", "permitted", "limit", "limits", "blocked", "hold", "holds",
        "do not", "don't", "banned", "forbidden", "deny", "denied", "off limits", "off-limits", "won't",
    )
    # A letters-only snake_case key opening with one of these says how a value binds, not what it is about:
    # "must_be_strictly_below: 4096" is no field of its own, and no name a summary could invent.
    relation_words: tuple[str, ...] = (
        "must", "should", "shall", "required", "require", "requires", "needs", "need", "equal", "equals", "at", "no",
        "not", "never", "less", "more", "fewer", "greater", "strictly", "exactly", "below", "above", "under", "over",
        "expected", "be", "is", "has", "have", "allowed", "up",
    )
    # A sentence opening with one of these goes on about the thing the sentence before it named ("... (call
    # call_9b8a). That request has not returned."): a call's open mark may stand there.
    anaphors: tuple[str, ...] = (
        "it", "its", "it's", "this", "that", "these", "those", "they", "their", "which", "the call", "the request",
        "the result", "the results", "the reply", "the response", "the answer", "the output", "the job", "the run",
        "the task", "the same", "said call", "the tool",
    )
    # A label (heading, key, column) holding one of these lists what may be used: a prohibited target
    # under it is stated as allowed ("allowed_outputs: [..., X]").
    permission_labels: tuple[str, ...] = (
        "allowed", "permitted", "approved", "allowlist", "allowlisted", "whitelist", "whitelisted", "ok to use",
        "safe to use", "can use", "safe to", "fine to", "ok to", "okay to", "free to",
    )
    # A label holding one of these lists what must not be used: a required literal
    # under it is stated as forbidden ("avoid_regions: [X]").
    avoidance_labels: tuple[str, ...] = (
        "avoid", "avoided", "exclude", "excluded", "blocked", "blocklist", "denylist", "blacklist", "do not use",
        "don't use", "never use", "must not use", "not allowed", "forbidden", "prohibited", "banned", "off limits",
        "off-limits", "deny", "denied", "ruled out", "rejected", "discarded", "deprecated", "retired", "obsolete",
    )
    # A clause opening with one of these and closed by a comma says when, not how strongly: a modal inside it
    # ("before the agent could write the config, the field had to be 1") does not govern the main clause.
    subordinators: tuple[str, ...] = ("before", "after", "until", "once", "when", "while", "by the time", "so that",
                                      "in order to", "whenever")
    # Words that put an action ahead without being a pending cue on their own ("run X again after the
    # review"): beside a commitment's object they make a missing pending action unclear, not a violation.
    action_words: tuple[str, ...] = ("again", "redo", "re-do", "repeat", "plan", "planned", "next")
    # A number a summary writes as a word ("at most three", "set it to zero", "now one (was three)") is that
    # number wherever a number is read: after an operator phrase, a field link, "to", "now", "was" or
    # "of" (not before "of": "one of the calls"). Replace these pairs for a summarizer that writes another
    # language or "a dozen".
    number_words: tuple[tuple[str, str], ...] = (
        ("zero", "0"), ("one", "1"), ("two", "2"), ("three", "3"), ("four", "4"), ("five", "5"), ("six", "6"),
        ("seven", "7"), ("eight", "8"), ("nine", "9"), ("ten", "10"), ("eleven", "11"), ("twelve", "12"),
        ("thirteen", "13"), ("fourteen", "14"), ("fifteen", "15"), ("sixteen", "16"), ("seventeen", "17"),
        ("eighteen", "18"), ("nineteen", "19"), ("twenty", "20"), ("thirty", "30"), ("forty", "40"),
        ("fifty", "50"), ("sixty", "60"), ("seventy", "70"), ("eighty", "80"), ("ninety", "90"),
        ("a hundred", "100"), ("one hundred", "100"), ("a thousand", "1000"), ("one thousand", "1000"),
    )
    # Words after which a number word stands for a value.
    number_leads: tuple[str, ...] = ("to", "at", "is", "be", "now", "was", "of", "=", ":", "stays", "remains",
                                     "only", "exactly", "max", "min", "than", "most", "least", "under", "below",
                                     "above", "over", "exceed", "cap", "capped", "limit", "limited", "set",
                                     "allowed", "allow", "(")
    # How far (in words) a cue or a number may sit from the literal it qualifies.
    cue_window: int = 8
    completion_window: int = 5
    resolution_window: int = 6
    disposition_window: int = 12
    unresolved_window: int = 12
    call_done_window: int = 3
    number_window: int = 6
    negation_window: int = 4
    # Punctuation that ends a negation's reach ("Pinned? no, any bucket works": the "no" stops at the comma).
    negation_stops: tuple[str, ...] = (",", ";", ":", ".", "!", "?", "\u2014", " - ")
    force_window: int = 10
    # Where each check reads (see the module docstring for the units).
    prohibition_unit: str = "sentence"
    softening_unit: str = "clause"
    pending_unit: str = "sentence"
    completion_unit: str = "clause"
    resolution_unit: str = "clause"
    force_unit: str = "sentence"
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
            if f.name.endswith(("_cues", "_traps", "_negators", "_statuses", "_links", "_words", "_leads")) and f.name != "number_words" or f.name in (
                    "negators", "negation_stops"):
                if not isinstance(value, tuple) or not all(isinstance(v, str) and v for v in value):
                    raise InvalidArgument(f"ProseRules({f.name}={value!r}): expected a tuple of non-empty strings")
            if f.name == "number_words" and not (isinstance(value, tuple) and all(
                    isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(p, str) and p for p in pair)
                    and pair[1].isdigit() for pair in value)):
                raise InvalidArgument("ProseRules(number_words=...): expected a tuple of (word, digits) pairs")
            if f.name in ("disposition_classes", "operator_phrases") and not _named_phrase_lists(value):
                what = "disposition" if f.name == "disposition_classes" else "operator"
                raise InvalidArgument(f"ProseRules({f.name}=...): expected a tuple of ({what}, tuple of "
                                      "non-empty phrases) pairs")
            if f.name in ("near_miss_ratio", "ledger_budget_share") and not (
                    isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1):
                raise InvalidArgument(f"ProseRules({f.name}={value!r}): expected a number in (0, 1]")
            if f.name.endswith("_unit") and value not in UNITS:
                raise InvalidArgument(f"ProseRules({f.name}={value!r}): expected one of {', '.join(UNITS)}")
            if f.name.endswith("_window") and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise InvalidArgument(f"ProseRules({f.name}={value!r}): expected a whole number of words >= 0")


def _named_phrase_lists(value) -> bool:
    """A tuple of (name, tuple of non-empty phrases) pairs."""
    return isinstance(value, tuple) and all(
        isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], tuple)
        and all(isinstance(p, str) and p for p in pair[1]) for pair in value)


DEFAULT_RULES = ProseRules()
