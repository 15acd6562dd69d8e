"""Exact JSON round trip for transcripts, with errors that name the bad field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness._base._files import DEFAULT_MAX_FILE_MB, parse_json, read_json_file
from harness._base._kinds import read_kind
from harness._base._messages import part_record
from harness._base._model import (
    SCHEMA_VERSION,
    Consumer,
    Effect,
    Fact,
    Fate,
    Part,
    PartKind,
    Polarity,
    Role,
    Status,
    Tightening,
    ToolCall,
    Transcript,
    Turn,
)
from harness._base._schema import Reader, check_version

__all__ = ["transcript_to_dict", "transcript_from_dict", "fact_to_dict", "fact_from_dict", "dumps", "loads", "load"]


def _turn_to_dict(turn: Turn) -> dict[str, Any]:
    out: dict[str, Any] = {"role": turn.role.value, "text": turn.text}
    if turn.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls]
    if turn.tool_call_id is not None:
        out["tool_call_id"] = turn.tool_call_id
    if turn.parts:  # only when there are some: older readers never see the key
        out["parts"] = [part_record(p) for p in turn.parts]
    return out


def fact_to_dict(fact: Fact) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": fact.id,
        "kind": str(fact.kind),
        "literals": list(fact.literals),
        "origin_turn": fact.origin_turn,
        "fate": {"status": fact.fate.status.value, "turn": fact.fate.turn, "by": fact.fate.by},
    }
    if fact.polarity is not None:
        out["polarity"] = fact.polarity.value
    if fact.details:
        out["details"] = dict(fact.details)
    return out


def transcript_to_dict(transcript: Transcript) -> dict[str, Any]:
    """A JSON-ready dict; ``transcript_from_dict`` inverts it exactly."""
    return {
        "schema_version": transcript.schema_version,
        "seed": transcript.seed,
        "compaction_points": list(transcript.compaction_points),
        "facts": [fact_to_dict(f) for f in transcript.facts],
        "turns": [_turn_to_dict(t) for t in transcript.turns],
        **_session_truth(transcript),
    }


def _session_truth(transcript: Transcript) -> dict[str, Any]:
    """Effects, consumers and tightenings, each only when there are some (older readers never see them)."""
    out: dict[str, Any] = {}
    if transcript.effects:
        out["effects"] = [{"turn": e.turn, "call_id": e.call_id, "action": e.action, "governed_by": list(e.governed_by)}
                          for e in transcript.effects]
    if transcript.consumers:
        out["consumers"] = [{"name": c.name, "requires": list(c.requires)} for c in transcript.consumers]
    if transcript.tightenings:
        out["tightenings"] = [{"round": t.round, "share": t.share} for t in transcript.tightenings]
    return out


def _turn_from(r: Reader) -> Turn:
    calls = tuple(
        ToolCall(id=c.str("id", nonempty=True), name=c.str("name", nonempty=True), arguments=c.str("arguments", default="{}"))
        for c in r.children("tool_calls", default=[])
    )
    parts = tuple(Part(p.enum("kind", PartKind), p.str("data"), p.str("text", default=""), p.str("id", default=""))
                  for p in r.children("parts", default=[]))
    return r.wrap(Turn, r.enum("role", Role), r.str("text"), calls, r.optional_str("tool_call_id"), parts)


def _fact_from(r: Reader) -> Fact:
    fate_r = r.child("fate", optional=True)
    fate = Fate()
    if fate_r is not None:
        fate = fate_r.wrap(
            Fate, fate_r.enum("status", Status), fate_r.optional_int("turn"), fate_r.optional_str("by")
        )
    polarity = r.enum("polarity", Polarity) if r.optional_str("polarity") is not None else None
    details = tuple(sorted(r.str_map("details").items()))
    return r.wrap(
        Fact,
        r.str("id", nonempty=True),
        read_kind(r),
        r.str_list("literals", nonempty_items=True),
        r.int("origin_turn", minimum=0),
        polarity,
        fate,
        details,
    )


def fact_from_dict(data: Any, *, source: str = "<document>") -> Fact:
    """Inverse of ``fact_to_dict``; a bad field raises ``SchemaError`` naming it."""
    return _fact_from(Reader(data, source=source))


def transcript_from_dict(data: Any, *, source: str = "<document>") -> Transcript:
    """Build a Transcript from parsed JSON; raise SchemaError naming the bad field."""
    r = Reader(data, source=source)
    check_version(r, SCHEMA_VERSION)
    turns = tuple(_turn_from(t) for t in r.children("turns"))
    facts = tuple(_fact_from(f) for f in r.children("facts", default=[]))
    effects = tuple(
        e.wrap(Effect, e.int("turn", minimum=0), e.str("call_id", nonempty=True), e.str("action", nonempty=True),
               e.str_list("governed_by", nonempty_items=True))
        for e in r.children("effects", default=[])
    )
    consumers = tuple(c.wrap(Consumer, c.str("name", nonempty=True), c.str_list("requires", nonempty_items=True))
                      for c in r.children("consumers", default=[]))
    tightenings = tuple(t.wrap(Tightening, t.int("round", minimum=0), t.int("share", minimum=1))
                        for t in r.children("tightenings", default=[]))
    return r.wrap(
        Transcript,
        turns,
        facts,
        r.int_list("compaction_points", default=[]),
        r.int("seed", default=0),
        SCHEMA_VERSION,
        effects,
        consumers,
        tightenings,
    )


def dumps(transcript: Transcript, *, indent: int | None = None) -> str:
    return json.dumps(transcript_to_dict(transcript), indent=indent, ensure_ascii=False)


def loads(text: str, *, source: str = "<document>") -> Transcript:
    return transcript_from_dict(parse_json(text, source=source), source=source)


def load(path: str | Path, *, max_mb: float = DEFAULT_MAX_FILE_MB) -> Transcript:
    """Read a transcript file; files over ``max_mb`` are refused before they are read."""
    return transcript_from_dict(read_json_file(path, max_mb=max_mb), source=str(path))
