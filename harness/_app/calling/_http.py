"""``http://HOST:PORT/PATH``: a summarizer behind a server, sent each request as JSON (``harness._base._wire``)."""

from __future__ import annotations

import hashlib

from harness._base._wire import WIRE_VERSION, answer_from_wire, request_to_wire
from harness._app.calling._remote import Endpoint, JsonPoster
from harness._app.calling._transport import Answer, Loaded, Setup, checked_answer

__all__ = ["HttpTransport"]


class HttpTransport:
    """POST the versioned request, read the result; retried as ``harness._app.calling._remote`` says."""

    def __init__(self, spec: str, setup: Setup):
        self._spec = spec
        self._setup = setup
        self._endpoint = Endpoint.parse(spec, option="--summarizer")
        self._poster = JsonPoster(self._endpoint, retries=setup.retries, redactor=setup.redactor)
        self.protocol = setup.protocol or setup.recorded_protocol or "messages"

    pid = None

    def load(self) -> Loaded:
        self._endpoint.check_reachable(self._setup.load_timeout, option=f"--summarizer {self._spec!r}")
        # What answers there is not ours to hash: the URL and wire version key the cache (--summarizer-version
        # says when the server's summarizer changed).
        return Loaded(self.protocol, hashlib.sha256(f"http|{WIRE_VERSION}|{self._spec}".encode()).hexdigest())

    def call(self, request, timeout: float) -> Answer:
        data, retries = self._poster.post(request_to_wire(request, self.protocol), timeout)
        result, usage = answer_from_wire(data, request.dialect if self.protocol == "messages" else "chat")
        return checked_answer(result, self._setup, usage=usage, retries=retries)

    def close(self) -> None:
        self._poster.close()
