"""Opaque provider parts (``harness.Part``): Anthropic thinking, OpenAI reasoning and compaction items.

Generated sources carry them in the dialects that have them, every request stays valid with them, they survive
a round trip through each dialect, and ``provider-valid`` holds a compactor to the providers' rules for them:
byte-exact, the reasoning of a pending call kept, a compaction item kept."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from harness import Part, PartKind, Role, ToolCall, Transcript, Turn
from harness._app.judging._session import SessionConfig, run_session
from harness._base._dialects import DIALECTS, DROPPED_PARTS, read, render
from harness._base._protocol import CompactionRequest, CompactionResult
from harness.oracles import Case, select
from harness.oracles._provider import problems
from harness.strategies import PART_DIALECTS, transcripts, with_provider_parts
from tests._cases import without_references


def _parts(turns, dialect: str) -> list[tuple]:
    return [(p.kind, p.data, p.text) for t in turns for p in t.parts if p.kind not in DROPPED_PARTS[dialect]]


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(transcripts(max_windows=4, budget=600))
def test_a_source_with_parts_is_a_valid_request_in_each_dialect_at_every_compaction_point(transcript):
    source = with_provider_parts(transcript)
    assert without_references(source.turns) == list(transcript.turns)  # parts change no call or ground truth
    assert any(t.parts for t in source.turns if t.tool_calls) or not any(t.tool_calls for t in source.turns)
    rounds = run_session(source, lambda request: CompactionResult(request.turns[-6:]), SessionConfig(budget=600))
    for rnd in rounds:
        given_turns = source.turns[:rnd.boundary]
        for dialect in DIALECTS:
            assert problems(given_turns, dialect) == [], (dialect, rnd.boundary)
            if dialect != "chat":
                back = read(render(given_turns, dialect), dialect)
                assert _parts(back, dialect) == _parts(given_turns, dialect)


def test_chat_drops_the_parts_and_anthropic_the_compaction_item_and_no_turn_becomes_an_empty_message():
    compaction = Part(PartKind.COMPACTION, "ZW5jcnlwdGVk", "", "cmp_1")
    turns = (Turn(Role.USER, "Go."), Turn(Role.ASSISTANT, "", parts=(compaction,)), Turn(Role.ASSISTANT, "Done."))
    assert [m["content"] for m in render(turns, "chat")] == ["Go.", "Done."]
    assert [m["content"] for m in render(turns, "anthropic")["messages"]] == ["Go.", "Done."]
    assert [i["type"] for i in render(turns, "openai-responses")] == ["message", "compaction", "message"]


CALL = ToolCall("call_1", "read_file", '{"path": "a.py"}')
THOUGHT = Part(PartKind.REASONING, "c2lnbmF0dXJlLW9uZQ==", "Checking which file to open next.", "rs_1")
EARLIER = Part(PartKind.REASONING, "c2lnbmF0dXJlLXR3bw==", "Comparing the two outputs first.", "rs_0")
COMPACTION = Part(PartKind.COMPACTION, "Y29tcGFjdGlvbg==", "", "cmp_1")
SOURCE = (Turn(Role.USER, "Read a.py."), Turn(Role.ASSISTANT, "Sure.", parts=(COMPACTION, EARLIER)),
          Turn(Role.USER, "Now."), Turn(Role.ASSISTANT, "", (CALL,), parts=(THOUGHT,)))


def _rules(dialect: str, result_turns) -> list[str]:
    (check,) = [o.check for o in select() if o.id == "provider-valid"]
    request = CompactionRequest(SOURCE, 400, dialect=dialect)
    case = Case(Transcript(turns=SOURCE), len(SOURCE), 400, CompactionResult(tuple(result_turns)), request=request)
    return [f.detail.split(":")[0].split()[-1] for f in check(case)]


def _edited(part: Part) -> Part:
    return dataclasses.replace(part, text=part.text[:10])


@pytest.mark.parametrize("dialect", PART_DIALECTS)
def test_provider_valid_passes_parts_kept_as_given_and_earlier_reasoning_dropped_whole(dialect):
    assert _rules(dialect, SOURCE) == []
    earlier_dropped = dataclasses.replace(SOURCE[1], parts=(COMPACTION,))
    assert _rules(dialect, (SOURCE[0], earlier_dropped, *SOURCE[2:])) == []


@pytest.mark.parametrize("dialect", PART_DIALECTS)
def test_provider_valid_catches_stripped_pending_reasoning_and_edited_parts(dialect):
    stripped = dataclasses.replace(SOURCE[3], parts=())
    assert _rules(dialect, (*SOURCE[:3], stripped)) == ["reasoning-with-call"]
    edited = dataclasses.replace(SOURCE[3], parts=(_edited(THOUGHT),))
    assert _rules(dialect, (*SOURCE[:3], edited)) == ["parts-intact", "reasoning-with-call"]
    earlier_edited = dataclasses.replace(SOURCE[1], parts=(COMPACTION, _edited(EARLIER)))
    assert _rules(dialect, (SOURCE[0], earlier_edited, *SOURCE[2:])) == ["parts-intact"]


def test_a_responses_compaction_item_dropped_is_caught_and_chat_judges_no_parts():
    without = dataclasses.replace(SOURCE[1], parts=(EARLIER,))
    assert _rules("openai-responses", (SOURCE[0], without, *SOURCE[2:])) == ["compaction-kept"]
    assert _rules("anthropic", (SOURCE[0], without, *SOURCE[2:])) == []  # Anthropic never carried it
    stripped = dataclasses.replace(SOURCE[3], parts=())
    assert _rules("chat", (*SOURCE[:3], stripped)) == []


def test_two_requests_that_differ_only_in_a_part_are_two_cache_keys():
    from harness._base._request_key import request_digest, request_key_material

    edited = dataclasses.replace(SOURCE[3], parts=(_edited(THOUGHT),))
    one, other = CompactionRequest(SOURCE, 400), CompactionRequest((*SOURCE[:3], edited), 400)
    assert one.turns == other.turns  # equal as turns: the parts are outside equality ...
    assert request_digest(one) != request_digest(other)  # ... never outside the cache key
    assert request_key_material(one) != request_key_material(other)


PARTS_FIXTURE = Path(__file__).resolve().parent / "fixtures" / "parts_mutants.py"


@pytest.mark.parametrize("function, dialect, rule", [
    ("anthropic_keeps_thinking", "anthropic", None),
    ("anthropic_strips_thinking", "anthropic", "reasoning-with-call"),
    ("anthropic_shortens_thinking", "anthropic", "parts-intact"),
    ("responses_keeps_items", "openai-responses", None),
    ("responses_drops_reasoning", "openai-responses", "reasoning-with-call"),
    ("responses_rewrites_encrypted", "openai-responses", "parts-intact"),
    ("anthropic_strips_attachments", "anthropic", "attachment-kept"),
    ("responses_recompresses_attachments", "openai-responses", "attachment-intact"),
])
def test_a_compactor_that_bends_parts_is_caught_with_a_minimal_transcript_and_one_that_keeps_them_passes(
        function, dialect, rule):
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    result = run(RunConfig.of(f"{PARTS_FIXTURE}:{function}", examples=30, seed=3, quiet=True, isolation="inline",
                              dialect=dialect, only=("provider-valid",)))
    assert not result.infra_errors
    rules = {f.detail.split(":")[0].split()[-1] for f in result.failures}
    assert rules == ({rule} if rule else set()), [f.detail for f in result.failures]
    assert all(len(f.transcript.turns) <= 4 for f in result.failures)


BLIND = Path(__file__).resolve().parent / "fixtures" / "opaque_compactors.py"  # a helper's, from the API shapes only


@pytest.mark.parametrize("function, dialect, rule", [
    ("anthropic_strips_thinking", "anthropic", "reasoning-with-call"),
    ("anthropic_shortens_thinking", "anthropic", "parts-intact"),
    ("anthropic_window_right", "anthropic", None),
    ("responses_drops_reasoning", "openai-responses", "reasoning-with-call"),
    ("responses_rewrites_encrypted", "openai-responses", "parts-intact"),
    ("responses_drops_compaction", "openai-responses", "compaction-kept"),
    ("responses_window_right", "openai-responses", None),
])
def test_compactors_written_blind_from_the_api_shapes_are_judged_by_the_rule_they_break(function, dialect, rule):
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    result = run(RunConfig.of(f"{BLIND}:{function}", examples=30, seed=3, quiet=True, isolation="inline",
                              dialect=dialect, only=("provider-valid", "tool-pairing")))
    assert not result.infra_errors
    assert {f.detail.split(":")[0].split()[-1] for f in result.failures} == ({rule} if rule else set())
    assert all(len(f.transcript.turns) <= 4 for f in result.failures)


@pytest.mark.parametrize("name", ["ledgered", "prose"])
@pytest.mark.parametrize("dialect", PART_DIALECTS)
def test_the_bundled_rich_summarizers_write_requests_each_provider_accepts(name, dialect):
    """A summary in a system message would leave an Anthropic body with no messages (``has-messages``)."""
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    result = run(RunConfig.of(f"harness.summarizers.{name}:summarize", protocol="rich", examples=30, seed=4,
                              quiet=True, isolation="inline", dialect=dialect, only=("provider-valid",)))
    assert not result.infra_errors and not result.failures, [f.detail for f in result.failures]
