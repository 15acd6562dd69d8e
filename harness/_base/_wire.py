"""The JSON a summarizer outside Python is sent and answers with (``http://`` and ``cmd:`` specs).

Version 1 of the request::

    {"schema": "compaction-harness/request", "version": 1, "protocol": "messages" | "rich",
     "protocol_version": <that protocol's version>, "budget": <tokens>, "messages": [<chat messages>],
     "tags": [<facts>]}

``protocol_version`` is the version of the protocol the request is written in (``PROTOCOL_VERSIONS``: the
rich request's own, 1 for the messages shape); ``version`` is this envelope's. A request without it is read
as the current version, and one newer than the reader knows is refused, as a compactor declaring one is.

``tags`` (the live obligations, as ``fact_to_dict`` writes them) is present
only for the rich protocol, and so are rich protocol 2's optional fields:
``tier`` (the depth of the digest this compaction writes, when not 1),
``consumers`` (``[{"name", "requires": [oracle ids]}]``, when there are any) and
``previous_output`` (how many leading messages are the previous compaction's
own output, when any are);
a server that does not use them ignores them.

With a dialect other than chat (``--dialect``), the request says ``"dialect"`` and, for the messages
protocol, carries the turns in that shape: ``anthropic`` as the Messages API body's ``system`` (when
there is one) and ``messages``; ``openai-responses`` as ``input``, a list of Responses items. The
answer then has the same keys (``system`` optional). The answer is a result as
``result_to_dict`` writes it (``messages`` a list of chat messages or one
string; ``ledger``, ``self_report``, ``marker``, ``journal`` and ``verified``
optional), may add ``usage`` (``prompt_tokens``, ``completion_tokens``), or is
``{"error": "..."}`` when the summarizer failed. The version only ever grows;
a server should reject a version it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness._base._codec import fact_from_dict, fact_to_dict
from harness._base._errors import InfraError, MalformedResult, SchemaError
from harness._base._model import Consumer
from harness._base._dialects import DEFAULT_DIALECT, DIALECTS, read
from harness._base._messages import turn_to_record
from harness._base._protocol import PROTOCOL_VERSIONS, PROTOCOLS, RICH_PROTOCOL_VERSION, CompactionRequest
from harness._base._request_key import consumers_to_wire
from harness._base._result_codec import result_from_return
from harness._base._schema import Reader

__all__ = ["WIRE_SCHEMA", "WIRE_VERSION", "Usage", "request_to_wire", "request_from_wire", "answer_from_wire",
           "usage_count"]

WIRE_SCHEMA = "compaction-harness/request"
WIRE_VERSION = 1


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one call spent, when the summarizer says (a model's prompt and completion tokens)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


def request_to_wire(request: CompactionRequest, protocol: str) -> dict[str, Any]:
    """The request as JSON-ready data; a messages summarizer never sees the tags."""
    version = request.protocol_version if protocol == "rich" else PROTOCOL_VERSIONS[protocol]
    data: dict[str, Any] = {"schema": WIRE_SCHEMA, "version": WIRE_VERSION, "protocol": protocol,
                            "protocol_version": version, "budget": request.budget}
    if request.dialect != DEFAULT_DIALECT:
        data["dialect"] = request.dialect
    if protocol == "messages" and request.dialect != DEFAULT_DIALECT:
        payload = request.payload()
        data.update(payload if isinstance(payload, dict) else {"input": payload})
    elif protocol == "rich":  # a rich summarizer gets each turn's opaque parts too (under "parts")
        data["messages"] = [turn_to_record(t) for t in request.turns]
    else:
        data["messages"] = request.messages()
    if protocol == "rich":
        data["tags"] = [fact_to_dict(f) for f in request.tags]
        if request.tier != 1:
            data["tier"] = request.tier
        if request.consumers:
            data["consumers"] = consumers_to_wire(request.consumers)
        if request.previous_output:
            data["previous_output"] = request.previous_output
    return data


def request_from_wire(data: Any, *, source: str = "<request>") -> tuple[CompactionRequest, str]:
    """A request as a server reads it (for summarizers written in Python behind a server, and stubs):
    the ``CompactionRequest`` and its protocol; ``SchemaError`` naming the bad field otherwise."""
    r = Reader(data, source=source)
    if r.str("schema") != WIRE_SCHEMA:
        r.fail("schema", repr(WIRE_SCHEMA), data.get("schema"))
    if r.int("version") != WIRE_VERSION:
        r.fail("version", f"{WIRE_VERSION}", data.get("version"))
    protocol = r.str("protocol")
    if protocol not in PROTOCOLS:
        r.fail("protocol", " or ".join(repr(p) for p in PROTOCOLS), protocol)
    known = PROTOCOL_VERSIONS[protocol]
    version = r.int("protocol_version", default=known, minimum=1)
    if version > known:
        r.fail("protocol_version", f"a {protocol} protocol version this reader knows (at most {known})", version)
    # A messages request's version is its wire shape's; the CompactionRequest it becomes is the current rich one.
    dialect = r.str("dialect", default=DEFAULT_DIALECT)
    if dialect not in DIALECTS:
        r.fail("dialect", " or ".join(repr(d) for d in DIALECTS), dialect)
    try:
        if protocol == "messages" and dialect != DEFAULT_DIALECT:
            turns = read(_payload_of(data, dialect), dialect)
        else:
            turns = result_from_return(r.list("messages")).messages
    except MalformedResult as exc:
        raise SchemaError.from_malformed(exc, source=source) from None
    tags = tuple(fact_from_dict(f, source=source) for f in r.list("tags", default=[]))
    consumers = tuple(c.wrap(Consumer, c.str("name", nonempty=True), c.str_list("requires", nonempty_items=True))
                      for c in r.children("consumers", default=[]))
    names = [c.name for c in consumers]
    if len(set(names)) != len(names):
        r.fail("consumers", "consumers with distinct names", names)
    previous = r.int("previous_output", default=0, minimum=0)
    if previous > len(turns):
        r.fail("previous_output", f"at most the number of messages ({len(turns)})", previous)
    return CompactionRequest(turns, r.int("budget", minimum=1), tags, r.int("tier", default=1, minimum=1),
                             consumers, previous, dialect, version if protocol == "rich" else RICH_PROTOCOL_VERSION), protocol


def _payload_of(data: dict[str, Any], dialect: str) -> Any:
    """The dialect's part of a request or an answer: an Anthropic body's keys, or the Responses ``input``."""
    if dialect == "anthropic":
        return {k: data[k] for k in ("system", "messages") if k in data}
    return data.get("input")


def answer_from_wire(data: Any, dialect: str = DEFAULT_DIALECT) -> tuple[Any, Usage | None]:
    """An answer's result part (still to be normalised like any return value) and its usage.

    ``{"error": ...}`` becomes an ``exception`` infra error; anything not an
    object with ``messages`` (``input`` in the Responses dialect) is ``malformed``. In a dialect
    other than chat, the result part is its turns, read from that dialect (``MalformedResult`` if not).
    """
    key = "input" if dialect == "openai-responses" else "messages"
    if isinstance(data, dict) and "error" in data and key not in data:
        raise InfraError("exception", f"the summarizer answered with an error: {str(data['error'])[:500]}")
    if not isinstance(data, dict) or key not in data:
        raise InfraError("malformed", f"expected a JSON object with {key!r}, got {_kind(data, key)}")
    usage = None
    raw = data.get("usage")
    if isinstance(raw, dict):
        usage = Usage(usage_count(raw.get("prompt_tokens")), usage_count(raw.get("completion_tokens")))
    if dialect != DEFAULT_DIALECT:
        try:
            turns = read(_payload_of(data, dialect), dialect)
        except MalformedResult as exc:
            raise InfraError("malformed", f"the {dialect} answer: {exc}") from None
        return {"messages": [turn_to_record(t) for t in turns]}, usage
    result = {k: data[k] for k in ("messages", "ledger", "self_report", "marker", "journal", "verified") if k in data}
    return result, usage


def usage_count(value: Any) -> int:
    """A token count as an answer states it: a whole number >= 0, anything else 0 (never negative: it
    would lower a --max-tokens total)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _kind(data: Any, key: str = "messages") -> str:
    return f"an object without {key!r}" if isinstance(data, dict) else type(data).__name__
