"""The summarizer call cache: answers by a hash of everything they depend on, in memory and on disk.

The key covers the request (messages, budget, tags), the protocol, the spec,
the summarizer's fingerprint (a hash of its code, or the version the user
gives) and this cache's format, so an entry never needs invalidating: a fixed
summarizer gets new keys. Disk entries are written atomically; one that is
unreadable or of the wrong shape is discarded (and counted), never trusted.

An answer is kept in memory as it is judged: a ``CompactionResult`` (whose kept
turns are the request's own turn objects, shared, so a session of long contexts
costs memory for what is new in them) or a ``FailedCall``. Only a result is kept
on disk, as JSON; a failure may be transient and is remembered for this run only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from harness._base._errors import InfraError, MalformedResult, SchemaError
from harness._base._files import MISSING, output_dir, read_json_file, write_atomic
from harness._base._protocol import CompactionRequest, CompactionResult
from harness._base._request_key import request_digest
from harness._base._result_codec import result_from_dict, result_to_dict

__all__ = ["CACHE_FORMAT", "CallCache", "FailedCall", "Answer"]


@dataclass(frozen=True, slots=True)
class FailedCall:
    """A call the summarizer failed (``InfraError``), as remembered: raised again for the same request."""

    kind: str
    message: str
    output: str = ""

    def error(self) -> InfraError:
        return InfraError(self.kind, self.message, self.output)


#: What the cache holds for a request.
Answer = CompactionResult | FailedCall

CACHE_FORMAT = 3  # 3: the request by its turns' digests (``request_digest``)


class CallCache:
    """Summarizer answers by content hash: in memory, and on disk when given a directory."""

    def __init__(self, directory: str | Path | None = None, *, max_entries: int | None = None):
        self._memory: dict[str, Answer] = {}
        self._max_entries = max_entries  # answers kept in memory (oldest forgotten first); None: all
        self._dir = output_dir(directory, option="--cache-dir") if directory else None
        self.hits = 0
        self.discarded: list[str] = []  # "path: reason" for each damaged disk entry ignored

    @staticmethod
    def key(spec: str, protocol: str, fingerprint: str, request: CompactionRequest) -> str:
        material = json.dumps({"format": CACHE_FORMAT, "spec": spec, "protocol": protocol,
                               "fingerprint": fingerprint, "request": request_digest(request)},
                              sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(material.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self._dir / key[:2] / f"{key}.json"

    def get(self, key: str, *, count: bool = True) -> Answer | None:
        """The answer stored for ``key``, or None; ``count`` False looks without counting a hit (a comparison)."""
        if key in self._memory:
            self.hits += count
            return self._memory[key]
        if self._dir is None:
            return None
        path = self._path(key)
        try:
            value = read_json_file(path, missing_ok=True)
        except SchemaError as exc:
            self.discard(key, str(exc))
            return None
        if value is MISSING:
            return None
        try:
            result = result_from_dict(value)
        except MalformedResult as exc:
            self.discard(key, f"{path}: expected a cached result object with 'messages' ({exc})")
            return None
        self._memory[key] = result
        self.hits += count
        return result

    def discard(self, key: str, reason: str) -> None:
        """Forget a damaged entry; the next ``put`` overwrites its file."""
        self._memory.pop(key, None)
        self.discarded.append(reason)

    def put(self, key: str, value: Answer) -> None:
        """Keep ``value`` for ``key``: in memory, and on disk when it is a result."""
        self._memory[key] = value
        if self._max_entries is not None and len(self._memory) > self._max_entries:
            del self._memory[next(iter(self._memory))]  # a fuzzer runs for hours: memory must stay bounded
        if self._dir is None or not isinstance(value, CompactionResult):
            return
        path = self._path(key)
        path.parent.mkdir(exist_ok=True)
        write_atomic(path, json.dumps(result_to_dict(value), ensure_ascii=False))
