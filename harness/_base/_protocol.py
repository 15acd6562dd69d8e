"""What passes between the harness and a summarizer under test.

Two protocols (DESIGN section 5): a *messages* summarizer takes chat messages
and a budget and returns messages or a string; a *rich* one takes a
``CompactionRequest`` and returns a ``CompactionResult``. Both end up as a
``CompactionResult``.

Each protocol is versioned (``PROTOCOL_VERSIONS``; the rich one's is ``RICH_PROTOCOL_VERSION``) and a request
says the version it is written in. What each version added and changed for a compactor's author is
``PROTOCOL_CHANGES``, written once here: docs/reference/protocol-changes.md says it at length, and a run warns a
compactor that declares an older version (``compaction_protocol_version``) of what changed since.

A messages summarizer is given the turns in the request's *dialect* (``harness._base._dialects``): chat
messages by default, or an Anthropic Messages body, or OpenAI Responses items, and answers in the same
shape. A rich summarizer reads the turns themselves; the dialect tells it which provider its context goes
to, and ``provider-valid`` judges the result by that provider's rules.

What a summarizer returns is read into a result by ``harness._base._result_codec``; what its answer may depend
on, as a cache key, is ``harness._base._request_key``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness._base._dialects import DEFAULT_DIALECT, DIALECTS, render
from harness._base._errors import InvalidArgument, SpecError
from harness._base._kinds import kind_def
from harness._base._messages import to_messages
from harness._base._model import Consumer, Fact, Turn
from harness._base._versions import (MESSAGES_PROTOCOL_VERSION, PROTOCOL_CHANGES, PROTOCOL_VERSIONS,
                                     RICH_PROTOCOL_VERSION, ProtocolChange, changes_since, declared_version,
                                     known_versions, version_warning)

__all__ = [
    "RICH_PROTOCOL_VERSION",
    "MESSAGES_PROTOCOL_VERSION",
    "PROTOCOL_VERSIONS",
    "ProtocolChange",
    "PROTOCOL_CHANGES",
    "changes_since",
    "declared_version",
    "version_warning",
    "CompactionRequest",
    "CompactionResult",
    "LedgerEntry",
    "RecoveryMarker",
    "JournalEntry",
    "payload_sha256",
    "PROTOCOLS",
    "resolve_protocol",
]

PROTOCOLS = ("messages", "rich")

@dataclass(frozen=True, slots=True)
class CompactionRequest:
    """One compaction: the turns to compact, the token budget, and optional obligation tags.

    ``tags`` are the facts a runtime would have tagged at write time (the live
    ledger at this point). Only rich summarizers see them; a plain messages
    summarizer never does. ``previous_output`` says how many leading turns are
    the previous compaction's own output (0 on a session's first compaction), so
    a compactor can tell its earlier summary from the source turns that followed.
    """

    turns: tuple[Turn, ...]
    budget: int
    tags: tuple[Fact, ...] = ()
    tier: int = 1  # the depth of the digest this compaction writes: 1 a summary of turns, 2 a digest of those...
    consumers: tuple[Consumer, ...] = ()  # who reads the result, and the invariant classes each relies on
    previous_output: int = 0  # turns[:previous_output] are what the previous compaction returned
    dialect: str = DEFAULT_DIALECT  # the provider shape a messages summarizer is given the turns in (``--dialect``)
    protocol_version: int = RICH_PROTOCOL_VERSION  # the rich protocol version the request is written in

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise InvalidArgument(f"dialect={self.dialect!r}: expected one of {', '.join(DIALECTS)}")
        version = self.protocol_version
        if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= RICH_PROTOCOL_VERSION:
            raise InvalidArgument(f"protocol_version={version!r}: expected a rich protocol version this harness "
                                  f"knows, {known_versions('rich')}")

    def messages(self) -> list[dict[str, Any]]:
        return to_messages(self.turns)

    def payload(self) -> Any:
        """The turns as the request's dialect writes them: what a messages summarizer is given."""
        return render(self.turns, self.dialect)


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One obligation carried verbatim in a structured side channel.

    It counts as keeping a fact only if ``kind`` and every literal match the
    source byte-exact (and polarity / operator / disposition where the fact has one).
    """

    kind: str
    literals: tuple[str, ...]
    polarity: str | None = None
    status: str = "open"
    details: tuple[tuple[str, str], ...] = ()
    fact_id: str | None = None

    @classmethod
    def verbatim(cls, fact: Fact) -> LedgerEntry:
        """``fact`` copied as a correct ledger keeps it: its literals, polarity and the details its kind names
        (``KindDef.ledger_details``), open."""
        keys = kind_def(fact.kind).ledger_details
        return cls(kind=str(fact.kind), literals=fact.literals, polarity=fact.polarity.value if fact.polarity else None,
                   status="open", details=tuple((k, v) for k, v in fact.details if k in keys), fact_id=fact.id)

    def detail(self, key: str) -> str | None:
        return dict(self.details).get(key)

    def render(self) -> str:
        """The entry as the agent would see it in its context."""
        extra = "".join(f" {k}={v}" for k, v in self.details)
        polarity = f" {self.polarity}" if self.polarity else ""
        return f"[{self.kind}{polarity} {self.status}] " + " | ".join(self.literals) + extra


@dataclass(frozen=True, slots=True)
class RecoveryMarker:
    """A pointer plus a promise (reference 001): resume from summary node ``node`` at tier ``tier``.

    ``resolved_calls`` are the tool-call ids the marker declares resolved; a
    marker is valid only at the tier of the digest framing the session.
    """

    tier: int
    node: str
    resolved_calls: tuple[str, ...] = ()


def payload_sha256(turns: Sequence[Turn]) -> str:
    """The hash a journal entry records of the turns it removed: SHA-256 of their messages as compact,
    key-sorted UTF-8 JSON."""
    text = json.dumps(to_messages(tuple(turns)), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One reversible edit of the context (reference 002): messages ``start:end`` of what the
    compaction was given were replaced by ``inserted``.

    ``removed`` is the payload rollback restores; ``removed_sha256`` optionally
    its hash (``payload_sha256``). A journal is the entries in the order they
    were applied; rolling back undoes them in reverse.
    """

    start: int
    end: int
    inserted: tuple[Turn, ...]
    removed: tuple[Turn, ...] | None
    removed_sha256: str | None = None

    @classmethod
    def replacing(cls, turns: Sequence[Turn], start: int, end: int, inserted: Sequence[Turn]) -> JournalEntry:
        """The entry for replacing ``turns[start:end]`` with ``inserted``, payload and hash recorded."""
        removed = tuple(turns[start:end])
        return cls(start, end, tuple(inserted), removed, payload_sha256(removed))


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The post-compaction context: messages (summary and any kept turns), plus side channels.

    ``self_report`` lists fact ids (or literals) the compactor claims it kept;
    ``verified`` the invariant classes (oracle ids) it claims to have verified.
    Oracles check both against the source, never trust them. ``marker`` and
    ``journal`` are the recovery marker and edit journal of rich protocol 2.
    """

    messages: tuple[Turn, ...]
    ledger: tuple[LedgerEntry, ...] | None = None
    self_report: tuple[str, ...] | None = None
    marker: RecoveryMarker | None = None
    journal: tuple[JournalEntry, ...] | None = None
    verified: tuple[str, ...] | None = None

    @property
    def summary_text(self) -> str:
        return "\n".join(t.text for t in self.messages)


def resolve_protocol(fn: Callable[..., Any], explicit: str | None = None, *, recorded: str | None = None,
                     option: str = "--protocol", spec: str | None = None) -> str:
    """The protocol to call ``fn`` with: the one given explicitly, else the function's own
    ``compaction_protocol`` attribute, else the one recorded with it (a corpus entry saved from
    this same summarizer), else ``messages``. A function that cannot be called the way that protocol
    calls it is refused now, before any example, naming the protocol and how to choose the other, and so is
    one declaring a version of that protocol this harness does not know (``declared_version``)."""
    chosen, source = "messages", "the default"
    for value, where in ((explicit, option), (getattr(fn, "compaction_protocol", None), "compaction_protocol"),
                         (recorded, "the corpus entry's protocol")):
        if value is None:
            continue
        if value not in PROTOCOLS:
            raise SpecError(f"{where} {value!r}: expected one of {', '.join(PROTOCOLS)}")
        chosen, source = value, where
        break
    _check_signature(fn, chosen, source, option, spec)
    declared_version(fn, chosen, spec=spec)
    return chosen


#: How each protocol calls the summarizer, with stand-ins for the arguments.
_CALLED_AS = {"messages": ("fn(messages, budget)", ([], 0)), "rich": ("fn(request)", (None,))}


def _check_signature(fn: Callable[..., Any], protocol: str, source: str, option: str, spec: str | None) -> None:
    """Raise ``SpecError`` when ``fn``'s parameters cannot take the arguments ``protocol`` passes."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or C callable without a signature: the first call will tell
        return
    shown, arguments = _CALLED_AS[protocol]
    if _binds(signature, arguments):
        return
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    other = next(p for p in PROTOCOLS if p != protocol)
    hint = ""
    if _binds(signature, _CALLED_AS[other][1]):
        hint = (f"; it fits the {other!r} protocol, {_CALLED_AS[other][0]}: pass {option} {other}, or set "
                f"{name}.compaction_protocol = {other!r}")
    raise SpecError(f"{f'summarizer {spec!r}: ' if spec else ''}{name}{signature} cannot be called as {shown}, "
                    f"which the {protocol!r} protocol does (chosen by {source}){hint}")


def _binds(signature: inspect.Signature, arguments: tuple) -> bool:
    try:
        signature.bind(*arguments)
    except TypeError:
        return False
    return True
