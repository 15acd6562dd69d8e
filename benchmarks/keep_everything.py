#!/usr/bin/env python3
"""What a compactor that keeps everything costs per summarizer call, against one that compacts (issue 44).

A keep-everything compactor (``harness.summarizers.identity``) hands every round's judging the whole
session so far; the ledgered one (``harness.summarizers.ledgered``) returns a small summary. Judging that
grows with what is new keeps the first's cost per call within a small multiple of the second's. Each
configuration runs both through the command line, each in a process of its own, on the same sessions (same
seed), and prints per call: wall-clock milliseconds, peak memory (the harness's process; the worker's
alongside), and the ratio of the two, measured in this run. Exploration only (``--trials 0``, and
``budget-respected`` skipped, which the keep-everything compactor breaks by design, so nothing is shrunk):
what each call costs, not what shrinking a finding costs.

- ``128k``: ``--budget 128000``, sessions of up to 4,000 turns (12 windows at most): a production window;
- ``default``: the default budget (2,000) with ``--max-turns 4000``;
- ``long`` (``--long``): the default budget with sessions of 4,000 turns (about 190 windows), where a
  keep-everything context is a hundred times the budget and every step still reads it whole.

Asserts nothing; run by hand::

    python benchmarks/keep_everything.py [--examples 20] [--long]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

CONFIGS = {
    "128k": ["--budget", "128000", "--max-turns", "4000"],
    "default": ["--max-turns", "4000"],
    "long": ["--max-turns", "4000", "--max-windows", "1000"],
}
SUMMARIZERS = {"keeps everything": "harness.summarizers.identity:summarize",
               "ledgered": "harness.summarizers.ledgered:summarize"}

# Run in a process of its own, so peak memory is this run's: the harness's (RUSAGE_SELF) and its worker's.
_CHILD = """
import json, resource, sys, time
from harness._app.cli._main import main
start = time.perf_counter()
code = main(sys.argv[1:])
seconds = time.perf_counter() - start
print(json.dumps({"code": int(code), "seconds": seconds,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}), file=sys.stderr)
"""


def measure(spec: str, config: list[str], examples: int, seed: int, tmp: str) -> dict:
    report = f"{tmp}/report.json"
    args = ["run", "--summarizer", spec, "--examples", str(examples), "--seed", str(seed), "--trials", "0",
            "--skip", "budget-respected", "--quiet", "--report-json", report, *config]
    done = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, check=False)
    figures = json.loads(done.stderr.strip().splitlines()[-1])
    data = json.loads(open(report, encoding="utf-8").read())
    figures["calls"] = data["summarizer_calls"]
    figures["ms_per_call"] = 1000 * figures["seconds"] / max(1, figures["calls"])
    figures["request_tokens_median"] = data["sessions"]["request_tokens_median"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--long", action="store_true", help="also the 190-window sessions at the default budget")
    args = parser.parse_args()
    names = ["128k", "default", *(["long"] if args.long else [])]
    print(f"{args.examples} examples, seed {args.seed}; exploration only (--trials 0, budget-respected skipped)")
    print(f"{'config':8} {'compactor':17} {'calls':>6} {'seconds':>8} {'ms/call':>8} {'peak MB':>8} "
          f"{'worker MB':>9} {'median context':>15}")
    for name in names:
        row = {}
        for label, spec in SUMMARIZERS.items():
            with tempfile.TemporaryDirectory() as tmp:
                row[label] = f = measure(spec, CONFIGS[name], args.examples, args.seed, tmp)
            print(f"{name:8} {label:17} {f['calls']:>6} {f['seconds']:>8.2f} {f['ms_per_call']:>8.1f} "
                  f"{f['rss_mb']:>8.0f} {f['worker_rss_mb']:>9.0f} {f['request_tokens_median'] or 0:>15,.0f}")
        ratio = row["keeps everything"]["ms_per_call"] / row["ledgered"]["ms_per_call"]
        print(f"{name:8} ratio per call: {ratio:.2f}x (target: at most 3x); peak memory "
              f"{max(f['rss_mb'] for f in row.values()):.0f} MB (target: under 500 MB)")


if __name__ == "__main__":
    main()
