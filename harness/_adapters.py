"""Loading and calling the summarizer under test, which is untrusted code.

A summarizer may raise, hang, return garbage or mutate its input. Each of
those becomes an ``InfraError`` (reported apart from invariant violations),
never a crash of the harness. By default every call runs in a worker process
so a hang can be stopped at the timeout; ``isolation="inline"`` calls it in
this process (faster, no timeout) for debugging.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import importlib.util
import json
import multiprocessing
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._errors import HarnessError, InvalidArgument
from harness._protocol import (
    CompactionRequest,
    CompactionResult,
    MalformedResult,
    request_key_material,
    result_from_dict,
    result_from_return,
    result_to_dict,
)

__all__ = ["SpecError", "InfraError", "load_callable", "declared_protocol", "CallCache", "Summarizer", "INFRA_KINDS"]

INFRA_KINDS = ("exception", "timeout", "malformed", "mutated-input", "crashed")


class SpecError(HarnessError, ValueError):
    """A ``--summarizer`` spec that cannot be loaded (bad form, missing module, file or name)."""


class InfraError(HarnessError, RuntimeError):
    """The summarizer itself failed: it raised, hung, returned garbage or mutated its input."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        self.message = message
        super().__init__(f"{kind}: {message}")


def load_callable(spec: str, *, option: str = "--summarizer") -> Callable[..., Any]:
    """Resolve ``module:function`` or ``path/to/file.py:function``; errors name ``option``."""
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise SpecError(f"{option} {spec!r}: expected 'module:function' or 'path/to/file.py:function'")
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = Path(target)
        if not path.is_file():
            raise SpecError(f"{option} {spec!r}: no such file {str(path)!r}")
        module_name = "_summarizer_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
        module = sys.modules.get(module_name)
        if module is None:
            loader_spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[module_name] = module
            try:
                loader_spec.loader.exec_module(module)
            except Exception as exc:
                del sys.modules[module_name]
                raise SpecError(f"{option} {spec!r}: importing {str(path)!r} raised {type(exc).__name__}: {exc}") from None
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise SpecError(f"{option} {spec!r}: cannot import module {target!r} ({exc})") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise SpecError(f"{option} {spec!r}: module {target!r} has no callable named {name!r}")
    return fn


def declared_protocol(fn: Callable[..., Any]) -> str:
    """The protocol a summarizer declares with a ``compaction_protocol`` attribute; "messages" if none."""
    return getattr(fn, "compaction_protocol", "messages")


def _call(fn: Callable[..., Any], protocol: str, request: CompactionRequest) -> dict[str, Any]:
    """Call once and normalise; raises InfraError for every way the summarizer can misbehave."""
    try:
        if protocol == "messages":
            messages = request.messages()
            before = copy.deepcopy(messages)
            value = fn(messages, request.budget)
            if messages != before:
                raise InfraError("mutated-input", "the summarizer modified the messages it was given")
        else:
            value = fn(request)
    except InfraError:
        raise
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
        raise InfraError("exception", f"the summarizer raised {type(exc).__name__}: {exc}{where}") from None
    try:
        return result_to_dict(result_from_return(value))
    except MalformedResult as exc:
        raise InfraError("malformed", str(exc)) from None


def _worker(conn, spec: str, protocol: str) -> None:  # pragma: no cover - runs in the child process
    try:
        fn = load_callable(spec)
    except SpecError as exc:
        conn.send(("error", "exception", str(exc)))
        return
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        try:
            conn.send(("ok", _call(fn, protocol, request)))
        except InfraError as exc:
            conn.send(("error", exc.kind, exc.message))


class CallCache:
    """Summarizer answers by content hash: in memory, and on disk when given a directory.

    Disk entries are written atomically (temporary file, then rename) and
    never invalidated: the key covers everything the answer depends on.
    """

    def __init__(self, directory: str | Path | None = None):
        self._memory: dict[str, Any] = {}
        self._dir = Path(directory) if directory else None
        self.hits = 0

    @staticmethod
    def key(spec: str, protocol: str, request: CompactionRequest) -> str:
        material = json.dumps([spec, protocol, request_key_material(request)], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(material.encode()).hexdigest()

    def get(self, key: str) -> Any:
        if key in self._memory:
            self.hits += 1
            return self._memory[key]
        if self._dir is not None:
            path = self._dir / key[:2] / f"{key}.json"
            try:
                value = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            self._memory[key] = value
            self.hits += 1
            return value
        return None

    def put(self, key: str, value: Any, *, persist: bool = True) -> None:
        self._memory[key] = value
        if self._dir is None or not persist:
            return
        folder = self._dir / key[:2]
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle)
        os.replace(tmp, folder / f"{key}.json")


@dataclass(frozen=True, slots=True)
class _Failure:
    kind: str
    message: str


class Summarizer:
    """The summarizer under test, called through the cache, isolated and timed out."""

    def __init__(self, spec: str, *, protocol: str = "messages", timeout: float = 30.0,
                 isolation: str = "process", cache: CallCache | None = None):
        if protocol not in ("messages", "rich"):
            raise InvalidArgument(f"--protocol {protocol!r}: expected 'messages' or 'rich'")
        if isolation not in ("process", "inline"):
            raise InvalidArgument(f"isolation={isolation!r}: expected 'process' or 'inline'")
        if not timeout > 0:
            raise InvalidArgument(f"--timeout {timeout!r}: expected a number of seconds > 0")
        self.spec = spec
        self.protocol = protocol
        self.timeout = timeout
        self.isolation = isolation
        self.cache = cache if cache is not None else CallCache()
        self.calls = 0
        self._fn = load_callable(spec)  # fail fast, in this process, with a clear SpecError
        self._process = None
        self._conn = None

    def __enter__(self) -> Summarizer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._process is not None:
            self._conn.close()
            self._process.kill()
            self._process.join(timeout=5)
            self._process = self._conn = None

    def __call__(self, request: CompactionRequest) -> CompactionResult:
        key = CallCache.key(self.spec, self.protocol, request)
        cached = self.cache.get(key)
        if cached is None:
            self.calls += 1
            try:
                cached = self._fresh(request)
            except InfraError as exc:
                cached = {"infra_error": [exc.kind, exc.message]}
            # Timeouts and crashes may be transient: remember them for this run only.
            persist = "infra_error" not in cached
            self.cache.put(key, cached, persist=persist)
        if "infra_error" in cached:
            raise InfraError(*cached["infra_error"])
        return result_from_dict(cached)

    def _fresh(self, request: CompactionRequest) -> dict[str, Any]:
        if self.isolation == "inline":
            return _call(self._fn, self.protocol, request)
        if self._process is None:
            ctx = multiprocessing.get_context("spawn")
            self._conn, child = ctx.Pipe()
            self._process = ctx.Process(target=_worker, args=(child, self.spec, self.protocol), daemon=True)
            self._process.start()
            child.close()
        try:
            self._conn.send(request)
            if not self._conn.poll(self.timeout):
                self.close()
                raise InfraError("timeout", f"no answer within {self.timeout:g} s")
            status, *payload = self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            code = self._process.exitcode if self._process else None
            self.close()
            raise InfraError("crashed", f"the summarizer's process died (exit code {code})") from None
        if status == "ok":
            return payload[0]
        raise InfraError(*payload)
