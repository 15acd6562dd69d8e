"""Reading "<field> <operator> <number>" out of prose, shared by the numeric oracles."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from harness.oracles._context import Context
from harness._base._wholetoken import token_spans
from harness.oracles._lexicon import SNAKE_NAME, WORD, name_shaped, phrase_pattern
from harness.oracles._units import Clause
from harness.oracles import _cues

__all__ = ["Mention", "value_mentions", "field_mentions", "line_mentions", "operators_in", "relation_key"]



@dataclass(frozen=True, slots=True)
class Mention:
    """A field followed, within a few words, by a number; ``between`` is the text joining them."""

    clause: Clause
    number: str
    between: str
    before_number: str
    at: int = -1  # where the field starts in ``clause.text`` (-1: the number stands before it)


def _number_after(text: str, value: str | None) -> re.Match[str] | None:
    """The number (``value``, or any), allowing a unit glued to it ("30s", "512MiB")."""
    pattern = r"(?<![\w.])(" + (re.escape(value) if value else r"\d+(?:\.\d+)?") + r")(?:[a-zA-Z%]{1,4})?(?![\w]|\.\d)"
    m = re.search(pattern, text)
    return m


def field_mentions(ctx: Context, field: str, value: str | None = None) -> list[Mention]:
    """Each place ``field`` is followed within ``number_window`` words by ``value`` (or any number).

    Another identifier between them (``retry_limit 3, max_retries``) breaks the link,
    so the right number next to the wrong field does not count.
    """
    out = []
    for clause in ctx.clauses_with(field):
        if _cues.listed_words(ctx.rules, clause):
            continue  # "tags: max_batch 5 limit min max": words listed, no value bound
        start = 0
        text = clause.text
        while (at := text.find(field, start)) >= 0:
            start = at + len(field)
            # the next few words only: slicing or scanning the whole tail per occurrence would be quadratic
            words = list(itertools.islice(WORD.finditer(text, start), ctx.rules.number_window + 2))
            window = text[start: words[-1].end()] if words else ""
            m = _number_after(window, value)
            if m is not None:
                between = window[: m.start()]
                if _another_field(between, ctx.rules) or (value is not None and field in between):
                    continue
                after = " ".join(WORD.findall(window[m.end():])[:3])
                out.append(Mention(clause, m.group(1), between + " " + after, between, at))
                continue
            before = _number_before(ctx, text[:at], value)
            if before is not None:
                out.append(Mention(clause, *before))
    return out


def _number_before(ctx: Context, head: str, value: str | None) -> tuple[str, str, str] | None:
    """A number stated before its field ("capped at 12 parallel jobs (max_parallel_jobs)"), if any.

    Only within ``number_window`` words, with no other number or field in between; returns
    (number, the operator context, the words before the number).
    """
    words = list(WORD.finditer(head))[-(ctx.rules.number_window + 1):]
    if not words:
        return None
    tail = head[words[0].start():]
    pattern = r"(?<![\w.])(" + (re.escape(value) if value else r"\d+(?:\.\d+)?") + r")(?:[a-zA-Z%]{1,4})?(?![\w]|\.\d)"
    matches = list(re.finditer(pattern, tail))
    if not matches:
        return None
    m = matches[-1]
    after = tail[m.end():]
    if re.search(r"\d", after) or SNAKE_NAME.search(after) or SNAKE_NAME.search(tail[: m.start()]):
        return None  # another number or field sits between, or the number already follows a field of its own
    # the words before the number, as far back as a negation reaches ("Never let queue depth exceed 1000")
    before = " ".join(WORD.findall(head[: words[0].start() + m.start()])[-(ctx.rules.negation_window + 2):])
    return m.group(1), before + " " + after, before


def _another_field(between: str, rules) -> bool:
    """A second field sits between: a snake_case name followed by one of the rules' field links. A key
    made of words that state a relation ("must_be_strictly_below", "max_allowed") is not a field."""
    return any(phrase_pattern(rules.field_links).match(between[m.end():].lstrip()) and not relation_key(m.group(0), rules)
               for m in SNAKE_NAME.finditer(between))


def relation_key(token: str, rules) -> bool:
    """A letters-only snake_case key that says how a value binds ("must_equal", "at_most",
    "must_be_strictly_below"), not what it is about: it opens with one of ``relation_words``."""
    if "_" not in token or any(ch.isdigit() for ch in token):
        return False
    return token.split("_", 1)[0].lower() in rules.relation_words


def value_mentions(ctx: Context, field: str, value: str) -> list[Mention]:
    """Where ``value`` is stated for ``field``. A field of plain words ("budget cap", "monthly cloud spend") is a
    description, not a name: where it is not written as it was, a clause holding the value and one of its
    content words ("a spending cap of $500") states it, the words before the number saying how it binds."""
    found = field_mentions(ctx, field, value)
    if found or name_shaped(field):
        return found
    stems = [w[:-1] if w.endswith("s") else w for w in _CONTENT.findall(field.lower())]
    out = []
    for clause in ctx.clauses_with(value):
        if not stems or _cues.listed_words(ctx.rules, clause) or not any(
                re.search(rf"\b{re.escape(s)}", clause.lower) for s in stems):
            continue
        at = next(iter(token_spans(clause.text, value)))[0]
        before = " ".join(WORD.findall(clause.text[:at])[-(ctx.rules.negation_window + 2):])
        after = " ".join(WORD.findall(clause.text[at + len(value):])[:3])
        out.append(Mention(clause, value, before + " " + after, before))
    return out


_CONTENT = re.compile(r"[a-z]{3,}")


def line_mentions(ctx: Context, field: str, value: str) -> list[Mention]:
    """``value`` later on a line that names ``field`` with no other field or number in between
    ("batch_size used to be capped at 1000; the user lowered it to at most 500"): the words just
    before the value say how it binds."""
    out = []
    pattern = re.compile(r"(?<![\w.])" + re.escape(value) + r"(?:[a-zA-Z%]{1,4})?(?![\w]|\.\d)")
    for line in ctx.lines_with(field):
        if _cues.listed_words(ctx.rules, line):
            continue
        at = line.text.find(field) + len(field)
        for m in pattern.finditer(line.text, at):
            between = line.text[at: m.start()]
            if _another_field(between, ctx.rules):
                break
            before = " ".join(WORD.findall(between)[-4:])
            out.append(Mention(line, value, before, before))
            break
    return out


# A strict bound under a negation is the opposite closed bound: "must not go above 5" is "<= 5".
_NEGATED = {">": "<=", "<": ">=", ">=": "<", "<=": ">"}


def _notation_at(lower: str, start: int, end: int) -> bool:
    """The operator found at ``lower[start:end]`` is a piece of notation, not a comparison: an arrow
    ("0.0.0.0:9826->80/tcp", "a => b" is kept: only a dash-led arrow), a command-line flag ("--max 3",
    "-max"), or a word inside a path or a name ("/max/", "max_pool")."""
    before = lower[start - 1] if start else " "
    after = lower[end] if end < len(lower) else " "
    phrase = lower[start:end]
    if not phrase[0].isalnum():
        return before == "-" or after in "-=" or (phrase[0] == "<" and after == "-")
    return before in "-/_." or after in "/_"


def operators_in(text: str, ctx: Context, *, negated: bool = False) -> set[str]:
    """Operators stated in ``text``, negation-aware (longest phrase wins, so "no more than" is not "more than").
    ``negated``: the whole of ``text`` stands under a negation (one before the field), so a strict
    operator not negated within it is read flipped."""
    phrase_to_op = {p: op for op, ps in ctx.rules.operator_phrases for p in ps}
    pattern = phrase_pattern(tuple(phrase_to_op))
    lower = text.lower()
    found = set()
    for m in pattern.finditer(lower):
        if _notation_at(lower, m.start(), m.end()):
            continue
        op = phrase_to_op[m.group(0)]
        if op in ("<", ">") and _cues.negated(ctx.rules, lower, m.start()) != negated:
            op = _NEGATED[op]
        found.add(op)
    return found
