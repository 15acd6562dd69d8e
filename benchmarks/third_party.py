"""Adapters that put real third-party compactors behind the harness's messages protocol.

Each function here is ``fn(messages, budget) -> messages`` (OpenAI-style chat dicts in and out) and
wraps one compactor as its authors document it, for the benchmark

    python benchmarks/root_causes.py --summarizer benchmarks.third_party:NAME

(or ``compaction-harness run --summarizer benchmarks.third_party:NAME``), run with the Python of a
virtual environment where the packages are installed:

    pip install langchain-core autogen-core agentfit-py agentic-context-compaction

| adapter | package (import name) | what it calls | budget -> parameters |
| --- | --- | --- | --- |
| ``langchain_trim_last`` | langchain-core (``langchain_core``) | ``trim_messages(strategy="last")`` | ``max_tokens=budget`` |
| ``langchain_trim_first`` | langchain-core | ``trim_messages(strategy="first")`` | ``max_tokens=budget`` |
| ``autogen_buffered`` | autogen-core (``autogen_core``) | ``BufferedChatCompletionContext`` | ``buffer_size=max(2, budget // 60)`` |
| ``autogen_head_tail`` | autogen-core | ``HeadAndTailChatCompletionContext`` | ``n=max(2, budget // 60)``, ``head_size=n // 2``, ``tail_size=n - head_size`` |
| ``agentfit_compact`` | agentfit-py (``agentfit``) | ``agentfit.fit`` (default ``drop-oldest``) | ``max_tokens=budget`` |
| ``agentic_compaction`` | agentic-context-compaction (``context_compactor``) | ``ContextCompactor.maybe_compact`` with ``KeepRecentMessages(keep_count=20)`` | ``max_context_tokens=budget`` |
| ``agentic_first_last`` | agentic-context-compaction | the same with ``KeepFirstLast(keep_first=3, keep_last=7)`` | ``max_context_tokens=budget`` |

The ``budget // 60`` of the AutoGen contexts, which count messages rather than tokens, assumes about 60
tokens a message; it is the only number here that is ours.

Our dicts are converted to each library's own message types and back: a message the library keeps
unchanged comes back as a copy of the dict it came from (so tool call ids, ``tool_call_id`` and the
content text are exactly ours), a message the library made or changed is converted from the library's
type. Messages the library drops are dropped, and no adapter adds text of its own (AutoGen's
head-and-tail context inserts its own ``"Skipped N messages."`` user message; that text is the
library's and is kept). None of them calls a model or the network, and each is deterministic.

The third-party packages are imported inside each function: importing this module needs none of them,
and calling an adapter whose package is missing raises an ImportError naming the pip package to install.
Note that PyPI's ``agentfit`` is an unrelated codebase auditor with no compaction API; the compactor is
``agentfit-py``, which uses the same import name ``agentfit`` (uninstall the one to install the other).
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
from typing import Any

Message = dict[str, Any]

#: The AutoGen contexts keep a number of messages, not tokens: this many tokens a message is assumed.
TOKENS_PER_MESSAGE = 60


def _require(module: str, package: str, adapter: str):
    """Import ``module`` or raise an ImportError that names the pip package to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"{adapter} needs the package {package!r} (import name {module.split('.')[0]!r}): "
            f"pip install {package}"
        ) from error


def _run(coroutine):
    """Run a coroutine to completion, also when called from inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


# --------------------------------------------------------------------------------------------------
# LangChain: langchain_core.messages.trim_messages


def _langchain_counter(messages_module, utils_module):
    counter = getattr(utils_module, "count_tokens_approximately", None) or getattr(
        messages_module, "count_tokens_approximately", None
    )
    if counter is not None:
        return counter

    # langchain-core before 0.3.46 has no approximate counter: about four characters a token plus
    # three a message, as count_tokens_approximately counts.
    def approximate(messages) -> int:
        total = 0
        for message in messages:
            text = message.content if isinstance(message.content, str) else repr(message.content)
            extra = repr(getattr(message, "tool_calls", None) or "") + (getattr(message, "tool_call_id", "") or "")
            total += math.ceil((len(text) + len(extra) + len(message.type)) / 4) + 3
        return total

    return approximate


def _langchain_trim(messages: list[Message], budget: int, adapter: str, **options: Any) -> list[Message]:
    lc_messages = _require("langchain_core.messages", "langchain-core", adapter)
    lc_utils = _require("langchain_core.messages.utils", "langchain-core", adapter)

    # The library's own conversion from OpenAI-style dicts; each message is tagged with its index
    # through LangChain's own message ``id`` (which no token counter reads) so that a message the
    # library keeps unchanged can be handed back as the dict it came from.
    tagged = []
    for index, message in enumerate(messages):
        item = copy.deepcopy(message)
        item["id"] = f"in-{index}"
        tagged.append(item)
    converted = lc_messages.convert_to_messages(tagged)
    by_id = {m.id: (index, m.content) for index, m in enumerate(converted)}

    trimmed = lc_messages.trim_messages(
        converted,
        max_tokens=budget,
        token_counter=_langchain_counter(lc_messages, lc_utils),
        **options,
    )

    out: list[Message] = []
    for message in trimmed:
        source = by_id.get(message.id)
        if source is not None and message.content == source[1]:
            out.append(copy.deepcopy(messages[source[0]]))
            continue
        back = lc_messages.convert_to_openai_messages(message)
        back.pop("id", None)
        out.append(back)
    return out


def langchain_trim_last(messages: list[Message], budget: int) -> list[Message]:
    """``trim_messages`` keeping the most recent messages, as LangChain's docs recommend for chat history:
    ``strategy="last"``, ``max_tokens=budget``, ``count_tokens_approximately``, ``include_system=True``,
    ``start_on="human"``, ``allow_partial=False``."""
    return _langchain_trim(
        messages,
        budget,
        "langchain_trim_last",
        strategy="last",
        include_system=True,
        start_on="human",
        allow_partial=False,
    )


def langchain_trim_first(messages: list[Message], budget: int) -> list[Message]:
    """``trim_messages`` keeping the oldest messages: ``strategy="first"``, ``max_tokens=budget``,
    ``count_tokens_approximately``, ``allow_partial=False`` (``include_system`` and ``start_on`` are
    only valid with ``strategy="last"``; the library raises ValueError otherwise)."""
    return _langchain_trim(messages, budget, "langchain_trim_first", strategy="first", allow_partial=False)


# --------------------------------------------------------------------------------------------------
# AutoGen: autogen_core.model_context


def _to_autogen(messages: list[Message], models) -> tuple[list, list, dict[int, list[Message]]]:
    """Our dicts as AutoGen LLMMessages, the way AutoGen's AssistantAgent builds its model context.

    Leading system messages are the agent's ``system_message``: AssistantAgent keeps them outside the
    model context and sends ``system_messages + await model_context.get_messages()``, so they are
    returned apart. An assistant message with tool calls is ``AssistantMessage(content=[FunctionCall,
    ...], thought=text)``; a run of tool results is one ``FunctionExecutionResultMessage``, as the agent
    adds the results of one step. The third value maps each LLMMessage (by ``id``) to the dicts it came
    from."""
    head = 0
    while head < len(messages) and messages[head].get("role") in ("system", "developer"):
        head += 1
    system = [models.SystemMessage(content=m.get("content") or "") for m in messages[:head]]
    origin: dict[int, list[Message]] = {id(s): [m] for s, m in zip(system, messages[:head])}

    names: dict[str, str] = {}
    context: list = []
    for message in messages[head:]:
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id") or ""
            result = models.FunctionExecutionResult(
                content=message.get("content") or "", name=names.get(call_id, ""), call_id=call_id
            )
            last = context[-1] if context else None
            if isinstance(last, models.FunctionExecutionResultMessage):
                last.content.append(result)
                origin[id(last)].append(message)
                continue
            item = models.FunctionExecutionResultMessage(content=[result])
        elif role == "assistant" and message.get("tool_calls"):
            from autogen_core import FunctionCall

            calls = []
            for call in message["tool_calls"]:
                function = call.get("function") or {}
                names[call.get("id") or ""] = function.get("name") or ""
                calls.append(
                    FunctionCall(
                        id=call.get("id") or "", arguments=function.get("arguments") or "", name=function.get("name") or ""
                    )
                )
            item = models.AssistantMessage(content=calls, thought=message.get("content") or None, source="assistant")
        elif role == "assistant":
            item = models.AssistantMessage(content=message.get("content") or "", source="assistant")
        elif role in ("system", "developer"):
            item = models.SystemMessage(content=message.get("content") or "")
        else:
            item = models.UserMessage(content=message.get("content") or "", source="user")
        context.append(item)
        origin[id(item)] = [message]
    return system, context, origin


def _from_autogen(llm_messages: list, origin: dict[int, list[Message]], models) -> list[Message]:
    out: list[Message] = []
    for item in llm_messages:
        if id(item) in origin:
            out.extend(copy.deepcopy(m) for m in origin[id(item)])
        elif isinstance(item, models.SystemMessage):
            out.append({"role": "system", "content": item.content})
        elif isinstance(item, models.UserMessage):
            content = item.content if isinstance(item.content, str) else " ".join(
                part for part in item.content if isinstance(part, str)
            )
            out.append({"role": "user", "content": content})
        elif isinstance(item, models.AssistantMessage):
            if isinstance(item.content, str):
                out.append({"role": "assistant", "content": item.content})
            else:
                out.append(
                    {
                        "role": "assistant",
                        "content": item.thought or "",
                        "tool_calls": [
                            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                            for c in item.content
                        ],
                    }
                )
        elif isinstance(item, models.FunctionExecutionResultMessage):
            out.extend({"role": "tool", "content": r.content, "tool_call_id": r.call_id} for r in item.content)
    return out


def _autogen_view(messages: list[Message], adapter: str, make_context) -> list[Message]:
    model_context = _require("autogen_core.model_context", "autogen-core", adapter)
    models = _require("autogen_core.models", "autogen-core", adapter)
    system, history, origin = _to_autogen(messages, models)

    async def view():
        context = make_context(model_context)
        for item in history:
            await context.add_message(item)
        return system + await context.get_messages()

    return _from_autogen(_run(view()), origin, models)


def _message_count(budget: int) -> int:
    return max(2, budget // TOKENS_PER_MESSAGE)


def autogen_buffered(messages: list[Message], budget: int) -> list[Message]:
    """AutoGen's ``BufferedChatCompletionContext`` (the last ``buffer_size`` messages, a leading tool
    result dropped) with ``buffer_size = max(2, budget // 60)``; leading system messages are kept
    outside the context and sent first, as AssistantAgent does."""
    size = _message_count(budget)
    return _autogen_view(
        messages, "autogen_buffered", lambda mc: mc.BufferedChatCompletionContext(buffer_size=size)
    )


def autogen_head_tail(messages: list[Message], budget: int) -> list[Message]:
    """AutoGen's ``HeadAndTailChatCompletionContext`` (the first ``head_size`` and last ``tail_size``
    messages with its own "Skipped N messages." user message between) with ``n = max(2, budget // 60)``
    messages split in half: ``head_size = n // 2``, ``tail_size = n - head_size``; leading system
    messages are kept outside the context and sent first, as AssistantAgent does."""
    n = _message_count(budget)
    head = max(1, n // 2)
    tail = max(1, n - head)
    return _autogen_view(
        messages,
        "autogen_head_tail",
        lambda mc: mc.HeadAndTailChatCompletionContext(head_size=head, tail_size=tail),
    )


# --------------------------------------------------------------------------------------------------
# agentfit-py: agentfit.fit


def agentfit_compact(messages: list[Message], budget: int) -> list[Message]:
    """``agentfit.fit(messages, max_tokens=budget)`` with every default: strategy ``drop-oldest``,
    system messages preserved, its own estimator (four characters a token, four tokens a message), and
    ``on_over_budget="throw"`` (when the preserved messages alone exceed the budget it raises
    ``OverBudgetError``, which the harness reports as a summarizer failure)."""
    agentfit = _require("agentfit", "agentfit-py", "agentfit_compact")
    if not callable(getattr(agentfit, "fit", None)):
        raise ImportError(
            "agentfit_compact needs the package 'agentfit-py' (import name 'agentfit'); the installed "
            f"'agentfit' ({getattr(agentfit, '__file__', '?')}) is another project with no fit(): "
            "pip uninstall agentfit && pip install agentfit-py"
        )
    result = agentfit.fit(copy.deepcopy(messages), max_tokens=budget)
    return [copy.deepcopy(dict(m)) for m in result.messages]


# --------------------------------------------------------------------------------------------------
# agentic-context-compaction: context_compactor.ContextCompactor


class _ChatTokenCounter:
    """A ``context_compactor.TokenCounter`` for OpenAI-style chat dicts.

    The package ships counters only for pydantic-ai, openai-agents and claude-agent-sdk messages (each
    needs its SDK installed); this one counts as its openai-agents counter does for raw input items and
    tool calls: ``int(len(text) / 4) + 4`` a message, where the text is the content and each tool call
    as ``name(arguments)``."""

    chars_per_token = 4.0
    overhead = 4

    def count_single(self, message: Message) -> int:
        content = message.get("content")
        text = content if isinstance(content, str) else (json.dumps(content) if content else "")
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            text += f"{function.get('name', '')}({function.get('arguments', '')})"
        return int(len(text) / self.chars_per_token) + self.overhead

    def count_messages(self, messages: list[Message]) -> int:
        return sum(self.count_single(m) for m in messages)


def agentic_compaction(messages: list[Message], budget: int) -> list[Message]:
    """``ContextCompactor(max_context_tokens=budget, strategy=KeepRecentMessages(keep_count=20))``,
    the package's documented configuration (module docstring, README quick start) of its first generic
    strategy; ``maybe_compact`` compacts only at ``trigger_at_percent`` (0.8) of the budget and
    otherwise returns the messages unchanged. No strategy here calls a model (``SummarizeMiddle``, the
    one that would, needs pydantic-ai and an LLM, and is not used)."""
    compactor_module = _require("context_compactor", "agentic-context-compaction", "agentic_compaction")
    generic = _require("context_compactor.strategies.generic", "agentic-context-compaction", "agentic_compaction")
    compactor = compactor_module.ContextCompactor(
        max_context_tokens=budget,
        strategy=generic.KeepRecentMessages(keep_count=20),
        token_counter=_ChatTokenCounter(),
    )
    kept = _run(compactor.maybe_compact(copy.deepcopy(messages)))
    return [copy.deepcopy(m) for m in kept]


def agentic_first_last(messages: list[Message], budget: int) -> list[Message]:
    """``ContextCompactor`` with ``KeepFirstLast(keep_first=3, keep_last=7)``, the package's head-and-tail
    strategy: it keeps the first three messages (a background job's placeholder among them) while later
    messages, the job's completion notice too, fall out of its ten-message window."""
    compactor_module = _require("context_compactor", "agentic-context-compaction", "agentic_first_last")
    generic = _require("context_compactor.strategies.generic", "agentic-context-compaction", "agentic_first_last")
    compactor = compactor_module.ContextCompactor(
        max_context_tokens=budget,
        strategy=generic.KeepFirstLast(keep_first=3, keep_last=7),
        token_counter=_ChatTokenCounter(),
    )
    kept = _run(compactor.maybe_compact(copy.deepcopy(messages)))
    return [copy.deepcopy(m) for m in kept]


__all__ = [
    "langchain_trim_last",
    "langchain_trim_first",
    "autogen_buffered",
    "autogen_head_tail",
    "agentfit_compact",
    "agentic_compaction",
    "agentic_first_last",
]
