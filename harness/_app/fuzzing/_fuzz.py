"""The ``fuzz`` command: coverage-guided search of a Python summarizer's own branches with atheris.

``run`` explores the transcripts our strategies think likely; ``fuzz`` lets libFuzzer mutate the
byte strings Hypothesis reads its choices from, keeping every input that reaches a branch of the
team's code no earlier input reached. The fuzzing happens in child processes (``_fuzz_child``),
because libFuzzer owns its process and ends it with C's ``exit()``; they write what they find as
files, and this process shrinks, reports and saves it the way ``run`` does.

Layout of a fuzz directory (``--fuzz-dir``, by default ``DIR.fuzz/SLUG`` beside ``--corpus DIR``,
else ``.compaction-harness/fuzz/SLUG``; SLUG names the summarizer)::

    inputs/     libFuzzer's corpus: byte strings, kept between runs (Hypothesis choices for our strategies)
    failures/   each minimal failure of the last run, as a corpus entry: ``compaction-harness shrink FILE``
    crashes/    libFuzzer's artifacts when the summarizer killed or hung the fuzzing process
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import random
import re
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness._base._codec import transcript_from_dict
from harness._base._errors import InvalidArgument, SchemaError
from harness._base._files import output_dir, read_json_file
from harness._app.calling._summarizer import ADAPTERS
from harness._app.corpus._entries import CorpusEntry, now, save_entry
from harness._app.fuzzing._process import FuzzProcess, crash_report, why_it_ended
from harness._app._outcome import Stop, StopReason
from harness._app._progress import Progress
from harness._app.running._exploration import QUICK_MAX_WINDOWS, dense_skeletons, session_sizes
from harness._app.running._options import RunConfig
from harness._app.running._results import Failure, InfraFailure, RunResult
from harness._app.running._run import Explored, shrink_transcripts
from harness.oracles import select
from harness.strategies import Background
from harness import __version__

__all__ = ["FuzzConfig", "FuzzStats", "FuzzResult", "fuzz", "merge_inputs", "fuzz_directory", "fuzz_strategy",
           "CONFIG_ENV", "FUZZ_CACHE_ENTRIES", "DEFAULT_FUZZ_TIME", "DEFAULT_FUZZ_MAX_TURNS"]

#: The environment variable handing a fuzzing process its configuration (JSON).
CONFIG_ENV = "COMPACTION_HARNESS_FUZZ"
#: Answers a fuzzing process keeps in its call cache: fuzzing runs for hours, memory must stay bounded.
FUZZ_CACHE_ENTRIES = 4096
#: Seconds of fuzzing when neither --max-time nor --runs is given.
DEFAULT_FUZZ_TIME = 60.0
#: Fuzzing wants many cheap executions: short, fact-dense transcripts (--max-turns raises it).
DEFAULT_FUZZ_MAX_TURNS = 80
#: The largest input libFuzzer builds, in bytes. A transcript's skeleton reads about a hundred bytes of
#: choices (the turns' text is derived from them), so this leaves ample room.
MAX_INPUT_BYTES = 4096
#: Random inputs written as a starting point when the corpus is empty (Hypothesis needs enough bytes to
#: build a transcript at all; libFuzzer alone would start from an empty input and grow it slowly).
SEED_INPUTS = 16
#: Bytes of each of those: a little more than a skeleton reads.
SEED_BYTES = 256
#: Times a fuzzing process killed or hung by the summarizer is started again before fuzzing stops.
MAX_RESTARTS = 5


def fuzz_strategy(config: RunConfig, background: Background | None = None):
    """What a fuzzing process generates: fact-dense sessions of at most two windows and ``--max-turns`` turns
    (see ``DEFAULT_FUZZ_MAX_TURNS``), over ``background`` (``--background``) where one is given."""
    sizes = session_sizes(config.generation, config.judging, max_windows=QUICK_MAX_WINDOWS)
    return dense_skeletons(sizes, background)


@dataclass(frozen=True, slots=True)
class FuzzConfig:
    """A fuzzing session: the run's options plus libFuzzer's bounds and where its files go."""

    run: RunConfig
    max_time: float | None = DEFAULT_FUZZ_TIME  # seconds of fuzzing (shrinking comes after, within --shrink-calls)
    runs: int | None = None  # executions per fuzzing process
    jobs: int = 1  # fuzzing processes sharing one corpus
    directory: str | None = None  # the fuzz directory (see the module docstring); None: the default
    corpus: str | None = None  # the regression corpus: decides the default fuzz directory
    libfuzzer_args: tuple[str, ...] = ()  # passed through (after "--" on the command line)


@dataclass(frozen=True, slots=True)
class FuzzStats:
    """What the fuzzing part did: libFuzzer's counters and ours."""

    executions: int = 0  # inputs libFuzzer ran
    examples: int = 0  # of those, the ones Hypothesis turned into a transcript that was judged
    calls: int = 0  # new summarizer calls while fuzzing (cache hits not counted)
    seconds: float = 0.0
    coverage: int = 0  # libFuzzer's "cov": edges of the team's code reached
    features: int = 0  # libFuzzer's "ft"
    inputs: int = 0  # inputs in the corpus at the end
    first_failure_calls: int | None = None  # summarizer calls made when the first violation was seen
    first_failure_executions: int | None = None
    restarts: int = 0
    directory: str = ""

    @property
    def per_second(self) -> float:
        return self.executions / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class FuzzResult:
    """The fuzzing counters and the shrunk, reported result (a ``RunResult``, exactly as ``run`` makes one)."""

    stats: FuzzStats
    run: RunResult

    @property
    def exit_code(self) -> int:
        return self.run.exit_code


def check_fuzzable(spec: str) -> None:
    """A clear error before any work: atheris missing, or a summarizer whose code is not in this Python."""
    for prefix in ADAPTERS:
        if spec.startswith(prefix):
            raise InvalidArgument(
                f"--summarizer {spec!r}: fuzz needs a Python summarizer (module:function or path/to/file.py:function), "
                f"whose branches it can see; for {prefix} summarizers use 'compaction-harness run'")
    if importlib.util.find_spec("atheris") is None:
        raise InvalidArgument("fuzz needs atheris: pip install 'compaction-harness[fuzz]' (Linux or macOS, "
                              "CPython 3.8 to 3.11)")


def fuzz_directory(spec: str, *, corpus: str | None = None, explicit: str | None = None) -> Path:
    """Where a summarizer's fuzz files live (see the module docstring)."""
    if explicit:
        return Path(explicit)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", spec).strip("-.")[:60]
    slug = f"{slug}-{hashlib.sha256(spec.encode()).hexdigest()[:8]}"
    base = Path(f"{Path(corpus)}.fuzz") if corpus else Path(".compaction-harness") / "fuzz"
    return base / slug


def config_to_json(config: RunConfig) -> dict:
    return config.to_dict()


def config_from_json(data: dict) -> RunConfig:
    return RunConfig.from_dict(data)


def _entry_script(directory: Path) -> Path:
    """The executable libFuzzer starts (and starts again for -merge and -fork): this Python, our child main."""
    path = directory / "compaction-harness-fuzz"
    path.write_text(f"#!{sys.executable}\n# Written by compaction-harness fuzz; runs one fuzzing process.\n"
                    f"from harness._app.fuzzing._child import main\nmain()\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def _seed_inputs(directory: Path, seed: int) -> None:
    rng = random.Random(seed)
    for n in range(SEED_INPUTS):
        (directory / f"seed-{n}").write_bytes(rng.randbytes(SEED_BYTES))


class _Session:
    """The fuzzing processes of one run: started, watched, started again after a crash, counted."""

    def __init__(self, config: FuzzConfig, run_config: RunConfig, home: Path, work: Path):
        self.config, self.run_config, self.home = config, run_config, home
        self.inputs = output_dir(home / "inputs", option="--fuzz-dir")
        self.crashes = output_dir(home / "crashes", option="--fuzz-dir")
        self.findings = output_dir(work / "findings", option="fuzz work directory")
        self.seeds = output_dir(work / "seeds", option="fuzz work directory")
        if not any(self.inputs.iterdir()):
            _seed_inputs(self.seeds, run_config.generation.seed)
        self.entry = _entry_script(work)
        child_config = run_config.but(isolation="inline", quiet=True)
        max_calls = run_config.limits.max_calls
        per_child_calls = -(-max_calls // config.jobs) if max_calls else None
        self.env = dict(os.environ, **{CONFIG_ENV: json.dumps({"run": config_to_json(child_config),
                                                               "findings": str(self.findings),
                                                               "max_calls": per_child_calls})})
        self.started = time.monotonic()
        self.deadline = self.started + config.max_time if config.max_time else None
        self.running: list[FuzzProcess] = []
        self.ended: list[FuzzProcess] = []
        self.restarts = 0
        self.infra: list[InfraFailure] = []
        self.interrupted = False

    def _argv(self, index: int, generation: int) -> list[str]:
        seed = (self.run_config.generation.seed + 7919 * generation + index) % 2_147_483_646 + 1  # libFuzzer: 0 is random
        args = [str(self.entry), str(self.inputs), str(self.seeds), f"-seed={seed}", f"-max_len={MAX_INPUT_BYTES}",
                f"-timeout={max(1, int(self.run_config.calling.timeout))}", f"-artifact_prefix={self.crashes}{os.sep}",
                "-print_final_stats=1",
                # One process: nobody else adds inputs, and re-reading the corpus on a timer would make a
                # seeded session depend on the machine's speed. Several processes share what they find.
                f"-reload={int(self.config.jobs > 1)}",
                # New edges only, not new hit counts: a summarizer's loops run as often as a transcript is
                # long, and keeping an input per count fills the corpus with inputs that differ only in
                # length, so the few that reached a new branch are picked for mutation more rarely.
                "-use_counters=0"]
        if self.deadline is not None:
            args.append(f"-max_total_time={max(1, round(self.deadline - time.monotonic()))}")
        if self.config.runs is not None:
            args.append(f"-runs={self.config.runs}")
        return args + list(self.config.libfuzzer_args)

    def run(self, progress: Progress) -> None:
        """Until every process has ended; an interrupt stops them and keeps what they found."""
        self.running = [FuzzProcess(i, self._argv(i, 0), self.env) for i in range(self.config.jobs)]
        try:
            while self.running:
                time.sleep(0.2)
                for child in [c for c in self.running if c.proc.poll() is not None]:
                    self._ended(child)
                self._show(progress)
        except KeyboardInterrupt:
            self.interrupted = True
        finally:
            for child in self.running:
                child.stop()
                self.ended.append(child)
            self.running = []
        progress.finish()

    def _ended(self, child: FuzzProcess) -> None:
        """A process ended: by its bounds, or killed or hung by the summarizer (then started again)."""
        code = child.wait()
        self.running.remove(child)
        self.ended.append(child)
        if code == 0:
            return
        kind, message = why_it_ended(child)
        if kind == "internal":
            raise RuntimeError(message)
        self.infra.append(InfraFailure(kind, message, len(self.infra) + 1, crash_report(child)))
        time_left = self.deadline is None or time.monotonic() < self.deadline - 1
        if time_left and self.restarts < MAX_RESTARTS and not self.run_config.limits.stop_on_error:
            self.restarts += 1
            self.running.append(FuzzProcess(child.index, self._argv(child.index, self.restarts), self.env))

    def _show(self, progress: Progress) -> None:
        every = self.running + self.ended
        counters = _counters(self.findings)
        progress.done = min(progress.total, int(time.monotonic() - self.started) if self.config.max_time
                            else counters["executions"])
        progress.show(f"· {sum(c.executions for c in every):,} executions · {counters['calls']:,} calls · "
                      f"cov {max((c.coverage for c in every), default=0)} · "
                      f"{len(_finding_keys(self.findings))} failures")

    def stats(self) -> FuzzStats:
        """libFuzzer's counters and ours, summed over the processes."""
        counters = _counters(self.findings)
        return FuzzStats(
            executions=sum(c.done_runs or c.executions for c in self.ended), examples=counters["executions"],
            calls=counters["calls"], seconds=time.monotonic() - self.started,
            coverage=max((c.coverage for c in self.ended), default=0),
            features=max((c.features for c in self.ended), default=0),
            inputs=sum(1 for p in self.inputs.iterdir() if p.is_file()),
            first_failure_calls=counters["first_calls"], first_failure_executions=counters["first_executions"],
            restarts=self.restarts, directory=str(self.home))


def fuzz(config: FuzzConfig, *, on_failure=None) -> FuzzResult:
    """Fuzz, then shrink and report every distinct failure found (``on_failure`` as for ``run``)."""
    summarizer = config.run.calling.summarizer
    check_fuzzable(summarizer)
    seed = config.run.generation.seed if config.run.generation.seed is not None else secrets.randbits(32)
    run_config = config.run.but(seed=seed)
    home = output_dir(fuzz_directory(summarizer, corpus=config.corpus, explicit=config.directory), option="--fuzz-dir")
    progress = Progress(int(config.max_time) if config.max_time else (config.runs or 1) * config.jobs,
                        label="fuzzing", quiet=run_config.quiet)
    with tempfile.TemporaryDirectory(prefix="compaction-harness-fuzz-") as work:
        session = _Session(config, run_config, home, Path(work))
        session.run(progress)
        stats = session.stats()
        found = _read_findings(session.findings)
    infra = list(session.infra)
    for doc in found:
        if doc["infra"] is not None:
            infra.append(InfraFailure(doc["infra"]["kind"], doc["infra"]["message"], len(infra) + 1,
                                      doc["infra"].get("output") or ""))
    transcripts = tuple(transcript_from_dict(doc["transcript"], source="fuzz finding") for doc in found
                        if doc["infra"] is None)
    failures_dir = output_dir(home / "failures", option="--fuzz-dir")
    for stale in failures_dir.glob("*.json"):  # failures/ holds the last run's
        stale.unlink()
    explored = Explored(
        examples=stats.examples, executions=stats.executions, calls=stats.calls,
        first_failure_calls=stats.first_failure_calls, infra=tuple(infra),
        stop=Stop(StopReason.INTERRUPTED) if session.interrupted else None,
        seen=frozenset(tuple(doc["key"]) for doc in found if doc["infra"] is None),
        unjudged=_unjudged(run_config))
    files: dict = {}

    def keep(failure: Failure, protocol: str) -> None:
        """Each minimal failure is also written to ``failures/``, for its reproduce line."""
        entry = CorpusEntry(failure.invariant, failure.fact_kind, summarizer, protocol, failure.budget,
                            failure.transcript, __version__, now(), failure.detail, failure.trials)
        files[failure.signature] = str(save_entry(entry, failures_dir)[0])
        if on_failure is not None:
            on_failure(failure, protocol)

    result = shrink_transcripts(transcripts, run_config, on_failure=keep, explored=explored)
    return FuzzResult(stats, dataclasses.replace(result, reproduce_files=files))


def _unjudged(config: RunConfig) -> tuple[tuple[str, str], ...]:
    """What fuzzing never judges, said in the report rather than left to look like a pass."""
    if "deterministic" not in {o.id for o in select(only=config.judging.only, skip=config.judging.skip)}:
        return ()
    return (("deterministic", "fuzzing asks each input once, in the fuzzing process; `compaction-harness run` asks "
                              "requests again in a restarted worker"),)


def _counters(findings: Path) -> dict:
    """Executions and calls summed over the fuzzing processes; the first failure's calls (the earliest process's)."""
    total = {"executions": 0, "calls": 0, "first_calls": None, "first_executions": None, "protocol": None}
    for path in findings.glob("stats-*.json"):
        try:
            data = json.loads(path.read_bytes().decode("utf-8", "replace").strip() or "{}")
        except ValueError:
            continue  # being rewritten this instant
        total["executions"] += data.get("executions", 0)
        total["calls"] += data.get("calls", 0)
        total["protocol"] = total["protocol"] or data.get("protocol")
        first = data.get("first")
        if first and (total["first_calls"] is None or first["calls"] < total["first_calls"]):
            total["first_calls"], total["first_executions"] = first["calls"], first["executions"]
    return total


def _finding_keys(findings: Path) -> set[str]:
    return {p.name.split("-", 1)[1] for p in findings.glob("*.json") if not p.name.startswith(("stats-", "."))}


def _read_findings(findings: Path) -> list[dict]:
    """The smallest finding per key over every fuzzing process, in a stable order."""
    best: dict[str, dict] = {}
    for path in sorted(findings.glob("*.json")):
        if path.name.startswith(("stats-", ".")):
            continue
        try:
            doc = read_json_file(path)
        except SchemaError:
            continue
        key = json.dumps(doc["key"])
        turns = len(doc["transcript"]["turns"])
        if key not in best or turns < len(best[key]["transcript"]["turns"]):
            best[key] = doc
    return [best[k] for k in sorted(best)]


def merge_inputs(config: FuzzConfig, sources: list[str]) -> tuple[int, int]:
    """libFuzzer's ``-merge=1``: add to the fuzz corpus the inputs of ``sources`` that reach new coverage.

    Returns (inputs before, inputs after).
    """
    check_fuzzable(config.run.calling.summarizer)
    home = output_dir(fuzz_directory(config.run.calling.summarizer, corpus=config.corpus, explicit=config.directory),
                      option="--fuzz-dir")
    inputs = output_dir(home / "inputs", option="--fuzz-dir")
    for source in sources:
        if not Path(source).is_dir():
            raise InvalidArgument(f"--merge {source!r}: expected a directory of fuzz inputs")
    before = sum(1 for p in inputs.iterdir() if p.is_file())
    with tempfile.TemporaryDirectory(prefix="compaction-harness-merge-") as work:
        work = Path(work)
        findings = output_dir(work / "findings", option="fuzz work directory")
        child_config = config.run.but(isolation="inline", quiet=True)
        env = dict(os.environ, **{CONFIG_ENV: json.dumps({"run": config_to_json(child_config),
                                                          "findings": str(findings), "max_calls": None})})
        argv = [str(_entry_script(work)), "-merge=1", f"-max_len={MAX_INPUT_BYTES}",
                f"-merge_control_file={work / 'merge-control'}", str(inputs.resolve()),
                *(str(Path(source).resolve()) for source in sources), *config.libfuzzer_args]  # libFuzzer runs in work
        done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              errors="replace", cwd=work)
        if done.returncode != 0:
            raise InvalidArgument("libFuzzer's merge failed:\n" + "\n".join(done.stderr.splitlines()[-15:]))
    return before, sum(1 for p in inputs.iterdir() if p.is_file())
