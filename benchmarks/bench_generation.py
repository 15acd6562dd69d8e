#!/usr/bin/env python3
"""Generation speed: the skeleton strategy against a naive element-by-element one.

Prints examples per second for 50-, 500- and 5,000-turn transcripts, the naive
strategy's rate beside ours, and the ratio, all measured in this one run on this
machine. Also prints the median time to generate one 4,000-turn transcript (target: 20 ms) and
how many tokens such a transcript holds.
Not a test: it asserts nothing, so run it by hand (python benchmarks/bench_generation.py).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable

from harness import Role, Turn
from harness._base._tokens import message_tokens
from harness.strategies import transcripts

_QUIET = settings(
    database=None,
    deadline=None,
    phases=[Phase.generate],
    verbosity=Verbosity.quiet,
    suppress_health_check=list(HealthCheck),
)


def _naive(size: int) -> st.SearchStrategy[list[Turn]]:
    """What one writes first: every turn drawn through Hypothesis."""
    turn = st.builds(Turn, st.sampled_from([Role.USER, Role.ASSISTANT]), st.text(max_size=40))
    return st.lists(turn, min_size=size, max_size=size)


def _rate(strategy: st.SearchStrategy, examples: int) -> tuple[float, int, float, list[float]]:
    """(examples/s, examples produced, seconds, gaps between consecutive examples)."""
    stamps: list[float] = []

    @settings(_QUIET, max_examples=examples)
    @given(strategy)
    def run(_value) -> None:
        stamps.append(time.perf_counter())

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            run()
        except Unsatisfiable:
            pass  # every attempt overran Hypothesis's size cap: that *is* the measurement
    elapsed = time.perf_counter() - start
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    return len(stamps) / elapsed, len(stamps), elapsed, gaps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100, help="examples asked of our strategy per size")
    parser.add_argument("--naive-examples", type=int, default=20, help="examples asked of the naive one per size")
    args = parser.parse_args()

    print(f"{'turns':>6} {'ours ex/s':>10} {'naive ex/s':>11} {'ratio':>8}   (naive: produced/asked in seconds)")
    for size in (50, 500, 5000):
        ours, *_ = _rate(transcripts(min_turns=size, max_turns=size, max_facts=8), args.examples)
        naive, produced, secs, _ = _rate(_naive(size), args.naive_examples)
        ratio = f"{ours / naive:8.1f}" if naive else "    n/a "
        print(f"{size:>6} {ours:>10.1f} {naive:>11.2f} {ratio}   ({produced}/{args.naive_examples} in {secs:.1f}s)")

    _, produced, _, gaps = _rate(transcripts(min_turns=4000, max_turns=4000, max_facts=8), args.examples)
    print(f"4000-turn transcript: median {statistics.median(gaps) * 1000:.1f} ms per example "
          f"(p90 {statistics.quantiles(gaps, n=10)[-1] * 1000:.1f} ms, {produced} examples; target <= 20 ms)")
    sizes = _token_counts(transcripts(min_turns=4000, max_turns=4000, max_facts=8), 10)
    per_turn = sorted(n for transcript in sizes for n in transcript)
    print(f"  its tokens, as the budget counts them: median {statistics.median(sum(t) for t in sizes):.0f} per "
          f"transcript; per turn median {statistics.median(per_turn):.0f}, p90 "
          f"{statistics.quantiles(per_turn, n=10)[-1]:.0f}, max {per_turn[-1]}")


def _token_counts(strategy: st.SearchStrategy, examples: int) -> list[list[int]]:
    """message_tokens of every turn, for a few examples of ``strategy``."""
    out: list[list[int]] = []

    @settings(_QUIET, max_examples=examples)
    @given(strategy)
    def run(transcript) -> None:
        out.append([message_tokens(t) for t in transcript.turns])

    run()
    return out


if __name__ == "__main__":
    main()
