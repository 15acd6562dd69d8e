"""The vocabulary of a coding agent's work: words, paths, versions, ids, code in seven languages, chatter.

Filler is what a summarizer must learn to drop, so it has to look like the work
it will meet: numbers and identifiers everywhere (line numbers, versions, ports,
sizes, hashes, UUIDs, durations, test counts). The tool calls and results built
from it are ``_tools``'s. Every builder here is a pure function of a ``random.Random``.

What filler may never look like is an obligation literal, so its vocabulary
keeps clear of every shape ``_literals`` draws from: no ``s3://`` URLs, no
``.internal`` hosts, no ``call_`` ids, no ``ABC-1234`` tickets, no four-digit
``E`` codes, no ``NNNN_word_word`` names, no ``word_then_word`` approaches, no
``migrations/ scripts/ deploy/ infra/ config/ ops/`` paths, no
``name-api-3`` services, no number glued to MiB, GiB, s, ms or rps, and none of
the threshold or gating field names. Version numbers are the one shape both
draw from, so ``_filler`` indexes them and keeps a transcript's version literals
out of its filler (a test checks every pooled entry against these shapes).
"""

from __future__ import annotations

import random
import uuid

__all__ = ["user_line", "assistant_line", "LANGUAGES", "CODE", "WORDS", "VERBS", "ROOTS", "TEST_ROOTS", "KEYS",
           "PACKAGES", "EXCEPTIONS", "USERS", "IMAGES", "pick", "between", "gerund", "snake_name", "camel", "version",
           "hexid", "uuid4", "file_path", "lines_wanted", "numbered"]

WORDS = (
    "cache", "store", "queue", "router", "parser", "render", "session", "auth", "export", "report", "index",
    "search", "billing", "invoice", "account", "profile", "upload", "thumbnail", "webhook", "notify", "audit",
    "metrics", "health", "config", "schema", "client", "worker", "pool", "ledger", "feed", "cart", "order",
)
VERBS = ("load", "parse", "build", "render", "check", "fetch", "save", "merge", "split", "resolve", "encode",
          "decode", "flush", "sync", "emit", "scan", "apply", "reset", "open", "close")
ROOTS = ("src", "lib", "app", "pkg", "web/src", "services", "internal/core", "cmd")
TEST_ROOTS = ("tests", "test", "spec")
# Local settings names: plausible config keys that are none of the obligation fields.
KEYS = ("pool_size", "read_deadline", "cache_ttl", "worker_count", "flush_every", "log_level", "queue_depth",
         "retry_backoff", "chunk_bytes", "idle_grace", "warmup_rounds", "sample_rate")
PACKAGES = ("requests", "urllib3", "pydantic", "sqlalchemy", "fastapi", "uvicorn", "redis", "boto3", "numpy",
             "pytest", "black", "mypy", "httpx", "jinja2", "click", "rich")
EXCEPTIONS = ("KeyError", "ValueError", "TypeError", "AttributeError", "IndexError", "RuntimeError",
               "AssertionError", "ZeroDivisionError")
USERS = ("dana", "lee", "sam", "priya", "ola", "marek")

# Image tags that exist, so a version in a compose file or `docker ps` reads as one.
IMAGES = ("postgres:16.2", "postgres:15.6", "redis:7.2", "nginx:1.25", "node:20.11", "python:3.12-slim",
           "elasticsearch:8.12.2", "rabbitmq:3.13")

LANGUAGES = {"py": "python", "ts": "typescript", "go": "go", "sql": "sql", "yml": "yaml", "sh": "shell", "rs": "rust"}


def pick(rng: random.Random, items):
    # random.choice and randint cost ten times a bare random() call, and pools render ~10^5 of them.
    return items[int(rng.random() * len(items))]


def between(rng: random.Random, low: int, high: int) -> int:
    return low + int(rng.random() * (high - low + 1))


def gerund(verb: str) -> str:
    return (verb[:-1] if verb.endswith("e") else verb) + "ing"


def snake_name(rng: random.Random) -> str:
    return f"{pick(rng, VERBS)}_{pick(rng, WORDS)}"


def camel(rng: random.Random) -> str:
    return pick(rng, WORDS).capitalize() + pick(rng, WORDS).capitalize()


def version(rng: random.Random) -> str:
    return f"{between(rng, 0, 9)}.{between(rng, 0, 40)}.{between(rng, 0, 25)}"


def hexid(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


def uuid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def file_path(rng: random.Random, ext: str) -> str:
    depth = pick(rng, (1, 1, 2))
    parts = [pick(rng, ROOTS)] + [pick(rng, WORDS) for _ in range(depth)]
    return "/".join(parts) + "." + ext


def lines_wanted(rng: random.Random) -> int:
    """Most reads are a function or two, some a screenful, a few whole files of a few hundred lines."""
    roll = rng.random()
    if roll < 0.7:
        return between(rng, 4, 16)
    if roll < 0.95:
        return between(rng, 16, 60)
    return between(rng, 60, 300)


# -- code, one small grammar per language ------------------------------------------------------------

def _python(rng: random.Random, n: int) -> list[str]:
    out = [f"import {pick(rng, PACKAGES)}", f"from .{pick(rng, WORDS)} import {camel(rng)}", ""]
    while len(out) < n:
        fn, arg, key = snake_name(rng), pick(rng, WORDS), pick(rng, KEYS)
        out += [
            f"def {fn}({arg}: dict, {key}: int = {between(rng, 1, 512)}) -> list[str]:",
            f'    """{pick(rng, VERBS).capitalize()} the {arg} in chunks of {between(rng, 2, 256)}."""',
            f"    items = [x for x in {arg}.values() if x.get(\"{pick(rng, WORDS)}\")]",
            f"    if len(items) > {between(rng, 8, 4096)}:",
            f"        raise {pick(rng, EXCEPTIONS)}(f\"too many: {{len(items)}}\")",
            f"    return sorted(items, key=lambda x: x[{between(rng, 0, 3)}])[:{key}]",
            "",
        ]
    return out[:n]


def _typescript(rng: random.Random, n: int) -> list[str]:
    out = [f"import {{ {camel(rng)} }} from './{pick(rng, WORDS)}';", ""]
    while len(out) < n:
        fn = pick(rng, VERBS) + camel(rng)
        out += [
            f"export async function {fn}(id: string, limit = {between(rng, 5, 200)}): Promise<{camel(rng)}[]> {{",
            f"  const res = await fetch(`/api/v{between(rng, 1, 3)}/{pick(rng, WORDS)}/${{id}}?limit=${{limit}}`);",
            f"  if (res.status !== {pick(rng, (200, 201, 204))}) throw new Error(`HTTP ${{res.status}}`);",
            f"  const body = (await res.json()) as {{ items: unknown[]; total: number }};",
            f"  return body.items.slice(0, {between(rng, 10, 99)}) as {camel(rng)}[];",
            "}",
            "",
        ]
    return out[:n]


def _go(rng: random.Random, n: int) -> list[str]:
    out = [f"package {pick(rng, WORDS)}", "", "import (", '\t"context"', '\t"fmt"', '\t"time"', ")", ""]
    while len(out) < n:
        typ = camel(rng)
        out += [
            f"func (s *{typ}) {pick(rng, VERBS).capitalize()}(ctx context.Context, id string) (*{camel(rng)}, error) {{",
            f"\tctx, cancel := context.WithTimeout(ctx, {between(rng, 1, 90)}*time.Second)",
            "\tdefer cancel()",
            f"\tif len(id) != {pick(rng, (16, 26, 32, 36))} {{",
            f"\t\treturn nil, fmt.Errorf(\"bad id %q (want {between(rng, 16, 36)} chars)\", id)",
            "\t}",
            f"\treturn s.{pick(rng, WORDS)}.Get(ctx, id, {between(rng, 1, 64)})",
            "}",
            "",
        ]
    return out[:n]


def _sql(rng: random.Random, n: int) -> list[str]:
    out = []
    while len(out) < n:
        table, other = pick(rng, WORDS), pick(rng, WORDS)
        out += [
            f"SELECT {table}.id, {table}.created_at, count({other}.id) AS {other}s",
            f"FROM {table}",
            f"LEFT JOIN {other} ON {other}.{table}_id = {table}.id",
            f"WHERE {table}.created_at > now() - interval '{between(rng, 1, 90)} days'",
            f"GROUP BY {table}.id",
            f"ORDER BY {other}s DESC",
            f"LIMIT {pick(rng, (10, 20, 50, 100, 250))};",
            "",
        ]
    return out[:n]


def _yaml(rng: random.Random, n: int) -> list[str]:
    out = ["services:"]
    while len(out) < n:
        svc, port = pick(rng, WORDS), between(rng, 3000, 9999)
        out += [
            f"  {svc}:",
            f"    image: {pick(rng, IMAGES)}",
            "    ports:",
            f"      - \"{port}:{pick(rng, (80, 5432, 6379, 8000))}\"",
            "    environment:",
            f"      {pick(rng, KEYS).upper()}: \"{between(rng, 1, 300)}\"",
        ]
    return out[:n]


def _shell(rng: random.Random, n: int) -> list[str]:
    out = ["#!/usr/bin/env bash", "set -euo pipefail", ""]
    while len(out) < n:
        out += [
            f"echo \"{gerund(pick(rng, VERBS))} {pick(rng, WORDS)} ({between(rng, 1, 40)} of {between(rng, 40, 99)})\"",
            f"for i in $(seq 1 {between(rng, 2, 12)}); do",
            f"  curl -fsS \"http://localhost:{between(rng, 3000, 9999)}/{pick(rng, WORDS)}?page=$i\" > /tmp/out.$i",
            "done",
            f"sleep {between(rng, 1, 9)}",
            "",
        ]
    return out[:n]


def _rust(rng: random.Random, n: int) -> list[str]:
    out = ["use std::collections::HashMap;", ""]
    while len(out) < n:
        out += [
            f"pub fn {snake_name(rng)}(input: &[u8], cap: usize) -> Result<Vec<u32>, String> {{",
            f"    let mut seen: HashMap<u32, usize> = HashMap::with_capacity({between(rng, 16, 1024)});",
            "    for (i, b) in input.iter().enumerate() {",
            f"        *seen.entry(*b as u32 % {between(rng, 7, 251)}).or_insert(0) += i;",
            "    }",
            f"    if seen.len() > cap {{ return Err(format!(\"{{}} > {{}}\", seen.len(), cap)); }}",
            "    Ok(seen.into_keys().collect())",
            "}",
            "",
        ]
    return out[:n]


CODE = {"py": _python, "ts": _typescript, "go": _go, "sql": _sql, "yml": _yaml, "sh": _shell, "rs": _rust}


def numbered(lines: list[str], start: int) -> str:
    return "\n".join(f"{start + i:>5}\t{line}" for i, line in enumerate(lines))


# -- chatter that mentions numbers -----------------------------------------------------------------

_USER_TEMPLATES = (
    "Can you look at why {file} is slow? It took {n} ms on my machine.",
    "The build on PR #{pr} is red again, {k} tests failing.",
    "What's in {file} around line {line}?",
    "Try it with {k} workers and see what the p95 looks like.",
    "Ok, that makes sense.",
    "Sounds good, carry on.",
    "Hmm, the {word} page shows {n} items but there should be {k}.",
    "Did the {word} refactor touch {file}?",
    "Can you run the {word} tests once more?",
    "Looks like {word} uses {k} MB more than yesterday.",
    "I pushed {sha} with a fix for the {word} flake, can you rebase?",
    "Let's leave the {word} module alone for now and get the tests green.",
    "Is {uuid} one of the records from the import?",
    "Nice. How long did the full suite take?",
)
_ASSISTANT_TEMPLATES = (
    "I read {file}; the {word} loop at line {line} does {k} queries per item.",
    "The tests pass now: {n} passed, {k} skipped.",
    "p95 latency went from {n} ms to {k} ms after the change.",
    "There are {k} call sites of {name} left; I'll update them next.",
    "The failure is an off-by-one in {name} ({file}, line {line}).",
    "I'll look at {file} next.",
    "Renamed {name} and fixed {k} imports.",
    "The diff touches {k} files, {n} lines in total.",
    "Commit {sha} introduced the regression in the {word} module.",
    "The container on port {port} answers, uptime {n} seconds.",
    "Checked {k} fixtures; two of them still use the old {word} format.",
    "That should make the {word} code easier to read.",
    "The flaky test fails about {k} times in {n} runs.",
)


def _chat_fields(rng: random.Random) -> dict[str, object]:
    return {"file": file_path(rng, pick(rng, tuple(CODE))), "n": between(rng, 10, 9000), "k": between(rng, 2, 64),
            "pr": between(rng, 100, 4000), "line": between(rng, 1, 900), "word": pick(rng, WORDS),
            "sha": hexid(rng, 7), "uuid": uuid4(rng), "name": snake_name(rng), "port": between(rng, 3000, 9999)}


def user_line(rng: random.Random) -> str:
    return pick(rng, _USER_TEMPLATES).format(**_chat_fields(rng))


def assistant_line(rng: random.Random) -> str:
    lines = [pick(rng, _ASSISTANT_TEMPLATES).format(**_chat_fields(rng)) for _ in range(pick(rng, (1, 1, 1, 2, 3)))]
    return " ".join(lines)
