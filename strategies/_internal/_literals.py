"""Realistic obligation literals from Faker, a pure function of (category, seed).

Filler is full of digits and identifiers too, so shape alone does not keep a
literal out of it: ``_filler`` is given each transcript's literals and skips any
pooled text holding one as a whole token.
"""

from __future__ import annotations

import threading

from faker import Faker

from harness._base._errors import InvalidArgument

__all__ = ["CATEGORIES", "make_literal", "THRESHOLD_FIELDS", "GATING_FIELDS"]

# Faker() costs ~25 ms to build, so each thread keeps one and reseeds it before
# every literal: the output depends only on the arguments, never on call order.
_local = threading.local()


def _faker(seed: int) -> Faker:
    fake = getattr(_local, "faker", None)
    if fake is None:
        fake = _local.faker = Faker("en_US")
    fake.seed_instance(seed)
    return fake


def _word(fake: Faker) -> str:
    # Faker's lorem words are lowercase ASCII; keep only letters so a literal's
    # shape (hyphens, slashes, digits) is ours to control.
    return "".join(ch for ch in fake.word() if ch.isalpha()) or "core"


_EXTENSIONS = ("sql", "py", "yaml", "sh", "json", "toml")
_DIRS = ("migrations", "scripts", "deploy", "infra", "config", "ops")
_UNITS = ("MiB", "GiB", "s", "ms", "rps")
_SERVICE_SUFFIX = ("api", "worker", "svc", "gateway", "cron")

THRESHOLD_FIELDS = (
    "max_retries",
    "retry_limit",
    "timeout_seconds",
    "max_parallel_jobs",
    "batch_size",
    "max_replicas",
    "rate_limit_rps",
    "max_connections",
    "page_size",
    "min_free_disk_gb",
)

# Fields that gate a write (reference 002): the value each may be pinned to.
GATING_FIELDS = (
    ("max_retries", ("0", "1")),
    ("max_parallel_writes", ("1", "2")),
    ("permission_scope", ("read_only", "staging_only")),
    ("memory_limit_mb", ("512", "2048")),
    ("abort_after_errors", ("1", "3")),
)


def _bucket(f: Faker) -> str:
    return f"s3://{_word(f)}-{_word(f)}-{f.random_int(1, 99):02d}/"


def _path(f: Faker) -> str:
    return f"{f.random_element(_DIRS)}/{f.random_int(1, 999):03d}_{_word(f)}.{f.random_element(_EXTENSIONS)}"


def _host(f: Faker) -> str:
    domain = "".join(ch for ch in f.domain_word() if ch.isalnum() or ch == "-") or "corp"
    return f"{_word(f)}-{f.random_int(1, 99):02d}.{domain}.internal"


def _ticket(f: Faker) -> str:
    return f"{f.lexify('???', letters='ABCDEFGHIJKLMNOPQRSTUVWXYZ')}-{f.random_int(100, 9999)}"


def _version(f: Faker) -> str:
    return f"{f.random_int(0, 9)}.{f.random_int(0, 30)}.{f.random_int(0, 20)}"


def _service(f: Faker) -> str:
    return f"{_word(f)}-{f.random_element(_SERVICE_SUFFIX)}-{f.random_int(1, 9)}"


def _quantity(f: Faker) -> str:
    return f"{f.random_int(1, 4096)}{f.random_element(_UNITS)}"


def _call_id(f: Faker) -> str:
    return "call_" + f.hexify("^" * 12)


def _job_id(f: Faker) -> str:
    return "job_" + f.hexify("^" * 10)


def _error_code(f: Faker) -> str:
    return f"E{f.random_int(1000, 9999)}"


def _approach(f: Faker) -> str:
    return f"{_word(f)}_then_{_word(f)}"


def _migration(f: Faker) -> str:
    return f"{f.random_int(1, 999):04d}_{_word(f)}_{_word(f)}"


def _field(f: Faker) -> str:
    return f.random_element(THRESHOLD_FIELDS)


CATEGORIES = {
    "bucket": _bucket,
    "path": _path,
    "host": _host,
    "ticket": _ticket,
    "version": _version,
    "service": _service,
    "quantity": _quantity,
    "call_id": _call_id,
    "job_id": _job_id,
    "error_code": _error_code,
    "approach": _approach,
    "migration": _migration,
    "field": _field,
}


def make_literal(category: str, seed: int) -> str:
    """The literal of ``category`` for ``seed``; the same arguments always give the same text."""
    try:
        build = CATEGORIES[category]
    except KeyError:
        raise InvalidArgument(f"unknown literal category {category!r}; expected one of {sorted(CATEGORIES)}") from None
    return build(_faker(seed))
