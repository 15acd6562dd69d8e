"""The fuzz targets: one function per input surface, ``target(data: bytes) -> None``.

Each lets through only the errors its code under test documents (``SchemaError`` for the
loaders, ``InfraError`` for what a summarizer returns or answers) and checks what holds by
design on success: a loaded document writes back and loads back equal, a normalised result is
plain JSON that normalises to itself. Anything else propagates: atheris reports it as a crash,
and ``tests/test_fuzz_targets.py`` replays every saved input through the same function.

An input starting with ``{``, ``[`` or ``"`` is JSON text fed to the parser as it comes (the
seeds are such); any other input drives Hypothesis (``fuzz_one_input``), which picks a valid
document from ``fuzz._pool`` and mutates it (``fuzz._mutate``).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz import _pool
from fuzz._mutate import Make, json_values, mutated, to_text, vocabulary
from fuzz._odd import EXCEPTIONS, odd_values, raised, realise
from harness._app.corpus._entries import entry_from_dict, entry_name, entry_to_dict
from harness._app.calling._openai import _completion
from harness._app.calling._transport import Setup, checked_answer
from harness._base._calling import call_once
from harness._base._codec import dumps, loads, transcript_from_dict
from harness._base._errors import InfraError, SchemaError
from harness._base._files import parse_json
from harness._base._protocol import PROTOCOLS
from harness._base._result_codec import result_from_dict, result_to_dict
from harness._base._wire import Usage, answer_from_wire, request_from_wire, request_to_wire

__all__ = ["TARGETS", "prepare", "runner", "replay"]

SOURCE = "<fuzz>"
_TEXT_START = (ord("{"), ord("["), ord('"'))
_SETUP = Setup()


def _is_text(data: bytes) -> bool:
    return bool(data) and data[0] in _TEXT_START


def _schema_error(exc: SchemaError) -> None:
    """A SchemaError is printed as it is: it must name our source and be writable text."""
    assert exc.source == SOURCE, f"the error names {exc.source!r}, not the document's source"
    str(exc).encode("utf-8")


def _structured(strategy: st.SearchStrategy, check: Callable[[Any], None]) -> Callable[[bytes], Any]:
    @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value: Any) -> None:
        check(value)

    return run.hypothesis.fuzz_one_input


# --- transcript -------------------------------------------------------------------------------

def _transcript_loaded(t) -> None:
    text = dumps(t)
    text.encode("utf-8")  # what was read can be written (a file, a report)
    assert loads(text, source=SOURCE) == t, "dumps then loads changed the transcript"


def _transcript_text(text: str) -> None:
    try:
        t = loads(text, source=SOURCE)
    except SchemaError as exc:
        _schema_error(exc)
        return
    _transcript_loaded(t)


def _parsed(text: str | None) -> Any:
    """What ``json.loads`` makes of ``text`` (the data a loader's ``*_from_dict`` is documented to take), or
    ``_UNPARSED`` when it refuses it (nesting too deep, an int too long): only the text path can take that."""
    try:
        return _UNPARSED if text is None else json.loads(text)
    except (ValueError, RecursionError):
        return _UNPARSED


_UNPARSED = object()


def _transcript_doc(doc: Any, via_text: bool) -> None:
    """The document as JSON text for ``loads``, or as parsed data for ``transcript_from_dict``."""
    text = to_text(doc)
    data = _UNPARSED if via_text else _parsed(text)
    if data is _UNPARSED:
        if text is not None:
            _transcript_text(text)
        return
    try:
        t = transcript_from_dict(data, source=SOURCE)
    except SchemaError as exc:
        _schema_error(exc)
        return
    _transcript_loaded(t)


@functools.cache
def _transcript_structured():
    docs = _pool.transcript_docs()
    names = vocabulary([json.loads(d) for d in docs])
    return _structured(st.tuples(mutated(docs, names, python_only=True), st.booleans()),
                       lambda drawn: _transcript_doc(*drawn))


def transcript(data: bytes) -> None:
    """``loads`` (JSON text) and ``transcript_from_dict`` (parsed data): SchemaError, or a transcript that
    writes back and loads back equal."""
    if _is_text(data):
        _transcript_text(data.decode("utf-8", "surrogateescape"))
    else:
        _transcript_structured()(data)


# --- corpus_entry -----------------------------------------------------------------------------

def _entry_doc(doc: Any) -> None:
    try:
        entry = entry_from_dict(doc, source=SOURCE)
    except SchemaError as exc:
        _schema_error(exc)
        return
    data = entry_to_dict(entry)
    json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8")  # what save_entry writes
    entry_name(entry)
    assert entry_from_dict(data, source=SOURCE) == entry, "entry_to_dict then entry_from_dict changed the entry"


def _entry_text(text: str) -> None:
    try:
        doc = parse_json(text, source=SOURCE)  # how load_entry and load_corpus read a file
    except SchemaError as exc:
        _schema_error(exc)
        return
    _entry_doc(doc)


@functools.cache
def _entry_structured():
    docs = _pool.entry_docs()
    names = vocabulary([json.loads(d) for d in docs])

    def check(doc: Any, via_text: bool) -> None:
        text = to_text(doc)
        data = _UNPARSED if via_text else _parsed(text)
        if data is not _UNPARSED:
            _entry_doc(data)
        elif text is not None:
            _entry_text(text)

    return _structured(st.tuples(mutated(docs, names, python_only=True), st.booleans()), lambda drawn: check(*drawn))


def corpus_entry(data: bytes) -> None:
    """``entry_from_dict`` (and ``parse_json`` before it): SchemaError or an entry that round-trips and saves."""
    if _is_text(data):
        _entry_text(data.decode("utf-8", "surrogateescape"))
    else:
        _entry_structured()(data)


# --- result -----------------------------------------------------------------------------------

def _plain_result(data: dict[str, Any]) -> None:
    """A checked result is plain JSON data, writable, and normalises to itself."""
    json.dumps(data, ensure_ascii=False).encode("utf-8")
    assert result_to_dict(result_from_dict(data)) == data, "a checked result does not normalise to itself"


def _summarizer(recipe: Any) -> Callable[..., Any]:
    """A summarizer that returns (or raises, or mutates its input and returns) what ``recipe`` says."""
    def summarize(*args: Any) -> Any:
        if isinstance(recipe, Make) and recipe.kind == "raise":
            raise raised(realise(recipe.parts))
        if isinstance(recipe, Make) and recipe.kind == "mutate_input":
            given_ = args[0]
            if isinstance(given_, list):
                given_.append({"role": "user", "content": "an extra message"})
            else:
                object.__setattr__(given_, "budget", given_.budget + 1)
            return realise(recipe.parts[0] if recipe.parts else None)
        return realise(recipe)

    return summarize


def _call(recipe: Any, protocol: str) -> None:
    try:
        data = call_once(_summarizer(recipe), protocol, _pool.request())
    except InfraError:
        return
    _plain_result(data)


@functools.cache
def _result_structured():
    recipes = _pool.result_recipes()
    names = vocabulary(recipes)
    raising = st.tuples(st.sampled_from(tuple(EXCEPTIONS)), json_values(names, python_only=True)).map(
        lambda drawn: Make("raise", list(drawn)))  # a summarizer that raises, instead of returning
    returned = mutated(recipes, names, texts=False, python_only=True, extra=odd_values)
    strategy = st.tuples(st.one_of(returned, returned, returned, raising), st.sampled_from(PROTOCOLS))
    return _structured(strategy, lambda drawn: _call(*drawn))


def result(data: bytes) -> None:
    """``call_once`` on a summarizer returning fuzzed values: InfraError or plain JSON that normalises to itself."""
    if _is_text(data):
        try:
            value = json.loads(data.decode("utf-8", "surrogateescape"))
        except (ValueError, RecursionError):
            return  # not a value a summarizer could return
        for protocol in PROTOCOLS:
            _call(value, protocol)
    else:
        _result_structured()(data)


# --- wire -------------------------------------------------------------------------------------

def _usage(usage: Usage | None) -> None:
    """Usage counts tokens: non-negative ints, never a bool or a negative number that lowers a spend cap."""
    if usage is not None:
        for count in (usage.prompt_tokens, usage.completion_tokens):
            assert type(count) is int and count >= 0, f"usage holds {count!r}"


def _request(data: Any) -> None:
    try:
        request, protocol = request_from_wire(data, source=SOURCE)
    except SchemaError as exc:
        _schema_error(exc)
        return
    assert protocol in PROTOCOLS
    again, protocol_again = request_from_wire(json.loads(json.dumps(request_to_wire(request, protocol))), source=SOURCE)
    assert (again.turns, again.budget, protocol_again) == (request.turns, request.budget, protocol), \
        "request_to_wire then request_from_wire changed the request"
    if protocol == "rich":
        assert again.tags == request.tags, "request_to_wire then request_from_wire changed the tags"


def _answer(data: Any) -> None:
    try:
        found, usage = answer_from_wire(data)
    except InfraError:
        return
    _usage(usage)
    try:
        answer = checked_answer(found, _SETUP, usage=usage)
    except InfraError:
        return
    _plain_result(answer.result)


def _chat_completion(data: Any) -> None:
    try:
        text, usage = _completion(data)
    except InfraError:
        return
    assert isinstance(text, str)
    _usage(usage)
    try:
        answer = checked_answer({"messages": text}, _SETUP, usage=usage)
    except InfraError:
        return
    _plain_result(answer.result)


def _wire_doc(doc: Any) -> None:
    _request(doc)
    _answer(doc)
    _chat_completion(doc)


@functools.cache
def _wire_structured():
    docs = _pool.wire_docs()
    names = vocabulary([json.loads(d) for d in docs], ("error", "refusal", "total_tokens"))
    def check(doc: Any) -> None:
        data = _parsed(to_text(doc))  # a body as json.loads returns it; what it refuses never gets this far
        if data is not _UNPARSED:
            _wire_doc(data)

    return _structured(mutated(docs, names), check)


def wire(data: bytes) -> None:
    """The server side of a request, and a cmd:/http:// answer and an openai: response as the adapters read them."""
    if _is_text(data):
        try:
            doc = json.loads(data)  # as JsonPoster reads a body; it turns these errors into InfraError itself
        except (ValueError, RecursionError):
            return
        _wire_doc(doc)
    else:
        _wire_structured()(data)


#: The recursion headroom (nested calls still allowed under the limit) every input starts with.
_HEADROOM = 950


def _headroom(depth: int = 0) -> int:
    """How many more nested calls fit under the recursion limit, probed (C code's guards count too)."""
    try:
        return _headroom(depth + 1)
    except RecursionError:
        return depth


def _descend(levels: int, fn: Callable[[bytes], None], data: bytes) -> None:
    if levels > 0:
        return _descend(levels - 1, fn, data)
    fn(data)


def runner(name: str) -> Callable[[bytes], None]:
    """Target ``name``, called with the same recursion headroom ``_HEADROOM`` wherever it runs.

    The limit counts frames, so whether JSON nested about a thousand deep parses and then overflows in
    a repr() or json.dumps depends on how deep the caller already is. With the headroom fixed, an input
    that crashed the fuzzer at one exact nesting crashes a replay under pytest the same way. The
    padding is probed on the first call: each caller calls from one stack depth.
    """
    pad: int | None = None

    def call(data: bytes) -> None:
        nonlocal pad
        if pad is None:
            pad = _headroom() - _HEADROOM
        _descend(pad, TARGETS[name], data)

    return call


class _Replay(threading.Thread):
    def __init__(self, name: str, data: bytes):
        super().__init__(daemon=True)
        self.target_name, self.data, self.error = name, data, None

    def run(self) -> None:
        try:
            runner(self.target_name)(self.data)
        except BaseException as exc:  # handed back to replay()'s caller
            self.error = exc


def replay(name: str, data: bytes) -> None:
    """``runner(name)(data)`` in a fresh thread, whose stack has more headroom than ``_HEADROOM`` wherever
    the caller is (a test under pytest is dozens of frames deep); re-raise what the target raised."""
    replaying = _Replay(name, data)
    replaying.start()
    replaying.join()
    if replaying.error is not None:
        raise replaying.error


TARGETS: dict[str, Callable[[bytes], None]] = {
    "transcript": transcript, "corpus_entry": corpus_entry, "result": result, "wire": wire}
_PREPARE = {"transcript": _transcript_structured, "corpus_entry": _entry_structured, "result": _result_structured,
            "wire": _wire_structured}


def prepare(name: str) -> None:
    """Build the target's pool and strategy now, before libFuzzer starts timing inputs."""
    _PREPARE[name]()
