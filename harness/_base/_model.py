"""The transcript model: turns, the ground-truth ledger of facts, and liveness.

Everything here is frozen. The ledger is written by whoever builds the
transcript (our strategies, or a team's own fixtures) at the moment a fact is
placed; nothing in this package ever parses it back out of prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from harness._base._errors import InvalidArgument

__all__ = [
    "SCHEMA_VERSION",
    "Role",
    "Part",
    "PartKind",
    "ATTACHMENTS",
    "FactKind",
    "Polarity",
    "Status",
    "ToolCall",
    "Turn",
    "Fate",
    "Fact",
    "Effect",
    "Consumer",
    "Tightening",
    "Transcript",
    "live_facts",
    "round_budget",
    "mid_results",
    "server_calls",
    "normalise_kind",
]

SCHEMA_VERSION = 1


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class FactKind(StrEnum):
    """The built-in kinds of what a later turn will be held to.

    A team may define more (``harness.define_kind``); a fact of such a kind
    carries its name as a plain string. See ``harness.kind_def`` for what each
    kind is, and ``Fact.details`` for per-kind keys.
    """

    COMMITMENT = "commitment"
    PROHIBITION = "prohibition"
    LITERAL_BINDING = "literal_binding"
    THRESHOLD = "threshold"
    IN_FLIGHT_CALL = "in_flight_call"
    UNRESOLVED_ERROR = "unresolved_error"
    NEGATIVE_FACT = "negative_fact"
    ARTIFACT_REFERENCE = "artifact_reference"
    GATING_FIELD = "gating_field"
    RETRACTION = "retraction"
    SUPERSESSION = "supersession"


class Polarity(StrEnum):
    REQUIRE = "require"
    FORBID = "forbid"


class Status(StrEnum):
    """A fact's fate. Only OPEN facts stay live forever; the rest end at a turn."""

    OPEN = "open"
    FULFILLED = "fulfilled"
    RESOLVED = "resolved"
    RETRACTED = "retracted"
    SUPERSEDED = "superseded"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call an assistant turn makes. ``arguments`` is JSON text, kept byte-exact."""

    id: str
    name: str
    arguments: str = "{}"

    def __reduce__(self):  # pickled as its fields: a worker process is sent thousands of them per request
        return ToolCall, (self.id, self.name, self.arguments)


class PartKind(StrEnum):
    """Provider content of a turn that no oracle reads as text and that must go back byte-exact."""

    REASONING = "reasoning"  # Anthropic thinking (text and signature) or redacted thinking; an OpenAI reasoning item
    COMPACTION = "compaction"  # an OpenAI compaction item: opaque, standing for the context the server compacted
    IMAGE = "image"  # an image a user turn or a tool result attaches
    DOCUMENT = "document"  # a document (a PDF) a user turn or a tool result attaches
    APPROVAL_REQUEST = "approval_request"  # a tool call waiting for a person's approval (an MCP approval request)
    APPROVAL = "approval"  # the person's answer to an approval request, on the user turn that gives it
    SERVER_TOOL = "server_tool"  # a call the provider runs itself (an MCP connector's), on its call and its result


#: The parts a user turn or a tool result attaches (the others are an assistant turn's, or an approval's).
ATTACHMENTS = frozenset({PartKind.IMAGE, PartKind.DOCUMENT})

#: The roles of the turns that may carry each kind of part.
_PART_ROLES = {PartKind.REASONING: ("assistant",), PartKind.COMPACTION: ("assistant",),
               PartKind.APPROVAL_REQUEST: ("assistant",), PartKind.APPROVAL: ("user",),
               PartKind.IMAGE: ("user", "tool"), PartKind.DOCUMENT: ("user", "tool"),
               PartKind.SERVER_TOOL: ("assistant", "tool")}


@dataclass(frozen=True, slots=True)
class Part:
    """An opaque piece of a turn. For reasoning and compaction (an assistant turn's): ``data`` is the signature or
    encrypted content the provider checks (any edit makes it refuse the request), ``text`` the readable reasoning
    where there is any, ``id`` the provider's item id where it has one. For an attachment (an image or a document
    of a user turn or a tool result): ``data`` is its base64 content, ``text`` its media type and ``id`` the name
    the conversation calls it by. For an approval request (an assistant turn's): ``data`` is the call's JSON
    arguments, ``text`` its tool's name and ``id`` the request's id; for the approval answering it (a user turn's):
    ``data`` is ``approve`` or ``deny``, ``text`` the person's reason and ``id`` the request's id. For a server-side
    call (one the provider runs, whose result comes back in the same response: an MCP connector's), the same part
    is on the assistant turn making the call and on the tool turn holding its result: ``data`` is the MCP server's
    label and ``id`` the call's id. Chat has no place for parts and drops them (``harness._base._dialects``)."""

    kind: PartKind
    data: str
    text: str = ""
    id: str = ""

    def __reduce__(self):
        return Part, (self.kind, self.data, self.text, self.id)


@dataclass(frozen=True, slots=True)
class Turn:
    """One message. A tool turn answers the call named by ``tool_call_id``.

    ``parts`` are opaque provider content (reasoning and compaction on assistant turns, attachments on user and
    tool turns), outside equality and the token count: a turn
    a compactor kept is the same turn whether or not a dialect could carry its parts, and the oracles judge
    the parts apart (``provider-valid``)."""

    role: Role
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    parts: tuple[Part, ...] = field(default=(), compare=False)

    def __reduce__(self):  # pickled as its fields (see ``ToolCall.__reduce__``); unpickling checks it again
        return Turn, (self.role, self.text, self.tool_calls, self.tool_call_id, self.parts)

    def __post_init__(self) -> None:
        if self.tool_calls and self.role is not Role.ASSISTANT:
            raise InvalidArgument(f"only assistant turns make tool calls, not role={self.role.value!r}")
        if (self.tool_call_id is not None) != (self.role is Role.TOOL):
            raise InvalidArgument("a tool turn needs tool_call_id, and only a tool turn may have one")
        for part in self.parts:
            if self.role.value not in _PART_ROLES[part.kind]:
                raise InvalidArgument(f"a turn of role {self.role.value!r} cannot carry a part of kind "
                                      f"{part.kind.value!r}: reasoning, "
                                      "compaction and approval requests are an assistant turn's, an approval a user "
                                      "turn's, images and documents a user turn's or a tool result's")


@dataclass(frozen=True, slots=True)
class Fate:
    """What later happened to a fact: still open, or ended at ``turn`` (by fact ``by``)."""

    status: Status = Status.OPEN
    turn: int | None = None
    by: str | None = None

    def __post_init__(self) -> None:
        if (self.status is Status.OPEN) != (self.turn is None):
            raise InvalidArgument(
                f"fate {self.status.value!r} with turn={self.turn!r}: an open fate has no turn, an ended one needs it"
            )


@dataclass(frozen=True, slots=True)
class Fact:
    """Ground truth about one obligation, recorded when it was written.

    ``literals`` are the tokens that must survive compaction byte-exact.
    ``details`` holds kind-specific keys as sorted (key, value) pairs, e.g.
    ``field``/``operator``/``value`` for a threshold, ``action``/``trigger``
    for a commitment, ``disposition`` for a negative fact, ``target`` for a
    retraction or supersession.
    """

    id: str
    kind: FactKind | str
    literals: tuple[str, ...]
    origin_turn: int
    polarity: Polarity | None = None
    fate: Fate = field(default_factory=Fate)
    details: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", normalise_kind(self.kind, f"fact {self.id!r}"))
        if not self.literals or any(not lit for lit in self.literals):
            raise InvalidArgument(f"fact {self.id!r} needs at least one non-empty literal")
        if self.fate.turn is not None and self.fate.turn < self.origin_turn:
            raise InvalidArgument(
                f"fact {self.id!r} ends at turn {self.fate.turn}, before its origin turn {self.origin_turn}"
            )
        if list(self.details) != sorted(dict(self.details).items()):
            raise InvalidArgument(f"fact {self.id!r}: details must be unique keys in sorted order")

    def detail(self, key: str, default: str | None = None) -> str | None:
        for k, v in self.details:
            if k == key:
                return v
        return default

    def is_live_at(self, boundary: int) -> bool:
        """True if, after the first ``boundary`` turns, this fact binds the agent."""
        if self.origin_turn >= boundary:
            return False
        return self.fate.turn is None or self.fate.turn >= boundary


@dataclass(frozen=True, slots=True)
class Effect:
    """An irreversible action the agent takes by a tool call: a write, a deploy, a sent message.

    Written by the generator with the facts that govern it (gating fields,
    prohibitions): each must be in the operative context at ``turn``, the
    assistant turn making the call ``call_id`` (the ``effect-window`` invariant).
    """

    turn: int
    call_id: str
    action: str
    governed_by: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.call_id or not self.action:
            raise InvalidArgument(f"effect at turn {self.turn}: call_id and action must be non-empty")
        if not self.governed_by:
            raise InvalidArgument(f"effect {self.call_id!r}: governed_by must name at least one fact")


_CLASS = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True, slots=True)
class Consumer:
    """A reader of compacted contexts (a planner, a router) and the invariant classes it relies on.

    ``requires`` names invariant classes by oracle id (``handle-retained``); a
    consumer may only be handed a result the oracles verified them for
    (``consumer-requirements``).
    """

    name: str
    requires: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.name:
            raise InvalidArgument("a consumer needs a name")
        bad = [c for c in self.requires if not isinstance(c, str) or not _CLASS.match(c)]
        if not self.requires or bad:
            raise InvalidArgument(f"consumer {self.name!r}: requires must be oracle ids like 'handle-retained', "
                                  f"got {list(self.requires)!r}")


@dataclass(frozen=True, slots=True)
class Tightening:
    """From compaction ``round`` (0 is the first) on, the budget is ``share`` permille of the session's.

    A re-compaction at a tighter budget digests the summaries before it: the
    framing tier goes one level deeper (``marker-depth``).
    """

    round: int
    share: int

    def __post_init__(self) -> None:
        if isinstance(self.round, bool) or not isinstance(self.round, int) or self.round < 0:
            raise InvalidArgument(f"tightening round={self.round!r}: expected an int >= 0")
        if isinstance(self.share, bool) or not isinstance(self.share, int) or not 1 <= self.share <= 1000:
            raise InvalidArgument(f"tightening share={self.share!r}: expected permille, 1..1000")


_KIND_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_BUILT_IN_KINDS = {k.value: k for k in FactKind}


def normalise_kind(kind: object, owner: str) -> FactKind | str:
    """A built-in kind as its ``FactKind``; a team's kind as its snake_case name.

    Whether a team's kind is defined is checked where facts are loaded and
    judged (``harness.kind_def``), not here: the model has no registry.
    """
    if isinstance(kind, str) and kind in _BUILT_IN_KINDS:
        return _BUILT_IN_KINDS[kind]
    if not isinstance(kind, str) or not _KIND_NAME.match(kind):
        raise InvalidArgument(f"{owner}: kind={kind!r} must be a FactKind or a snake_case kind name")
    return kind


@dataclass(frozen=True, slots=True)
class Transcript:
    """Turns plus the ledger of facts they carry, where compaction fires, and the seed.

    ``compaction_points`` are boundaries: a point ``k`` compacts turns ``0..k-1``.
    The session-level ground truth is optional: ``effects`` (irreversible tool
    calls and the facts governing them), ``consumers`` (who reads the compacted
    context and what it relies on) and ``tightenings`` (rounds from which the
    budget shrinks, so summaries are digested into a deeper tier).
    """

    turns: tuple[Turn, ...]
    facts: tuple[Fact, ...] = ()
    compaction_points: tuple[int, ...] = ()
    seed: int = 0
    schema_version: int = SCHEMA_VERSION
    effects: tuple[Effect, ...] = ()
    consumers: tuple[Consumer, ...] = ()
    tightenings: tuple[Tightening, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.turns)
        ids = [f.id for f in self.facts]
        if len(set(ids)) != len(ids):
            raise InvalidArgument(f"fact ids must be unique, got {ids!r}")
        for fact in self.facts:
            if not 0 <= fact.origin_turn < n:
                raise InvalidArgument(f"fact {fact.id!r} has origin_turn={fact.origin_turn}, outside 0..{n - 1}")
            if fact.fate.turn is not None and fact.fate.turn >= n:
                raise InvalidArgument(f"fact {fact.id!r} ends at turn {fact.fate.turn}, outside 0..{n - 1}")
        points = self.compaction_points
        if list(points) != sorted(set(points)) or any(not 0 < p <= n for p in points):
            raise InvalidArgument(f"compaction_points must be strictly increasing within 1..{n}, got {points!r}")
        known = set(ids)
        for effect in self.effects:
            if not 0 <= effect.turn < n or not any(c.id == effect.call_id for c in self.turns[effect.turn].tool_calls):
                raise InvalidArgument(f"effect {effect.call_id!r}: turn {effect.turn} must be a turn making that call")
            unknown = [f for f in effect.governed_by if f not in known]
            if unknown:
                raise InvalidArgument(f"effect {effect.call_id!r} is governed by unknown fact(s) {unknown}")
        names = [c.name for c in self.consumers]
        if len(set(names)) != len(names):
            raise InvalidArgument(f"consumer names must be unique, got {names!r}")
        rounds = [t.round for t in self.tightenings]
        if rounds != sorted(set(rounds)):
            raise InvalidArgument(f"tightenings must be in strictly increasing round order, got {rounds!r}")

    def fact(self, fact_id: str) -> Fact:
        for f in self.facts:
            if f.id == fact_id:
                return f
        raise KeyError(fact_id)


def round_budget(transcript: Transcript, budget: int, index: int) -> int:
    """The budget of compaction ``index`` (0 is the first): the session's, times the latest tightening's share."""
    share = 1000
    for tightening in transcript.tightenings:
        if tightening.round <= index:
            share = tightening.share
    return max(1, budget * share // 1000)


def live_facts(transcript: Transcript, boundary: int) -> tuple[Fact, ...]:
    """The facts binding the agent once the first ``boundary`` turns have happened.

    A fact is live from the turn after its origin until the turn its fate
    (fulfilled, resolved, retracted, superseded) happens, inclusive of that
    turn's boundary: at ``boundary == fate.turn`` the ending turn is not yet seen.
    """
    if not 0 <= boundary <= len(transcript.turns):
        raise InvalidArgument(f"boundary={boundary} is outside 0..{len(transcript.turns)}")
    return tuple(f for f in transcript.facts if f.is_live_at(boundary))


def server_calls(turn: Turn) -> frozenset[str]:
    """The ids of the calls (or of the result) the provider runs itself, as ``turn``'s parts mark them."""
    return frozenset(p.id for p in turn.parts if p.kind is PartKind.SERVER_TOOL)


def mid_results(turns: Sequence[Turn]) -> frozenset[int]:
    """The boundaries that fall inside one assistant message's block of tool results: some of its calls
    answered before, some after; and the boundary right after a turn of server-side calls, whose results come
    back with them. A runtime compacts between model calls, after a step's results are all
    in, so no provider request ends there (a boundary right after the call message, before any result,
    is a call in flight, and is not one of these)."""
    answered_at: dict[str, int] = {}
    for i, turn in enumerate(turns):
        if turn.role is Role.TOOL and turn.tool_call_id is not None:
            answered_at.setdefault(turn.tool_call_id, i)
    out: set[int] = set()
    pending: list[int] = []  # where the current block's unanswered calls are answered
    for i, turn in enumerate(turns):
        if turn.tool_calls:
            pending = sorted(answered_at[c.id] for c in turn.tool_calls if c.id in answered_at)
            if pending and {c.id for c in turn.tool_calls} <= server_calls(turn):
                out.add(i + 1)  # a server-side call's result comes in the response that made it: never in flight
            continue
        if turn.role is not Role.TOOL:
            pending = []
            continue
        if any(at > i for at in pending):
            out.add(i + 1)
    return frozenset(out)
