"""Cues, the reading's force stage: whether a cue word governs a literal in a unit. Negation scope and
traps ("never mind"), a prefix cue's scope to the end of its clause, labels (headings, keys, columns)
over a line, a cue that another name standing beside it takes, modality pairs ("preferably don't").

Cue words come from ``ProseRules``; what a unit is comes from ``_units``; what a name is from ``_lexicon``.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import Protocol

from harness._base._wholetoken import has_token, token_spans
from harness.oracles._lexicon import IDENT, WORD, identifiers_in, phrase_pattern
from harness.oracles._rules import ProseRules
from harness.oracles._units import Clause, pieces

__all__ = ["Units", "answered_no", "listed_words", "negated", "under_modal", "cue_near", "cue_distance", "label_cue", "governing_cue", "force_words", "sequels",
           "line_cue", "in_time_clause", "free_cue", "modifies", "status_in", "cue_in"]


class Units(Protocol):
    """What the cue readers that look across units need of a reading (``Context`` is one)."""

    rules: ProseRules
    lowered: frozenset[str]

    def units_with(self, unit: str, literal: str) -> list[Clause]: ...

    def sentences_with(self, literal: str) -> list[Clause]: ...

    def lines_with(self, literal: str) -> list[Clause]: ...


# A cue answered "no" by the value after it: a key "resolved: false", a column "Pinned?" holding "no", a
# table cell "pinned no".
_ANSWERED_NO = re.compile(r"\s*\?*\s*[:=]?\s*(?:no|false|n|optional)\b|\s*\?*\s*[:=]\s*(?:none|0|not yet)\b")


def answered_no(lower: str, at: int) -> bool:
    """Whether the value right after position ``at`` (the end of a cue) answers it "no"."""
    return _ANSWERED_NO.match(lower, at) is not None
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_NEAREST = 4  # before a literal, the nearest cues tried (one stopped by another name may leave an earlier)


class _Traps:
    """The negation traps of a text ("never mind", "don't worry"), asked by bisection: a cue inside one
    (not the trap itself) is no cue."""

    __slots__ = ("_lower", "_starts", "_spans")

    def __init__(self, lower: str, traps: tuple[str, ...]):
        self._lower = lower
        self._spans = [m.span() for m in phrase_pattern(traps).finditer(lower)]
        self._starts = [a for a, _ in self._spans]

    def holds(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._starts, start) - 1
        if i < 0:
            return False
        a, b = self._spans[i]
        # a cue written with its trailing space ("any ") is inside a trap that ends at its word
        return (end <= b or self._lower[b:end].isspace()) and (a, b) != (start, end)


class _Stops:
    """Where a text's scope ends and dash-set asides stand, found once and asked by bisection."""

    __slots__ = ("_lower", "_scope", "_confines")

    def __init__(self, lower: str):
        self._lower = lower
        self._scope: list[int] | None = None
        self._confines: list[int] | None = None

    @staticmethod
    def _between(found: list[int], low: int, high: int) -> bool:
        i = bisect.bisect_left(found, low)
        return i < len(found) and found[i] < high

    def scope_end_between(self, low: int, high: int) -> bool:
        if self._scope is None:
            self._scope = [m.start() for m in _SCOPE_ENDS.finditer(self._lower)]
        return self._between(self._scope, low, high)

    def confine_between(self, low: int, high: int) -> bool:
        if self._confines is None:
            self._confines = [m.start() for m in _CONFINES.finditer(self._lower)]
        return self._between(self._confines, low, high)
# What ends a prefix cue's scope before the literal: a clause of its own ("; ", " but ", " except ").
_SCOPE_ENDS = re.compile(r"[;.!?](?=\s)|\s(?:but|however|whereas|although|except|though|instead|unlike)\s|\n")
# What separates a cue from a literal it would otherwise qualify: a dash that opens an aside, a line end.
_CONFINES = re.compile(r"\s[\u2014\u2013]\s|\s-\s|\n")


_NAME_REACH = 3  # words: another name this close to a cue, between it and the literal, takes the cue


@functools.lru_cache(maxsize=8)
def _qualifier(words: tuple[str, ...]) -> re.Pattern[str]:
    """A qualifier word (``ProseRules.qualifier_words``, and maybe "the") ending where a name starts."""
    return re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\s+(?:the\s+)?$")


def _words_apart(lower: str, a: tuple[int, int], b: tuple[int, int]) -> int:
    low, high = (a[1], b[0]) if a[1] <= b[0] else (b[1], a[0])
    return len(WORD.findall(lower, low, high))


def _name_beside(rules: ProseRules, text: str, lower: str, literal: str, between: tuple[int, int],
                 cue: tuple[int, int]) -> bool:
    """Another name (an identifier-like token that is not ``literal``) stands in ``text[between]`` within
    ``_NAME_REACH`` words of the cue. Only the stretch between is read: a window's width, never the text."""
    low, high = between
    for m in IDENT.finditer(text, low, high):
        name = m.group(0)
        if name == literal or name in literal or literal in name or not identifiers_in(name):
            continue
        if _qualifier(rules.qualifier_words).search(lower, max(0, m.start() - 12), m.start()):
            continue  # "E7310 in sync_catalog was fixed": a name after "in", "of", "at" says where, not what
        if _words_apart(lower, m.span(), cue) <= _NAME_REACH:
            return True
    return False



# How far back (in characters) a negation is looked for: ``negation_window`` words of ordinary length.
_NEGATION_REACH = 160


@functools.lru_cache(maxsize=16)
def _status_pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(k) for k in keys)
    return re.compile(rf"\b(?:{names})\s*[:=]\s*([a-z][a-z _\-]*)")


def listed_words(rules: ProseRules, clause: Clause) -> bool:
    """``clause`` is a list of words, not a statement: it opens with a list label ("keywords:", "tags:"), or
    is four or more comma-separated bare items of at most two words each ("[promise, will, must, X, later]"; a
    table row read as "key: value, key: value" is no such list)."""
    lower = clause.lower.lstrip(" -*#>\u2022")
    head = lower.split(":", 1)[0].strip() if ":" in lower[:24] else ""
    if head in rules.list_labels:
        return True
    items = [i.strip() for i in clause.text.strip().strip("[]()").split(",")]
    return len(items) >= 4 and all(0 < len(i.split()) <= 2 and ":" not in i for i in items)


def _traps(rules: ProseRules) -> tuple[str, ...]:
    """Every phrase that holds a cue word and is no cue: negation, scope and idiom traps."""
    return rules.negation_traps + rules.scope_traps + rules.idiom_traps


def negated(rules: ProseRules, lower: str, at: int, window: int | None = None) -> bool:
    """Whether a negator sits within ``negation_window`` (or ``window``) words before position ``at`` of
    ``lower``.

    Punctuation ends a negation's reach: in "Pinned? no, any bucket works" the "no" answers the
    question and does not negate "any". Only a bounded stretch before ``at`` is read, so a cue in
    a long run of text with no punctuation costs what its own words cost (linear, not quadratic).
    """
    floor = max(0, at - _NEGATION_REACH)
    start = max((lower.rfind(p, floor, at) for p in rules.negation_stops), default=-1) + 1
    start = max(start, floor)
    reach = rules.negation_window if window is None else window
    words = WORD.findall(lower, start, at)[-reach:] if at > start else []
    return phrase_pattern(rules.negators).search(" ".join(words)) is not None


def under_modal(rules: ProseRules, lower: str, at: int) -> bool:
    """Whether a modal (``modal_cues``: "must", "needs to", "to be") stands at most ``modal_window`` words
    before position ``at`` of ``lower``, with no punctuation between: "must be fixed", "has yet to be
    deployed" put the word ahead, they state nothing as done."""
    floor = max(0, at - _NEGATION_REACH)
    start = max((lower.rfind(p, floor, at) for p in rules.negation_stops), default=-1) + 1
    stretch = lower[max(start, floor):at]
    last = None
    for last in phrase_pattern(rules.modal_cues).finditer(stretch):
        pass
    return last is not None and len(WORD.findall(stretch, last.end())) <= rules.modal_window


def cue_near(rules: ProseRules, clause: Clause, literal: str, cues: tuple[str, ...], window: int | None = None, *,
             skip_negated: bool = False, before_only: bool = False, confined: bool = False,
             skip_modal: bool = False) -> str | None:
    """The first cue within ``window`` words of ``literal`` in ``clause``, honouring negation traps.

    With ``skip_negated``, a cue right after a negator ("hasn't been fixed") does not count. With
    ``before_only``, only cues before the literal count, and ``window=None`` then means the whole
    clause before it: a prefix cue's scope runs to the end of its clause ("do not open or read any
    file in the X folder"). With ``confined``, a cue counts only with no other name and no dash-set
    aside between it and the literal, and no other name between them right beside the cue: in "X (6
    steps); v1 obsolete" the "obsolete" is about v1. With ``skip_modal``, a cue under a modal ("must be
    fixed") does not count: for the cues that claim something done.
    """
    if listed_words(rules, clause):
        return None
    unlimited = before_only and window is None
    window = rules.cue_window if window is None else window
    lower = clause.lower
    # A cue inside a negation trap ("never" in "never mind") is no cue; the trap itself may be one.
    traps = _Traps(lower, _traps(rules))
    word_starts = [m.start() for m in WORD.finditer(lower)]  # once, not once per cue (linear, not quadratic)
    cue_words = []
    for m in phrase_pattern(cues).finditer(lower):
        if traps.holds(m.start(), m.end()):
            continue
        if skip_modal and under_modal(rules, lower, m.start()):
            continue
        if not (skip_negated and (negated(rules, lower, m.start()) or answered_no(lower, m.end()))):
            cue_words.append((bisect.bisect_left(word_starts, m.start()), m.group(0), m.start(), m.end()))
    if not cue_words:
        return None
    # Cues are in text order: the ones a mention can take are found by bisection, never by trying all
    # of them for every mention (a long clause holding the literal often would be quadratic).
    cue_at = [w for w, *_ in cue_words]
    cue_ends = [end for *_, end in cue_words]
    stops = _Stops(lower)
    for found_start, found_end in token_spans(clause.text, literal):  # every mention of the literal, not the first
        start_words = bisect.bisect_left(word_starts, found_start)
        end_words = start_words + max(1, len(WORD.findall(lower, found_start, found_end)))
        if before_only:
            last = bisect.bisect_right(cue_ends, found_start) - 1
            floor = -1 if unlimited else bisect.bisect_left(cue_at, start_words - window) - 1
            # the nearest cues before it: a scope end that stops the nearest stops every earlier one
            candidates = range(last, max(floor, last - _NEAREST), -1)
        else:
            candidates = range(bisect.bisect_left(cue_at, start_words - window),
                               bisect.bisect_right(cue_at, end_words + window))
        for k in candidates:
            _, cue, cue_start, cue_end = cue_words[k]
            if before_only and stops.scope_end_between(cue_end, found_start):
                break
            if confined:
                low, high = (cue_end, found_start) if cue_end <= found_start else (found_end, cue_start)
                if stops.confine_between(low, high) or _name_beside(rules, clause.text, lower, literal, (low, high),
                                                                     (cue_start, cue_end)):
                    continue
            return cue
    return None


def cue_distance(rules: ProseRules, clause: Clause, literal: str, cues: tuple[str, ...]) -> int | None:
    """How many words apart the nearest of ``cues`` (not negated, not in a trap) and a mention of ``literal``
    stand in ``clause``; None without one. Two cues that disagree are told apart by which is nearer."""
    lower = clause.lower
    traps = _Traps(lower, _traps(rules))
    mentions = list(token_spans(clause.text, literal))
    best = None
    for m in phrase_pattern(cues).finditer(lower):
        if traps.holds(m.start(), m.end()) or negated(rules, lower, m.start()) or under_modal(rules, lower, m.start()):
            continue
        for span in mentions:
            apart = _words_apart(lower, span, m.span())
            best = apart if best is None else min(best, apart)
    return best


def label_cue(rules: ProseRules, line: Clause, literal: str, cues: tuple[str, ...], *, skip_negated: bool = False) -> str | None:
    """A cue in a label that governs ``literal`` on its reading line: the headings, keys and columns
    the reading put before the line's body ("Forbidden: never touch these: X"), or a label opening the
    literal's own sentence ("Do not touch: a, b, c, X"). An earlier sentence's words are no label."""
    first = next(iter(token_spans(line.text, literal)), None)
    if first is None or listed_words(rules, line):
        return None
    head = line.text[:first[0]]
    spans = []
    at = 0  # the leading labels: "A: B: " segments with no sentence end in them
    while (cut := head.find(": ", at)) >= 0 and not _SENTENCE_END.search(head, at, cut):
        spans.append((at, cut))
        at = cut + 2
    ends = [m.end() for m in _SENTENCE_END.finditer(head, at)]
    start = ends[-1] if ends else at
    cut = head.rfind(": ", start)
    if cut >= start:
        spans.append((start, cut))
    lower = line.lower
    traps = _Traps(lower, _traps(rules))
    for a, b in spans:
        for m in phrase_pattern(cues).finditer(lower, a, b):
            if traps.holds(m.start(), m.end()):
                continue
            if not (skip_negated and negated(rules, lower[:b], m.start())):
                return m.group(0)
    return None


def governing_cue(ctx: Units, unit: str, literal: str, cues: tuple[str, ...], *, window: int | None = None,
                  skip_negated: bool = False, scope: bool = True) -> tuple[Clause, str] | None:
    """The first ``unit`` holding ``literal`` that one of ``cues`` governs, with the cue: within
    ``window`` words of it, earlier in its own clause (``scope``: a prefix cue reaches the end of its
    clause), or in a label over its line (a heading, key or column). None if no cue governs it."""
    for piece in ctx.units_with(unit, literal):
        cue = cue_near(ctx.rules, piece, literal, cues, window, skip_negated=skip_negated)
        if cue is None and scope:
            cue = cue_near(ctx.rules, piece, literal, cues, skip_negated=skip_negated, before_only=True)
        if cue is not None:
            return piece, cue
    for line in ctx.lines_with(literal):
        cue = label_cue(ctx.rules, line, literal, cues, skip_negated=skip_negated)
        if cue is not None:
            return line, cue
    return None


def force_words(ctx: Units, literal: str, words: tuple[str, ...]) -> tuple[Clause, str] | None:
    """The first sentence holding ``literal`` with one of ``words`` in it or in the labels over its
    line (headings, keys, columns), and the word: what makes a reading *unclear* instead of a bare
    mention when no cue could be attached."""
    for sentence in ctx.sentences_with(literal):
        word = None if listed_words(ctx.rules, sentence) else free_cue(ctx.rules, sentence, words)
        if word is not None:
            return sentence, word
    for line in ctx.lines_with(literal):
        word = label_cue(ctx.rules, line, literal, words)
        if word is not None:
            return line, word
    return None


def sequels(ctx: Units, literal: str) -> list[Clause]:
    """The sentences that go on about ``literal`` without naming it: on its line, right after a
    sentence holding it, each opening with an anaphor ("That request has not returned", "Its result
    comes later"), as narrative prose puts it."""
    out = []
    opening = phrase_pattern(ctx.rules.anaphors)
    for line in ctx.lines_with(literal):
        sentences = [Clause.of(line.text[a:b], ctx.lowered, (line.order[0], line.order[1] + a))
                     for a, b in pieces(line.text, "sentence")]
        follows = False
        for piece in sentences:
            if has_token(piece.text, literal):
                follows = True
            elif follows and opening.match(piece.lower.lstrip(" -*\u2022(\"'")):
                out.append(piece)
            else:
                follows = False
    return out


def line_cue(ctx: Units, literal: str, cues: tuple[str, ...]) -> tuple[Clause, str] | None:
    """The first reading line holding ``literal`` with one of ``cues`` anywhere on it (outside traps)."""
    for line in ctx.lines_with(literal):
        cue = free_cue(ctx.rules, line, cues)
        if cue is not None:
            return line, cue
    return None


def in_time_clause(rules: ProseRules, clause: Clause, cue: str, literal: str) -> bool:
    """``cue`` stands in a subordinate clause that says when ("before the agent could write it,"),
    closed by a comma before ``literal``: it qualifies that clause, not the literal's."""
    lower = clause.lower
    first = next(iter(token_spans(clause.text, literal)), None)
    m = phrase_pattern((cue,)).search(lower)
    if first is None or m is None or m.start() > first[0]:
        return False
    comma = lower.find(",", m.end(), first[0])
    if comma < 0:
        return False
    opener = None
    for sub in phrase_pattern(rules.subordinators).finditer(lower, 0, m.start()):
        opener = sub
    return opener is not None and "," not in lower[opener.end():m.start()] and opener.start() < m.start()


def free_cue(rules: ProseRules, clause: Clause, cues: tuple[str, ...]) -> str | None:
    """The first of ``cues`` anywhere in ``clause`` that is not inside a negation trap ("don't worry")."""
    lower = clause.lower
    traps = _Traps(lower, _traps(rules))
    for m in phrase_pattern(cues).finditer(lower):
        if not traps.holds(m.start(), m.end()):
            return m.group(0)
    return None


def modifies(clause: Clause, first: tuple[str, ...], then: tuple[str, ...], gap: int = 2) -> str | None:
    """One of ``first`` standing right before (within ``gap`` words) one of ``then`` in ``clause``:
    "preferably don't", "optionally reuse", "usually never" (the first word governs the second)."""
    lower = clause.lower
    starts = [m.start() for m in phrase_pattern(then).finditer(lower)]
    if not starts:
        return None
    for m in phrase_pattern(first).finditer(lower):
        i = bisect.bisect_left(starts, m.end())
        if i < len(starts) and len(WORD.findall(lower, m.end(), starts[i])) <= gap:
            return m.group(0)
    return None


def status_in(rules: ProseRules, clause: Clause) -> str | None:
    """The value of a structured status field in ``clause`` ("status: done" gives "done"), if any."""
    m = _status_pattern(rules.status_keys).search(clause.lower)
    return m.group(1).strip() if m else None


def cue_in(clause: Clause, cues: tuple[str, ...]) -> str | None:
    m = phrase_pattern(cues).search(clause.lower)
    return m.group(0) if m else None
