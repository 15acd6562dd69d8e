"""The summarizer under test, called the one way the whole harness calls it.

A summarizer is untrusted code: it may raise, hang, exit, print, return
garbage or something enormous, mutate its input, or echo a secret. Each call
goes through the cache, then through a worker process (or inline), and what
comes back is normalised, size-checked and redacted before anyone judges,
caches, reports or saves it. Each failure becomes an ``InfraError``, reported
apart from invariant violations, never a crash of the harness.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

from harness._base._calling import DEFAULT_MAX_RESULT_CHARS, call_once, output_tail, valid_text
from harness._base._errors import InfraError, InvalidArgument, MalformedResult, SpecError
from harness._base._protocol import PROTOCOLS, CompactionRequest, CompactionResult, resolve_protocol, result_from_dict
from harness._app._cache import CallCache
from harness._app._loading import code_fingerprint, load_callable, load_module
from harness._app._redact import Redactor
from harness._app._worker import DEFAULT_LOAD_TIMEOUT, Worker

__all__ = ["Summarizer", "ISOLATIONS"]

ISOLATIONS = ("process", "inline")


class Summarizer:
    """The summarizer under test, called through the cache, isolated, timed out and redacted.

    ``protocol`` None means the function's declared one (``resolve_protocol``);
    ``version`` replaces the code fingerprint in cache keys, for summarizers whose
    answers depend on more than their Python code (a prompt file, a model name).
    ``extend`` modules are imported beside the summarizer (in its worker), so a
    team's fact kinds are defined where it runs.
    """

    def __init__(self, spec: str, *, protocol: str | None = None, timeout: float = 30.0,
                 isolation: str = "process", cache: CallCache | None = None,
                 max_result_chars: int = DEFAULT_MAX_RESULT_CHARS, version: str | None = None,
                 redactor: Redactor | None = None, recorded_protocol: str | None = None,
                 load_timeout: float = DEFAULT_LOAD_TIMEOUT, extend: tuple[str, ...] = ()):
        if protocol is not None and protocol not in PROTOCOLS:
            raise InvalidArgument(f"--protocol {protocol!r}: expected 'messages' or 'rich'")
        if isolation not in ISOLATIONS:
            raise InvalidArgument(f"isolation={isolation!r}: expected 'process' or 'inline'")
        if not timeout > 0:
            raise InvalidArgument(f"--timeout {timeout!r}: expected a number of seconds > 0")
        if max_result_chars < 1:
            raise InvalidArgument(f"--max-result-chars {max_result_chars!r}: expected a positive number")
        self.spec = spec
        self.timeout = timeout
        self.isolation = isolation
        self.max_result_chars = max_result_chars
        self.cache = cache if cache is not None else CallCache()
        self.redactor = redactor if redactor is not None else Redactor.from_environ()
        self.calls = 0
        self._worker = Worker(spec, protocol, recorded_protocol=recorded_protocol, max_result_chars=max_result_chars,
                              load_timeout=load_timeout, redactor=self.redactor, extend=extend)
        if isolation == "inline":  # the team's module runs in this process only when asked to
            self._fn = load_callable(spec)
            self.protocol = resolve_protocol(self._fn, protocol, recorded=recorded_protocol)
            fingerprint = code_fingerprint(self._fn, also=tuple(load_module(m) for m in extend))
        else:  # loaded in the worker, which reports how to call it: fail fast, with a clear SpecError
            self._fn = None
            try:
                loaded = self._worker.load()
            except SpecError as exc:
                raise SpecError(self.redactor.redact(str(exc))) from None
            self.protocol, fingerprint = loaded.protocol, loaded.fingerprint
            self._worker.protocol = self.protocol
        self.fingerprint = f"version:{version}" if version else fingerprint

    def __enter__(self) -> Summarizer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._worker.close()

    @property
    def worker_pid(self) -> int | None:
        return self._worker.pid

    def __call__(self, request: CompactionRequest) -> CompactionResult:
        key = CallCache.key(self.spec, self.protocol, self.fingerprint, request)
        cached = self.cache.get(key)
        if cached is not None and "infra_error" not in cached:
            try:
                return result_from_dict(cached)
            except MalformedResult as exc:
                self.cache.discard(key, f"cache entry {key[:12]}: {exc}")
                cached = None
        if cached is None:
            self.calls += 1
            redact = self.redactor.redact
            try:
                cached = self.redactor.redact_json(self._fresh(request))
            except InfraError as exc:
                cached = {"infra_error": [exc.kind, redact(valid_text(exc.message)), redact(valid_text(exc.output))]}
            # Timeouts and crashes may be transient: remember them for this run only.
            self.cache.put(key, cached, persist="infra_error" not in cached)
        if "infra_error" in cached:
            raise InfraError(*cached["infra_error"])
        return result_from_dict(cached)

    def _fresh(self, request: CompactionRequest) -> dict[str, Any]:
        if self.isolation == "process":
            result, _output = self._worker.call(request, self.timeout)
            return result
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            try:
                return call_once(self._fn, self.protocol, request, max_result_chars=self.max_result_chars,
                                 redact=self.redactor.redact)
            except InfraError as exc:
                exc.output = output_tail(self.redactor.redact(printed.getvalue()))
                raise
