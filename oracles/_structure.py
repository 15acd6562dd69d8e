"""Structure as meaning: a summary's Markdown, tables, JSON and YAML rewritten as plain lines.

LLM summaries carry meaning in structure: a heading "## Forbidden" over a bare
bullet, a table column "status", a JSON key "forbidden_targets" over a list.
Before any cue is read, ``reading_lines`` rewrites the context so each line
states what governs it: every list item, table row, YAML value and JSON leaf
is prefixed with the headings, column names and keys above it
("Forbidden: s3://x/"), and Markdown emphasis and code spans are stripped
(never masked). Lines are the only unit that changes shape here; the oracles
split them into sentences and clauses as before.
"""

from __future__ import annotations

import functools
import html
import json
import re
import tomllib
from typing import Any

__all__ = ["reading_lines", "strip_markup"]

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)])\s+")
_KEY_ONLY = re.compile(r"^(\s*)(?:[-*+•]\s+)?([^:\n]{1,80}):\s*$")
_BOLD_LINE = re.compile(r"^\s*\*\*([^*]+?)\*\*:?\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# Emphasis and code markup around words; an underscore *inside* a word (snake_case) is not markup.
# Every alternative begins with the literal character it removes (a backtick run is "``*", not "`+": a
# repeat first would hide it) and looks behind only after it: the regex engine then skips in C to the
# next '*', '_' or '`' instead of trying each alternative at every position (same matches).
_MARKUP = re.compile(r"\*\*|__(?!\w*__\w)|``*|\*(?<![\w*]\*)(?=\S)|\*(?<=\S\*)(?![\w*])|_(?<!\w_)_*(?=\w)|_(?<=\w_)_*(?![\w])")


_STRUCK = re.compile(r"~~(.+?)~~")


# A task-list box: "- [x] item" is done, "- [ ] item" still to do; the reading says so in words.
_CHECKED = re.compile(r"^(\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+)\[[xX\u2713\u2714]\]\s+", re.MULTILINE)
_UNCHECKED = re.compile(r"^(\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+)\[ \]\s+", re.MULTILINE)


def strip_markup(line: str) -> str:
    """A line without emphasis and code-span markers; struck-through text says so in words, and so does a
    task-list box ("done: ...", "pending: ..."; an open box is an item still ahead, not a thing to write)."""
    if "[" in line:
        line = _UNCHECKED.sub(r"\1pending: ", _CHECKED.sub(r"\1done: ", line))
    return _MARKUP.sub("", _STRUCK.sub(r"\1 (struck through)", line))


def reading_lines(text: str) -> list[str]:
    """The context's lines, each carrying the headings, keys and columns that govern it."""
    return list(_reading_lines(text))


@functools.lru_cache(maxsize=16384)
def _reading_lines(text: str) -> tuple[str, ...]:
    # Remembered per text: a session judges the same kept turns and summary lines at every
    # compaction, and shrinking judges them again on every candidate transcript.
    return tuple(_read(text))


def _read(text: str) -> list[str]:
    parsed = _as_data(text)
    if parsed is not None:
        return _flatten(parsed, [])
    if "<?" in text or "<!" in text:
        text = _DECLARATIONS.sub("", text)
    if "</" in text and _CLOSING_TAG.search(text) or "/>" in text and _TAG.search(text):
        return _xml_lines(text)
    lines = text.split("\n")
    if "```" not in text and "~~~" not in text:
        return _with_data(lines)  # no fence anywhere: one block
    out: list[str] = []
    i = 0
    while i < len(lines):
        if _FENCE.match(lines[i]):  # a fenced block: JSON inside is read as data, anything else line by line
            end = next((j for j in range(i + 1, len(lines)) if _FENCE.match(lines[j])), len(lines))
            block = "\n".join(lines[i + 1:end])
            parsed = _as_data(block)
            out.extend(_flatten(parsed, []) if parsed is not None else _with_data(block.split("\n")))
            i = end + 1
            continue
        start = i
        while i < len(lines) and not _FENCE.match(lines[i]):
            i += 1
        out.extend(_with_data(lines[start:i]))
    return out


_CLOSING_TAG = re.compile(r"</[A-Za-z_][\w.:-]*\s*>")
_TAG = re.compile(r"<(/?)([A-Za-z_][\w.:-]*)((?:\s+[\w.:-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))*)\s*(/?)>")
_ATTRIBUTE = re.compile(r"([\w.:-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+))")


# What an XML document declares about itself (<?xml version="1.0"?>, <!DOCTYPE ...>, <!-- comments -->) says
# nothing about the task.
_DECLARATIONS = re.compile(r"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>", re.DOTALL | re.IGNORECASE)


def _tag_label(name: str, attributes: str) -> str:
    """An element as a label: its name, then its attributes as words ("rule (type forbid)")."""
    words = name.replace("_", " ") if "_" in name and not any(ch.isdigit() for ch in name) else ""
    pairs = [f"{m.group(1)} {next(g for g in m.groups()[1:] if g is not None)}" for m in _ATTRIBUTE.finditer(attributes)]
    inside = ", ".join(p for p in [words, *pairs] if p)
    return f"{name} ({inside})" if inside else name


def _xml_lines(text: str) -> list[str]:
    """XML-tagged state as lines that carry the elements around them, as headings and keys do: a leaf
    ``<target kind="bucket">s3://x/</target>`` under ``<forbidden>`` reads "forbidden: target (kind
    bucket): s3://x/"; an element left open on its line governs the lines below until it closes, and
    the untagged lines between are read as Markdown under it. Tolerant: a summary's "XML" is rarely
    well formed, so no parser is asked to accept it."""
    out: list[str] = []
    stack: list[str] = []
    chunk: list[str] = []

    def flush() -> None:
        if chunk:
            prefix = "".join(f"{label}: " for label in stack)
            out.extend(prefix + line for line in _scoped(chunk))
            chunk.clear()

    for line in text.split("\n"):
        tags = list(_TAG.finditer(line))
        if not tags:
            chunk.append(line)
            continue
        flush()
        opened: list[str] = []  # opened on this line and still open
        at = 0
        for m in tags:
            before = strip_markup(line[at:m.start()]).strip()
            if before:
                out.append(html.unescape(": ".join([*stack, *opened, before])))
            closing, name, attributes, empty = m.groups()
            if closing:
                if opened:
                    opened.pop()
                elif stack:
                    stack.pop()
            elif empty:
                out.append(html.unescape(": ".join([*stack, *opened, _tag_label(name, attributes)])))
            else:
                opened.append(_tag_label(name, attributes))
            at = m.end()
        tail = strip_markup(line[at:]).strip()
        if tail:
            out.append(html.unescape(": ".join([*stack, *opened, tail])))
        stack.extend(opened)
    flush()
    return out


# TOML shows itself by a table header ("[constraints]") or an array opened at a line's end ("forbidden = [").
_TOML_MARK = re.compile(r"^\s*(?:\[\[?[\w.\-\" ]+\]\]?|[\w.\-\"]+\s*=\s*\[)\s*$", re.MULTILINE)


def _as_data(text: str) -> Any:
    """``text`` parsed as JSON, or as TOML when it shows TOML's own marks, or None."""
    parsed = _as_json(text)
    if parsed is None and "=" in text and _TOML_MARK.search(text):
        try:
            parsed = tomllib.loads(text) or None
        except (tomllib.TOMLDecodeError, ValueError):
            return None
    return parsed


# A line that opens a JSON value and leaves it open: "{", "[", '"forbidden": [', "State: {".
_OPENS_JSON = re.compile(r"^(?P<label>[^{}\[\]\"]{0,60}:\s*|\"[^\"]{1,60}\"\s*:\s*)?(?P<open>[{\[])\s*$")


def _with_data(lines: list[str]) -> list[str]:
    """A block of Markdown or prose that may hold a pretty-printed JSON value over several lines (a
    summary's "State:" followed by an indented object): each value that parses is read as data, under the
    label that introduced it, and the rest as Markdown."""
    if not any(line.rstrip().endswith(("{", "[")) for line in lines):
        return _scoped(lines)
    out: list[str] = []
    prose_from = i = 0
    while i < len(lines):
        opened = _OPENS_JSON.match(lines[i].strip())
        end = _json_end(lines, i) if opened else None
        if end is None:
            i += 1
            continue
        body = opened.group("open") + "\n" + "\n".join(lines[i + 1:end + 1])
        label = (opened.group("label") or "").strip().rstrip(":").strip()
        if label.startswith('"'):  # a member of an object whose braces the summary left out
            value, label = _as_json("{" + label + ": " + body.rstrip().rstrip(",") + "}"), ""
        else:
            value = _as_json(body)
        if value is None:
            i += 1
            continue
        out.extend(_scoped(lines[prose_from:i]))
        out.extend(_flatten(value, [label] if label else []))
        i = prose_from = end + 1
    out.extend(_scoped(lines[prose_from:]))
    return out


_JSON_LINES = 400  # how far a value opened on one line is followed for its close


def _json_end(lines: list[str], start: int) -> int | None:
    """The line that closes the value opened at the end of ``lines[start]`` (brackets counted outside
    strings), or None."""
    depth = 0
    for j in range(start, min(len(lines), start + _JSON_LINES)):
        in_string = escaped = False
        line = lines[j] if j > start else lines[j].strip()[-1]
        for ch in line:
            if in_string:
                escaped, in_string = (False, in_string) if escaped else (ch == "\\", ch != '"')
            elif ch == '"':
                in_string = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return j
    return None


def _as_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def _scalar(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _key(key: Any) -> str:
    """A JSON key as the reader sees it: "ruledOut" also reads "ruled out" (snake_case reads as words later)."""
    key = str(key)
    if _CAMEL.search(key) and not any(ch.isdigit() for ch in key):
        return f"{key} ({_CAMEL.sub(' ', key).lower()})"
    return key


def _inline(value: Any) -> str:
    """An object in a list as one line of ``key: value`` pairs (nested objects inline too)."""
    if isinstance(value, dict):
        return ", ".join(f"{_key(k)}: {_inline(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(_inline(v) for v in value) or "none"
    return _scalar(value)


def _flatten(value: Any, path: list[str]) -> list[str]:
    """JSON as lines: ``a: b: leaf`` for nested keys; a list of objects gives one line per object."""
    prefix = ": ".join(path)
    if isinstance(value, dict) and _names_its_subject(value):
        return [_join(prefix, _inline(value))]  # {"field": "x", "must_be": 0}: one statement about x
    if isinstance(value, dict):
        out = []
        for key, item in value.items():
            out.extend(_flatten(item, [*path, _key(key)]))
        return out
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, dict):
                out.append(_join(prefix, _inline(item)))
            elif isinstance(item, list):
                out.extend(_flatten(item, path))
            else:
                out.append(_join(prefix, _scalar(item)))
        return out or ([f"{prefix}: none"] if prefix else [])
    return [_join(prefix, _scalar(value))]


# Keys that name what an object is about: an object holding one (with a plain value) and only plain
# values is one statement about that subject, read on one line like an object in a list.
_SUBJECT_KEYS = frozenset({"field", "name", "key", "setting", "parameter", "param", "id", "call_id", "tool", "path",
                           "target", "code", "flag"})


def _names_its_subject(value: dict) -> bool:
    return (any(str(k).lower() in _SUBJECT_KEYS and not isinstance(v, dict | list) for k, v in value.items())
            and all(not isinstance(v, dict | list) for v in value.values()))


def _join(prefix: str, text: str) -> str:
    return f"{prefix}: {text}" if prefix else text


# A line whose text opens with none of these (nor a digit), holds no bold label and does not end with
# ':' is prose: no heading, table row, list item or key. Most lines of a long context are. One that opens
# with a list marker or a digit that does not make it a list item ("1\tuse std", "-rw-r--r--") is too.
_MAY_OPEN_STRUCTURE = frozenset("#|-*+\u2022")
_OPENS_A_HEADING_OR_ROW = frozenset("#|")


def _scoped(lines: list[str]) -> list[str]:
    """Lines under Markdown headings, bold labels, ``key:`` lines and table headers, prefixed by them."""
    out: list[str] = []
    headings: list[tuple[int, str]] = []  # (level, text): Markdown levels 1..6, a bold label 7
    keys: list[tuple[int, str]] = []  # (indent, text): "key:" lines governing what is indented under them
    columns: list[str] | None = None
    item_indent = None  # the indent of the last list item's text, so its continuation lines join it
    under = ""  # the headings' prefix ("A: B: "), kept while they stand: most lines are plain prose
    # Markup never spans lines, so one substitution over the block reads as one per line would.
    stripped = strip_markup("\n".join(lines)).split("\n")
    for raw, line in zip(lines, stripped):
        line = line.rstrip()
        if not line:
            columns = None
            continue
        body = line.lstrip()
        first = body[0]
        if line[-1] != ":" and "**" not in raw and (
                (first not in _MAY_OPEN_STRUCTURE and not first.isdecimal())
                or (first not in _OPENS_A_HEADING_OR_ROW and not _BULLET.match(line))):
            # Prose: what the general case below does with it, without its patterns.
            indent = len(line) - len(body)
            if item_indent is not None and indent >= item_indent and out:
                out[-1] += ", " + body
                continue
            item_indent = None
            keys = [k for k in keys if k[0] < indent] if keys else keys
            out.append(under + "".join(f"{t}: " for _, t in keys) + body)
            continue
        heading = _HEADING.match(line) if "#" in line[:4] else None
        bold = _BOLD_LINE.match(raw) if "**" in raw else None
        if heading or bold:
            level = len(heading.group(1)) if heading else 7
            text = (heading.group(2) if heading else strip_markup(bold.group(1))).strip().rstrip(":").strip()
            headings = [h for h in headings if h[0] < level] + [(level, text)]
            under = "".join(f"{t}: " for _, t in headings)
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
            out[-1] += ", " + line.strip()  # "- code: E1" / "  status: open": one item, one line
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
    # A heading or label with nothing under it still says something ("## No open errors").
    return out or [t for _, t in headings]
