"""Self-checks of tests/fixtures/dialect_compactors.py: each fixture does what its docstring says.

These check the fixtures on hand-written requests with checks of their own (standard library and
pytest only), not with the harness's oracles: the pair-safe trimmers never split a tool pair, fit the
budget and carry every identifier of what they drop; the broken ones really do break a pair.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import json
import re
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent / "fixtures" / "dialect_compactors.py"
_spec = importlib.util.spec_from_file_location("dialect_compactors_selfcheck_module", _PATH)
dc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dc)

BUDGETS = [10, 40, 80, 120, 160, 200, 260, 320, 400, 500, 700, 1000, 5000]


# --------------------------------------------------------------------------------------------------
# An independent token estimate and identifier reading
# --------------------------------------------------------------------------------------------------

def _n(text) -> int:
    return len(text.split()) if isinstance(text, str) else 0


def _anthropic_tokens(request: dict) -> int:
    system = request.get("system")
    total = 0
    if system:
        text = system if isinstance(system, str) else " ".join(b["text"] for b in system)
        total += 4 + _n(text)
    for m in request["messages"]:
        total += 4
        content = m["content"]
        if isinstance(content, str):
            total += _n(content)
            continue
        for b in content:
            if b["type"] == "text":
                total += _n(b["text"])
            elif b["type"] == "tool_use":
                total += _n(b["name"]) + _n(json.dumps(b["input"]))
            elif b["type"] == "tool_result":
                total += _n(b["content"])
    return total


def _responses_tokens(items: list[dict]) -> int:
    total = 0
    for it in items:
        total += 4
        if it["type"] == "message":
            total += sum(_n(p["text"]) for p in it["content"])
        elif it["type"] == "function_call":
            total += _n(it["name"]) + _n(it["arguments"])
        elif it["type"] == "function_call_output":
            total += _n(it["output"])
    return total


_TOKEN = re.compile(r"[A-Za-z0-9_./-]+")


def _identifier_tokens(text: str) -> set[str]:
    """Identifier-like tokens by a regex reading (not the fixture's chunk reading)."""
    found = set()
    for tok in _TOKEN.findall(text):
        tok = tok.strip("./-")
        if tok and (any(c.isdigit() for c in tok) or any(c in tok for c in "_-/.")):
            found.add(tok)
    return found


def _anthropic_message_strings(message: dict) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    out = []
    for b in content:
        if b["type"] == "text":
            out.append(b["text"])
        elif b["type"] == "tool_use":
            out.extend(str(v) for kv in b["input"].items() for v in kv)
        elif b["type"] == "tool_result":
            out.append(b["content"])
    return out


def _responses_item_strings(item: dict) -> list[str]:
    if item["type"] == "message":
        return [p["text"] for p in item["content"]]
    if item["type"] == "function_call":
        return [str(v) for kv in json.loads(item["arguments"]).items() for v in kv]
    return [item["output"]]


# --------------------------------------------------------------------------------------------------
# Structure checks
# --------------------------------------------------------------------------------------------------

def _anthropic_problems(request: dict) -> list[str]:
    """What makes an Anthropic request structurally invalid (empty when it is valid)."""
    problems = []
    msgs = request["messages"]
    if not msgs:
        return ["no messages"]
    if msgs[0]["role"] != "user":
        problems.append("first message is not from the user")
    for i, m in enumerate(msgs):
        blocks = m["content"] if isinstance(m["content"], list) else []
        kinds = [b["type"] for b in blocks]
        if "tool_result" in kinds:
            if m["role"] != "user":
                problems.append(f"tool_result in a {m['role']} message {i}")
            n = kinds.count("tool_result")
            if kinds[:n] != ["tool_result"] * n:
                problems.append(f"message {i}: tool_result blocks are not first")
            prev = msgs[i - 1] if i > 0 else None
            prev_uses = {
                b["id"] for b in (prev["content"] if prev and isinstance(prev["content"], list) else [])
                if b["type"] == "tool_use"
            }
            for b in blocks:
                if b["type"] == "tool_result" and b["tool_use_id"] not in prev_uses:
                    problems.append(f"message {i}: tool_result {b['tool_use_id']} without its tool_use")
        uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
        if uses:
            nxt = msgs[i + 1] if i + 1 < len(msgs) else None
            answered = {
                b["tool_use_id"] for b in (nxt["content"] if nxt and isinstance(nxt["content"], list) else [])
                if b["type"] == "tool_result"
            }
            for u in uses:
                if u not in answered:
                    problems.append(f"message {i}: tool_use {u} without its tool_result")
    return problems


def _responses_problems(items: list[dict]) -> list[str]:
    """Calls without outputs and outputs without calls (empty when every call is paired)."""
    problems = []
    calls_seen = set()
    outputs = {it["call_id"] for it in items if it["type"] == "function_call_output"}
    for it in items:
        if it["type"] == "function_call":
            calls_seen.add(it["call_id"])
            if it["call_id"] not in outputs:
                problems.append(f"call {it['call_id']} without its output")
        elif it["type"] == "function_call_output" and it["call_id"] not in calls_seen:
            problems.append(f"output {it['call_id']} without its call")
    return problems


# --------------------------------------------------------------------------------------------------
# Hand-written sessions
# --------------------------------------------------------------------------------------------------

SYSTEM = "You are a coding agent working in repo acme/widgets; never push to branch release-2.4 directly."


PROSE = ("and while you are there please keep the behaviour of the public functions exactly as it is today "
         "because other teams depend on it and we cannot change their code this week")
LISTING = "\n".join(f"    line {k}: pass  # nothing interesting happens in this part of the file" for k in range(4))


def _anthropic_session(rounds: int = 8) -> dict:
    messages = [{"role": "user", "content": "Please fix the failing test tests/test_parser.py and keep "
                                           "MAX_RETRIES=3 as it is; the ticket is JIRA-4711, " + PROSE}]
    for r in range(rounds):
        tid = f"toolu_{r:02d}"
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Step {r}: I will read the module src/mod_{r}.py first to see what it does."},
            {"type": "tool_use", "id": tid, "name": "read_file",
             "input": {"path": f"src/mod_{r}.py", "line_start": 10 * r}},
        ]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid,
             "content": f"def handler_{r}(x):\n    return x + {r}  # see docs/notes-{r}.md\n" + LISTING,
             "is_error": r == 3},
        ]})
        messages.append({"role": "assistant", "content": f"Round {r} done; handler_{r} looks fine to me and the "
                                                         f"checksum abc{r}def matches what the docs say it should be."})
        messages.append({"role": "user", "content": f"Thanks. Now look at config/settings_{r}.yaml please, " + PROSE})
    return {"system": SYSTEM, "messages": messages, "model": "some-model", "max_tokens": 1024}


def _responses_session(rounds: int = 8) -> list[dict]:
    items = [
        {"type": "message", "role": "system", "content": [{"type": "input_text", "text": SYSTEM}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                         "text": "Fix tests/test_parser.py; ticket JIRA-4711, " + PROSE}]},
    ]
    for r in range(rounds):
        cid = f"call_{r:02d}"
        items.append({"type": "function_call", "call_id": cid, "name": "read_file",
                      "arguments": json.dumps({"path": f"src/mod_{r}.py", "line_start": 10 * r})})
        if r % 3 == 2:  # a parallel call in some rounds
            items.append({"type": "function_call", "call_id": cid + "b", "name": "grep",
                          "arguments": json.dumps({"pattern": f"TODO_{r}", "dir": "src/"})})
        items.append({"type": "function_call_output", "call_id": cid,
                      "output": f"def handler_{r}(x): return x + {r}  # docs/notes-{r}.md\n" + LISTING})
        if r % 3 == 2:
            items.append({"type": "function_call_output", "call_id": cid + "b",
                          "output": f"src/mod_{r}.py:12: TODO_{r} remove the shim once the migration is over"})
        items.append({"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": f"Round {r}: handler_{r} checked, v{r}.0 is fine and needs no change."}]})
        items.append({"type": "message", "role": "user",
                      "content": [{"type": "input_text", "text": f"Next check config/settings_{r}.yaml, " + PROSE}]})
    return items


def _summary_text_anthropic(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


# --------------------------------------------------------------------------------------------------
# Docstrings and identities
# --------------------------------------------------------------------------------------------------

def test_every_fixture_has_a_one_line_docstring_saying_correct_or_broken():
    for name in dc.__all__:
        doc = inspect.getdoc(getattr(dc, name))
        assert doc and "\n" not in doc, name
        assert "correct" in doc.lower() or "broken" in doc.lower(), name


@pytest.mark.parametrize("budget", [1, 100, 10_000])
def test_identities_return_an_equal_deep_copy(budget):
    req = _anthropic_session(3)
    out = dc.anthropic_identity(req, budget)
    assert out == req and out is not req and out["messages"] is not req["messages"]
    out["messages"][1]["content"][1]["input"]["path"] = "changed"
    assert req == _anthropic_session(3)

    items = _responses_session(3)
    got = dc.responses_identity(items, budget)
    assert got == items and got is not items and got[0] is not items[0]
    got[0]["content"][0]["text"] = "changed"
    assert items == _responses_session(3)


# --------------------------------------------------------------------------------------------------
# Anthropic pair-safe trimmer
# --------------------------------------------------------------------------------------------------

def test_anthropic_trimmer_keeps_everything_when_it_fits():
    req = _anthropic_session(2)
    assert dc.anthropic_pair_safe_trimmer(req, 10 * _anthropic_tokens(req)) == req


@pytest.mark.parametrize("budget", BUDGETS)
def test_anthropic_trimmer_is_pair_safe_fits_and_carries_identifiers(budget):
    req = _anthropic_session(8)
    before = copy.deepcopy(req)
    out = dc.anthropic_pair_safe_trimmer(req, budget)
    assert req == before  # input untouched
    assert out["system"] == SYSTEM and out["model"] == "some-model" and out["max_tokens"] == 1024
    assert _anthropic_problems(out) == []

    msgs = out["messages"]
    if _anthropic_tokens(req) <= 0.7 * budget:
        assert msgs == req["messages"]
        return
    summary, kept = msgs[0], msgs[1:]
    assert summary["role"] == "user"
    text = _summary_text_anthropic(summary)
    assert text.startswith("Earlier (summarised):")
    # The rest is a verbatim suffix of the original, starting on a user message.
    dropped = req["messages"][: len(req["messages"]) - len(kept)]
    assert kept == req["messages"][len(dropped):]
    assert not kept or kept[0]["role"] == "user"
    assert len(text.splitlines()) == 1 + len(dropped)  # one line per dropped message
    for m in dropped:
        for s in _anthropic_message_strings(m):
            for tok in _identifier_tokens(s):
                assert tok in text, (tok, budget)
    if kept:
        assert _anthropic_tokens(out) <= 0.7 * budget
    else:  # the summary alone did not leave room for even one exchange
        with_one = {"system": SYSTEM, "messages": [summary, req["messages"][-1]]}
        assert _anthropic_tokens(with_one) > 0.7 * budget or req["messages"][-1]["role"] != "user"


def test_anthropic_trimmer_keeps_a_summary_and_a_tail_on_mid_budgets():
    req = _anthropic_session(8)
    kept_counts = {len(dc.anthropic_pair_safe_trimmer(req, b)["messages"]) - 1 for b in (600, 800, 1000, 1200)}
    assert len(kept_counts) > 1 and all(0 < k < len(req["messages"]) for k in kept_counts)


def test_anthropic_trimmer_never_starts_on_an_orphaned_tool_result():
    req = _anthropic_session(8)
    seen_starts = set()
    for budget in range(20, 900, 7):
        out = dc.anthropic_pair_safe_trimmer(req, budget)
        assert _anthropic_problems(out) == [], budget
        if len(out["messages"]) > 1:
            first = out["messages"][1]
            seen_starts.add(isinstance(first["content"], str))
            assert not (isinstance(first["content"], list) and first["content"][0]["type"] == "tool_result")
    assert seen_starts  # some budget did keep messages after the summary


def test_anthropic_trimmer_puts_tool_results_first_and_drops_orphans():
    req = {"system": [{"type": "text", "text": "sys prompt v1"}], "messages": [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_gone",
                                      "content": "stale output from job_77"}]},
        {"role": "user", "content": "word " * 60 + "build_id=991"},
        {"role": "assistant", "content": "noted"},
        {"role": "user", "content": "run the unit tests"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "run",
                                           "input": {"cmd": "make test-unit"}}]},
        {"role": "user", "content": [{"type": "text", "text": "here it is"},
                                     {"type": "tool_result", "tool_use_id": "t1", "content": "ok 12 passed"}]},
    ]}
    out = dc.anthropic_pair_safe_trimmer(req, 100)
    assert _anthropic_problems(out) == []
    assert out["system"] == req["system"]
    assert [m["content"] for m in out["messages"][1:3]] == ["run the unit tests", req["messages"][4]["content"]]
    last = out["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]
    text = _summary_text_anthropic(out["messages"][0])
    assert "job_77" in text and "build_id=991" in text
    assert "toolu_gone" not in json.dumps(out["messages"][1:])


def test_anthropic_trimmer_keeps_only_the_summary_when_nothing_else_fits():
    req = _anthropic_session(4)
    out = dc.anthropic_pair_safe_trimmer(req, 10)
    assert len(out["messages"]) == 1 and out["system"] == SYSTEM
    text = _summary_text_anthropic(out["messages"][0])
    for m in req["messages"]:
        for s in _anthropic_message_strings(m):
            for tok in _identifier_tokens(s):
                assert tok in text


# --------------------------------------------------------------------------------------------------
# Anthropic count trimmer (broken on purpose)
# --------------------------------------------------------------------------------------------------

def test_anthropic_count_trimmer_fits_and_keeps_a_suffix():
    req = _anthropic_session(8)
    for budget in (60, 200, 600):
        out = dc.anthropic_count_trimmer(req, budget)
        assert out["system"] == SYSTEM
        kept = out["messages"]
        assert kept == req["messages"][len(req["messages"]) - len(kept):]
        assert len(kept) == 1 or _anthropic_tokens(out) <= 0.7 * budget


def test_anthropic_count_trimmer_splits_a_pair_on_a_crafted_request():
    big_input = {"query": " ".join(f"w{i}" for i in range(200))}
    req = {"system": "s", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": big_input}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "three results here"}]},
    ]}
    out = dc.anthropic_count_trimmer(req, 40)
    assert [m["role"] for m in out["messages"]] == ["user"]
    assert any("without its tool_use" in p for p in _anthropic_problems(out))
    # ...and the pair-safe trimmer on the same request does not.
    assert _anthropic_problems(dc.anthropic_pair_safe_trimmer(req, 40)) == []


def test_anthropic_count_trimmer_can_start_on_an_assistant_message():
    req = {"messages": [
        {"role": "user", "content": "long " * 300},
        {"role": "assistant", "content": "short answer"},
    ]}
    out = dc.anthropic_count_trimmer(req, 40)
    assert [m["role"] for m in out["messages"]] == ["assistant"]
    assert "first message is not from the user" in _anthropic_problems(out)


# --------------------------------------------------------------------------------------------------
# Responses pair-safe trimmer
# --------------------------------------------------------------------------------------------------

def test_responses_trimmer_keeps_everything_when_it_fits():
    items = _responses_session(2)
    assert dc.responses_pair_safe_trimmer(items, 10 * _responses_tokens(items)) == items


@pytest.mark.parametrize("budget", BUDGETS)
def test_responses_trimmer_is_pair_safe_fits_and_carries_identifiers(budget):
    items = _responses_session(8)
    before = copy.deepcopy(items)
    out = dc.responses_pair_safe_trimmer(items, budget)
    assert items == before
    assert _responses_problems(out) == []
    assert out[0] == items[0]  # the system message
    if _responses_tokens(items) <= 0.7 * budget:
        assert out == items
        return
    summary, kept = out[1], out[2:]
    assert summary["type"] == "message" and summary["role"] == "user"
    assert [p["type"] for p in summary["content"]] == ["input_text"]
    text = summary["content"][0]["text"]
    assert text.startswith("Earlier (summarised):")
    rest = items[1:]
    dropped = rest[: len(rest) - len(kept)]
    assert kept == rest[len(dropped):]
    assert len(text.splitlines()) == 1 + len(dropped)
    for it in dropped:
        for s in _responses_item_strings(it):
            for tok in _identifier_tokens(s):
                assert tok in text, (tok, budget)
    if kept:
        assert _responses_tokens(out) <= 0.7 * budget


def test_responses_trimmer_keeps_a_summary_and_a_tail_on_mid_budgets():
    items = _responses_session(8)
    kept_counts = {len(dc.responses_pair_safe_trimmer(items, b)) - 2 for b in (600, 800, 1000, 1200)}
    assert len(kept_counts) > 1 and all(0 < k < len(items) - 1 for k in kept_counts)


def test_responses_trimmer_drops_orphans_into_the_summary():
    items = [
        {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "sys"}]},
        {"type": "function_call_output", "call_id": "gone", "output": "stale result job_77"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "pad " * 80}]},
        {"type": "function_call", "call_id": "c1", "name": "run", "arguments": "{\"cmd\": \"make lint-all\"}"},
        {"type": "function_call_output", "call_id": "c1", "output": "0 problems"},
    ]
    out = dc.responses_pair_safe_trimmer(items, 60)
    assert _responses_problems(out) == []
    assert out[0] == items[0] and out[-2:] == items[-2:]
    assert "job_77" in out[1]["content"][0]["text"]


# --------------------------------------------------------------------------------------------------
# Responses old-call dropper (broken on purpose)
# --------------------------------------------------------------------------------------------------

def test_responses_dropper_leaves_outputs_without_their_calls():
    items = _responses_session(5)
    out = dc.responses_drop_old_calls(items, 100_000)  # no trimming needed: only the old calls go
    problems = _responses_problems(out)
    assert problems and all("without its call" in p for p in problems)
    calls = [it["call_id"] for it in out if it["type"] == "function_call"]
    assert calls == ["call_03", "call_04"]  # the last 2 rounds keep their calls
    assert [it for it in out if it["type"] != "function_call"] == [
        it for it in items if it["type"] != "function_call"
    ]


def test_responses_dropper_trims_oldest_to_fit_and_keeps_system():
    items = _responses_session(8)
    out = dc.responses_drop_old_calls(items, 150)
    assert out[0] == items[0]
    assert _responses_tokens(out) <= 0.7 * 150
    assert out[-1] == items[-1]
    assert any("without its call" in p for p in _responses_problems(dc.responses_drop_old_calls(items, 1000)))


# --------------------------------------------------------------------------------------------------
# A call still in flight at the end (its result comes right after the compaction)
# --------------------------------------------------------------------------------------------------

def test_anthropic_trimmer_keeps_a_tool_use_still_in_flight_at_the_end():
    req = _anthropic_session(8)
    req["messages"].append({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_live", "name": "run_tests", "input": {"target": "tests/"}}]})
    out = dc.anthropic_pair_safe_trimmer(req, 300)
    last = out["messages"][-1]
    assert last["role"] == "assistant" and [b.get("id") for b in last["content"]] == ["toolu_live"]
    # Its result, appended as the runtime will, makes a valid request.
    out["messages"].append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_live", "content": "12 passed"}]})
    assert _anthropic_problems(out) == []


def test_responses_trimmer_keeps_calls_still_in_flight_at_the_end():
    items = _responses_session(8)
    items += [{"type": "function_call", "call_id": "call_live", "name": "run_tests", "arguments": "{}"},
              {"type": "function_call", "call_id": "call_live_b", "name": "grep", "arguments": "{}"}]
    out = dc.responses_pair_safe_trimmer(items, 300)
    assert [it.get("call_id") for it in out[-2:]] == ["call_live", "call_live_b"]
    out += [{"type": "function_call_output", "call_id": c, "output": "done"} for c in ("call_live", "call_live_b")]
    assert _responses_problems(out) == []
