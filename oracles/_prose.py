"""Oracles for what prose bends: literals, negations, numbers, dispositions, changes (inventions: ``_invented``)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from harness._base._kinds import kind_def
from harness._base._model import FactKind, Polarity
from harness.oracles._lexicon import phrase_pattern
from harness.oracles._units import Clause, call_text
from harness.oracles._core import Case, Evidence, Finding, Outcome, Severity, oracle
from harness.oracles._numbers import field_mentions, line_mentions, operators_in, value_mentions
from harness.oracles._cues import free_cue, cue_in, cue_near, force_words, governing_cue, label_cue, modifies, negated


@oracle("literal-verbatim", reference="004, 001", retention=True)
def literal_verbatim(case: Case) -> Iterator[Finding]:
    """Identifiers, paths, buckets, hosts and versions survive byte-exact; a near miss is named.

    Judges every live fact whose kind is ``verbatim`` (``KindDef``), a team's kinds included.
    """
    ctx = case.context
    for fact in case.live:
        if not kind_def(fact.kind).verbatim:
            continue
        literal = fact.literals[0]
        if ctx.mentions(literal):
            continue
        near = ctx.near_miss(literal)
        detail = (f"{literal} was paraphrased as {near}" if near else f"{literal} was dropped")
        yield Finding.about("literal-verbatim", fact, detail, expected=literal, found=near,
                            evidence=Evidence.NEAR_MISS if near else Evidence.ABSENT)


@oracle("negation-polarity", reference="004")
def negation_polarity(case: Case) -> Iterator[Finding]:
    """A prohibition stays a prohibition: not a preference, a ranking or a bare mention."""
    ctx = case.context
    rules = ctx.rules
    for fact in case.live:
        if fact.kind is not FactKind.PROHIBITION:
            continue
        literal = fact.literals[0]
        entry = ctx.ledger_entry(fact)
        if entry is not None and entry.polarity in (None, Polarity.FORBID.value):
            continue  # a prohibition entry: forbidding is what the kind means
        sentences = ctx.units_with(rules.prohibition_unit, literal)
        if not sentences:
            finding = _ledger_polarity(ctx, fact, literal)
            if finding is not None:  # else literal-verbatim reports the missing literal
                yield finding
            continue
        finding = _polarity_finding(ctx, fact, literal, sentences)
        if finding is not None:
            yield finding


def _ledger_polarity(ctx, fact, literal: str) -> Finding | None:
    """A prohibited literal that only a ledger entry carries: kept when the entry forbids it; violated when
    it requires it (contrary) or carries it with no force at all (a bare mention, filed as another kind)."""
    entries = [e for e in ctx.result.ledger or () if literal in e.literals]
    if not entries or any(e.polarity == Polarity.FORBID.value for e in entries):
        return None
    entry = entries[0]
    shown = entry.render()
    if any(e.polarity == Polarity.REQUIRE.value for e in entries):
        entry = next(e for e in entries if e.polarity == Polarity.REQUIRE.value)
        return Finding.about("negation-polarity", fact, f"the ledger carries {literal} as required "
                             f"({entry.kind}), not forbidden", expected=f"never {literal}", found=entry.render(),
                             evidence=Evidence.CONTRARY)
    return Finding.about("negation-polarity", fact, f"the ledger carries {literal} as a {entry.kind} with no "
                         f"polarity: the prohibition became a bare mention", expected=f"never {literal}", found=shown,
                         evidence=Evidence.BARE_MENTION)


def _polarity_finding(ctx, fact, literal: str, sentences) -> Finding | None:
    """Kept when one sentence forbids the literal and softens nothing; violated when a softening is all
    that governs it, or nothing of force stands on its line; unclear when the reading saw both, or words
    of force it could not attach."""
    rules = ctx.rules
    expected = f"never {literal}"
    softened = conflicting = None
    for sentence in sentences:
        clause = next((c for c in ctx.units_with(rules.softening_unit, literal) if c.text in sentence.text), sentence)
        soft = free_cue(rules, clause, rules.softening_cues)  # outside traps: "rather than X" excludes X
        forbids = _forbids(ctx, sentence, literal)
        if soft and forbids and (forbids in soft or soft in forbids):
            forbids = None  # one phrase: "try not to" softens the very "not" it holds
        if soft and forbids and not modifies(clause, rules.softening_cues, _forbidding(rules)):
            conflicting = conflicting or (sentence, soft, forbids)
        elif soft:
            softened = softened or (sentence, soft)
        elif forbids:
            return None
    if softened is None and conflicting is None:
        label = next((cue for line in ctx.lines_with(literal)
                      if (cue := label_cue(ctx.rules, line, literal, rules.prohibition_cues))), None)
        if label is not None:
            return None
        listed = next(((line, cue) for line in ctx.lines_with(literal)
                       if (cue := label_cue(ctx.rules, line, literal, rules.permission_labels, skip_negated=True))), None)
        if listed is not None:
            return Finding.about("negation-polarity", fact, f"{literal} is listed as allowed ({listed[1]!r})",
                                 expected=expected, found=listed[0].text, evidence=Evidence.CONTRARY)
    if softened is not None:
        sentence, soft = softened
        return Finding.about("negation-polarity", fact, f"the prohibition on {literal} was softened into a preference "
                             f"({soft!r})", expected=expected, found=sentence.text, evidence=Evidence.WEAKENED)
    if conflicting is not None:
        sentence, soft, forbids = conflicting
        return Finding.unclear("negation-polarity", fact, f"{literal} is both forbidden ({forbids!r}) and softened "
                               f"({soft!r}) in one sentence; the reading cannot tell which governs it",
                               why=Evidence.CONFLICTING, expected=expected, found=sentence.text)
    allowed = governing_cue(ctx, rules.prohibition_unit, literal, rules.weakening_cues + rules.permission_cues
                            + rules.permission_modals, skip_negated=True, scope=False)
    if allowed is not None and any(cue_in(c, rules.restriction_words) for c in ctx.clauses_in(allowed[0])
                                   if phrase_pattern((allowed[1],)).search(c.lower)):
        allowed = None  # "only read-only queries are allowed": a restriction, not a permission
    if allowed is not None and allowed[1] in rules.permission_modals and _negated_after(rules, allowed[0], allowed[1]):
        allowed = None  # "we may make no calls to X": the modal's own verb is negated
    if allowed is not None:
        sentence, cue = allowed
        return Finding.about("negation-polarity", fact, f"{literal} is stated as allowed or optional ({cue!r}), not "
                             "forbidden", expected=expected, found=sentence.text, evidence=Evidence.CONTRARY)
    planned = governing_cue(ctx, rules.prohibition_unit, literal, _planning(rules), skip_negated=True)
    if planned is not None:  # "Plan: reset offsets on billing-consumers": the forbidden thing is next to do
        sentence, cue = planned
        return Finding.about("negation-polarity", fact, f"{literal} is stated as something to do ({cue!r}), not "
                             "forbidden", expected=expected, found=sentence.text, evidence=Evidence.CONTRARY)
    force = force_words(ctx, literal, rules.prohibition_cues + rules.negators + rules.force_words)
    if force is not None:
        line, word = force
        return Finding.unattached("negation-polarity", fact, literal, word, "attach to it as a prohibition",
                                  expected=expected, found=line.text)
    return Finding.about("negation-polarity", fact, f"{literal} is mentioned without its prohibition",
                         expected=expected, found=sentences[0].text, evidence=Evidence.BARE_MENTION)


def _negated_after(rules, unit, modal: str) -> bool:
    """A negator within the three words after ``modal`` in ``unit`` ("may make no calls", "can no longer")."""
    lower = unit.lower
    at = lower.find(modal)
    return at >= 0 and phrase_pattern(rules.negators).search(" ".join(lower[at + len(modal):].split()[:3])) is not None


def _planning(rules) -> tuple[str, ...]:
    """The words that put an action ahead (pending cues and action words) that are no words of force
    themselves: "plan", "next", "todo", not "must" or "should", which a prohibition states too."""
    return tuple(c for c in rules.pending_cues + rules.action_words
                 if c not in rules.force_words and c not in rules.conditional_cues and c not in rules.modal_cues)


def _forbids(ctx, sentence, literal: str) -> str | None:
    """The prohibition cue that governs ``literal`` in ``sentence``: within the window, or earlier in the
    sentence with no clause boundary between (a negation reaches the end of its clause)."""
    rules = ctx.rules
    cue = cue_near(ctx.rules, sentence, literal, rules.prohibition_cues)
    if cue is not None:
        return cue
    return cue_near(ctx.rules, sentence, literal, _forbidding(rules), before_only=True)


def _forbidding(rules) -> tuple[str, ...]:
    """What forbids what follows it: the prohibition cues and the negators that are no statement of fact."""
    return rules.prohibition_cues + tuple(n for n in rules.negators if n not in rules.factual_negators)


@oracle("threshold-exact", reference="004, 002", retention=True)
def threshold_exact(case: Case) -> Iterator[Finding]:
    """Numeric limits keep their field, number and operator."""
    ctx = case.context
    recorded = _calls_made(case)
    for fact in case.live:
        if fact.kind is not FactKind.THRESHOLD:
            continue
        field, value = fact.literals
        op = fact.detail("operator") or "=="
        if ctx.ledger_entry(fact, operator=op):
            continue
        entry = ctx.ledger_entry(fact)
        if entry is not None:
            yield Finding.about("threshold-exact", fact, f"the ledger states {field} with operator {entry.detail('operator')}",
                                expected=f"{field} {op} {value}", found=entry.render(), evidence=Evidence.CHANGED)
            continue
        yield from _judge_threshold(case, fact, field, value, op, recorded)


def _judge_threshold(case: Case, fact, field: str, value: str, op: str, recorded: frozenset[int]) -> Iterator[Finding]:
    ctx = case.context
    rules = ctx.rules
    expected = f"{field} {op} {value}"
    mentions = value_mentions(ctx, field, value)
    if not mentions and all(cue_in(m.clause, rules.staleness_cues) for m in field_mentions(ctx, field)):
        mentions = line_mentions(ctx, field, value)  # the field's own numbers are all history: read on
    if not mentions:
        yield _without_its_number(ctx, fact, field, value, expected)
        return
    worst = None
    for mention in mentions:
        approx = _approximation(ctx, mention.before_number)
        stated = _stated_operators(ctx, mention)
        if approx:
            worst = worst or Finding.about("threshold-exact", fact, f"{field} is stated approximately ({approx!r})",
                                           expected=expected, found=mention.clause.text, evidence=Evidence.WEAKENED)
        elif op in stated:
            yield from _restated_differently(ctx, fact, mentions, expected, recorded)
            return
        elif stated:
            # a bound turned the other way ("at least" for "at most") is inverted, not only rewritten
            opposite = all(_DIRECTION.get(s, 0) * _DIRECTION.get(op, 0) < 0 for s in stated)
            worst = Finding.about("threshold-exact", fact, f"{field} operator changed from {op} to {'/'.join(sorted(stated))}",
                                  expected=expected, found=mention.clause.text, evidence=Evidence.CHANGED,
                                  outcome=Outcome.INVERTED if opposite else None)
        elif op == "==":
            yield from _restated_differently(ctx, fact, mentions, expected, recorded)
            return
        elif worst is None or worst.severity is Severity.DEGRADE:
            worst = Finding.about("threshold-exact", fact, f"{field} keeps {value} but not its operator {op}",
                                  expected=expected, found=mention.clause.text, severity=Severity.DEGRADE,
                                  evidence=Evidence.WEAKENED)
    if worst is not None and worst.severity is Severity.DEGRADE:
        restated = list(_restated_differently(ctx, fact, mentions, expected, recorded))
        worst = restated[0] if restated else worst
    if worst is not None:
        yield worst


def _without_its_number(ctx, fact, field: str, value: str, expected: str) -> Finding:
    """The limit's number is nowhere the reading links to its field: another number stated for it (a
    violation), only numbers told as the past (dropped, the decoy named), the field alone (its number
    lost), the number farther along the field's line (unclear), or nothing at all (dropped)."""
    rules = ctx.rules
    others = field_mentions(ctx, field)
    current = [m for m in others if not cue_in(m.clause, rules.staleness_cues + rules.history_cues)]
    if current:
        return Finding.about("threshold-exact", fact, f"{field} now reads {current[0].number}, the source says {value}",
                             expected=expected, found=current[0].clause.text, evidence=Evidence.CHANGED)
    if others:
        return Finding.about("threshold-exact", fact, f"threshold {expected} was dropped; the only number stated for "
                             f"{field} ({others[0].number}) is in a sentence about the past", expected=expected,
                             found=others[0].clause.text, evidence=Evidence.ABSENT)
    loose = next((c.text for c in ctx.clauses_with(field) if cue_in(c, rules.approximation_cues)), None)
    if loose is None and not ctx.mentions(field):
        near = ctx.near_miss(field)
        return Finding.about("threshold-exact", fact, f"threshold {expected} was dropped", expected=expected,
                             found=near, evidence=Evidence.NEAR_MISS if near else Evidence.ABSENT)
    if loose is None:
        farther = next(iter(line_mentions(ctx, field, value)), None)
        if farther is not None:
            return Finding.unclear("threshold-exact", fact, f"{value} stands on the line of {field}, farther than the "
                                   "reading links a number to its field", why=Evidence.ELSEWHERE, expected=expected,
                                   found=farther.clause.text)
    clauses = ctx.clauses_with(field)
    return Finding.about("threshold-exact", fact, f"threshold {expected} lost its number", expected=expected,
                         found=loose or (clauses[0].text if clauses else None),
                         evidence=Evidence.WEAKENED if loose else Evidence.ABSENT)


def _approximation(ctx, before_number: str) -> str | None:
    """A hedge before the number ("about 5", "roughly"), not counting the words of an operator phrase:
    "limited to 5" is exact, though "limited retries" is loose."""
    text = phrase_pattern(tuple(p for _, ps in ctx.rules.operator_phrases for p in ps)).sub(" ", before_number.lower())
    return cue_in(Clause.of(text), ctx.rules.approximation_cues)


def _stated_operators(ctx, mention) -> set[str]:
    """The operators stated between the field and its number; a strict one is read under a negation that
    stands before the field ("do not let max_retries go above 3" is ``<= 3``)."""
    stated = operators_in(mention.between, ctx)
    if mention.at < 0 or not stated & {"<", ">"} or not negated(ctx.rules, mention.clause.lower, mention.at):
        return stated
    inner = operators_in(mention.between, ctx, negated=True)
    return inner


_DIRECTION = {"<": -1, "<=": -1, ">": 1, ">=": 1}  # which way a bound points ("==" neither)


def _restated_differently(ctx, fact, mentions, expected: str, recorded: frozenset[int]) -> Iterator[Finding]:
    """The field stated again later with another number, not marked as history: the later one misleads.
    A call the source made (``recorded``) is a record of what was called, not a statement."""
    field, value = fact.literals
    last = max(m.clause.order for m in mentions)
    for other in field_mentions(ctx, field):
        if other.number == value or other.clause.order <= last or other.clause.order[0] in recorded:
            continue
        if cue_in(other.clause, ctx.rules.staleness_cues):
            continue
        yield Finding.about("threshold-exact", fact, f"{field} is stated again later as {other.number}; the limit is {value}",
                            expected=expected, found=other.clause.text, evidence=Evidence.CHANGED)
        return


@oracle("supersession", reference="001, 004", retention=True)
def supersession(case: Case) -> Iterator[Finding]:
    """When a value changed, the context carries the current one and never the stale one as current."""
    ctx = case.context
    rules = ctx.rules
    recorded = _calls_made(case)
    for fact in case.live:
        if fact.kind is not FactKind.SUPERSESSION:
            continue
        old = fact.detail("old") or ""
        field = fact.detail("field")
        if field:
            new = fact.literals[1]
            # The new value may sit further along the line than the number window ("was changed from 1:
            # it now must not exceed 2"): a change is stated with its history first.
            current = [m.clause for m in value_mentions(ctx, field, new) or line_mentions(ctx, field, new)]
            stale = [m.clause for m in value_mentions(ctx, field, old)
                     if not cue_in(m.clause, rules.staleness_cues) and not value_mentions_in(m.clause.text, field, new)]
            shown_new, shown_old = f"{field} {new}", f"{field} {old}"
        else:
            new = fact.literals[0]
            current = ctx.clauses_with(new)
            stale = [c for c in ctx.units_with(rules.staleness_unit, old)
                     if new not in c.text and not cue_in(c, rules.staleness_cues)]
            shown_new, shown_old = new, old
        carried = bool(ctx.ledger_entry(fact)) or bool(current) or (not field and ctx.mentions(new))
        hedged = _only_hedged(ctx, current, new) if stale and not ctx.ledger_entry(fact) else None
        if hedged is not None:
            yield Finding.about("supersession", fact, f"the value changed to {shown_new}, but the context states the "
                                f"stale {shown_old} and the new one only as a possibility ({hedged!r})",
                                expected=shown_new, found=stale[0].text, evidence=Evidence.STALE)
            continue
        # Reading order matters: a stale statement followed by the change is history, not current. A call
        # the source made, kept as it was, is a record of what was called (the runtime re-attaches one
        # still in flight after the summary), never a statement of what is current.
        latest = max((ctx.position(c) for c in current), default=(-1, -1))
        stale = [c for c in stale if ctx.position(c) > latest and c.order[0] not in recorded]
        if not carried:
            if stale:
                yield Finding.about("supersession", fact, f"the value changed to {shown_new} but the context keeps the "
                                    f"stale {shown_old}", expected=shown_new, found=stale[0].text, evidence=Evidence.STALE)
            elif field and (elsewhere := _new_value_elsewhere(ctx, field, new)) is not None:
                yield Finding.unclear("supersession", fact, f"{new} is in the context, but not where the reading links a "
                                      f"value to {field}", why=Evidence.ELSEWHERE, expected=shown_new, found=elsewhere)
            else:
                yield Finding.about("supersession", fact, f"the change to {shown_new} was dropped", expected=shown_new,
                                    found=None, evidence=Evidence.ABSENT)
        elif stale:
            yield Finding.about("supersession", fact, f"the stale {shown_old} is still stated after the change to {shown_new}",
                                expected=shown_new, found=stale[0].text, evidence=Evidence.STALE)


def _only_hedged(ctx, current, new: str) -> str | None:
    """The hedge when every statement of the new value is one ("v15 mentioned as a possible upgrade later"):
    then the value stated firmly is the stale one."""
    hedges = [cue_near(ctx.rules, c, new, ctx.rules.weakening_cues, skip_negated=True, confined=True) for c in current]
    return hedges[0] if hedges and all(hedges) else None


def _new_value_elsewhere(ctx, field: str, new: str) -> str | None:
    """A line after the field's first mention, in the same message, holding the new value as a token: a
    change told across lines ("- max_retries: changed" / "- now: 2") that the reading cannot link."""
    lines = ctx.lines_with(field)
    if not lines:
        return None
    first = lines[0].order
    return next((line.text for line in ctx.lines_with(new) if line.order[0] == first[0] and line.order >= first),
                None)


def _calls_made(case: Case) -> frozenset[int]:
    """The context's parts that are tool calls the source window made, kept exactly: records of what was
    called. A call the context makes up is no record, and what it names is read like any statement."""
    if not case.context.call_parts:
        return frozenset()
    made = {call_text(c) for turn in case.window for c in turn.tool_calls}
    return frozenset(i for i in case.context.call_parts if case.context.parts[i] in made)


def value_mentions_in(text: str, field: str, value: str) -> bool:
    return re.search(re.escape(field) + r"\W+(?:\w+\W+){0,4}" + re.escape(value) + r"(?![\w])", text) is not None


def _another_disposition(ctx, literal: str, disposition: str):
    """The unit holding ``literal`` and the disposition it states, when every disposition cue there belongs to
    another disposition than ``disposition`` (``disposition_classes``); None when one fits it or fits any."""
    classes = dict(ctx.rules.disposition_classes)
    if disposition not in classes:
        return None
    own = set(classes[disposition])
    specific = {cue: name for name, cues in ctx.rules.disposition_classes for cue in cues}
    said = None
    for unit in ctx.units_with(ctx.rules.disposition_unit, literal):
        for m in phrase_pattern(ctx.rules.disposition_cues).finditer(unit.lower):
            cue = m.group(0)
            if cue in own or cue not in specific:
                return None
            said = said or (unit, specific[cue])
    return said


@oracle("negative-fact-disposition", reference="001", retention=True)
def negative_fact_disposition(case: Case) -> Iterator[Finding]:
    """Rejected, failed or superseded approaches keep their disposition, not mere mention."""
    ctx = case.context
    for fact in case.live:
        if fact.kind is not FactKind.NEGATIVE_FACT:
            continue
        literal = fact.literals[0]
        disposition = fact.detail("disposition") or "rejected"
        if ctx.ledger_entry(fact, disposition=disposition):
            continue
        expected = f"{literal} {disposition}"
        if not ctx.mentions(literal):
            near = ctx.near_miss(literal)
            yield Finding.about("negative-fact-disposition", fact, f"the {disposition} approach {literal} was dropped",
                                expected=expected, found=near, evidence=Evidence.NEAR_MISS if near else Evidence.ABSENT)
            continue
        sentences = ctx.sentences_with(literal)
        # The disposition often follows in the next sentence ("Dropping X. Rejected."): read the whole line.
        rules = ctx.rules
        governed = governing_cue(ctx, rules.disposition_unit, literal, rules.disposition_cues,
                                 window=rules.disposition_window, scope=False)
        if governed is not None and (other := _another_disposition(ctx, literal, disposition)) is not None:
            unit, said = other
            yield Finding.about("negative-fact-disposition", fact, f"{literal} is stated as {said}; it was {disposition}",
                                expected=expected, found=unit.text, evidence=Evidence.CHANGED)
            continue
        if governed or governing_cue(ctx, rules.prohibition_unit, literal, rules.prohibition_cues):
            continue  # "X is rejected", or "X must not be reintroduced"
        weakened = governing_cue(ctx, rules.disposition_unit, literal, rules.softening_cues + rules.weakening_cues,
                                     scope=False)
        if weakened is not None:
            unit, cue = weakened
            yield Finding.about("negative-fact-disposition", fact, f"{literal} is only discouraged ({cue!r}), no longer "
                                f"{disposition}; it may be re-proposed", expected=expected, found=unit.text,
                                evidence=Evidence.WEAKENED)
            continue
        force = force_words(ctx, literal, rules.force_words) or next(
            ((u, cue) for u in ctx.units_with(rules.disposition_unit, literal)
             if (cue := cue_near(ctx.rules, u, literal, rules.negators, window=1, before_only=True))), None)
        if force is not None:
            unit, word = force
            yield Finding.unattached("negative-fact-disposition", fact, literal, word,
                                     f"read as its disposition ({disposition})", expected=expected, found=unit.text)
            continue
        yield Finding.about("negative-fact-disposition", fact,
                            f"{literal} is mentioned but no longer marked {disposition}; it may be re-proposed",
                            expected=expected, found=sentences[0].text if sentences else None,
                            evidence=Evidence.BARE_MENTION)
