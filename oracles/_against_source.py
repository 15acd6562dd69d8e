"""Findings read again against the source sentence that stated their fact, so a summary is held to what the
source said and a finding says what became of the obligation.

- *What stands in* for a literal the context no longer holds: a compactor that keeps a turn and rewrites
  its literal ("maintain-api-7" to "hold-api-7"), or keeps an error's sentence and ends it with
  "successfully resolved", changed the obligation rather than dropping it. The stand-in is the context
  sentence sharing most of the words of the source sentence that stated the literal; what it says
  decides the word (rewritten, falsely completed, inverted), and it is the excerpt a report quotes.
  Without one, nothing stands in: dropped. The name put in the literal's place is that rewrite, not an
  invented obligation.
- *Its own words*: a context that keeps the stating sentences verbatim (in any case or punctuation) keeps
  the force they had, whatever the reading makes of them.
- *As weak as stated*: a weakening the source's own sentence already had is no weakening.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dataclasses import replace
from typing import TYPE_CHECKING

from harness._base._model import Fact, FactKind, Polarity
from harness._base._wholetoken import has_token
from harness.oracles._context import Context
from harness.oracles._cues import cue_near, negated, under_modal
from harness.oracles._findings import Evidence, Finding, Outcome
from harness.oracles._lexicon import phrase_pattern
from harness.oracles._units import Clause, pieces

if TYPE_CHECKING:
    from harness.oracles._core import Case

__all__ = ["StandIn", "stand_in", "stating_sentences", "unlabelled", "against_source"]

_CONTENT = re.compile(r"[a-z][a-z'\-]{3,}")
_LEAST_SHARED = 0.6  # of the stating sentence's content words, the share a stand-in must hold
_LEAST_WORDS = 4  # a stating sentence with fewer content words than this is too thin to recognise
_LEAST_COMMON = 3  # and a stand-in shares at least this many of them
_CLAIMS_DONE = (FactKind.UNRESOLVED_ERROR, FactKind.IN_FLIGHT_CALL, FactKind.COMMITMENT)


@dataclass(frozen=True, slots=True)
class StandIn:
    """The context sentence holding what a missing literal's sentence said, and what it now says of it:
    ``rewritten``, ``falsely-completed`` or ``inverted`` (the values of ``harness.oracles.Outcome``)."""

    text: str
    says: str


def stand_in(ctx: Context, fact: Fact, source_text: str) -> StandIn | None:
    """The sentence of ``ctx`` that stands in for ``fact``'s sentence in ``source_text`` (the turn that
    stated it), if one holds at least ``_LEAST_SHARED`` of its content words; None when nothing does."""
    literal = fact.literals[0]
    stated = _stating_words(source_text, literal, ctx)
    if len(stated) < _LEAST_WORDS:
        return None
    best, best_share = None, _LEAST_SHARED
    for sentence in ctx.sentences:
        common = len(stated & _words(sentence.lower, ctx))
        share = common / len(stated)
        if common >= _LEAST_COMMON and share >= best_share and (best is None or share > best_share):
            best, best_share = sentence, share
    if best is None:
        return None
    return StandIn(best.text, _what_it_says(ctx, fact, best.lower))


def stating_sentences(source_text: str, literal: str) -> tuple[str, ...]:
    """The sentences of ``source_text`` holding ``literal`` and the one after each, whitespace-normalised,
    without a label opening them ("Standing instruction: ", "Client: "): what a summary would keep."""
    spans = list(pieces(source_text, "sentence"))
    chosen: list[int] = []
    for i, (a, b) in enumerate(spans):
        if has_token(source_text[a:b], literal):
            chosen += [k for k in (i, i + 1) if k < len(spans) and k not in chosen]
    return tuple(unlabelled(" ".join(source_text[spans[k][0]:spans[k][1]].split())) for k in chosen)


_LABEL = re.compile(r"^[A-Z][^:.!?]{0,40}:\s+")


def unlabelled(sentence: str) -> str:
    """``sentence`` without a label opening it ("Standing instruction: ", "GOAL STATE: ", "Client: ")."""
    return _LABEL.sub("", sentence.strip(), count=1)


def _words(lower: str, ctx: Context) -> set[str]:
    return set(_CONTENT.findall(lower)) - set(ctx.rules.common_words)


def _stating_words(source_text: str, literal: str, ctx: Context) -> set[str]:
    """The content words of the source sentences that hold ``literal`` (the literal's own words left out)."""
    words: set[str] = set()
    for sentence in stating_sentences(source_text, literal)[:1] + tuple(
            s for s in stating_sentences(source_text, literal) if has_token(s, literal)):
        words |= _words(sentence.lower(), ctx)
    return words - _words(literal.lower(), ctx)


def _what_it_says(ctx: Context, fact: Fact, lower: str) -> str:
    rules = ctx.rules
    if fact.kind in _CLAIMS_DONE and _claims(rules, lower, rules.resolution_cues + rules.completion_cues
                                             + rules.call_done_cues):
        return "falsely-completed"
    if fact.polarity is Polarity.FORBID and _claims(rules, lower, rules.permission_cues):
        return "inverted"
    if fact.polarity is Polarity.REQUIRE and fact.kind is not FactKind.PROHIBITION and _claims(
            rules, lower, tuple(c for c in rules.prohibition_cues if c not in rules.factual_negators)):
        return "inverted"
    return "rewritten"


def _claims(rules, lower: str, cues: tuple[str, ...]) -> bool:
    """One of ``cues`` stands in ``lower`` as a claim: not negated, not under a modal."""
    return any(not negated(rules, lower, m.start()) and not under_modal(rules, lower, m.start())
               for m in phrase_pattern(cues).finditer(lower))


def against_source(case: Case, findings: list[Finding]) -> list[Finding]:
    """``findings`` read against the sentences that stated their facts (the module docstring says how)."""
    findings = [_what_stands_in(case, finding) for finding in findings]
    rewritten = {f.found for f in findings if f.outcome is not Outcome.DROPPED and f.evidence is Evidence.ABSENT}
    return [f for f in findings if not (f.outcome is Outcome.INVENTED and f.found in rewritten)
            and not _read_in_its_own_words(case, f) and not _as_weak_as_stated(case, f)]


def _stated(case: Case, finding: Finding) -> tuple[Fact, str] | None:
    """The live fact ``finding`` is about and the text of the turn that stated it, if both are known."""
    if finding.fact_id is None:
        return None
    fact = next((f for f in case.live if f.id == finding.fact_id), None)
    if fact is None or not 0 <= fact.origin_turn < len(case.transcript.turns):
        return None
    return fact, case.transcript.turns[fact.origin_turn].text


def _what_stands_in(case: Case, finding: Finding) -> Finding:
    """A literal reported gone whose stating sentence the context keeps, changed: the finding says what
    became of it and quotes that sentence as its evidence."""
    stated = _stated(case, finding) if finding.outcome is Outcome.DROPPED and not finding.found else None
    found = stand_in(case.context, *stated) if stated else None
    if found is None:
        return finding
    said = {"rewritten": "with the literal changed", "falsely-completed": "now saying it is done or resolved",
            "inverted": "now saying the opposite"}[found.says]
    return replace(finding, outcome=Outcome(found.says), found=found.text,
                   detail=f"{stated[0].literals[0]} is gone from the context, but the sentence that stated it is "
                          f"kept, {said}")


# What a reading of force rests on: a context that keeps the source's own sentence keeps its force, whatever
# the reading makes of the words around the literal.
_READINGS_OF_FORCE = frozenset({Evidence.BARE_MENTION, Evidence.WEAKENED, Evidence.UNATTACHED, Evidence.CONFLICTING,
                                Evidence.CONTRARY})


def _read_in_its_own_words(case: Case, finding: Finding) -> bool:
    """``finding`` reads force into (or out of) words the context kept verbatim from the sentences that
    stated its live fact (and the sentence after them, where a rule often goes on: "X is production.
    Read-only queries only."): the obligation is as binding as the source made it."""
    stated = _stated(case, finding) if finding.evidence in _READINGS_OF_FORCE else None
    if stated is None:
        return False
    statement = [_word_run(s) for s in stating_sentences(stated[1], stated[0].literals[0])]
    context = _word_run(case.context.text)
    if not statement or not all(sentence in context for sentence in statement):
        return False
    return finding.found is None or _word_run(unlabelled(finding.found)) in " ".join(statement)


def _as_weak_as_stated(case: Case, finding: Finding) -> bool:
    """A weakening read in the context that the source's own statement already had ("pick arXiv papers over
    peer-reviewed ones" kept as "prefer arXiv papers"): the obligation is no weaker than it was given."""
    stated = _stated(case, finding) if finding.evidence in (Evidence.WEAKENED, Evidence.CONFLICTING) else None
    if stated is None:
        return False
    fact, text = stated
    rules = case.rules
    weak = rules.weakening_cues + rules.softening_cues  # ("limited to 40" is no approximation of 40)
    return any(cue_near(rules, Clause.of(sentence, case.context.lowered), fact.literals[0], weak, skip_negated=True,
                        confined=True) for sentence in stating_sentences(text, fact.literals[0]))


def _word_run(text: str) -> str:
    """``text`` as its words, case-folded, one space apart: what stays when only typography changed."""
    return " ".join(re.findall(r"[\w@/:.\-]*\w", text.lower()))
