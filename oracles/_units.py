"""Units, the reading's second stage: a message's structured reading (``_structure``) cut into lines,
sentences and clauses, each a ``Clause`` whose ``lower`` is its text with names masked (``_lexicon``).

A unit never crosses a line, so the unit holding a literal is found from the literal: its line by
``rfind``/``find`` of the newline, then that line's separators. Judging costs what the literal's
occurrences cost, not what the whole context costs.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re

from harness._base._wholetoken import token_spans
from harness.oracles._lexicon import masked, phrase_pattern
from harness.oracles._structure import reading_lines

__all__ = ["Clause", "line_at", "unit_spans", "pieces", "part_reading", "call_text", "SeenLines", "openings"]

_SENTENCE_SPLIT = re.compile(r"(?:[.!?](?=\s|$))|\n+")
_CLAUSE_SPLIT = re.compile(r"(?:[.!?;](?=\s|$))|\n+|\s+(?:but|whereas|however|although|while)\s+|,\s+so\s+",
                           re.IGNORECASE)


class Clause:
    """A piece of context text; ``lower`` is lowercased with identifiers masked out,
    so a literal like ``s3://nearly-rather-54/`` never reads as the cue "rather".

    ``order`` is where it sits in reading order (message index, offset in that message's reading):
    later statements override earlier ones. ``lower`` is computed on first use: most pieces of a
    long context (a file read, a log) hold no literal of the case and are never read for cues.
    """

    __slots__ = ("text", "order", "_literals", "_lower")

    def __init__(self, text: str, literals: frozenset[str] = frozenset(), order: tuple[int, int] = (-1, -1)):
        self.text = text
        self.order = order
        self._literals = literals
        self._lower: str | None = None

    @classmethod
    def of(cls, text: str, literals: frozenset[str] = frozenset(), order: tuple[int, int] = (-1, -1)) -> Clause:
        """``literals`` (lowercased) are masked wherever they appear, whatever their shape."""
        return cls(text.strip(), literals, order)

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = masked(self.text, self._literals)
        return self._lower

    def body(self, literal: str) -> Clause:
        """This piece from after the last label (a "heading: ", "key: " the structure stage put before it)
        that precedes ``literal``: where a cue is the item's own, not its heading's."""
        at = self.text.find(literal)
        cut = self.text.rfind(": ", 0, at if at >= 0 else len(self.text))
        return self if cut < 0 else Clause(self.text[cut + 2:], self._literals, self.order)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Clause) and self.text == other.text and self.order == other.order
                and self._literals == other._literals)

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Clause({self.text!r})"


_SEPARATORS = {"clause": _CLAUSE_SPLIT, "sentence": _SENTENCE_SPLIT}


def line_at(text: str, start: int, end: int) -> tuple[int, int]:
    """The line of ``text`` holding ``text[start:end]``."""
    left = text.rfind("\n", 0, start) + 1
    right = text.find("\n", end)
    return left, len(text) if right < 0 else right


class SeenLines:
    """The lines of one text found so far, each with its separators for a unit: every occurrence on a
    line already found costs a binary search, not a scan to the line's ends (a message of one long line
    holding a literal thousands of times would be quadratic)."""

    def __init__(self, text: str, unit: str):
        self.text, self.unit = text, unit
        self._lefts: list[int] = []
        self._lines: list[tuple[int, int]] = []
        self._seps: list[tuple[list[int], list[int]]] = []

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The ``unit`` piece holding ``text[start:end]``."""
        i = bisect.bisect_right(self._lefts, start) - 1
        if i < 0 or end > self._lines[i][1]:
            line = line_at(self.text, start, end)
            i = bisect.bisect_left(self._lefts, line[0])
            self._lefts.insert(i, line[0])
            self._lines.insert(i, line)
            self._seps.insert(i, _separators(self.text, self.unit, line))
        return _unit_span(self._seps[i], self._lines[i], start, end)


def _separators(text: str, unit: str, line: tuple[int, int]) -> tuple[list[int], list[int]]:
    """Where each ``unit`` separator on ``line`` starts and where it ends (two sorted lists)."""
    left, right = line
    if unit == "line":
        return [], []
    # One character past the line, so a separator may end on its newline exactly as a whole-text split would.
    spans = [m.span() for m in _SEPARATORS[unit].finditer(text, left, min(right + 1, len(text))) if m.start() < right]
    return [a for a, _ in spans], [b for _, b in spans]


def _unit_span(seps: tuple[list[int], list[int]], line: tuple[int, int], start: int, end: int) -> tuple[int, int]:
    """The piece of ``line`` between the separators around ``[start, end)``: two binary searches, so a
    line holding the literal many times costs what its separators cost, once."""
    left, right = line
    starts, ends = seps
    i = bisect.bisect_right(ends, start)  # separators wholly before the occurrence
    a = ends[i - 1] if i else left
    j = bisect.bisect_left(starts, end, i)  # the first separator after it
    b = starts[j] if j < len(starts) else right
    return a, min(b, right)


@functools.lru_cache(maxsize=65536)
def unit_spans(text: str, unit: str, literal: str) -> tuple[tuple[int, int], ...]:
    """The ``unit`` pieces of ``text`` holding ``literal`` as a whole token, as spans, in order.

    The same pieces (as ``Clause.of`` strips them) that splitting the whole text at the unit's
    separators gives, without splitting it. Remembered per text: a session judges the messages it
    keeps at every compaction.
    """
    out: list[tuple[int, int]] = []
    lines = SeenLines(text, unit)
    for start, end in token_spans(text, literal):
        span = lines.span(start, end)
        if not out or out[-1] != span:
            out.append(span)
    return tuple(out)


_NEWLINES = re.compile(r"\n")


def pieces(text: str, unit: str) -> list[tuple[int, int]]:
    """Every non-blank ``unit`` piece of ``text`` as a span (the whole-text split, for the full lists)."""
    bounds, at = [], 0
    pattern = _SEPARATORS.get(unit, _NEWLINES)
    for m in pattern.finditer(text):
        bounds.append((at, m.start()))
        at = m.end()
    bounds.append((at, len(text)))
    return [(a, b) for a, b in bounds if text[a:b].strip()]


@functools.lru_cache(maxsize=16384)
def part_reading(text: str) -> str:
    """One message's text as the prose rules read it (see ``harness.oracles._structure``)."""
    return "\n".join(reading_lines(text))


@functools.lru_cache(maxsize=64)
def _opening_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """One of ``phrases`` where a sentence opens in raw text: at a line start or after an end mark,
    past list, quote, emphasis, heading, table and JSON punctuation (the reading strips those)."""
    words = phrase_pattern(phrases).pattern
    return re.compile(r"(?:^|(?<=[.!?])\s)[\s\-*\u2022_`~\"'{\[,>#|]*(?:" + words + ")", re.MULTILINE)


def call_text(call) -> str:
    """A kept tool call as the context's text holds it."""
    return f"{call.name}({call.arguments}) id={call.id}"


@functools.lru_cache(maxsize=65536)
def _may_open(text: str, phrases: tuple[str, ...]) -> bool:
    """Whether ``_opening_pattern(phrases)`` finds a match in ``text`` lowered, without running it.

    That pattern has no literal prefix, so the regex engine tries it at every position of a long message
    (a whole regex pass); here each occurrence of a phrase (a C scan) is checked where it stands: the
    phrase's own boundaries by its pattern, then the characters before it, which must be openers back to
    a line start, or to a space right after an end mark. ``test_text_scans`` pins this to the pattern."""
    lowered = text.lower()
    words = phrase_pattern(phrases)
    for phrase in phrases:
        start = lowered.find(phrase)
        while start != -1:
            if words.match(lowered, start) and _opens_at(lowered, start):
                return True
            start = lowered.find(phrase, start + 1)
    return False


_OPENINGS_SEEN: dict[tuple[str, ...], dict[str, bool]] = {}  # phrases -> message text -> ``_may_open``
_OPENINGS_SEEN_LIMIT = 1 << 16  # messages remembered per phrase list before it starts afresh
_FEW_MESSAGES = 8  # fewer new messages than this are scanned one by one


def openings(parts: tuple[str, ...], phrases: tuple[str, ...]) -> list[bool]:
    """``_may_open(part, phrases)`` for each of ``parts``, remembered per message text (a session judges
    the messages it keeps at every compaction). Messages not seen before are scanned together, as one
    text joined by newlines: one C scan per phrase instead of one per phrase and message. A message
    start is then a line start, and its neighbours a newline, exactly as the message alone reads."""
    seen = _OPENINGS_SEEN.setdefault(phrases, {})
    answers = {p: seen.get(p) for p in parts}  # ``get``: sessions judged on other threads share the memo
    new = [p for p, answer in answers.items() if answer is None]
    joined = "\n".join(new)
    lowered = joined.lower()
    if len(new) < _FEW_MESSAGES or len(lowered) != len(joined) or any("\n" in p for p in phrases):
        answers.update((p, _may_open(p, phrases)) for p in new)
    else:
        starts = list(itertools.accumulate((len(p) + 1 for p in new[:-1]), initial=0))
        hits = _opening_messages(lowered, starts, phrases)
        answers.update((p, i in hits) for i, p in enumerate(new))
    if len(seen) + len(new) > _OPENINGS_SEEN_LIMIT:
        seen.clear()
    seen.update((p, answers[p]) for p in new)
    return [answers[p] for p in parts]


def _opening_messages(lowered: str, starts: list[int], phrases: tuple[str, ...]) -> set[int]:
    """Which messages of ``lowered`` (joined by newlines, each beginning at ``starts``) may open a
    sentence with one of ``phrases``: each phrase occurrence checked where it stands, as ``_may_open``
    does, skipping to the next message once one is found."""
    words, hits = phrase_pattern(phrases), set()
    for phrase in phrases:
        at = lowered.find(phrase)
        while at != -1:
            i = bisect.bisect_right(starts, at) - 1
            if i not in hits and not (words.match(lowered, at) and _opens_at(lowered, at)):
                at = lowered.find(phrase, at + 1)
                continue
            hits.add(i)
            at = lowered.find(phrase, starts[i + 1]) if i + 1 < len(starts) else -1
    return hits


_OPENERS = frozenset("-*\u2022_`~\"'{[,>#|")  # besides whitespace: what may stand between an opening and its words


def _opens_at(text: str, at: int) -> bool:
    """A sentence may open at ``at``: only openers before it, back to the text's or a line's start, or to
    whitespace right after '.', '!' or '?' (the opening of ``_opening_pattern``)."""
    run = at
    while run > 0 and (text[run - 1].isspace() or text[run - 1] in _OPENERS):
        run -= 1
    return run == 0 or "\n" in text[run:at] or (run < at and text[run].isspace() and text[run - 1] in ".!?")

