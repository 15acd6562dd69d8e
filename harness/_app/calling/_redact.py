"""Keeping secrets out of everything the harness writes.

A summarizer runs with the environment of the job that starts it, API keys
included, and may echo one (in its answer, an error message, a print). Every
string that comes back from a summarizer passes through ``Redactor.redact``
before the harness judges, caches, reports or saves it.

Which variables count as secrets: any whose name contains one of
``SECRET_NAME_WORDS`` (``PGPASSWORD``, ``GITHUB_TOKEN``), has a part (between
underscores) in ``SECRET_NAME_PARTS`` or ends in ``_KEY``, is one of
``SECRET_NAMES`` (connection strings carry passwords), plus any named in
``COMPACTION_HARNESS_REDACT`` (comma-separated) or with ``--redact-env``.
Values shorter than ``MIN_SECRET_LENGTH`` are left alone: redacting "1" or
"true" everywhere would destroy the text being judged.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SECRET_NAME_WORDS", "SECRET_NAME_PARTS", "SECRET_NAMES", "MIN_SECRET_LENGTH", "REDACT_ENV", "Redactor", "is_secret_name"]

SECRET_NAME_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY", "API_KEY", "PRIVATE_KEY")
SECRET_NAME_PARTS = frozenset({"AUTH", "PAT", "DSN"})
SECRET_NAMES = frozenset({"DATABASE_URL", "REDIS_URL", "MONGODB_URI", "AMQP_URL"})
MIN_SECRET_LENGTH = 8
REDACT_ENV = "COMPACTION_HARNESS_REDACT"


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    parts = upper.split("_")
    return (any(word in upper for word in SECRET_NAME_WORDS) or bool(SECRET_NAME_PARTS.intersection(parts))
            or parts[-1] == "KEY" or upper in SECRET_NAMES)


@dataclass(frozen=True, slots=True)
class Redactor:
    """Replaces each secret value with ``[REDACTED:NAME]``; longest values first, so one that
    contains another is replaced whole."""

    secrets: tuple[tuple[str, str], ...] = ()  # (value, name)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, extra_names: Iterable[str] = ()) -> Redactor:
        environ = os.environ if environ is None else environ
        named = {n.strip() for n in environ.get(REDACT_ENV, "").split(",") if n.strip()} | set(extra_names)
        found = {}
        for name, value in environ.items():
            if (name in named or is_secret_name(name)) and len(value) >= MIN_SECRET_LENGTH:
                found.setdefault(value, name)
        return cls(tuple(sorted(found.items(), key=lambda kv: (-len(kv[0]), kv[1]))))

    @property
    def longest(self) -> int:
        """The length of the longest secret (0 without any)."""
        return max((len(value) for value, _ in self.secrets), default=0)

    def redact(self, text: str) -> str:
        pattern = _pattern(self.secrets)
        if pattern is None or not text:
            return text
        names = dict(self.secrets)
        return pattern.sub(lambda m: f"[REDACTED:{names[m.group(0)]}]", text)

    def redact_json(self, value: Any) -> Any:
        """Every string in a JSON-like value (keys included) redacted."""
        if not self.secrets:
            return value
        return _walk(value, self.redact)


@functools.lru_cache(maxsize=8)
def _pattern(secrets: tuple[tuple[str, str], ...]) -> re.Pattern[str] | None:
    if not secrets:
        return None
    return re.compile("|".join(re.escape(value) for value, _ in secrets))


def _walk(value: Any, redact) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: _walk(v, redact) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(v, redact) for v in value]
    return value
