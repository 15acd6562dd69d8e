"""Realistic lossy compactors, each breaking one invariant the way the reference notes describe.

Each starts from the correct prose compactor and changes one thing. They are
the harness's own proof that every oracle catches what it claims to.

The session mutants (``SESSION_MUTANTS``) start from the correct prose compactor of
rich protocol 2 (``_correct``: marker, journal, structured handles) and break one
session-level invariant: what goes wrong only across rounds, on re-compaction, after
a tightening, or between two calls.
"""

from __future__ import annotations

import dataclasses
import datetime
import itertools
import re

from harness._base._model import Fact, FactKind, Role, Turn
from harness._base._tokens import count_tokens
from harness._base._protocol import CompactionRequest, CompactionResult, JournalEntry, LedgerEntry, RecoveryMarker
from harness.summarizers._render import (
    Renderer,
    handle_turn,
    in_flight_calls,
    prose_result,
    state,
    with_protocol2,
)

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
    "summary_after_pending_call",
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
    "forgets_on_recompaction",
    "stale_marker",
    "varies",
    "hash_only_journal",
    "drops_gates_late",
    "claims_verified",
    "handles_in_prose",
    "SESSION_MUTANTS",
    "VARIANTS",
]


def _prose(request: CompactionRequest, render=state, *, kept: tuple[Turn, ...] = (), **options) -> CompactionResult:
    """The prose compactor's rendering with its in-flight calls re-attached as structured calls, as the
    correct one does: a mutant about something else keeps its handles (``drops_call_id`` and
    ``unmarked_call``, which are about calls, use ``prose_result`` itself)."""
    return prose_result(request, render, kept=kept + handle_turn(in_flight_calls(request), request), **options)


def _only(kind: FactKind, render):
    """A renderer that changes how one kind is stated and states the rest correctly."""
    return lambda fact: render(fact) if fact.kind is kind else state(fact)


def drops_pending_action(request: CompactionRequest) -> CompactionResult:
    """Keeps the decision, drops the promised action (000: 're-run the migration' lost)."""
    return _prose(request, _only(FactKind.COMMITMENT, lambda f: f"Decision recorded for {f.detail('noun')} {f.literals[0]}: approach agreed."))


def claims_completion(request: CompactionRequest) -> CompactionResult:
    """States an open commitment as done ('migration complete')."""
    return _prose(request, _only(FactKind.COMMITMENT, lambda f: f"{f.detail('past')} {f.detail('noun')} {f.literals[0]}: done."))


def drops_call_id(request: CompactionRequest) -> CompactionResult:
    """Keeps the intent of an in-flight call, drops its id (000: the handle is lost)."""
    return prose_result(request, _only(FactKind.IN_FLIGHT_CALL, lambda f: f"A {f.detail('name')} call was started and is still in flight."))


def unmarked_call(request: CompactionRequest) -> CompactionResult:
    """Mentions an open call as if it had run, without marking it UNRESOLVED (001: closure)."""
    return prose_result(request, _only(FactKind.IN_FLIGHT_CALL, lambda f: f"Ran {f.detail('name')} ({f.literals[0]})."))


def drops_errors(request: CompactionRequest) -> CompactionResult:
    """Folds unresolved errors into a vague remark."""
    return _prose(request, _only(FactKind.UNRESOLVED_ERROR, lambda f: f"There was a hiccup with {f.detail('name')}."))


def drops_gating_field(request: CompactionRequest) -> CompactionResult:
    """Drops the config line that gates the next write (002: max_retries: 0 lost)."""
    return _prose(request, _only(FactKind.GATING_FIELD, lambda f: f"Config was read; next we {f.detail('write')}."))


def _paraphrase(literal: str) -> str:
    stripped = re.sub(r"[-_.]?\d+", "", literal)
    return stripped if len(stripped) >= 4 and stripped != literal else literal.split(".")[0] + "-latest"


def paraphrases_literals(request: CompactionRequest) -> CompactionResult:
    """Rewrites exact identifiers into plausible names (004: acme-stage-07 -> acme-staging)."""
    return _prose(request, _only(FactKind.LITERAL_BINDING, lambda f: f"Use {_paraphrase(f.literals[0])} for the {f.detail('category')}."))


def softens_prohibition(request: CompactionRequest) -> CompactionResult:
    """Turns 'never X' into a preference (004: 'prefers staging over production')."""
    return _prose(request, _only(FactKind.PROHIBITION, lambda f: f"The user prefers to avoid {f.literals[0]} if possible."))


def rounds_threshold(request: CompactionRequest) -> CompactionResult:
    """Rounds an exact limit into 'a few' (004: retry <= 3 -> 'a few retries')."""
    return _prose(request, _only(FactKind.THRESHOLD, lambda f: f"Keep {f.literals[0]} to a few."))


def folds_rejections(request: CompactionRequest) -> CompactionResult:
    """Folds 'rejected after a failed dry run' into 'explored' (001)."""
    return _prose(request, _only(FactKind.NEGATIVE_FACT, lambda f: f"Explored approach {f.literals[0]} earlier."))


def _stale(fact: Fact) -> str:
    if fact.detail("field"):
        return f"{fact.detail('field')} {fact.detail('operator') or '='} {fact.detail('old')}."
    return f"Use {fact.detail('old')} for the {fact.detail('category') or 'target'}."


def keeps_stale_value(request: CompactionRequest) -> CompactionResult:
    """Keeps the value from before a change (001/004: the stale threshold survives)."""
    return _prose(request, _only(FactKind.SUPERSESSION, _stale))


def lying_self_report(request: CompactionRequest) -> CompactionResult:
    """Drops thresholds and bindings but reports every tagged item as retained (000)."""
    dropped = (FactKind.THRESHOLD, FactKind.LITERAL_BINDING, FactKind.SUPERSESSION)
    return _prose(request, lambda f: "" if f.kind in dropped else state(f),
                        self_report=tuple(f.id for f in request.tags))


def cuts_tool_pairs(request: CompactionRequest) -> CompactionResult:
    """Keeps the most recent tool result verbatim but summarizes away its call (trim_messages)."""
    literals = {lit for f in request.tags for lit in f.literals}
    last_result = next((t for t in reversed(request.turns)
                        if t.role is Role.TOOL and not any(lit in t.text for lit in literals)), None)
    kept = (Turn(Role.TOOL, t.text, (), t.tool_call_id),) if (t := last_result) else ()
    return _prose(request, kept=kept)


def summary_after_pending_call(request: CompactionRequest) -> CompactionResult:
    """Re-attaches the pending call, then writes the summary after it: the call is no longer the last
    message, so its result cannot follow it and the provider refuses the request."""
    result = prose_result(request)
    return CompactionResult((*handle_turn(in_flight_calls(request), request), *result.messages))


def invents_restriction(request: CompactionRequest) -> CompactionResult:
    """Adds a restriction the user never gave (field reports)."""
    return _prose(request, extra="Never modify ops/000_legacy.sql under any circumstances.")


def overruns_budget(request: CompactionRequest) -> CompactionResult:
    """Writes a line per turn, whatever the budget: the summary outgrows what it summarizes."""
    lines = [f"Turn {i} ({t.role.value}) said: {t.text} (noted for later)" for i, t in enumerate(request.turns)
             if t.role is not Role.SYSTEM]
    return _prose(request, preamble="Notes:\n" + "\n".join(lines))


def bloated_ledger(request: CompactionRequest) -> CompactionResult:
    """A correct ledger padded with every turn's text, so it outgrows its share of the budget."""
    ledger = [LedgerEntry.verbatim(f) for f in request.tags]
    padding = 0
    for turn in request.turns:  # pad to about a third of the budget: over its share, within the budget
        if not turn.text or padding > request.budget // 3:
            continue
        ledger.append(LedgerEntry("note", (turn.text,)))
        padding += count_tokens(turn.text) + 4
    return CompactionResult(_prose(request).messages, ledger=tuple(ledger))


def accumulates(request: CompactionRequest) -> CompactionResult:
    """Carries every previous summary forward verbatim and adds to it: grows each round (field reports)."""
    previous = "\n".join(t.text for t in request.turns if t.role is Role.SYSTEM)
    return _prose(request, preamble=previous)


_WEAKENED = {
    FactKind.LITERAL_BINDING: lambda f: f"Use {f.literals[0]} for the {f.detail('category') or 'target'}, preferably.",
    FactKind.THRESHOLD: lambda f: f"{f.literals[0]} {f.detail('operator')} {f.literals[1]}, ideally.",
    FactKind.GATING_FIELD: lambda f: f"Gating config {f.literals[0]}: {f.literals[1]} (optional, before we {f.detail('write')}).",
    FactKind.ARTIFACT_REFERENCE: lambda f: f"Existing {f.detail('what')}: {f.literals[0]} (optionally reuse it).",
}


def weakens_requirements(request: CompactionRequest) -> CompactionResult:
    """Keeps every literal, operator and value, but turns requirements into preferences (004: modality lost)."""
    return _prose(request, lambda f: _WEAKENED[f.kind](f) if f.kind in _WEAKENED else state(f))


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
    return _prose(request, lambda f: "" if f.kind is FactKind.RETRACTION else state(f),
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
    return _prose(request, render)


def restates_threshold(request: CompactionRequest) -> CompactionResult:
    """States each limit right, then again at the end with ten times the number, as a later note would."""
    later = [f"Later note: {f.literals[0]} {f.detail('operator')} {int(f.literals[1]) * 10}."
             for f in request.tags if f.kind is FactKind.THRESHOLD and f.literals[1].isdigit()]
    return _prose(request, extra=" ".join(later))


def lifts_prohibition(request: CompactionRequest) -> CompactionResult:
    """Keeps each prohibition, then adds that it was lifted, which the user never said."""
    lifted = [f"Update: {f.literals[0]} is fine to use now." for f in request.tags if f.kind is FactKind.PROHIBITION]
    return _prose(request, extra=" ".join(lifted))


def revives_rejection(request: CompactionRequest) -> CompactionResult:
    """Keeps each rejection, and says the rejected approach became the plan after all."""
    return _prose(request, _only(FactKind.NEGATIVE_FACT, lambda f: (
        f"Approach {f.literals[0]} was {f.detail('disposition')} at first, but it is now the chosen approach.")))


# -- session mutants: rich protocol 2, broken across rounds -----------------------------------------

def _correct(request: CompactionRequest, render: Renderer = state, *, handles: bool = True,
             tags: tuple[Fact, ...] | None = None, preamble: str = "",
             self_report: tuple[str, ...] | None = None) -> CompactionResult:
    """The correct prose compactor (``prose:summarize``), with the tags it states and how it renders them
    open to change: obligations in prose, in-flight calls re-attached as structured calls, protocol 2.
    The self-report lists the tags stated unless given."""
    tags = request.tags if tags is None else tags
    stated = dataclasses.replace(request, tags=tags)
    kept = handle_turn(in_flight_calls(request), request) if handles else ()
    report = tuple(f.id for f in tags) if self_report is None else self_report
    return with_protocol2(request, prose_result(stated, render, kept=kept, preamble=preamble, self_report=report))


_OWN_SUMMARY = re.compile(r"^Summary of \d+ earlier turns \(")


def _own_summaries(request: CompactionRequest) -> list[str]:
    """The texts of this compactor's own earlier summaries in its input (a re-compaction has one)."""
    return [t.text for t in request.turns if t.role is Role.SYSTEM and _OWN_SUMMARY.match(t.text)]


def forgets_on_recompaction(request: CompactionRequest) -> CompactionResult:
    """Generational loss: correct on a first compaction; re-compacting its own summary, it takes the
    header of that summary to run one line too far and loses the first obligation it had carried.

    Its handles (the structured calls) are re-attached by their own path, so an in-flight call is
    never the one lost; the self-report lists what it wrote, so it does not lie about it either.
    """
    earlier = _own_summaries(request)
    if not earlier:
        return _correct(request)
    carried_lines = [line for text in earlier for line in text.splitlines()[1:]]
    lost = next((f for line in carried_lines for f in request.tags
                 if f.kind is not FactKind.IN_FLIGHT_CALL and state(f) == line), None)
    return _correct(request, tags=tuple(f for f in request.tags if f is not lost))


# The first marker this process ever wrote: a resume pointer cached by the runtime and never refreshed.
_FIRST_MARKER: dict[str, RecoveryMarker] = {}


def stale_marker(request: CompactionRequest) -> CompactionResult:
    """Remembers the first marker it ever wrote (module-level) and re-emits its tier and node whenever
    the tier differs from that one: the digest path of a deeper tier reuses the cached resume pointer.

    While the tier never changes it writes the correct marker; after a tightening its marker is at the
    wrong depth and points at a node the re-compaction invalidated. State kept across calls is how it
    goes wrong, so it is marked as allowed to vary (``compaction_may_vary``): its one violation is
    ``marker-depth``, not ``deterministic``.
    """
    result = _correct(request)
    first = _FIRST_MARKER.setdefault("first", result.marker)
    if first.tier == request.tier:
        return result
    stale = RecoveryMarker(first.tier, first.node, result.marker.resolved_calls)
    return with_protocol2(request, dataclasses.replace(result, marker=None, journal=None, verified=None),
                          marker=stale)


stale_marker.compaction_may_vary = True


_DRAFTS = itertools.count(1)


def varies(request: CompactionRequest) -> CompactionResult:
    """Correct content, but each call is a new draft: it stamps the draft (a per-process call counter and
    the time it was written, as summaries stamped "compacted at ..." do) and lists the obligations starting
    from a different one each draft, so the same request asked twice gives two different results, in the
    same process or a restarted one."""
    draft = next(_DRAFTS)
    tags = request.tags
    if tags:
        k = draft % len(tags)
        tags = tags[k:] + tags[:k]
    written = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")
    return _correct(request, tags=tags, preamble=f"(draft {draft}, written {written})")


def hash_only_journal(request: CompactionRequest) -> CompactionResult:
    """A journal that records the hash of what it removed but not the payload: it cannot be rolled back."""
    result = _correct(request)
    journal = tuple(JournalEntry(e.start, e.end, e.inserted, None, e.removed_sha256) for e in result.journal)
    return with_protocol2(request, dataclasses.replace(result, marker=None, journal=None, verified=None),
                          journal=journal)


def drops_gates_late(request: CompactionRequest) -> CompactionResult:
    """Keeps gating fields and prohibitions on a first compaction, drops them when it re-compacts its own
    summary ('already enforced earlier'), so a write that comes after is no longer governed."""
    if not _own_summaries(request):
        return _correct(request)
    gates = (FactKind.GATING_FIELD, FactKind.PROHIBITION)
    return _correct(request, tags=tuple(f for f in request.tags if f.kind not in gates))


#: What ``claims_verified`` says it verified: every class it has heard of.
CLAIMED = ("handle-retained", "handle-carried", "closure", "commitment-retained", "completion-honest",
           "error-retained", "gating-field-retained", "literal-verbatim", "negation-polarity", "threshold-exact",
           "supersession", "negative-fact-disposition", "no-invented-obligation", "tool-pairing",
           "budget-respected", "self-report-honest", "journal-reversible", "marker-depth")


def claims_verified(request: CompactionRequest) -> CompactionResult:
    """Claims every class verified, ``handle-retained`` among them, while dropping in-flight call ids
    (its self-report, at least, leaves out the calls it no longer names)."""
    result = _correct(request, _only(FactKind.IN_FLIGHT_CALL,
                                     lambda f: f"A {f.detail('name')} call was started and is still in flight."),
                      handles=False,
                      self_report=tuple(f.id for f in request.tags if f.kind is not FactKind.IN_FLIGHT_CALL))
    return dataclasses.replace(result, verified=CLAIMED)


def handles_in_prose(request: CompactionRequest) -> CompactionResult:
    """Mentions each in-flight call id only in prose ('call_x is still running'): no structured call,
    no ledger entry, so the result cannot be re-attached to it; it would have to be reconstructed from prose."""
    calls = in_flight_calls(request)
    extra = " ".join(f"{c.id} ({c.name}) is still running." for c in calls
                     if not any(f.kind is FactKind.IN_FLIGHT_CALL and f.literals[0] == c.id for f in request.tags))
    result = _correct(request, handles=False)
    if not extra:
        return result
    text = result.messages[0].text + "\n" + extra
    return with_protocol2(request, dataclasses.replace(result, messages=(Turn(Role.SYSTEM, text),), marker=None,
                                                       journal=None, verified=None))


# session-scope invariant id -> the mutant built to break it
SESSION_MUTANTS = {
    "summary-growth": accumulates,
    "ledger-monotone": forgets_on_recompaction,
    "marker-depth": stale_marker,
    "deterministic": varies,
    "effect-window": drops_gates_late,
    "consumer-requirements": claims_verified,
    "handle-carried": handles_in_prose,
}

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
    "provider-valid": summary_after_pending_call,
    "no-invented-obligation": invents_restriction,
    "budget-respected": overruns_budget,
    "ledger-budget": bloated_ledger,
    "force-kept": weakens_requirements,
    "dead-obligation": remembers_first_word,
    # rich protocol 2: judged on one result (its journal against its request), so a compaction-scope
    # invariant, though its mutant is built like the session ones (``_correct``)
    "journal-reversible": hash_only_journal,
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
