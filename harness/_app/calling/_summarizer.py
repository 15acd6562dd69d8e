"""The summarizer under test, called the one way the whole harness calls it.

A summarizer is untrusted code: it may raise, hang, exit, print, return
garbage or something enormous, mutate its input, or echo a secret. Whatever
adapter reaches it (``harness._app.calling._transport``: a Python function in a worker
process or inline, a server over HTTP, an OpenAI-compatible model, a
subprocess), each call goes through the cache, and what comes back is
normalised, size-checked and redacted before anyone judges, caches, reports
or saves it. Each failure becomes an ``InfraError``, reported apart from
invariant violations, never a crash of the harness.

One ``Summarizer`` may be called from ``jobs`` threads at once: it keeps up to
that many adapter instances (worker processes, connections, subprocesses),
each serving one call at a time.
"""

from __future__ import annotations

import dataclasses
import statistics
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness._base._calling import valid_text
from harness._base._errors import InfraError, MalformedResult, SpecError
from harness._base._protocol import CompactionRequest, CompactionResult, version_warning
from harness._base._result_codec import result_from_dict
from harness._base._tokens import context_tokens
from harness._app.calling._cache import Answer, CallCache, FailedCall
from harness._app.calling._cmd import CommandTransport
from harness._app.calling._http import HttpTransport
from harness._app.calling._openai import OpenAITransport
from harness._app.calling._python import InlineTransport, ProcessTransport
from harness._app.calling._options import ISOLATIONS, CallOptions
from harness._app.calling._transport import Setup, Transport

__all__ = ["Summarizer", "CallStats", "ISOLATIONS", "ADAPTERS"]

#: Spec prefix -> adapter class, constructed as ``cls(spec, setup)``; a spec with none of these prefixes is a
#: Python function (``ProcessTransport``, or ``InlineTransport`` with ``--inline``). See ``harness._app.calling._transport``.
ADAPTERS: dict[str, type] = {
    "openai:": OpenAITransport,
    "http://": HttpTransport,
    "https://": HttpTransport,
    "cmd:": CommandTransport,
}


#: What a request's cache key is suffixed with for its second answer (``ask_fresh``).
_AGAIN = "/again"


def adapter_for(spec: str, isolation: str = "process") -> type:
    """The adapter class a spec names."""
    for prefix, cls in ADAPTERS.items():
        if spec.startswith(prefix):
            return cls
    return InlineTransport if isolation == "inline" else ProcessTransport


@dataclass
class CallStats:
    """What the summarizer's calls cost and showed, for the report (cache hits are ``CallCache.hits``)."""

    calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_known: bool = False
    latencies: list[float] = field(default_factory=list)  # seconds per fresh call, retries included
    asked_again: int = 0  # of ``calls``, those made with the cache bypassed (trials, determinism probes)
    reasked: int = 0  # of those, requests the cache already held an answer to (comparable)
    answered_differently: int = 0  # of those, answered differently from the answer held
    handed_tokens: int = 0  # the contexts fresh calls were handed, in tokens as the harness counts them

    @property
    def spent(self) -> int:
        """Tokens the calls cost: the provider's count where it reports usage, else the contexts handed over."""
        return self.tokens if self.usage_known else self.handed_tokens

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def latency(self, share: float) -> float | None:
        """The latency at ``share`` (0.5: the median) in seconds, or None without calls."""
        if not self.latencies:
            return None
        if len(self.latencies) == 1:
            return self.latencies[0]
        return statistics.quantiles(self.latencies, n=100, method="inclusive")[round(share * 100) - 1]


class Summarizer:
    """The summarizer under test, called through the cache, isolated, timed out and redacted.

    ``options`` say which summarizer and how it is called (``CallOptions``); ``cache``
    defaults to one kept in memory (and in ``options.cache_dir``). ``recorded_protocol``
    is the one a corpus entry saved for this summarizer (replay). ``jobs`` calls may run
    at once (``--inline`` always runs one at a time: redirecting prints is process-wide).
    """

    def __init__(self, options: CallOptions, *, cache: CallCache | None = None,
                 recorded_protocol: str | None = None, load_timeout: float | None = None):
        spec = options.summarizer
        self.spec = spec
        self.options = options
        self.timeout = options.timeout
        self.cache = cache if cache is not None else CallCache(options.cache_dir)
        self.redactor = options.redactor()  # covers --redact-env and --api-key-env
        self.stats = CallStats()
        self._inflight: dict[str, threading.Event] = {}  # requests being asked now, by cache key
        self._local = threading.local()  # calls made by this thread (an example's own, under --jobs)
        self._setup = Setup.of(options, self.redactor, recorded_protocol=recorded_protocol,
                               load_timeout=options.load_timeout() if load_timeout is None else load_timeout)
        self._make = adapter_for(spec, options.isolation)
        self._jobs = 1 if self._make is InlineTransport else options.jobs
        self._idle: list[Transport] = []
        self._made: list[Transport] = []
        self._lock = threading.Lock()
        self._free = threading.Condition(self._lock)
        first = self._new_transport()
        try:
            loaded = first.load()  # fail fast, with a clear SpecError, before any example
        except SpecError as exc:
            first.close()
            raise SpecError(self.redactor.redact(str(exc))) from None
        self.protocol = loaded.protocol
        self.may_vary = loaded.may_vary
        self.declared_version = loaded.declared_version  # compaction_protocol_version, None if it says none
        self._setup = dataclasses.replace(self._setup, protocol=loaded.protocol)  # instances made later agree
        self._idle.append(first)
        # What it runs, whatever --summarizer-version says: which function or endpoint, else its fingerprint.
        self.identity = loaded.identity or loaded.fingerprint
        version = options.summarizer_version
        self.fingerprint = f"version:{version}" if version else loaded.fingerprint

    def _new_transport(self) -> Transport:
        transport = self._make(self.spec, self._setup)
        self._made.append(transport)
        return transport

    @property
    def warnings(self) -> tuple[str, ...]:
        """What a run reports once about the summarizer itself: written for an older protocol version."""
        said = version_warning(self.protocol, self.declared_version)
        return (said,) if said else ()

    @property
    def calls(self) -> int:
        """Fresh calls made (cache misses and re-asks): what a spend cap counts."""
        return self.stats.calls

    def calls_in_this_thread(self) -> int:
        """Fresh calls this thread made: what one session cost, whatever other threads did meanwhile."""
        return getattr(self._local, "calls", 0)

    def __enter__(self) -> Summarizer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            made, self._made, self._idle = self._made, [], []
        for transport in made:
            transport.close()

    @property
    def worker_pid(self) -> int | None:
        return getattr(self._made[0], "pid", None) if self._made else None

    def key(self, request: CompactionRequest) -> str:
        return CallCache.key(self.spec, self.protocol, self.fingerprint, request)

    def __call__(self, request: CompactionRequest) -> CompactionResult:
        key = self.key(request)
        answer = self._cached(key)
        if answer is None:
            try:
                answer = self._ask(request)
                with self._lock:  # a failure may be transient: the cache keeps it for this run only
                    self.cache.put(key, answer)
            finally:
                with self._lock:
                    self._inflight.pop(key).set()
        return _result(answer)

    def _cached(self, key: str) -> Answer | None:
        """The cached answer, waiting for it when another thread is asking the same request right now (so
        ``--jobs`` never asks one request twice, and a run's calls and cache hits do not depend on it).
        None means: ask it (the key is then marked in flight until ``__call__`` is done)."""
        while True:
            with self._lock:
                cached = self.cache.get(key)
                if cached is not None:
                    return cached
                waiting = self._inflight.get(key)
                if waiting is None:
                    self._inflight[key] = threading.Event()
                    return None
            waiting.wait()

    def ask_again(self, request: CompactionRequest) -> CompactionResult:
        """A fresh answer, the cache bypassed and left as it was (a trial): counted as re-asked, and as
        answered differently when it differs from the answer the cache holds for the same request."""
        key = self.key(request)
        fresh = self._ask(request)
        with self._lock:
            self.stats.asked_again += 1
            self._compare(key, fresh)
        return _result(fresh)

    def _compare(self, key: str, fresh: Answer) -> None:
        """Count ``fresh`` against the answer held for ``key`` (caching it when there is none); under the lock."""
        before = self.cache.get(key, count=False)
        if before is None:
            self.cache.put(key, fresh)
        elif isinstance(before, CompactionResult) and isinstance(fresh, CompactionResult):
            self.stats.reasked += 1
            self.stats.answered_differently += before != fresh

    def ask_fresh(self, requests: Sequence[CompactionRequest]) -> list[CompactionResult | None]:
        """Each request's second answer, asked of a newly started adapter instance (a new worker process,
        or a new ``cmd:`` process) with the first answer's cache bypassed: a summarizer whose answer
        depends on its process (a call counter, hash order, the clock at start) shows it. The second
        answer is cached apart from the first, so running unchanged code again re-judges determinism
        from the cache at no cost. A second answer that fails raises its ``InfraError``."""
        out: list[CompactionResult | None] = []
        transport = None
        try:
            for request in requests:
                key = self.key(request) + _AGAIN
                with self._lock:
                    fresh = self.cache.get(key)
                if fresh is None:
                    if transport is None:
                        transport = self._new_transport()
                        try:
                            transport.load()
                        except (SpecError, InfraError) as exc:  # it loaded once: say so, never skip silently
                            raise InfraError("exception", f"a second instance of the summarizer, started to "
                                                          f"ask requests again, failed to load: {exc}") from None
                    fresh = self._ask(request, transport)
                    with self._lock:
                        self.cache.put(key, fresh)
                        self.stats.asked_again += 1
                        first = self.cache.get(self.key(request), count=False)
                        if isinstance(first, CompactionResult) and isinstance(fresh, CompactionResult):
                            self.stats.reasked += 1
                            self.stats.answered_differently += first != fresh
                out.append(_result(fresh))  # a second answer that fails is a summarizer failure, reported
        finally:
            if transport is not None:
                with self._lock:
                    if transport in self._made:
                        self._made.remove(transport)
                transport.close()
        return out

    def _ask(self, request: CompactionRequest, transport: Transport | None = None) -> Answer:
        """One fresh call through an idle adapter instance (or ``transport``): the result, its kept turns the
        request's own (an index in the answer stands for one), or the failure."""
        own = transport is None
        transport = self._checkout() if own else transport
        redact = self.redactor.redact
        start = time.monotonic()
        answer = None
        try:
            answer = transport.call(request, self.timeout)
            data = self.redactor.redact_json(answer.result)
            result: Answer = result_from_dict(data, request.turns)
        except InfraError as exc:
            result = FailedCall(exc.kind, redact(valid_text(exc.message)), redact(valid_text(exc.output)))
            retries = getattr(exc, "retries", 0)
        except MalformedResult as exc:  # an index our own worker wrote, out of range: never trusted
            result = FailedCall("malformed", str(exc))
            retries = answer.retries
        else:
            retries = answer.retries
        finally:
            if own:
                self._checkin(transport)
        self._local.calls = getattr(self._local, "calls", 0) + 1
        handed = context_tokens(request.turns)
        with self._lock:
            self.stats.calls += 1
            self.stats.handed_tokens += handed
            self.stats.retries += retries
            self.stats.latencies.append(time.monotonic() - start)
            if answer is not None:
                if answer.usage is not None:
                    self.stats.usage_known = True
                    self.stats.prompt_tokens += answer.usage.prompt_tokens
                    self.stats.completion_tokens += answer.usage.completion_tokens
        return result

    def _checkout(self) -> Transport:
        with self._free:
            while not self._idle:
                if len(self._made) < self._jobs:
                    return self._new_transport()  # loaded on its first call (a worker starts on demand)
                self._free.wait()
            return self._idle.pop()

    def _checkin(self, transport: Transport) -> None:
        with self._free:
            if transport in self._made:
                self._idle.append(transport)
                self._free.notify()


def _result(answer: Answer) -> CompactionResult:
    if isinstance(answer, FailedCall):
        raise answer.error()
    return answer
