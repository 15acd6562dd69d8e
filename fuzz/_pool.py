"""The valid documents each target starts from, made by the project's own strategies and writers.

Generating a transcript costs milliseconds, far more than one fuzz input may, so a small pool is
made once per process (deterministically) and each input picks one and damages it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random

from hypothesis import HealthCheck, given, settings

from harness import strategies
from fuzz._mutate import Make
from harness._app.corpus._entries import CorpusEntry, entry_to_dict
from harness._base._codec import transcript_to_dict
from harness._base._compact import request_for
from harness._base._messages import to_messages
from harness._base._model import Transcript, Turn
from harness._base._model import Consumer
from harness._base._protocol import CompactionRequest, CompactionResult, JournalEntry, LedgerEntry, RecoveryMarker
from harness._base._result_codec import result_to_dict
from harness._base._wire import request_to_wire

__all__ = ["transcripts", "transcript_docs", "entry_docs", "request", "result_recipes", "wire_docs"]

_POOL_SIZE = 12


@functools.cache
def transcripts() -> tuple[Transcript, ...]:
    """A dozen short transcripts from ``harness.strategies.transcripts``: every part of the schema, few turns."""
    found: list[Transcript] = []

    @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategies.transcripts(min_turns=2, max_turns=10, min_facts=1, max_facts=4, min_cuts=0, max_cuts=2,
                                  min_decoys=0, max_decoys=1))
    def collect(transcript: Transcript) -> None:
        found.append(transcript)

    rng = random.Random(14)
    while len(found) < _POOL_SIZE:
        collect.hypothesis.fuzz_one_input(rng.randbytes(1024))
    return tuple(found)


def transcript_docs() -> list[str]:
    return [json.dumps(transcript_to_dict(t), ensure_ascii=False) for t in transcripts()]


def entry_docs() -> list[str]:
    docs = []
    for i, t in enumerate(transcripts()):
        entry = CorpusEntry("literal-verbatim" if i % 2 else "no-invented-facts",
                            str(t.facts[0].kind) if i % 3 else None,
                            "harness.summarizers.example:summarize", ("messages", "rich")[i % 2], 200 + 100 * i, t,
                            "0.1.0", "2025-01-01T00:00:00+00:00", "the summary said 'a few'" if i % 2 else "",
                            (i % 3, 3) if i % 4 else None)
        docs.append(json.dumps(entry_to_dict(entry), ensure_ascii=False))
    return docs


@functools.cache
def request():
    """The request the result target's summarizer is handed: a few turns and tags (it is copied on every call)."""
    t = transcripts()[0]
    return CompactionRequest(t.turns[:3], 500, t.facts[:2])


def _turn_recipe(turn: Turn) -> Make:
    calls = [Make("tool_call", [c.id, c.name, c.arguments]) for c in turn.tool_calls]
    return Make("turn", [Make("role", [turn.role.value]), turn.text, Make("tuple", calls), turn.tool_call_id])


def _ledger(t: Transcript) -> list[LedgerEntry]:
    return [LedgerEntry(str(f.kind), f.literals, f.polarity.value if f.polarity else None, "open", f.details, f.id)
            for f in t.facts]


def _ledger_recipe(e: LedgerEntry) -> Make:
    details = Make("tuple", [Make("tuple", list(pair)) for pair in e.details])
    return Make("ledger_entry", [e.kind, Make("tuple", list(e.literals)), e.polarity, e.status, details, e.fact_id])


def result_recipes() -> list:
    """What a summarizer may validly return, as recipes: message lists (plain and with content parts),
    a string, lists of Turns, and CompactionResults with a ledger and a self-report."""
    out: list = []
    for t in transcripts()[:6]:
        kept = list(t.turns[-3:])
        messages = to_messages(kept)
        out.append([{"role": "system", "content": "Summary: " + " ".join(f.literals[0] for f in t.facts)}, *messages])
        out.append([{"role": "developer", "content": [{"type": "text", "text": t.turns[0].text},
                                                      {"type": "image_url", "image_url": {"url": "x"}}]}])
        out.append("Summary: " + t.turns[0].text)
        out.append([_turn_recipe(turn) for turn in kept])
        out.append(Make("result", [Make("tuple", [_turn_recipe(turn) for turn in kept]),
                                   Make("tuple", [_ledger_recipe(e) for e in _ledger(t)]),
                                   Make("tuple", [f.id for f in t.facts])]))
        out.append(result_to_dict(CompactionResult(tuple(kept), tuple(_ledger(t)), tuple(f.id for f in t.facts))))
        out.append(result_to_dict(_protocol2(t, tuple(kept))))
    return out


def _protocol2(t: Transcript, kept: tuple[Turn, ...]) -> CompactionResult:
    """A rich protocol 2 result: a marker, a journal of one edit (payload and hash) and verified classes."""
    calls = tuple(c.id for turn in t.turns for c in turn.tool_calls)
    return CompactionResult(kept, marker=RecoveryMarker(2, f"tier2-{t.seed}", calls[:1]),
                            journal=(JournalEntry.replacing(t.turns, 0, len(t.turns), kept),),
                            verified=("journal-reversible", "closure"))


def wire_docs() -> list[str]:
    """Requests (both protocols), answers (with usage, with an error) and chat-completion responses."""
    docs = []
    for i, t in enumerate(transcripts()[:6]):
        boundary = max(1, len(t.turns) - 1)
        for protocol in ("messages", "rich"):
            docs.append(request_to_wire(request_for(t, boundary, 300 + i), protocol))
        tiered = dataclasses.replace(request_for(t, boundary, 300 + i), tier=2,
                                     consumers=(Consumer("router", ("handle-retained", "closure")),))
        docs.append(request_to_wire(tiered, "rich"))
        if i % 2:
            docs.append(result_to_dict(_protocol2(t, t.turns[-2:])))
        kept = t.turns[-2:]
        answer = result_to_dict(CompactionResult(tuple(kept), tuple(_ledger(t)) if i % 2 else None,
                                                 tuple(f.id for f in t.facts) if i % 3 else None))
        docs.append({**answer, "usage": {"prompt_tokens": 100 * i, "completion_tokens": 7}})
        docs.append({"messages": "Summary: " + t.turns[0].text})
        docs.append({"id": f"chatcmpl-{i}", "object": "chat.completion", "model": "gpt-4o-mini",
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": "Summary: " + t.turns[-1].text,
                                              "refusal": None}}],
                     "usage": {"prompt_tokens": 900 + i, "completion_tokens": 40, "total_tokens": 940 + i}})
    docs.append({"error": "the model is overloaded"})
    docs.append({"choices": [{"message": {"role": "assistant", "content": None, "refusal": "I can't help"}}]})
    return [json.dumps(d, ensure_ascii=False) for d in docs]
