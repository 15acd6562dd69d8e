"""Realistic lossy compactors, each breaking one invariant the way the reference notes describe.

Each starts from the correct prose compactor and changes one thing. They are
the harness's own proof that every oracle catches what it claims to.
"""

from __future__ import annotations

import re

from harness._base._model import Fact, FactKind, Role, Turn
from harness._base._tokens import count_tokens
from harness._base._protocol import CompactionRequest, CompactionResult, LedgerEntry
from harness.summarizers._render import prose_result, state
from harness.summarizers.ledgered import entry_for

__all__ = [
    "MUTANTS",
    "drops_pending_action",
    "claims_completion",
    "drops_call_id",
    "unmarked_call",
    "drops_errors",
    "drops_gating_field",
    "paraphrases_literals",
    "softens_prohibition",
    "rounds_threshold",
    "folds_rejections",
    "keeps_stale_value",
    "lying_self_report",
    "cuts_tool_pairs",
    "invents_restriction",
    "overruns_budget",
    "bloated_ledger",
    "accumulates",
    "weakens_requirements",
    "remembers_first_word",
    "extends_literals",
    "restates_threshold",
    "lifts_prohibition",
    "revives_rejection",
    "SESSION_MUTANTS",
    "VARIANTS",
]


def _only(kind: FactKind, render):
    """A renderer that changes how one kind is stated and states the rest correctly."""
    return lambda fact: render(fact) if fact.kind is kind else state(fact)


def drops_pending_action(request: CompactionRequest) -> CompactionResult:
    """Keeps the decision, drops the promised action (000: 're-run the migration' lost)."""
    return prose_result(request, _only(FactKind.COMMITMENT, lambda f: f"Decision recorded for {f.detail('noun')} {f.literals[0]}: approach agreed."))


def claims_completion(request: CompactionRequest) -> CompactionResult:
    """States an open commitment as done ('migration complete')."""
    return prose_result(request, _only(FactKind.COMMITMENT, lambda f: f"{f.detail('past')} {f.detail('noun')} {f.literals[0]}: done."))


def drops_call_id(request: CompactionRequest) -> CompactionResult:
    """Keeps the intent of an in-flight call, drops its id (000: the handle is lost)."""
    return prose_result(request, _only(FactKind.IN_FLIGHT_CALL, lambda f: f"A {f.detail('name')} call was started and is still in flight."))


def unmarked_call(request: CompactionRequest) -> CompactionResult:
    """Mentions an open call as if it had run, without marking it UNRESOLVED (001: closure)."""
    return prose_result(request, _only(FactKind.IN_FLIGHT_CALL, lambda f: f"Ran {f.detail('name')} ({f.literals[0]})."))


def drops_errors(request: CompactionRequest) -> CompactionResult:
    """Folds unresolved errors into a vague remark."""
    return prose_result(request, _only(FactKind.UNRESOLVED_ERROR, lambda f: f"There was a hiccup with {f.detail('name')}."))


def drops_gating_field(request: CompactionRequest) -> CompactionResult:
    """Drops the config line that gates the next write (002: max_retries: 0 lost)."""
    return prose_result(request, _only(FactKind.GATING_FIELD, lambda f: f"Config was read; next we {f.detail('write')}."))


def _paraphrase(literal: str) -> str:
    stripped = re.sub(r"[-_.]?\d+", "", literal)
    return stripped if len(stripped) >= 4 and stripped != literal else literal.split(".")[0] + "-latest"


def paraphrases_literals(request: CompactionRequest) -> CompactionResult:
    """Rewrites exact identifiers into plausible names (004: acme-stage-07 -> acme-staging)."""
    return prose_result(request, _only(FactKind.LITERAL_BINDING, lambda f: f"Use {_paraphrase(f.literals[0])} for the {f.detail('category')}."))


def softens_prohibition(request: CompactionRequest) -> CompactionResult:
    """Turns 'never X' into a preference (004: 'prefers staging over production')."""
    return prose_result(request, _only(FactKind.PROHIBITION, lambda f: f"The user prefers to avoid {f.literals[0]} if possible."))


def rounds_threshold(request: CompactionRequest) -> CompactionResult:
    """Rounds an exact limit into 'a few' (004: retry <= 3 -> 'a few retries')."""
    return prose_result(request, _only(FactKind.THRESHOLD, lambda f: f"Keep {f.literals[0]} to a few."))


def folds_rejections(request: CompactionRequest) -> CompactionResult:
    """Folds 'rejected after a failed dry run' into 'explored' (001)."""
    return prose_result(request, _only(FactKind.NEGATIVE_FACT, lambda f: f"Explored approach {f.literals[0]} earlier."))


def _stale(fact: Fact) -> str:
    if fact.detail("field"):
        return f"{fact.detail('field')} {fact.detail('operator') or '='} {fact.detail('old')}."
    return f"Use {fact.detail('old')} for the {fact.detail('category') or 'target'}."


def keeps_stale_value(request: CompactionRequest) -> CompactionResult:
    """Keeps the value from before a change (001/004: the stale threshold survives)."""
    return prose_result(request, _only(FactKind.SUPERSESSION, _stale))


def lying_self_report(request: CompactionRequest) -> CompactionResult:
    """Drops thresholds and bindings but reports every tagged item as retained (000)."""
    dropped = (FactKind.THRESHOLD, FactKind.LITERAL_BINDING, FactKind.SUPERSESSION)
    return prose_result(request, lambda f: "" if f.kind in dropped else state(f),
                        self_report=tuple(f.id for f in request.tags))


def cuts_tool_pairs(request: CompactionRequest) -> CompactionResult:
    """Keeps the most recent tool result verbatim but summarizes away its call (trim_messages)."""
    literals = {lit for f in request.tags for lit in f.literals}
    last_result = next((t for t in reversed(request.turns)
                        if t.role is Role.TOOL and not any(lit in t.text for lit in literals)), None)
    kept = (Turn(Role.TOOL, t.text, (), t.tool_call_id),) if (t := last_result) else ()
    return prose_result(request, kept=kept)


def invents_restriction(request: CompactionRequest) -> CompactionResult:
    """Adds a restriction the user never gave (field reports)."""
    return prose_result(request, extra="Never modify ops/000_legacy.sql under any circumstances.")


def overruns_budget(request: CompactionRequest) -> CompactionResult:
    """Writes a line per turn, whatever the budget: the summary outgrows what it summarizes."""
    lines = [f"Turn {i} ({t.role.value}) said: {t.text} (noted for later)" for i, t in enumerate(request.turns)
             if t.role is not Role.SYSTEM]
    return prose_result(request, preamble="Notes:\n" + "\n".join(lines))


def bloated_ledger(request: CompactionRequest) -> CompactionResult:
    """A correct ledger padded with every turn's text, so it outgrows its share of the budget."""
    ledger = [entry_for(f) for f in request.tags]
    padding = 0
    for turn in request.turns:  # pad to about a third of the budget: over its share, within the budget
        if not turn.text or padding > request.budget // 3:
            continue
        ledger.append(LedgerEntry("note", (turn.text,)))
        padding += count_tokens(turn.text) + 4
    return CompactionResult(prose_result(request).messages, ledger=tuple(ledger))


def accumulates(request: CompactionRequest) -> CompactionResult:
    """Carries every previous summary forward verbatim and adds to it: grows each round (field reports)."""
    previous = "\n".join(t.text for t in request.turns if t.role is Role.SYSTEM)
    return prose_result(request, preamble=previous)


_WEAKENED = {
    FactKind.LITERAL_BINDING: lambda f: f"Use {f.literals[0]} for the {f.detail('category') or 'target'}, preferably.",
    FactKind.THRESHOLD: lambda f: f"{f.literals[0]} {f.detail('operator')} {f.literals[1]}, ideally.",
    FactKind.GATING_FIELD: lambda f: f"Gating config {f.literals[0]}: {f.literals[1]} (optional, before we {f.detail('write')}).",
    FactKind.ARTIFACT_REFERENCE: lambda f: f"Existing {f.detail('what')}: {f.literals[0]} (optionally reuse it).",
}


def weakens_requirements(request: CompactionRequest) -> CompactionResult:
    """Keeps every literal, operator and value, but turns requirements into preferences (004: modality lost)."""
    return prose_result(request, lambda f: _WEAKENED[f.kind](f) if f.kind in _WEAKENED else state(f))


_IDENTIFIER = re.compile(r"[\w./:-]*[\d_/][\w./:-]*")
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def remembers_first_word(request: CompactionRequest) -> CompactionResult:
    """Notes the first thing said about each identifier and never reads what later changed it (001: stale memory).

    Withdrawals, completions and fixes come later in the log, so the note keeps a rule
    the user withdrew or a step already done as if still binding; withdrawals among
    the tagged events are skipped as "nothing to do".
    """
    seen: set[str] = set()
    notes = []
    for turn in request.turns:
        if turn.role not in (Role.USER, Role.ASSISTANT):
            continue
        for sentence in _SENTENCES.split(turn.text):
            fresh = [t for t in _IDENTIFIER.findall(sentence) if t.strip(".:/-") and t not in seen]
            if fresh and not any(t in seen for t in _IDENTIFIER.findall(sentence)):
                notes.append(sentence.strip())
            seen.update(_IDENTIFIER.findall(sentence))
    return prose_result(request, lambda f: "" if f.kind is FactKind.RETRACTION else state(f),
                        preamble="From the log: " + " ".join(notes) if notes else "")


def _longer(literal: str) -> str:
    """A different token that contains the literal's text: 6.24.1 -> 6.24.10, s3://a-01/ -> s3://a-010/."""
    return literal[:-1] + "0/" if literal.endswith("/") else literal + "0"


def extends_literals(request: CompactionRequest) -> CompactionResult:
    """Writes each bound identifier with one character more (6.24.1 as 6.24.10): a substring is not a match."""
    verbatim = (FactKind.LITERAL_BINDING, FactKind.PROHIBITION, FactKind.ARTIFACT_REFERENCE)

    def render(fact: Fact) -> str:
        if fact.kind not in verbatim:
            return state(fact)
        longer = Fact(fact.id, fact.kind, (_longer(fact.literals[0]), *fact.literals[1:]), fact.origin_turn,
                      fact.polarity, fact.fate, fact.details)
        return state(longer)
    return prose_result(request, render)


def restates_threshold(request: CompactionRequest) -> CompactionResult:
    """States each limit right, then again at the end with ten times the number, as a later note would."""
    later = [f"Later note: {f.literals[0]} {f.detail('operator')} {int(f.literals[1]) * 10}."
             for f in request.tags if f.kind is FactKind.THRESHOLD and f.literals[1].isdigit()]
    return prose_result(request, extra=" ".join(later))


def lifts_prohibition(request: CompactionRequest) -> CompactionResult:
    """Keeps each prohibition, then adds that it was lifted, which the user never said."""
    lifted = [f"Update: {f.literals[0]} is fine to use now." for f in request.tags if f.kind is FactKind.PROHIBITION]
    return prose_result(request, extra=" ".join(lifted))


def revives_rejection(request: CompactionRequest) -> CompactionResult:
    """Keeps each rejection, and says the rejected approach became the plan after all."""
    return prose_result(request, _only(FactKind.NEGATIVE_FACT, lambda f: (
        f"Approach {f.literals[0]} was {f.detail('disposition')} at first, but it is now the chosen approach.")))


# session-scope invariant id -> the mutant built to break it
SESSION_MUTANTS = {"summary-growth": accumulates}

# invariant id -> the mutant built to break it
MUTANTS = {
    "commitment-retained": drops_pending_action,
    "completion-honest": claims_completion,
    "handle-retained": drops_call_id,
    "closure": unmarked_call,
    "error-retained": drops_errors,
    "gating-field-retained": drops_gating_field,
    "literal-verbatim": paraphrases_literals,
    "negation-polarity": softens_prohibition,
    "threshold-exact": rounds_threshold,
    "negative-fact-disposition": folds_rejections,
    "supersession": keeps_stale_value,
    "self-report-honest": lying_self_report,
    "tool-pairing": cuts_tool_pairs,
    "no-invented-obligation": invents_restriction,
    "budget-respected": overruns_budget,
    "ledger-budget": bloated_ledger,
    "force-kept": weakens_requirements,
    "dead-obligation": remembers_first_word,
}

# More mutants for invariants with several ways to fail: (invariant id, mutant), each caught by its own oracle.
VARIANTS = (
    ("literal-verbatim", extends_literals),
    ("threshold-exact", restates_threshold),
    ("force-kept", lifts_prohibition),
    ("force-kept", revives_rejection),
)

for _mutant in (*MUTANTS.values(), *SESSION_MUTANTS.values(), *(m for _, m in VARIANTS)):
    _mutant.compaction_protocol = "rich"  # what `run` uses when --protocol is not given
