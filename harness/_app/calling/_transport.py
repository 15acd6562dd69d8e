"""How a summarizer is reached: one small adapter per kind of ``--summarizer`` spec.

An adapter (a *transport*) only moves a request to the summarizer and its
answer back. Everything else (the call cache, redaction, the spend cap,
metrics, retries' accounting, judging) is done once, in
``harness._app.calling._summarizer.Summarizer``, for every adapter alike.

Adding an adapter: write a module with a class that has

- ``load() -> Loaded``: start or check whatever is needed; raise ``SpecError``
  (with a message naming the spec) when it can never work;
- ``call(request, timeout) -> Answer``: one request; every failure an
  ``InfraError`` of one of ``INFRA_KINDS``; the result already checked with
  ``harness._base._calling.checked_result``;
- ``close()``: release it (safe to call twice);

then add its spec prefix and class to ``harness._app.calling._summarizer.ADAPTERS``. One instance
serves one call at a time; ``--jobs K`` makes up to K instances.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from harness._base._calling import DEFAULT_MAX_RESULT_CHARS, checked_result
from harness._base._result_codec import result_from_dict
from harness._base._wire import Usage
from harness._app.calling._options import DEFAULT_LOAD_TIMEOUT, DEFAULT_RETRIES, CallOptions
from harness._app.calling._redact import Redactor

__all__ = ["Loaded", "Answer", "Setup", "Transport", "checked_answer"]


@dataclass(frozen=True, slots=True)
class Loaded:
    """What an adapter found when loading: the protocol to call with, a fingerprint for cache keys,
    whether the summarizer says it may answer the same request differently (``compaction_may_vary``), and
    the protocol version it says it was written for (``compaction_protocol_version``)."""

    protocol: str
    fingerprint: str
    may_vary: bool = False
    identity: str = ""  # which function (Python) or endpoint it is, for compare; "" when the fingerprint says it
    declared_version: int | None = None  # None: it declares none, or cannot (a server or a command has no attribute)


@dataclass(frozen=True, slots=True)
class Answer:
    """One call's result (plain, checked JSON data), and what it cost."""

    result: dict[str, Any]
    output: str = ""  # the tail of what the summarizer printed, when it says
    usage: Usage | None = None
    retries: int = 0


@dataclass(frozen=True, slots=True)
class Setup:
    """Everything an adapter may need besides the spec: options of the run, none of them secret.

    The API key is read from ``api_key_env`` when a request is sent, never stored here.
    """

    protocol: str | None = None
    recorded_protocol: str | None = None
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    redactor: Redactor = field(default_factory=Redactor)
    load_timeout: float = DEFAULT_LOAD_TIMEOUT
    extend: tuple[str, ...] = ()
    base_url: str | None = None
    prompt: str | None = None
    api_key_env: str | None = None
    retries: int = DEFAULT_RETRIES

    @classmethod
    def of(cls, options: CallOptions, redactor: Redactor, *, recorded_protocol: str | None = None,
           load_timeout: float = DEFAULT_LOAD_TIMEOUT) -> Setup:
        """The adapters' part of ``options``."""
        return cls(protocol=options.protocol, recorded_protocol=recorded_protocol,
                   max_result_chars=options.max_result_chars or DEFAULT_MAX_RESULT_CHARS, redactor=redactor,
                   load_timeout=load_timeout,
                   extend=tuple(options.extend), base_url=options.base_url, prompt=options.prompt,
                   api_key_env=options.api_key_env, retries=options.retries)


def checked_answer(result: dict[str, Any], setup: Setup, *, usage: Usage | None = None, retries: int = 0) -> Answer:
    """A server's or process's result (``messages`` and optional side channels), checked as any return value is."""
    checked = checked_result(lambda: result_from_dict(result), max_result_chars=setup.max_result_chars,
                             redact=setup.redactor.redact)
    return Answer(checked, usage=usage, retries=retries)


class Transport(Protocol):
    def load(self) -> Loaded: ...

    def call(self, request, timeout: float) -> Answer: ...

    def close(self) -> None: ...
