"""Background logs: a team's own agent sessions, used as the filler between our obligations.

Our generated filler imitates a coding agent's work; a team's own logs
(``--background PATH``) make the transcripts exactly as hard as their real
ones: their tools, their output, their numbers and identifiers crowd the
context. The obligations are still ours, planted between the background units,
so the ledger stays exact: nothing is ever read back out of the team's prose.
``Background.occurs`` lets the generator refuse a literal the background
already contains, which would otherwise count as "kept" by accident.

A file is read as the tool that wrote it writes it (``harness._base._logs``:
Claude Code and Codex JSONL, Agents SDK items, Anthropic bodies, LangChain dumps,
chat messages), recognised by its content. What loading keeps, and why:

* ``system`` (and ``developer``) messages are dropped: a session's system
  prompt is configuration, not conversation.
* A unit is one message, or an assistant turn with tool calls together with
  the tool results that answer it (they follow it directly, as the chat APIs
  require); a unit is never split.
* A call whose result never came (the session ended or was interrupted) is
  removed from its turn: left in, it would be an in-flight call that the ledger
  does not record. A turn left with no calls stays as a plain assistant turn if
  it has text, and is dropped if it has none.
* Everything kept is byte-exact, except call ids: ``units`` renumbers them
  ``bg-00001``, ``bg-00002``, ... so they are unique in the output and can never
  look like a fact's call id (``call_`` and 12 hex digits).
* What a turn has no place for (thinking blocks, images) is counted in ``left_out``.
"""

from __future__ import annotations

import hashlib
import random
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness._base._errors import InvalidArgument, SchemaError
from harness._base._files import DEFAULT_MAX_FILE_MB
from harness._base._logs import SessionLog, read_log
from harness._base._model import Role, ToolCall, Turn
from harness.strategies._internal._filler import filler_units, unit_tokens

__all__ = ["Background", "load_background"]

Unit = tuple[Turn, ...]

_SUFFIXES = (".json", ".jsonl")


@dataclass(frozen=True)
class Background:
    """The loaded sessions, each a tuple of units, plus where they came from.

    ``fingerprint`` is a sha256 over the files' contents in load order: a run
    that records it can tell whether it is reproduced with the same background.
    ``formats`` says what each file was read as (``harness._base._logs.LOG_FORMATS``), ``left_out`` what the
    sessions held that no turn carries (thinking blocks, images), counted by kind.
    """

    sessions: tuple[tuple[Unit, ...], ...]
    sources: tuple[str, ...]
    fingerprint: str
    formats: tuple[str, ...] = ()
    left_out: tuple[tuple[str, int], ...] = ()
    _haystack: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.sessions or any(not session or any(not unit for unit in session) for session in self.sessions):
            raise InvalidArgument("a background needs at least one session, and no empty session or unit")
        # One casefolded text, built once: occurs() is asked about every literal of every example.
        parts = [part for session in self.sessions for unit in session for turn in unit
                 for part in (turn.text, *(s for call in turn.tool_calls for s in (call.name, call.arguments)))]
        object.__setattr__(self, "_haystack", "\0".join(parts).casefold())

    def summary(self) -> dict[str, object]:
        """What was read, for a report: the files and sessions, each format's file count, what was left out."""
        return {"files": len(self.sources), "sessions": len(self.sessions),
                "formats": dict(sorted(Counter(self.formats).items())), "left_out": dict(self.left_out),
                "fingerprint": self.fingerprint}

    def occurs(self, literal: str) -> bool:
        """Whether ``literal`` appears in the background's text (content, call names and arguments), any case."""
        return literal.casefold() in self._haystack

    def units(self, seed: int, count: int, avoid: Iterable[str] = (), *, tokens: int = 0,
              output_cap: int = 0) -> list[Unit]:
        """Exactly ``count`` turns of background (or, with ``tokens``, units until they hold that many tokens,
        at most ``count`` turns), in real conversation order, as units never split.

        The seed picks the session order and where in the first session to start;
        the walk goes on through the following sessions and wraps around. When
        the room left is smaller than the next unit, later units that fit are
        taken instead; when none fits, the rest is synthetic filler (its tool results
        under ``output_cap``, as ``filler_units`` draws them).
        """
        for name, value in (("count", count), ("tokens", tokens)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidArgument(f"{name}={value!r}: expected a number >= 0")
        rng = random.Random(seed)
        order = list(range(len(self.sessions)))
        rng.shuffle(order)
        ring = [unit for i in order for unit in self.sessions[i]]
        position = rng.randrange(len(self.sessions[order[0]]))
        smallest = min(len(unit) for unit in ring)
        out: list[Unit] = []
        room, held = count, 0
        next_id = 0
        while room >= smallest and (not tokens or held < tokens):
            while len(ring[position]) > room:  # ends: some unit of length <= room exists
                position = (position + 1) % len(ring)
            unit, next_id = _renumbered(ring[position], next_id)
            out.append(unit)
            room -= len(unit)
            if tokens:
                held += unit_tokens(unit)
            position = (position + 1) % len(ring)
        if room and (not tokens or held < tokens):
            out += filler_units(seed, room, avoid=avoid, output_cap=output_cap, tokens=max(0, tokens - held))
        return out


def load_background(path: str | Path, *, max_mb: float = DEFAULT_MAX_FILE_MB) -> Background:
    """Sessions from a log file, or from every ``*.json`` and ``*.jsonl`` file under a folder.

    A file is read in whatever format it is (``harness._base._logs``): a Claude Code session, a Codex
    rollout, Agents SDK items, an Anthropic body, a LangChain dump, chat messages (a ``.jsonl`` of those
    holds a session per line). A folder is read with its sub-folders (Codex keeps its rollouts by date),
    in path order, hidden files and folders skipped. Any problem is a ``SchemaError`` (or, for the path
    itself, ``InvalidArgument``) naming the file, line and field.
    """
    files = _files(Path(path))
    sessions: list[tuple[Unit, ...]] = []
    formats: list[str] = []
    left_out: Counter = Counter()
    digest = hashlib.sha256()
    for file in files:
        raw = _read_bytes(file, max_mb)
        digest.update(hashlib.sha256(raw).digest())  # hash of hashes: file boundaries count
        logs = read_log(raw, source=str(file))
        formats.append(logs[0].format)
        for log in logs:
            sessions.append(_units(log))
            left_out.update(dict(log.left_out))
    return Background(tuple(sessions), tuple(str(f) for f in files), digest.hexdigest(), tuple(formats),
                      tuple(sorted(left_out.items())))


def _files(path: Path) -> list[Path]:
    if not path.exists():
        raise InvalidArgument(f"background {str(path)!r}: no such file or directory")
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES and not p.is_dir()
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        if not files:
            raise InvalidArgument(f"background {str(path)!r}: the directory has no *.json or *.jsonl file")
        return files
    if path.suffix not in _SUFFIXES:
        raise InvalidArgument(f"background {str(path)!r}: expected a .json or .jsonl file, or a directory of them")
    return [path]


def _read_bytes(path: Path, max_mb: float) -> bytes:
    source = str(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise SchemaError("<root>", "a regular file", "something else (a directory, FIFO or device)",
                              source=source)
        if info.st_size > max_mb * 1024 * 1024:
            raise SchemaError("<root>", f"a file of at most {max_mb:g} MB", f"{info.st_size / 1024 / 1024:.1f} MB",
                              source=source)
        return path.read_bytes()
    except OSError as exc:
        raise SchemaError("<root>", "a readable file", f"{type(exc).__name__} ({exc.strerror or exc})",
                          source=source) from None


def _units(log: SessionLog) -> tuple[Unit, ...]:
    """One session's turns as units (see the module docstring for what is kept)."""
    for logged in log.turns:  # text the harness cannot write to a cache, a report or a worker
        turn = logged.turn
        for name, value in (("content", turn.text), *((f"tool_calls[{n}]", c.name + c.arguments + c.id)
                                                       for n, c in enumerate(turn.tool_calls))):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise SchemaError(f"{logged.field}.{name}", "valid Unicode text",
                                  f"a lone surrogate at character {exc.start}", source=logged.source) from None
    units: list[Unit] = []
    group: list[Turn] = []  # the open call turn and its results so far

    def close() -> None:
        if group:
            unit = _answered(group)
            if unit:
                units.append(unit)
            group.clear()

    for logged in log.turns:
        # A team's attachments and reasoning are not filler: generated sources carry their own (``_parts``).
        turn = replace(logged.turn, parts=()) if logged.turn.parts else logged.turn
        if turn.role is Role.USER and not turn.text:  # a user message that was only an image
            continue
        if turn.role is Role.TOOL:
            pending = [c.id for c in group[0].tool_calls] if group else []
            for answered in group[1:]:
                pending.remove(answered.tool_call_id)
            if turn.tool_call_id not in pending:
                raise SchemaError(logged.tie,
                                  "the id of an unanswered call of the assistant turn just before it",
                                  turn.tool_call_id, source=logged.source)
            group.append(turn)
            continue
        close()
        if turn.role is Role.SYSTEM:
            continue
        if turn.tool_calls:
            ids = [c.id for c in turn.tool_calls]
            if len(set(ids)) != len(ids):
                raise SchemaError(logged.tie, "call ids unique within the message",
                                  ids, source=logged.source)
            group.append(turn)
        else:
            units.append((turn,))
    close()
    if not units:
        raise SchemaError("<root>", "at least one user, assistant or answered tool message (system prompts "
                          "and calls with no result are dropped)", "none", source=log.source)
    return tuple(units)


def _answered(group: list[Turn]) -> Unit:
    """A call turn and its results, without the calls no result answers (empty if nothing is left)."""
    call_turn, results = group[0], group[1:]
    answered = {r.tool_call_id for r in results}
    calls = tuple(c for c in call_turn.tool_calls if c.id in answered)
    if calls == call_turn.tool_calls:
        return tuple(group)
    if calls:
        return (replace(call_turn, tool_calls=calls), *results)
    return (replace(call_turn, tool_calls=()),) if call_turn.text else ()


def _renumbered(unit: Unit, last: int) -> tuple[Unit, int]:
    """``unit`` with its call ids rewritten to ``bg-NNNNN`` after ``last``, and the new last number."""
    if not unit[0].tool_calls:
        return unit, last
    names = {}
    calls = []
    for call in unit[0].tool_calls:
        last += 1
        names[call.id] = f"bg-{last:05d}"
        calls.append(ToolCall(names[call.id], call.name, call.arguments))
    head = replace(unit[0], tool_calls=tuple(calls))
    return (head, *(replace(r, tool_call_id=names[r.tool_call_id]) for r in unit[1:])), last
