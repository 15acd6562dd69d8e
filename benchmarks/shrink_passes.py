"""What each of the shrinker's passes costs and earns, summed over every finding of a few runs.

One run per compactor (``benchmarks/root_causes.py``'s: the bundled example, two trimming compactors and a
few mutants, plus every bundled mutant with ``--mutants``); each finding's shrink records, per named pass,
how often it ran, the checks (sessions judged) and summarizer calls it spent, and how many of its runs
changed what is reported (a smaller transcript, a lower budget; the run's own budget restored): see
``harness._app.shrinking._tally``. A pass with many calls and no successes is one to drop or reorder:

    python benchmarks/shrink_passes.py --examples 40 --seed 5

A team's scale: ``--budget 200000 --background tests/fixtures/logs/claude_code`` (and ``--summarizer`` for
the real compactors of ``benchmarks/third_party.py``, from an environment where they are installed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.root_causes import COMPACTORS  # noqa: E402
from harness._app.running._options import RunConfig  # noqa: E402
from harness._app.running._run import run  # noqa: E402
from harness._app.shrinking._tally import PassTally  # noqa: E402
from harness.summarizers.mutants import MUTANTS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=40)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--max-turns", type=int, default=400)
    parser.add_argument("--mutants", action="store_true", help="also every bundled mutant")
    parser.add_argument("--summarizer", action="append", help="instead of the bundled list (repeatable)")
    parser.add_argument("--budget", type=int, default=None, help="the runs' budget (default the run's)")
    parser.add_argument("--background", default=None, help="session logs as the filler, as run --background")
    args = parser.parse_args(argv)
    specs = list(args.summarizer or COMPACTORS)
    if args.mutants:
        specs += [spec for spec in dict.fromkeys(f"harness.summarizers.mutants:{fn.__name__}" for fn in MUTANTS.values())
                  if spec not in specs]
    totals: dict[str, PassTally] = {}
    findings = turns = calls = 0
    for spec in specs:
        options = {k: v for k, v in (("budget", args.budget), ("background", args.background)) if v is not None}
        result = run(RunConfig.of(spec, examples=args.examples, seed=args.seed, max_turns=args.max_turns, quiet=True,
                                  isolation="inline", **options))
        for failure in result.failures:
            findings += 1
            turns += len(failure.transcript.turns)
            calls += failure.shrink_calls
            for tally in failure.shrink_passes:
                totals[tally.name] = totals.get(tally.name, PassTally(tally.name)).plus(tally)
        print(f"{spec}: {len(result.failures)} finding(s), largest minimal transcript "
              f"{max((len(f.transcript.turns) for f in result.failures), default=0)} turns", file=sys.stderr)
    print(f"{len(specs)} compactors, {findings} findings, {calls} shrinking calls, "
          f"{turns / max(1, findings):.1f} turns per minimal transcript on average\n")
    print(f"{'pass':24} {'runs':>6} {'checks':>7} {'calls':>7} {'successes':>9} {'calls/success':>13} {'share of calls':>14}")
    for tally in sorted(totals.values(), key=lambda t: -t.calls):
        per = f"{tally.calls / tally.successes:.1f}" if tally.successes else "-"
        print(f"{tally.name:24} {tally.runs:>6} {tally.checks:>7} {tally.calls:>7} {tally.successes:>9} {per:>13} "
              f"{100 * tally.calls / max(1, calls):>13.0f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
