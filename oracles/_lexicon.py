"""Lexicon, the reading's first rule book: what a word, a name (an identifier) and a cue phrase are, how
names are masked out of the text cues are read in, and which token of a text is a near miss of a literal.

Every stage after this one (``_units``, ``_cues``) and every oracle asks these; none defines its own.
"""

from __future__ import annotations

import collections
import difflib
import functools
import re

__all__ = ["WORD", "IDENT", "SNAKE_NAME", "name_shaped", "identifiers_in", "identifier_tokens", "tokens_of", "masked", "near_miss_among",
           "nearest", "phrase_pattern", "typographic_variants_restored"]

WORD = re.compile(r"\S+")
# An identifier-like token: contains a digit, an underscore, '/' or '://'.
IDENT = re.compile(r"[A-Za-z0-9][\w./:\-]*[\w/]|[A-Za-z0-9]")
# A field name in snake_case ("max_retries"): what a number in prose is bound to.
SNAKE_NAME = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")
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
        if _MASK_TRIGGER.search(run) or run in literals or run.strip(".:-") in literals:
            return "#" * len(run)
        return run.replace("_", " ")
    return mask


# ``IDENT`` finds one token in each run of identifier characters ([\w./:-]): the run from its first
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
        return frozenset(IDENT.findall(text))
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


#: What makes a token a name rather than a word: a digit, an underscore or a '/' (paths, URLs, versions,
#: ids, snake_case fields). The one rule every stage and oracle asks (``name_shaped``).
_NAME_MARKS = frozenset("0123456789_/")


def name_shaped(token: str) -> bool:
    """Whether ``token`` (an ``IDENT`` token) is shaped like a name: it holds a digit, '_' or '/'."""
    return not _NAME_MARKS.isdisjoint(token)


@functools.lru_cache(maxsize=65536)
def identifiers_in(text: str) -> tuple[str, ...]:
    out = []
    for m in IDENT.finditer(text):
        token = m.group(0)
        if not name_shaped(token) or token.isdigit():
            continue
        if _WORDY.match(token) and not _BOUND_NUMBER.match(text, m.end()):
            continue
        out.append(token)
    return tuple(out)


@functools.lru_cache(maxsize=65536)
def masked(text: str, literals: frozenset[str]) -> str:
    return _RUN.sub(_masker(literals), text.lower().replace("\u2019", "'"))


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


# A stretch written all in capitals: three words or more with no small letter (a shouted rule), of which
# ``_restored_in`` restores only stretches of at least eight capitals.
_SHOUTED = re.compile(r"(?:(?<![^\s])[^a-z\s]*[A-Z][^a-z\s]*(?:[ \t]+|$)){3,}", re.MULTILINE)
# A literal of plain words: letters, with spaces, hyphens or apostrophes between.
_WORDS_ONLY = re.compile(r"[A-Za-z][A-Za-z' \-]*[A-Za-z]")


def _restored_in(line: str, literals: frozenset[str]) -> str:
    if sum(ch.isupper() for ch in line) < 8:
        return line
    for literal in literals:
        if literal.upper() in line and literal not in line:
            line = re.sub(r"(?<![\w\-])" + re.escape(literal.upper()) + r"(?![\w\-])", literal, line)
    return line


@functools.lru_cache(maxsize=4096)
def _word_literal_pattern(literal: str) -> re.Pattern[str]:
    """Case-free, with any run of spaces between its words and an inflection on its last word (or without the
    plural the literal has): the same words."""
    stem = literal[:-2] if literal.endswith("es") and len(literal) > 4 else (
        literal[:-1] if literal.endswith("s") and len(literal) > 3 else literal)
    body = r"\s+".join(re.escape(w) for w in stem.split())
    return re.compile(r"(?<![\w\-])" + body + _INFLECTION + r"(?![\w\-])", re.IGNORECASE)


# The endings English puts on a word without making it another word ("confirm": confirms, confirmed,
# confirming, confirmation): a plain-word literal matches with any of them.
_INFLECTION = r"(?:s|es|d|ed|ing|ation|ations|ion|ions)?"


# Where a sentence (or a list item, a heading, a label's value) starts: the place a writer capitalises.
_SENTENCE_START = r"(?:^|(?<=[.!?]\s)|(?<=[.!?]\s\s)|(?<=\n)|(?<=[-*+#>\u2022]\s)|(?<=\d[.)]\s)|(?<=:\s)|(?<=\(\s)|(?<=\()|(?<=[\"'`]))"


@functools.lru_cache(maxsize=16384)
def typographic_variants_restored(text: str, literals: frozenset[str], number_words: tuple[tuple[str, str], ...],
                                  number_leads: tuple[str, ...]) -> str:
    """``text`` with the changes writing makes to a literal that are not changes of the literal put back:
    a literal capitalised because it opens a sentence or an item ("Timeout_seconds must...", "S3://x/ is
    off limits"); any literal in a stretch written all in capitals (a shouted rule: its case says nothing);
    a literal made of plain words ("budget cap", "primary source") in another case or number ("Budget
    Cap", "primary sources"), since words, unlike names, are not spelled byte for byte; and a number
    written as a word where a value stands ("at most three", "set it to zero"). A name (``name_shaped``)
    capitalised anywhere else, or rewritten, stays as written: that is a changed literal."""
    if _SHOUTED.search(text):
        text = _SHOUTED.sub(lambda m: _restored_in(m.group(0), literals), text)
    for literal in literals:
        if _WORDS_ONLY.fullmatch(literal) and not name_shaped(literal):
            text = _word_literal_pattern(literal).sub(literal, text)
            continue
        if not literal[:1].isalpha() or not literal[0].islower():
            continue
        capital = literal[0].upper() + literal[1:]
        if capital in text:
            text = re.sub(_SENTENCE_START + re.escape(capital) + r"(?![\w\-])", literal, text, flags=re.MULTILINE)
    return _numerals(text, number_words, number_leads)


def _numerals(text: str, number_words: tuple[tuple[str, str], ...], number_leads: tuple[str, ...]) -> str:
    """Each number word that stands where a value does (right after a lead, maybe one word between) as its
    digits. The words are found in one scan; only the few found are checked for a lead before them."""
    lead = _lead_pattern(number_leads)
    digits = dict(number_words)
    lowered = text.lower()  # the same length: positions carry over
    out, at = [], 0
    for m in phrase_pattern(tuple(digits)).finditer(lowered):
        end = m.end()
        if lowered[end:end + 1] == "-" or _BEFORE_OF.match(lowered, end):
            continue  # "one-off", "one of the calls"
        if lead.search(text, max(0, m.start() - _LEAD_REACH), m.start()):
            out += [text[at:m.start()], digits[m.group(0)]]
            at = end
    return "".join(out) + text[at:] if out else text


_LEAD_REACH = 40  # characters before a number word within which its lead is looked for


_BEFORE_OF = re.compile(r"\s+of\b")


@functools.lru_cache(maxsize=8)
def _lead_pattern(number_leads: tuple[str, ...]) -> re.Pattern[str]:
    """A lead ending where a number word starts, with at most one word between ("at most three")."""
    leads = "|".join(re.escape(lead) for lead in sorted(number_leads, key=len, reverse=True))
    return re.compile(rf"(?:(?<![\w])(?:{leads})(?![\w])|[=:(])\s*"
                      r"(?:(?!(?:the|a|an|this|that|these|those|each|every)\b)\w+\s+)?$", re.IGNORECASE)
