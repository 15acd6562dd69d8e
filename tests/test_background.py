"""Background logs (``--background``): loading a team's sessions, and drawing filler units from them."""

import json
import os
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from harness._base._errors import InvalidArgument, SchemaError
from harness._base._model import Role, ToolCall, Turn
from harness.strategies._internal._background import Background, load_background

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "background"
BACKGROUND = load_background(EXAMPLE)
TOTAL_TURNS = sum(len(unit) for session in BACKGROUND.sessions for unit in session)
BG_ID = re.compile(r"^bg-\d{5}$")
FACT_ID = re.compile(r"^call_[0-9a-f]{12}$")


def _raw_sessions() -> list[list[dict]]:
    """The example's sessions straight from the files, in load order (by file name)."""
    out = [json.loads((EXAMPLE / "deploy_session.json").read_text(encoding="utf-8"))]
    out += [json.loads(line) for line in (EXAMPLE / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    return [s["messages"] if isinstance(s, dict) else s for s in out]


def _strip(unit: tuple[Turn, ...]) -> tuple[Turn, ...]:
    """A unit with its call ids blanked, to compare an output unit with the loaded one."""
    return tuple(replace(t, tool_calls=tuple(replace(c, id="?") for c in t.tool_calls),
                         tool_call_id=None if t.tool_call_id is None else "?") for t in unit)


def _turns(units):
    return [turn for unit in units for turn in unit]


def _write(tmp_path: Path, name: str, content) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def _call(cid: str, text: str | None = None, name: str = "run_shell") -> dict:
    return {"role": "assistant", "content": text,
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}]}


def _result(cid: str, text: str = "ok") -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": text}


# -- the example set ----------------------------------------------------------------------------------

def test_the_example_set_loads_four_sessions_in_file_name_order():
    assert [Path(s).name for s in BACKGROUND.sources] == ["deploy_session.json", "sessions.jsonl"]
    assert [len(s) for s in BACKGROUND.sessions] == [16, 16, 16, 13]
    assert TOTAL_TURNS == 98
    assert re.fullmatch(r"[0-9a-f]{64}", BACKGROUND.fingerprint)
    assert load_background(EXAMPLE).fingerprint == BACKGROUND.fingerprint


def test_the_example_units_match_the_files_message_for_message():
    """One unit per user or assistant message (a call turn carries its results); system prompts dropped."""
    for raw, session in zip(_raw_sessions(), BACKGROUND.sessions, strict=True):
        kept = [m for m in raw if m["role"] != "system"]
        assert 15 <= len(raw) <= 40
        assert len(session) == sum(m["role"] != "tool" for m in kept)
        turns = _turns(session)
        assert [t.role.value for t in turns] == [m["role"] for m in kept]
        assert [t.text for t in turns] == [m["content"] or "" for m in kept]  # byte-exact
        assert [[(c.name, c.arguments) for c in t.tool_calls] for t in turns] == [
            [(c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls", ())] for m in kept]


def test_every_loaded_unit_is_a_message_or_a_call_with_all_its_results():
    for session in BACKGROUND.sessions:
        for unit in session:
            head, results = unit[0], unit[1:]
            assert head.role is not Role.TOOL and head.role is not Role.SYSTEM
            assert sorted(r.tool_call_id for r in results) == sorted(c.id for c in head.tool_calls)
            assert all(r.role is Role.TOOL for r in results)


# -- units() ------------------------------------------------------------------------------------------

COUNTS = (1, 2, 3, 7, 40, TOTAL_TURNS, 211, 1009)  # 211 and 1009: primes bigger than the whole background


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("seed", (0, 1, 7, 12345, -3, 2**40))
def test_units_give_exactly_count_turns_never_splitting_a_call_from_its_results(seed, count):
    units = BACKGROUND.units(seed, count)
    assert sum(len(u) for u in units) == count
    assert all(units)
    for unit in units:
        head, results = unit[0], unit[1:]
        assert head.role is not Role.TOOL
        assert all(r.role is Role.TOOL for r in results)
        assert [r.tool_call_id for r in results] == [c.id for c in head.tool_calls]  # the examples answer in order


@pytest.mark.parametrize("count", COUNTS)
def test_call_ids_are_renumbered_bg_in_order_and_unique(count):
    for seed in range(5):
        turns = _turns(BACKGROUND.units(seed, count))
        ids = [c.id for t in turns for c in t.tool_calls]
        assert ids == [f"bg-{n:05d}" for n in range(1, len(ids) + 1)]
        assert all(BG_ID.match(i) and not FACT_ID.match(i) for i in ids)
        answered = [t.tool_call_id for t in turns if t.role is Role.TOOL]
        assert sorted(answered) == sorted(ids)


def test_output_units_are_the_loaded_units_byte_exact_but_for_ids():
    loaded = {_strip(unit) for session in BACKGROUND.sessions for unit in session}
    for seed in range(10):
        assert all(_strip(unit) in loaded for unit in BACKGROUND.units(seed, 300))


def test_the_whole_background_is_walked_once_when_count_is_its_size():
    """Start mid-session, go on through the other sessions, wrap around to the start: every unit once."""
    every = Counter(_strip(unit) for session in BACKGROUND.sessions for unit in session)
    starts = set()
    for seed in range(20):
        units = BACKGROUND.units(seed, TOTAL_TURNS)
        assert Counter(_strip(u) for u in units) == every
        starts.add(_strip(units[0]))
    assert len(starts) > 5  # the seed picks where the walk starts


def test_the_seed_picks_the_session_order():
    which = {_strip(unit): i for i, session in enumerate(BACKGROUND.sessions) for unit in session}
    orders = set()
    for seed in range(40):
        visited = [which[_strip(u)] for u in BACKGROUND.units(seed, TOTAL_TURNS)]
        orders.add(tuple(dict.fromkeys(visited)))  # sessions in the order first reached
    assert {order[0] for order in orders} == {0, 1, 2, 3}
    assert len(orders) >= 8


def test_units_follow_real_conversation_order():
    for seed in range(20):
        units = [_strip(u) for u in BACKGROUND.units(seed, 60)]
        session = next(s for s in ([_strip(u) for u in s] for s in BACKGROUND.sessions) if units[0] in s)
        start = session.index(units[0])
        rest = session[start:]
        assert units[: len(rest)] == rest


def test_units_are_deterministic_for_a_seed_and_differ_across_seeds():
    again = load_background(EXAMPLE)
    for seed in range(10):
        assert BACKGROUND.units(seed, 123) == BACKGROUND.units(seed, 123) == again.units(seed, 123)
    assert len({tuple(BACKGROUND.units(seed, 30)) for seed in range(10)}) >= 7


def test_units_leave_the_global_random_state_alone():
    import random
    random.seed(99)
    expected = random.random()
    random.seed(99)
    BACKGROUND.units(5, 200)
    assert random.random() == expected


def test_zero_turns_is_no_units_and_a_negative_count_is_refused():
    assert BACKGROUND.units(1, 0) == []
    with pytest.raises(InvalidArgument, match="count=-1"):
        BACKGROUND.units(1, -1)


def test_a_unit_too_big_for_the_room_left_is_skipped_for_a_later_one_that_fits(tmp_path):
    session = [{"role": "user", "content": "start"}, _call("a", "checking"), _result("a"),
               {"role": "assistant", "content": "done"}]
    background = load_background(_write(tmp_path, "one.json", session))
    for seed in range(10):
        units = background.units(seed, 3)
        assert sum(map(len, units)) == 3
        assert all(_strip(u) in {_strip(x) for x in background.sessions[0]} for u in units)  # no filler needed
        assert [u[0].text for u in background.units(seed, 1)] in (["start"], ["done"])


def test_filler_fills_what_no_background_unit_fits(tmp_path):
    session = [_call("a", "one"), _result("a"), _call("b", "two"), _result("b")]
    background = load_background(_write(tmp_path, "calls.json", session))
    units = background.units(4, 5)
    assert sum(map(len, units)) == 5
    assert [len(u) for u in units[:2]] == [2, 2]
    assert _strip(units[2]) not in {_strip(u) for u in background.sessions[0]}  # the last turn is filler
    only_filler = background.units(4, 1)
    assert len(only_filler) == 1 and only_filler[0][0].text not in ("one", "two")
    ids = [c.id for t in _turns(units) for c in t.tool_calls]
    assert ids == ["bg-00001", "bg-00002"]


def test_a_background_repeats_when_count_exceeds_it_and_ids_stay_unique(tmp_path):
    background = load_background(_write(tmp_path, "s.json", [_call("same", "x"), _result("same")]))
    turns = _turns(background.units(0, 40))
    assert [c.id for t in turns for c in t.tool_calls] == [f"bg-{n:05d}" for n in range(1, 21)]
    assert [t.tool_call_id for t in turns if t.tool_call_id] == [f"bg-{n:05d}" for n in range(1, 21)]


# -- occurs() -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("literal", ["settlement-worker", "SETTLEMENT-Worker", "9c41e7a", "Happy Helming",
                                     "apply_patch", "lsof -nP -iTCP:5173", "sha256:9d2c47b1e85f"])
def test_occurs_finds_text_call_names_and_arguments_in_any_case(literal):
    assert BACKGROUND.occurs(literal)


@pytest.mark.parametrize("literal", ["zq_4471_nope", "bg-00001", "You are a coding assistant working in the"])
def test_occurs_is_false_for_what_the_background_does_not_say(literal):
    """Made up, our own ids, and a system prompt (dropped, so it never reaches a transcript)."""
    assert not BACKGROUND.occurs(literal)


def test_occurs_does_not_match_across_two_turns(tmp_path):
    background = load_background(_write(tmp_path, "s.json", [{"role": "user", "content": "alpha"},
                                                               {"role": "assistant", "content": "beta"}]))
    assert background.occurs("ALPHA") and background.occurs("beta")
    assert not background.occurs("alphabeta") and not background.occurs("alpha beta")


# -- what loading keeps -------------------------------------------------------------------------------

def test_system_and_developer_messages_are_dropped(tmp_path):
    session = [{"role": "system", "content": "sys"}, {"role": "developer", "content": "dev"},
               {"role": "user", "content": "hi"}]
    background = load_background(_write(tmp_path, "s.json", {"messages": session}))
    assert background.sessions == (((Turn(Role.USER, "hi"),),),)


def test_a_call_with_no_result_is_removed_keeping_the_turns_text(tmp_path):
    two_calls = {"role": "assistant", "content": "two at once", "tool_calls": [
        {"id": "p", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a\"}"}},
        {"id": "q", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"b\"}"}}]}
    session = [{"role": "user", "content": "go"}, two_calls, _result("q", "b's text"),
               _call("r", "let me run it"), {"role": "user", "content": "stop"}, _call("s")]
    units = load_background(_write(tmp_path, "s.json", session)).sessions[0]
    assert units == (
        (Turn(Role.USER, "go"),),
        (Turn(Role.ASSISTANT, "two at once", (ToolCall("q", "read_file", "{\"path\": \"b\"}"),)),
         Turn(Role.TOOL, "b's text", (), "q")),
        (Turn(Role.ASSISTANT, "let me run it"),),
        (Turn(Role.USER, "stop"),),
    )  # the last call had no text and no result: gone


def test_a_directory_reads_its_json_and_jsonl_files_by_name_with_its_sub_folders(tmp_path):
    """Codex keeps its rollouts in dated folders: a folder is read whole, in path order, hidden parts skipped."""
    _write(tmp_path, "b.json", [{"role": "user", "content": "from b"}])
    _write(tmp_path, "a.jsonl", json.dumps([{"role": "user", "content": "from a"}]) + "\n\n  \n"
           + json.dumps({"messages": [{"role": "user", "content": "from a, line 4"}]}) + "\n")
    _write(tmp_path, "notes.txt", "not json")
    _write(tmp_path, ".hidden.json", "{broken")
    (tmp_path / ".cache").mkdir()
    _write(tmp_path / ".cache", "d.json", "{broken")
    (tmp_path / "2026" / "01").mkdir(parents=True)
    _write(tmp_path / "2026" / "01", "c.json", [{"role": "user", "content": "from c"}])
    background = load_background(tmp_path)
    assert [str(Path(s).relative_to(tmp_path)) for s in background.sources] == ["2026/01/c.json", "a.jsonl", "b.json"]
    assert [s[0][0].text for s in background.sessions] == ["from c", "from a", "from a, line 4", "from b"]
    assert background.formats == ("chat", "chat", "chat")


def test_the_fingerprint_follows_the_bytes(tmp_path):
    path = _write(tmp_path, "s.json", [{"role": "user", "content": "hi"}])
    first = load_background(path).fingerprint
    assert load_background(path).fingerprint == first
    _write(tmp_path, "s.json", [{"role": "user", "content": "hi"}, {"role": "user", "content": "more"}])
    assert load_background(path).fingerprint != first


def test_a_background_needs_a_session():
    with pytest.raises(InvalidArgument):
        Background((), (), "")
    with pytest.raises(InvalidArgument):
        Background(((),), ("x",), "")


# -- errors name the file, the line and the field ------------------------------------------------------

USER = {"role": "user", "content": "hi"}
BAD_SESSIONS = [
    ("invalid JSON", "{not json", "valid JSON"),
    ("an object without messages", {"turns": []}, "expected a session log"),
    ("an empty list", [], "expected a session log"),
    ("empty messages", {"messages": []}, "field 'messages': expected at least one message"),
    ("a string", "\"hello\"", "expected a session log"),
    ("a bad role", [{"role": "robot", "content": "x"}], "field '[0].role'"),
    ("bad content", [USER, {"role": "user", "content": 5}], "field '[1].content'"),
    ("a bad tool call", [USER, {"role": "assistant", "tool_calls": [{"id": 3}]}], "field '[1].tool_calls[0]'"),
    ("a result answering no call", [USER, _result("x1")], "field '[1].tool_call_id'"),
    ("a result after another message", [_call("c1", "t"), USER, _result("c1")], "field '[2].tool_call_id'"),
    ("a result answering twice", [_call("c1", "t"), _result("c1"), _result("c1")], "field '[2].tool_call_id'"),
    ("a repeated call id", [{"role": "assistant", "content": "", "tool_calls": [
        _call("d")["tool_calls"][0], _call("d")["tool_calls"][0]]}, _result("d")], "field '[0].tool_calls'"),
    ("only a system prompt", [{"role": "system", "content": "be nice"}], "at least one user, assistant"),
    ("only an unanswered silent call", [{"role": "system", "content": "s"}, _call("z")], "at least one user"),
    ("an Anthropic block in chat messages", [USER, {"role": "assistant", "content": [{"type": "text", "text": "x"},
                                                                                     {"type": "weird"}]}],
     "field '[1].content[1].type'"),
]


@pytest.mark.parametrize(("what", "session", "expected"), BAD_SESSIONS, ids=[b[0] for b in BAD_SESSIONS])
def test_a_bad_json_session_names_the_file_and_field(tmp_path, what, session, expected):
    path = _write(tmp_path, "bad.json", session)
    with pytest.raises(SchemaError) as info:
        load_background(path)
    assert str(info.value).startswith(f"{path}: ") and expected in str(info.value)
    assert "expected" in str(info.value)


@pytest.mark.parametrize(("what", "session", "expected"), BAD_SESSIONS, ids=[b[0] for b in BAD_SESSIONS])
def test_a_bad_jsonl_session_names_the_file_line_and_field(tmp_path, what, session, expected):
    bad = session if isinstance(session, str) else json.dumps(session)
    path = _write(tmp_path, "bad.jsonl", json.dumps([USER]) + "\n\n" + bad + "\n" + json.dumps([USER]) + "\n")
    with pytest.raises(SchemaError) as info:
        load_background(tmp_path)  # through the directory: the error still names the file
    assert str(info.value).startswith(f"{path}, line 3: ") and expected in str(info.value)


def test_a_jsonl_file_of_blank_lines_is_refused(tmp_path):
    path = _write(tmp_path, "empty.jsonl", "\n  \n")
    with pytest.raises(SchemaError, match=re.escape(f"{path}: ") + ".*an empty file"):
        load_background(path)


def test_a_jsonl_line_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes(json.dumps([USER]).encode() + b"\n[{\"role\": \"user\", \"content\": \"caf\xe9\"}]\n")
    with pytest.raises(SchemaError, match=re.escape(f"{path}, line 2: ") + ".*UTF-8"):
        load_background(path)


def test_a_missing_path_is_refused(tmp_path):
    with pytest.raises(InvalidArgument, match=re.escape(str(tmp_path / "nope")) + ".*no such file"):
        load_background(tmp_path / "nope")


def test_a_directory_without_sessions_is_refused(tmp_path):
    _write(tmp_path, "notes.txt", "hello")
    with pytest.raises(InvalidArgument, match=re.escape(str(tmp_path)) + ".*no \\*.json or \\*.jsonl"):
        load_background(tmp_path)


def test_a_file_of_another_kind_is_refused(tmp_path):
    path = _write(tmp_path, "log.txt", json.dumps([USER]))
    with pytest.raises(InvalidArgument, match=re.escape(str(path)) + ".*expected a .json or .jsonl file"):
        load_background(path)


def test_a_fifo_named_like_a_session_file_is_refused_and_a_folder_so_named_is_read(tmp_path):
    (tmp_path / "odd.json").mkdir()
    _write(tmp_path / "odd.json", "inner.json", [USER])
    _write(tmp_path, "fine.json", [USER])
    assert [Path(s).name for s in load_background(tmp_path).sources] == ["fine.json", "inner.json"]
    os.mkfifo(tmp_path / "pipe.jsonl")
    with pytest.raises(SchemaError, match=re.escape(str(tmp_path / "pipe.jsonl")) + ".*a regular file"):
        load_background(tmp_path)


# -- the background as the filler of generated transcripts -------------------------------------------

from hypothesis import given, settings  # noqa: E402

from harness.strategies import expand, skeletons, transcripts  # noqa: E402
from harness.strategies._internal._expand import event_turn_count  # noqa: E402


@settings(max_examples=40)
@given(skeletons(max_turns=300, max_facts=6, background=BACKGROUND))
def test_generated_transcripts_plant_our_obligations_between_the_teams_turns(skeleton):
    transcript = expand(skeleton, background=BACKGROUND)
    assert len(transcript.turns) >= skeleton.length
    background_texts = {t.text for session in BACKGROUND.sessions for unit in session for t in unit}
    from_background = [t for t in transcript.turns if t.text and t.text in background_texts]
    if len(transcript.turns) > event_turn_count(skeleton) + 1:  # some filler (beside the opening user message)
        assert from_background, "the filler is the team's own turns"
    for fact in transcript.facts:  # the ledger stays exact: each literal is stated where the ledger says
        origin = transcript.turns[fact.origin_turn]
        stated = origin.text + "".join(c.id + c.arguments for c in origin.tool_calls)
        assert all(lit in stated for lit in fact.literals), (fact, origin)
        assert not any(BACKGROUND.occurs(lit) for lit in fact.literals if not lit.isdigit()), fact


def test_transcripts_refuse_something_that_is_not_a_background():
    with pytest.raises(InvalidArgument, match="background must be a Background"):
        transcripts(background="examples/background").example()


def _cli(*args, cwd=None):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


def test_a_run_over_the_example_background_passes_a_correct_compactor_and_says_how_to_reproduce(tmp_path):
    report = tmp_path / "report.json"
    proc = _cli("run", "--summarizer", "harness.summarizers.prose:summarize", "--background", str(EXAMPLE),
                "--examples", "15", "--seed", "5", "--quiet", "--report-json", str(report))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["examples_run"] == 15 and data["violations"] == []


def test_a_run_over_the_example_background_catches_the_bundled_example_and_reproduces(tmp_path):
    proc = _cli("run", "--background", str(EXAMPLE), "--examples", "10", "--seed", "5", "--quiet",
                "--shrink-calls", "60", "--only", "negation-polarity")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert f"--background {EXAMPLE}" in proc.stdout


def test_a_bad_background_is_a_usage_error_naming_the_file(tmp_path):
    bad = _write(tmp_path, "logs.jsonl", '[{"role": "user", "content": "hi"}]\n{"oops": 1}\n')
    proc = _cli("run", "--background", str(bad), "--examples", "2", "--quiet")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "logs.jsonl, line 2" in proc.stderr


def test_a_lone_surrogate_in_a_log_is_refused_at_load_naming_the_message(tmp_path):
    """Found by a new-user review: it loaded, then crashed the run's call cache with a UnicodeEncodeError."""
    bad = _write(tmp_path, "s.json", '[{"role": "user", "content": "ok"}, {"role": "assistant", "content": "bad \\ud800"}]')
    with pytest.raises(SchemaError, match=r"s\.json.*\[1\]\.content.*lone surrogate"):
        load_background(bad)
