"""Logs the tools themselves wrote (Claude Code, Codex CLI, the Agents SDK, Anthropic request bodies,
LangChain dumps; ``tests/fixtures/logs``, made by a hand that never saw our reader, its facts in
``MANIFEST.json``) read faithfully, and broken copies of them refused naming the line and the field."""

import json
from collections import Counter
from pathlib import Path

import pytest

from harness._base._errors import SchemaError
from harness._base._logs import read_log
from harness._base._model import Role
from harness.strategies import load_background

LOGS = Path(__file__).resolve().parent / "fixtures" / "logs"
MANIFEST = json.loads((LOGS / "MANIFEST.json").read_text(encoding="utf-8"))
VALID = [f for f in MANIFEST["files"] if f["valid"]]
BROKEN = [f for f in MANIFEST["files"] if not f["valid"]]
# The manifest's names for the formats, and ours.
FORMATS = {"claude_code": "claude-code", "codex": "codex", "responses": "openai-responses", "anthropic": "anthropic",
           "langchain": "langchain"}


def _read(entry):
    path = LOGS / entry["path"]
    return read_log(path.read_bytes(), source=str(path))


def test_the_fixtures_cover_every_format_and_the_manifest_lists_every_file():
    assert {FORMATS[f["format"]] for f in VALID} == set(FORMATS.values())
    listed = {f["path"] for f in MANIFEST["files"]}
    on_disk = {str(p.relative_to(LOGS)) for p in LOGS.rglob("*.json*") if p.name != "MANIFEST.json"}
    assert listed == on_disk


@pytest.mark.parametrize("entry", VALID, ids=[f["path"] for f in VALID])
def test_a_log_is_read_as_its_format_with_every_call_and_result(entry):
    logs = _read(entry)
    assert {log.format for log in logs} == {FORMATS[entry["format"]]}
    turns = [t.turn for log in logs for t in log.turns]
    calls = [c.id for t in turns for c in t.tool_calls]
    answered = {t.tool_call_id for t in turns if t.role is Role.TOOL}
    assert set(calls) == set(entry["call_ids"]) and len(set(calls)) == entry["tool_calls"]
    assert {c for c in calls if c in answered} == set(entry["call_ids"]) - set(entry["unanswered_calls"])
    # A result's text is kept whole (text parts of a list joined by a newline each).
    longest = max((len(t.text) for t in turns if t.role is Role.TOOL), default=0)
    assert 0 <= longest - entry["longest_tool_result_chars"] < 10
    left_out = Counter()
    for log in logs:
        left_out.update(dict(log.left_out))
    assert left_out["thinking blocks"] + left_out["reasoning items"] == entry["thinking_blocks"]
    assert left_out["images"] == entry["images"]


@pytest.mark.parametrize("entry", VALID, ids=[f["path"] for f in VALID])
def test_parallel_calls_stay_one_step_where_the_log_wrote_them_as_one(entry):
    """The earliest Codex rollouts write a response's calls interleaved with their outputs: read in the order
    written, each is a step of its own (valid, never merged on a guess); every other log keeps its steps."""
    turns = [t.turn for log in _read(entry) for t in log.turns]
    steps = sum(len(t.tool_calls) > 1 for t in turns)
    assert steps <= entry["parallel_steps"]
    text = (LOGS / entry["path"]).read_text(encoding="utf-8")
    interleaved = entry["path"].endswith(".jsonl") and '"record_type"' in text
    assert steps == entry["parallel_steps"] or interleaved


@pytest.mark.parametrize("entry", VALID, ids=[f["path"] for f in VALID])
def test_a_log_is_used_as_filler_with_its_unanswered_calls_left_out(entry):
    background = load_background(LOGS / entry["path"])
    assert background.formats == (FORMATS[entry["format"]],)
    kept = set()
    for session in background.sessions:
        for unit in session:
            calls = {c.id for c in unit[0].tool_calls}
            assert calls == {t.tool_call_id for t in unit[1:]}  # every kept call with its result, in its unit
            kept |= calls
    assert kept == set(entry["call_ids"]) - set(entry["unanswered_calls"])


def test_a_folder_of_every_format_is_one_background():
    background = load_background(LOGS / "claude_code")
    assert len(background.sessions) == 5
    formats = set()
    for folder in ("claude_code", "codex", "responses", "anthropic", "langchain"):
        formats |= set(load_background(LOGS / folder).formats)
    assert formats == set(FORMATS.values())


@pytest.mark.parametrize("entry", BROKEN, ids=[f["path"] for f in BROKEN])
def test_a_broken_log_is_refused_naming_its_line_and_field(entry):
    path = LOGS / entry["path"]
    with pytest.raises(SchemaError) as info:
        load_background(path)
    message = str(info.value)
    where = str(path) if entry["line"] is None else f"{path}, line {entry['line']}"
    assert message.startswith(f"{where}: "), message
    if entry["field"] is not None:
        # The manifest names the field of the object a line holds; ours names it from the line (or document) root.
        assert f"field '{entry['field']}'" in message or f".{entry['field']}'" in message, message
