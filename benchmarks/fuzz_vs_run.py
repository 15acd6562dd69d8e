#!/usr/bin/env python3
"""Coverage-guided ``fuzz`` against property search ``run``, with the same number of summarizer calls.

The subject is ``harness.summarizers.terse``: a correct ledger compactor with a bug behind a chain of
branches that are each common and rare together. For every seed, both commands get ``--max-calls N``
(``run`` with as many examples as calls: its usual stages, a quarter short and dense, then the whole
``--max-turns`` range); printed: whether each found the bug, the summarizer calls made when it
first showed, and the fuzzer's executions per second. Asserts nothing; run by hand::

    python benchmarks/fuzz_vs_run.py [--seeds 1 2 3 4] [--calls 6000] [--summarizer SPEC]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile

from harness._app.fuzzing._fuzz import DEFAULT_FUZZ_MAX_TURNS, FuzzConfig, fuzz
from harness._app.running._options import RunConfig
from harness._app.running._run import run

SUBJECT = "harness.summarizers.terse:summarize"


def _fuzz(spec: str, seed: int, calls: int, directory: str) -> tuple[int | None, float, int]:
    # Each command at its own defaults, as a user would run it: fuzz --max-turns 80, run --max-turns 400.
    config = RunConfig.of(spec, seed=seed, max_calls=calls, trials=0, quiet=True, shrink_calls=1,
                       max_turns=DEFAULT_FUZZ_MAX_TURNS)
    result = fuzz(FuzzConfig(config, max_time=3600, directory=directory))
    found = result.stats.first_failure_calls if result.run.failures else None
    return found, result.stats.per_second, result.stats.calls


def _run(spec: str, seed: int, calls: int) -> tuple[int | None, int]:
    # As many examples as calls: the cap ends the run, and the stages keep their usual shares (a quarter
    # short and dense, the rest over the whole --max-turns range).
    config = RunConfig.of(spec, seed=seed, max_calls=calls, trials=0, quiet=True, isolation="inline",
                       examples=calls, shrink_calls=1)
    result = run(config)
    return (result.first_failure_calls if result.failures else None), result.stats.calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument("--calls", type=int, default=6000)
    parser.add_argument("--summarizer", default=SUBJECT)
    args = parser.parse_args()
    print(f"{args.summarizer}, --max-calls {args.calls} each")
    print(f"{'seed':>4}  {'fuzz: first failure (calls)':>28}  {'exec/s':>7}  {'run: first failure (calls)':>27}")
    fuzz_found, run_found, rates = [], [], []
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as directory:
            f_first, rate, _ = _fuzz(args.summarizer, seed, args.calls, directory)
        r_first, _ = _run(args.summarizer, seed, args.calls)
        fuzz_found.append(f_first)
        run_found.append(r_first)
        rates.append(rate)
        show = lambda v: "not found" if v is None else f"{v:,}"  # noqa: E731
        print(f"{seed:>4}  {show(f_first):>28}  {rate:>7.0f}  {show(r_first):>27}", flush=True)
    hits = lambda xs: sum(x is not None for x in xs)  # noqa: E731
    median = lambda xs: statistics.median([x if x is not None else float("inf") for x in xs])  # noqa: E731
    print(f"found: fuzz {hits(fuzz_found)}/{len(args.seeds)}, run {hits(run_found)}/{len(args.seeds)}; "
          f"median calls to first failure (not found = inf): fuzz {median(fuzz_found):,}, run {median(run_found):,}; "
          f"fuzz {statistics.median(rates):.0f} executions/s")


if __name__ == "__main__":
    main()
