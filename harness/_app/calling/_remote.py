"""Posting JSON to a remote summarizer, with retries: what ``http://`` and ``openai:`` share.

429 and 5xx answers, refused or dropped connections and timeouts may pass:
each is retried up to ``Setup.retries`` times, waiting ``RETRY_BASE * 2**n``
seconds (at most ``RETRY_CAP``) with full jitter, or what ``Retry-After``
asks (at most ``RETRY_AFTER_CAP``). What is still failing after that is an
``InfraError`` (``unavailable``, or ``timeout``), reported like any other.
Any other 4xx is the request's fault or the key's and is not retried.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import socket
import time
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from harness._base._errors import InfraError, SpecError
from harness._app.calling._redact import Redactor

__all__ = ["RETRY_BASE", "RETRY_CAP", "RETRY_AFTER_CAP", "Endpoint", "JsonPoster", "retry_after_seconds"]

RETRY_BASE = 0.5
RETRY_CAP = 30.0
RETRY_AFTER_CAP = 120.0
_RETRIED_STATUS = frozenset({408, 425, 429}) | frozenset(range(500, 600))
_MAX_ANSWER_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A parsed http(s) URL: where to connect and what path to post to."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def parse(cls, url: str, *, option: str) -> Endpoint:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SpecError(f"{option} {url!r}: expected an http:// or https:// URL with a host")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise SpecError(f"{option} {url!r}: the port is not a number from 0 to 65535") from None
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        return cls(parts.scheme, parts.hostname, port, path)

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        return kind(self.host, self.port, timeout=timeout)

    def check_reachable(self, timeout: float, *, option: str) -> None:
        """Fail fast, before any example, when nothing listens there (a typo in the URL)."""
        try:
            socket.create_connection((self.host, self.port), timeout=min(timeout, 10.0)).close()
        except OSError as exc:
            raise SpecError(f"{option}: cannot connect to {self.host}:{self.port} ({exc.strerror or exc})") from None


class _Retry(Exception):
    """One attempt failed in a way that may pass."""

    def __init__(self, kind: str, message: str, wait: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.wait = wait


class JsonPoster:
    """POSTs JSON to one endpoint over a kept-alive connection; one request at a time (one per ``--jobs``)."""

    def __init__(self, endpoint: Endpoint, *, retries: int, redactor: Redactor, seed: int = 0):
        self.endpoint = endpoint
        self.retries = retries
        self._redactor = redactor
        self._random = random.Random(seed)  # jitter only: it never changes what is judged
        self._conn: http.client.HTTPConnection | None = None

    def post(self, body: dict[str, Any], timeout: float, headers: dict[str, str] | None = None) -> tuple[Any, int]:
        """The parsed JSON answer and the retries it took; ``InfraError`` once retries are spent."""
        payload = json.dumps(body, ensure_ascii=False).encode()
        sent = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
        for attempt in range(self.retries + 1):
            try:
                return self._attempt(payload, sent, timeout), attempt
            except _Retry as problem:
                self.close()
                if attempt == self.retries:
                    more = f" (after {attempt} retries)" if attempt else ""
                    error = InfraError(problem.kind, self._redactor.redact(problem.message) + more)
                    error.retries = attempt  # counted in the report like the retries of a call that passed
                    raise error from None
                time.sleep(self._delay(attempt, problem.wait))
        raise AssertionError("unreachable")

    def _delay(self, attempt: int, asked: float | None) -> float:
        if asked is not None:
            return min(max(asked, 0.0), RETRY_AFTER_CAP)
        return self._random.uniform(0, min(RETRY_CAP, RETRY_BASE * 2 ** attempt))

    def _attempt(self, payload: bytes, headers: dict[str, str], timeout: float) -> Any:
        where = f"{self.endpoint.host}:{self.endpoint.port}"
        try:
            if self._conn is None:
                self._conn = self.endpoint.connection(timeout)
                self._conn.connect()
                # One request, one answer: Nagle's algorithm would hold small writes for a delayed ACK (~40 ms).
                self._conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._conn.timeout = timeout
            if self._conn.sock is not None:
                self._conn.sock.settimeout(timeout)
            self._conn.request("POST", self.endpoint.path, payload, headers)
            response = self._conn.getresponse()
            data = response.read(_MAX_ANSWER_BYTES + 1)
        except (TimeoutError, socket.timeout):
            raise _Retry("timeout", f"no answer from {where} within {timeout:g} s") from None
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            raise _Retry("unavailable", f"the connection to {where} failed: {type(exc).__name__}: {exc}") from None
        if response.will_close:
            self.close()
        status = response.status
        if status in _RETRIED_STATUS:
            raise _Retry("unavailable", f"{where} answered HTTP {status}: {_excerpt(data)}",
                         retry_after_seconds(response.getheader("Retry-After")))
        if not 200 <= status < 300:
            raise InfraError("exception", self._redactor.redact(f"{where} answered HTTP {status}: {_excerpt(data)}"))
        if len(data) > _MAX_ANSWER_BYTES:
            raise InfraError("oversized", f"the answer from {where} is over {_MAX_ANSWER_BYTES:,} bytes")
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            raise InfraError("malformed", self._redactor.redact(
                f"the answer from {where} is not JSON: {_excerpt(data)}")) from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds to wait: a number of seconds, or an HTTP date; None if absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _excerpt(data: bytes, limit: int = 300) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return repr(text if len(text) <= limit else text[:limit] + "…")
