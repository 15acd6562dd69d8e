"""Tool calls waiting for a person's approval (``harness.Part`` of kind approval_request, on the assistant turn
asking) and the approval or refusal that answers them (kind approval, on the user turn giving it).

Responses writes them as MCP approval items and reads them back; Anthropic and chat drop them; generated sources
in the provider dialects carry them; and ``provider-valid`` holds a compactor to them in Responses: a request
still waiting for its answer is kept byte-exact (``approval-pending-kept``), and an answer comes after its
request (``approval-after-request``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness import InvalidArgument, Part, PartKind, Role, Transcript, Turn
from harness._base._dialects import read, render
from harness._base._errors import MalformedResult
from harness._base._protocol import CompactionRequest, CompactionResult
from harness.oracles import Case, select
from harness.strategies import with_provider_parts

REQUEST = Part(PartKind.APPROVAL_REQUEST, '{"target": "billing-api"}', "deploy_service", "mcpr_1")
ANSWER = Part(PartKind.APPROVAL, "deny", "Not yet: wait for the review.", "mcpr_1")
ASKING = Turn(Role.ASSISTANT, "The deploy needs your approval.", parts=(REQUEST,))
SOURCE = (Turn(Role.USER, "Deploy the billing api."), ASKING)
ANSWERED = (*SOURCE, Turn(Role.USER, "Not now.", parts=(ANSWER,)), Turn(Role.ASSISTANT, "Holding the deploy."))


def _parts(turns) -> list[tuple]:
    return [(t.role, p.kind, p.data, p.text, p.id) for t in turns for p in t.parts]


def test_responses_writes_a_request_after_the_assistant_s_message_and_an_answer_before_the_user_s():
    items = render(ANSWERED, "openai-responses")
    assert [i["type"] for i in items] == ["message", "message", "mcp_approval_request", "mcp_approval_response",
                                          "message", "message"]
    assert items[2] == {"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "tools",
                        "name": "deploy_service", "arguments": '{"target": "billing-api"}'}
    assert items[3] == {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": False,
                        "reason": "Not yet: wait for the review."}
    back = read(items, "openai-responses")
    assert back == ANSWERED and _parts(back) == _parts(ANSWERED)


def test_an_answer_no_user_message_follows_is_a_user_turn_of_its_own():
    items = [*render(SOURCE, "openai-responses"),
             {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}]
    back = read(items, "openai-responses")
    assert back[-1] == Turn(Role.USER, "") and _parts(back[-1:]) == [(Role.USER, PartKind.APPROVAL, "approve", "",
                                                                      "mcpr_1")]


@pytest.mark.parametrize("item, where", [
    ({"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": "yes"}, r"items\[0\]"),
    ({"type": "mcp_approval_response", "approve": True}, r"items\[0\]\.approval_request_id"),
    ({"type": "mcp_approval_request", "id": "mcpr_1", "name": "", "arguments": "{}"}, r"items\[0\]\.name"),
])
def test_a_malformed_approval_item_is_the_compactor_s_malformed_answer_naming_where(item, where):
    with pytest.raises(MalformedResult, match=where):
        read([item], "openai-responses")


def test_anthropic_and_chat_drop_approvals():
    assert "mcp" not in str(render(ANSWERED, "anthropic")) and "mcp" not in str(render(ANSWERED, "chat"))
    assert _parts(read(render(ANSWERED, "anthropic"), "anthropic")) == []


def test_a_request_belongs_to_an_assistant_turn_and_an_answer_to_a_user_turn():
    with pytest.raises(InvalidArgument, match="role 'user' cannot carry a part of kind 'approval_request'"):
        Turn(Role.USER, "Deploy?", parts=(REQUEST,))
    with pytest.raises(InvalidArgument, match="role 'assistant' cannot carry a part of kind 'approval'"):
        Turn(Role.ASSISTANT, "Approved.", parts=(ANSWER,))


def _rules(given, result_turns, dialect: str = "openai-responses") -> list[str]:
    (check,) = [o.check for o in select() if o.id == "provider-valid"]
    case = Case(Transcript(turns=tuple(given)), len(given), 400, CompactionResult(tuple(result_turns)),
                request=CompactionRequest(tuple(given), 400, dialect=dialect))
    return [f.detail.split(":")[0].split()[-1] for f in check(case)]


def test_a_pending_request_dropped_or_edited_is_caught_and_kept_passes():
    assert _rules(SOURCE, SOURCE) == []
    dropped = (SOURCE[0], dataclasses.replace(ASKING, parts=()))
    assert _rules(SOURCE, dropped) == ["approval-pending-kept"]
    assert _rules(SOURCE, (Turn(Role.USER, "Summary: a deploy was asked for."),)) == ["approval-pending-kept"]
    edited = dataclasses.replace(ASKING, parts=(dataclasses.replace(REQUEST, data='{"target":"billing-api"}'),))
    assert _rules(SOURCE, (SOURCE[0], edited)) == ["parts-intact", "approval-pending-kept"]
    moved = (Turn(Role.USER, "Summary: deploy asked for."), Turn(Role.ASSISTANT, "", parts=(REQUEST,)))
    assert _rules(SOURCE, moved) == []  # kept byte-exact, in a turn of the compactor's own


def test_an_answered_request_may_go_with_its_answer_but_never_leave_the_answer_behind():
    assert _rules(ANSWERED, ANSWERED) == []
    assert _rules(ANSWERED, (Turn(Role.USER, "Summary."), ANSWERED[3])) == []
    orphaned = (SOURCE[0], dataclasses.replace(ASKING, parts=()), *ANSWERED[2:])
    assert _rules(ANSWERED, orphaned) == ["approval-after-request"]


def test_anthropic_and_chat_judge_no_approvals():
    dropped = (SOURCE[0], dataclasses.replace(ASKING, parts=()))
    assert _rules(SOURCE, dropped, "anthropic") == [] and _rules(SOURCE, dropped, "chat") == []


def test_generated_sources_ask_on_an_assistant_turn_that_speaks_and_the_next_user_turn_answers():
    turns = tuple(Turn(Role.USER if i % 2 == 0 else Role.ASSISTANT, f"turn {i}") for i in range(40))
    source = with_provider_parts(Transcript(turns=turns, seed=5)).turns
    asked = [(i, p) for i, t in enumerate(source) for p in t.parts if p.kind is PartKind.APPROVAL_REQUEST]
    assert asked
    for i, request in asked:
        assert source[i].role is Role.ASSISTANT and source[i].text
        (answer,) = [p for p in source[i + 1].parts if p.kind is PartKind.APPROVAL]
        assert answer.id == request.id and answer.data in ("approve", "deny")
    assert {p.data for t in source for p in t.parts if p.kind is PartKind.APPROVAL} == {"approve", "deny"}
    assert with_provider_parts(Transcript(turns=turns, seed=5)).turns[asked[0][0]].parts == source[asked[0][0]].parts


PARTS_FIXTURE = Path(__file__).resolve().parent / "fixtures" / "parts_mutants.py"


@pytest.mark.parametrize("function, rules", [
    ("responses_keeps_items", set()),
    ("responses_drops_pending_approvals", {"approval-pending-kept"}),
    ("responses_orphans_approvals", {"approval-after-request"}),
])
def test_a_window_that_drops_approvals_is_caught_with_a_minimal_transcript_and_one_that_keeps_them_passes(function,
                                                                                                          rules):
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    result = run(RunConfig.of(f"{PARTS_FIXTURE}:{function}", examples=30, seed=3, quiet=True, isolation="inline",
                              dialect="openai-responses", only=("provider-valid",)))
    assert not result.infra_errors
    found = {f.detail.split(":")[0].split()[-1] for f in result.failures}
    assert found == rules, [f.detail for f in result.failures]
    assert all(len(f.transcript.turns) <= 4 for f in result.failures)
