#!/usr/bin/env python3
"""Run every fuzz target (or those named) for a bounded time; exit 1 if any crashed.

    python fuzz/run_targets.py [TARGET...] [--max-time SECONDS] [--jobs N]

Each target runs in its own process (``fuzz/targets.py``) on a fresh temporary corpus seeded
from ``fuzz/seeds/TARGET/``, so a run never writes into the repository. Printed per target:
executions, executions per second, libFuzzer's coverage and crashes; for a crash, the input's
path (its temporary folder is kept) and the traceback. This is what CI's fuzz job runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMES = ("transcript", "corpus_entry", "result", "wire")
_ARTIFACTS = ("crash-", "timeout-", "oom-", "leak-")
#: Time to start (instrumenting imports, building the pool) and to wind down, on top of --max-time.
_GRACE = 180


@dataclass
class Outcome:
    name: str
    executions: int | None = None
    per_second: int | None = None
    coverage: int | None = None
    crashes: list[Path] = field(default_factory=list)
    log: str = ""
    folder: Path | None = None
    problem: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.crashes or self.problem)


def run_one(name: str, max_time: int) -> Outcome:
    folder = Path(tempfile.mkdtemp(prefix=f"fuzz-{name}-"))
    corpus = folder / "corpus"
    shutil.copytree(HERE / "seeds" / name, corpus)
    command = [sys.executable, str(HERE / "targets.py"), name, f"-max_total_time={max_time}", "-timeout=30",
               "-rss_limit_mb=2048", "-print_final_stats=1", f"-artifact_prefix={folder}/", str(corpus)]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no __pycache__ left in the repository
    outcome = Outcome(name, folder=folder)
    try:
        done = subprocess.run(command, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=max_time + _GRACE)
        outcome.log = done.stdout.decode("utf-8", "replace")
        code = done.returncode
    except subprocess.TimeoutExpired as exc:
        outcome.log = (exc.stdout or b"").decode("utf-8", "replace")
        outcome.problem = f"still running {max_time + _GRACE} s after it started (a hang libFuzzer did not catch)"
        code = None
    _read_stats(outcome)
    outcome.crashes = sorted(p for p in folder.iterdir() if p.name.startswith(_ARTIFACTS))
    if not outcome.problem and not outcome.crashes and (code != 0 or outcome.executions is None):
        outcome.problem = f"exited with status {code} and no crash input; see the log below"
    if not outcome.failed:
        shutil.rmtree(folder, ignore_errors=True)
    return outcome


def _read_stats(outcome: Outcome) -> None:
    stats = dict(re.findall(r"^stat::(\w+):\s+(\d+)", outcome.log, re.MULTILINE))
    if "number_of_executed_units" in stats:
        outcome.executions = int(stats["number_of_executed_units"])
        outcome.per_second = int(stats["average_exec_per_sec"])
    coverage = re.findall(r"\bcov: (\d+)", outcome.log)
    if coverage:
        outcome.coverage = int(coverage[-1])


def _traceback(log: str) -> str:
    """The Python traceback atheris printed, or the end of the log when there is none."""
    start = log.find("=== Uncaught Python exception: ===")
    if start < 0:
        return "\n".join(log.splitlines()[-40:])
    end = log.find("==", log.find("\n", start + 35))
    return log[start:end if end > 0 else None].rstrip()


def report(outcome: Outcome) -> str:
    figures = (f"{outcome.executions:,} executions, {outcome.per_second:,} exec/s, cov {outcome.coverage}"
               if outcome.executions is not None else "no statistics")
    lines = [f"{outcome.name}: {figures}, {len(outcome.crashes)} crashes"]
    for path in outcome.crashes:
        lines.append(f"  crash input: {path}  (replay: fuzz/targets.py {outcome.name} {path})")
    if outcome.problem:
        lines.append(f"  problem: {outcome.problem}")
    if outcome.failed:
        lines.append(f"  files kept in {outcome.folder}")
        lines.append("  " + _traceback(outcome.log).replace("\n", "\n  "))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help=f"targets to run (default: all of {', '.join(NAMES)})")
    parser.add_argument("--max-time", type=int, default=30, help="seconds of fuzzing per target (default 30)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="targets run at once (default: 2, or 1 on a one-core machine)")
    args = parser.parse_args(argv)
    if args.max_time < 1 or args.jobs < 1:
        parser.error("--max-time and --jobs must be at least 1")
    unknown = [name for name in args.targets if name not in NAMES]
    if unknown:
        parser.error(f"unknown target {unknown[0]!r}; choose from {', '.join(NAMES)}")
    if importlib.util.find_spec("atheris") is None:
        print("run_targets.py: atheris is not installed here; install the fuzz extra: pip install -e '.[fuzz]'",
              file=sys.stderr)
        return 2
    names = list(dict.fromkeys(args.targets)) or list(NAMES)
    failed = False
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for outcome in pool.map(lambda name: run_one(name, args.max_time), names):
            print(report(outcome), flush=True)
            failed |= outcome.failed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
