"""The ordinary work of a coding agent, as text: code, diffs, test runs, traces, shell output, chatter.

Filler is what a summarizer must learn to drop, so it has to look like the work
it will meet: numbers and identifiers everywhere (line numbers, versions, ports,
sizes, hashes, UUIDs, durations, test counts), tool results that match their
call (reading ``src/x.go`` returns Go), and sizes from a few tokens to
thousands. Every builder here is a pure function of a ``random.Random``.

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

import json
import random
import uuid

__all__ = ["tool_unit", "user_line", "assistant_line", "LANGUAGES"]

_WORDS = (
    "cache", "store", "queue", "router", "parser", "render", "session", "auth", "export", "report", "index",
    "search", "billing", "invoice", "account", "profile", "upload", "thumbnail", "webhook", "notify", "audit",
    "metrics", "health", "config", "schema", "client", "worker", "pool", "ledger", "feed", "cart", "order",
)
_VERBS = ("load", "parse", "build", "render", "check", "fetch", "save", "merge", "split", "resolve", "encode",
          "decode", "flush", "sync", "emit", "scan", "apply", "reset", "open", "close")
_ROOTS = ("src", "lib", "app", "pkg", "web/src", "services", "internal/core", "cmd")
_TEST_ROOTS = ("tests", "test", "spec")
# Local settings names: plausible config keys that are none of the obligation fields.
_KEYS = ("pool_size", "read_deadline", "cache_ttl", "worker_count", "flush_every", "log_level", "queue_depth",
         "retry_backoff", "chunk_bytes", "idle_grace", "warmup_rounds", "sample_rate")
_PACKAGES = ("requests", "urllib3", "pydantic", "sqlalchemy", "fastapi", "uvicorn", "redis", "boto3", "numpy",
             "pytest", "black", "mypy", "httpx", "jinja2", "click", "rich")
_EXCEPTIONS = ("KeyError", "ValueError", "TypeError", "AttributeError", "IndexError", "RuntimeError",
               "AssertionError", "ZeroDivisionError")
_USERS = ("dana", "lee", "sam", "priya", "ola", "marek")

# Image tags that exist, so a version in a compose file or `docker ps` reads as one.
_IMAGES = ("postgres:16.2", "postgres:15.6", "redis:7.2", "nginx:1.25", "node:20.11", "python:3.12-slim",
           "elasticsearch:8.12.2", "rabbitmq:3.13")

LANGUAGES = {"py": "python", "ts": "typescript", "go": "go", "sql": "sql", "yml": "yaml", "sh": "shell", "rs": "rust"}


def _pick(rng: random.Random, items):
    # random.choice and randint cost ten times a bare random() call, and pools render ~10^5 of them.
    return items[int(rng.random() * len(items))]


def _int(rng: random.Random, low: int, high: int) -> int:
    return low + int(rng.random() * (high - low + 1))


def _gerund(verb: str) -> str:
    return (verb[:-1] if verb.endswith("e") else verb) + "ing"


def _name(rng: random.Random) -> str:
    return f"{_pick(rng, _VERBS)}_{_pick(rng, _WORDS)}"


def _camel(rng: random.Random) -> str:
    return _pick(rng, _WORDS).capitalize() + _pick(rng, _WORDS).capitalize()


def _version(rng: random.Random) -> str:
    return f"{_int(rng, 0, 9)}.{_int(rng, 0, 40)}.{_int(rng, 0, 25)}"


def _hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _file_path(rng: random.Random, ext: str) -> str:
    depth = _pick(rng, (1, 1, 2))
    parts = [_pick(rng, _ROOTS)] + [_pick(rng, _WORDS) for _ in range(depth)]
    return "/".join(parts) + "." + ext


def _lines_wanted(rng: random.Random) -> int:
    """Most reads are a function or two, some a screenful, a few whole files of a few hundred lines."""
    roll = rng.random()
    if roll < 0.7:
        return _int(rng, 4, 16)
    if roll < 0.95:
        return _int(rng, 16, 60)
    return _int(rng, 60, 300)


# -- code, one small grammar per language ------------------------------------------------------------

def _python(rng: random.Random, n: int) -> list[str]:
    out = [f"import {_pick(rng, _PACKAGES)}", f"from .{_pick(rng, _WORDS)} import {_camel(rng)}", ""]
    while len(out) < n:
        fn, arg, key = _name(rng), _pick(rng, _WORDS), _pick(rng, _KEYS)
        out += [
            f"def {fn}({arg}: dict, {key}: int = {_int(rng, 1, 512)}) -> list[str]:",
            f'    """{_pick(rng, _VERBS).capitalize()} the {arg} in chunks of {_int(rng, 2, 256)}."""',
            f"    items = [x for x in {arg}.values() if x.get(\"{_pick(rng, _WORDS)}\")]",
            f"    if len(items) > {_int(rng, 8, 4096)}:",
            f"        raise {_pick(rng, _EXCEPTIONS)}(f\"too many: {{len(items)}}\")",
            f"    return sorted(items, key=lambda x: x[{_int(rng, 0, 3)}])[:{key}]",
            "",
        ]
    return out[:n]


def _typescript(rng: random.Random, n: int) -> list[str]:
    out = [f"import {{ {_camel(rng)} }} from './{_pick(rng, _WORDS)}';", ""]
    while len(out) < n:
        fn = _pick(rng, _VERBS) + _camel(rng)
        out += [
            f"export async function {fn}(id: string, limit = {_int(rng, 5, 200)}): Promise<{_camel(rng)}[]> {{",
            f"  const res = await fetch(`/api/v{_int(rng, 1, 3)}/{_pick(rng, _WORDS)}/${{id}}?limit=${{limit}}`);",
            f"  if (res.status !== {_pick(rng, (200, 201, 204))}) throw new Error(`HTTP ${{res.status}}`);",
            f"  const body = (await res.json()) as {{ items: unknown[]; total: number }};",
            f"  return body.items.slice(0, {_int(rng, 10, 99)}) as {_camel(rng)}[];",
            "}",
            "",
        ]
    return out[:n]


def _go(rng: random.Random, n: int) -> list[str]:
    out = [f"package {_pick(rng, _WORDS)}", "", "import (", '\t"context"', '\t"fmt"', '\t"time"', ")", ""]
    while len(out) < n:
        typ = _camel(rng)
        out += [
            f"func (s *{typ}) {_pick(rng, _VERBS).capitalize()}(ctx context.Context, id string) (*{_camel(rng)}, error) {{",
            f"\tctx, cancel := context.WithTimeout(ctx, {_int(rng, 1, 90)}*time.Second)",
            "\tdefer cancel()",
            f"\tif len(id) != {_pick(rng, (16, 26, 32, 36))} {{",
            f"\t\treturn nil, fmt.Errorf(\"bad id %q (want {_int(rng, 16, 36)} chars)\", id)",
            "\t}",
            f"\treturn s.{_pick(rng, _WORDS)}.Get(ctx, id, {_int(rng, 1, 64)})",
            "}",
            "",
        ]
    return out[:n]


def _sql(rng: random.Random, n: int) -> list[str]:
    out = []
    while len(out) < n:
        table, other = _pick(rng, _WORDS), _pick(rng, _WORDS)
        out += [
            f"SELECT {table}.id, {table}.created_at, count({other}.id) AS {other}s",
            f"FROM {table}",
            f"LEFT JOIN {other} ON {other}.{table}_id = {table}.id",
            f"WHERE {table}.created_at > now() - interval '{_int(rng, 1, 90)} days'",
            f"GROUP BY {table}.id",
            f"ORDER BY {other}s DESC",
            f"LIMIT {_pick(rng, (10, 20, 50, 100, 250))};",
            "",
        ]
    return out[:n]


def _yaml(rng: random.Random, n: int) -> list[str]:
    out = ["services:"]
    while len(out) < n:
        svc, port = _pick(rng, _WORDS), _int(rng, 3000, 9999)
        out += [
            f"  {svc}:",
            f"    image: {_pick(rng, _IMAGES)}",
            "    ports:",
            f"      - \"{port}:{_pick(rng, (80, 5432, 6379, 8000))}\"",
            "    environment:",
            f"      {_pick(rng, _KEYS).upper()}: \"{_int(rng, 1, 300)}\"",
        ]
    return out[:n]


def _shell(rng: random.Random, n: int) -> list[str]:
    out = ["#!/usr/bin/env bash", "set -euo pipefail", ""]
    while len(out) < n:
        out += [
            f"echo \"{_gerund(_pick(rng, _VERBS))} {_pick(rng, _WORDS)} ({_int(rng, 1, 40)} of {_int(rng, 40, 99)})\"",
            f"for i in $(seq 1 {_int(rng, 2, 12)}); do",
            f"  curl -fsS \"http://localhost:{_int(rng, 3000, 9999)}/{_pick(rng, _WORDS)}?page=$i\" > /tmp/out.$i",
            "done",
            f"sleep {_int(rng, 1, 9)}",
            "",
        ]
    return out[:n]


def _rust(rng: random.Random, n: int) -> list[str]:
    out = ["use std::collections::HashMap;", ""]
    while len(out) < n:
        out += [
            f"pub fn {_name(rng)}(input: &[u8], cap: usize) -> Result<Vec<u32>, String> {{",
            f"    let mut seen: HashMap<u32, usize> = HashMap::with_capacity({_int(rng, 16, 1024)});",
            "    for (i, b) in input.iter().enumerate() {",
            f"        *seen.entry(*b as u32 % {_int(rng, 7, 251)}).or_insert(0) += i;",
            "    }",
            f"    if seen.len() > cap {{ return Err(format!(\"{{}} > {{}}\", seen.len(), cap)); }}",
            "    Ok(seen.into_keys().collect())",
            "}",
            "",
        ]
    return out[:n]


_CODE = {"py": _python, "ts": _typescript, "go": _go, "sql": _sql, "yml": _yaml, "sh": _shell, "rs": _rust}


def _numbered(lines: list[str], start: int) -> str:
    return "\n".join(f"{start + i:>5}\t{line}" for i, line in enumerate(lines))


# -- tool units: (tool name, JSON arguments, result text) ----------------------------------------------

def _read_file(rng: random.Random) -> tuple[str, str, str]:
    ext = _pick(rng, tuple(_CODE))
    path = _file_path(rng, ext)
    n = _lines_wanted(rng)
    start = _pick(rng, (1, 1, 1, _int(rng, 20, 400)))
    args = {"path": path} if start == 1 else {"path": path, "start_line": start, "end_line": start + n - 1}
    # A read from the middle of a file shows no file header; a Go file is in its directory's package.
    lines = _CODE[ext](rng, n) if start == 1 else _CODE[ext](rng, n + 8)[8:]
    if ext == "go" and start == 1:
        lines[0] = f"package {path.split('/')[-2].replace('-', '')}"
    return "read_file", json.dumps(args), _numbered(lines, start)


def _grep(rng: random.Random) -> tuple[str, str, str]:
    needle = _name(rng)
    hits = [f"{_file_path(rng, _pick(rng, ('py', 'ts', 'go')))}:{_int(rng, 1, 900)}:    "
            f"{_pick(rng, ('result = ', 'return ', 'await ', ''))}{needle}({_pick(rng, _WORDS)}, {_int(rng, 0, 64)})"
            for _ in range(_int(rng, 0, 8))]
    text = "\n".join(hits) if hits else f"no matches for '{needle}' in {_int(rng, 40, 2400)} files"
    return "search_code", json.dumps({"pattern": needle, "max_results": _pick(rng, (20, 50, 100))}), text


def _test_run(rng: random.Random) -> tuple[str, str, str]:
    total, failed = _int(rng, 12, 1800), _pick(rng, (0, 0, 0, 1, 2, 5))
    module = f"{_pick(rng, _TEST_ROOTS)}/test_{_pick(rng, _WORDS)}.py"
    seconds = f"{rng.uniform(0.4, 240):.2f}"
    lines = ["============================= test session starts ==============================",
             f"platform linux -- Python 3.{_int(rng, 9, 12)}.{_int(rng, 0, 14)}, "
             f"pytest-{_int(rng, 7, 8)}.{_int(rng, 0, 4)}.{_int(rng, 0, 3)}, pluggy-1.{_int(rng, 0, 5)}.0",
             f"collected {total} items", ""]
    for _ in range(_int(rng, 1, 5)):
        dots = "".join(_pick(rng, "....................sF") if failed else "." for _ in range(_int(rng, 8, 60)))
        lines.append(f"{_pick(rng, _TEST_ROOTS)}/test_{_pick(rng, _WORDS)}.py {dots} [{_int(rng, 1, 100):>3}%]")
    if failed:
        lines += ["", "=================================== FAILURES ===================================",
                  f"____________________ test_{_name(rng)} ____________________", *_py_trace(rng, module)]
    summary = f"{failed} failed, {total - failed} passed" if failed else f"{total} passed"
    lines.append(f"======================== {summary} in {seconds}s ========================")
    args = {"command": f"pytest -q {module} -x --maxfail={_int(rng, 1, 5)}"}
    return "run_tests", json.dumps(args), "\n".join(lines)


def _py_trace(rng: random.Random, module: str) -> list[str]:
    frames = []
    for _ in range(_int(rng, 2, 6)):
        frames += [f'  File "/app/{_file_path(rng, "py")}", line {_int(rng, 3, 900)}, in {_name(rng)}',
                   f"    return self.{_pick(rng, _WORDS)}[{_pick(rng, ('key', 'idx', 'name'))}]"]
    exc = _pick(rng, _EXCEPTIONS)
    return [f"{module}:{_int(rng, 5, 400)}: in test_{_name(rng)}", "Traceback (most recent call last):", *frames,
            f"{exc}: '{_pick(rng, _WORDS)}' (got {_int(rng, 0, 5000)}, expected {_int(rng, 0, 5000)})"]


def _js_trace(rng: random.Random) -> list[str]:
    lines = [f"TypeError: Cannot read properties of undefined (reading '{_pick(rng, _WORDS)}')"]
    for _ in range(_int(rng, 3, 8)):
        lines.append(f"    at {_pick(rng, _VERBS)}{_camel(rng)} (/app/{_file_path(rng, 'ts')}:"
                     f"{_int(rng, 1, 600)}:{_int(rng, 1, 80)})")
    return lines


def _run_app(rng: random.Random) -> tuple[str, str, str]:
    port = _int(rng, 3000, 9999)
    lines = [f"[{_int(rng, 0, 23):02d}:{_int(rng, 0, 59):02d}:{_int(rng, 0, 59):02d}] listening on "
             f"http://127.0.0.1:{port} (pid {_int(rng, 1000, 65000)})"]
    for _ in range(_int(rng, 2, 10)):
        lines.append(f"{_pick(rng, ('GET', 'POST', 'PUT'))} /api/v{_int(rng, 1, 3)}/{_pick(rng, _WORDS)}/"
                     f"{_int(rng, 1, 99999)} {_pick(rng, (200, 200, 200, 201, 404, 500))} "
                     f"{_int(rng, 1, 2400)} ms {_int(rng, 80, 90000)} bytes")
    if rng.random() < 0.4:
        lines += _js_trace(rng) if rng.random() < 0.5 else _py_trace(rng, _file_path(rng, "py"))
    return "run_command", json.dumps({"command": f"npm run dev -- --port {port}", "timeout": _int(rng, 5, 120)}), \
        "\n".join(lines)


def _diff(rng: random.Random) -> tuple[str, str, str]:
    ext = _pick(rng, ("py", "ts", "go", "rs"))
    path = _file_path(rng, ext)
    lines = [f"diff --git a/{path} b/{path}", f"index {_hex(rng, 7)}..{_hex(rng, 7)} 100644",
             f"--- a/{path}", f"+++ b/{path}"]
    for _ in range(_int(rng, 1, 4)):
        start, size = _int(rng, 1, 700), _int(rng, 3, 14)
        body = _CODE[ext](rng, size)
        lines.append(f"@@ -{start},{size} +{start},{size + 1} @@")
        for line in body:
            roll = rng.random()
            lines.append(("-" if roll < 0.2 else "+" if roll < 0.4 else " ") + line)
    return "git_diff", json.dumps({"path": path, "context": _pick(rng, (3, 5, 10))}), "\n".join(lines)


def _git_log(rng: random.Random) -> tuple[str, str, str]:
    n = _int(rng, 3, 12)
    lines = [f"{_hex(rng, 7)} {_pick(rng, ('fix', 'feat', 'chore', 'refactor'))}: {_pick(rng, _VERBS)} "
             f"{_pick(rng, _WORDS)} {_pick(rng, ('handling', 'path', 'tests', 'timeouts', 'types'))} (#{_int(rng, 100, 4000)})"
             for _ in range(n)]
    return "run_command", json.dumps({"command": f"git log --oneline -n {n}"}), "\n".join(lines)


def _docker_ps(rng: random.Random) -> tuple[str, str, str]:
    lines = ["CONTAINER ID   IMAGE            STATUS          PORTS                    NAMES"]
    for _ in range(_int(rng, 1, 6)):
        inner = _pick(rng, (5432, 6379, 8000, 9200, 80))
        lines.append(f"{_hex(rng, 12)}   {_pick(rng, _IMAGES):<16} Up {_int(rng, 2, 59)} minutes   "
                     f"0.0.0.0:{_int(rng, 3000, 9999)}->"
                     f"{inner}/tcp   {_pick(rng, _WORDS)}_{_pick(rng, _WORDS)}_{_int(rng, 1, 3)}")
    return "run_command", json.dumps({"command": "docker ps"}), "\n".join(lines)


def _disk(rng: random.Random) -> tuple[str, str, str]:
    lines = [f"{_int(rng, 1, 999)}.{_int(rng, 0, 9)}{_pick(rng, ('K', 'M', 'G'))}\t./{_pick(rng, _WORDS)}"
             for _ in range(_int(rng, 2, 12))]
    return "run_command", json.dumps({"command": "du -sh ./*", "max_depth": 1}), "\n".join(lines)


def _versions(rng: random.Random) -> tuple[str, str, str]:
    lines = [f"{pkg:<12} {_version(rng)}" for pkg in rng.sample(_PACKAGES, _int(rng, 3, 12))]
    return "run_command", json.dumps({"command": "pip list --format=columns"}), \
        "Package      Version\n------------ -------\n" + "\n".join(lines)


def _http(rng: random.Random) -> tuple[str, str, str]:
    body = {"id": _uuid(rng), "status": _pick(rng, ("ok", "degraded")), "uptime_seconds": _int(rng, 10, 900000),
            "build": _hex(rng, 7), "region": _pick(rng, ("eu-west", "us-east")), "queue": _int(rng, 0, 500),
            "items": [{"id": _uuid(rng), "size": _int(rng, 1, 99999)} for _ in range(_int(rng, 0, 5))]}
    port = _int(rng, 3000, 9999)
    return "run_command", json.dumps({"command": f"curl -s http://localhost:{port}/health"}), \
        json.dumps(body, indent=_pick(rng, (None, 2)))


def _list_dir(rng: random.Random) -> tuple[str, str, str]:
    root = _pick(rng, _ROOTS)
    lines = [f"-rw-r--r--  1 {_pick(rng, _USERS)}  staff  {_int(rng, 80, 90000):>6} "
             f"{_pick(rng, ('Mar', 'Jun', 'Oct'))} {_int(rng, 1, 28):>2} {_int(rng, 0, 23):02d}:{_int(rng, 0, 59):02d} "
             f"{_pick(rng, _WORDS)}.{_pick(rng, tuple(_CODE))}" for _ in range(_int(rng, 2, 16))]
    return "list_dir", json.dumps({"path": root, "all": rng.random() < 0.3}), "\n".join(lines)


# Tool kinds with their weights: reads and tests dominate a coding agent's work.
_TOOL_BUILDERS = ((_read_file, 30), (_grep, 14), (_test_run, 12), (_diff, 10), (_run_app, 7), (_git_log, 6),
                  (_docker_ps, 4), (_disk, 4), (_versions, 4), (_http, 5), (_list_dir, 6))
_TOOLS, _TOOL_WEIGHTS = zip(*_TOOL_BUILDERS)


def tool_unit(rng: random.Random) -> tuple[str, str, str]:
    """One tool call a coding agent makes and the result it gets: (name, JSON arguments, result text)."""
    return rng.choices(_TOOLS, _TOOL_WEIGHTS)[0](rng)


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
    return {"file": _file_path(rng, _pick(rng, tuple(_CODE))), "n": _int(rng, 10, 9000), "k": _int(rng, 2, 64),
            "pr": _int(rng, 100, 4000), "line": _int(rng, 1, 900), "word": _pick(rng, _WORDS),
            "sha": _hex(rng, 7), "uuid": _uuid(rng), "name": _name(rng), "port": _int(rng, 3000, 9999)}


def user_line(rng: random.Random) -> str:
    return _pick(rng, _USER_TEMPLATES).format(**_chat_fields(rng))


def assistant_line(rng: random.Random) -> str:
    lines = [_pick(rng, _ASSISTANT_TEMPLATES).format(**_chat_fields(rng)) for _ in range(_pick(rng, (1, 1, 1, 2, 3)))]
    return " ".join(lines)
