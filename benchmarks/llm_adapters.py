"""What --jobs buys against a model behind an API, and what each adapter costs per call.

Part 1 runs the correct compactor behind the OpenAI-compatible stub (tests/_stubs.py, in its
own process so its CPU does not compete with the harness) answering after --latency seconds,
and prints examples per second at --jobs 1, 2, 4, 8 as the speed-up over --jobs 1 in the same run.

Part 2 sends the same distinct requests through every adapter to a summarizer that answers at
once, and prints the harness's overhead per call: the time per call through the adapter minus
the time of calling the function directly in this process (the baseline, measured in this run).

    python benchmarks/llm_adapters.py [--examples 80] [--latency 0.05] [--max-turns 400]
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness._app.calling._options import CallOptions  # noqa: E402
from harness._app.calling._summarizer import Summarizer  # noqa: E402
from harness._app.running._options import RunConfig  # noqa: E402
from harness._app.running._run import run  # noqa: E402
from hypothesis import HealthCheck, Phase, find, settings  # noqa: E402

from harness._app.judging._session import run_session  # noqa: E402
from harness._base._protocol import CompactionRequest  # noqa: E402
from harness.summarizers import prose  # noqa: E402
from harness.strategies import transcripts  # noqa: E402
from tests._stubs import openai_stub, wire_stub  # noqa: E402

CORRECT = "harness.summarizers.prose:summarize"


@contextlib.contextmanager
def stub_process(kind: str, latency: float):
    """The stub in a process of its own; yields its base URL."""
    process = subprocess.Popen([sys.executable, "-m", "tests._stubs", kind, "--summarizer", CORRECT,
                                "--latency", str(latency)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def jobs_speedup(examples: int, latency: float, max_turns: int) -> None:
    print(f"part 1: {examples} examples, correct compactor behind the OpenAI stub answering after "
          f"{latency * 1000:.0f} ms")
    with stub_process("openai", latency) as url:
        base = None
        for jobs in (1, 2, 4, 8):
            config = RunConfig.of("openai:bench", base_url=url + "/v1", protocol="rich", examples=examples,
                               max_turns=max_turns, seed=0, quiet=True, jobs=jobs, trials=0)
            start = time.perf_counter()
            result = run(config)
            elapsed = time.perf_counter() - start
            rate = result.examples_run / elapsed
            base = base or rate
            print(f"  --jobs {jobs}: {rate:6.2f} examples/s ({result.stats.calls} calls, {elapsed:5.1f} s)  "
                  f"speed-up {rate / base:4.1f}x")


def _requests(n: int) -> list[CompactionRequest]:
    """The requests real sessions make: generated transcripts streamed through the correct compactor."""
    out: list[CompactionRequest] = []

    def session(transcript) -> bool:
        def record(request: CompactionRequest):
            out.append(request)
            return prose.summarize(request)
        run_session(transcript, record)
        return len(out) >= n

    find(transcripts(min_turns=100, max_turns=300), session,
         settings=settings(max_examples=10_000, derandomize=True, database=None, phases=[Phase.generate],
                           suppress_health_check=list(HealthCheck), deadline=None))
    return out[:n]


def adapter_overhead(calls: int) -> None:
    print(f"part 2: harness overhead per call, {calls} distinct requests, a summarizer answering at once")
    requests = _requests(calls)
    start = time.perf_counter()
    for request in requests:
        prose.summarize(request)
    direct = (time.perf_counter() - start) / calls
    print(f"  baseline, the function called directly: {direct * 1e6:8.0f} µs per call")

    def measure(name: str, spec: str, **options) -> None:
        with Summarizer(CallOptions(spec, protocol="rich", **options)) as summarizer:
            summarizer(requests[0])  # started and warm
            start = time.perf_counter()
            for request in requests[1:]:
                summarizer(request)
            per_call = (time.perf_counter() - start) / (calls - 1)
        print(f"  {name:34} {per_call * 1e6:8.0f} µs per call, overhead {(per_call - direct) * 1e6:8.0f} µs "
              f"({per_call / direct:5.1f}x the direct call)")

    measure("python, inline", CORRECT, isolation="inline")
    measure("python, worker process", CORRECT)
    measure("cmd: (a Python line server)", f"cmd:{sys.executable} {ROOT / 'tests/fixtures/line_server.py'} {CORRECT}")
    with wire_stub(prose.summarize) as server:
        measure("http:// (stub in this process)", server.url)
    with openai_stub(prose.summarize) as api:
        measure("openai: (stub in this process)", "openai:bench", base_url=api.url + "/v1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=80)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--max-turns", type=int, default=400, help="run's --max-turns (default 400, as run's default)")
    args = parser.parse_args()
    jobs_speedup(args.examples, args.latency, args.max_turns)
    adapter_overhead(args.calls)


if __name__ == "__main__":
    main()
