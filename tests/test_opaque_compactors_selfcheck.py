"""Self-checks of tests/fixtures/opaque_compactors.py: each fixture does what its docstring says.

These run the fixtures on hand-built Anthropic request bodies and Responses item lists and check
them with checks of their own (standard library and pytest only), not with the harness's oracles:
the correct windows keep every thinking block, reasoning item and compaction item byte-exact (and
the pending tool-use turn's thinking / reasoning always); each broken one makes its one mistake and
is otherwise the same right window.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent / "fixtures" / "opaque_compactors.py"
_spec = importlib.util.spec_from_file_location("opaque_compactors_selfcheck_module", _PATH)
oc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oc)

BUDGETS = [0, 10, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1500, 2000, 3000, 10**6]


def _tok(x) -> int:
    return len(json.dumps(x)) // 4


def _target(budget: int) -> int:
    return int(budget * 0.7)


# --------------------------------------------------------------------------------------------------
# Anthropic bodies
# --------------------------------------------------------------------------------------------------

def _thinking(text: str, sig: str) -> dict:
    return {"type": "thinking", "thinking": text, "signature": sig}


def _redacted(data: str) -> dict:
    return {"type": "redacted_thinking", "data": data}


def _text(t: str) -> dict:
    return {"type": "text", "text": t}


def _tool_use(i: str, name: str, inp: dict) -> dict:
    return {"type": "tool_use", "id": i, "name": name, "input": inp}


def _tool_result(i: str, content: str) -> dict:
    return {"type": "tool_result", "tool_use_id": i, "content": content}


_LONG = (
    "The user wants the failing test fixed. I should first look at the repository layout, then read "
    "the module under test and run the suite to see the exact failure before changing anything."
)
_SIG = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDdvBUOWWdGdzwz8AiMFmwQ6DO0Vb6yXpjdMz1kO0cklT2u+3bnwVlz+Q0xBTjz5f1pkJjIKm4Ui0dbw=="


def _base_messages() -> list[dict]:
    return [
        {"role": "user", "content": "Please have a look at the repository in /srv/app."},
        {"role": "assistant", "content": [
            _thinking("Old turn one: " + _LONG, _SIG.replace("Eq", "A1")),
            _text("Sure, I will look at it."),
        ]},
        {"role": "user", "content": [_text("Now list the files in src/ and read main.py.")]},
        {"role": "assistant", "content": [
            _thinking("Old turn two: " + _LONG, _SIG.replace("Eq", "B2")),
            _redacted("RkFLRV9SRURBQ1RFRF9EQVRBX09MRF9UVVJOX1RXTw=="),
            _tool_use("toolu_01", "list_dir", {"path": "src/"}),
        ]},
        {"role": "user", "content": [
            _tool_result("toolu_01", "main.py util.py test_main.py"),
            _text("and then open main.py"),
        ]},
        {"role": "assistant", "content": [
            _thinking("Interleaved: " + _LONG, _SIG.replace("Eq", "C3")),
            _tool_use("toolu_02", "read_file", {"path": "src/main.py"}),
        ]},
        {"role": "user", "content": [_tool_result("toolu_02", "def main():\n    return compute(41) + 1\n" * 8)]},
        {"role": "assistant", "content": [_text("main.py calls compute(41) and adds one; looks fine.")]},
        {"role": "user", "content": "Run the tests and tell me what fails."},
    ]


_PENDING_ASSISTANT = {"role": "assistant", "content": [
    _thinking("Pending turn: " + _LONG, _SIG),
    _redacted("RkFLRV9SRURBQ1RFRF9EQVRBX1BFTkRJTkc"),
    _tool_use("toolu_03", "run_tests", {"path": "tests/", "verbose": True}),
    _tool_use("toolu_04", "git_status", {}),
]}


def body_pending() -> dict:
    """Ends with the assistant's tool_use, no result yet."""
    return {"model": "claude-x", "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024},
            "system": "You are a careful coding agent.",
            "messages": _base_messages() + [copy.deepcopy(_PENDING_ASSISTANT)]}


def body_partial() -> dict:
    """Ends with a user message holding one of the two results the last tool-use turn awaits."""
    b = body_pending()
    b["messages"].append({"role": "user", "content": [_tool_result("toolu_03", "1 failed: test_main.py::test_compute")]})
    return b


def body_answered() -> dict:
    """Ends with a user message holding all the last turn's results."""
    b = body_pending()
    b["messages"].append({"role": "user", "content": [
        _tool_result("toolu_03", "1 failed: test_main.py::test_compute"),
        _tool_result("toolu_04", "clean"),
    ]})
    return b


def body_no_system() -> dict:
    b = body_answered()
    del b["system"]
    return b


BODIES = [body_pending, body_partial, body_answered, body_no_system]


def _exchange_starts(messages: list[dict]) -> list[int]:
    """User messages holding no tool_result (index 0 too)."""
    starts = [0]
    for i, m in enumerate(messages):
        if i and m["role"] == "user" and not (
            isinstance(m["content"], list) and any(b["type"] == "tool_result" for b in m["content"])
        ):
            starts.append(i)
    return starts


def _with_messages(body: dict, messages: list[dict]) -> dict:
    out = {k: v for k, v in body.items() if k != "messages"}
    out["messages"] = messages
    return out


def _expected_start(body: dict, budget: int) -> int:
    """Start of the verbatim window: the earliest exchange start whose suffix fits, else the newest."""
    msgs = body["messages"]
    starts = _exchange_starts(msgs)
    fitting = [s for s in starts if _tok(_with_messages(body, msgs[s:])) <= _target(budget)]
    return min(fitting) if fitting else starts[-1]


def _no_thinking(m: dict) -> dict:
    if not isinstance(m["content"], list):
        return m
    return {**m, "content": [b for b in m["content"] if b["type"] not in ("thinking", "redacted_thinking")]}


def _thinking_blocks(m: dict) -> list[dict]:
    if not isinstance(m["content"], list):
        return []
    return [b for b in m["content"] if b["type"] in ("thinking", "redacted_thinking")]


def _check_valid_request(out: dict, original: dict) -> None:
    """First message from the user; each tool_result right after its tool_use, results first."""
    msgs = out["messages"]
    assert msgs and msgs[0]["role"] == "user"
    input_results = {
        b["tool_use_id"] for m in original["messages"] if isinstance(m["content"], list)
        for b in m["content"] if b["type"] == "tool_result"
    }
    for i, m in enumerate(msgs):
        blocks = m["content"] if isinstance(m["content"], list) else []
        assert blocks or isinstance(m["content"], str), "empty content"
        kinds = [b["type"] for b in blocks]
        if m["role"] == "assistant":
            # thinking blocks come first
            seen_other = False
            for k in kinds:
                if k in ("thinking", "redacted_thinking"):
                    assert not seen_other, "thinking block after another block"
                else:
                    seen_other = True
            for b in blocks:
                if b["type"] == "tool_use" and b["id"] in input_results:
                    nxt = msgs[i + 1]
                    assert any(x["type"] == "tool_result" and x["tool_use_id"] == b["id"] for x in nxt["content"])
        results = [b for b in blocks if b["type"] == "tool_result"]
        if results:
            assert i > 0 and msgs[i - 1]["role"] == "assistant"
            prev_ids = {b["id"] for b in msgs[i - 1]["content"] if b["type"] == "tool_use"}
            assert {b["tool_use_id"] for b in results} <= prev_ids
            assert kinds[: len(results)] == ["tool_result"] * len(results), "tool_result not first"


def _check_carried(out: dict, body: dict) -> None:
    for k, v in body.items():
        if k != "messages":
            assert out[k] == v
    assert set(out) == set(body)


ANTHROPIC = [oc.anthropic_strips_thinking, oc.anthropic_shortens_thinking, oc.anthropic_window_right]


@pytest.mark.parametrize("fn", ANTHROPIC, ids=lambda f: f.__name__)
@pytest.mark.parametrize("make", BODIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("budget", BUDGETS)
def test_anthropic_common(fn, make, budget):
    body = make()
    snapshot = copy.deepcopy(body)
    out = fn(body, budget)
    assert body == snapshot, "input mutated"
    _check_carried(out, body)
    _check_valid_request(out, body)
    msgs = body["messages"]
    starts = _exchange_starts(msgs)
    # The newest exchange is always there (as a suffix), modulo thinking edits.
    last = msgs[starts[-1]:]
    assert [_no_thinking(m) for m in out["messages"][-len(last):]] == [_no_thinking(m) for m in last]


@pytest.mark.parametrize("make", BODIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("budget", BUDGETS)
def test_anthropic_strips_thinking(make, budget):
    body = make()
    out = oc.anthropic_strips_thinking(body, budget)
    start = _expected_start(body, budget)
    expected = [_no_thinking(m) for m in body["messages"][start:]]
    assert out["messages"] == expected
    assert not any(_thinking_blocks(m) for m in out["messages"])
    # The pending tool-use turn's thinking (the last assistant message's) is gone.
    last_assistant = [m for m in out["messages"] if m["role"] == "assistant"][-1]
    assert any(b["type"] == "tool_use" and b["id"] == "toolu_03" for b in last_assistant["content"])
    assert not _thinking_blocks(last_assistant)


@pytest.mark.parametrize("make", BODIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("budget", BUDGETS)
def test_anthropic_shortens_thinking(make, budget):
    body = make()
    out = oc.anthropic_shortens_thinking(body, budget)
    start = _expected_start(body, budget)
    kept = body["messages"][start:]
    assert len(out["messages"]) == len(kept)
    edited = 0
    for got, want in zip(out["messages"], kept):
        assert _no_thinking(got) == _no_thinking(want)
        g, w = _thinking_blocks(got), _thinking_blocks(want)
        assert len(g) == len(w)
        for gb, wb in zip(g, w):
            if wb["type"] == "redacted_thinking":
                assert gb == wb
            else:
                assert gb["signature"] == wb["signature"]
                assert gb["thinking"] == wb["thinking"][:40]
                assert gb["thinking"] != wb["thinking"]  # every thinking text here is over 40 chars
                edited += 1
    assert edited >= 1  # at least the pending turn's


@pytest.mark.parametrize("make", BODIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("budget", BUDGETS)
def test_anthropic_window_right(make, budget):
    body = make()
    out = oc.anthropic_window_right(body, budget)
    msgs = body["messages"]
    starts = _exchange_starts(msgs)
    n = len(out["messages"])
    start = len(msgs) - n
    assert start in starts
    for got, want in zip(out["messages"], msgs[start:]):
        # Byte-exact, or (only in a finished earlier exchange) the same with whole thinking blocks dropped.
        if got != want:
            assert want["role"] == "assistant"
            assert msgs.index(want) < starts[-1]
            assert got == _no_thinking(want)
    # Every thinking block that comes back is byte-exact (same text and signature, same place).
    for got, want in zip(out["messages"], msgs[start:]):
        g = _thinking_blocks(got)
        assert g == [] or g == _thinking_blocks(want)
    # The newest exchange, with the pending / just-answered tool-use turn, is verbatim.
    assert out["messages"][-(len(msgs) - starts[-1]):] == msgs[starts[-1]:]
    last_assistant = [m for m in out["messages"] if m["role"] == "assistant"][-1]
    assert _thinking_blocks(last_assistant) == _thinking_blocks(_PENDING_ASSISTANT)
    # Fits, unless only the newest exchange is kept; and is maximal.
    if start != starts[-1]:
        assert _tok(out) <= _target(budget)
    if start != 0:
        prev = starts[starts.index(start) - 1]
        older = msgs[prev:start]
        assert _tok(_with_messages(body, older + out["messages"])) > _target(budget)
        slim = [_no_thinking(m) if m["role"] == "assistant" else m for m in older]
        assert _tok(_with_messages(body, slim + out["messages"])) > _target(budget)


def test_anthropic_window_right_drops_only_whole_old_thinking_somewhere():
    """Some budget makes it keep an older exchange with its thinking dropped whole (never edited)."""
    body = body_answered()
    msgs = body["messages"]
    seen = False
    for budget in range(0, 4000, 5):
        out = oc.anthropic_window_right(body, budget)
        start = len(msgs) - len(out["messages"])
        for got, want in zip(out["messages"], msgs[start:]):
            if got != want:
                assert got == _no_thinking(want) and _thinking_blocks(want)
                seen = True
    assert seen


def test_anthropic_window_right_keeps_everything_when_room():
    body = body_partial()
    assert oc.anthropic_window_right(body, 10**6) == body


def test_anthropic_tiny_budget_keeps_newest_exchange():
    body = body_pending()
    out = oc.anthropic_window_right(body, 0)
    assert out["messages"] == body["messages"][-2:]
    assert out["messages"][0]["role"] == "user"


# --------------------------------------------------------------------------------------------------
# Responses items
# --------------------------------------------------------------------------------------------------

_ENC_PAD = "gAAAAABoX2k1" + "QmFzZTY0T3BhcXVlQmxvYg" * 6 + "=="
_ENC_NOPAD = "gAAAAABoX2k2" + "T3BhcXVlRW5jcnlwdGVkQ29udGVudA" * 5 + "xyz"


def _msg(role: str, text: str) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _reasoning(i: str, enc: str, summary: str | None = None) -> dict:
    s = [{"type": "summary_text", "text": summary}] if summary else []
    return {"type": "reasoning", "id": i, "summary": s, "encrypted_content": enc}


def _call(cid: str, name: str, args: dict) -> dict:
    return {"type": "function_call", "call_id": cid, "name": name, "arguments": json.dumps(args)}


def _output(cid: str, out: str) -> dict:
    return {"type": "function_call_output", "call_id": cid, "output": out}


def _compaction(i: str, enc: str) -> dict:
    return {"type": "compaction", "id": i, "encrypted_content": enc}


def items_pending() -> list[dict]:
    return [
        _compaction("cmp_01", _ENC_PAD),
        _msg("user", "Find out why the nightly build fails."),
        _reasoning("rs_01", _ENC_NOPAD + "a1"),
        _call("call_01", "run_build", {"target": "nightly"}),
        _output("call_01", "error: missing symbol compute_v2 in src/lib.rs\n" * 6),
        _reasoning("rs_02", _ENC_PAD.replace("gA", "hB"), "The build fails on a missing symbol."),
        _msg("assistant", "The build fails because compute_v2 is missing from src/lib.rs."),
        _msg("user", "Fix it and look at the git log."),
        _reasoning("rs_03", _ENC_NOPAD + "b2", "Read the file and the log in parallel."),
        _call("call_02", "read_file", {"path": "src/lib.rs"}),
        _call("call_03", "git_log", {"n": 5}),
        _output("call_02", "pub fn compute() -> u32 { 41 }\n" * 8),
        _output("call_03", "a1b2c3 rename compute_v2 to compute"),
        _reasoning("rs_04", _ENC_PAD.replace("gA", "iC")),
        _msg("assistant", "compute_v2 was renamed to compute in a1b2c3; I will add an alias."),
        _msg("user", "Go ahead."),
        _reasoning("rs_05", _ENC_NOPAD + "c3", "Apply the patch."),
        _call("call_04", "apply_patch", {"path": "src/lib.rs", "diff": "+pub use compute as compute_v2;"}),
    ]


def items_answered() -> list[dict]:
    return items_pending() + [_output("call_04", "patched")]


def items_two_compactions() -> list[dict]:
    """A developer message, two compaction items (the second mid-list), then turns."""
    items = items_pending()
    return (
        [_msg("developer", "You are a build engineer."), items[0]]
        + items[1:7]
        + [_compaction("cmp_02", _ENC_NOPAD + "zz")]
        + items[7:]
    )


ITEM_LISTS = [items_pending, items_answered, items_two_compactions]
RESPONSES = [oc.responses_drops_reasoning, oc.responses_rewrites_encrypted,
             oc.responses_drops_compaction, oc.responses_window_right]


def _is_subsequence(out: list[dict], items: list[dict]) -> bool:
    j = 0
    for it in items:
        if j < len(out) and out[j] == it:
            j += 1
    return j == len(out)


def _check_pairs(out: list[dict], items: list[dict]) -> None:
    answered = {it["call_id"] for it in items if it["type"] == "function_call_output"}
    seen_calls: set = set()
    kept_outputs = {it["call_id"] for it in out if it["type"] == "function_call_output"}
    for it in out:
        if it["type"] == "function_call":
            seen_calls.add(it["call_id"])
            if it["call_id"] in answered:
                assert it["call_id"] in kept_outputs, "call kept without its output"
        elif it["type"] == "function_call_output":
            assert it["call_id"] in seen_calls, "output before / without its call"


def _user_starts(items: list[dict]) -> list[int]:
    return [0] + [i for i, it in enumerate(items) if i and it["type"] == "message" and it["role"] == "user"]


def _pinned(it: dict) -> bool:
    return it["type"] == "compaction" or (it["type"] == "message" and it["role"] in ("system", "developer"))


def _window_from(items: list[dict], start: int) -> list[dict]:
    return [it for it in items[:start] if _pinned(it)] + items[start:]


def _expected_window(items: list[dict], budget: int) -> list[dict]:
    starts = _user_starts(items)
    fitting = [s for s in starts if _tok(_window_from(items, s)) <= _target(budget)]
    return _window_from(items, min(fitting) if fitting else starts[-1])


@pytest.mark.parametrize("fn", RESPONSES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("make", ITEM_LISTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("budget", BUDGETS)
def test_responses_common(fn, make, budget):
    items = make()
    snapshot = copy.deepcopy(items)
    out = fn(items, budget)
    assert items == snapshot, "input mutated"
    _check_pairs(out, items)
    # The newest turn's call is always there.
    assert any(it["type"] == "function_call" and it["call_id"] == "call_04" for it in out)


@pytest.mark.parametrize("make", ITEM_LISTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("budget", BUDGETS)
def test_responses_window_right(make, budget):
    items = make()
    out = oc.responses_window_right(items, budget)
    assert out == _expected_window(items, budget)
    assert _is_subsequence(out, items)  # every kept item byte-exact, order kept
    # Every compaction item is kept byte-exact, and (here) they come before every turn.
    comps = [it for it in items if it["type"] == "compaction"]
    assert [it for it in out if it["type"] == "compaction"] == comps
    if make is not items_two_compactions:
        assert out[0] == items[0] and out[0]["type"] == "compaction"
    # Each kept call / assistant message keeps the reasoning item right before it, byte-exact.
    for i, it in enumerate(items):
        if it["type"] == "reasoning" and it not in out:
            assert items[i + 1] not in out
    # The pending call's reasoning is there, byte-exact.
    pending_rs = next(it for it in items if it.get("id") == "rs_05")
    assert pending_rs in out
    # Fits unless only the newest turn is kept.
    non_pinned = [it for it in out if not _pinned(it)]
    if len(non_pinned) > len(items) - _user_starts(items)[-1]:
        assert _tok(out) <= _target(budget)


@pytest.mark.parametrize("make", ITEM_LISTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("budget", BUDGETS)
def test_responses_drops_reasoning(make, budget):
    items = make()
    out = oc.responses_drops_reasoning(items, budget)
    right = _expected_window(items, budget)
    assert out == [it for it in right if it["type"] != "reasoning"]
    assert not any(it["type"] == "reasoning" for it in out)
    assert any(it["type"] == "compaction" for it in out)


@pytest.mark.parametrize("make", ITEM_LISTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("budget", BUDGETS)
def test_responses_rewrites_encrypted(make, budget):
    items = make()
    out = oc.responses_rewrites_encrypted(items, budget)
    right = _expected_window(items, budget)
    assert len(out) == len(right)
    rewritten = 0
    for got, want in zip(out, right):
        if want["type"] in ("reasoning", "compaction"):
            assert {k: v for k, v in got.items() if k != "encrypted_content"} == \
                   {k: v for k, v in want.items() if k != "encrypted_content"}
            g, w = got["encrypted_content"], want["encrypted_content"]
            assert g != w
            assert g.replace("\n", "").rstrip("=") == w.rstrip("=")  # same text, re-encoded
            rewritten += 1
        else:
            assert got == want
    assert rewritten >= 2  # at least the compaction item and the pending call's reasoning


def test_responses_rewrites_encrypted_both_ways():
    items = items_answered()
    out = oc.responses_rewrites_encrypted(items, 10**6)
    by_id = {it["id"]: it["encrypted_content"] for it in out if "id" in it}
    assert by_id["cmp_01"] == _ENC_PAD.rstrip("=")  # padding stripped
    assert "\n" in by_id["rs_01"] and by_id["rs_01"].endswith("\n")  # re-wrapped


@pytest.mark.parametrize("make", ITEM_LISTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("budget", BUDGETS)
def test_responses_drops_compaction(make, budget):
    items = make()
    out = oc.responses_drops_compaction(items, budget)
    right = _expected_window(items, budget)
    assert out == [it for it in right if it["type"] != "compaction"]
    assert not any(it["type"] == "compaction" for it in out)
    pending_rs = next(it for it in items if it.get("id") == "rs_05")
    assert pending_rs in out


def test_responses_window_right_keeps_everything_when_room():
    for make in ITEM_LISTS:
        items = make()
        assert oc.responses_window_right(items, 10**6) == items


def test_responses_tiny_budget_keeps_compaction_and_newest_turn():
    items = items_pending()
    out = oc.responses_window_right(items, 0)
    assert out == [items[0]] + items[15:]


def test_responses_budgets_actually_vary_the_window():
    sizes = {len(oc.responses_window_right(items_answered(), b)) for b in BUDGETS}
    assert len(sizes) >= 3
    sizes = {len(oc.anthropic_window_right(body_answered(), b)["messages"]) for b in BUDGETS}
    assert len(sizes) >= 3


def test_every_fixture_says_correct_or_broken():
    for name in oc.__all__:
        doc = getattr(oc, name).__doc__ or ""
        assert doc.startswith(("CORRECT:", "BROKEN:")), name
    assert "blind" in (oc.__doc__ or "")
