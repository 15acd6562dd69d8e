#!/usr/bin/env python3
"""Shrink quality: how small each mutant's minimal failure gets, and what shrinking cost.

For every bundled mutant, runs the harness restricted to that mutant's
invariant on long transcripts and prints the first-seen and minimal sizes (turns
and facts), the minimizer's checks, and the summarizer calls shrinking needed
beyond the cache. Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse

from harness._app._runner import RunConfig, run
from harness.summarizers.mutants import MUTANTS, SESSION_MUTANTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=50)
    parser.add_argument("--max-turns", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{'invariant':28} {'first seen':>10} {'minimal':>8} {'facts':>5} {'checks':>6} {'calls':>6}  "
          f"(examples run, summarizer calls in all)")
    for invariant, mutant in {**MUTANTS, **SESSION_MUTANTS}.items():
        config = RunConfig(summarizer=f"harness.summarizers.mutants:{mutant.__name__}", protocol="rich",
                           examples=args.examples, seed=args.seed, max_turns=args.max_turns, only=(invariant,),
                           quiet=True, isolation="inline")
        result = run(config)
        own = [f for f in result.failures if f.invariant == invariant]
        if not own:
            print(f"{invariant:28} {'degrade only: reported, never a failure' if invariant == 'ledger-budget' else 'not caught'}")
            continue
        f = min(own, key=lambda x: len(x.transcript.turns))
        print(f"{invariant:28} {f.original_turns:>10} {len(f.transcript.turns):>8} {len(f.transcript.facts):>5} "
              f"{f.shrink_checks:>6} {f.shrink_calls:>6}  ({result.examples_run}, {result.summarizer_calls})")


if __name__ == "__main__":
    main()
