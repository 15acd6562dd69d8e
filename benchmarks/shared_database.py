"""N shards with a shared example database against N shards without one: what the second night costs.

Two nights of N shards each (``run --shard K/N``, one seed a night, the same total examples either way).
*Shared*: every shard of both nights uses one database (a real Redis when ``redis-server`` is installed and
``--redis`` is given, else one directory, which Hypothesis's database reads the same way). *Apart*: each
shard keeps a database of its own, as separate machines without a shared store do. On the second night,
per shard and per finding, the summarizer calls made when the finding was first seen; then findings per
1,000 calls over the night. Printed per summarizer, with shared / apart ratios:

    python benchmarks/shared_database.py --shards 3 --examples 24

"median calls to one": for each distinct finding of the second night, the fewest calls a shard had made when
it first saw it (shards run side by side, each counting from its start), the median over findings. A ratio
below 1 there and above 1 on "findings per 1,000 calls" is what sharing buys.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness._app.running import _run  # noqa: E402
from harness._app.running._options import RunConfig  # noqa: E402

SUMMARIZERS = ("harness.summarizers.naive:tail", "harness.summarizers.example:summarize",
               "harness.summarizers.mutants:drops_gating_field")


def _first_seen_calls(config: RunConfig) -> tuple[dict, int, int]:
    """Run ``config``; per root cause, the calls made when it was first seen; the run's calls; its findings."""
    seen: dict = {}
    original = _run._Found.add

    def add(found, transcript, ev, calls=0, **kw):
        known = set(found.first_seen)
        judged = original(found, transcript, ev, calls, **kw)
        for signature in set(found.first_seen) - known:
            seen[signature] = found.calls
        return judged

    _run._Found.add = add
    try:
        result = _run.run(config)
    finally:
        _run._Found.add = original
    return seen, result.summarizer_calls, len(result.failures)


def _night(spec: str, seed: int, shards: int, examples: int, databases: list[str]) -> tuple[list[int], int, set]:
    """One night: (for each of its distinct findings, the fewest calls a shard had made when it first saw it;
    the night's calls; its distinct findings). The shards run side by side: each one's calls count from its
    own start."""
    to_finding: dict = {}
    calls = 0
    for k in range(shards):
        config = RunConfig.of(spec, examples=examples, seed=seed, max_turns=200, quiet=True, isolation="inline",
                              shard=(k + 1, shards), database=databases[k])
        seen, spent, _ = _first_seen_calls(config)
        for signature, at in seen.items():
            to_finding[signature] = min(at, to_finding.get(signature, at))
        calls += spent
    return list(to_finding.values()), calls, set(to_finding)


def _redis(directory: Path) -> tuple[subprocess.Popen, str] | None:
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                "--dir", str(directory)], stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    return process, f"redis://127.0.0.1:{port}/0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--examples", type=int, default=24, help="examples of each night's seed, over all shards")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--redis", action="store_true", help="share through a real redis-server (started here)")
    parser.add_argument("--summarizer", action="append", help="instead of the bundled list (repeatable)")
    args = parser.parse_args()
    print(f"{'summarizer':42}{'setup':>8}{'night-2 calls':>15}{'findings':>10}{'median calls to one':>21}"
          f"{'per 1,000 calls':>17}")
    for spec in args.summarizer or SUMMARIZERS:
        rows = {}
        with tempfile.TemporaryDirectory() as tmp:
            server = _redis(Path(tmp)) if args.redis else None
            try:
                shared = server[1] if server else str(Path(tmp) / "shared")
                setups = {"shared": [shared] * args.shards,
                          "apart": [str(Path(tmp) / f"apart-{k}") for k in range(args.shards)]}
                for name, databases in setups.items():
                    _night(spec, args.seed, args.shards, args.examples, databases)  # night 1 fills the databases
                    to_finding, calls, findings = _night(spec, args.seed + 1, args.shards, args.examples, databases)
                    median = statistics.median(to_finding) if to_finding else float("nan")
                    rows[name] = (calls, len(findings), median, 1000 * len(findings) / calls if calls else 0.0)
                    print(f"{spec:42}{name:>8}{calls:>15}{len(findings):>10}{median:>21.1f}{rows[name][3]:>17.2f}")
            finally:
                if server:
                    server[0].kill()
        (c1, f1, m1, r1), (c0, f0, m0, r0) = rows["shared"], rows["apart"]
        print(f"{spec:42}{'ratio':>8}{c1 / c0:>15.2f}{(f1 / f0 if f0 else float('nan')):>10.2f}"
              f"{(m1 / m0 if m0 else float('nan')):>21.2f}{(r1 / r0 if r0 else float('nan')):>17.2f}")
        print()


if __name__ == "__main__":
    main()
