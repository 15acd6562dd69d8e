"""Self-checks of tests/fixtures/background_jobs.py: each compactor does what its docstring says.

The inputs are hand-built here (no strategies), and the checks are the test's own (no oracles, no
harness run): the phantom call really has the job handle as its id and survives the next round, the
stale ledger keeps a finished job open, the count window keeps 3 + 7, the all-pending summary calls a
finished job running; the correct ones never make a call whose id is a job handle, mark a finished
job finished, keep the dropped identifiers, fit the budget and never split a tool call from its result.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

from harness import (
    CompactionRequest,
    CompactionResult,
    Fact,
    FactKind,
    Polarity,
    Role,
    ToolCall,
    Turn,
    count_tokens,
    kind_def,
    message_tokens,
    to_messages,
)

_PATH = Path(__file__).resolve().parent / "fixtures" / "background_jobs.py"
_spec = importlib.util.spec_from_file_location("background_jobs_selfcheck_module", _PATH)
bj = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bj)

JOB, JOB_CALL = "job-4411-ab", "call_7f2a"
JOB2, JOB2_CALL = "bg_20931", "call_b3e0"
TRAIL = "call_9c1d"
TRAIL_ARGS = '{"suite": "unit", "shard": 3}'

# --------------------------------------------------------------------------------------------------
# Rich inputs: a session of two compactions
# --------------------------------------------------------------------------------------------------

PROHIBITION = Fact("P1", FactKind.PROHIBITION, ("prod-eu-1",), 0, Polarity.FORBID, details=(("category", "cluster"),))
JOB_TAG = Fact("J1", FactKind.IN_FLIGHT_CALL, (JOB,), 2,
               details=(("arguments", '{"ref": "v2.4.1"}'), ("call_id", JOB_CALL), ("mode", "background"),
                        ("name", "start_build")))
TRAIL_TAG = Fact("C1", FactKind.IN_FLIGHT_CALL, (TRAIL,), 5,
                 details=(("arguments", TRAIL_ARGS), ("mode", "trailing"), ("name", "run_tests")))

ROUND1 = (
    Turn(Role.USER, "Build release v2.4.1 of acme/web. Never deploy to prod-eu-1."),
    Turn(Role.ASSISTANT, "Starting the build.", tool_calls=(ToolCall(JOB_CALL, "start_build", '{"ref": "v2.4.1"}'),)),
    Turn(Role.TOOL, f"Build accepted as background job {JOB}; it is running, no result yet.", tool_call_id=JOB_CALL),
    Turn(Role.ASSISTANT, "The build runs in the background."),
    Turn(Role.USER, "Meanwhile run the unit tests."),
    Turn(Role.ASSISTANT, "", tool_calls=(ToolCall(TRAIL, "run_tests", TRAIL_ARGS),)),
)
TAGS1 = (PROHIBITION, JOB_TAG, TRAIL_TAG)

AFTER1 = (  # what happens after the first compaction: the trailing call's result, then the job finishes
    Turn(Role.TOOL, "212 passed, 0 failed.", tool_call_id=TRAIL),
    Turn(Role.USER, f"Notification: background job {JOB} finished successfully (artifact build-991.tar.gz)."),
    Turn(Role.ASSISTANT, "The build is done."),
)
TAGS2 = (PROHIBITION,)


def request1(budget: int = 400) -> CompactionRequest:
    return CompactionRequest(ROUND1, budget, TAGS1)


def request2(first: CompactionResult, budget: int = 400) -> CompactionRequest:
    return CompactionRequest(tuple(first.messages) + AFTER1, budget, TAGS2, previous_output=len(first.messages))


def session(fn, budget: int = 400) -> tuple[CompactionRequest, CompactionResult, CompactionRequest, CompactionResult]:
    r1 = request1(budget)
    before1 = (r1, hash(r1))
    out1 = fn(r1)
    assert (r1, hash(r1)) == before1
    r2 = request2(out1, budget)
    before2 = hash(r2)
    out2 = fn(r2)
    assert hash(r2) == before2
    return r1, out1, r2, out2


def calls_of(result: CompactionResult) -> list[ToolCall]:
    return [c for t in result.messages for c in t.tool_calls]


def text_of(result: CompactionResult) -> str:
    return "\n".join(t.text for t in result.messages)


def size(result: CompactionResult) -> int:
    return (sum(message_tokens(m) for m in to_messages(tuple(result.messages)))
            + sum(count_tokens(e.render()) for e in result.ledger or ()))


def statement(fact: Fact) -> str:
    return kind_def(fact.kind).statement(fact)


# --------------------------------------------------------------------------------------------------
# rich_phantom_call
# --------------------------------------------------------------------------------------------------

def test_phantom_call_has_the_job_handle_as_id_and_persists():
    _, out1, _, out2 = session(bj.rich_phantom_call)
    ids1 = [c.id for c in calls_of(out1)]
    assert JOB in ids1 and TRAIL in ids1  # the trailing call (right) and the phantom one (wrong)
    phantom = next(c for c in calls_of(out1) if c.id == JOB)
    assert phantom.name == "start_build"
    assert JOB_CALL not in ids1  # the real starting call is answered and not re-made
    # the next round: the tag is gone and the job finished, yet the phantom call is still there
    ids2 = [c.id for c in calls_of(out2)]
    assert ids2 == [JOB]
    assert TRAIL not in ids2  # the answered trailing call is dropped, as it should be


def test_phantom_call_states_every_tag_and_puts_calls_last():
    _, out1, _, out2 = session(bj.rich_phantom_call)
    for fact in TAGS1:
        assert statement(fact) in out1.messages[0].text
    assert statement(PROHIBITION) in out2.messages[0].text
    assert statement(JOB_TAG) not in out2.messages[0].text
    for out in (out1, out2):
        assert out.messages[0].role is Role.SYSTEM
        assert out.messages[-1].role is Role.ASSISTANT and out.messages[-1].tool_calls
        assert size(out) <= 400


# --------------------------------------------------------------------------------------------------
# rich_stale_ledger
# --------------------------------------------------------------------------------------------------

def _open_in_flight(result: CompactionResult) -> set[str]:
    return {e.literals[0] for e in result.ledger or () if e.kind == "in_flight_call" and e.status == "open"}


def test_stale_ledger_keeps_a_finished_job_open():
    _, out1, _, out2 = session(bj.rich_stale_ledger)
    assert _open_in_flight(out1) == {JOB, TRAIL}
    entry = next(e for e in out1.ledger if e.literals == (JOB,))
    assert entry.detail("name") == "start_build"
    # after the notification the job is finished and untagged, but still carried as in flight
    assert JOB in _open_in_flight(out2)
    assert TRAIL not in _open_in_flight(out2)  # the answered trailing call is gone: right
    assert not calls_of(out1) and not calls_of(out2)


def test_stale_ledger_states_tags_and_remembers_placeholders_without_tags():
    _, out1, _, out2 = session(bj.rich_stale_ledger)
    for fact in TAGS1:
        assert statement(fact) in text_of(out1)
    assert statement(PROHIBITION) in text_of(out2)
    assert statement(JOB_TAG) not in text_of(out2)  # the prose is right; only the ledger is stale
    # a job seen only in a placeholder (never tagged) enters the ledger and stays there next round
    turns = ROUND1[:3] + (
        Turn(Role.ASSISTANT, "Also reindex.", tool_calls=(ToolCall(JOB2_CALL, "reindex", '{"index": "docs"}'),)),
        Turn(Role.TOOL, f"Queued as {JOB2}.", tool_call_id=JOB2_CALL),
        Turn(Role.USER, f"{JOB2} completed."),
    )
    first = bj.rich_stale_ledger(CompactionRequest(turns, 400, (PROHIBITION, JOB_TAG)))
    assert {JOB, JOB2} <= _open_in_flight(first)
    again = bj.rich_stale_ledger(CompactionRequest(tuple(first.messages) + (Turn(Role.USER, "Next?"),), 400,
                                                   (PROHIBITION,), previous_output=len(first.messages)))
    assert {JOB, JOB2} <= _open_in_flight(again)


# --------------------------------------------------------------------------------------------------
# rich_jobs_right
# --------------------------------------------------------------------------------------------------

def test_jobs_right_rebuilds_only_the_trailing_call():
    _, out1, _, out2 = session(bj.rich_jobs_right)
    assert [(c.id, c.name, c.arguments) for c in calls_of(out1)] == [(TRAIL, "run_tests", TRAIL_ARGS)]
    assert out1.messages[-1].tool_calls and out1.messages[-1].role is Role.ASSISTANT
    assert not calls_of(out2)
    for out in (out1, out2):
        assert all(c.id not in (JOB, JOB2) for c in calls_of(out))
        assert out.ledger is None
        assert size(out) <= 400


def test_jobs_right_states_every_tag_in_one_message_and_drops_a_finished_job():
    _, out1, _, out2 = session(bj.rich_jobs_right)
    assert sum(1 for t in out1.messages if t.text) == 1
    for fact in TAGS1:
        assert statement(fact) in out1.messages[0].text
    assert JOB in out1.messages[0].text and "still running" in out1.messages[0].text
    assert statement(PROHIBITION) in out2.messages[0].text
    assert JOB not in text_of(out2)  # nothing carried for the job whose tag is gone


def test_jobs_right_skips_answered_trailing_tags_and_reads_modeless_tags():
    # a trailing tag whose answer is already in the turns is not re-made
    answered = ROUND1 + (Turn(Role.TOOL, "ok", tool_call_id=TRAIL),)
    out = bj.rich_jobs_right(CompactionRequest(answered, 400, TAGS1))
    assert not calls_of(out)
    # the worked example's tag has no mode: a trailing call
    modeless = Fact("C1", FactKind.IN_FLIGHT_CALL, (TRAIL,), 5, details=(("arguments", TRAIL_ARGS), ("name", "run_tests")))
    out = bj.rich_jobs_right(CompactionRequest(ROUND1, 400, (PROHIBITION, modeless)))
    assert [c.id for c in calls_of(out)] == [TRAIL]
    # a background tag without a mode but with a call_id is a job, never a call
    job = Fact("J1", FactKind.IN_FLIGHT_CALL, (JOB,), 2, details=(("call_id", JOB_CALL), ("name", "start_build")))
    out = bj.rich_jobs_right(CompactionRequest(ROUND1[:3], 400, (job,)))
    assert not calls_of(out) and JOB in text_of(out)


def test_jobs_right_falls_back_to_terse_lines_under_a_tight_budget():
    out = bj.rich_jobs_right(request1(60))
    assert size(out) <= 60
    for fact in TAGS1:
        assert fact.literals[0] in text_of(out)
    assert [c.id for c in calls_of(out)] == [TRAIL]


# --------------------------------------------------------------------------------------------------
# Messages inputs
# --------------------------------------------------------------------------------------------------

def tool_call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def chat() -> list[dict]:
    """Two background jobs: JOB finishes by a notification, JOB2 is polled twice (running, then completed);
    a third, job-77-zz, is still pending at the end."""
    return [
        {"role": "system", "content": "You are a release agent for acme/web."},
        {"role": "user", "content": "Build v2.4.1 and never deploy to prod-eu-1."},
        {"role": "assistant", "content": "", "tool_calls": [tool_call(JOB_CALL, "start_build", {"ref": "v2.4.1"})]},
        {"role": "tool", "tool_call_id": JOB_CALL, "content": f"Accepted: background job {JOB} is running, no result yet."},
        {"role": "assistant", "content": "", "tool_calls": [tool_call(JOB2_CALL, "reindex", {"index": "docs"})]},
        {"role": "tool", "tool_call_id": JOB2_CALL, "content": f"Queued as {JOB2}."},
        {"role": "user", "content": f"Notification: {JOB} finished successfully, artifact build-991.tar.gz."},
        {"role": "assistant", "content": "", "tool_calls": [tool_call("call_p1", "check_job", {"handle": JOB2})]},
        {"role": "tool", "tool_call_id": "call_p1", "content": f"{JOB2} is still running."},
        {"role": "assistant", "content": "Still waiting on the reindex. Reading config/deploy.yaml meanwhile."},
        {"role": "user", "content": "Fine."},
        {"role": "assistant", "content": "", "tool_calls": [tool_call("call_p2", "check_job", {"handle": JOB2})]},
        {"role": "tool", "tool_call_id": "call_p2", "content": "status: completed, exit code 0"},
        {"role": "assistant", "content": "", "tool_calls": [tool_call("call_c3", "start_scan", {"path": "src/"})]},
        {"role": "tool", "tool_call_id": "call_c3", "content": "Scan submitted as job-77-zz; pending."},
        {"role": "assistant", "content": "The scan runs in the background."},
        {"role": "user", "content": "Thanks, carry on."},
    ]


def pairs_intact(messages: list[dict]) -> bool:
    """Every tool message answers a call made by an assistant message of the same list, before it."""
    made: set[str] = set()
    for m in messages:
        for c in m.get("tool_calls") or []:
            made.add(c["id"])
        if m.get("role") == "tool" and m.get("tool_call_id") not in made:
            return False
    return True


def all_calls(messages: list[dict]) -> list[str]:
    return [c["id"] for m in messages for c in m.get("tool_calls") or []]


def job_line(summary: str, handle: str) -> str:
    return next(line for line in summary.splitlines() if line.startswith(f"Background job {handle} "))


@pytest.mark.parametrize("fn", [bj.messages_keep_first_last, bj.messages_all_jobs_pending, bj.messages_jobs_right])
@pytest.mark.parametrize("budget", [40, 90, 150, 250, 1000])
def test_messages_fixtures_do_not_mutate(fn, budget):
    messages = chat()
    before = copy.deepcopy(messages)
    out = fn(messages, budget)
    assert messages == before
    if out:
        out[0]["content"] = "changed"  # a returned message is not one of the input's dicts
    assert messages == before


# --------------------------------------------------------------------------------------------------
# messages_keep_first_last
# --------------------------------------------------------------------------------------------------

def test_keep_first_last_keeps_first_three_and_last_seven():
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message m{i}"} for i in range(15)]
    assert bj.messages_keep_first_last(messages, 10) == messages[:3] + messages[-7:]
    assert bj.messages_keep_first_last(messages[:10], 10) == messages[:10]
    assert bj.messages_keep_first_last(messages[:4], 10_000) == messages[:4]


def test_keep_first_last_keeps_a_placeholder_and_loses_its_outcome():
    messages = chat()
    head = [
        {"role": "assistant", "content": "", "tool_calls": [tool_call(JOB_CALL, "start_build", {"ref": "v2.4.1"})]},
        {"role": "tool", "tool_call_id": JOB_CALL, "content": f"Background job {JOB} accepted; running."},
    ]
    messages = [messages[1], *head, {"role": "user", "content": f"{JOB} finished."},
                *({"role": "assistant" if i % 2 else "user", "content": f"step {i}"} for i in range(8))]
    out = bj.messages_keep_first_last(messages, 1000)
    assert out[:3] == messages[:3]
    text = " ".join(m.get("content") or "" for m in out)
    assert JOB in text and "running" in text and "finished" not in text


# --------------------------------------------------------------------------------------------------
# messages_all_jobs_pending
# --------------------------------------------------------------------------------------------------

def test_find_jobs_reads_notifications_and_polls():
    jobs = {j.handle: j for j in bj.find_jobs(chat())}
    assert set(jobs) == {JOB, JOB2, "job-77-zz"}
    assert jobs[JOB].finished and jobs[JOB].call_id == JOB_CALL and jobs[JOB].outcome_at == 6
    assert jobs[JOB2].finished and jobs[JOB2].outcome_at == 12  # the "still running" poll is no outcome
    assert not jobs["job-77-zz"].finished


@pytest.mark.parametrize("budget", [150, 250, 400, 10_000])
def test_all_jobs_pending_calls_every_job_running(budget):
    out = bj.messages_all_jobs_pending(chat(), budget)
    assert out[0]["role"] == "system"
    for handle in (JOB, JOB2, "job-77-zz"):
        assert "still running" in job_line(out[0]["content"], handle)
    assert pairs_intact(out[1:])
    assert sum(message_tokens(m) for m in out) <= budget
    assert not set(all_calls(out)) & {JOB, JOB2, "job-77-zz"}


def test_all_jobs_pending_fills_the_budget_with_the_newest_messages():
    messages = chat()
    out = bj.messages_all_jobs_pending(messages, 400)
    tail = out[1:]
    assert tail == messages[len(messages) - len(tail):]
    assert len(tail) > 0


# --------------------------------------------------------------------------------------------------
# messages_jobs_right
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("budget", [120, 150, 250])
def test_jobs_right_marks_finished_jobs_finished(budget):
    out = bj.messages_jobs_right(chat(), budget)
    summary = out[0]["content"]
    assert out[0]["role"] == "system"
    assert "finished" in job_line(summary, JOB) and "running" not in job_line(summary, JOB)
    assert "finished" in job_line(summary, JOB2) and "running" not in job_line(summary, JOB2)
    assert "still running" in job_line(summary, "job-77-zz")
    assert not set(all_calls(out)) & {JOB, JOB2, "job-77-zz"}


@pytest.mark.parametrize("budget", [150, 250, 400, 600])
def test_jobs_right_keeps_identifiers_fits_and_keeps_pairs(budget):
    messages = chat()
    out = bj.messages_jobs_right(messages, budget)
    tail = out[1:]
    assert tail == messages[len(messages) - len(tail):]
    assert pairs_intact(tail)
    assert sum(message_tokens(m) for m in out) <= budget
    assert sum(message_tokens(m) for m in tail) <= 0.7 * budget
    dropped = messages[:len(messages) - len(tail)]
    expected = {"acme/web", "v2.4.1", "prod-eu-1", JOB_CALL, JOB, JOB2_CALL, JOB2, "build-991.tar.gz",
                "call_p1", "check_job", "config/deploy.yaml", "call_p2", "call_c3", "start_scan", "job-77-zz",
                "src/", "start_build"}
    in_dropped = {e for e in expected if any(e in json.dumps(m) for m in dropped)}
    assert in_dropped, "the budget should drop something"
    for ident in in_dropped:
        if ident == "src/":  # '/' only at the end: not an identifier by the rule
            continue
        assert ident in out[0]["content"], ident


def test_jobs_right_identifier_rule():
    assert bj.identifiers("Deploy v2.4.1 to s3://billing-exports-12/ via call_7f2a, not prod. See README.md: ok") == [
        "v2.4.1", "s3://billing-exports-12/", "call_7f2a", "README.md"]


def test_jobs_right_keeps_a_trailing_call_and_no_summary_when_all_fits():
    messages = chat()[:4] + [
        {"role": "assistant", "content": "", "tool_calls": [tool_call(TRAIL, "run_tests", {"suite": "unit"})]}]
    out = bj.messages_jobs_right(messages, 10_000)
    assert out == messages
    out = bj.messages_jobs_right(messages, 80)  # the summary needs the room: only the trailing call stays
    assert out[1:] == messages[-1:]
    assert sum(message_tokens(m) for m in out) <= 80
    assert "still running" in job_line(out[0]["content"], JOB)
    # a trailing call costing more than 70% of the budget is still kept when it fits
    big = [{"role": "user", "content": "Please run them all."}, {"role": "assistant", "content": "", "tool_calls": [
        tool_call(TRAIL, "run_tests", {"suite": "unit", "files": ["a", "b", "c", "d"]})]}]
    assert message_tokens(big[1]) > 0.7 * 45
    out = bj.messages_jobs_right(big, 45)
    assert out[1:] == big[1:] and sum(message_tokens(m) for m in out) <= 45


def test_jobs_right_poll_still_running_is_pending():
    messages = chat()[:9] + [{"role": "user", "content": "ok"}] * 6
    summary = bj.messages_jobs_right(messages, 60)[0]["content"]
    assert "still running" in job_line(summary, JOB2)
    assert "finished" in job_line(summary, JOB)


@pytest.mark.parametrize(("text", "outcome", "pending"), [
    (f"Accepted: background job {JOB} is running, no result yet.", False, True),
    (f"Job {JOB2} is queued", False, True),
    (f"{JOB2} has not finished yet", False, True),
    (f"{JOB2} isn't done", False, True),
    (f"{JOB2}: status=succeeded", True, False),
    (f"{JOB2} failed with exit code 2", True, False),
    (f"Notification: {JOB} finished successfully.", True, False),
])
def test_outcome_and_pending_wording(text, outcome, pending):
    assert bj.says_outcome(text) is outcome
    assert bj.says_pending(text) is pending
