"""The fast text scans agree exactly with the plain regex definitions they replace."""

from __future__ import annotations

import difflib
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness import Role, ToolCall, Turn
from harness._base._tokens import _message_tokens, count_tokens
from harness._base._wholetoken import has_token, literal_pattern, token_spans
from harness.oracles._lexicon import IDENT as _IDENT, identifier_tokens, near_miss_among, phrase_pattern, tokens_of
from harness.oracles._units import _may_open, _opening_pattern, openings as _openings

_TOKEN = re.compile(r"\w+|[^\w\s]")  # the counter's definition, written out again on purpose

# Text built from the characters that decide token boundaries, plus arbitrary Unicode.
_EDGY = st.text(alphabet=st.sampled_from("ab1_-./:x \t\n\x1c\x85é·"), max_size=40)
_TEXT = st.one_of(_EDGY, st.text(max_size=40))


@given(_TEXT)
@example("")
@example("\x1c\x1f word\x7f")
def test_count_tokens_matches_the_regex_definition(text):
    assert count_tokens(text) == len(_TOKEN.findall(text))


@given(text=_TEXT, calls=st.lists(st.tuples(_TEXT, _TEXT, _TEXT), max_size=3), answers=st.one_of(st.none(), _TEXT))
def test_a_messages_tokens_are_the_sum_over_its_parts(text, calls, answers):
    """The default counter counts a message in one pass over its parts joined by spaces; that is the
    per-part sum the definition gives (and what a team's own counter still gets)."""
    if answers is not None and not answers:
        answers = None
    turn = Turn(Role.TOOL, text, tool_call_id=answers) if answers is not None else \
        Turn(Role.ASSISTANT, text, tool_calls=tuple(ToolCall(id=cid or "c", name=name or "f", arguments=args)
                                                    for name, args, cid in calls))
    per_part = lambda s: len(_TOKEN.findall(s))  # noqa: E731 - the definition, as a counter of its own
    assert _message_tokens(turn, count_tokens) == _message_tokens(turn, per_part)


@settings(max_examples=500)
@given(st.one_of(st.text(alphabet=st.sampled_from("aZ09_-./:x \t\n\x00@é"), max_size=40), _TEXT))
@example("_._a-b.:/c:.-")
@example("__init__ s3://b/k/ v1.2.3. -x- /")
def test_identifier_tokens_match_the_pattern(text):
    """The C-level run split finds exactly the tokens the identifier pattern does."""
    identifier_tokens.cache_clear()
    assert identifier_tokens(text) == frozenset(_IDENT.findall(text))


_MARKERS = ("update", "edit", "correction", "actually", "note:")


@settings(max_examples=300)
@given(text=st.lists(st.one_of(st.sampled_from(["Update", "EDIT:", "actually", " - ", "\n", ". ", "#", "note:", "x",
                                                "!", "?", "\u2022", "|", "> ", "`", '"', "*", "\r", "\xa0", "{[",
                                                "\u2028", "editor", "_edit_"]),
                               _EDGY), max_size=12).map("".join))
def test_the_opening_scan_answers_as_its_pattern_does(text):
    """``_may_open`` skips the pattern when no phrase occurs at all; that never changes its answer."""
    assert _may_open(text, _MARKERS) == (_opening_pattern(_MARKERS).search(text.lower()) is not None)


_OPENING_PIECES = st.lists(st.one_of(st.sampled_from(["Update", "EDIT:", "actually", " - ", "\n", ". ", "#", "note:", "x",
                                                      "!", "?", "\u2022", "> ", "\u0130", "editor", "_edit_"]),
                                     _EDGY), max_size=6).map("".join)


@settings(max_examples=300)
@given(parts=st.lists(_OPENING_PIECES, max_size=20), seen=st.lists(_OPENING_PIECES, max_size=10))
def test_messages_scanned_together_answer_as_each_alone(parts, seen):
    """New messages are scanned as one joined text; each answer is the one-message scan's, whatever
    was remembered before (``seen``) and however many are new."""
    from harness.oracles import _units

    _units._OPENINGS_SEEN.clear()
    _openings(tuple(seen), _MARKERS)
    assert _openings(tuple(parts), _MARKERS) == [_may_open(p, _MARKERS) for p in parts]


@settings(max_examples=300)
@given(text=_EDGY, literal=st.sampled_from(["a1", "a.b", "x-1", "_a", "a/", "/x", "1", "ab", "a:b", "é1"]))
def test_token_spans_match_the_pattern_search(text, literal):
    expected = [m.span() for m in literal_pattern(literal).finditer(text)]
    assert list(token_spans(text, literal)) == expected
    assert has_token(text, literal) == bool(expected)


def test_token_spans_respect_whole_tokens():
    text = "6.24.13 and v-6.24.1, then 6.24.1."
    assert [text[a:b] for a, b in token_spans(text, "6.24.1")] == ["6.24.1"]
    assert list(token_spans(text, "6.24.1"))[0][0] == text.rindex("6.24.1")


# -- units found from a literal's occurrences equal the units of splitting the whole reading --------

from harness import CompactionResult  # noqa: E402
from harness.oracles._context import Context  # noqa: E402
from harness.oracles._units import _CLAUSE_SPLIT, _SENTENCE_SPLIT, part_reading  # noqa: E402
from harness.oracles._rules import DEFAULT_RULES  # noqa: E402

_WORDS = ["x1", "s3://b/", "v1.2", "but", "However", "so", "while", ",", ".", ";", "!", "?", " ", " ", " ", "\n",
          "never", "use", "-", "1.2", ". ", "\n\n", ", so "]
_MESSAGE = st.lists(st.sampled_from(_WORDS), max_size=30).map("".join)
_SPLITS = {"clause": _CLAUSE_SPLIT.split, "sentence": _SENTENCE_SPLIT.split, "line": lambda text: text.split("\n")}


@settings(max_examples=300)
@given(messages=st.lists(_MESSAGE, min_size=1, max_size=4), literal=st.sampled_from(["x1", "s3://b/", "v1.2", "1.2"]),
       unit=st.sampled_from(sorted(_SPLITS)))
def test_units_with_a_literal_are_the_pieces_of_each_messages_whole_split(messages, literal, unit):
    context = Context(CompactionResult(tuple(Turn(Role.USER, m) for m in messages)), DEFAULT_RULES)
    # Each message is read on its own: the pieces of splitting each message's whole reading.
    whole = [piece.strip() for m in messages for piece in _SPLITS[unit](part_reading(m)) if piece and piece.strip()]
    expected = [piece for piece in whole if has_token(piece, literal)]
    found = context.units_with(unit, literal)
    assert [c.text for c in found] == expected
    assert [c.order for c in found] == sorted(c.order for c in found)
    assert [c.text for c in getattr(context, unit + "s") if has_token(c.text, literal)] == expected


# -- markup stripping: the reordered pattern removes exactly what the plain definition removes ------

from harness.oracles._structure import strip_markup  # noqa: E402

# The definition as first written: each lookbehind before the character it guards.
_MARKUP_DEFINITION = re.compile(
    r"\*\*|__(?!\w*__\w)|`+|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|(?<![\w])_+(?=\w)|(?<=\w)_+(?![\w])")


@settings(max_examples=1000)
@given(st.text(alphabet=st.sampled_from("*_`~ab \n.1é"), max_size=40))
def test_markup_is_stripped_as_the_definition_says(text):
    struck = re.sub(r"~~(.+?)~~", r"\1 (struck through)", text)
    assert strip_markup(text) == _MARKUP_DEFINITION.sub("", struck)


def _near_miss_by_definition(literal: str, tokens: frozenset[str], ratio: float) -> str | None:
    """The most alike token by difflib's ratio (at least ``ratio``; the first in sorted order on a tie)."""
    best, best_ratio = None, ratio
    for token in sorted(tokens):
        if token == literal or len(token) < 3:
            continue
        score = difflib.SequenceMatcher(None, literal, token).ratio()
        if score > best_ratio or (score == best_ratio and best is None):
            best, best_ratio = token, score
    return best


# Few characters, so tokens repeat them and come close to the literal: where the bounds are tight.
_ident = st.text(alphabet="ab0-", min_size=1, max_size=12)


@given(_ident, st.frozensets(_ident, max_size=40), st.sampled_from([0.5, 0.6, 0.75, 0.9]))
@example("aab0-0", frozenset({"ab0-0x", "aab00", "ba0-0a"}), 0.75)
def test_the_near_miss_search_answers_as_difflib_ratio_does(literal, tokens, ratio):
    # Its cheap bounds only skip tokens difflib's ratio would rule out; what it finds is the same.
    assert near_miss_among(literal, tokens, ratio) == _near_miss_by_definition(literal, tokens, ratio)



@settings(max_examples=100)
@given(texts=st.lists(_TEXT, min_size=1, max_size=8), cuts=st.lists(st.integers(0, 8), min_size=1, max_size=4))
def test_a_growing_window_reads_the_tokens_a_fresh_read_does(texts, cuts):
    """no-invented-obligation extends the last window's tokens by the turns since; whatever the order
    of the windows asked for, each answer is the tokens of that window read afresh."""
    from harness.oracles import _invented

    turns = tuple(Turn(Role.USER, text) for text in texts)
    for cut in cuts:
        boundary = cut % (len(turns) + 1)
        assert _invented._window_tokens(turns, boundary) == tokens_of(_invented._joined(turns[:boundary]))


# -- the structure rewrite's fast path for prose lines reads them as the general rules do ------------

from harness.oracles._structure import _BOLD_LINE, _BULLET, _HEADING, _KEY_ONLY, _TABLE_RULE, _scoped  # noqa: E402


def _scoped_as_defined(lines):
    """``_structure._scoped`` as it was before its fast path for prose at the margin: every line through
    the general rules (written out again on purpose)."""
    out, headings, keys, columns, item_indent = [], [], [], None, None
    stripped = strip_markup("\n".join(lines)).split("\n")
    for raw, line in zip(lines, stripped):
        line = line.rstrip()
        if not line.strip():
            columns = None
            continue
        heading = _HEADING.match(line) if "#" in line[:4] else None
        bold = _BOLD_LINE.match(raw) if "**" in raw else None
        if heading or bold:
            level = len(heading.group(1)) if heading else 7
            text = (heading.group(2) if heading else strip_markup(bold.group(1))).strip().rstrip(":").strip()
            headings = [h for h in headings if h[0] < level] + [(level, text)]
            keys, columns = [], None
            continue
        if line.lstrip().startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if _TABLE_RULE.match(line):
                continue
            if columns is None:
                columns = cells
                continue
            line = ", ".join(f"{h}: {c}" if h else c for h, c in zip(columns, cells) if c)
        indent = len(line) - len(line.lstrip())
        bullet = _BULLET.match(line)
        key_only = _KEY_ONLY.match(line) if line.endswith(":") else None
        if not bullet and item_indent is not None and indent >= item_indent and out and not key_only:
            out[-1] += ", " + line.strip()
            continue
        item_indent = bullet.end() if bullet else None
        keys = [k for k in keys if k[0] < indent or (k[0] == indent and bullet)]
        body = line[bullet.end():] if bullet else line.strip()
        if key_only and not body.rstrip().endswith("::"):
            keys.append((indent, key_only.group(2).strip()))
            item_indent = None
            continue
        prefix = [t for _, t in headings] + [t for _, t in keys]
        out.append(": ".join([*prefix, body.strip()]) if prefix else body.strip())
    return out or [t for _, t in headings]


_LINE_PIECES = ["# Forbidden", "## Open", "### x", "#tag", "ab#c", "**Pinned**", "**Notes:**", "- item", "* item",
                "+ item", "\u2022 item", "1. one", "12) two", "\u0663. three", "-dash", "  - nested", "    deeper",
                "key:", "  sub key:", "key::", "| a | b |", "|---|---|", "| 1 | 2 |", "prose", "prose: colon",
                "x **bold** y", "`code` here", "~~old~~ new", "  continued", "\u00a0nbsp", "\u2003em", "\t tab", "",
                " ", "s3://b/k", "\ufeffbom", "1\tuse std", "  42 lines", "1234. four", "-rw-r--", "*args", "+1",
                "1.5 s", "7)x", "\u2022\u2022", "  3. three"]


@settings(max_examples=500)
@given(st.lists(st.one_of(st.sampled_from(_LINE_PIECES),
                          st.tuples(st.sampled_from(_LINE_PIECES), _EDGY).map("".join)), max_size=14))
def test_prose_lines_read_as_the_general_rules_read_them(lines):
    assert _scoped(lines) == _scoped_as_defined(lines)


@settings(max_examples=200)
@given(texts=st.lists(_EDGY, min_size=1, max_size=600), asked=st.lists(_EDGY, min_size=0, max_size=40),
       cuts=st.lists(st.integers(0, 600), min_size=1, max_size=4))
def test_the_source_knows_a_token_when_its_text_holds_it(texts, asked, cuts):
    """However far the window's tokens were read before (each window of one transcript, in any order),
    ``known`` answers exactly "the window's text holds it"."""
    from harness import Transcript
    from harness.oracles import Case, _invented

    transcript = Transcript(tuple(Turn(Role.USER, text) for text in texts), (), ())
    for cut in cuts:
        boundary = cut % (len(texts) + 1)
        source = _invented._SourceText(Case(transcript, boundary, 10_000, CompactionResult(())))
        text = _invented._joined(transcript.turns[:boundary])
        tokens = set(asked).union(*(identifier_tokens(t) for t in texts))  # inside the window and past it
        assert source.known(tokens) == {t for t in tokens if t in text}


def plain_phrase_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """The cue pattern's definition, written out again on purpose: each boundary checked before the phrase."""
    if not phrases:
        return re.compile(r"(?!)")
    parts = []
    for p in sorted(phrases, key=len, reverse=True):
        body = (r"(?<![\w])" if p[0].isalnum() else "") + re.escape(p) + (r"(?![\w])" if p[-1].isalnum() else "")
        parts.append(body)
    return re.compile("|".join(parts))


_PHRASE = st.text(alphabet=st.sampled_from("ab -'.:"), min_size=1, max_size=6).filter(str.strip)


@given(phrases=st.lists(_PHRASE, max_size=4, unique=True),
       text=st.text(alphabet=st.sampled_from("ab -'.:_1\n"), max_size=60),
       start=st.integers(0, 60), end=st.integers(0, 60))
@example(phrases=["never", "must not"], text="nevermind; never - must not, xnever", start=0, end=60)
def test_the_phrase_pattern_finds_what_the_plain_pattern_finds(phrases, text, start, end):
    """Checking a phrase's left boundary after it matched (so the engine can skip to where a phrase may
    start) finds the same matches as checking it first, also inside a slice of the text."""
    fast, plain = phrase_pattern(tuple(phrases)), plain_phrase_pattern(tuple(phrases))
    assert [m.span() for m in fast.finditer(text, start, end)] == [m.span() for m in plain.finditer(text, start, end)]
    assert bool(fast.match(text, start)) == bool(plain.match(text, start))
