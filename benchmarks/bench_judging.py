"""How judging one compaction scales with the size of the context a summarizer returns.

For several shapes of text (prose, one long token, many lines, identifiers, numbers, many
messages, and one long run of words of force and identifiers with no sentence end), time
``harness.oracles.check`` at 1/8, 1/4, 1/2 and 1 of the size limit, and print the cost per MB and its ratio
to the smallest size measured in the same run. Linear judging keeps that ratio near 1; a quadratic
path doubles it with every doubling of size. Then each shape's cost per MB at the largest size
against realistic prose's, measured in the same run (issue 29 holds the force run to 5x). Prints,
asserts nothing.

    python benchmarks/bench_judging.py [--max-mb 2]
"""

from __future__ import annotations

import argparse
import time

from harness import CompactionResult, Fact, FactKind, Polarity, Role, Transcript, Turn
from harness.oracles import Case, check

LITERAL = "s3://acme-prod-01/"
SHAPES = {
    "prose": "The agent read src/app.py and ran the tests; never use s3://acme-prod-01/ please. ",
    "one long token": "x",
    "many lines": "never touch s3://acme-prod-01/\n",
    "identifiers": "a_b_c_d ",
    "numbers": "1.2.3 <= 5, 6 ",
    # The worst a cue reader meets: every word a cue or a negator, the literal among them, never a sentence end.
    "force run": "never must not s3://acme-prod-01/ only do not keep allowed pending unresolved ideally x_1 ",
    # What a session's summary mostly is: sentences of work with names and numbers, the literal now and then.
    "realistic prose": ("The agent read src/app.py and ran 214 tests; one in tests/test_io.py was flaky and is "
                        "fixed now. It reviewed the diff with the user, who asked for smaller commits and a "
                        "changelog entry. The build on ci-runner-7 took 6 minutes, 40 seconds faster than "
                        "yesterday, and the coverage report shows 81% of lines. Next it will split the parser "
                        "module in two and update docs/parser.md. The cache layer was profiled: 38 ms p95 on "
                        "the hot path, 12 MB resident. The user confirmed the release is planned for Thursday. "
                        "Never use s3://acme-prod-01/ for exports. "),
}


def _source() -> Transcript:
    turns = tuple(Turn(Role.USER, f"Never use {LITERAL} for this job.") for _ in range(3))
    return Transcript(turns, (Fact("P", FactKind.PROHIBITION, (LITERAL,), 0, Polarity.FORBID),), (3,))


def _result(shape: str, chars: int) -> CompactionResult:
    if shape == "many messages":
        line = f"Never use {LITERAL} in job no. 5 today."
        return CompactionResult(tuple(Turn(Role.ASSISTANT, line) for _ in range(chars // len(line))))
    unit = SHAPES[shape]
    return CompactionResult((Turn(Role.SYSTEM, unit * (chars // len(unit))),))


def _seconds(source: Transcript, result: CompactionResult) -> float:
    start = time.perf_counter()
    check(Case(source, 3, 2000, result))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mb", type=float, default=2.0, help="largest context to judge (default 2, the limit)")
    args = parser.parse_args()
    source = _source()
    sizes = [args.max_mb / 8, args.max_mb / 4, args.max_mb / 2, args.max_mb]
    print(f"{'shape':16} " + " ".join(f"{mb:>8.2f} MB" for mb in sizes) + "   s/MB at largest ÷ s/MB at smallest")
    largest = {}
    for shape in [*SHAPES, "many messages"]:
        per_mb = []
        for mb in sizes:
            per_mb.append(_seconds(source, _result(shape, int(mb * 1_000_000))) / mb)
        ratio = per_mb[-1] / per_mb[0] if per_mb[0] > 0 else float("nan")
        largest[shape] = per_mb[-1]
        print(f"{shape:16} " + " ".join(f"{v:>8.3f} s/MB" for v in per_mb) + f"   {ratio:.2f}x")
    base = largest["realistic prose"]
    print(f"\ns/MB at {sizes[-1]:.2f} MB against realistic prose (same run):")
    for shape, value in largest.items():
        print(f"{shape:16} {value / base:6.2f}x")


if __name__ == "__main__":
    main()
