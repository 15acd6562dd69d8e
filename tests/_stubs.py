"""Local HTTP servers that stand in for a summarizer's server or an OpenAI-compatible API in tests.

Every stub is the same small core: a ``ThreadingHTTPServer`` on 127.0.0.1 (an
ephemeral port) that records each request it receives and hands it to a
*behaviour*, a function ``(received, stop) -> Reply | HANG | RESET``.
Behaviours compose (``_first`` answers the first N requests differently and
then defers, ``_delayed`` adds latency), so each public stub is a line or two
of composition rather than its own server::

    with openai_stub(prose.summarize, fail_first=2, retry_after=0) as api:
        run(["--summarizer", "openai:gpt-test", "--base-url", api.url + "/v1"])
        assert api.calls >= 3

A stub is a context manager: the server starts on ``with`` and stops on exit,
even while a handler is hanging (every wait inside a stub waits on its
``stop`` event). Keep-alive is on (HTTP/1.1), as the harness's poster keeps
its connection open between requests.

``python -m tests._stubs openai --summarizer MODULE:FUNCTION`` runs a stub in
its own process (for benchmarks: its CPU then does not compete with the
harness for the GIL); it prints its URL on one line and serves until killed.
"""

from __future__ import annotations

import argparse
import enum
import http.server
import itertools
import json
import random
import re
import signal
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness._app.calling._loading import load_callable
from harness._base._codec import fact_from_dict
from harness._base._errors import HarnessError, MalformedResult, SchemaError, SpecError
from harness._base._protocol import CompactionRequest, resolve_protocol
from harness._base._result_codec import result_from_return, result_to_dict
from harness._base._wire import request_from_wire

__all__ = [
    "HANG",
    "RESET",
    "Received",
    "Reply",
    "Stub",
    "json_reply",
    "call_summarizer",
    "request_from_prompt",
    "wire_answer",
    "openai_stub",
    "wire_stub",
    "hanging_stub",
    "malformed_stub",
    "reset_stub",
]


# --- what a behaviour sees and answers -------------------------------------------------------------


class Headers(dict):
    """Request headers by lower-cased name, looked up in any case (HTTP names are case-insensitive).

    A header sent twice keeps both values, joined by ", ", so a test scanning
    for a leaked secret sees everything that arrived.
    """

    def __init__(self, pairs=()):
        super().__init__()
        for name, value in pairs:
            key = name.lower()
            super().__setitem__(key, f"{self[key]}, {value}" if key in self else value)

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


@dataclass(frozen=True, slots=True)
class Received:
    """One request as the stub got it; ``body`` is the parsed JSON, or None when it is not JSON."""

    method: str
    path: str
    headers: Headers
    body: Any
    raw: bytes


@dataclass(frozen=True, slots=True)
class Reply:
    """An HTTP answer; Content-Length is added when it is sent."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()


class Act(enum.Enum):
    """What a behaviour may do instead of answering."""

    HANG = "hang"  # hold the connection, never answer (until the stub stops)
    RESET = "reset"  # drop the connection without answering: the client sees a reset


HANG = Act.HANG
RESET = Act.RESET

#: ``(received, stop) -> Reply | HANG | RESET``; ``stop`` is set when the stub stops (wait on it, never sleep).
Behaviour = Callable[[Received, threading.Event], "Reply | Act"]


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError too
        return None


def json_reply(data: Any, status: int = 200, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    return Reply(status, json.dumps(data, ensure_ascii=False).encode(),
                 (("Content-Type", "application/json"), *headers))


# --- the one server core ---------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    """Reads a request, records it, asks the behaviour what to do, does it."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are written apart: without it, ~40 ms per answer
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.stub._opened(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.stub._closed(self.connection)

    def _serve(self) -> None:
        stub = self.server.stub
        raw = self._read_body()
        received = Received(self.command, self.path, Headers(self.headers.items()), _json_or_none(raw), raw)
        stub._record(received)
        try:
            outcome = stub.behaviour(received, stub._stop)
        except Exception as exc:  # a bug in a behaviour: answer it rather than leave the client waiting
            outcome = json_reply({"error": f"stub behaviour failed: {type(exc).__name__}: {exc}"}, 500)
        self._deliver(outcome)

    do_POST = do_GET = do_PUT = do_PATCH = do_DELETE = _serve

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers
                pass
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _deliver(self, outcome: Reply | Act) -> None:
        if outcome is Act.HANG:
            self.server.stub._stop.wait()
            outcome = Act.RESET
        if outcome is Act.RESET:
            # Linger 0: closing sends RST, not FIN. The real close happens when finish() closes the
            # socket's files, before the server's shutdown(SHUT_WR) could send a FIN first.
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return
        self.send_response(outcome.status)
        for name, value in outcome.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(outcome.body)))
        self.end_headers()
        self.wfile.write(outcome.body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # keep test output clean; the test reads .requests instead


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True  # a hanging handler never keeps the test process alive
    request_queue_size = 128  # the default 5 drops connects under --jobs, and a dropped SYN costs a second
    stub: Stub

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks up the host's FQDN, a DNS round trip we do not need.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timed out, was reset) is what these stubs are for, not an error to print.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class Stub:
    """A stub server around one behaviour: started by ``with`` (yielding itself), stopped on exit.

    ``url`` is the base URL; ``requests`` a snapshot of every request received
    so far (``Received``); ``calls`` how many. Building a ``Stub`` binds
    nothing, so an unstarted one can lend its behaviour to another
    (``reset_stub(then=openai_stub(fn))``).
    """

    def __init__(self, behaviour: Behaviour):
        self.behaviour = behaviour
        self._lock = threading.Lock()
        self._requests: list[Received] = []
        self._connections: set[socket.socket] = set()
        self._stop = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the stub is not running: use it in a `with` block")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[Received]:
        with self._lock:
            return list(self._requests)

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self._requests)

    def start(self) -> Stub:
        if self._server is not None:
            raise RuntimeError("the stub is already running")
        self._stop.clear()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.stub = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="stub-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stop.set()  # releases hanging handlers and latency waits
        server.shutdown()
        server.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:  # wake handlers blocked reading the next keep-alive request
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)

    def __enter__(self) -> Stub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, received: Received) -> None:
        with self._lock:
            self._requests.append(received)

    def _opened(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.add(connection)

    def _closed(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)


# --- behaviours ------------------------------------------------------------------------------------


def _first(count: int, outcome: Reply | Act, then: Behaviour) -> Behaviour:
    """``outcome`` for the first ``count`` requests this behaviour sees, then ``then``."""
    seen = itertools.count(1)
    lock = threading.Lock()

    def behave(received: Received, stop: threading.Event) -> Reply | Act:
        with lock:
            n = next(seen)
        return outcome if n <= count else then(received, stop)

    return behave if count > 0 else then


def _delayed(seconds: float, then: Behaviour) -> Behaviour:
    """``then``, after ``seconds`` (cut short when the stub stops)."""
    def behave(received: Received, stop: threading.Event) -> Reply | Act:
        stop.wait(seconds)
        return then(received, stop)

    return behave if seconds > 0 else then


def _always(outcome: Reply | Act) -> Behaviour:
    return lambda received, stop: outcome


def call_summarizer(fn: Callable[..., Any], request: CompactionRequest, protocol: str) -> Any:
    """Call a Python summarizer the way its protocol says: ``fn(request)`` or ``fn(messages, budget)``."""
    return fn(request) if protocol == "rich" else fn(request.messages(), request.budget)


def _words(text: str) -> int:
    return len(text.split())


def wire_answer(data: Any, fn: Callable[..., Any]) -> dict[str, Any]:
    """The wire answer (``wire.md``) of a Python summarizer to one parsed request.

    A request that does not match the wire schema raises ``SchemaError`` (the
    caller's fault: the HTTP stub answers 400); a summarizer that raises or
    returns something malformed answers ``{"error": ...}``, as a real server would.
    """
    request, protocol = request_from_wire(data)
    try:
        result = result_from_return(call_summarizer(fn, request, protocol))
    except MalformedResult as exc:
        return {"error": f"the summarizer returned a malformed result: {exc}"}
    except (Exception, SystemExit) as exc:
        return {"error": f"the summarizer failed: {type(exc).__name__}: {exc}"}
    answer = result_to_dict(result)
    answer["usage"] = {"prompt_tokens": sum(_words(t.text) for t in request.turns),
                       "completion_tokens": _words(result.summary_text)}
    return answer


def _wire(fn: Callable[..., Any]) -> Behaviour:
    def behave(received: Received, stop: threading.Event) -> Reply:
        if received.method != "POST":
            return json_reply({"error": f"POST a request, not {received.method}"}, 405)
        if received.body is None:
            return json_reply({"error": "the request body is not JSON"}, 400)
        try:
            return json_reply(wire_answer(received.body, fn))
        except SchemaError as exc:
            return json_reply({"error": str(exc)}, 400)

    return behave


# The OpenAI API's error bodies, so the harness's error excerpts look like the real thing.
_OPENAI_ERRORS = {
    429: ("Rate limit reached for requests (stub).", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request (stub).", "server_error", None),
    503: ("The engine is currently overloaded, please try again later (stub).", "server_error", None),
}


def _openai_error(status: int, message: str | None = None, kind: str | None = None,
                  headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    default_message, default_kind, code = _OPENAI_ERRORS.get(status, (f"HTTP {status} (stub).", "server_error", None))
    return json_reply({"error": {"message": message or default_message, "type": kind or default_kind,
                                 "param": None, "code": code}}, status, headers)


class _BadPrompt(ValueError):
    """The prompt is not the default template filled in (so the stub cannot read it back)."""


_BUDGET = re.compile(r"at most (\d+) tokens")
_SENTENCE_BREAK = re.compile(r"((?<=[.!?])\s+|\n+)")


def _block(lines: list[str], name: str, start: int) -> tuple[int, int]:
    """Where the block ``<name>`` ... ``</name>`` (each tag on a line of its own) opens and closes."""
    try:
        open_at = next(i for i in range(start, len(lines)) if lines[i].strip() == f"<{name}>")
        close_at = next(i for i in range(open_at + 1, len(lines)) if lines[i].strip() == f"</{name}>")
    except StopIteration:
        raise _BadPrompt(f"the prompt has no <{name}> ... </{name}> block") from None
    return open_at, close_at


def _json_lines(lines: list[str]) -> list[Any]:
    return [json.loads(line) for line in lines if line.strip()]


def request_from_prompt(prompt: str) -> CompactionRequest:
    """Read the request back out of a prompt filled from the default template (a ``ValueError`` otherwise)."""
    lines = prompt.split("\n")  # only "\n": a message's JSON may hold U+2028, which splitlines() would split at
    transcript_at, transcript_end = _block(lines, "transcript", 0)
    obligations_at, obligations_end = _block(lines, "obligations", transcript_end + 1)
    budget = _BUDGET.search("\n".join(lines[:transcript_at]))
    if budget is None:
        raise _BadPrompt("the prompt says no 'at most N tokens' before the transcript")
    try:
        turns = result_from_return(_json_lines(lines[transcript_at + 1:transcript_end])).messages
        facts = tuple(fact_from_dict(f, source="<obligations>")
                      for f in _json_lines(lines[obligations_at + 1:obligations_end]))
    except (ValueError, RecursionError, HarnessError) as exc:
        raise _BadPrompt(f"cannot read the prompt's blocks back: {exc}") from None
    return CompactionRequest(turns, int(budget.group(1)), facts)


def _drop_sentences(text: str, share: float, rng: random.Random) -> str:
    """``text`` without each sentence (ended by . ! ? and whitespace, or a newline) with probability ``share``."""
    parts = _SENTENCE_BREAK.split(text)  # sentence, break, sentence, break, ..., sentence
    kept = []
    for i in range(0, len(parts), 2):
        sentence, brk = parts[i], parts[i + 1] if i + 1 < len(parts) else ""
        if not sentence or rng.random() >= share:
            kept.append(sentence + brk)
    return "".join(kept)


def _openai(fn: Callable[..., Any], drop_share: float, seed: int) -> Behaviour:
    """Chat completions whose answer is what ``fn`` makes of the transcript in the prompt."""
    protocol = resolve_protocol(fn)
    rng = random.Random(seed)  # one stream for every request: the same prompt can get another answer
    lock = threading.Lock()
    ids = itertools.count(1)

    def behave(received: Received, stop: threading.Event) -> Reply:
        path = urllib.parse.urlsplit(received.path).path
        if received.method != "POST" or path != "/v1/chat/completions":
            return _openai_error(404, f"Invalid URL ({received.method} {received.path})", "invalid_request_error")
        body = received.body
        try:
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise _BadPrompt("expected a JSON object with 'messages'")
            users = [m for m in body["messages"] if isinstance(m, dict) and m.get("role") == "user"]
            if len(users) != 1 or not isinstance(users[0].get("content"), str):
                raise _BadPrompt("expected exactly one user message with text content")
            prompt = users[0]["content"]
            request = request_from_prompt(prompt)
        except _BadPrompt as exc:
            return _openai_error(400, f"stub: {exc}", "invalid_request_error")
        try:
            text = result_from_return(call_summarizer(fn, request, protocol)).summary_text
        except (Exception, SystemExit) as exc:
            return _openai_error(500, f"stub: the summarizer failed: {type(exc).__name__}: {exc}")
        if drop_share > 0:
            with lock:
                text = _drop_sentences(text, drop_share, rng)
        prompt_tokens, completion_tokens = _words(prompt), _words(text)
        return json_reply({
            "id": f"chatcmpl-stub{next(ids)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        })

    return behave


def _retry_after(seconds: float | None) -> tuple[tuple[str, str], ...]:
    return () if seconds is None else (("Retry-After", f"{seconds:g}"),)


# --- the stubs -------------------------------------------------------------------------------------


def openai_stub(summarizer: Callable[..., Any], *, latency: float = 0.0, drop_share: float = 0.0, seed: int = 0,
                fail_first: int = 0, fail_status: int = 429, retry_after: float | None = None) -> Stub:
    """An OpenAI-compatible ``POST /v1/chat/completions`` whose "model" is a Python summarizer.

    It reads the budget, transcript and obligations back out of the default
    prompt, calls ``summarizer`` (rich if its ``compaction_protocol`` says so)
    and answers the result's text. ``drop_share`` drops each sentence of the
    answer with that probability (a model at temperature > 0: the same request
    can be answered differently). The first ``fail_first`` requests are
    answered at once with ``fail_status`` (and ``Retry-After`` when given), as
    a rate limiter would; the others after ``latency`` seconds. A summarizer
    that raises answers 500; a prompt it cannot read, 400; another path, 404.
    """
    core = _delayed(latency, _openai(summarizer, drop_share, seed))
    return Stub(_first(fail_first, _openai_error(fail_status, headers=_retry_after(retry_after)), core))


def wire_stub(summarizer: Callable[..., Any], *, latency: float = 0.0, fail_first: int = 0, fail_status: int = 503,
              retry_after: float | None = None) -> Stub:
    """An ``http://`` summarizer server: any path, the request and answer JSON of ``wire.md``.

    A summarizer that raises answers 200 ``{"error": ...}``; a request that
    does not match the schema, 400. Failures come first and at once, as in ``openai_stub``.
    """
    failure = json_reply({"error": f"stub: HTTP {fail_status} on purpose"}, fail_status, _retry_after(retry_after))
    return Stub(_first(fail_first, failure, _delayed(latency, _wire(summarizer))))


def hanging_stub() -> Stub:
    """Accepts connections and requests and never answers (until the ``with`` block ends)."""
    return Stub(_always(HANG))


def malformed_stub(body: bytes = b"{not json") -> Stub:
    """Answers every request 200 with ``body``, labelled application/json."""
    return Stub(_always(Reply(200, body, (("Content-Type", "application/json"),))))


def reset_stub(times: int = 1, then: Stub | Behaviour | None = None) -> Stub:
    """Drops the connection unanswered for the first ``times`` requests, then behaves like ``then``.

    ``then`` is another stub (unstarted is fine: only its behaviour is used,
    and this stub records the requests) or a behaviour; without it, 500.
    """
    after = then.behaviour if isinstance(then, Stub) else then
    if after is None:
        after = _always(json_reply({"error": "stub: nothing to do after the resets"}, 500))
    return Stub(_first(times, RESET, after))


# --- a stub in its own process ---------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests._stubs",
                                     description="Serve a stub until killed; print its base URL on one line.")
    parser.add_argument("kind", choices=("openai", "wire"))
    parser.add_argument("--summarizer", required=True, help="module:function or path.py:function")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--drop-share", type=float, default=0.0, help="openai only: share of sentences dropped")
    parser.add_argument("--seed", type=int, default=0, help="openai only: seed of the sentence dropping")
    parser.add_argument("--fail-first", type=int, default=0, help="answer the first N requests with --fail-status")
    parser.add_argument("--fail-status", type=int, default=None, help="default 429 (openai), 503 (wire)")
    parser.add_argument("--retry-after", type=float, default=None, help="Retry-After seconds on those failures")
    args = parser.parse_args(argv)
    try:
        fn = load_callable(args.summarizer)
    except SpecError as exc:
        print(exc, file=sys.stderr)
        return 2
    failing = {"fail_first": args.fail_first, "retry_after": args.retry_after}
    if args.fail_status is not None:
        failing["fail_status"] = args.fail_status
    if args.kind == "openai":
        stub = openai_stub(fn, latency=args.latency, drop_share=args.drop_share, seed=args.seed, **failing)
    else:
        stub = wire_stub(fn, latency=args.latency, **failing)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    with stub:
        print(stub.url, flush=True)
        try:
            while not stopped.wait(3600):
                pass
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
