"""Would the provider accept the compacted context? Each dialect's documented structural rules.

The field's most reported compaction bug is a shape bug: after trimming, a tool result without its
call (or a call without its result) and the provider answers 400. ``problems`` lists every rule a
context breaks in its dialect, with the message (or item) index as that dialect counts it; the
``provider-valid`` oracle reports the ones the compactor introduced (a defect already in what it was
given is the source's, not the compactor's, unless it concerns a call the source never made: the
compactor wrote it into an earlier round's output).

The rules, by dialect:

- ``chat``: a tool message follows the assistant message making its call (with only other results of
  that message between); every call is answered before the next message that is not a tool result,
  unless it is in the trailing assistant message.
- ``anthropic`` (indices count messages after the API joins consecutive messages of one role): there
  is at least one message and the first is the user's; no message is empty but a final assistant one,
  and no text block is empty; every ``tool_result`` is in the user message right after the assistant
  message holding its ``tool_use``, before any other block of it; every ``tool_use`` is answered
  there, unless its message is the last. A server-side call's result (``mcp_tool_result``) is in the
  assistant message holding its ``mcp_tool_use``, after it, and every ``mcp_tool_use`` is answered
  there, unless its message is the last.
- ``openai-responses``: every ``function_call_output`` comes after its ``function_call``; every call is
  answered, unless no message item follows it.

In the dialects that carry opaque parts (``harness.Part``: Anthropic thinking, Responses reasoning and
compaction items), every part in the context is one the compactor was given, byte-exact
(``parts-intact``: the provider verifies signatures and decrypts content, and refuses an edit); a call left
awaiting its result keeps the reasoning its source turn had (``reasoning-with-call``: Anthropic refuses a
pending tool use without its thinking block, OpenAI a function call without its reasoning item); and a
Responses compaction item, which stands for all the context before it, is kept (``compaction-kept``).
An approval request still waiting for a person's answer is kept byte-exact (``approval-pending-kept``), and an
approval comes after the request it answers (``approval-after-request``): Responses refuses an
``mcp_approval_response`` whose request it cannot find. Attachments (images and documents of user turns and
tool results) are held like the opaque parts: each in the context is
byte-exact one the compactor was given (``attachment-intact``), and a message kept word for word keeps them
(``attachment-kept``: the model would otherwise answer a turn about a picture it no longer has; a message that
says in other words that its image is gone is not kept word for word). An attachment the pending user turn (the
last user turn the compactor was given) names by its file name, kept word for word, is still in the context,
or text the compactor wrote names it or speaks of attachments (``attachment-referenced``: the model would
answer the question about a file it no longer has). The provider accepts such a request, and a window that drops
old messages whole breaks it whenever its cut falls between the file and the question, so it is a degrade: listed
for review, never a failure.

In every dialect, a call the context leaves waiting for its result (it may, as the last message) is one
the source made and has not answered yet (``call-made``): a call on an id the source never made (a
background job's handle rebuilt as a call) is never answered, and the next request breaks the rules above.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from harness._base._dialects import DROPPED_PARTS, merged_messages, render
from harness._base._model import ATTACHMENTS, Part, PartKind, Role, Turn
from harness.oracles._core import Case, Evidence, Finding, Outcome, Severity, oracle

__all__ = ["Problem", "problems", "RULES"]

#: Each rule's name, per dialect, and what it requires (the finding's "expected").
_CALL_MADE = "each call the context leaves awaiting its result is one the source made and has not answered"
_ATTACHMENT_INTACT = "every image and document byte-exact as the compactor was given it (content and media type)"
_ATTACHMENT_KEPT = ("a message kept word for word keeps the images and documents it was given with (or says, in its "
                    "own words, that they are gone)")
_ATTACHMENT_REFERENCED = ("the image or document the pending user turn names, if that turn is kept word for word, still "
                          "in the context (or text the compactor wrote names it, or speaks of images or attachments)")

#: Rules whose breach the provider still accepts and a correct window may commit (it drops a message whole, and the
#: attachment with it): a degrade, listed for review, never a failure; what happened is that the file was dropped.
_DEGRADES = frozenset({"attachment-referenced"})

RULES: dict[str, dict[str, str]] = {
    "chat": {
        "call-made": _CALL_MADE,
        "result-after-call": "each tool message right after the assistant message making its call",
        "call-answered": "each call answered before the next message that is not a tool result "
                         "(unless it is in the trailing assistant message)",
    },
    "anthropic": {
        "call-made": _CALL_MADE,
        "parts-intact": "every thinking block byte-exact as the compactor was given it (signature and text)",
        "attachment-intact": _ATTACHMENT_INTACT,
        "attachment-kept": _ATTACHMENT_KEPT,
        "attachment-referenced": _ATTACHMENT_REFERENCED,
        "reasoning-with-call": "a tool_use awaiting its result keeps the thinking blocks its source turn had",
        "has-messages": "at least one message",
        "first-from-user": "the first message from the user",
        "non-empty": "no empty message (but a final assistant one) and no empty text block",
        "result-after-use": "each tool_result in the user message right after the assistant message holding its "
                            "tool_use",
        "results-first": "tool_result blocks before any other block of their user message",
        "use-answered": "each tool_use answered in the next user message (unless its message is the last)",
        "server-result-after-use": "each mcp_tool_result in the assistant message holding its mcp_tool_use, after it",
        "server-use-answered": "each mcp_tool_use answered by an mcp_tool_result in its own message (unless the message "
                               "is the last)",
    },
    "openai-responses": {
        "call-made": _CALL_MADE,
        "parts-intact": "every reasoning and compaction item byte-exact as the compactor was given it",
        "attachment-intact": _ATTACHMENT_INTACT,
        "attachment-kept": _ATTACHMENT_KEPT,
        "attachment-referenced": _ATTACHMENT_REFERENCED,
        "reasoning-with-call": "a function_call awaiting its output keeps the reasoning item its source turn had",
        "compaction-kept": "every compaction item the compactor was given kept (it stands for the context before it)",
        "approval-pending-kept": "every approval request the compactor was given still waiting for its answer kept, "
                                 "byte-exact",
        "approval-after-request": "each mcp_approval_response after the mcp_approval_request it answers",
        "output-after-call": "each function_call_output after its function_call",
        "call-answered": "each function_call answered by a function_call_output (unless no message item follows it)",
    },
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken rule: which, where (the message or item index in the dialect), and the call it is about."""

    rule: str
    index: int
    detail: str
    call_id: str | None = None


def problems(turns: Sequence[Turn], dialect: str) -> list[Problem]:
    """Every structural rule of ``dialect`` that ``turns``, written in it, break."""
    payload = render(turns, dialect)
    if dialect == "chat":
        return list(_chat(payload))
    if dialect == "anthropic":
        return list(_anthropic(merged_messages(payload)))
    return list(_responses(payload))


def _chat(messages: list[dict[str, Any]]) -> Iterator[Problem]:
    open_calls: dict[str, int] = {}  # calls of the latest assistant message not yet answered -> its index
    block_of: int | None = None  # the assistant message whose tool results may follow now
    for i, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            call_id = message["tool_call_id"]
            if block_of is None or call_id not in open_calls:
                yield Problem("result-after-call", i, f"message [{i}] is the result of call {call_id}, but no "
                              "assistant message right before it (past other results) makes that call", call_id)
            else:
                del open_calls[call_id]
            continue
        for call_id, at in open_calls.items():
            yield Problem("call-answered", at, f"call {call_id} of message [{at}] has no result before message "
                          f"[{i}] ({role})", call_id)
        open_calls = {c["id"]: i for c in message.get("tool_calls") or ()} if role == "assistant" else {}
        block_of = i if open_calls else None


def _anthropic(messages: list[dict[str, Any]]) -> Iterator[Problem]:
    if not messages:
        yield Problem("has-messages", 0, "the request has no messages")
        return
    if messages[0]["role"] != "user":
        yield Problem("first-from-user", 0, f"message [0] is from the {messages[0]['role']}, not the user")
    last = len(messages) - 1
    for i, message in enumerate(messages):
        blocks = message["content"]
        empty_ok = i == last and message["role"] == "assistant"
        if not empty_ok and (not blocks or any(b.get("type") == "text" and not b.get("text") for b in blocks)):
            yield Problem("non-empty", i, f"message [{i}] ({message['role']}) has "
                          + ("no content" if not blocks else "an empty text block"))
        if message["role"] == "user":
            uses = _uses(messages[i - 1]) if i > 0 else set()
            seen_other = False
            for block in blocks:
                if block.get("type") != "tool_result":
                    seen_other = True
                    continue
                call_id = block.get("tool_use_id")
                if call_id not in uses:
                    yield Problem("result-after-use", i, f"message [{i}] holds the tool_result of {call_id}, but "
                                  f"message [{i - 1}] has no tool_use with that id" if i else
                                  f"message [0] holds the tool_result of {call_id} with no tool_use before it",
                                  call_id)
                elif seen_other:
                    yield Problem("results-first", i, f"message [{i}] has the tool_result of {call_id} after "
                                  "other content", call_id)
        else:
            yield from _server_pairs(blocks, i, i == last)
        if message["role"] == "assistant" and i < last:
            answered = {b.get("tool_use_id") for b in messages[i + 1]["content"] if b.get("type") == "tool_result"}
            for call_id in sorted(_uses(message) - answered):
                yield Problem("use-answered", i, f"the tool_use {call_id} of message [{i}] has no tool_result in "
                              f"message [{i + 1}]", call_id)


def _server_pairs(blocks: list[dict[str, Any]], i: int, last: bool) -> Iterator[Problem]:
    """An assistant message's server-side calls: each ``mcp_tool_result`` after its ``mcp_tool_use`` in this
    message, and each ``mcp_tool_use`` answered in it (unless the message is the last: the response may go on)."""
    used: set[str] = set()
    for block in blocks:
        if block.get("type") == "mcp_tool_use":
            used.add(block["id"])
        elif block.get("type") == "mcp_tool_result":
            call_id = block.get("tool_use_id")
            if call_id not in used:
                yield Problem("server-result-after-use", i, f"message [{i}] holds the mcp_tool_result of {call_id}, but "
                              "no mcp_tool_use before it in that message makes the call", call_id)
            used.discard(call_id)
    for call_id in sorted(used) if not last else ():
        yield Problem("server-use-answered", i, f"the mcp_tool_use {call_id} of message [{i}] has no mcp_tool_result "
                      "after it in that message", call_id)


def _uses(message: dict[str, Any]) -> set[str]:
    if message["role"] != "assistant":
        return set()
    return {b["id"] for b in message["content"] if b.get("type") == "tool_use"}


def _responses(items: list[dict[str, Any]]) -> Iterator[Problem]:
    called: set[str] = set()
    requested: set[str] = set()
    answered = {item["call_id"] for item in items if item["type"] == "function_call_output"}
    last_message = max((i for i, item in enumerate(items) if item["type"] == "message"), default=-1)
    for i, item in enumerate(items):
        if item["type"] == "function_call":
            called.add(item["call_id"])
            if item["call_id"] not in answered and i < last_message:
                yield Problem("call-answered", i, f"item [{i}], function_call {item['call_id']}, has no "
                              f"function_call_output, and message item [{last_message}] follows it", item["call_id"])
        elif item["type"] == "function_call_output" and item["call_id"] not in called:
            yield Problem("output-after-call", i, f"item [{i}] is the function_call_output of {item['call_id']}, "
                          "with no function_call before it", item["call_id"])
        elif item["type"] == "mcp_approval_request":
            requested.add(item["id"])
        elif item["type"] == "mcp_approval_response" and item["approval_request_id"] not in requested:
            yield Problem("approval-after-request", i, f"item [{i}] answers approval request "
                          f"{item['approval_request_id']}, which no mcp_approval_request before it makes")


@oracle("provider-valid", reference="field reports")
def provider_valid(case: Case) -> Iterator[Finding]:
    """The context is a request the dialect's provider would accept, by its documented structural rules."""
    dialect = case.dialect
    # A defect already in what the compactor was given is the source's, unless it is about a call the source
    # never made: one the compactor wrote into an earlier round's output (a call rebuilt on a job handle),
    # legal while it was the last message, never answered once the session went on.
    made = {c.id for t in case.window for c in t.tool_calls} | {t.tool_call_id for t in case.window if t.tool_call_id}
    given = {(p.rule, p.call_id) for p in problems(case.given, dialect) if p.call_id is None or p.call_id in made}
    never_made = [*_calls_never_made(case.result.messages, made), *_opaque_parts(case, dialect)]
    phantoms = {p.call_id for p in never_made if p.call_id is not None}  # their other broken rules are symptoms of this one cause
    for problem in [*never_made, *(p for p in problems(case.result.messages, dialect) if p.call_id not in phantoms)]:
        if (problem.rule, problem.call_id) in given:
            continue  # already so in what the compactor was given: the source's defect
        severity = Severity.DEGRADE if problem.rule in _DEGRADES else Severity.VIOLATE
        yield Finding("provider-valid", severity, f"{dialect} rule {problem.rule}: {problem.detail}",
                      expected=RULES[dialect][problem.rule], found=f"{dialect} message [{problem.index}]",
                      call_id=problem.call_id, evidence=Evidence.SHAPE,
                      outcome=Outcome.DROPPED if problem.rule in _DEGRADES else None)


def _part_key(part: Part, dialect: str) -> tuple:
    """What the provider checks of a part: all of it (Anthropic has no id for a thinking block, and neither
    dialect names an image)."""
    if part.kind in ATTACHMENTS:
        return part.kind, part.data, part.text
    if part.kind is PartKind.SERVER_TOOL:  # which server runs which call
        return part.kind, part.data, part.id
    return (part.kind, part.data, part.text) + ((part.id,) if dialect == "openai-responses" else ())


def _opaque_parts(case: Case, dialect: str) -> Iterator[Problem]:
    """Parts edited or invented, reasoning lost from a pending call, a compaction item dropped."""
    if dialect not in ("anthropic", "openai-responses"):
        return
    given = [p for t in case.given for p in t.parts if p.kind not in DROPPED_PARTS[dialect]]
    known = {_part_key(p, dialect) for p in given}
    turns = case.result.messages
    for i, turn in enumerate(turns):
        for part in turn.parts:
            if part.kind in ATTACHMENTS and _part_key(part, dialect) not in known:
                yield Problem("attachment-intact", i, f"message [{i}] holds {_an(part)} that is not byte-exact any the "
                              "compactor was given (re-encoded, cut or made up: the model would read something else)")
            elif part.kind not in DROPPED_PARTS[dialect] and _part_key(part, dialect) not in known:
                yield Problem("parts-intact", i, f"message [{i}] holds a {part.kind} part that is not byte-exact any the "
                              f"compactor was given (the provider refuses an edited one): {part.text or part.data}"[:300])
    reasoning_of = {c.id: [p for p in t.parts if p.kind is PartKind.REASONING] for t in case.given for c in t.tool_calls}
    answered = {t.tool_call_id for t in turns if t.tool_call_id}
    for i, turn in enumerate(turns):
        kept = {_part_key(p, dialect) for p in turn.parts}
        for call in turn.tool_calls:
            lost = [p for p in reasoning_of.get(call.id, ()) if _part_key(p, dialect) not in kept]
            if call.id not in answered and lost:
                yield Problem("reasoning-with-call", i, f"call {call.id} of message [{i}] awaits its result without the "
                              f"reasoning its turn was given with ({len(lost)} part(s) lost)", call.id)
    yield from _attachments_lost(case, dialect)
    yield from _references_lost(case, dialect)
    held = {_part_key(p, dialect) for t in turns for p in t.parts}
    answered_approvals = {p.id for p in given if p.kind is PartKind.APPROVAL}
    for part in given:
        if part.kind is PartKind.APPROVAL_REQUEST and part.id not in answered_approvals and \
                _part_key(part, dialect) not in held:
            yield Problem("approval-pending-kept", 0, f"approval request {part.id} ({part.text}) was waiting for a "
                          "person's answer and is gone: the answer, when it comes, answers nothing")
        if part.kind is PartKind.COMPACTION and _part_key(part, dialect) not in held:
            yield Problem("compaction-kept", 0, f"the compaction item {part.id or part.data[:24]} the compactor was "
                          "given is gone, and with it the context it stood for")


def _attachments_lost(case: Case, dialect: str) -> Iterator[Problem]:
    """Messages kept word for word without the images or documents they were given with: a later turn (or this
    one) that speaks of the picture now speaks of one the model no longer has."""
    for i, turn in enumerate(case.result.messages):
        sources = [t for t in case.given if t == turn]  # turn equality: role, text, calls and call id, not parts
        kept = {_part_key(p, dialect) for p in turn.parts}
        lost = [[p for p in t.parts if p.kind in ATTACHMENTS and _part_key(p, dialect) not in kept] for t in sources]
        if sources and all(lost):
            gone = min(lost, key=len)
            names = ", ".join(p.id or p.text for p in gone)
            yield Problem("attachment-kept", i, f"message [{i}] is kept word for word without {len(gone)} of the "
                          f"attachments it was given with ({names}), and does not say they are gone")


#: Compactor-written text that speaks of attachments at all (it told the model what there was, or that it is gone);
#: "file" and "document" are left out, a coding summary says them of everything.
_SPEAKS_OF_ATTACHMENTS = re.compile(r"\b(?:images?|screenshots?|pictures?|photos?|attachments?|attached|pdfs?)\b",
                                    re.IGNORECASE)


def _references_lost(case: Case, dialect: str) -> Iterator[Problem]:
    """The pending user turn kept word for word while an attachment it names by file name is gone from the context
    and nothing the compactor wrote names it or speaks of attachments at all."""
    pending = next((t for t in reversed(case.given) if t.role is Role.USER), None)
    turns = case.result.messages
    if pending is None or pending not in turns:
        return
    held = {_part_key(p, dialect) for t in turns for p in t.parts}
    written = " ".join(t.text for t in turns if t not in case.given)  # what the compactor wrote itself
    named = [p for t in case.given for p in t.parts if p.kind in ATTACHMENTS and p.id and p.id in pending.text]
    for part in named:
        if _part_key(part, dialect) not in held and part.id not in written and not _SPEAKS_OF_ATTACHMENTS.search(written):
            yield Problem("attachment-referenced", turns.index(pending), f"the pending user turn (message "
                          f"[{turns.index(pending)}]) asks about {part.id}, but {_an(part)} is gone from the context "
                          "and nothing says so: the model would answer about a file it no longer has")


def _an(part: Part) -> str:
    name = f" ({part.id})" if part.id else ""
    return f"an {part.kind.value}{name}" if part.kind is PartKind.IMAGE else f"a {part.kind.value}{name}"


def _calls_never_made(turns: Sequence[Turn], made: set[str]) -> Iterator[Problem]:
    """Calls the context leaves without a result whose id the source never made: nothing will answer them."""
    answered = {t.tool_call_id for t in turns if t.tool_call_id}
    for i, turn in enumerate(turns):
        for call in turn.tool_calls:
            if call.id not in answered and call.id not in made:
                yield Problem("call-made", i, f"call {call.id} ({call.name}) of message [{i}] awaits a result, but the "
                              "source never made that call, so none will come", call.id)
