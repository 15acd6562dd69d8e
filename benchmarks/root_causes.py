"""How many blocks a run reports, what they cost and how well-formed they are, per compactor.

For each compactor (the bundled example, two trimming compactors and a few mutants), one run of
``--examples`` at ``--seed``: the findings reported, the (invariant, fact kind) pairs they cover, the summarizer
calls of the whole run and how they split (shrinking; fresh re-asks, for trials and determinism probes; the rest,
exploring), the largest minimal transcript, and how many minimal
transcripts hold a tool result whose call is not in them (or a call whose result is not, and that the
ledger does not hold in flight), outside ``tool-pairing`` findings. Run it before and after a change to the run path and compare the columns:

    python benchmarks/root_causes.py --examples 60 --seed 5

``--third-party`` measures seven real compactors instead (LangChain, AutoGen, agentfit-py,
agentic-context-compaction; ``benchmarks/third_party.py`` says how each is wrapped), with the Python of an
environment where they are installed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness._app.running._options import RunConfig  # noqa: E402
from harness._app.running._run import run  # noqa: E402

COMPACTORS = (
    "harness.summarizers.example:summarize",
    "harness.summarizers.naive:tail",
    "harness.summarizers.naive:head_tail",
    "harness.summarizers.mutants:forgets_on_recompaction",
    "harness.summarizers.mutants:drops_call_id",
    "harness.summarizers.mutants:softens_prohibition",
)

THIRD_PARTY = tuple(f"benchmarks.third_party:{name}" for name in (
    "langchain_trim_last", "langchain_trim_first", "autogen_buffered", "autogen_head_tail", "agentfit_compact",
    "agentic_compaction", "agentic_first_last"))


def malformed(transcript) -> int:
    """Tool results without their call, plus calls without their result that are not in flight (held so by
    the ledger, or made by the last turn: a call still running is no half of anything)."""
    calls = {c.id for t in transcript.turns for c in t.tool_calls}
    answered = {t.tool_call_id for t in transcript.turns if t.tool_call_id}
    in_flight = {lit for f in transcript.facts if str(f.kind) == "in_flight_call" for lit in f.literals}
    in_flight |= {c.id for c in transcript.turns[-1].tool_calls} if transcript.turns else set()
    orphans = sum(1 for t in transcript.turns if t.tool_call_id and t.tool_call_id not in calls)
    return orphans + len(calls - answered - in_flight)


def measure(spec: str, examples: int, seed: int) -> dict:
    start = time.monotonic()
    result = run(RunConfig.of(spec, examples=examples, seed=seed, quiet=True, isolation="inline"))
    failures = result.failures
    return {
        "blocks": len(failures),
        # (invariant, fact kind) pairs the findings cover, with what was seen beside them and the other kinds
        # the primary was seen on: what separate blocks per invariant and kind used to report, so grouping
        # should never lower it.
        "covered": len({pair for f in failures for pair in f.pairs}),
        "calls": result.summarizer_calls,
        "shrink calls": sum(f.shrink_calls for f in failures),
        # fresh re-asks: the trials confirming each minimal failure and the determinism probes
        "re-asks": result.stats.asked_again,
        # what is left: judging the generated sessions, and re-judging minimal transcripts for "also broken"
        "explore calls": result.summarizer_calls - sum(f.shrink_calls for f in failures) - result.stats.asked_again,
        "max turns": max((len(f.transcript.turns) for f in failures), default=0),
        "malformed": sum(1 for f in failures if f.invariant != "tool-pairing" and malformed(f.transcript)),
        "seconds": round(time.monotonic() - start, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=60)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--summarizer", action="append", help="instead of the bundled list (repeatable)")
    parser.add_argument("--third-party", action="store_true", help="the real compactors of benchmarks/third_party.py")
    args = parser.parse_args()
    specs = args.summarizer or (THIRD_PARTY if args.third_party else COMPACTORS)
    rows = [(spec, measure(spec, args.examples, args.seed)) for spec in specs]
    columns = list(rows[0][1])
    print(f"{'compactor':52}" + "".join(f"{c:>14}" for c in columns))
    for spec, row in rows:
        print(f"{spec:52}" + "".join(f"{row[c]:>14}" for c in columns))
    totals = {c: sum(row[c] for _, row in rows) for c in columns}
    print(f"{'total':52}" + "".join(f"{round(totals[c], 1):>14}" for c in columns))


if __name__ == "__main__":
    main()
