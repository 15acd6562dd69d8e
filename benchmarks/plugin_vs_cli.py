"""The pytest plugin's property search against ``compaction-harness run``, on one slow summarizer.

A stand-in for a model: the correct ledgered compactor, sleeping --sleep seconds per call and writing a
line per call (so the two are seen doing the same work). Each is run as a user runs it, in its own
process, on the same examples (the plugin's dev profile is run's --examples 20) and seed:

    pytest -m compaction_harness --summarizer slow.py:summarize --summarizer-jobs K ...
    compaction-harness run --summarizer slow.py:summarize --examples 20 --jobs K ...

and the plugin once more without --summarizer-jobs (one example at a time, as it was before it had the
option). Printed: the median wall time of each over --repeat rounds (the three alternate within a round),
the summarizer calls each made, and the ratios measured in this run. Asserts nothing; run by hand::

    python benchmarks/plugin_vs_cli.py [--jobs 4] [--sleep 0.05] [--seed 1] [--max-turns 200] [--repeat 3]

Bytecode is cached (in a temporary PYTHONPYCACHEPREFIX, filled by one untimed round first), as on a
user's machine: pytest rewrites the asserts of every module of a plugin's distribution (the whole
harness) as it imports them, and without a cache it does so again in every session, about two seconds
here. --no-bytecode-cache measures that case (PYTHONDONTWRITEBYTECODE=1).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SLOW = """import time
from harness.summarizers import ledgered

def summarize(request):
    with open({log!r}, "a") as log:
        log.write("call\\n")
    time.sleep({sleep!r})
    return ledgered.summarize(request)

summarize.compaction_protocol = "rich"
"""


def _timed(command: list[str], folder: Path, log: Path, env: dict[str, str]) -> tuple[float, int, int]:
    """Seconds, summarizer calls and exit code of one command run in ``folder``."""
    log.write_text("")
    start = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds, len(log.read_text().split()), done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=0.05, help="seconds the stand-in sleeps per call")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-turns", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-bytecode-cache", action="store_true", help="time every session compiling afresh")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder, log = Path(tmp), Path(tmp) / "calls.log"
        (folder / "slow.py").write_text(SLOW.format(log=str(log), sleep=args.sleep), encoding="utf-8")
        (folder / "test_nothing.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
        common = ["--summarizer", "slow.py:summarize"]
        plugin = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "compaction_harness",
                  *common, "--summarizer-seed", str(args.seed), "--summarizer-max-turns", str(args.max_turns),
                  "--summarizer-corpus", "none"]
        commands = {
            f"pytest --summarizer-jobs {args.jobs}": [*plugin, "--summarizer-jobs", str(args.jobs)],
            f"run --jobs {args.jobs}": [sys.executable, "-m", "harness", "run", *common, "--examples", "20",
                                        "--seed", str(args.seed), "--max-turns", str(args.max_turns),
                                        "--jobs", str(args.jobs), "--quiet"],
            "pytest (one at a time)": plugin,
        }
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
        if args.no_bytecode_cache:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
            for command in commands.values():  # the untimed round that fills the cache
                _timed(command, folder, log, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        calls: dict[str, set[int]] = {name: set() for name in commands}
        for _ in range(args.repeat):
            for name, command in commands.items():
                seconds, made, _ = _timed(command, folder, log, env)
                times[name].append(seconds)
                calls[name].add(made)
        print(f"stand-in: ledgered compactor sleeping {args.sleep * 1000:.0f} ms per call · 20 examples · seed "
              f"{args.seed} · --max-turns {args.max_turns} · median of {args.repeat} · bytecode "
              f"{'not cached' if args.no_bytecode_cache else 'cached'}")
        median = {name: statistics.median(values) for name, values in times.items()}
        for name in commands:
            print(f"  {name:26} {median[name]:6.2f} s  ({', '.join(f'{s:.2f}' for s in times[name])})  "
                  f"calls {', '.join(map(str, sorted(calls[name])))}")
        jobs_plugin, jobs_run, alone = commands
        print(f"plugin / run at --jobs {args.jobs}: {median[jobs_plugin] / median[jobs_run]:.2f}x; "
              f"plugin one at a time / plugin at {args.jobs} jobs: {median[alone] / median[jobs_plugin]:.2f}x")


if __name__ == "__main__":
    main()
