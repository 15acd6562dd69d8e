"""Oracles for an obligation's force: weakened or contradicted while its literal survives, or revived after it ended."""

from __future__ import annotations

import re
from collections.abc import Iterator

from harness._base._model import FactKind, Status
from harness.oracles._context import Context
from harness.oracles._lexicon import WORD, identifier_tokens, name_shaped, phrase_pattern
from harness._base._wholetoken import token_spans
from harness.oracles._units import Clause, pieces
from harness.oracles._core import Case, Evidence, Finding, Outcome, oracle
from harness.oracles._cues import answered_no, cue_in, cue_near, in_time_clause, label_cue, modifies, negated

# The kinds whose force is a requirement on a literal (use it, keep it, reuse it, respect it, do it).
_REQUIRED = (FactKind.LITERAL_BINDING, FactKind.GATING_FIELD, FactKind.THRESHOLD, FactKind.ARTIFACT_REFERENCE,
             FactKind.COMMITMENT)
# The kinds whose literal can be waived ("any bucket will do", "write a new script instead").
_WAIVABLE = (FactKind.LITERAL_BINDING, FactKind.ARTIFACT_REFERENCE)


def _first_cue(ctx: Context, literal: str, cues: tuple[str, ...],
               unless: tuple[str, ...] = ()) -> tuple[Clause, str] | None:
    """The first unit holding ``literal`` with one of ``cues`` near it, not negated.

    With ``unless``, a cue whose own clause also holds one of those is ignored: in "no writes from us,
    only the release bot may write there" the permission belongs to someone else.
    """
    rules = ctx.rules
    for unit in ctx.units_with(rules.force_unit, literal):
        cue = cue_near(ctx.rules, unit, literal, cues, window=rules.force_window, skip_negated=True, confined=True)
        if cue and unless and any(phrase_pattern((cue,)).search(c.lower) and cue_in(c, unless)
                                  for c in ctx.clauses_in(unit)):
            continue
        if cue:
            return unit, cue
    return None


_WORDS = re.compile(r"[a-z]{4,}")


def _reasserted(ctx: Context, unit: Clause) -> bool:
    """The unit re-asserts the requirement: a reassert cue, not negated and not answered "no"
    (a table column "Pinned?" whose value is "no" pins nothing)."""
    for m in phrase_pattern(ctx.rules.reassert_cues).finditer(unit.lower):
        if not negated(ctx.rules, unit.lower, m.start()) and not answered_no(unit.lower, m.end()):
            return True
    return False


def _names_another(sentence: Clause, literal: str) -> bool:
    """The sentence names something other than ``literal``: a name-shaped token (``name_shaped``; a field
    such as max_retries counts, whatever follows it)."""
    return any(name_shaped(t) and t != literal and t not in literal and not t.isdigit()
               for t in identifier_tokens(sentence.text))


def _revised(ctx: Context, literal: str, cues: tuple[str, ...]) -> tuple[Clause, str] | None:
    """A later revision note that waives ``literal``'s obligation without naming it.

    It starts with a revision marker, carries one of ``cues`` (not negated), names no other
    identifier, and shares a content word with the literal or a sentence before it that states it.
    The sentences that state the literal and those that may open with a marker are read in order;
    the words of the stating sentences accumulate as they are read.
    """
    rules = ctx.rules
    stating = ctx.sentences_with(literal)
    if not stating:
        return None
    stated_at = {s.order for s in stating}
    notes = [s for s in ctx.sentences_opening_with(rules.revision_markers, after=stating[0].order)
             if s.order not in stated_at]
    common = set(rules.common_words)
    marker = phrase_pattern(rules.revision_markers)
    words: set[str] = set(_WORDS.findall(literal.lower()))
    for sentence in sorted([*stating, *notes], key=lambda s: s.order):
        if sentence.order in stated_at:
            words |= set(_WORDS.findall(sentence.lower))
            continue
        lower = sentence.lower
        head = lower.lstrip("-*• ").split(":")[0] if ":" in lower[:24] else lower[:24]
        if not marker.match(head.strip()) or _names_another(sentence, literal):
            continue
        if not set(_WORDS.findall(lower)) & (words - common):
            continue
        found = phrase_pattern(cues).search(lower)
        if found and not negated(ctx.rules, lower, found.start()):
            return sentence, found.group(0)
    return None


def _stated_forbidden(case: Case, fact) -> tuple[Clause, str] | None:
    """A required literal listed under a label that forbids or avoids it, or after a prohibition in its
    own clause ("avoid_regions: [X]", "never use X"): the requirement inverted. A fact the source states
    plainly ("the plan covers theft") is inverted by any negation of it ("does not cover theft", "no
    theft cover"); a rule is inverted by a word of force, not by a record of what has not happened yet
    ("we haven't deployed to X yet"). Only against the source: a literal the source negated is not."""
    ctx = case.context
    rules = ctx.rules
    literal = fact.literals[0]
    for line in ctx.lines_with(literal):
        cue = label_cue(ctx.rules, line, literal, rules.avoidance_labels, skip_negated=True)
        if cue is not None:
            return line, cue
    for unit in ctx.units_with(rules.force_unit, literal):
        cue = cue_near(ctx.rules, unit, literal, rules.avoidance_labels, window=3, before_only=True, skip_negated=True)
        if cue is not None:
            return unit, cue
    if _negated_in_source(case, fact):
        return None
    plain = not _stated_with_force(case, fact)
    inverting = tuple(c for c in rules.prohibition_cues if c not in rules.factual_negators) + rules.inversion_cues
    for unit in ctx.units_with(rules.force_unit, literal):
        body = unit.body(literal)  # a heading's or key's words over it are labels, read above
        # (the window runs from a cue's first word: "do not" and six words before the literal is eight)
        cue = cue_near(ctx.rules, body, literal, inverting, window=_INVERSION_REACH + 2, before_only=True,
                       skip_negated=True, confined=True)
        if cue is None and plain:
            cue = _negation_before(rules, body, literal)
        if cue is not None and not cue_in(unit, _not_yet(rules)) and not _excepted(rules, body, literal):
            return unit, cue
        edge = cue_near(rules, body, literal, rules.broadening_words, window=3, before_only=True, skip_negated=True)
        allowed = edge and cue_near(rules, unit, literal, rules.permission_cues + rules.broadening_permissions,
                                    window=2 * rules.cue_window, skip_negated=True)
        if allowed:
            return unit, f"{allowed} {edge}"
    return None


def _excepted(rules, body: Clause, literal: str) -> bool:
    """An exception word stands between the last negation before ``literal`` and it: the literal is what the
    negation leaves out ("do not use any region other than X"), so it is kept, not inverted."""
    first = next(iter(token_spans(body.text, literal)), None)
    if first is None:
        return False
    head = body.lower[:first[0]]
    negations = [m.end() for m in phrase_pattern(rules.negators + rules.prohibition_cues + rules.inversion_cues)
                 .finditer(head)]
    return bool(negations) and phrase_pattern(rules.exception_words).search(head, negations[-1]) is not None


_INVERSION_REACH = 6  # words: how far before a literal a negation or inverting word still governs it


def _negation_before(rules, body: Clause, literal: str) -> str | None:
    """The negator within ``_INVERSION_REACH`` words before a mention of ``literal`` in ``body``, if any."""
    for start, _ in token_spans(body.text, literal):
        if negated(rules, body.lower, start, _INVERSION_REACH):
            words = " ".join(WORD.findall(body.lower, max(0, start - 160), start)[-_INVERSION_REACH:])
            found = phrase_pattern(rules.negators).search(words)
            return found.group(0) if found else "not"
    return None


def _negated_in_source(case: Case, fact) -> bool:
    """The source's own sentence negates the literal ("we do not offer X"): a summary saying so keeps it."""
    if not 0 <= fact.origin_turn < len(case.transcript.turns):
        return False
    text = case.transcript.turns[fact.origin_turn].text
    for a, b in pieces(text, "sentence"):
        sentence = Clause.of(text[a:b], case.context.lowered)
        if any(negated(case.context.rules, sentence.lower, s, _INVERSION_REACH)
               for s, _ in token_spans(sentence.text, fact.literals[0])):
            return True
    return False


def _not_yet(rules) -> tuple[str, ...]:
    """The pending cues that record something as not done yet ("we haven't deployed to X yet"), which a
    negation beside a required literal then states, not inverts. Not the conditional ones, and not "must",
    "should" or "next", which state a rule ("must not deploy to X" inverts it). (``_obligations._still_ahead``
    is the set that cancels a completion.)"""
    return tuple(c for c in rules.pending_cues if c not in rules.conditional_cues and c not in (
        "must", "should", "next"))


@oracle("force-kept", reference="004, field reports")
def force_kept(case: Case) -> Iterator[Finding]:
    """A live obligation keeps its force: not a preference, habit or option, not contradicted, not reversed."""
    ctx = case.context
    rules = ctx.rules
    for fact in case.live:
        literal = fact.literals[0]
        if ctx.ledger_entry(fact) is not None:
            continue
        if fact.kind in _WAIVABLE and (banned := _stated_forbidden(case, fact)) is not None:
            unit, cue = banned
            yield Finding.about("force-kept", fact, f"{literal} is required but stated as forbidden ({cue!r}): the "
                                "requirement inverted", expected=f"{literal} as a requirement", found=unit.text,
                                evidence=Evidence.CONTRARY, outcome=Outcome.INVERTED)
            continue
        lifted = _first_cue(ctx, literal, rules.lifted_cues) if fact.kind in (
            FactKind.THRESHOLD, FactKind.GATING_FIELD) else None
        if lifted is not None:
            unit, cue = lifted
            yield Finding.about("force-kept", fact, f"the limit on {literal} is stated as lifted ({cue!r})",
                                expected=f"{literal} as a requirement", found=unit.text,
                                evidence=Evidence.CONTRARY, outcome=Outcome.INVERTED)
            continue
        if fact.kind in _REQUIRED and not (fact.kind is FactKind.LITERAL_BINDING and not _stated_with_force(case, fact)):
            hit = _first_cue(ctx, literal, rules.weakening_cues)
            if hit is not None and in_time_clause(ctx.rules, hit[0], hit[1], literal):
                hit = None  # "before the agent could write the config, the field had to be 1"
            if hit is not None and _reasserted(ctx, hit[0]) and not modifies(hit[0], rules.weakening_cues,
                                                                                rules.reassert_cues):
                # "before the agent could write the config, the field had to be 1": a weakening word and a
                # binding one in one sentence, the weakening not on the binding word itself.
                unit, cue = hit
                yield Finding.unclear("force-kept", fact, f"{literal} is stated with both a binding word and a weakening "
                                      f"one ({cue!r}); the reading cannot tell which governs it", why=Evidence.CONFLICTING,
                                      expected=f"{literal} as a requirement", found=unit.text)
                continue
            evidence = Evidence.WEAKENED
            if hit is None and fact.kind in _WAIVABLE:
                waived = _first_cue(ctx, literal, rules.waiver_cues + (
                    rules.remake_cues if fact.kind is FactKind.ARTIFACT_REFERENCE else ()))
                if waived is not None and not _reasserted(ctx, waived[0]):
                    hit, evidence = waived, Evidence.CONTRARY
            if hit is None:
                hit, evidence = _revised(ctx, literal, rules.waiver_cues + rules.remake_cues + rules.weakening_cues
                                         + rules.permission_cues), \
                    Evidence.CONTRARY
            if hit is not None:
                unit, cue = hit
                yield Finding.about("force-kept", fact, f"{literal} is kept but its requirement is weakened ({cue!r})",
                                    expected=f"{literal} as a requirement", found=unit.text, evidence=evidence)
        elif fact.kind is FactKind.PROHIBITION:
            hit = (_first_cue(ctx, literal, rules.permission_cues, unless=rules.prohibition_cues + rules.restriction_words)  # softening:
                   or _revised(ctx, literal, rules.permission_cues))  # negation-polarity's to judge
            if hit is not None:
                unit, cue = hit
                yield Finding.about("force-kept", fact, f"the prohibition on {literal} is contradicted ({cue!r})",
                                    expected=f"never {literal}", found=unit.text, evidence=Evidence.CONTRARY)
        elif fact.kind is FactKind.NEGATIVE_FACT:
            hit = _first_cue(ctx, literal, rules.reversal_cues)
            if hit is not None:
                unit, cue = hit
                disposition = fact.detail("disposition") or "rejected"
                yield Finding.about("force-kept", fact, f"the {disposition} approach {literal} is brought back ({cue!r})",
                                    expected=f"{literal} {disposition}", found=unit.text, evidence=Evidence.CONTRARY)


def _stated_with_force(case: Case, fact) -> bool:
    """The source states ``fact`` with a word of force ("use", "only", "must", "always"): a plain statement of
    fact ("the Silver plan covers theft") has no force a summary could weaken, only a truth it can invert."""
    if not 0 <= fact.origin_turn < len(case.transcript.turns):
        return True
    text = case.transcript.turns[fact.origin_turn].text
    rules = case.context.rules
    words = phrase_pattern(rules.force_words + rules.reassert_cues + rules.prohibition_cues)
    return any(words.search(Clause.of(text[a:b], case.context.lowered).lower) or _instruction(rules, text[a:b])
               for a, b in pieces(text, "sentence") if fact.literals[0] in text[a:b])


_SPEAKER = re.compile(r"^\s*(?:[A-Z][\w.' ]{0,30}:\s+)")  # "Sales Agent: ", "Client: " before what they say


def _instruction(rules, sentence: str) -> bool:
    """The sentence opens with a word that is no statement opener: an imperative ("Reference X in...")."""
    words = _SPEAKER.sub("", sentence.strip(), count=1).lstrip("-*#>\u2022 ").split()
    first = words[0].lower().strip(",.;:!?\"'()") if words else ""
    return bool(first) and first.isalpha() and first not in rules.statement_openers


def _ended_before(case: Case):
    for fact in case.transcript.facts:
        if fact.origin_turn < case.boundary and fact.fate.turn is not None and fact.fate.turn < case.boundary:
            yield fact


def _alive_cues(case: Case, fact) -> tuple[str, ...]:
    """What states ``fact`` as still binding, by kind and fate."""
    rules = case.rules
    if fact.kind is FactKind.IN_FLIGHT_CALL:
        return rules.unresolved_cues
    if fact.kind is FactKind.UNRESOLVED_ERROR:
        return rules.still_failing_cues
    if fact.kind is FactKind.COMMITMENT:
        return rules.pending_cues
    if fact.kind is FactKind.PROHIBITION:
        return rules.prohibition_cues
    return rules.binding_cues + tuple(p for _, ps in rules.operator_phrases for p in ps)


def _ended_cues(case: Case, fact) -> tuple[str, ...]:
    """What states ``fact`` as over: done, answered, fixed, withdrawn."""
    rules = case.rules
    if fact.kind is FactKind.IN_FLIGHT_CALL:
        return rules.call_done_cues
    if fact.kind is FactKind.UNRESOLVED_ERROR:
        return rules.resolution_cues
    if fact.fate.status is Status.FULFILLED:
        return rules.completion_cues + rules.past_cues + ((fact.detail("past") or "-").lower(),)
    return rules.withdrawal_cues


@oracle("dead-obligation", reference="001, 004")
def dead_obligation(case: Case) -> Iterator[Finding]:
    """An obligation that ended before the compaction (withdrawn, done, answered, fixed) is not stated as binding."""
    ctx = case.context
    rules = ctx.rules
    for fact in _ended_before(case):
        if fact.kind in (FactKind.RETRACTION, FactKind.SUPERSESSION) or fact.fate.status is Status.SUPERSEDED:
            continue  # a change of value is the supersession oracle's: the current value, never the stale one
        literal = fact.literals[0]
        entry = ctx.ledger_entry(fact)
        if entry is not None and entry.status.lower() in rules.open_statuses:
            yield Finding.about("dead-obligation", fact, f"the ledger keeps {literal} open after it was {fact.fate.status.value}",
                                expected=f"{literal} {fact.fate.status.value}", found=entry.render(),
                                evidence=Evidence.ENDED_BINDING)
            continue
        alive, ended = _alive_cues(case, fact), _ended_cues(case, fact)
        # Reading order decides, as a person reads a log: "never use X" followed later by "X: rule withdrawn"
        # is history (a verbatim tail keeps both); the last word on X must not be the binding one.
        stated = None
        for unit in ctx.units_with(rules.force_unit, literal):
            if cue_near(ctx.rules, unit, literal, ended, window=rules.force_window, skip_negated=True):
                stated = None
                continue
            cue = cue_near(ctx.rules, unit, literal, alive, window=rules.force_window)
            if cue and fact.kind is FactKind.COMMITMENT and cue_in(unit, rules.handoff_cues) and not any(
                    not negated(ctx.rules, unit.lower, m.start()) for m in phrase_pattern(rules.own_cues).finditer(unit.lower)):
                cue = None  # "the follow-up is the user's: they'll handle it": not ours to keep
            if cue and stated is None:
                stated = (unit, cue)
        if stated is not None:
            unit, cue = stated
            yield Finding.about("dead-obligation", fact,
                                f"{literal} was {fact.fate.status.value} before the compaction but is stated as "
                                f"still binding ({cue!r})", expected=f"{literal} {fact.fate.status.value}",
                                found=unit.text, evidence=Evidence.ENDED_BINDING)
