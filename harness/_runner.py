"""The main job: generate transcripts, run sessions, collect, shrink and report failures.

Hypothesis drives generation and shrinks the skeleton of whichever failure it
is chasing; every distinct failure (one per invariant and fact kind) is then
reduced further by the domain minimizer through the call cache.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import secrets
import statistics
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, find, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import NoSuchExample, Unsatisfiable

from harness._adapters import InfraError, Summarizer
from harness._minimize import minimize
from harness._model import Transcript
from harness._progress import Progress
from harness._protocol import result_to_dict
from harness._session import SessionConfig, run_session
from harness._tokens import count_tokens

__all__ = ["RunConfig", "Failure", "InfraFailure", "RunResult", "Evaluation", "evaluate", "run", "shrink_transcript"]


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything a run depends on; the seed makes it reproducible."""

    summarizer: str
    protocol: str = "messages"
    examples: int = 50
    seed: int | None = None
    min_turns: int = 20
    max_turns: int = 400
    budget: int = 2000
    trigger: float = 0.8
    only: tuple[str, ...] | None = None
    skip: tuple[str, ...] = ()
    timeout: float = 30.0
    isolation: str = "process"
    stop_on_error: bool = False
    cache_dir: str | None = None
    quiet: bool = False
    token_counter: str | None = None  # module:function, str -> int; default harness.count_tokens
    database: str | None = None  # a Hypothesis example database directory: each failure's shrunk example is kept


@dataclass(frozen=True, slots=True)
class Failure:
    """One distinct minimal failure, ready to report."""

    invariant: str
    severity: str
    fact_kind: str | None
    fact_id: str | None
    detail: str
    expected: str | None
    found: str | None
    transcript: Transcript
    round: int | None
    boundary: int | None
    context: dict[str, Any] | None
    original_turns: int
    shrink_checks: int
    shrink_calls: int = 0

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.invariant, self.fact_kind)


@dataclass(frozen=True, slots=True)
class InfraFailure:
    kind: str
    message: str
    example: int


@dataclass(frozen=True)
class RunResult:
    config: RunConfig
    seed: int
    examples_run: int
    summarizer_calls: int
    cache_hits: int
    failures: tuple[Failure, ...]
    degradations: dict[str, int]
    infra_errors: tuple[InfraFailure, ...]
    turns: tuple[int, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        if self.failures:
            return 1
        return 3 if self.infra_errors else 0


@dataclass
class Evaluation:
    """What one transcript's session showed: findings by key, where, and any infra error."""

    violations: dict[tuple[str, str | None], tuple[Any, int, int, dict[str, Any]]] = field(default_factory=dict)
    degradations: list[str] = field(default_factory=list)
    infra: InfraError | None = None
    boundaries: tuple[int, ...] = ()


def evaluate(transcript: Transcript, summarizer: Summarizer, config: RunConfig, chosen) -> Evaluation:
    """Run one session and judge every round, plus the session as a whole."""
    from oracles import Case, SessionCase, check, check_session

    ev = Evaluation()
    counter = _counter(config.token_counter)
    session = SessionConfig(budget=config.budget, trigger=config.trigger, count_tokens=counter)
    try:
        rounds = run_session(transcript, summarizer, session)
    except InfraError as exc:
        ev.infra = exc
        return ev
    ev.boundaries = tuple(r.boundary for r in rounds)
    for rnd in rounds:
        verdict = check(Case(transcript, rnd.boundary, config.budget, rnd.result, count_tokens=counter), chosen)
        for finding in verdict.findings:
            if finding.severity.value == "degrade":
                ev.degradations.append(finding.invariant)
                continue
            key = (finding.invariant, finding.fact_kind)
            ev.violations.setdefault(key, (finding, rnd.index, rnd.boundary, result_to_dict(rnd.result)))
    session_case = SessionCase(transcript, config.budget, tuple((r.boundary, r.result) for r in rounds), counter)
    for finding in check_session(session_case, chosen):
        ev.violations.setdefault((finding.invariant, None), (finding, None, None, None))
    return ev


@functools.lru_cache(maxsize=8)
def _counter(spec: str | None):
    if spec is None:
        return count_tokens
    from harness._adapters import load_callable

    return load_callable(spec, option="--token-counter")


class _StopRun(Exception):
    """Raised out of exploration when the user asked to stop at the first infra error."""


def _skeletons(config: RunConfig):
    from strategies import skeletons

    low = min(config.min_turns, config.max_turns)
    return skeletons(min_turns=low, max_turns=config.max_turns, max_facts=8)


def _hypothesis_settings(examples: int, phases, database: str | None = None) -> settings:
    db = DirectoryBasedExampleDatabase(database) if database else None
    if db is not None:
        phases = [Phase.reuse, *phases]
    return settings(max_examples=examples, database=db, deadline=None, derandomize=False, phases=phases,
                    verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck), print_blob=False)


def _shrink(transcript: Transcript, key, summarizer: Summarizer, config: RunConfig, chosen,
            progress: Progress | None) -> tuple[Transcript, int]:
    # Pin compaction where it fired, so removing filler does not stop the budget trigger from firing.
    fired = evaluate(transcript, summarizer, config, chosen).boundaries
    pinned = dataclasses.replace(transcript, compaction_points=tuple(sorted(set(fired) | set(transcript.compaction_points))))
    if key in evaluate(pinned, summarizer, config, chosen).violations:
        transcript = pinned

    def still_fails(candidate: Transcript) -> bool:
        return key in evaluate(candidate, summarizer, config, chosen).violations

    def note(checks: int, turns: int) -> None:
        if progress is not None and checks % 10 == 0:
            progress.show(f"· {key[0]}: {turns} turns after {checks} checks")

    return minimize(transcript, still_fails, on_check=note)


def _failure_from(transcript: Transcript, key, summarizer, config, chosen, original: int, checks: int) -> Failure:
    ev = evaluate(transcript, summarizer, config, chosen)
    finding, rnd, boundary, context = ev.violations[key]
    return Failure(finding.invariant, finding.severity.value, finding.fact_kind, finding.fact_id, finding.detail,
                   finding.expected, finding.found, transcript, rnd, boundary, context, original, checks)


def run(config: RunConfig) -> RunResult:
    """The ``run`` command as a function: returns everything the report needs.

    Three passes, all reproducible from the seed: explore ``examples``
    transcripts; for each distinct failure, let Hypothesis regenerate the same
    sequence (same seed) and shrink the skeleton of its first occurrence; then
    delta-debug the expanded transcript's turns.
    """
    from strategies import expand
    from oracles import select

    chosen = select(only=config.only, skip=config.skip)
    run_seed = config.seed if config.seed is not None else secrets.randbits(32)
    progress = Progress(config.examples, label="examples", quiet=config.quiet)
    first_seen: dict[tuple[str, str | None], Transcript] = {}
    infra: list[InfraFailure] = []
    degradations: dict[str, int] = {}
    turns: list[int] = []
    strategy = _skeletons(config)

    with Summarizer(config.summarizer, protocol=config.protocol, timeout=config.timeout,
                    isolation=config.isolation, cache=_cache(config)) as summarizer:

        def explore(skeleton) -> bool:
            transcript = expand(skeleton)
            ev = evaluate(transcript, summarizer, config, chosen)
            turns.append(len(transcript.turns))
            for inv in ev.degradations:
                degradations[inv] = degradations.get(inv, 0) + 1
            if ev.infra is not None:
                infra.append(InfraFailure(ev.infra.kind, ev.infra.message, len(turns)))
            for key in ev.violations:
                first_seen.setdefault(key, transcript)
            progress.advance(f"· {len(first_seen)} failures · {len(infra)} infra errors")
            if ev.infra is not None and config.stop_on_error:
                raise _StopRun
            return False

        try:
            find(strategy, explore, settings=_hypothesis_settings(config.examples, [Phase.generate]),
                 random=random.Random(run_seed))
        except (NoSuchExample, Unsatisfiable, _StopRun):
            pass
        progress.finish()

        failures = []
        for n, (key, first) in enumerate(sorted(first_seen.items(), key=lambda kv: str(kv[0])), 1):
            calls_before = summarizer.calls
            progress.message(f"shrinking failure {n}/{len(first_seen)}: {key[0]} ({key[1] or 'no fact'}), "
                             f"first seen in {len(first.turns)} turns")
            try:
                skeleton = find(strategy, lambda sk: key in evaluate(expand(sk), summarizer, config, chosen).violations,
                                settings=_hypothesis_settings(config.examples, [Phase.generate, Phase.shrink],
                                                              config.database),
                                # Hypothesis never saves seeded runs; with a database the shrink pass is
                                # unseeded, replays what earlier runs shrank, and falls back to ``first``.
                                random=None if config.database else random.Random(run_seed),
                                database_key=f"compaction-harness|{config.summarizer}|{key}".encode())
                start = expand(skeleton)
            except (NoSuchExample, Unsatisfiable):
                start = first  # a flaky summarizer: shrink what we saw
            if len(first.turns) < len(start.turns):
                start = first
            minimal, checks = _shrink(start, key, summarizer, config, chosen, None if config.quiet else progress)
            failures.append(dataclasses.replace(
                _failure_from(minimal, key, summarizer, config, chosen, len(first.turns), checks),
                shrink_calls=summarizer.calls - calls_before))
        progress.finish()
        calls, hits = summarizer.calls, summarizer.cache.hits

    return RunResult(config, run_seed, len(turns), calls, hits, tuple(failures), degradations, tuple(infra),
                     tuple(turns))


def shrink_transcript(transcript: Transcript, config: RunConfig) -> RunResult:
    """The ``shrink`` command: minimize every distinct failure of one given transcript."""
    from oracles import select

    chosen = select(only=config.only, skip=config.skip)
    with Summarizer(config.summarizer, protocol=config.protocol, timeout=config.timeout,
                    isolation=config.isolation, cache=_cache(config)) as summarizer:
        ev = evaluate(transcript, summarizer, config, chosen)
        infra = (InfraFailure(ev.infra.kind, ev.infra.message, 1),) if ev.infra else ()
        progress = Progress(1, label="shrinking", quiet=config.quiet)
        failures = []
        for key in sorted(ev.violations, key=str):
            calls_before = summarizer.calls
            minimal, checks = _shrink(transcript, key, summarizer, config, chosen, progress)
            failures.append(dataclasses.replace(
                _failure_from(minimal, key, summarizer, config, chosen, len(transcript.turns), checks),
                shrink_calls=summarizer.calls - calls_before))
        progress.finish()
        return RunResult(config, config.seed or 0, 1, summarizer.calls, summarizer.cache.hits, tuple(failures),
                         {}, infra, (len(transcript.turns),))


def _cache(config: RunConfig):
    from harness._adapters import CallCache

    return CallCache(config.cache_dir)


def turn_stats(turns: tuple[int, ...]) -> str:
    if not turns:
        return "no examples"
    return f"{len(turns)} transcripts, {statistics.median(turns):.0f} turns median, {max(turns)} max"
