"""Oracles for open obligations: commitments, tool-call handles, errors, gating fields."""

from __future__ import annotations

import re

from collections.abc import Iterator

from harness._base._model import FactKind
from harness.oracles._lexicon import phrase_pattern
from harness.oracles._units import Clause
from harness.oracles._core import Case, Evidence, Finding, Outcome, oracle
from harness.oracles._numbers import line_mentions, value_mentions
from harness.oracles._cues import listed_words, cue_distance, cue_in, cue_near, force_words, free_cue, governing_cue, label_cue, line_cue, negated, sequels, status_in


def _live(case: Case, kind: FactKind):
    return [f for f in case.live if f.kind is kind]


def _action_forms(fact) -> tuple[str, ...]:
    action = (fact.detail("action") or "").lower()
    forms = {action, action.replace("-", ""), action.replace(" ", ""), action.replace(" ", "-")}
    if fact.detail("past"):
        forms.add(fact.detail("past").lower())
    return tuple(f for f in forms if f)


def _action_on(fact, obj: str) -> str:
    """"merge PR-2291", or, for a commitment whose action is not recorded (an audit's), "the pending action on PR-2291"."""
    action = fact.detail("action")
    return f"{action} {obj}" if action else f"the pending action on {obj}"


@oracle("commitment-retained", reference="000, 004", retention=True)
def commitment_retained(case: Case) -> Iterator[Finding]:
    """Every open commitment keeps its pending action, not only the decision around it."""
    ctx = case.context
    for fact in _live(case, FactKind.COMMITMENT):
        obj = fact.literals[0]
        if ctx.ledger_entry(fact):
            continue
        if not ctx.mentions(obj):
            near = ctx.near_miss(obj)
            yield Finding.about("commitment-retained", fact, f"open commitment to {_action_on(fact, obj)} was dropped",
                                expected=obj, found=near, evidence=Evidence.NEAR_MISS if near else Evidence.ABSENT)
            continue
        cancelled = next((c for c in ctx.units_with(ctx.rules.pending_unit, obj)
                          if (cue := cue_near(ctx.rules, c, obj, ctx.rules.cancellation_cues, skip_negated=True))
                          and (cue == "struck through" or not cue_in(c, ctx.rules.pending_cues))), None)
        if cancelled is not None:
            yield Finding.about("commitment-retained", fact, f"the open commitment on {obj} is stated as cancelled",
                                expected=f"{_action_on(fact, obj)} still pending", found=cancelled.text,
                                evidence=Evidence.CONTRARY)
            continue
        handed = next((c for c in ctx.units_with(ctx.rules.pending_unit, obj)
                       if cue_near(ctx.rules, c, obj, ctx.rules.handoff_cues, window=ctx.rules.cue_window, skip_negated=True)
                       and not cue_in(c, ctx.rules.own_cues)), None)
        if handed is not None:
            yield Finding.about("commitment-retained", fact, f"the commitment on {obj} is handed to someone else; "
                                "nobody is left to keep it", expected=f"{_action_on(fact, obj)} (ours, pending)",
                                found=handed.text, evidence=Evidence.CONTRARY)
            continue
        action = fact.detail("action")
        expected = _action_on(fact, obj)
        refused = _action_refused(ctx, fact, obj)
        if refused is not None:
            yield Finding.about("commitment-retained", fact, f"the commitment to {expected} is stated as not to be done",
                                expected=f"{expected} (still pending)", found=refused.text, evidence=Evidence.CONTRARY,
                                outcome=Outcome.INVERTED)
            continue
        if _pending_stated(ctx, fact, obj):
            continue
        pending = f"the pending action ({action})" if action else "the pending action"
        force = force_words(ctx, obj, ctx.rules.pending_cues + ctx.rules.action_words)
        if force is not None and _words_beyond(ctx, force[0], obj):
            # "PENDING: 1.28.17" is a word of force beside the object and nothing that says what is to be done
            # (a bag of force words): a bare mention, not a reading to review.
            unit, word = force
            yield Finding.unattached("commitment-retained", fact, obj, word,
                                     f"attach to {pending}", expected=expected,
                                     found=unit.text)
            continue
        yield Finding.about(
            "commitment-retained", fact,
            f"{obj} survives but {pending} does not: the decision was kept, the obligation lost",
            expected=expected, found=ctx.clauses_with(obj)[0].text if ctx.clauses_with(obj) else None,
            evidence=Evidence.BARE_MENTION,
        )


@oracle("completion-honest", reference="000, field reports")
def completion_honest(case: Case) -> Iterator[Finding]:
    """The context never states a still-open commitment as done."""
    ctx = case.context
    for fact in _live(case, FactKind.COMMITMENT):
        obj = fact.literals[0]
        entry = ctx.ledger_entry(fact)
        if entry is not None and entry.status.lower() in ctx.rules.done_statuses:
            yield Finding.about("completion-honest", fact, f"ledger marks the open commitment on {obj} as {entry.status}",
                                expected="open", found=entry.status, evidence=Evidence.FALSE_COMPLETION)
            continue
        past = (fact.detail("past") or "").lower()
        # Once the obligation is stated as pending somewhere, only its own verb ("re-ran X") claims completion:
        # "X already ran on scratch; still to do: re-run X on staging" is two actions, not a contradiction.
        pending = any(cue_in(c, _still_ahead(ctx.rules)) for c in ctx.units_with(ctx.rules.pending_unit, obj))
        cues = ((past,) if past else ()) if pending else ctx.rules.completion_cues + ((past,) if past else ())
        for clause in ctx.units_with(ctx.rules.completion_unit, obj):
            status = status_in(ctx.rules, clause)
            cue = status if status and phrase_pattern(ctx.rules.done_statuses + ctx.rules.completion_cues).search(
                status) and not phrase_pattern(ctx.rules.negators).search(status) and (
                not pending or cue_in(clause, _action_forms(fact))) else None
            if cue is None and cues:
                cue = cue_near(ctx.rules, clause, obj, cues, window=ctx.rules.completion_window, skip_negated=True,
                               skip_modal=True)
                if cue and cue_in(clause, _still_ahead(ctx.rules)):
                    cue = None
            if cue:
                yield Finding.about("completion-honest", fact,
                                    f"the context says the commitment on {obj} is done ({cue!r}); it is still open",
                                    expected=f"{_action_on(fact, obj)} still pending", found=clause.text,
                                    evidence=Evidence.FALSE_COMPLETION)
                break


def _failed(ctx, clause: Clause, call_id: str) -> bool:
    """The call is told as having ended without its result ("did not complete -> re-issue it"), and no open
    mark stands in the clause besides those words."""
    rules = ctx.rules
    if not cue_near(ctx.rules, clause, call_id, rules.failed_outcome_cues, window=rules.unresolved_window):
        return False
    rest = phrase_pattern(rules.failed_outcome_cues).sub(" ", clause.lower)
    return phrase_pattern(rules.unresolved_cues).search(rest) is None


def _open_nearer(ctx, clause: Clause, call_id: str, done_cues: tuple[str, ...]) -> bool:
    """An open mark ("is in progress", "dispatched, still running") stands nearer the call than the word that
    says it finished ("run_load_test returned: job_4f is in progress" reports what the tool returned)."""
    opened = cue_distance(ctx.rules, clause, call_id, ctx.rules.unresolved_cues)
    done = cue_distance(ctx.rules, clause, call_id, done_cues)
    return opened is not None and (done is None or opened < done)


def _still_ahead(rules) -> tuple[str, ...]:
    """The pending cues that cancel a completion: all but those that only say when."""
    return tuple(c for c in rules.pending_cues if c not in rules.conditional_cues)


def _pending_stated(ctx, fact, obj: str) -> bool:
    """The object sits in a unit with its action (any spelling), or with a pending cue ("TODO", "blocked")
    and words that say what is to be done ("a second run of X is parked"): a pending cue beside the object
    and nothing else ("PENDING: 1.28.17") keeps no action.

    A cue that only says when ("until the review") is not enough on its own: "X stays off staging
    until the review" keeps the hold and loses the promise.
    """
    ahead = _still_ahead(ctx.rules)
    return any(cue_near(ctx.rules, c, obj, _action_forms(fact)) or cue_in(c, ahead) and _words_beyond(ctx, c, obj)
               and not listed_words(ctx.rules, c) for c in ctx.units_with(ctx.rules.pending_unit, obj)) or any(
        label_cue(ctx.rules, line, obj, _action_forms(fact) + ahead) and _words_beyond(ctx, line.body(obj), obj)
        for line in ctx.lines_with(obj))


def _action_refused(ctx, fact, obj: str) -> Clause | None:
    """A unit holding the object where its action stands negated ("we agreed not to notify X", "no revert
    planned"), with nothing that only holds it until a condition ("do not merge X until the review") or
    still puts it ahead ("nothing purged so far; the purge is queued"), and no record of what has not
    happened yet ("I haven't started the restore")."""
    if not fact.detail("action"):
        return None
    rules = ctx.rules
    ahead = phrase_pattern(_still_ahead(rules))
    held = phrase_pattern(rules.hold_cues)
    factual = phrase_pattern(rules.factual_negators)
    for unit in ctx.units_with(rules.pending_unit, obj):
        lower = unit.lower
        if factual.search(lower) or held.search(lower) or any(
                not negated(rules, lower, m.start()) for m in ahead.finditer(lower)):
            continue
        if any(negated(rules, lower, m.start()) for m in _action_pattern(fact).finditer(lower)):
            return unit
    return None


def _action_pattern(fact) -> re.Pattern[str]:
    """The action's verb in any inflection ("revert": reverts, reverted, reverting), and its recorded forms."""
    verb = (fact.detail("action") or "").lower().split()[0]
    stem = verb[:-1] if verb.endswith("e") and len(verb) > 3 else verb
    forms = [re.escape(f) for f in _action_forms(fact)]
    return re.compile(r"\b(?:" + "|".join([re.escape(stem) + r"\w*", *forms]) + r")\b")


_CONTENT_WORD = re.compile(r"[a-z][a-z\-]{2,}")


def _words_beyond(ctx, unit: Clause, obj: str) -> bool:
    """``unit`` says something besides ``obj`` and words of force: a content word that is no cue, no
    negator and no common word ("deploy", "second run", "swap"), as an action needs."""
    rules = ctx.rules
    lower = phrase_pattern(rules.pending_cues + rules.action_words + rules.force_words + rules.unresolved_cues
                           + rules.negators).sub(" ", unit.lower.replace(obj.lower(), " "))
    return any(w not in rules.common_words for w in _CONTENT_WORD.findall(lower))


@oracle("handle-retained", reference="000, 001", retention=True)
def handle_retained(case: Case) -> Iterator[Finding]:
    """Every in-flight tool call keeps its id verbatim (the handle, not only the intent)."""
    ctx = case.context
    for fact in _live(case, FactKind.IN_FLIGHT_CALL):
        call_id = fact.literals[0]
        if ctx.mentions(call_id):
            continue
        name = fact.detail("name") or ""
        near = ctx.near_miss(call_id)
        if near is not None:
            yield Finding.about("handle-retained", fact, f"call id {call_id} ({name}) was rewritten as {near}; its result "
                                "will have nowhere to go", expected=call_id, found=near, evidence=Evidence.NEAR_MISS)
            continue
        intent = name if name and name in ctx.text else None
        detail = (f"the intent ({name}) survives but call id {call_id} does not; its result will have nowhere to go"
                  if intent else f"in-flight call {call_id} ({name}) was dropped")
        yield Finding.about("handle-retained", fact, detail, expected=call_id, found=intent, evidence=Evidence.ABSENT)


@oracle("closure", reference="001")
def closure(case: Case) -> Iterator[Finding]:
    """Every call open at the boundary is marked UNRESOLVED (or kept as an open call), never as finished."""
    ctx = case.context
    kept_calls = {c.id for t in case.result.messages for c in t.tool_calls}
    kept_results = {t.tool_call_id for t in case.result.messages if t.tool_call_id}
    declared = case.result.marker.resolved_calls if case.result.marker is not None else ()
    for fact in _live(case, FactKind.IN_FLIGHT_CALL):
        call_id = fact.literals[0]
        if call_id in declared:
            yield Finding.about("closure", fact, f"the recovery marker declares call {call_id} resolved, but its result "
                                "has not arrived", expected=f"{call_id} marked unresolved",
                                found=f"marker resolved_calls: {', '.join(declared)}", evidence=Evidence.CONTRARY,
                                outcome=Outcome.FALSELY_COMPLETED)
            continue
        if not ctx.mentions(call_id):
            continue  # handle-retained reports the missing id
        if call_id in kept_calls and call_id not in kept_results:
            continue
        entry = ctx.ledger_entry(fact)
        if entry is not None and entry.status.lower() in ctx.rules.open_statuses:
            continue
        clauses = ctx.units_with(ctx.rules.unresolved_unit, call_id)
        done_cues = ctx.rules.call_done_cues + ctx.rules.done_statuses
        answered = next((c for c in clauses if ((s := status_in(ctx.rules, c)) and phrase_pattern(done_cues).search(s))
                         or _failed(ctx, c, call_id)), None)
        told_done = answered is not None
        if answered is None:
            answered = next((c for c in clauses if cue_near(ctx.rules, c, call_id, done_cues, window=ctx.rules.call_done_window,
                                                            skip_negated=True, skip_modal=True)
                             and not _open_nearer(ctx, c, call_id, done_cues)), None)
        expected = f"{call_id} marked unresolved"
        open_cues = ctx.rules.unresolved_cues + _still_ahead(ctx.rules)
        if answered is not None:
            # an open word in the item's own text against a finished one: unclear; a heading's ("Waiting on
            # tools: X: finished") is overridden by what the item says of itself
            if not told_done and cue_distance(ctx.rules, answered.body(call_id), call_id,
                                              ctx.rules.unresolved_cues) is not None:
                yield Finding.unclear("closure", fact, f"call {call_id} is stated both as finished and as still open; "
                                      "the reading cannot tell which holds", why=Evidence.CONFLICTING,
                                      expected=expected, found=answered.text)
                continue
            yield Finding.about("closure", fact, f"call {call_id} is still open at the boundary but the context says it "
                                "finished", expected=expected, found=answered.text, evidence=Evidence.CONTRARY,
                                outcome=Outcome.FALSELY_COMPLETED)
            continue
        if governing_cue(ctx, ctx.rules.unresolved_unit, call_id, open_cues, window=ctx.rules.unresolved_window,
                             scope=False) or any(free_cue(ctx.rules, s, open_cues) for s in sequels(ctx, call_id)):
            continue
        force = force_words(ctx, call_id, ctx.rules.force_words) or line_cue(ctx, call_id, open_cues)
        if force is not None:
            unit, word = force
            yield Finding.unattached("closure", fact, f"call {call_id}", word, "read as open or finished",
                                     expected=expected, found=unit.text)
            continue
        yield Finding.about("closure", fact, f"call {call_id} is still open at the boundary but the context does not mark it UNRESOLVED",
                            expected=expected, found=clauses[0].text if clauses else None,
                            evidence=Evidence.BARE_MENTION)



@oracle("error-retained", reference="000", retention=True)
def error_retained(case: Case) -> Iterator[Finding]:
    """Every unresolved error survives, and is not stated as fixed."""
    ctx = case.context
    for fact in _live(case, FactKind.UNRESOLVED_ERROR):
        code = fact.literals[0]
        if ctx.ledger_entry(fact):
            continue
        if not ctx.mentions(code):
            near = ctx.near_miss(code)
            yield Finding.about("error-retained", fact, f"unresolved error {code} ({fact.detail('exception')}) was dropped",
                                expected=code, found=near, evidence=Evidence.NEAR_MISS if near else Evidence.ABSENT)
            continue
        rules = ctx.rules
        for clause in ctx.units_with(rules.resolution_unit, code):
            status = status_in(ctx.rules, clause)
            if status and phrase_pattern(rules.resolution_cues + rules.done_statuses).search(status) \
                    and not phrase_pattern(rules.negators).search(status):
                yield Finding.about("error-retained", fact, f"error {code} is stated as resolved (status {status!r}); "
                                    "it is not", expected=f"{code} unresolved", found=clause.text,
                                    evidence=Evidence.CONTRARY,
                                outcome=Outcome.FALSELY_COMPLETED)
                break
            cue = cue_near(ctx.rules, clause, code, rules.resolution_cues, window=rules.resolution_window, skip_negated=True,
                           skip_modal=True)
            if cue and not cue_in(clause, rules.resolution_negators):
                yield Finding.about("error-retained", fact, f"error {code} is stated as resolved ({cue!r}); it is not",
                                    expected=f"{code} unresolved", found=clause.text, evidence=Evidence.CONTRARY,
                                outcome=Outcome.FALSELY_COMPLETED)
                break
        else:
            # The dismissal may follow in the sentence's next clause ("one ECONNREFUSED seen; most likely a
            # transient blip"): there it counts with no other name between, and nothing in the sentence
            # saying it still fails.
            for sentence in ctx.sentences_with(code):
                cue = cue_near(ctx.rules, sentence, code, rules.resolution_cues, window=2 * rules.force_window,
                               skip_negated=True, confined=True, skip_modal=True)
                if cue and not cue_in(sentence, rules.still_failing_cues):
                    yield Finding.about("error-retained", fact, f"error {code} is stated as resolved or harmless "
                                        f"({cue!r}); it is not", expected=f"{code} unresolved", found=sentence.text,
                                        evidence=Evidence.CONTRARY,
                                outcome=Outcome.FALSELY_COMPLETED)
                    break


@oracle("gating-field-retained", reference="002", retention=True)
def gating_field_retained(case: Case) -> Iterator[Finding]:
    """Gating config fields (max retries, permission scope, limits) survive while a write is pending."""
    ctx = case.context
    for fact in _live(case, FactKind.GATING_FIELD):
        field, value = fact.literals
        if ctx.ledger_entry(fact):
            continue
        mentions = value_mentions(ctx, field, value)
        inverted = next((m for m in mentions if _negates_value(ctx, m.before_number)), None)
        banned = next((m for m in mentions if cue_near(ctx.rules, m.clause, field, _ruling_out(ctx.rules), window=6,
                                                       before_only=True, skip_negated=True)), None)
        if banned is not None:  # "never set notify_subscribers=false": the value the write needs, forbidden
            yield Finding.about("gating-field-retained", fact, f"gating field {field}: {value} is stated as forbidden",
                                expected=f"{field}: {value}", found=banned.clause.text, evidence=Evidence.CONTRARY,
                                outcome=Outcome.INVERTED)
            continue
        if inverted is not None:
            yield Finding.about("gating-field-retained", fact, f"gating field {field} is stated as not {value}",
                                expected=f"{field}: {value}", found=inverted.clause.text, evidence=Evidence.CHANGED)
            continue
        loose = next((m for m in mentions if cue_in(Clause.of(m.before_number), ctx.rules.approximation_cues)), None)
        if loose is not None:
            yield Finding.about("gating-field-retained", fact, f"gating field {field} is stated approximately",
                                expected=f"{field}: {value}", found=loose.clause.text, evidence=Evidence.WEAKENED)
            continue
        # Every mention told as history ("was audit", under "Previous settings") says nothing of what holds now.
        history = phrase_pattern(ctx.rules.history_cues)
        past = [m for m in mentions if history.search(Clause.of(m.before_number).lower)  # "field was value"
                or history.match(m.clause.lower)]  # "Previous settings: field: value"
        if mentions and len(past) == len(mentions):
            yield Finding.about("gating-field-retained", fact, f"gating field {field}: {value} is stated as a past "
                                "setting, not as holding for the pending write", expected=f"{field}: {value}",
                                found=past[0].clause.text, evidence=Evidence.STALE)
            continue
        if mentions:
            continue
        write = fact.detail("write") or "a write"
        if not ctx.mentions(field):
            near = ctx.near_miss(field)
            yield Finding.about("gating-field-retained", fact, f"gating field {field}: {value} was dropped while '{write}' is pending",
                                expected=f"{field}: {value}", found=near,
                                evidence=Evidence.NEAR_MISS if near else Evidence.ABSENT)
            continue
        other = _other_value(ctx, field, value)
        if other is not None:
            clause, said = other
            yield Finding.about("gating-field-retained", fact, f"gating field {field} is stated as {said}, not {value}",
                                expected=f"{field}: {value}", found=clause, evidence=Evidence.CHANGED)
            continue
        farther = next((m.clause.text for m in line_mentions(ctx, field, value)), None) or _nearby(ctx, field, value)
        if farther is not None:
            yield Finding.unclear("gating-field-retained", fact, f"{value} stands near gating field {field}, farther "
                                  "than the reading links a value to its field", why=Evidence.ELSEWHERE,
                                  expected=f"{field}: {value}", found=farther)
            continue
        clause = ctx.clauses_with(field)
        yield Finding.about("gating-field-retained", fact, f"gating field {field} survives without its value {value}",
                            expected=f"{field}: {value}", found=clause[0].text if clause else None,
                            evidence=Evidence.ABSENT)


def _ruling_out(rules) -> tuple[str, ...]:
    """The prohibition cues that rule something out (not the factual negators: "hasn't set X" rules nothing)."""
    return tuple(c for c in rules.prohibition_cues if c not in rules.factual_negators)


def _other_value(ctx, field: str, value: str) -> tuple[str, str] | None:
    """Another value assigned to ``field`` right after it ("visibility=restricted", "confirm: no"): the
    clause and that value."""
    pattern = re.compile(re.escape(field) + r"\s*(?:=|:|is|to)\s*[`'\"]?([\w.\-/]+)")
    for clause in ctx.clauses_with(field):
        m = pattern.search(clause.text)
        if m and m.group(1) != value and m.group(1).lower() not in ("the", "a", "an", "set", "be", "still", "now"):
            return clause.text, m.group(1)
    return None


_NEARBY = 160  # characters after a field's line within which a sibling key may hold its value


def _nearby(ctx, field: str, value: str) -> str | None:
    """A line just after the field's, in the same message, holding the value as a token: a value under
    a sibling key ("field: traffic_weight" / "must_equal: 0") that the reading cannot link to it."""
    lines = ctx.lines_with(field)
    if not lines:
        return None
    at = lines[0].order
    if listed_words(ctx.rules, lines[0]):
        return None
    return next((line.text for line in ctx.lines_with(value)
                 if line.order[0] == at[0] and at[1] < line.order[1] <= at[1] + len(lines[0].text) + _NEARBY), None)


def _negates_value(ctx, before_value: str) -> bool:
    """The words right before a value negate it ("is not 0", "!= 0", "never true"): the gate inverted."""
    lower = before_value.lower().rstrip()
    return lower.endswith(("!=", "≠")) or negated(ctx.rules, lower + " x", len(lower) + 1) and bool(
        phrase_pattern(ctx.rules.negators).search(" ".join(lower.split()[-2:])))
