"""Tool calls a coding agent makes and the results it gets: file reads, searches, test runs, diffs, logs,
stack traces, JSON API responses, build output, web search results.

Each builder gives (tool name, JSON arguments, result text) from a ``random.Random`` and, optionally, the
number of result lines wanted: without it a builder draws its own size (mostly a screenful, as earlier
versions did, and still do for ``transcripts()`` without a budget); with it, the result is about that
long, from one line to thousands (``sized_tool_unit``, which real sessions at a production budget need).
The vocabulary is ``_worklog``'s, so what it keeps clear of (every obligation literal's shape) holds here.
"""

from __future__ import annotations

import json
import math
import random

from harness.strategies._internal._worklog import (CODE, EXCEPTIONS, IMAGES, PACKAGES, ROOTS, TEST_ROOTS, USERS, VERBS, WORDS,
                                           between, camel, file_path, gerund, hexid, lines_wanted, numbered, pick,
                                           snake_name, uuid4, version)

__all__ = ["tool_unit", "sized_tool_unit", "OUTPUT_MEDIAN_TOKENS", "OUTPUT_SPREAD", "OUTPUT_MAX_TOKENS"]

Unit = tuple[str, str, str]

def _read_file(rng: random.Random, lines: int | None = None) -> Unit:
    ext = pick(rng, tuple(CODE))
    path = file_path(rng, ext)
    n = lines_wanted(rng) if lines is None else lines
    start = pick(rng, (1, 1, 1, between(rng, 20, 400)))
    args = {"path": path} if start == 1 else {"path": path, "start_line": start, "end_line": start + n - 1}
    # A read from the middle of a file shows no file header; a Go file is in its directory's package.
    body = CODE[ext](rng, n) if start == 1 else CODE[ext](rng, n + 8)[8:]
    if ext == "go" and start == 1:
        body[0] = f"package {path.split('/')[-2].replace('-', '')}"
    return "read_file", json.dumps(args), numbered(body, start)


def _grep(rng: random.Random, lines: int | None = None) -> Unit:
    needle = snake_name(rng)
    hits = [f"{file_path(rng, pick(rng, ('py', 'ts', 'go')))}:{between(rng, 1, 900)}:    "
            f"{pick(rng, ('result = ', 'return ', 'await ', ''))}{needle}({pick(rng, WORDS)}, {between(rng, 0, 64)})"
            for _ in range(between(rng, 0, 8) if lines is None else lines)]
    text = "\n".join(hits) if hits else f"no matches for '{needle}' in {between(rng, 40, 2400)} files"
    return "search_code", json.dumps({"pattern": needle, "max_results": pick(rng, (20, 50, 100))}), text


def _test_run(rng: random.Random, lines: int | None = None) -> Unit:
    total, failed = between(rng, 12, 1800), pick(rng, (0, 0, 0, 1, 2, 5))
    module = f"{pick(rng, TEST_ROOTS)}/test_{pick(rng, WORDS)}.py"
    seconds = f"{rng.uniform(0.4, 240):.2f}"
    out = ["============================= test session starts ==============================",
           f"platform linux -- Python 3.{between(rng, 9, 12)}.{between(rng, 0, 14)}, "
           f"pytest-{between(rng, 7, 8)}.{between(rng, 0, 4)}.{between(rng, 0, 3)}, pluggy-1.{between(rng, 0, 5)}.0",
           f"collected {total} items", ""]
    if lines is None:
        for _ in range(between(rng, 1, 5)):
            dots = "".join(pick(rng, "....................sF") if failed else "." for _ in range(between(rng, 8, 60)))
            out.append(f"{pick(rng, TEST_ROOTS)}/test_{pick(rng, WORDS)}.py {dots} [{between(rng, 1, 100):>3}%]")
    else:  # a verbose run, a test a line, with a failure's traceback every few hundred lines
        for k in range(max(1, lines - 6)):
            if failed and k % 200 == 199:
                out += ["", f"____________________ test_{snake_name(rng)} ____________________",
                        *_py_trace(rng, module)]
                continue
            outcome = "FAILED" if failed and rng.random() < 0.02 else "SKIPPED" if rng.random() < 0.03 else "PASSED"
            out.append(f"{pick(rng, TEST_ROOTS)}/test_{pick(rng, WORDS)}.py::test_{snake_name(rng)} {outcome} "
                       f"[{min(99, 100 * (k + 1) // max(1, lines - 6)):>3}%]")
    if failed and lines is None:
        out += ["", "=================================== FAILURES ===================================",
                f"____________________ test_{snake_name(rng)} ____________________", *_py_trace(rng, module)]
    summary = f"{failed} failed, {total - failed} passed" if failed else f"{total} passed"
    out.append(f"======================== {summary} in {seconds}s ========================")
    args = {"command": f"pytest -q {module} -x --maxfail={between(rng, 1, 5)}"}
    return "run_tests", json.dumps(args), "\n".join(out)


def _py_trace(rng: random.Random, module: str) -> list[str]:
    frames = []
    for _ in range(between(rng, 2, 6)):
        frames += [f'  File "/app/{file_path(rng, "py")}", line {between(rng, 3, 900)}, in {snake_name(rng)}',
                   f"    return self.{pick(rng, WORDS)}[{pick(rng, ('key', 'idx', 'name'))}]"]
    exc = pick(rng, EXCEPTIONS)
    return [f"{module}:{between(rng, 5, 400)}: in test_{snake_name(rng)}", "Traceback (most recent call last):", *frames,
            f"{exc}: '{pick(rng, WORDS)}' (got {between(rng, 0, 5000)}, expected {between(rng, 0, 5000)})"]


def _js_trace(rng: random.Random) -> list[str]:
    out = [f"TypeError: Cannot read properties of undefined (reading '{pick(rng, WORDS)}')"]
    for _ in range(between(rng, 3, 8)):
        out.append(f"    at {pick(rng, VERBS)}{camel(rng)} (/app/{file_path(rng, 'ts')}:"
                   f"{between(rng, 1, 600)}:{between(rng, 1, 80)})")
    return out


def _request_line(rng: random.Random) -> str:
    return (f"{pick(rng, ('GET', 'POST', 'PUT'))} /api/v{between(rng, 1, 3)}/{pick(rng, WORDS)}/"
            f"{between(rng, 1, 99999)} {pick(rng, (200, 200, 200, 201, 404, 500))} "
            f"{between(rng, 1, 2400)} ms {between(rng, 80, 90000)} bytes")


def _run_app(rng: random.Random, lines: int | None = None) -> Unit:
    port = between(rng, 3000, 9999)
    out = [f"[{between(rng, 0, 23):02d}:{between(rng, 0, 59):02d}:{between(rng, 0, 59):02d}] listening on "
           f"http://127.0.0.1:{port} (pid {between(rng, 1000, 65000)})"]
    if lines is None:
        out += [_request_line(rng) for _ in range(between(rng, 2, 10))]
        if rng.random() < 0.4:
            out += _js_trace(rng) if rng.random() < 0.5 else _py_trace(rng, file_path(rng, "py"))
    else:  # a long server log: requests, now and then a stack trace
        while len(out) < lines:
            roll = rng.random()
            out += (_js_trace(rng) if roll < 0.01 else _py_trace(rng, file_path(rng, "py")) if roll < 0.02
                    else [_request_line(rng)])
    return "run_command", json.dumps({"command": f"npm run dev -- --port {port}", "timeout": between(rng, 5, 120)}), \
        "\n".join(out)


def _diff(rng: random.Random, lines: int | None = None) -> Unit:
    ext = pick(rng, ("py", "ts", "go", "rs"))
    path = file_path(rng, ext)
    out = [f"diff --git a/{path} b/{path}", f"index {hexid(rng, 7)}..{hexid(rng, 7)} 100644",
           f"--- a/{path}", f"+++ b/{path}"]
    hunks = between(rng, 1, 4) if lines is None else math.inf
    while hunks > 0 and (lines is None or len(out) < lines):
        hunks -= 1
        start, size = between(rng, 1, 700), between(rng, 3, 14)
        body = CODE[ext](rng, size)
        out.append(f"@@ -{start},{size} +{start},{size + 1} @@")
        for line in body:
            roll = rng.random()
            out.append(("-" if roll < 0.2 else "+" if roll < 0.4 else " ") + line)
    return "git_diff", json.dumps({"path": path, "context": pick(rng, (3, 5, 10))}), "\n".join(out)


def _git_log(rng: random.Random, lines: int | None = None) -> Unit:
    n = between(rng, 3, 12) if lines is None else lines
    out = [f"{hexid(rng, 7)} {pick(rng, ('fix', 'feat', 'chore', 'refactor'))}: {pick(rng, VERBS)} "
           f"{pick(rng, WORDS)} {pick(rng, ('handling', 'path', 'tests', 'timeouts', 'types'))} (#{between(rng, 100, 4000)})"
           for _ in range(n)]
    return "run_command", json.dumps({"command": f"git log --oneline -n {n}"}), "\n".join(out)


def _docker_ps(rng: random.Random, lines: int | None = None) -> Unit:
    out = ["CONTAINER ID   IMAGE            STATUS          PORTS                    NAMES"]
    for _ in range(between(rng, 1, 6) if lines is None else max(1, min(lines, 40))):
        inner = pick(rng, (5432, 6379, 8000, 9200, 80))
        out.append(f"{hexid(rng, 12)}   {pick(rng, IMAGES):<16} Up {between(rng, 2, 59)} minutes   "
                   f"0.0.0.0:{between(rng, 3000, 9999)}->"
                   f"{inner}/tcp   {pick(rng, WORDS)}_{pick(rng, WORDS)}_{between(rng, 1, 3)}")
    return "run_command", json.dumps({"command": "docker ps"}), "\n".join(out)


def _disk(rng: random.Random, lines: int | None = None) -> Unit:
    out = [f"{between(rng, 1, 999)}.{between(rng, 0, 9)}{pick(rng, ('K', 'M', 'G'))}\t./{pick(rng, WORDS)}"
           for _ in range(between(rng, 2, 12) if lines is None else lines)]
    return "run_command", json.dumps({"command": "du -sh ./*", "max_depth": 1}), "\n".join(out)


def _versions(rng: random.Random, lines: int | None = None) -> Unit:
    count = between(rng, 3, 12) if lines is None else max(1, min(lines, len(PACKAGES)))
    out = [f"{pkg:<12} {version(rng)}" for pkg in rng.sample(PACKAGES, count)]
    return "run_command", json.dumps({"command": "pip list --format=columns"}), \
        "Package      Version\n------------ -------\n" + "\n".join(out)


def _http(rng: random.Random, lines: int | None = None) -> Unit:
    body = {"id": uuid4(rng), "status": pick(rng, ("ok", "degraded")), "uptime_seconds": between(rng, 10, 900000),
            "build": hexid(rng, 7), "region": pick(rng, ("eu-west", "us-east")), "queue": between(rng, 0, 500)}
    body["items"] = [{"id": uuid4(rng), "size": between(rng, 1, 99999)}
                     for _ in range(between(rng, 0, 5) if lines is None else max(1, lines // 5))]
    port = between(rng, 3000, 9999)
    return "run_command", json.dumps({"command": f"curl -s http://localhost:{port}/health"}), \
        json.dumps(body, indent=pick(rng, (None, 2)) if lines is None else 2)


def _list_dir(rng: random.Random, lines: int | None = None) -> Unit:
    root = pick(rng, ROOTS)
    out = [f"-rw-r--r--  1 {pick(rng, USERS)}  staff  {between(rng, 80, 90000):>6} "
           f"{pick(rng, ('Mar', 'Jun', 'Oct'))} {between(rng, 1, 28):>2} {between(rng, 0, 23):02d}:{between(rng, 0, 59):02d} "
           f"{pick(rng, WORDS)}.{pick(rng, tuple(CODE))}" for _ in range(between(rng, 2, 16) if lines is None else lines)]
    return "list_dir", json.dumps({"path": root, "all": rng.random() < 0.3}), "\n".join(out)


# -- kinds only sized sessions use: an API's records, a dependency build, web search, an edit's confirmation --

def _api_records(rng: random.Random, lines: int) -> Unit:
    resource = pick(rng, WORDS)
    records = [{"id": uuid4(rng), "name": f"{pick(rng, WORDS)}-{between(rng, 1, 9999)}", "owner": pick(rng, USERS),
                "created_at": f"2026-{between(rng, 1, 12):02d}-{between(rng, 1, 28):02d}T{between(rng, 0, 23):02d}:"
                              f"{between(rng, 0, 59):02d}:00Z", "size": between(rng, 1, 999999),
                "tags": [pick(rng, WORDS) for _ in range(between(rng, 0, 3))], "active": rng.random() < 0.8}
               for _ in range(max(1, lines // 12))]
    page = {"data": records, "page": between(rng, 1, 40), "per_page": len(records), "total": between(rng, 50, 90000)}
    return "http_get", json.dumps({"url": f"http://localhost:{between(rng, 3000, 9999)}/api/v2/{resource}s",
                                   "params": {"page": page["page"]}}), json.dumps(page, indent=2)


def _build_log(rng: random.Random, lines: int) -> Unit:
    out = [f"$ pip install -r requirements.txt --no-cache-dir  (python 3.{between(rng, 9, 12)})"]
    while len(out) < lines:
        package = pick(rng, PACKAGES)
        out.append(pick(rng, (
            f"Collecting {package}=={version(rng)}",
            f"  Downloading {package}-{version(rng)}-py3-none-any.whl ({between(rng, 12, 9000)} kB)",
            f"Requirement already satisfied: {package} in ./venv/lib/python3.{between(rng, 9, 12)}/site-packages",
            f"  Building wheel for {package} (pyproject.toml): finished with status 'done'",
            f"WARNING: {package} {version(rng)} does not provide the extra '{pick(rng, WORDS)}'")))
    out.append(f"Successfully installed {' '.join(f'{p}-{version(rng)}' for p in rng.sample(PACKAGES, 4))}")
    return "run_command", json.dumps({"command": "pip install -r requirements.txt", "timeout": 600}), "\n".join(out)


def _web_search(rng: random.Random, lines: int) -> Unit:
    topic = f"{pick(rng, PACKAGES)} {pick(rng, WORDS)} {pick(rng, ('timeout', 'memory leak', 'retry', 'encoding'))}"
    out = []
    for k in range(max(1, lines // 3)):
        out += [f"{k + 1}. {camel(rng)} {gerund(pick(rng, VERBS))} guide ({between(rng, 2019, 2026)})",
                f"   https://docs.example.org/{pick(rng, WORDS)}/{snake_name(rng).replace('_', '-')}",
                f"   ... the {pick(rng, WORDS)} {pick(rng, VERBS)} step takes {between(rng, 2, 900)} ms with "
                f"{between(rng, 1, 64)} workers; see issue #{between(rng, 100, 9999)} ..."]
    return "web_search", json.dumps({"query": topic, "max_results": max(1, lines // 3)}), "\n".join(out)


def _edit_file(rng: random.Random, lines: int) -> Unit:
    path = file_path(rng, pick(rng, tuple(CODE)))
    start = between(rng, 1, 600)
    text = f"Applied 1 edit to {path}: replaced lines {start}-{start + between(rng, 0, 12)}."
    return "edit_file", json.dumps({"path": path, "old": pick(rng, WORDS), "new": pick(rng, WORDS)}), text


# Tool kinds with their weights: reads and tests dominate a coding agent's work.
_TOOL_BUILDERS = ((_read_file, 30), (_grep, 14), (_test_run, 12), (_diff, 10), (_run_app, 7), (_git_log, 6),
                  (_docker_ps, 4), (_disk, 4), (_versions, 4), (_http, 5), (_list_dir, 6))
_TOOLS, _TOOL_WEIGHTS = zip(*_TOOL_BUILDERS)

# At a production budget, with the kinds only long sessions show; each with about how many tokens one of its
# lines takes (as the harness counts them), so a wanted size becomes a number of lines.
_SIZED_BUILDERS = ((_read_file, 28, 5.5), (_grep, 8, 16), (_test_run, 10, 13.5), (_diff, 9, 8), (_run_app, 8, 14),
                   (_git_log, 3, 10), (_list_dir, 3, 21), (_api_records, 7, 6.5), (_build_log, 4, 16.5),
                   (_web_search, 4, 14.5), (_edit_file, 6, 18), (_docker_ps, 2, 20), (_versions, 2, 10),
                   (_http, 2, 5), (_disk, 2, 6))
_SIZED, _SIZED_WEIGHTS, _TOKENS_PER_LINE = zip(*_SIZED_BUILDERS)

#: The sizes of tool results in a sized session, in tokens: log-normal about this median, spread by this
#: factor (a standard deviation of the log), never over the most (a runtime cuts longer output, as Claude Code
#: does at 25,000 tokens). About one in twenty is under 70 tokens, one in ten over 1,600, one in a hundred
#: over 5,000.
OUTPUT_MEDIAN_TOKENS = 400
OUTPUT_SPREAD = 1.1
OUTPUT_MAX_TOKENS = 25_000


def tool_unit(rng: random.Random) -> Unit:
    """One tool call a coding agent makes and the result it gets: (name, JSON arguments, result text)."""
    return rng.choices(_TOOLS, _TOOL_WEIGHTS)[0](rng)


def sized_tool_unit(rng: random.Random) -> Unit:
    """A tool call and a result whose size is drawn from the heavy-tailed sizes of real sessions
    (``OUTPUT_MEDIAN_TOKENS``, ``OUTPUT_SPREAD``, ``OUTPUT_MAX_TOKENS``)."""
    tokens = min(OUTPUT_MAX_TOKENS, max(20.0, rng.lognormvariate(math.log(OUTPUT_MEDIAN_TOKENS), OUTPUT_SPREAD)))
    k = rng.choices(range(len(_SIZED)), _SIZED_WEIGHTS)[0]
    return _SIZED[k](rng, max(1, round(tokens / _TOKENS_PER_LINE[k])))
