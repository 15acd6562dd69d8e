"""The post-compaction context as the oracles read it: text, clauses, ids, ledger.

Built once per compaction so every oracle shares the same reading.
"""

from __future__ import annotations

import bisect
import collections
import difflib
import functools
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from harness._base._model import Fact
from harness._base._wholetoken import has_token, literal_pattern, token_spans
from harness._base._protocol import CompactionResult, LedgerEntry
from oracles._reading import reading_lines
from oracles._rules import UNITS, ProseRules

__all__ = ["Context", "Clause", "UNITS", "has_token", "literal_pattern", "call_text", "line_at", "part_reading", "unit_spans",
           "identifier_tokens", "near_miss_among", "nearest"]

_SENTENCE_SPLIT = re.compile(r"(?:[.!?](?=\s|$))|\n+")
_CLAUSE_SPLIT = re.compile(r"(?:[.!?;](?=\s|$))|\n+|\s+(?:but|whereas|however|although|while)\s+|,\s+so\s+",
                           re.IGNORECASE)
_WORD = re.compile(r"\S+")
# An identifier-like token: contains a digit, an underscore, '/' or '://'.
_IDENT = re.compile(r"[A-Za-z0-9][\w./:\-]*[\w/]|[A-Za-z0-9]")
_WORDY = re.compile(r"^[A-Za-z]+(?:_[A-Za-z]+)+$")
# A cue answered "no" by the value after it: a key "resolved: false", a column "Pinned?" holding "no".
_ANSWERED_NO = re.compile(r"\s*\?*\s*[:=]\s*(?:no|false|n|none|0|not yet)\b|\s*\?\s*(?:no|n)\b")
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_NEAREST = 4  # before a literal, the nearest cues tried (one stopped by another name may leave an earlier)


class _Traps:
    """The negation traps of a text ("never mind", "don't worry"), asked by bisection: a cue inside one
    (not the trap itself) is no cue."""

    __slots__ = ("_starts", "_spans")

    def __init__(self, lower: str, traps: tuple[str, ...]):
        self._spans = [m.span() for m in phrase_pattern(traps).finditer(lower)]
        self._starts = [a for a, _ in self._spans]

    def holds(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._starts, start) - 1
        if i < 0:
            return False
        a, b = self._spans[i]
        return end <= b and (a, b) != (start, end)


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


def _words_apart(lower: str, a: tuple[int, int], b: tuple[int, int]) -> int:
    low, high = (a[1], b[0]) if a[1] <= b[0] else (b[1], a[0])
    return len(_WORD.findall(lower, low, high))


def _name_beside(text: str, lower: str, literal: str, between: tuple[int, int], cue: tuple[int, int]) -> bool:
    """Another name (an identifier-like token that is not ``literal``) stands in ``text[between]`` within
    ``_NAME_REACH`` words of the cue. Only the stretch between is read: a window's width, never the text."""
    low, high = between
    for m in _IDENT.finditer(text, low, high):
        name = m.group(0)
        if name == literal or name in literal or literal in name or not _identifiers(name):
            continue
        if _words_apart(lower, m.span(), cue) <= _NAME_REACH:
            return True
    return False


# How far back (in characters) a negation is looked for: ``negation_window`` words of ordinary length.
_NEGATION_REACH = 160
_BOUND_NUMBER = re.compile(r"\W{0,3}(?:[<>=≤≥:]+|is|at|of|to|must be)?\W{0,3}\d")


# Runs of identifier characters; a run is masked when it holds a digit or a '/' (a path, a version, a
# host). Matching the run and testing it afterwards keeps this linear (a pattern requiring the digit
# inside backtracks quadratically on a long run without one). A snake_case run without a digit is read
# as its words ("forbidden_targets" says "forbidden targets"), unless it is one of the case's literals.
_RUN = re.compile(r"[\w./:\-]+")
_MASK_TRIGGER = re.compile(r"[0-9/]")


@functools.lru_cache(maxsize=64)
def _masker(literals: frozenset[str]):
    def mask(match: re.Match[str]) -> str:
        run = match.group(0)
        if _MASK_TRIGGER.search(run) or run.strip(".:-") in literals:
            return "#" * len(run)
        return run.replace("_", " ")
    return mask


# ``_IDENT`` finds one token in each run of identifier characters ([\w./:-]): the run from its first
# ASCII letter or digit, up to its last word character or '/'. In ASCII text the runs are found in C:
# every other byte becomes a space and the text is split; test_text_scans pins this to the pattern.
_RUN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:-")
_RUNS_ONLY = bytes(b if b in _RUN_BYTES else 0x20 for b in range(256))


@functools.lru_cache(maxsize=16384)
def identifier_tokens(text: str) -> frozenset[str]:
    """Every identifier-like run in ``text`` (the shape ``Context.identifiers`` reads a clause in).
    Remembered per text (a message judged at every compaction); ``tokens_of`` reads a whole context."""
    return tokens_of(text)


def tokens_of(text: str) -> frozenset[str]:
    """``identifier_tokens`` of a text read once (a token never crosses a line, so a whole context's
    tokens are its messages' tokens: one pass instead of one per message)."""
    if not text.isascii():
        return frozenset(_IDENT.findall(text))
    runs = set(text.encode("ascii").translate(_RUNS_ONLY).decode("ascii").split())
    tokens = {run.lstrip("_./:-").rstrip(".:-") for run in runs}
    tokens.discard("")
    return frozenset(tokens)


def near_miss_among(literal: str, tokens: frozenset[str], ratio: float) -> str | None:
    """The token of ``tokens`` most like ``literal`` (at least ``ratio`` alike), or None; of equally
    alike tokens, the first in sorted order."""
    found = nearest(literal, tokens, ratio)
    return None if found is None else found[1]


@functools.lru_cache(maxsize=4096)
def nearest(literal: str, tokens: frozenset[str], ratio: float) -> tuple[float, str] | None:
    """``near_miss_among`` with how alike it is: (ratio, token). Taking the best of several token sets'
    (the highest ratio, then the first token in sorted order) gives the best of their union."""
    best, best_ratio = None, ratio
    by_length = _by_length(tokens)
    # ratio = 2 * matches / (len_a + len_b) can reach ``ratio`` only if the lengths are close enough
    n = len(literal)
    low, high = int(n * ratio / (2 - ratio)), int(n * (2 - ratio) / ratio) + 1
    # A token's characters that the literal lacks can match nothing: with ``outside`` of them, at most
    # len(token) - outside match (one C pass per token, which rules out most of a long context's).
    foreign = _foreign_table(literal)
    candidates = sorted(t for size in range(max(low, 3), high + 1) for t in by_length.get(size, ())
                        if 2 * (size - len(t.translate(foreign))) >= ratio * (size + n))
    for token in candidates:
        if token == literal:
            continue
        score = _likeness(literal, token, ratio)
        if score > best_ratio or (score == best_ratio and best is None):
            best, best_ratio = token, score
    return None if best is None else (best_ratio, best)


@functools.lru_cache(maxsize=1 << 18)
def _likeness(literal: str, token: str, ratio: float) -> float:
    """difflib's ratio, or -1 when an upper bound already rules out ``ratio``. Remembered per pair:
    the contexts of one session hold mostly the same tokens, and each is a new token set."""
    n = len(literal)
    if 2 * min(len(token), n) < ratio * (len(token) + n):
        return -1.0
    # Two upper bounds on the matches, each computed over the distinct characters the two share (in C
    # where it can be): the literal's count of each, then difflib's quick_ratio bound (the characters in
    # common with multiplicity). Most tokens of a context fail the first.
    counts, chars = _character_counts(literal)
    shared = chars.intersection(token)
    if 2 * sum(map(counts.__getitem__, shared)) < ratio * (len(token) + n):
        return -1.0
    if 2 * sum(min(counts[ch], token.count(ch)) for ch in shared) < ratio * (len(token) + n):
        return -1.0
    return difflib.SequenceMatcher(None, literal, token).ratio()


@functools.lru_cache(maxsize=4096)
def _foreign_table(literal: str) -> dict[int, None]:
    """A ``str.translate`` table deleting ``literal``'s characters: what is left of a token is what it lacks."""
    return {ord(ch): None for ch in set(literal)}


@functools.lru_cache(maxsize=4096)
def _character_counts(literal: str) -> tuple[collections.Counter, frozenset[str]]:
    counts = collections.Counter(literal)
    return counts, frozenset(counts)


@functools.lru_cache(maxsize=256)
def _by_length(tokens: frozenset[str]) -> dict[int, tuple[str, ...]]:
    out: dict[int, list[str]] = {}
    for token in tokens:
        out.setdefault(len(token), []).append(token)
    return {size: tuple(group) for size, group in out.items()}


@functools.lru_cache(maxsize=65536)
def _identifiers(text: str) -> tuple[str, ...]:
    out = []
    for m in _IDENT.finditer(text):
        token = m.group(0)
        if not re.search(r"[0-9_/]|://", token) or token.isdigit():
            continue
        if _WORDY.match(token) and not _BOUND_NUMBER.match(text, m.end()):
            continue
        out.append(token)
    return tuple(out)


@functools.lru_cache(maxsize=16)
def _status_pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(k) for k in keys)
    return re.compile(rf"\b(?:{names})\s*[:=]\s*([a-z][a-z _\-]*)")


@functools.lru_cache(maxsize=65536)
def _masked(text: str, literals: frozenset[str]) -> str:
    return _RUN.sub(_masker(literals), text.lower().replace("\u2019", "'"))


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
            self._lower = _masked(self.text, self._literals)
        return self._lower

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Clause) and self.text == other.text and self.order == other.order
                and self._literals == other._literals)

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Clause({self.text!r})"


# -- units ------------------------------------------------------------------------------------------
# A unit (line, sentence, clause) never crosses a line, so the unit holding a literal is found from
# the literal: its line by ``rfind``/``find`` of the newline, then that line's separators. Judging
# costs what the literal's occurrences cost, not what the whole context costs.

_SEPARATORS = {"clause": _CLAUSE_SPLIT, "sentence": _SENTENCE_SPLIT}


def line_at(text: str, start: int, end: int) -> tuple[int, int]:
    """The line of ``text`` holding ``text[start:end]``."""
    left = text.rfind("\n", 0, start) + 1
    right = text.find("\n", end)
    return left, len(text) if right < 0 else right


class _Lines:
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
    lines = _Lines(text, unit)
    for start, end in token_spans(text, literal):
        span = lines.span(start, end)
        if not out or out[-1] != span:
            out.append(span)
    return tuple(out)


_NEWLINES = re.compile(r"\n")


def _pieces(text: str, unit: str) -> list[tuple[int, int]]:
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
    """One message's text as the prose rules read it (see ``oracles._reading``)."""
    return "\n".join(reading_lines(text))


@functools.lru_cache(maxsize=512)
def phrase_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for a cue list: words match on word boundaries, symbols anywhere; an empty list never matches.

    Each alternative opens with its phrase's own characters and checks the boundary before it only once it
    has matched (``never(?<!\\wnever)``): the regex engine then skips in C to where a phrase may start
    instead of trying every alternative at every position (the same matches, many times faster on a long
    text; ``test_text_scans`` pins it to the plain pattern).
    """
    if not phrases:
        return re.compile(r"(?!)")
    parts = []
    for p in sorted(phrases, key=len, reverse=True):
        body = re.escape(p)
        if p[0].isalnum():
            body += r"(?<!\w" + re.escape(p) + ")"
        if p[-1].isalnum():
            body += r"(?![\w])"
        parts.append(body)
    return re.compile("|".join(parts))


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


def _openings(parts: tuple[str, ...], phrases: tuple[str, ...]) -> list[bool]:
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


@dataclass(frozen=True)
class Context:
    """What the agent sees after compaction, read for the prose rules.

    Each message is read on its own (units never cross messages) and only where a question needs
    it: ``units_with`` looks at the messages that hold the literal. The full ``reading``,
    ``clauses``, ``sentences`` and ``lines`` exist for a team's own oracles and are built on first use.
    """

    result: CompactionResult
    rules: ProseRules
    literals: frozenset[str] = frozenset()
    lowered: frozenset[str] = field(init=False)  # the literals as the masked reading sees them
    text: str = field(init=False)
    parts: tuple[str, ...] = field(init=False)  # each message's text and each kept call, in order
    call_ids: frozenset[str] = field(init=False)
    call_parts: frozenset[int] = field(init=False)  # the indexes in ``parts`` of kept tool calls

    def __post_init__(self) -> None:
        parts, ids, calls = [], set(), set()
        for turn in self.result.messages:
            parts.append(turn.text)
            for call in turn.tool_calls:
                ids.add(call.id)
                calls.add(len(parts))
                parts.append(call_text(call))
            if turn.tool_call_id:
                ids.add(turn.tool_call_id)
        object.__setattr__(self, "parts", tuple(parts))
        object.__setattr__(self, "call_parts", frozenset(calls))
        object.__setattr__(self, "text", "\n".join(parts))
        object.__setattr__(self, "call_ids", frozenset(ids))
        object.__setattr__(self, "lowered", frozenset(lit.lower() for lit in self.literals))
        object.__setattr__(self, "_units", {})  # (unit, literal) -> units
        object.__setattr__(self, "_opening", {})  # phrases -> (first message scanned, messages that may open)

    # -- the whole reading (built on first use) ---------------------------------------------------

    @functools.cached_property
    def reading(self) -> str:
        """The context rewritten so headings, keys and columns travel with their items."""
        return "\n".join(part_reading(p) for p in self.parts)

    def _all(self, unit: str) -> tuple[Clause, ...]:
        out = []
        for i, raw in enumerate(self.parts):
            text = part_reading(raw)
            out.extend(Clause.of(text[a:b], self.lowered, (i, a)) for a, b in _pieces(text, unit))
        return tuple(out)

    @functools.cached_property
    def clauses(self) -> tuple[Clause, ...]:
        return self._all("clause")

    @functools.cached_property
    def sentences(self) -> tuple[Clause, ...]:
        return self._all("sentence")

    @functools.cached_property
    def lines(self) -> tuple[Clause, ...]:
        return self._all("line")

    # -- presence ---------------------------------------------------------------------------------

    def mentions(self, literal: str) -> bool:
        """Byte-exact presence, as a whole token, in the text, a kept tool call, or a ledger entry."""
        return has_token(self.text, literal) or literal in self.call_ids or any(
            literal in e.literals for e in self.result.ledger or ()
        )

    def ledger_entry(self, fact: Fact, **must_match: str) -> LedgerEntry | None:
        """A structured ledger entry carrying ``fact`` exactly, or None."""
        for entry in self.result.ledger or ():
            if entry.kind != str(fact.kind) or tuple(entry.literals) != fact.literals:
                continue
            if fact.polarity is not None and entry.polarity not in (None, fact.polarity.value):
                continue
            if all(entry.detail(k) == v for k, v in must_match.items()):
                return entry
        return None

    def units_with(self, unit: str, literal: str) -> list[Clause]:
        """The pieces of text of ``unit`` (``clause``, ``sentence`` or ``line``) holding ``literal`` as a token."""
        if unit not in UNITS:
            raise KeyError(unit)
        key = (unit, literal)
        found = self._units.get(key)
        if found is None:
            found = []
            for i in self._parts_holding(literal):
                text = part_reading(self.parts[i])
                found.extend(Clause.of(text[a:b], self.lowered, (i, a)) for a, b in unit_spans(text, unit, literal))
            found = self._units[key] = tuple(found)
        return list(found)

    def clauses_with(self, literal: str) -> list[Clause]:
        return self.units_with("clause", literal)

    def sentences_with(self, literal: str) -> list[Clause]:
        return self.units_with("sentence", literal)

    def lines_with(self, literal: str) -> list[Clause]:
        return self.units_with("line", literal)

    def clauses_in(self, unit: Clause) -> list[Clause]:
        """The clauses of one unit (a sentence or a line), read the way the context's clauses are."""
        index, offset = unit.order
        return [Clause.of(unit.text[a:b], self.lowered, (index, offset + a)) for a, b in _pieces(unit.text, "clause")]

    def clauses_holding(self, needles: Iterable[str]) -> list[Clause]:
        """The clauses holding any of ``needles`` as a plain substring, each once, in reading order."""
        needles = [n for n in set(needles) if n]
        out: list[Clause] = []
        for i in sorted({i for n in needles for i in self._parts_holding(n)}):
            text = part_reading(self.parts[i])
            spans, lines = set(), _Lines(text, "clause")
            for needle in needles:
                at = text.find(needle)
                while at >= 0:
                    spans.add(lines.span(at, at + len(needle)))
                    at = text.find(needle, at + 1)
            out.extend(Clause.of(text[a:b], self.lowered, (i, a)) for a, b in sorted(spans) if text[a:b].strip())
        return out

    @functools.cached_property
    def _starts(self) -> list[int]:
        starts, at = [], 0
        for part in self.parts:
            starts.append(at)
            at += len(part) + 1
        return starts

    @functools.cached_property
    def _escaped(self) -> tuple[int, ...]:
        # JSON unescapes characters ("s3:\\/\\/x" reads "s3://x"): such a message's reading may hold
        # what its text does not, so it is always read.
        return tuple(i for i, part in enumerate(self.parts) if "\\" in part)

    def _parts_holding(self, needle: str) -> list[int]:
        """The messages whose reading can hold ``needle``: those whose text does, and escaped ones."""
        found, starts = set(self._escaped), self._starts
        at = self.text.find(needle)
        while at >= 0:
            i = bisect.bisect_right(starts, at) - 1
            found.add(i)
            at = self.text.find(needle, starts[i + 1]) if i + 1 < len(starts) else -1
        return sorted(found)

    def sentences_opening_with(self, phrases: tuple[str, ...], after: tuple[int, int] = (-1, -1)) -> list[Clause]:
        """The sentences after ``after`` of every message where one of ``phrases`` may open a sentence
        (a superset: the caller decides on each sentence's own reading). One scan of the text finds
        the messages; only those are read."""
        if not phrases:
            return []
        phrases = tuple(phrases)
        first = max(after[0], 0)
        # Which messages may open a sentence with a phrase, from ``first`` on; only the messages after
        # the earliest statement any caller asked about are ever scanned.
        scanned_from, opening = self._opening.get(phrases, (len(self.parts), ()))
        if first < scanned_from:
            may = _openings(self.parts[first:scanned_from], phrases)
            opening = tuple(i for i, yes in enumerate(may, first) if yes or "\\" in self.parts[i]) + opening
            self._opening[phrases] = (first, opening)
        out = []
        for i in opening[bisect.bisect_left(opening, first):]:
            text = part_reading(self.parts[i])
            out.extend(c for a, b in _pieces(text, "sentence") if (c := Clause.of(text[a:b], self.lowered, (i, a))).order > after)
        return out

    def parts_without(self, literals: Iterable[str]) -> tuple[str, ...]:
        """Each message's text without its lines that hold one of ``literals`` as a whole token:
        what the context spends on nothing those literals are in. Unchanged messages are the same
        strings as before, so what is remembered about them still applies."""
        cut: dict[int, set[tuple[int, int]]] = {}
        starts = self._starts
        for literal in set(literals):
            for a, b in token_spans(self.text, literal):
                i = bisect.bisect_right(starts, a) - 1
                cut.setdefault(i, set()).add(line_at(self.parts[i], a - starts[i], b - starts[i]))
        out = list(self.parts)
        for i, lines in cut.items():
            part, kept, at = out[i], [], 0
            for a, b in sorted(lines):
                kept.append(part[at:a])
                at = b + 1
            kept.append(part[at:])
            out[i] = "".join(kept)
        return tuple(out)

    def position(self, clause: Clause) -> tuple[int, int]:
        """Where a unit sits in reading order (later statements override earlier ones)."""
        return clause.order

    # -- cues -------------------------------------------------------------------------------------

    def negated(self, lower: str, at: int) -> bool:
        """Whether a negator sits within ``negation_window`` words before position ``at`` of ``lower``.

        Punctuation ends a negation's reach: in "Pinned? no, any bucket works" the "no" answers the
        question and does not negate "any". Only a bounded stretch before ``at`` is read, so a cue in
        a long run of text with no punctuation costs what its own words cost (linear, not quadratic).
        """
        floor = max(0, at - _NEGATION_REACH)
        start = max((lower.rfind(p, floor, at) for p in self.rules.negation_stops), default=-1) + 1
        start = max(start, floor)
        words = _WORD.findall(lower, start, at)[-self.rules.negation_window:] if at > start else []
        return phrase_pattern(self.rules.negators).search(" ".join(words)) is not None

    def cue_near(self, clause: Clause, literal: str, cues: tuple[str, ...], window: int | None = None, *,
                 skip_negated: bool = False, before_only: bool = False, confined: bool = False) -> str | None:
        """The first cue within ``window`` words of ``literal`` in ``clause``, honouring negation traps.

        With ``skip_negated``, a cue right after a negator ("hasn't been fixed") does not count. With
        ``before_only``, only cues before the literal count, and ``window=None`` then means the whole
        clause before it: a prefix cue's scope runs to the end of its clause ("do not open or read any
        file in the X folder"). With ``confined``, a cue counts only with no other name and no dash-set
        aside between it and the literal, and no other name between them right beside the cue: in "X (6
        steps); v1 obsolete" the "obsolete" is about v1.
        """
        unlimited = before_only and window is None
        window = self.rules.cue_window if window is None else window
        lower = clause.lower
        # A cue inside a negation trap ("never" in "never mind") is no cue; the trap itself may be one.
        traps = _Traps(lower, self.rules.negation_traps)
        word_starts = [m.start() for m in _WORD.finditer(lower)]  # once, not once per cue (linear, not quadratic)
        cue_words = []
        for m in phrase_pattern(cues).finditer(lower):
            if traps.holds(m.start(), m.end()):
                continue
            if not (skip_negated and (self.negated(lower, m.start()) or _ANSWERED_NO.match(lower, m.end()))):
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
            end_words = start_words + max(1, len(_WORD.findall(lower, found_start, found_end)))
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
                    if stops.confine_between(low, high) or _name_beside(clause.text, lower, literal, (low, high),
                                                                         (cue_start, cue_end)):
                        continue
                return cue
        return None

    def label_cue(self, line: Clause, literal: str, cues: tuple[str, ...], *, skip_negated: bool = False) -> str | None:
        """A cue in a label that governs ``literal`` on its reading line: the headings, keys and columns
        the reading put before the line's body ("Forbidden: never touch these: X"), or a label opening the
        literal's own sentence ("Do not touch: a, b, c, X"). An earlier sentence's words are no label."""
        first = next(iter(token_spans(line.text, literal)), None)
        if first is None:
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
        traps = _Traps(lower, self.rules.negation_traps)
        for a, b in spans:
            for m in phrase_pattern(cues).finditer(lower, a, b):
                if traps.holds(m.start(), m.end()):
                    continue
                if not (skip_negated and self.negated(lower[:b], m.start())):
                    return m.group(0)
        return None

    def governing_cue(self, unit: str, literal: str, cues: tuple[str, ...], *, window: int | None = None,
                      skip_negated: bool = False, scope: bool = True) -> tuple[Clause, str] | None:
        """The first ``unit`` holding ``literal`` that one of ``cues`` governs, with the cue: within
        ``window`` words of it, earlier in its own clause (``scope``: a prefix cue reaches the end of its
        clause), or in a label over its line (a heading, key or column). None if no cue governs it."""
        for piece in self.units_with(unit, literal):
            cue = self.cue_near(piece, literal, cues, window, skip_negated=skip_negated)
            if cue is None and scope:
                cue = self.cue_near(piece, literal, cues, skip_negated=skip_negated, before_only=True)
            if cue is not None:
                return piece, cue
        for line in self.lines_with(literal):
            cue = self.label_cue(line, literal, cues, skip_negated=skip_negated)
            if cue is not None:
                return line, cue
        return None

    def force_words(self, literal: str, words: tuple[str, ...]) -> tuple[Clause, str] | None:
        """The first sentence holding ``literal`` with one of ``words`` in it or in the labels over its
        line (headings, keys, columns), and the word: what makes a reading *unclear* instead of a bare
        mention when no cue could be attached."""
        for sentence in self.sentences_with(literal):
            word = self.free_cue(sentence, words)
            if word is not None:
                return sentence, word
        for line in self.lines_with(literal):
            word = self.label_cue(line, literal, words)
            if word is not None:
                return line, word
        return None

    def sequels(self, literal: str) -> list[Clause]:
        """The sentences that go on about ``literal`` without naming it: on its line, right after a
        sentence holding it, each opening with an anaphor ("That request has not returned", "Its result
        comes later"), as narrative prose puts it."""
        out = []
        opening = phrase_pattern(self.rules.anaphors)
        for line in self.lines_with(literal):
            pieces = [Clause.of(line.text[a:b], self.lowered, (line.order[0], line.order[1] + a))
                      for a, b in _pieces(line.text, "sentence")]
            follows = False
            for piece in pieces:
                if has_token(piece.text, literal):
                    follows = True
                elif follows and opening.match(piece.lower.lstrip(" -*\u2022(\"'")):
                    out.append(piece)
                else:
                    follows = False
        return out

    def line_cue(self, literal: str, cues: tuple[str, ...]) -> tuple[Clause, str] | None:
        """The first reading line holding ``literal`` with one of ``cues`` anywhere on it (outside traps)."""
        for line in self.lines_with(literal):
            cue = self.free_cue(line, cues)
            if cue is not None:
                return line, cue
        return None

    def in_time_clause(self, clause: Clause, cue: str, literal: str) -> bool:
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
        for sub in phrase_pattern(self.rules.subordinators).finditer(lower, 0, m.start()):
            opener = sub
        return opener is not None and "," not in lower[opener.end():m.start()] and opener.start() < m.start()

    def free_cue(self, clause: Clause, cues: tuple[str, ...]) -> str | None:
        """The first of ``cues`` anywhere in ``clause`` that is not inside a negation trap ("don't worry")."""
        lower = clause.lower
        traps = _Traps(lower, self.rules.negation_traps)
        for m in phrase_pattern(cues).finditer(lower):
            if not traps.holds(m.start(), m.end()):
                return m.group(0)
        return None

    def modifies(self, clause: Clause, first: tuple[str, ...], then: tuple[str, ...], gap: int = 2) -> str | None:
        """One of ``first`` standing right before (within ``gap`` words) one of ``then`` in ``clause``:
        "preferably don't", "optionally reuse", "usually never" (the first word governs the second)."""
        lower = clause.lower
        starts = [m.start() for m in phrase_pattern(then).finditer(lower)]
        if not starts:
            return None
        for m in phrase_pattern(first).finditer(lower):
            i = bisect.bisect_left(starts, m.end())
            if i < len(starts) and len(_WORD.findall(lower, m.end(), starts[i])) <= gap:
                return m.group(0)
        return None

    def status_in(self, clause: Clause) -> str | None:
        """The value of a structured status field in ``clause`` ("status: done" gives "done"), if any."""
        m = _status_pattern(self.rules.status_keys).search(clause.lower)
        return m.group(1).strip() if m else None

    def cue_in(self, clause: Clause, cues: tuple[str, ...]) -> str | None:
        m = phrase_pattern(cues).search(clause.lower)
        return m.group(0) if m else None

    # -- evidence ---------------------------------------------------------------------------------

    def near_miss(self, literal: str) -> str | None:
        """The context token most like a missing literal (a paraphrase such as acme-staging)."""
        return near_miss_among(literal, self._tokens, self.rules.near_miss_ratio)

    @functools.cached_property
    def _tokens(self) -> frozenset[str]:
        return tokens_of(self.text)

    def identifiers(self, clause: Clause) -> list[str]:
        """Identifier-like tokens (with a digit, underscore, '/' or ':') in a clause.

        A letters-only snake_case word ("pending_actions", a JSON key) is a name only when a number
        is bound to it ("max_workers <= 4"): otherwise it is prose in another notation.
        """
        return list(_identifiers(clause.text))

