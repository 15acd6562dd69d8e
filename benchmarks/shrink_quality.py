#!/usr/bin/env python3
"""Shrink quality and economy: how small each failure gets, and how many summarizer calls that costs.

For every bundled mutant (restricted to the invariant it was built to break) and
the bundled naive tail and head+tail compactors (all oracles), runs the harness
over several seeds and prints, per failure, the median over seeds of: turns when
first seen, turns of the minimal transcript (a coalesced run of filler counts as
one turn), the budget the minimal transcript fails at, the minimizer's checks
and the new summarizer calls shrinking made. Per target it prints the calls of
the whole run and the calls made before the first failure was seen. Not a
test: it asserts nothing.

    python benchmarks/shrink_quality.py [--examples 50] [--max-turns 4000] [--seeds 3]
    python benchmarks/shrink_quality.py --targets tail,head_tail --examples 200 --max-turns 400
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from harness._app.running._options import RunConfig
from harness._app.running._run import run
from harness.summarizers.mutants import MUTANTS, SESSION_MUTANTS

NAIVE = {"tail": "harness.summarizers.naive:tail", "head_tail": "harness.summarizers.naive:head_tail"}


def _targets(names: list[str] | None) -> dict[str, tuple[str, tuple[str, ...] | None]]:
    """target name -> (summarizer spec, the oracles it is judged by; None: all)."""
    targets = {mutant.__name__: (f"harness.summarizers.mutants:{mutant.__name__}", (invariant,))
               for invariant, mutant in {**MUTANTS, **SESSION_MUTANTS}.items()}
    targets.update({name: (spec, None) for name, spec in NAIVE.items()})
    if names:
        unknown = sorted(set(names) - set(targets))
        if unknown:
            raise SystemExit(f"--targets: unknown {', '.join(unknown)}; choose from {', '.join(targets)}")
        targets = {n: targets[n] for n in names}
    return targets


def _median(values) -> str:
    values = [v for v in values if v is not None]
    return f"{statistics.median(values):g}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=50)
    parser.add_argument("--max-turns", type=int, default=4000)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1; medians are over these")
    parser.add_argument("--targets", type=lambda s: s.split(","), default=None,
                        help="comma-separated mutant names, tail, head_tail (default: all)")
    args = parser.parse_args()
    print(f"{args.examples} examples, --max-turns {args.max_turns}, --budget {args.budget}, seeds 0..{args.seeds - 1}; "
          f"medians over seeds")
    print(f"{'target / failure':52} {'first seen':>10} {'minimal':>7} {'budget':>6} {'checks':>6} {'calls':>6}")
    worst_turns, worst_calls = [], []
    for name, (spec, only) in _targets(args.targets).items():
        rows = defaultdict(list)
        run_calls, first_calls, seconds = [], [], []
        for seed in range(args.seeds):
            start = time.perf_counter()
            result = run(RunConfig.of(spec, examples=args.examples, seed=seed, max_turns=args.max_turns,
                                   budget=args.budget, only=only, quiet=True, isolation="inline"))
            seconds.append(time.perf_counter() - start)
            run_calls.append(result.summarizer_calls)
            first_calls.append(getattr(result, "first_failure_calls", None))
            for f in result.failures:
                rows[f.key].append(f)
        print(f"{name:52} run calls {_median(run_calls)}, calls to first failure {_median(first_calls)}, "
              f"{_median(seconds)} s a run")
        if not rows:
            print(f"  {'no failure':50}")
        for key, found in sorted(rows.items(), key=lambda kv: str(kv[0])):
            minimal = [_turns(f) for f in found]
            calls = [f.shrink_calls for f in found]
            worst_turns.append(statistics.median(minimal))
            worst_calls.append(statistics.median(calls))
            print(f"  {key[0] + ' (' + (key[1] or '-') + ')':50} {_median(f.original_turns for f in found):>10} "
                  f"{_median(minimal):>7} {_median(getattr(f, 'budget', args.budget) for f in found):>6} "
                  f"{_median(f.shrink_checks for f in found):>6} {_median(calls):>6}")
    if worst_turns:
        print(f"largest median minimal transcript: {max(worst_turns):g} turns; "
              f"most median new calls to shrink one failure: {max(worst_calls):g}")


def _turns(failure) -> int:
    """Turns of the minimal transcript, a coalesced run of filler counted as one (it already is one turn)."""
    return len(failure.transcript.turns)


if __name__ == "__main__":
    main()
