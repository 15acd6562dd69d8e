"""A team's LangChain or LlamaIndex object as a messages-protocol summarizer, with no converter of its own.

``--summarizer langchain:pkg.module:NAME`` or ``llamaindex:path/to/file.py:NAME`` names the object;
``framework_summarizer`` wraps it in ``fn(messages, budget)``: our chat dicts become the framework's
message objects, the object is called, and what it returns becomes chat dicts again. Going there and
back is the identity on our messages (roles, text, tool call ids, names and arguments byte for byte,
``tool_call_id``), so a message the framework keeps is judged as the very message it was given.

How each library holds tool calls, and why:

* LangChain (langchain-core): ``AIMessage.tool_calls`` (``args`` parsed to a dict) and ``ToolMessage``
  with ``tool_call_id``, as langchain-openai builds them from a chat completion. Arguments that are not a
  JSON object (not JSON, a list, ``null``) become ``AIMessage.invalid_tool_calls`` with the text as
  ``args``, as langchain-openai does with arguments it cannot parse. langchain-core's own converters do
  not round-trip, so they are not used: ``convert_to_messages`` raises on such arguments, and
  ``convert_to_openai_messages`` writes parsed arguments out again with ``json.dumps`` (``{"a":  1}``
  comes back as ``{"a": 1}``).
* LlamaIndex (llama-index-core >= 0.14.5): an assistant's calls are ``ToolCallBlock`` blocks whose
  ``tool_kwargs`` is the arguments text; a tool result is ``role="tool"`` with
  ``additional_kwargs={"tool_call_id": ...}``. llama-index-llms-openai 0.8 (``from_openai_message``,
  ``to_openai_message_dict``) and core's ``FunctionAgent`` use exactly this. Text is ``TextBlock`` blocks.
  Their older way (``additional_kwargs["tool_calls"]``, OpenAI SDK objects) is still read from a message
  that has no ``ToolCallBlock``, but is never written.

Arguments parsed to a dict cannot be written back byte for byte. So each call remembers the text of every
call it handed over, by call id, name and JSON value. A call that comes back with the same id, name and
value gets its own text back: from its own message when the team returns the object we made (LangChain's
``trim_messages`` does), else from the first call of the transcript with that id, name and value. A call
the team made or changed is written as ``harness._base._protocol`` writes parsed arguments
(``json.dumps(..., ensure_ascii=False, sort_keys=True)``). LlamaIndex keeps the text itself
(``tool_kwargs``), so there this is needed only when a team replaces it with a dict.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness._base._errors import InvalidArgument, MalformedResult, SpecError, _short
from harness._base._result_codec import content_text

__all__ = ["FRAMEWORKS", "framework_summarizer"]

#: Spec prefix -> the pip extra of compaction-harness that installs the library.
FRAMEWORKS: dict[str, str] = {"langchain:": "langchain", "llamaindex:": "llamaindex"}

Message = dict[str, Any]
_ROLES = ("system", "user", "assistant", "tool")
#: (call id, name, canonical JSON of the arguments) -> the arguments text we handed over.
_Texts = dict[tuple[str, str, str], str]


@dataclass(frozen=True)
class _Library:
    """What a prefix needs installed: the module imported, and the pip package named in the error."""

    module: str
    package: str


_LIBRARIES = {"langchain:": _Library("langchain_core.messages", "langchain-core"),
              "llamaindex:": _Library("llama_index.core.base.llms.types", "llama-index-core")}


def framework_summarizer(prefix: str, obj: Any, spec: str) -> Callable[[list[Message], int], list[Message]]:
    """``obj`` (loaded from the ``module:NAME`` part of ``spec``) as ``fn(messages, budget) -> messages``.

    Wrong objects and a missing library are a ``SpecError`` now, before any call; what the object
    returns that is not a list of the framework's messages is a ``MalformedResult`` at the call.
    """
    if prefix not in FRAMEWORKS:
        raise SpecError(f"--summarizer {spec!r}: unknown framework prefix {prefix!r}; expected one of "
                        f"{', '.join(FRAMEWORKS)}")
    library = _LIBRARIES[prefix]
    try:
        module = importlib.import_module(library.module)
    except ImportError as exc:
        raise SpecError(f"--summarizer {spec!r} needs {library.package}: pip install "
                        f"'compaction-harness[{FRAMEWORKS[prefix]}]' ({exc})") from None
    call = _langchain_call(module, obj, spec) if prefix == "langchain:" else _llamaindex_call(module, obj, spec)

    def summarize(messages, budget):
        return call(_checked_input(messages, spec), budget)

    _dress(summarize, obj, spec)
    return summarize


# -- shared ---------------------------------------------------------------------------------------------

def _checked_input(messages: Any, spec: str) -> list[Message]:
    """Our own chat messages, or an ``InvalidArgument``: a framework object takes the chat dialect only."""
    if not isinstance(messages, list) or not all(
            isinstance(m, dict) and m.get("role") in _ROLES for m in messages):
        raise InvalidArgument(f"--summarizer {spec!r}: a framework summarizer takes chat messages "
                              f"(--dialect chat), got {_short(messages)}")
    return messages


def _positional(obj: Any) -> int | None:
    """How many positional arguments to pass ``obj``: 2 (messages, budget), 1 (messages), 0, -1 (none of
    these fit), or None when it has no signature to read (a C callable)."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    for count in (2, 1, 0):
        try:
            signature.bind(*range(count))
        except TypeError:
            continue
        return count
    return -1


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _json_object(text: str) -> dict[str, Any] | None:
    """``text`` parsed, when it is a JSON object (as LangChain parses arguments: control characters allowed)."""
    try:
        value = json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _remember(texts: _Texts, call_id: str, name: str, text: str) -> Any:
    """The value of ``text`` when it is a JSON object, remembered with its text; else None."""
    value = _json_object(text)
    if value is not None:
        texts.setdefault((call_id, name, _canonical(value)), text)
    return value


def _arguments(tables: Sequence[_Texts], call_id: str, name: str, value: Any, where: str) -> str:
    """The text of a call's parsed arguments: ours when unchanged (the first table that has it), else written out."""
    try:
        canonical = _canonical(value)
    except (TypeError, ValueError, RecursionError):
        raise MalformedResult(f"{where}: expected JSON data as arguments, got {_short(value)}") from None
    key = (call_id, name, canonical)
    return next((table[key] for table in tables if key in table), canonical)


def _call_dict(call_id: Any, name: Any, arguments: str, where: str) -> Message:
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise MalformedResult(f"{where}: a tool call needs a string id and name, got id={_short(call_id)}, "
                              f"name={_short(name)}")
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _message(role: str, text: str, calls: list[Message], tool_call_id: Any, where: str) -> Message:
    if calls and role != "assistant":
        raise MalformedResult(f"{where}: only an assistant message may make tool calls, not a {role} message")
    message: Message = {"role": role, "content": text}
    if calls:
        message["tool_calls"] = calls
    if role == "tool":
        if not isinstance(tool_call_id, str):
            raise MalformedResult(f"{where}: a tool message needs the string id of the call it answers, "
                                  f"got {_short(tool_call_id)}")
        message["tool_call_id"] = tool_call_id
    return message


def _list_of(result: Any, what: str) -> Sequence[Any]:
    if not isinstance(result, list | tuple):
        raise MalformedResult(f"expected a list of {what}, got {type(result).__name__}")
    return result


def _dress(fn: Any, obj: Any, spec: str) -> None:
    """What the harness reads off a summarizer: its protocol, its signature, and whose code it is.

    ``__module__`` is the team's: a function's or class's own, else (a configured ``trim_messages``
    Runnable, whose class is langchain-core's) the module the spec loaded it from, so the call cache's
    fingerprint follows the team's file, not the library's.
    """
    fn.compaction_protocol = "messages"
    fn.__wrapped__ = obj
    # inspect.signature would follow __wrapped__ to obj's own, which may take (messages) only.
    fn.__signature__ = inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                          for name in ("messages", "budget")])
    if getattr(obj, "compaction_may_vary", False) is True:
        fn.compaction_may_vary = True
    source = obj
    while isinstance(source, functools.partial):
        source = source.func
    if inspect.isroutine(source) or inspect.isclass(source):
        for attr in ("__module__", "__qualname__", "__name__"):
            value = getattr(source, attr, None)
            if isinstance(value, str):
                setattr(fn, attr, value)
        return
    module, name = _spec_module(spec)
    fn.__module__ = module or type(obj).__module__
    fn.__name__ = fn.__qualname__ = name


def _spec_module(spec: str) -> tuple[str | None, str]:
    """The name of the loaded module the spec's ``module:NAME`` part names (None if not loaded), and NAME."""
    rest = next((spec[len(p):] for p in FRAMEWORKS if spec.startswith(p)), spec)
    target, _, name = rest.rpartition(":")
    if not (target.endswith(".py") or os.sep in target or "/" in target):
        return (target if target in sys.modules else None), name
    path = os.path.realpath(target)
    for module_name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and os.path.realpath(file) == path:
            return module_name, name
    return None, name


# -- LangChain ------------------------------------------------------------------------------------------

def _langchain_call(lc: Any, obj: Any, spec: str) -> Callable[[list[Message], int], list[Message]]:
    said = f"--summarizer {spec!r}"
    expected = ("a LangChain Runnable (anything with .invoke, such as trim_messages(max_tokens=..., "
                "token_counter=..., strategy='last')) or a function taking (messages) or (messages, budget) "
                "that returns a list of messages")
    if obj is lc.trim_messages:
        raise SpecError(f"{said}: trim_messages itself needs its settings; name a configured one, "
                        f"TRIM = trim_messages(max_tokens=..., token_counter=..., strategy='last'), which is "
                        f"a Runnable")
    if isinstance(obj, type):
        raise SpecError(f"{said}: expected {expected}, got the class {obj.__name__}; name an instance")
    invoke = getattr(obj, "invoke", None)
    if callable(invoke):
        run = lambda messages, budget: invoke(messages)  # noqa: E731
    elif callable(obj):
        count = _positional(obj)
        if count == 2:
            run = obj
        elif count in (1, None):
            run = lambda messages, budget: obj(messages)  # noqa: E731
        else:
            raise SpecError(f"{said}: expected {expected}; {type(obj).__name__} "
                            f"{getattr(obj, '__name__', '')}{inspect.signature(obj)} takes neither")
    else:
        raise SpecError(f"{said}: expected {expected}, got {type(obj).__name__}")

    def call(messages: list[Message], budget: int) -> list[Message]:
        every = _Sent({}, {})
        sent: dict[int, _Sent] = {}  # by id() of the message we made; ``converted`` keeps those ids taken
        converted = []
        for message in messages:
            own = _Sent({}, {})
            converted.append(_to_langchain(lc, message, own))
            sent[id(converted[-1])] = own
            for key, text in own.texts.items():
                every.texts.setdefault(key, text)
            for key, j in own.order.items():
                every.order.setdefault(key, j)
        result = _list_of(run(converted, budget), "LangChain messages (langchain_core.messages.BaseMessage)")
        return [_from_langchain(lc, m, f"message [{i}]", (sent[id(m)], every) if id(m) in sent else (every,))
                for i, m in enumerate(result)]

    return call


@dataclass(frozen=True)
class _Sent:
    """The tool calls of what we handed over: each call's arguments text (``_Texts``) and its place in
    its message, by (call id, name). One per message, and one for them all."""

    texts: _Texts
    order: dict[tuple[str, str], int]


def _to_langchain(lc: Any, message: Message, sent: _Sent) -> Any:
    role, text = message["role"], message.get("content") or ""
    if role == "system":
        return lc.SystemMessage(content=text)
    if role == "user":
        return lc.HumanMessage(content=text)
    if role == "tool":
        return lc.ToolMessage(content=text, tool_call_id=message["tool_call_id"])
    # lazy: langchain-core is an optional extra, imported only when a langchain: summarizer runs
    from langchain_core.messages.tool import invalid_tool_call, tool_call

    calls, invalid = [], []
    for j, call in enumerate(message.get("tool_calls") or ()):
        call_id, name = call["id"], call["function"]["name"]
        raw = call["function"].get("arguments", "{}")
        sent.order.setdefault((call_id, name), j)
        value = _remember(sent.texts, call_id, name, raw)
        if value is None:
            invalid.append(invalid_tool_call(name=name, args=raw, id=call_id, error="arguments are not a JSON object"))
        else:
            calls.append(tool_call(name=name, args=value, id=call_id))
    return lc.AIMessage(content=text, tool_calls=calls, invalid_tool_calls=invalid)


def _from_langchain(lc: Any, message: Any, where: str, sent: tuple[_Sent, ...]) -> Message:
    """Our dict for a LangChain message. ``sent`` is what we handed over, this message's own record first
    when it is an object we made (so a call id used twice in a transcript still gets its own text back)."""
    if not isinstance(message, lc.BaseMessage):
        raise MalformedResult(f"{where}: expected a LangChain message (langchain_core.messages.BaseMessage), "
                              f"got {type(message).__name__}")
    if isinstance(message, lc.SystemMessage):
        role = "system"
    elif isinstance(message, lc.HumanMessage):
        role = "user"
    elif isinstance(message, lc.AIMessage):
        role = "assistant"
    elif isinstance(message, lc.ToolMessage):
        role = "tool"
    elif isinstance(message, lc.ChatMessage) and message.role in (*_ROLES, "developer"):
        role = "system" if message.role == "developer" else message.role
    else:
        raise MalformedResult(f"{where}: a {type(message).__name__} has no chat-completions equivalent; expected "
                              f"a SystemMessage, HumanMessage, AIMessage or ToolMessage")
    calls: list[tuple[int, Message]] = []
    tables = [record.texts for record in sent]

    def place(call_id: Any, name: Any) -> int:
        return next((record.order[(call_id, name)] for record in sent if (call_id, name) in record.order), 1 << 30)

    if role == "assistant" and isinstance(message, lc.AIMessage):
        for j, call in enumerate(message.tool_calls):
            at = f"{where}.tool_calls[{j}]"
            call_id, name = call.get("id"), call.get("name")
            calls.append((place(call_id, name),
                          _call_dict(call_id, name, _arguments(tables, call_id, name, call.get("args"), at), at)))
        for j, call in enumerate(message.invalid_tool_calls):
            at = f"{where}.invalid_tool_calls[{j}]"
            args = call.get("args")
            if args is not None and not isinstance(args, str):
                raise MalformedResult(f"{at}.args: expected the arguments text, got {_short(args)}")
            call_id, name = call.get("id"), call.get("name")
            calls.append((place(call_id, name), _call_dict(call_id, name, "{}" if args is None else args, at)))
        if message.invalid_tool_calls:  # the two lists split one message's calls: put them back in order
            calls.sort(key=lambda pair: pair[0])
    return _message(role, content_text(message.content, where), [c for _, c in calls],
                    getattr(message, "tool_call_id", None), where)


# -- LlamaIndex -----------------------------------------------------------------------------------------

#: LlamaIndex ``MessageRole`` values -> ours (``function`` has no equivalent).
_LLAMA_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant",
                "chatbot": "assistant", "model": "assistant", "tool": "tool"}


def _is_memory(value: Any) -> bool:
    return (not isinstance(value, type) and callable(getattr(value, "put_messages", None))
            and callable(getattr(value, "get", None)))


def _llamaindex_call(li: Any, obj: Any, spec: str) -> Callable[[list[Message], int], list[Message]]:
    said = f"--summarizer {spec!r}"
    if not hasattr(li, "ToolCallBlock"):
        raise SpecError(f"{said} needs llama-index-core 0.14.5 or later (ToolCallBlock): pip install "
                        f"'compaction-harness[llamaindex]'")
    expected = ("a function taking (messages) or (messages, budget) that returns a list of ChatMessage, or a "
                "zero-argument factory returning a fresh memory, such as "
                "lambda: ChatMemoryBuffer.from_defaults(token_limit=...)")
    if _is_memory(obj):
        raise SpecError(f"{said}: expected {expected}, got a {type(obj).__name__} instance: one memory shared by "
                        f"every call would carry the messages of one compaction into the next")
    if not callable(obj):
        raise SpecError(f"{said}: expected {expected}, got {type(obj).__name__}")
    count = _positional(obj)
    if count == 2:
        run = obj
    elif count in (1, None):
        run = lambda messages, budget: obj(messages)  # noqa: E731
    elif count == 0:
        _check_factory(obj, said)

        def run(messages, budget):
            memory = obj()
            memory.put_messages(messages)
            return memory.get()
    else:
        raise SpecError(f"{said}: expected {expected}; {getattr(obj, '__name__', type(obj).__name__)}"
                        f"{inspect.signature(obj)} takes none of these")

    def call(messages: list[Message], budget: int) -> list[Message]:
        texts: _Texts = {}
        converted = [_to_llamaindex(li, m, texts) for m in messages]
        result = run(converted, budget)
        if _is_memory(result):
            raise MalformedResult(f"expected a list of ChatMessage, got a {type(result).__name__}: to have "
                                  f"the harness fill a fresh memory each call, name a zero-argument factory")
        return [_from_llamaindex(li, m, f"message [{i}]", texts)
                for i, m in enumerate(_list_of(result, "LlamaIndex ChatMessage"))]

    return call


def _check_factory(factory: Callable[[], Any], said: str) -> None:
    """A zero-argument callable is taken as a memory factory: called once now, so a wrong one fails at load."""
    try:
        memory = factory()
    except Exception as exc:
        raise SpecError(f"{said}: calling the memory factory raised {type(exc).__name__}: {exc}") from None
    if not _is_memory(memory):
        raise SpecError(f"{said}: a zero-argument callable must be a factory returning a fresh memory (with "
                        f"put_messages and get), but it returned {type(memory).__name__}")


def _to_llamaindex(li: Any, message: Message, texts: _Texts) -> Any:
    role, text = message["role"], message.get("content") or ""
    calls = message.get("tool_calls") or ()
    blocks: list[Any] = [li.TextBlock(text=text)] if text or not calls else []
    for call in calls:
        call_id, name = call["id"], call["function"]["name"]
        raw = call["function"].get("arguments", "{}")
        _remember(texts, call_id, name, raw)  # a team may replace the text with a dict of it
        blocks.append(li.ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs=raw))
    extra = {"tool_call_id": message["tool_call_id"]} if role == "tool" else {}
    return li.ChatMessage(role=role, blocks=blocks, additional_kwargs=extra)


def _from_llamaindex(li: Any, message: Any, where: str, texts: _Texts) -> Message:
    if not isinstance(message, li.ChatMessage):
        raise MalformedResult(f"{where}: expected a LlamaIndex ChatMessage, got {type(message).__name__}")
    role_value = getattr(message.role, "value", message.role)
    role = _LLAMA_ROLES.get(role_value)
    if role is None:
        raise MalformedResult(f"{where}.role: expected one of {', '.join(_LLAMA_ROLES)}, got {_short(role_value)}")
    parts, calls = [], []
    for k, block in enumerate(message.blocks):
        at = f"{where}.blocks[{k}]"
        if isinstance(block, li.TextBlock):
            if not isinstance(block.text, str):
                raise MalformedResult(f"{at}.text: expected a string, got {type(block.text).__name__}")
            parts.append(block.text)
        elif isinstance(block, li.ToolCallBlock):
            calls.append(_llama_call(block.tool_call_id, block.tool_name, block.tool_kwargs, texts, at))
    extra = message.additional_kwargs if isinstance(message.additional_kwargs, dict) else {}
    if not calls and extra.get("tool_calls"):  # the representation before ToolCallBlock
        legacy = extra["tool_calls"]
        if not isinstance(legacy, list | tuple):
            raise MalformedResult(f"{where}.additional_kwargs['tool_calls']: expected a list, got {_short(legacy)}")
        for j, call in enumerate(legacy):
            at = f"{where}.additional_kwargs['tool_calls'][{j}]"
            if isinstance(call, dict):
                function = call.get("function") if isinstance(call.get("function"), dict) else {}
                call_id, name, args = call.get("id"), function.get("name"), function.get("arguments", "{}")
            else:  # an OpenAI SDK ChatCompletionMessageToolCall
                function = getattr(call, "function", None)
                call_id, name = getattr(call, "id", None), getattr(function, "name", None)
                args = getattr(function, "arguments", "{}")
            calls.append(_llama_call(call_id, name, args, texts, at))
    tool_call_id = extra.get("tool_call_id") if role == "tool" else None  # FunctionAgent sets it on assistants too
    return _message(role, "\n".join(parts), calls, tool_call_id, where)


def _llama_call(call_id: Any, name: Any, args: Any, texts: _Texts, where: str) -> Message:
    text = args if isinstance(args, str) else _arguments((texts,), call_id, name, args, where)
    return _call_dict(call_id, name, text, where)
