"""The summarizer call cache: answers by a hash of everything they depend on, in memory and on disk.

The key covers the request (messages, budget, tags), the protocol, the spec,
the summarizer's fingerprint (a hash of its code, or the version the user
gives) and this cache's format, so an entry never needs invalidating: a fixed
summarizer gets new keys. Disk entries are written atomically; one that is
unreadable or of the wrong shape is discarded (and counted), never trusted.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from harness._base._errors import SchemaError
from harness._base._files import MISSING, output_dir, read_json_file, write_atomic
from harness._base._protocol import CompactionRequest, request_key_material

__all__ = ["CACHE_FORMAT", "CallCache"]

CACHE_FORMAT = 2


class CallCache:
    """Summarizer answers by content hash: in memory, and on disk when given a directory."""

    def __init__(self, directory: str | Path | None = None, *, max_entries: int | None = None):
        self._memory: dict[str, Any] = {}
        self._max_entries = max_entries  # answers kept in memory (oldest forgotten first); None: all
        self._dir = output_dir(directory, option="--cache-dir") if directory else None
        self.hits = 0
        self.discarded: list[str] = []  # "path: reason" for each damaged disk entry ignored

    @staticmethod
    def key(spec: str, protocol: str, fingerprint: str, request: CompactionRequest) -> str:
        material = json.dumps({"format": CACHE_FORMAT, "spec": spec, "protocol": protocol,
                               "fingerprint": fingerprint, "request": request_key_material(request)},
                              sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(material.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self._dir / key[:2] / f"{key}.json"

    def get(self, key: str, *, count: bool = True) -> Any:
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
        if not isinstance(value, dict) or not isinstance(value.get("messages"), list | str):
            self.discard(key, f"{path}: expected a cached result object with 'messages'")
            return None
        self._memory[key] = value
        self.hits += count
        return value

    def discard(self, key: str, reason: str) -> None:
        """Forget a damaged entry; the next ``put`` overwrites its file."""
        self._memory.pop(key, None)
        self.discarded.append(reason)

    def put(self, key: str, value: Any, *, persist: bool = True) -> None:
        self._memory[key] = value
        if self._max_entries is not None and len(self._memory) > self._max_entries:
            del self._memory[next(iter(self._memory))]  # a fuzzer runs for hours: memory must stay bounded
        if self._dir is None or not persist:
            return
        path = self._path(key)
        path.parent.mkdir(exist_ok=True)
        write_atomic(path, json.dumps(value, ensure_ascii=False))
