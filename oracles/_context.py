"""The post-compaction context as the oracles read it: its messages, kept calls and ledger, and the units
of its reading that hold a literal.

Built once per compaction so every oracle shares the same reading. The reading is a pipeline, one stage
a module, each importing only the ones before it: ``_structure`` (headings, keys, columns, JSON and XML
become labelled lines), ``_lexicon`` (what a word, a name and a cue phrase are; masking; near misses),
``_units`` (lines, sentences, clauses), ``_cues`` (whether a cue governs a literal: negation, scope,
labels, modality), then this ``Context``, which the oracles ask.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

from harness._base._model import Fact
from harness._base._wholetoken import has_token, token_spans
from harness._base._protocol import CompactionResult, LedgerEntry
from harness.oracles._lexicon import identifiers_in, name_shaped, near_miss_among, tokens_of, typographic_variants_restored
from harness.oracles._rules import UNITS, ProseRules
from harness.oracles._units import Clause, SeenLines, call_text, line_at, openings, part_reading, pieces, unit_spans

__all__ = ["Context"]

_NEAR_MISS_TRIES = 4  # near misses tried before none is named: the best ones the source did not itself use


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
    source: tuple = ()  # the turns the summarizer was given (``Turn``), read only to name a near miss
    lowered: frozenset[str] = field(init=False)  # the literals as the masked reading sees them
    text: str = field(init=False)
    parts: tuple[str, ...] = field(init=False)  # each message's text and each kept call, in order
    call_ids: frozenset[str] = field(init=False)
    call_parts: frozenset[int] = field(init=False)  # the indexes in ``parts`` of kept tool calls

    def __post_init__(self) -> None:
        parts, ids, calls = [], set(), set()
        rules = self.rules
        for turn in self.result.messages:
            parts.append(typographic_variants_restored(turn.text, self.literals, rules.number_words, rules.number_leads))
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
            out.extend(Clause.of(text[a:b], self.lowered, (i, a)) for a, b in pieces(text, unit))
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
        """The clauses holding ``literal`` as a whole token (a sentence cut at ';', 'but', 'however'...)."""
        return self.units_with("clause", literal)

    def sentences_with(self, literal: str) -> list[Clause]:
        """The sentences holding ``literal`` as a whole token."""
        return self.units_with("sentence", literal)

    def lines_with(self, literal: str) -> list[Clause]:
        """The reading lines holding ``literal`` as a whole token, each with the labels over it."""
        return self.units_with("line", literal)

    def clauses_in(self, unit: Clause) -> list[Clause]:
        """The clauses of one unit (a sentence or a line), read the way the context's clauses are."""
        index, offset = unit.order
        return [Clause.of(unit.text[a:b], self.lowered, (index, offset + a)) for a, b in pieces(unit.text, "clause")]

    def clauses_holding(self, needles: Iterable[str]) -> list[Clause]:
        """The clauses holding any of ``needles`` as a plain substring, each once, in reading order."""
        needles = [n for n in set(needles) if n]
        out: list[Clause] = []
        for i in sorted({i for n in needles for i in self._parts_holding(n)}):
            text = part_reading(self.parts[i])
            spans, lines = set(), SeenLines(text, "clause")
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
            may = openings(self.parts[first:scanned_from], phrases)
            opening = tuple(i for i, yes in enumerate(may, first) if yes or "\\" in self.parts[i]) + opening
            self._opening[phrases] = (first, opening)
        out = []
        for i in opening[bisect.bisect_left(opening, first):]:
            text = part_reading(self.parts[i])
            out.extend(c for a, b in pieces(text, "sentence") if (c := Clause.of(text[a:b], self.lowered, (i, a))).order > after)
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

    # -- evidence ---------------------------------------------------------------------------------

    def near_miss(self, literal: str) -> str | None:
        """The context token most like a missing literal (a paraphrase such as acme-staging). Another of the
        source's own literals is never one: an allowed host kept beside a dropped forbidden one is itself. A
        literal of plain words has none: "criteria" is no misspelling of "imperial", only another word."""
        if not name_shaped(literal):
            return None
        tokens = self._tokens
        for _ in range(_NEAR_MISS_TRIES):
            near = near_miss_among(literal, tokens, self.rules.near_miss_ratio)
            if near is None or near not in self._source_text:
                return near
            tokens = tokens - {near}  # a name the source itself used is that name, not this one paraphrased
        return None

    @functools.cached_property
    def _source_text(self) -> str:
        return "\n".join(turn.text for turn in self.source)

    @functools.cached_property
    def _tokens(self) -> frozenset[str]:
        return tokens_of(self.text) - self.literals

    def identifiers(self, clause: Clause) -> list[str]:
        """Identifier-like tokens (with a digit, underscore, '/' or ':') in a clause.

        A letters-only snake_case word ("pending_actions", a JSON key) is a name only when a number
        is bound to it ("max_workers <= 4"): otherwise it is prose in another notation.
        """
        return list(identifiers_in(clause.text))

