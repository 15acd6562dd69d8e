"""The post-compaction context as the oracles read it: text, clauses, ids, ledger.

Built once per compaction so every oracle shares the same reading.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re
from dataclasses import dataclass, field

from harness._base._model import Fact
from harness._base._wholetoken import has_token, literal_pattern
from harness._base._protocol import CompactionResult, LedgerEntry
from oracles._reading import reading_lines
from oracles._rules import ProseRules

__all__ = ["Context", "Clause", "has_token", "literal_pattern"]

_SENTENCE_SPLIT = re.compile(r"(?:[.!?](?=\s|$))|\n+")
_CLAUSE_SPLIT = re.compile(r"(?:[.!?;](?=\s|$))|\n+|\s+(?:but|whereas|however|although|while)\s+|,\s+so\s+",
                           re.IGNORECASE)
_WORD = re.compile(r"\S+")
# An identifier-like token: contains a digit, an underscore, '/' or '://'.
_IDENT = re.compile(r"[A-Za-z0-9][\w./:\-]*[\w/]|[A-Za-z0-9]")
_WORDY = re.compile(r"^[A-Za-z]+(?:_[A-Za-z]+)+$")
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


@functools.lru_cache(maxsize=16384)
def identifier_tokens(text: str) -> frozenset[str]:
    """Every identifier-like run in ``text`` (the shape ``Context.identifiers`` reads a clause in)."""
    return frozenset(_IDENT.findall(text))


@functools.lru_cache(maxsize=4096)
def near_miss_among(literal: str, tokens: frozenset[str], ratio: float) -> str | None:
    """The token of ``tokens`` most like ``literal`` (at least ``ratio`` alike), or None."""
    best, best_ratio = None, ratio
    matcher = difflib.SequenceMatcher(None, literal)
    by_length = _by_length(tokens)
    # ratio = 2 * matches / (len_a + len_b) can reach best_ratio only if the lengths are close enough
    n = len(literal)
    low, high = int(n * ratio / (2 - ratio)), int(n * (2 - ratio) / ratio) + 1
    candidates = sorted(t for size in range(max(low, 3), high + 1) for t in by_length.get(size, ()))
    for token in candidates:
        if token == literal or 2 * min(len(token), n) < best_ratio * (len(token) + n):
            continue
        matcher.set_seq2(token)
        if matcher.real_quick_ratio() < best_ratio or matcher.quick_ratio() < best_ratio:
            continue
        score = matcher.ratio()
        if score > best_ratio or (score == best_ratio and best is None):
            best, best_ratio = token, score
    return best


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

    ``lower`` is computed on first use: most pieces of a long context (a file read, a
    log) hold no literal of the case, are never read for cues, and so are never masked.
    """

    __slots__ = ("text", "_literals", "_lower")

    def __init__(self, text: str, literals: frozenset[str] = frozenset()):
        self.text = text
        self._literals = literals
        self._lower: str | None = None

    @classmethod
    def of(cls, text: str, literals: frozenset[str] = frozenset()) -> Clause:
        """``literals`` (lowercased) are masked wherever they appear, whatever their shape."""
        return cls(text.strip(), literals)

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = _masked(self.text, self._literals)
        return self._lower

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Clause) and self.text == other.text and self._literals == other._literals

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Clause({self.text!r})"


@functools.lru_cache(maxsize=512)
def phrase_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for a cue list: words match on word boundaries, symbols anywhere; an empty list never matches."""
    if not phrases:
        return re.compile(r"(?!)")
    parts = []
    for p in sorted(phrases, key=len, reverse=True):
        body = re.escape(p)
        if p[0].isalnum():
            body = r"(?<![\w])" + body
        if p[-1].isalnum():
            body += r"(?![\w])"
        parts.append(body)
    return re.compile("|".join(parts))


@dataclass(frozen=True)
class Context:
    """What the agent sees after compaction, pre-split for the prose rules."""

    result: CompactionResult
    rules: ProseRules
    literals: frozenset[str] = frozenset()
    lowered: frozenset[str] = field(init=False)  # the literals as the masked reading sees them
    text: str = field(init=False)
    reading: str = field(init=False)
    clauses: tuple[Clause, ...] = field(init=False)
    sentences: tuple[Clause, ...] = field(init=False)
    lines: tuple[Clause, ...] = field(init=False)
    call_ids: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        parts, ids = [], set()
        for turn in self.result.messages:
            parts.append(turn.text)
            for call in turn.tool_calls:
                ids.add(call.id)
                parts.append(f"{call.name}({call.arguments}) id={call.id}")
            if turn.tool_call_id:
                ids.add(turn.tool_call_id)
        text = "\n".join(parts)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "call_ids", frozenset(ids))
        # Cues are read in the structure-aware rewrite: headings, keys and columns travel with their items.
        reading = "\n".join(line for part in parts for line in reading_lines(part))
        object.__setattr__(self, "reading", reading)
        lits = frozenset(lit.lower() for lit in self.literals)
        object.__setattr__(self, "lowered", lits)
        clauses = tuple(Clause.of(c, lits) for c in _CLAUSE_SPLIT.split(reading) if c and c.strip())
        object.__setattr__(self, "clauses", clauses)
        sentences = tuple(Clause.of(c, lits) for c in _SENTENCE_SPLIT.split(reading) if c and c.strip())
        object.__setattr__(self, "sentences", sentences)
        lines = tuple(Clause.of(c, lits) for c in reading.split("\n") if c.strip())
        object.__setattr__(self, "lines", lines)

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

    def clauses_with(self, literal: str) -> list[Clause]:
        return [c for c in self.clauses if has_token(c.text, literal)]

    def sentences_with(self, literal: str) -> list[Clause]:
        return [c for c in self.sentences if has_token(c.text, literal)]

    def lines_with(self, literal: str) -> list[Clause]:
        return [c for c in self.lines if has_token(c.text, literal)]

    def units_with(self, unit: str, literal: str) -> list[Clause]:
        """The pieces of text of ``unit`` (``clause``, ``sentence`` or ``line``) holding ``literal`` as a token."""
        pieces = {"clause": self.clauses, "sentence": self.sentences, "line": self.lines}[unit]
        return [c for c in pieces if has_token(c.text, literal)]

    def clauses_in(self, unit: Clause) -> list[Clause]:
        """The clauses of one unit (a sentence or a line), read the way the context's clauses are."""
        return [Clause.of(c, self.lowered) for c in _CLAUSE_SPLIT.split(unit.text) if c and c.strip()]

    def position(self, clause: Clause) -> int:
        """Where a clause sits in reading order (later statements override earlier ones)."""
        return self.clauses.index(clause) if clause in self.clauses else -1

    # -- cues -------------------------------------------------------------------------------------

    def negated(self, lower: str, at: int) -> bool:
        """Whether a negator sits within ``negation_window`` words before position ``at`` of ``lower``.

        Punctuation ends a negation's reach: in "Pinned? no, any bucket works" the "no" answers the
        question and does not negate "any".
        """
        start = max((lower.rfind(p, 0, at) for p in self.rules.negation_stops), default=-1) + 1
        words = _WORD.findall(lower, start, at)[-self.rules.negation_window:] if at > start else []
        return phrase_pattern(self.rules.negators).search(" ".join(words)) is not None

    def cue_near(self, clause: Clause, literal: str, cues: tuple[str, ...], window: int | None = None, *,
                 skip_negated: bool = False) -> str | None:
        """The first cue within ``window`` words of ``literal`` in ``clause``, honouring negation traps.

        With ``skip_negated``, a cue right after a negator ("hasn't been fixed") does not count.
        """
        window = self.rules.cue_window if window is None else window
        lower = clause.lower
        # A cue inside a negation trap ("never" in "never mind") is no cue; the trap itself may be one.
        traps = [(m.start(), m.end()) for m in phrase_pattern(self.rules.negation_traps).finditer(lower)]
        word_starts = [m.start() for m in _WORD.finditer(lower)]  # once, not once per cue (linear, not quadratic)
        cue_words = []
        for m in phrase_pattern(cues).finditer(lower):
            if any(a <= m.start() and m.end() <= b and (a, b) != m.span() for a, b in traps):
                continue
            if not (skip_negated and self.negated(lower, m.start())):
                cue_words.append((bisect.bisect_left(word_starts, m.start()), m.group(0)))  # words wholly before it
        if not cue_words:
            return None
        for found in literal_pattern(literal).finditer(clause.text):  # every mention of the literal, not the first
            start_words = bisect.bisect_left(word_starts, found.start())
            end_words = start_words + max(1, len(_WORD.findall(lower, found.start(), found.end())))
            for w, cue in cue_words:
                if start_words - window <= w <= end_words + window:
                    return cue
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
        return near_miss_among(literal, identifier_tokens(self.text), self.rules.near_miss_ratio)

    def identifiers(self, clause: Clause) -> list[str]:
        """Identifier-like tokens (with a digit, underscore, '/' or ':') in a clause.

        A letters-only snake_case word ("pending_actions", a JSON key) is a name only when a number
        is bound to it ("max_workers <= 4"): otherwise it is prose in another notation.
        """
        return list(_identifiers(clause.text))

