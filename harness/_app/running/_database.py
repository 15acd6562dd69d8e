"""The example database a run keeps, and shares with other machines: Hypothesis's own, not one of ours.

``--database DIR`` is Hypothesis's ``DirectoryBasedExampleDatabase``. ``--database redis://HOST:PORT/DB``
is Hypothesis's ``RedisExampleDatabase`` multiplexed with that directory (``MultiplexedDatabase``), so the
shards of one night, on as many machines, share what each found; ``--database-readonly`` wraps the Redis
side in ``ReadOnlyDatabase`` for a machine that should learn from the others and teach them nothing.

Each finding's minimal transcript is kept, with the budget it fails at, under a key that names everything
its verdict depends on (the summarizer, its protocol and dialect, the prose rules and the token counter),
so two summarizers, or one judged by other rules, never replay each other's examples. A run judges these
first, before it generates anything: a failure one shard found is seen by the others' next runs in the
few calls its minimal transcript takes, and the cost of shrinking it is paid once. Several shards may save
a transcript of one root cause; once this run has seen a cause, the others of it are not asked again. One
that no longer fails is deleted, as Hypothesis deletes an example that passes.

The corpus on disk stays the record. A Redis that cannot be reached when the run opens it is a
``DatabaseError`` (exit 2) before any summarizer call; one that goes away during the run is a warning, and
the run goes on with the directory alone: nothing found is lost, it is just not shared.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase, MultiplexedDatabase, ReadOnlyDatabase

from harness._base._codec import transcript_from_dict, transcript_to_dict
from harness._base._errors import DatabaseError, SchemaError
from harness._base._model import Transcript

__all__ = ["SharedDatabase", "open_database", "namespace_of", "LOCAL_DIR", "REDIS_SCHEME", "SavedFailure"]

#: Where the directory database lives when ``--database`` names a Redis (it is multiplexed with it).
LOCAL_DIR = ".hypothesis/compaction-harness"
REDIS_SCHEME = "redis://"
#: The layout of a saved failure's value; a value of another layout is skipped, never misread.
_VALUE_VERSION = 1


@dataclass(frozen=True, slots=True)
class SavedFailure:
    """A minimal transcript kept in the database, the budget it fails at, and the root cause it showed."""

    transcript: Transcript
    budget: int
    value: bytes  # as stored, so it can be deleted once it no longer fails
    signature: tuple[str, str | None] | None = None  # ``Failure.signature`` when it was saved


class _Tolerant(ExampleDatabase):
    """A database (the shared Redis) whose failures after opening are a warning, not the run's end: the first
    error is recorded and the database is dropped for the rest of the run."""

    def __init__(self, db: ExampleDatabase, where: str, warnings: list[str]):
        super().__init__()
        self._db, self._where, self._warnings = db, where, warnings
        self.lost = False

    def _guard(self, call, default=None):
        if self.lost:
            return default
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - redis raises its own errors and OSErrors; any of them ends sharing
            self.lost = True
            self._warnings.append(f"--database {self._where}: {type(exc).__name__}: {exc}; the run went on with "
                                  f"the local database only (nothing is lost: the corpus on disk is the record, "
                                  f"and what this run found was not shared)")
            return default

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self._guard(lambda: list(self._db.fetch(key)), [])

    def save(self, key: bytes, value: bytes) -> None:
        self._guard(lambda: self._db.save(key, value))

    def delete(self, key: bytes, value: bytes) -> None:
        self._guard(lambda: self._db.delete(key, value))

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self._guard(lambda: self._db.move(src, dest, value))


@dataclass
class SharedDatabase:
    """A run's example database: ``db`` is what Hypothesis is given; the methods keep and fetch findings.

    ``namespace`` names what a saved verdict depends on (``namespace_of``); ``warnings`` collects a shared
    database that went away during the run.
    """

    db: ExampleDatabase
    description: str
    namespace: str
    warnings: list[str] = field(default_factory=list)
    remote: bool = False  # a Redis other machines share (a directory is this machine's)

    def key(self, what: str) -> bytes:
        return f"compaction-harness/{self.namespace}/{what}".encode()

    def failures(self) -> list[SavedFailure]:
        """The minimal transcripts saved by earlier runs (of any machine sharing the database), smallest
        first; a value this release cannot read is skipped."""
        out = []
        for value in self.db.fetch(self.key("findings")):
            saved = _decoded(value)
            if saved is not None:
                out.append(saved)
        return sorted(out, key=lambda s: (len(s.transcript.turns), s.value))

    def save_failure(self, transcript: Transcript, budget: int, signature: tuple[str, str | None]) -> None:
        self.db.save(self.key("findings"), _encoded(transcript, budget, signature))

    def forget(self, saved: SavedFailure) -> None:
        """Delete a saved failure that no longer fails (as Hypothesis deletes an example that passes)."""
        self.db.delete(self.key("findings"), saved.value)


def namespace_of(*parts: str | None) -> str:
    """A short stable hash of what a saved example's verdict depends on."""
    return hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()[:16]


def open_database(spec: str | None, *, readonly: bool = False, namespace: str, local: str = LOCAL_DIR,
                  connect_timeout: float = 5.0) -> SharedDatabase | None:
    """The database ``--database`` names (None without one). A Redis is asked to answer a PING now: one
    that does not is a ``DatabaseError`` naming it, before the run calls anything."""
    if spec is None:
        if readonly:
            raise DatabaseError("--database-readonly needs --database redis://HOST:PORT/DB: there is nothing to "
                                "read from")
        return None
    if not spec.startswith(REDIS_SCHEME):
        if readonly:
            raise DatabaseError(f"--database-readonly is for a shared Redis database, not the directory {spec!r}")
        return SharedDatabase(DirectoryBasedExampleDatabase(spec), spec, namespace)
    try:
        import redis  # lazy: the redis client is needed only for a redis:// database (the redis extra)
        from hypothesis.extra.redis import RedisExampleDatabase
    except ImportError:
        raise DatabaseError(f"--database {spec}: the redis client is not installed (pip install "
                            f"'compaction-harness[redis]')") from None
    try:
        client = redis.Redis.from_url(spec, socket_connect_timeout=connect_timeout, socket_timeout=connect_timeout)
        client.ping()
    except ValueError as exc:
        raise DatabaseError(f"--database {spec!r}: not a Redis URL ({exc}); expected redis://HOST:PORT/DB") from None
    except Exception as exc:  # noqa: BLE001 - redis.ConnectionError, TimeoutError, AuthenticationError...
        raise DatabaseError(f"--database {spec}: Redis did not answer ({type(exc).__name__}: {exc}); is "
                            f"redis-server running there? Nothing was run.") from None
    remote: ExampleDatabase = RedisExampleDatabase(client, key_prefix=b"compaction-harness:")
    if readonly:
        remote = ReadOnlyDatabase(remote)
    warnings: list[str] = []
    db = MultiplexedDatabase(DirectoryBasedExampleDatabase(local), _Tolerant(remote, spec, warnings))
    return SharedDatabase(db, f"{spec}{' (read only)' if readonly else ''} with {local}", namespace, warnings,
                          remote=True)


def _encoded(transcript: Transcript, budget: int, signature: tuple[str, str | None]) -> bytes:
    text = json.dumps({"version": _VALUE_VERSION, "budget": budget, "signature": list(signature),
                       "transcript": transcript_to_dict(transcript)}, sort_keys=True, ensure_ascii=False)
    return zlib.compress(text.encode("utf-8"), 9)


def _decoded(value: bytes) -> SavedFailure | None:
    try:
        data = json.loads(zlib.decompress(value).decode("utf-8"))
        if data.get("version") != _VALUE_VERSION:
            return None
        budget = data["budget"]
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            return None
        signature = data.get("signature")
        signature = tuple(signature) if isinstance(signature, list) and len(signature) == 2 else None
        return SavedFailure(transcript_from_dict(data["transcript"], source="<database>"), budget, value, signature)
    except (zlib.error, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError, SchemaError):
        return None
