#!/usr/bin/env python3
"""The mutation matrix, measured: how many generated examples each oracle needs to catch its mutant.

For every mutant, runs the default transcript strategy under several seeds and
counts the examples until the mutant's own invariant is first reported; prints
the median and the worst, and which *other* invariants fired (collateral).
Single-compaction mutants are judged on one compaction; the session mutants
(``SESSION_MUTANTS``) on whole sessions (tightenings, effects and a consumer
included), every request asked a second time for ``deterministic``. Then the
correct compactors run ``--correct`` whole sessions each, and the violations
they got are counted (there should be none). Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import warnings

from hypothesis import HealthCheck, Phase, given, seed, settings

from harness._app.judging._judge import judge_session
from harness._base._compact import compact_once, request_for
from harness._base._model import Consumer
from harness.summarizers import identity, ledgered, prose
from harness.summarizers.mutants import MUTANTS, SESSION_MUTANTS
from harness.oracles import Case, check
from harness.strategies import transcripts

_STRATEGY = transcripts(min_turns=50, max_turns=600, max_facts=8)
_SESSIONS = transcripts(min_turns=50, max_turns=600, max_facts=8,
                        consumers=[Consumer("router", ("handle-retained", "closure"))])


def _session_violations(summarize, transcript, protocol: str = "rich") -> set[str]:
    def call(request):
        return compact_once(summarize, request, protocol=protocol)
    ev = judge_session(transcript, call, budget=1500, ask_again=lambda requests: [call(r) for r in requests])
    return {key[0] for key in ev.violations}


class _Caught(Exception):
    pass


def _compaction_ids(mutant, transcript) -> set[str]:
    """What one compaction at the transcript's first cut point showed."""
    boundary = transcript.compaction_points[0]
    result = compact_once(mutant, request_for(transcript, boundary, 1500), protocol="rich")
    return {f.invariant for f in check(Case(transcript, boundary, 1500, result)).findings}


def _examples_to_catch(invariant: str, run_seed: int, limit: int, collateral: collections.Counter, *,
                       session: bool = False) -> int | None:
    """Examples of the strategy (``_SESSIONS`` for a session mutant) until the mutant's own invariant shows."""
    mutant = (SESSION_MUTANTS if session else MUTANTS)[invariant]
    count = 0

    @seed(run_seed)
    @settings(max_examples=limit, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(_SESSIONS if session else _STRATEGY)
    def run(transcript):
        nonlocal count
        count += 1
        ids = _session_violations(mutant, transcript) if session else _compaction_ids(mutant, transcript)
        collateral.update(ids - {invariant})
        if invariant in ids:
            raise _Caught

    try:
        run()
    except _Caught:
        return count
    return None


def _correct_sessions(summarize, protocol: str, examples: int) -> tuple[int, collections.Counter]:
    judged, flagged = 0, collections.Counter()

    @seed(0)
    @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(_SESSIONS)
    def run(transcript):
        nonlocal judged
        judged += 1
        ids = _session_violations(summarize, transcript, protocol)
        if summarize is identity.summarize:
            ids.discard("budget-respected")  # identity never shrinks: that is its one expected failure
        flagged.update(ids)

    run()
    return judged, flagged


def _row(invariant: str, needed: list[int | None], collateral: collections.Counter) -> str:
    caught = [n for n in needed if n is not None]
    median = f"{statistics.median(caught):.0f}" if caught else "-"
    worst = str(max(caught)) if caught else "-"
    return f"{invariant:28} {median:>6} {worst:>6} {needed.count(None):>6}  {dict(collateral) or ''}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--limit", type=int, default=400)
    parser.add_argument("--correct", type=int, default=500, help="whole sessions per correct compactor (0: skip)")
    parser.add_argument("--sessions-only", action="store_true", help="only the session mutants and compactors")
    parser.add_argument("--only", action="append", default=None, metavar="ID", help="only these invariants' mutants")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'invariant':28} {'median':>6} {'worst':>6} {'missed':>6}  collateral")
    wanted = (lambda i: args.only is None or i in args.only)
    for invariant in [i for i in MUTANTS if wanted(i) and not args.sessions_only]:
        collateral: collections.Counter = collections.Counter()
        needed = [_examples_to_catch(invariant, s, args.limit, collateral) for s in range(args.runs)]
        print(_row(invariant, needed, collateral))
    for invariant in [i for i in SESSION_MUTANTS if wanted(i)]:
        collateral = collections.Counter()
        needed = [_examples_to_catch(invariant, s, args.limit, collateral, session=True) for s in range(args.runs)]
        print(_row(f"{invariant} (session)", needed, collateral))
    for name, summarize, protocol in (("ledgered", ledgered.summarize, "rich"), ("prose", prose.summarize, "rich"),
                                      ("identity", identity.summarize, "messages")):
        if args.correct:
            judged, flagged = _correct_sessions(summarize, protocol, args.correct)
            print(f"correct compactor {name}: {judged} whole sessions, violations: {dict(flagged) or 'none'}")


if __name__ == "__main__":
    main()
