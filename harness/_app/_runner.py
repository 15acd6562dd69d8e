"""The main job: generate transcripts, run sessions, collect, shrink and report failures.

Hypothesis drives generation; every distinct failure (one per invariant and
fact kind) is then reduced by the domain minimizer through the call cache.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
import secrets
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, find, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import NoSuchExample, Unsatisfiable

from harness._base._calling import DEFAULT_MAX_RESULT_CHARS
from harness._base._errors import InfraError, InvalidArgument
from harness._base._model import Transcript
from harness._base._protocol import CompactionRequest, CompactionResult
from harness._base._tokens import count_tokens
from harness._app._adapters import Summarizer
from harness._app._cache import CallCache
from harness._app._judging import Evaluation, StopJudging, Violation, judge_session
from harness._app._loading import load_callable, load_rules
from harness._app._shrinking import Shrinker
from harness._app._progress import Progress
from harness._app._redact import Redactor
from harness._app._worker import DEFAULT_LOAD_TIMEOUT
from oracles import DEFAULT_RULES, ProseRules, select
from harness._base._kinds import defined_kinds
from harness._base._model import FactKind, normalise_kind
from strategies import Background, load_background, skeletons
from strategies import expand as expand_skeleton


__all__ = ["RunConfig", "Failure", "InfraFailure", "RunResult", "Evaluation", "evaluate", "run", "shrink_transcript",
           "open_summarizer"]

#: The context budget in tokens when none is given.
DEFAULT_BUDGET = 2000
#: New summarizer calls one failure's shrinking may make before it reports the smallest transcript so far.
#: Most failures shrink in a few dozen (benchmarks/shrink_quality.py); this bounds the few that do not.
DEFAULT_SHRINK_CALLS = 400
#: Timeouts one failure's shrinking may meet before it stops (each costs a whole --timeout).
SHRINK_TIMEOUTS = 3
#: Exploration's first stage: this share of --examples, as transcripts of at most QUICK_MAX_TURNS turns
#: with at least three facts each (see _exploration).
QUICK_SHARE = 0.25
QUICK_MAX_TURNS = 80
#: With --database, the share of a failure's shrink calls the skeleton pass may spend: the rest is kept for ddmin,
#: which removes single turns (a skeleton never shrinks below the strategy's min_turns).
SKELETON_PASS_SHARE = 0.6


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything a run depends on; the seed makes it reproducible."""

    summarizer: str
    protocol: str | None = None  # None: the summarizer's declared protocol (harness._app._loading.resolve_protocol)
    examples: int = 50
    seed: int | None = None
    min_turns: int = 20
    max_turns: int = 400
    budget: int = DEFAULT_BUDGET
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
    max_time: float | None = None  # seconds for the whole run; then a partial report
    shrink_calls: int = DEFAULT_SHRINK_CALLS
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    summarizer_version: str | None = None  # replaces the code fingerprint in cache keys
    redact_env: tuple[str, ...] = ()  # more environment variables whose values never reach a file
    transcript_file: str | None = None  # set by ``shrink``: the file the reproduce command names
    rules: str | None = None  # module:OBJECT naming a team's oracles.ProseRules; default DEFAULT_RULES
    extend: tuple[str, ...] = ()  # modules imported first for the oracles they register (for the reproduce line)
    background: str | None = None  # a team's session logs used as the filler (strategies.load_background)


@dataclass(frozen=True, slots=True)
class Failure:
    """One distinct minimal failure, ready to report.

    ``shrink_stopped`` says why shrinking ended early (a budget, an interrupt),
    in which case ``transcript`` is the smallest failing one found until then.
    ``budget`` is the budget that transcript fails at; ``elided`` names its
    turns that are merged unrelated work, which a report shows as a token count.
    """

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
    shrink_stopped: str | None = None
    budget: int = DEFAULT_BUDGET  # the budget the minimal transcript fails at (shrinking may lower the run's)
    elided: tuple[tuple[int, int, int], ...] = ()  # merged filler: (turn index, source turns, tokens)

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.invariant, self.fact_kind)


@dataclass(frozen=True, slots=True)
class InfraFailure:
    """The summarizer failed on one example (``kind`` is one of ``INFRA_KINDS``)."""

    kind: str
    message: str
    example: int
    output: str = ""


@dataclass(frozen=True)
class RunResult:
    """Everything a report needs. ``incomplete`` says why not every example was judged, if so."""

    config: RunConfig
    seed: int
    protocol: str
    examples_run: int
    summarizer_calls: int
    cache_hits: int
    failures: tuple[Failure, ...]
    degradations: dict[str, int]
    infra_errors: tuple[InfraFailure, ...]
    turns: tuple[int, ...] = field(default=())
    incomplete: str | None = None
    cache_discarded: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    first_failure_calls: int | None = None  # summarizer calls made when the first violation was seen

    @property
    def exit_code(self) -> int:
        """1 violations; 3 the summarizer failed; 4 not every example was judged; 0 only when all were, cleanly."""
        if self.failures:
            return 1
        if self.infra_errors:
            return 3
        return 4 if self.incomplete else 0


def kind_warnings(oracles) -> tuple[str, ...]:
    """What a run cannot judge about a team's kinds: never generated, or judged by no selected oracle.

    Built-in kinds are left out: ``--only`` narrowing to one oracle is a choice, not an oversight.
    """
    selected = {o.id for o in oracles}
    out = []
    for definition in defined_kinds():
        if isinstance(normalise_kind(definition.name, "kind"), FactKind) or not definition.placed:
            continue
        if definition.generator is None:  # a team's kind brings its own; only built-ins have ours
            out.append(f"kind {definition.name!r} has no generator: generated transcripts never contain it")
        elif not definition.judges & selected:
            named = ", ".join(sorted(definition.judges)) or "none"
            out.append(f"kind {definition.name!r} is generated but no selected oracle judges it (its judges: {named}); "
                       f"what a summarizer does to it goes unreported")
    return tuple(out)


def evaluate(transcript: Transcript, summarize: Callable[[CompactionRequest], CompactionResult], config: RunConfig,
             chosen, *, until: tuple[str, str | None] | None = None) -> Evaluation:
    """``judge_session`` with a run's budget, trigger, token counter and rules."""
    return judge_session(transcript, summarize, budget=config.budget, trigger=config.trigger,
                         count_tokens=_counter(config.token_counter), rules=_rules(config.rules), oracles=chosen,
                         until=until)


@functools.lru_cache(maxsize=8)
def _counter(spec: str | None):
    return count_tokens if spec is None else checked_counter(spec)


def checked_counter(spec: str) -> Callable[[str], int]:
    """A team's token counter, tried once now and checked on every call: a whole number >= 0, or
    an ``InvalidArgument`` naming ``--token-counter`` (never a count silently taken as valid)."""
    counter = load_callable(spec, option="--token-counter")

    def count(text: str) -> int:
        try:
            value = counter(text)
        except Exception as exc:
            raise InvalidArgument(f"--token-counter {spec!r} raised {type(exc).__name__}: {exc}") from None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidArgument(f"--token-counter {spec!r} returned {value!r}; expected a whole number >= 0")
        return value

    count("a probe: three words")
    return count


@functools.lru_cache(maxsize=8)
def _rules(spec: str | None) -> ProseRules:
    return DEFAULT_RULES if spec is None else load_rules(spec)


def open_summarizer(config: RunConfig, *, recorded_protocol: str | None = None) -> Summarizer:
    """The summarizer a run calls, built from its config (the one place the options meet the adapter)."""
    return Summarizer(config.summarizer, protocol=config.protocol, timeout=config.timeout,
                      isolation=config.isolation, cache=CallCache(config.cache_dir),
                      max_result_chars=config.max_result_chars, version=config.summarizer_version,
                      load_timeout=min(max(DEFAULT_LOAD_TIMEOUT, config.timeout), config.max_time or float("inf")),
                      redactor=Redactor.from_environ(extra_names=config.redact_env),
                      recorded_protocol=recorded_protocol, extend=config.extend)


class _Budget:
    """When work must stop: the run's deadline, an interrupt, and the current failure's shrink
    allowance (new calls, and timeouts: each costs a whole ``--timeout``, so a summarizer that hangs
    now and then would otherwise make shrinking last hours)."""

    def __init__(self, config: RunConfig, summarizer: Summarizer):
        self._deadline = time.monotonic() + config.max_time if config.max_time else None
        self._max_time = config.max_time
        self._shrink_calls = config.shrink_calls
        self._summarizer = summarizer
        self._calls_at_start: int | None = None
        self._phase_cap: int | None = None
        self._timeouts = 0
        self.stopped: str | None = None  # why the run stopped early, for the report

    def interrupt(self, reason: str = "interrupted") -> None:
        self.stopped = self.stopped or reason

    def start_shrinking(self) -> None:
        self._calls_at_start = self._summarizer.calls
        self._timeouts = 0

    def shrink_calls(self) -> int:
        return self._summarizer.calls - (self._calls_at_start or 0)

    def cap_phase(self, calls: int | None) -> None:
        """Stop the current shrinking phase after ``calls`` new calls (None: no cap of its own)."""
        self._phase_cap = calls

    def phase_spent(self) -> bool:
        return self._phase_cap is not None and self.shrink_calls() >= self._phase_cap

    def check(self) -> str | None:
        """Why to stop now, or None. Run-wide reasons stick; the shrink allowance is per failure."""
        if self.stopped is None and self._deadline is not None and time.monotonic() >= self._deadline:
            self.stopped = f"--max-time {self._max_time:g} s reached"
        if self.stopped is not None:
            return self.stopped
        if self._calls_at_start is not None and self.shrink_calls() >= self._shrink_calls:
            return f"--shrink-calls {self._shrink_calls} spent"
        if self._calls_at_start is not None and self.phase_spent():
            return "this shrinking phase's share of --shrink-calls spent"
        if self._calls_at_start is not None and self._timeouts >= SHRINK_TIMEOUTS:
            return f"the summarizer timed out {self._timeouts} times while shrinking"
        return None

    def metered(self, summarize: Callable[[CompactionRequest], CompactionResult]):
        """``summarize``, refusing to start a call once the budget is spent."""
        def call(request: CompactionRequest) -> CompactionResult:
            if self.check() is not None:
                raise StopJudging
            calls = self._summarizer.calls
            try:
                return summarize(request)
            except KeyboardInterrupt:  # SIGINT, or SIGTERM as the CLI maps it: stop, keep what was found
                self.interrupt()
                raise StopJudging from None
            except InfraError as exc:
                if exc.kind == "timeout" and self._summarizer.calls > calls:  # a fresh one, not a cached one
                    self._timeouts += 1
                raise
        return call


def _skeletons(config: RunConfig, background: Background | None):
    low = min(config.min_turns, config.max_turns)
    return skeletons(min_turns=low, max_turns=config.max_turns, max_facts=8, background=background)


def _exploration(config: RunConfig, background: Background | None, full) -> list[tuple[Any, int]]:
    """The stages of exploration, as (strategy, examples): first a share of short transcripts dense
    with facts, which show most failures in a few calls each; then the whole ``--max-turns`` range,
    for what only a long session exposes (``full``, the run's own strategy). Each stage is seeded
    from the run's seed."""
    quick = math.ceil(config.examples * QUICK_SHARE) if config.examples >= 4 else 0
    if quick == 0 or config.max_turns <= QUICK_MAX_TURNS:
        return [(full, config.examples)]
    low = min(config.min_turns, QUICK_MAX_TURNS)
    dense = skeletons(min_turns=low, max_turns=QUICK_MAX_TURNS, min_facts=3, max_facts=8, background=background)
    return [(dense, quick), (full, config.examples - quick)]


def _hypothesis_settings(examples: int, phases, database: str | None = None) -> settings:
    db = DirectoryBasedExampleDatabase(database) if database else None
    if db is not None:
        phases = [Phase.reuse, *phases]
    return settings(max_examples=examples, database=db, deadline=None, derandomize=False, phases=phases,
                    verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck), print_blob=False)


def _shrink_failure(key, first: Transcript, violation: Violation, summarizer: Summarizer, config: RunConfig,
                    chosen, budget: _Budget, progress: Progress, label: str,
                    skeleton_pass: Callable[[Callable[[Transcript], bool]], None] | None = None) -> Failure:
    """Shrink one failure as far as its allowance of calls goes; always returns it, shrunk or not.

    With ``--database``, Hypothesis first shrinks the skeleton (see
    ``harness._app._shrinking`` for why only then); the domain minimizer does
    the rest. Every failing candidate is remembered, so an interrupt or a spent
    allowance still reports the smallest transcript found until then.
    """
    summarize = budget.metered(summarizer)
    budget.start_shrinking()

    def judge(candidate: Transcript, at_budget: int) -> Evaluation:
        run_config = config if at_budget == config.budget else dataclasses.replace(config, budget=at_budget)
        return evaluate(candidate, summarize, run_config, chosen, until=key)

    def on_check(checks: int, best: Transcript) -> None:
        progress.note(f"{label}: {len(best.turns)} turns after {checks} checks, "
                      f"{budget.shrink_calls()} new summarizer calls")

    shrinker = Shrinker(key, first, violation, config.budget, judge, counter=_counter(config.token_counter),
                        on_check=on_check)
    stopped = None
    try:
        if skeleton_pass is not None:
            budget.cap_phase(int(config.shrink_calls * SKELETON_PASS_SHARE))
            try:
                skeleton_pass(shrinker.still_fails)
            except StopJudging:
                if not budget.phase_spent():
                    raise
            finally:
                budget.cap_phase(None)
        shrinker.shrink()
    except StopJudging:
        stopped = budget.check() or "stopped"
    except KeyboardInterrupt:
        budget.interrupt()
        stopped = budget.stopped
    shrunk = shrinker.result()
    finding, rnd, boundary, context = shrunk.violation
    return Failure(finding.invariant, finding.severity.value, finding.fact_kind, finding.fact_id, finding.detail,
                   finding.expected, finding.found, shrunk.transcript, rnd, boundary, context, len(first.turns),
                   shrunk.checks, budget.shrink_calls(), stopped, shrunk.budget, shrunk.elided)


def run(config: RunConfig, *, on_failure: Callable[[Failure, str], None] | None = None) -> RunResult:
    """The ``run`` command as a function: returns everything the report needs.

    All reproducible from the seed: explore ``examples`` transcripts (short,
    dense ones first, see ``_exploration``); then shrink each distinct failure
    from its first occurrence with the domain minimizer (``harness._app._shrinking``;
    with ``--database``, Hypothesis shrinks the skeleton first). ``on_failure`` receives each
    failure, and the protocol the summarizer was called with, as soon as it is
    final (the CLI saves it to the corpus then, so a run killed later loses
    nothing already shrunk). ``--max-time`` or an interrupt ends exploration
    early; failures found are still shrunk as far as the budget allows and
    reported.
    """
    chosen = select(only=config.only, skip=config.skip)
    run_seed = config.seed if config.seed is not None else secrets.randbits(32)
    progress = Progress(config.examples, label="examples", quiet=config.quiet)
    first_seen: dict[tuple[str, str | None], tuple[Transcript, Violation]] = {}
    infra: list[InfraFailure] = []
    degradations: dict[str, int] = {}
    turns: list[int] = []
    rounds = [0]
    first_failure_calls: list[int | None] = [None]
    background = load_background(config.background) if config.background else None  # bad logs fail before any call
    strategy = _skeletons(config, background)

    def expand(skeleton) -> Transcript:
        return expand_skeleton(skeleton, background=background)

    with open_summarizer(config) as summarizer:
        budget = _Budget(config, summarizer)
        summarize = budget.metered(summarizer)

        def explore(skeleton) -> bool:
            transcript = expand(skeleton)
            ev = evaluate(transcript, summarize, config, chosen)
            for key, violation in ev.violations.items():
                first_seen.setdefault(key, (transcript, violation))
            if first_seen and first_failure_calls[0] is None:
                first_failure_calls[0] = summarizer.calls
            if ev.stopped:
                raise StopJudging
            turns.append(len(transcript.turns))
            rounds[0] += len(ev.boundaries)
            for inv in ev.degradations:
                degradations[inv] = degradations.get(inv, 0) + 1
            if ev.infra is not None:
                infra.append(InfraFailure(ev.infra.kind, ev.infra.message, len(turns), ev.infra.output))
            progress.advance(f"· {len(first_seen)} failures · {len(infra)} infra errors")
            if ev.infra is not None and config.stop_on_error:
                raise StopJudging
            return False

        for stage, (stage_strategy, examples) in enumerate(_exploration(config, background, strategy)):
            if budget.check() is not None:
                break
            try:
                find(stage_strategy, explore, settings=_hypothesis_settings(examples, [Phase.generate]),
                     random=random.Random(run_seed if stage == 0 else f"{run_seed}/{stage}"))
            except (NoSuchExample, Unsatisfiable):
                pass
            except StopJudging:
                break
            except KeyboardInterrupt:
                budget.interrupt()
                break
        budget.check()
        incomplete = budget.stopped
        if incomplete is None and turns and not rounds[0] and not infra:
            incomplete = "no example reached a compaction (raise --max-turns or lower --budget)"
        if incomplete is None and len(turns) < config.examples and not infra:
            incomplete = f"Hypothesis generated only {len(turns)} of {config.examples} examples"
        progress.finish()

        def skeleton_pass_for(key):
            def skeleton_pass(still_fails: Callable[[Transcript], bool]) -> None:
                try:
                    find(strategy, lambda sk: still_fails(expand(sk)),
                         settings=_hypothesis_settings(config.examples, [Phase.generate, Phase.shrink],
                                                       config.database),
                         # Hypothesis never saves seeded runs; with a database the shrink pass is
                         # unseeded, replays what earlier runs shrank, and falls back to the first seen.
                         random=None if config.database else random.Random(run_seed),
                         database_key=f"compaction-harness|{config.summarizer}|{key}".encode())
                except (NoSuchExample, Unsatisfiable):
                    pass  # a flaky summarizer: shrink what we saw
            return skeleton_pass

        failures = []
        ordered = sorted(first_seen.items(), key=lambda kv: str(kv[0]))
        for n, (key, (first, violation)) in enumerate(ordered, 1):
            label = f"shrinking failure {n}/{len(ordered)}: {key[0]} ({key[1] or 'no fact'})"
            progress.message(f"{label}, first seen in {len(first.turns)} turns")
            failure = _shrink_failure(key, first, violation, summarizer, config, chosen, budget, progress, label,
                                      skeleton_pass_for(key) if config.database else None)
            failures.append(failure)
            if on_failure is not None:
                on_failure(failure, summarizer.protocol)
        progress.finish()

    return RunResult(config, run_seed, summarizer.protocol, len(turns), summarizer.calls, summarizer.cache.hits,
                     tuple(failures), degradations, tuple(infra), tuple(turns), incomplete,
                     tuple(summarizer.cache.discarded), kind_warnings(chosen), first_failure_calls[0])


def shrink_transcript(transcript: Transcript, config: RunConfig, *,
                      on_failure: Callable[[Failure, str], None] | None = None) -> RunResult:
    """The ``shrink`` command: minimize every distinct failure of one given transcript."""
    chosen = select(only=config.only, skip=config.skip)
    progress = Progress(1, label="shrinking", quiet=config.quiet)
    with open_summarizer(config) as summarizer:
        budget = _Budget(config, summarizer)
        progress.message(f"judging {len(transcript.turns)} turns")
        try:
            ev = evaluate(transcript, budget.metered(summarizer), config, chosen)
        except KeyboardInterrupt:
            budget.interrupt()
            ev = Evaluation(stopped=True)
        infra = (InfraFailure(ev.infra.kind, ev.infra.message, 1, ev.infra.output),) if ev.infra else ()
        failures = []
        for n, key in enumerate(sorted(ev.violations, key=str), 1):
            label = f"shrinking failure {n}/{len(ev.violations)}: {key[0]} ({key[1] or 'no fact'})"
            failure = _shrink_failure(key, transcript, ev.violations[key], summarizer, config, chosen, budget,
                                      progress, label)
            failures.append(failure)
            if on_failure is not None:
                on_failure(failure, summarizer.protocol)
        progress.finish()
        incomplete = budget.stopped if ev.stopped else None
        if not ev.stopped and ev.infra is None and not ev.boundaries:
            incomplete = ("the transcript never reached a compaction: nothing was judged (give it compaction_points "
                          "or a lower --budget)")
    return RunResult(config, config.seed or 0, summarizer.protocol, 0 if ev.stopped else 1, summarizer.calls,
                     summarizer.cache.hits, tuple(failures), {}, infra, (len(transcript.turns),), incomplete,
                     tuple(summarizer.cache.discarded))


def turn_stats(turns: tuple[int, ...]) -> str:
    if not turns:
        return "no examples"
    return f"{len(turns)} transcripts, {statistics.median(turns):.0f} turns median, {max(turns)} max"
