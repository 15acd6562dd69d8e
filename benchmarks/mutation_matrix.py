#!/usr/bin/env python3
"""The mutation matrix, measured: how many generated examples each oracle needs to catch its mutant.

For every mutant, runs the default transcript strategy under several seeds and
counts the examples until the mutant's own invariant is first reported; prints
the median and the worst, and which *other* invariants fired (collateral).
Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import warnings

from hypothesis import HealthCheck, Phase, given, seed, settings

from harness._base._compact import compact_once, request_for
from harness.summarizers.mutants import MUTANTS
from oracles import Case, check
from strategies import transcripts

_STRATEGY = transcripts(min_turns=50, max_turns=600, max_facts=8)


class _Caught(Exception):
    pass


def _examples_to_catch(invariant: str, run_seed: int, limit: int, collateral: collections.Counter) -> int | None:
    mutant = MUTANTS[invariant]
    count = 0

    @seed(run_seed)
    @settings(max_examples=limit, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(_STRATEGY)
    def run(transcript):
        nonlocal count
        count += 1
        boundary = transcript.compaction_points[0]
        result = compact_once(mutant, request_for(transcript, boundary, 1500), protocol="rich")
        ids = {f.invariant for f in check(Case(transcript, boundary, 1500, result)).findings}
        collateral.update(ids - {invariant})
        if invariant in ids:
            raise _Caught

    try:
        run()
    except _Caught:
        return count
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--limit", type=int, default=400)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'invariant':28} {'median':>6} {'worst':>6} {'missed':>6}  collateral")
    for invariant in MUTANTS:
        collateral: collections.Counter = collections.Counter()
        needed = [_examples_to_catch(invariant, s, args.limit, collateral) for s in range(args.runs)]
        caught = [n for n in needed if n is not None]
        median = f"{statistics.median(caught):.0f}" if caught else "-"
        worst = str(max(caught)) if caught else "-"
        print(f"{invariant:28} {median:>6} {worst:>6} {needed.count(None):>6}  {dict(collateral) or ''}")


if __name__ == "__main__":
    main()
