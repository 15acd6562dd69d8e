"""A correct rich-protocol compactor: every tagged obligation stated in one sentence, every call still
in flight carried as a structured tool call with no result, so its result can be re-attached.

A background job is not a call in flight: the call that started it was answered at once by a
placeholder naming the job's handle, and its outcome arrives later as text naming the handle. Its tag's
literal is that handle, so it is stated (the handle byte-exact), never rebuilt as a call: a call on a
handle would never be answered. A carried call ends when its result is among the turns.

In the anthropic and openai-responses dialects the turns also carry the provider's opaque parts. What the
provider needs of the turns it replaces goes back byte-exact on the carried turn: the reasoning of the turns
that made the carried calls, every compaction item, and every approval request still waiting for its answer.
The dialect drops what it cannot carry."""

from harness import CompactionRequest, CompactionResult, PartKind, Role, ToolCall, Turn, kind_def


def summarize(request: CompactionRequest) -> CompactionResult:
    answered = {t.tool_call_id for t in request.turns if t.role is Role.TOOL}
    in_flight: dict[str, ToolCall] = {}
    for turn in request.turns:  # calls made (or carried by the previous round) and not answered yet
        for call in turn.tool_calls:
            if call.id not in answered:
                in_flight.setdefault(call.id, call)
    lines = [f"Summary of {len(request.turns) - request.previous_output} new turns."]
    for fact in request.tags:  # the live obligations: kind, literals byte-exact, details
        lines.append(kind_def(fact.kind).statement(fact))
        trailing = str(fact.kind) == "in_flight_call" and fact.detail("mode") != "background"
        if trailing and fact.literals[0] not in in_flight and fact.literals[0] not in answered:
            call_id = fact.literals[0]  # a call carried only by a tag: rebuild it from its details
            in_flight[call_id] = ToolCall(call_id, fact.detail("name") or "unknown", fact.detail("arguments") or "{}")
    summary = Turn(Role.USER, "\n".join(lines))  # a user message: Anthropic wants one first
    approved = {p.id for t in request.turns for p in t.parts if p.kind is PartKind.APPROVAL}
    parts = tuple(dict.fromkeys(p for t in request.turns for p in t.parts  # each once, in order
                                if p.kind is PartKind.COMPACTION
                                or (p.kind is PartKind.APPROVAL_REQUEST and p.id not in approved)
                                or (p.kind is PartKind.REASONING and any(c.id in in_flight for c in t.tool_calls))))
    carried = (Turn(Role.ASSISTANT, "", tuple(in_flight.values()), parts=parts),) if in_flight or parts else ()
    return CompactionResult((summary, *carried))


summarize.compaction_protocol = "rich"
