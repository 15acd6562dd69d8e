"""The main job: generate transcripts, run sessions, collect, shrink and report failures.

Hypothesis drives generation; every distinct failure (one per invariant and
fact kind) is then reduced by the domain minimizer through the call cache.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
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
from harness._base._model import Consumer, Transcript
from harness._base._protocol import CompactionRequest, CompactionResult
from harness._base._tokens import count_tokens
from harness._app.calling._summarizer import CallStats, Summarizer
from harness._app.calling._cache import CallCache
from harness._app.judging._judge import Evaluation, StopJudging, Violation, judge_session
from harness._app.calling._loading import load_callable, load_rules
from harness._app.shrinking._shrinker import Shrinker
from harness._app._progress import Progress
from harness._app.calling._redact import Redactor
from harness._app.judging._survival import Survival
from harness._app.calling._worker import DEFAULT_LOAD_TIMEOUT
from oracles import DEFAULT_RULES, ProseRules, registered, select
from harness._base._kinds import defined_kinds
from harness._base._model import FactKind, normalise_kind
from strategies import Background, load_background, skeletons
from strategies import expand as expand_skeleton


__all__ = ["RunConfig", "Failure", "Unclear", "InfraFailure", "RunResult", "UNCLEAR_MODES", "Evaluation", "evaluate", "run", "shrink_transcript",
           "shrink_transcripts", "open_summarizer", "dense_skeletons"]

#: What an unclear reading does to a run: shown for review (the default), or a failure (``--unclear fail``).
UNCLEAR_MODES = ("review", "fail")
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
#: Fresh re-asks of each minimal failure (cache bypassed) that confirm it and measure its rate.
DEFAULT_TRIALS = 3
#: Retries of a remote summarizer's 429, 5xx, dropped connection or timeout (harness._app.calling._remote).
DEFAULT_RETRIES = 4
#: Under --max-calls, the calls exploration leaves for each distinct failure found so far (shrinking and trials;
#: shrinking spends what is left, shared equally, once 2 calls per trial are set aside).
SHRINK_RESERVE = 40
#: Sessions whose every request is asked again (in a restarted worker, the cache bypassed) to notice a
#: non-deterministic summarizer (the ``deterministic`` oracle), spread over the run (``probed``).
DETERMINISM_PROBES = 3
#: With --database, the share of a failure's shrink calls the skeleton pass may spend: the rest is kept for ddmin,
#: which removes single turns (a skeleton never shrinks below the strategy's min_turns).
SKELETON_PASS_SHARE = 0.6


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything a run depends on; the seed makes it reproducible."""

    summarizer: str
    protocol: str | None = None  # None: the summarizer's declared protocol (harness._app.calling._loading.resolve_protocol)
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
    jobs: int = 1  # sessions judged at once during exploration; the result is the same for every value
    max_calls: int | None = None  # new summarizer calls the whole run may make (exploration stops to leave shrinking some)
    max_tokens: int | None = None  # prompt + completion tokens the whole run may spend, where the summarizer reports usage
    trials: int = DEFAULT_TRIALS  # fresh re-asks confirming each minimal failure (0: none, and no determinism probes)
    may_vary: bool = False  # the summarizer may answer one request differently: ``deterministic`` notes, never fails
    consumers: tuple[Consumer, ...] = ()  # declared on every generated transcript (``consumer-requirements``)
    base_url: str | None = None  # openai: the chat-completions endpoint's base URL
    prompt: str | None = None  # openai: the prompt template file
    api_key_env: str | None = None  # openai: the environment variable holding the API key (never its value)
    retries: int = DEFAULT_RETRIES  # remote summarizers: retries of 429, 5xx, dropped connections and timeouts
    unclear: str = "review"  # one of UNCLEAR_MODES: an unclear reading is shown for review, or fails the run

    def __post_init__(self) -> None:
        if self.unclear not in UNCLEAR_MODES:
            raise InvalidArgument(f"unclear={self.unclear!r}: expected one of {', '.join(UNCLEAR_MODES)}")


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
    trials: tuple[int, int] | None = None  # (failed, of) in fresh re-asks of the minimal transcript
    boundaries: tuple[int, ...] = ()  # where the minimal session's rounds compacted (up to the failing one)
    evidence: str | None = None  # what the violation rests on (``oracles.Evidence``)

    @property
    def rate(self) -> str | None:
        """"fails 2 of 3 trials", "not reproduced in 3 trials", or None when not confirmed."""
        if self.trials is None or not self.trials[1]:
            return None
        failed, of = self.trials
        return f"not reproduced in {of} trials" if failed == 0 else f"fails {failed} of {of} trials"

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.invariant, self.fact_kind)


@dataclass(frozen=True, slots=True)
class Unclear:
    """A reading the oracles could not settle (``Severity.UNCLEAR``), as first seen in a run: the sentence,
    the obligation and why. Shown for a person to review; never shrunk, never a violation unless the run
    says ``--unclear fail``. ``count`` is how often the same (invariant, kind, why) showed over the run."""

    invariant: str
    fact_kind: str | None
    fact_id: str | None
    why: str | None
    detail: str
    obligation: str | None
    sentence: str | None
    example: int
    round: int | None
    boundary: int | None
    count: int = 1

    @property
    def key(self) -> tuple[str, str | None, str | None]:
        return (self.invariant, self.fact_kind, self.why)


def _collect_unclear(seen: dict, ev: Evaluation, example: int) -> None:
    """Add one example's unclear readings to a run's: the first of each kind kept, every one counted."""
    for key, (finding, rnd, boundary, _) in ev.unclear.items():
        count = ev.unclear_counts.get(key, 1)
        held = seen.get(key)
        if held is None:
            seen[key] = Unclear(finding.invariant, finding.fact_kind, finding.fact_id, key[2], finding.detail,
                                finding.expected, finding.found, example, rnd, boundary, count)
        else:
            seen[key] = dataclasses.replace(held, count=held.count + count)


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
    stats: CallStats = field(default_factory=CallStats)  # calls, retries, tokens, latencies, re-asks
    cap_reached: str | None = None  # "--max-calls 300 reached" when a spend cap ended or limited work
    # By failure key, a file holding its minimal transcript, which its reproduce line names (fuzz: a fuzzing
    # session cannot be replayed from a seed, the file can).
    reproduce_files: dict[tuple[str, str | None], str] = field(default_factory=dict)
    survival: Survival = field(default_factory=Survival)  # per round and fact kind, over the sessions explored
    unjudged: tuple[tuple[str, str], ...] = ()  # selected oracles that judged nothing, and why (``unjudged_oracles``)
    unclear: tuple[Unclear, ...] = ()  # readings the oracles could not settle, for review (``Unclear``)

    @property
    def nondeterministic(self) -> bool:
        """The same request was answered differently when asked again."""
        return self.stats.answered_differently > 0

    @property
    def unclear_fails(self) -> bool:
        """The run was told an unclear reading is a failure (``--unclear fail``), and there is one."""
        return bool(self.unclear) and self.config.unclear == "fail"

    @property
    def exit_code(self) -> int:
        """1 violations (or, with ``--unclear fail``, unclear readings); 3 the summarizer failed; 4 not every
        example was judged; 0 only when all were, cleanly. Unclear readings alone never fail by default."""
        if self.failures or self.unclear_fails:
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


def unjudged_oracles(config: RunConfig, chosen, consumers: tuple[Consumer, ...] = ()) -> tuple[tuple[str, str], ...]:
    """Selected oracles the run cannot judge at all, each with why: ``deterministic`` when --trials 0 asks
    nothing twice, ``consumer-requirements`` when no consumer is declared (the JUnit report skips them)."""
    selected = {o.id for o in chosen}
    out = []
    if not config.trials and "deterministic" in selected:
        out.append(("deterministic", "--trials 0 asks no request twice"))
    if not (config.consumers or consumers) and "consumer-requirements" in selected:
        out.append(("consumer-requirements", "no consumer was declared (--consumer, or a transcript's consumers)"))
    return tuple(out)


def _unprobed(config: RunConfig, chosen) -> tuple[str, ...]:
    """``deterministic`` selected but nothing asked twice: said, never a silent pass."""
    if not any(oracle == "deterministic" for oracle, _ in unjudged_oracles(config, chosen)):
        return ()
    return ("deterministic was not judged: --trials 0 asks no request twice",)


def evaluate(transcript: Transcript, summarize: Callable[[CompactionRequest], CompactionResult], config: RunConfig,
             chosen, *, until: tuple[str, str | None] | None = None, ask_again=None,
             may_vary: bool = False) -> Evaluation:
    """``judge_session`` with a run's budget, trigger, token counter and rules."""
    return judge_session(transcript, summarize, budget=config.budget, trigger=config.trigger,
                         count_tokens=_counter(config.token_counter), rules=_rules(config.rules), oracles=chosen,
                         until=until, ask_again=ask_again, may_vary=may_vary or config.may_vary)


def check_consumers(consumers: tuple[Consumer, ...]) -> None:
    """Consumers may only require what an oracle verifies for one result: an unknown class, or one judged
    over a whole session, is an ``InvalidArgument`` naming the consumer and what is known."""
    scopes = {o.id: o.scope for o in registered()}
    for consumer in consumers:
        for needed in consumer.requires:
            if needed not in scopes:
                known = ", ".join(sorted(i for i, s in scopes.items() if s == "compaction"))
                raise InvalidArgument(f"--consumer {consumer.name}: no oracle verifies {needed!r}; known: {known}")
            if scopes[needed] != "compaction":
                raise InvalidArgument(f"--consumer {consumer.name}: {needed!r} is judged over a whole session, not "
                                      "per result, so no result can be verified for it")


def asker(summarizer: Summarizer, budget: _Budget):
    """What ``judge_session`` asks a session's requests again with: a restarted worker, within the budget."""
    def ask(requests):
        if budget.check() is not None:
            raise StopJudging
        return summarizer.ask_fresh(requests)
    return ask


def probed(examples: int) -> frozenset[int]:
    """The examples whose every request is asked again (``deterministic``): ``DETERMINISM_PROBES`` spread
    over the run, so the long transcripts of its later stage are probed too, not only the first, short ones."""
    return frozenset(i * examples // DETERMINISM_PROBES for i in range(min(examples, DETERMINISM_PROBES)))


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


def open_summarizer(config: RunConfig, *, recorded_protocol: str | None = None,
                    cache: CallCache | None = None) -> Summarizer:
    """The summarizer a run calls, built from its config (the one place the options meet the adapter)."""
    return Summarizer(config.summarizer, protocol=config.protocol, timeout=config.timeout,
                      isolation=config.isolation, cache=cache if cache is not None else CallCache(config.cache_dir),
                      max_result_chars=config.max_result_chars, version=config.summarizer_version,
                      load_timeout=min(max(DEFAULT_LOAD_TIMEOUT, config.timeout), config.max_time or float("inf")),
                      redactor=Redactor.from_environ(extra_names=(*config.redact_env, *filter(None, [config.api_key_env]))),
                      recorded_protocol=recorded_protocol, extend=config.extend, jobs=config.jobs,
                      base_url=config.base_url, prompt=config.prompt, api_key_env=config.api_key_env,
                      retries=config.retries)


class _Budget:
    """When work must stop: the run's deadline, an interrupt, the spend caps, and the current failure's
    shrink allowance (new calls, and timeouts: each costs a whole ``--timeout``, so a summarizer that hangs
    now and then would otherwise make shrinking last hours).

    Under ``--max-calls`` (or ``--max-tokens``), exploration stops while ``SHRINK_RESERVE`` calls per
    failure found so far are left; each failure's shrinking may then spend its equal share of what is
    left (never more than ``--shrink-calls``); trials use what remains after that.
    """

    def __init__(self, config: RunConfig, summarizer: Summarizer):
        self._deadline = time.monotonic() + config.max_time if config.max_time else None
        self._max_time = config.max_time
        self._shrink_calls = config.shrink_calls
        self._max_calls = config.max_calls
        self._max_tokens = config.max_tokens
        self._trial_reserve = 0  # calls the current failure's trials will need (its trials x its failing round)
        self._summarizer = summarizer
        self._calls_at_start: int | None = None
        self._allowance = config.shrink_calls
        self._phase_cap: int | None = None
        self._timeouts = 0
        self._reserve = 0  # calls exploration must leave (SHRINK_RESERVE per failure found)
        self._halted = False  # exploration ended early: sessions still running in other threads stop
        self.stopped: str | None = None  # why the run stopped early, for the report
        self.cap_reached: str | None = None  # which spend cap ended or limited work

    def interrupt(self, reason: str = "interrupted") -> None:
        self.stopped = self.stopped or reason

    def halt_sessions(self, halted: bool) -> None:
        self._halted = halted

    def reserve_for(self, failures: int) -> None:
        self._reserve = SHRINK_RESERVE * failures

    def start_shrinking(self, failures_left: int = 1) -> None:
        """A new failure's allowance: ``--shrink-calls``, or its share of what the caps leave."""
        self._calls_at_start = self._summarizer.calls
        self._timeouts = 0
        self._allowance = self._shrink_calls
        self._trial_reserve = 0
        left = self._calls_left()
        if left is not None:  # the trials that confirm it come out of its share too (see keep_for_trials)
            self._allowance = min(self._allowance, left // max(1, failures_left))

    def keep_for_trials(self, calls: int) -> None:
        """Under a spend cap, what the current failure's trials will cost: shrinking leaves it unspent."""
        self._trial_reserve = calls

    def end_shrinking(self) -> None:
        """Trials next: only the run-wide limits apply."""
        self._calls_at_start = None

    def _calls_left(self) -> int | None:
        """New calls the caps still allow (tokens converted at this run's mean per call), or None without caps."""
        left = self._limits()
        return None if not left else max(0, min(left.values()))

    def _limits(self) -> dict[str, int]:
        stats = self._summarizer.stats
        left = {}
        if self._max_calls is not None:
            left[f"--max-calls {self._max_calls} reached"] = self._max_calls - stats.calls
        if self._max_tokens is not None and stats.usage_known and stats.calls:
            per_call = max(1, stats.tokens // stats.calls)
            left[f"--max-tokens {self._max_tokens} reached"] = (self._max_tokens - stats.tokens) // per_call
        return left

    def _cap_name(self) -> str:
        left = self._limits()
        return min(left, key=left.get)

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
        left = self._calls_left()
        shrinking = self._calls_at_start is not None
        if left is not None and left <= (self._trial_reserve if shrinking else self._reserve):
            self.cap_reached = self.cap_reached or self._cap_name()
            return self.cap_reached
        if not shrinking:
            return None
        kept = self._trial_reserve if left is not None else 0
        if self.shrink_calls() >= self._allowance - kept:
            if self._allowance < self._shrink_calls:
                return f"its share of what {self._cap_name().removesuffix(' reached')} left spent"
            return f"--shrink-calls {self._shrink_calls} spent"
        if self.phase_spent():
            return "this shrinking phase's share of --shrink-calls spent"
        if self._timeouts >= SHRINK_TIMEOUTS:
            return f"the summarizer timed out {self._timeouts} times while shrinking"
        return None

    def metered(self, summarize: Callable[[CompactionRequest], CompactionResult]):
        """``summarize``, refusing to start a call once the budget is spent."""
        def call(request: CompactionRequest) -> CompactionResult:
            if self._halted or self.check() is not None:
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


def dense_skeletons(min_turns: int, max_turns: int, background: Background | None = None):
    """Short transcripts dense with facts (at least three): most failures show in a few calls each.
    Exploration's first stage, and what ``fuzz`` generates."""
    return skeletons(min_turns=min(min_turns, max_turns), max_turns=max_turns, min_facts=3, max_facts=8,
                     background=background)


def _exploration(config: RunConfig, background: Background | None, full) -> list[tuple[Any, int]]:
    """The stages of exploration, as (strategy, examples): first a share of short transcripts dense
    with facts, which show most failures in a few calls each; then the whole ``--max-turns`` range,
    for what only a long session exposes (``full``, the run's own strategy). Each stage is seeded
    from the run's seed."""
    quick = math.ceil(config.examples * QUICK_SHARE) if config.examples >= 4 else 0
    if quick == 0 or config.max_turns <= QUICK_MAX_TURNS:
        return [(full, config.examples)]
    dense = dense_skeletons(config.min_turns, QUICK_MAX_TURNS, background)
    return [(dense, quick), (full, config.examples - quick)]


def _hypothesis_settings(examples: int, phases, database: str | None = None) -> settings:
    db = DirectoryBasedExampleDatabase(database) if database else None
    if db is not None:
        phases = [Phase.reuse, *phases]
    return settings(max_examples=examples, database=db, deadline=None, derandomize=False, phases=phases,
                    verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck), print_blob=False)


def _shrink_failure(key, first: Transcript, violation: Violation, summarizer: Summarizer, config: RunConfig,
                    chosen, budget: _Budget, progress: Progress, label: str,
                    skeleton_pass: Callable[[Callable[[Transcript], bool]], None] | None = None, *,
                    failures_left: int = 1) -> Failure:
    """Shrink one failure as far as its allowance of calls goes; always returns it, shrunk or not.

    With ``--database``, Hypothesis first shrinks the skeleton (see
    ``harness._app.shrinking._shrinker`` for why only then); the domain minimizer does
    the rest. Every failing candidate is remembered, so an interrupt or a spent
    allowance still reports the smallest transcript found until then.
    """
    summarize = budget.metered(summarizer)
    budget.start_shrinking(failures_left)

    again = asker(summarizer, budget) if key[0] == "deterministic" else None

    def judge(candidate: Transcript, at_budget: int) -> Evaluation:
        run_config = config if at_budget == config.budget else dataclasses.replace(config, budget=at_budget)
        return evaluate(candidate, summarize, run_config, chosen, until=key, ask_again=again,
                        may_vary=summarizer.may_vary)

    def on_check(checks: int, best: Transcript) -> None:
        budget.keep_for_trials(config.trials * _rounds_to_fail(shrinker.violation))
        progress.note(f"{label}: {len(best.turns)} turns after {checks} checks, "
                      f"{budget.shrink_calls()} new summarizer calls")

    shrinker = Shrinker(key, first, violation, config.budget, judge, counter=_counter(config.token_counter),
                        on_check=on_check)
    budget.keep_for_trials(config.trials * _rounds_to_fail(violation))
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
    try:  # already judged while shrinking: answered from the shrinker's own memo, no call
        boundaries = shrinker.evaluate(shrunk.transcript, shrunk.budget).boundaries
    except StopJudging:
        boundaries = ()
    shrink_calls = budget.shrink_calls()
    budget.end_shrinking()
    trials = None
    if config.trials and budget.check() is None:
        progress.note(f"{label}: confirming, {config.trials} fresh trials")
        trials = confirm(key, shrunk.transcript, shrunk.budget, summarizer, config, chosen, budget)
    finding, rnd, boundary, context = shrunk.violation
    return Failure(finding.invariant, finding.severity.value, finding.fact_kind, finding.fact_id, finding.detail,
                   finding.expected, finding.found, shrunk.transcript, rnd, boundary, context, len(first.turns),
                   shrunk.checks, shrink_calls, stopped, shrunk.budget, shrunk.elided, trials, boundaries,
                   finding.evidence and str(finding.evidence))


def _rounds_to_fail(violation: Violation) -> int:
    """Calls one trial of a transcript failing in this round takes (a session-wide finding: its rounds are
    not known, so one)."""
    return 1 if violation[1] is None else violation[1] + 1


def confirm(key: tuple[str, str | None], transcript: Transcript, at_budget: int, summarizer: Summarizer,
            config: RunConfig, chosen, budget: _Budget) -> tuple[int, int] | None:
    """Re-ask a minimal transcript ``--trials`` times with the cache bypassed: (failed, of) trials that
    showed the same invariant on the same fact kind. A trial the budget stopped is not counted; None
    when none could run."""
    trial_config = dataclasses.replace(config, budget=at_budget)
    ask = budget.metered(summarizer.ask_again)
    again = asker(summarizer, budget) if key[0] == "deterministic" else None
    failed = done = 0
    for _ in range(config.trials):
        ev = evaluate(transcript, ask, trial_config, chosen, until=key, ask_again=again, may_vary=summarizer.may_vary)
        if ev.stopped:
            break
        done += 1
        failed += key in ev.violations
    return (failed, done) if done else None


def _generate(stages, run_seed: int, take: Callable[[Any], None]) -> None:
    """Every stage's skeletons, in Hypothesis's order, handed to ``take`` one by one as generated.

    Generation never depends on what judging finds (every example is uninteresting to ``find``), so
    judging them later, in any number of threads, sees the same examples as judging each one at once.
    ``take`` may raise ``StopJudging`` to end generation.
    """
    for stage, (strategy, examples) in enumerate(stages):
        rng = random.Random(run_seed if stage == 0 else f"{run_seed}/{stage}")
        try:
            find(strategy, lambda skeleton: take(skeleton) and False,
                 settings=_hypothesis_settings(examples, [Phase.generate]), random=rng)
        except (NoSuchExample, Unsatisfiable):
            pass


class _Prefetched:
    """The skeletons of ``_generate``, produced by a thread of their own a few ahead of judging, so
    generating (CPU) overlaps judging sessions that wait on a summarizer (``--jobs``)."""

    _END = object()

    def __init__(self, stages, run_seed: int, ahead: int):
        self._queue: queue.Queue = queue.Queue(maxsize=ahead)
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._produce, args=(stages, run_seed), daemon=True,
                                        name="compaction-harness-generate")
        self._thread.start()

    def _produce(self, stages, run_seed: int) -> None:
        try:
            _generate(stages, run_seed, self._put)
        except StopJudging:
            pass
        except BaseException as exc:  # noqa: BLE001 - raised again in the consuming thread
            self._error = exc
        self._put(self._END, final=True)

    def _put(self, item, final: bool = False) -> None:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue
        if not final:
            raise StopJudging

    def __iter__(self):
        while (item := self._queue.get()) is not self._END:
            yield item
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def _judge_in_order(skeletons, judge, record, jobs: int, budget: _Budget) -> bool:
    """``record(*judge(s))`` for each skeleton in order, judging up to ``jobs`` at once; True if ``record``
    asked to stop (then the sessions still running are told to stop, and what they found is dropped, so
    a run's result never depends on which thread finished first)."""
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="compaction-harness-session")
    pending: collections.deque = collections.deque()
    queue = iter(skeletons)
    try:
        for skeleton in itertools.islice(queue, 2 * jobs):
            pending.append(pool.submit(judge, skeleton))
        while pending:
            if record(*pending.popleft().result()):
                return True
            for skeleton in itertools.islice(queue, 1):
                pending.append(pool.submit(judge, skeleton))
        return False
    finally:
        budget.halt_sessions(True)  # sessions still running stop at their next call
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        budget.halt_sessions(False)


def run(config: RunConfig, *, on_failure: Callable[[Failure, str], None] | None = None) -> RunResult:
    """The ``run`` command as a function: returns everything the report needs.

    All reproducible from the seed: explore ``examples`` transcripts (short,
    dense ones first, see ``_exploration``); then shrink each distinct failure
    from its first occurrence with the domain minimizer (``harness._app.shrinking._shrinker``;
    with ``--database``, Hypothesis shrinks the skeleton first). ``on_failure`` receives each
    failure, and the protocol the summarizer was called with, as soon as it is
    final (the CLI saves it to the corpus then, so a run killed later loses
    nothing already shrunk). ``--max-time`` or an interrupt ends exploration
    early; failures found are still shrunk as far as the budget allows and
    reported.
    """
    chosen = select(only=config.only, skip=config.skip)
    check_consumers(config.consumers)
    run_seed = config.seed if config.seed is not None else secrets.randbits(32)
    progress = Progress(config.examples, label="examples", quiet=config.quiet)
    first_seen: dict[tuple[str, str | None], tuple[Transcript, Violation]] = {}
    unclear: dict[tuple[str, str | None, str | None], Unclear] = {}
    infra: list[InfraFailure] = []
    degradations: dict[str, int] = {}
    turns: list[int] = []
    rounds = [0]
    survival = [Survival()]
    first_failure_calls: list[int | None] = [None]
    background = load_background(config.background) if config.background else None  # bad logs fail before any call
    strategy = _skeletons(config, background)

    def expand(skeleton) -> Transcript:
        transcript = expand_skeleton(skeleton, background=background)
        return dataclasses.replace(transcript, consumers=config.consumers) if config.consumers else transcript

    with open_summarizer(config) as summarizer:
        budget = _Budget(config, summarizer)
        summarize = budget.metered(summarizer)
        again = asker(summarizer, budget) if config.trials else None
        probes = probed(config.examples)

        explored_calls = [0]  # fresh calls of the examples recorded so far, in generation order

        def judge(item) -> tuple[Transcript, Evaluation, int]:
            index, skeleton = item
            transcript = expand(skeleton)
            before = summarizer.calls_in_this_thread()
            ev = evaluate(transcript, summarize, config, chosen, may_vary=summarizer.may_vary,
                          ask_again=again if index in probes else None)
            return transcript, ev, summarizer.calls_in_this_thread() - before

        def record(transcript: Transcript, ev: Evaluation, calls: int) -> bool:
            """Take one judged example, in generation order; True to stop exploring."""
            explored_calls[0] += calls
            for key, violation in ev.violations.items():
                first_seen.setdefault(key, (transcript, violation))
            budget.reserve_for(len(first_seen))
            if first_seen and first_failure_calls[0] is None:
                first_failure_calls[0] = explored_calls[0]  # the same whatever --jobs is
            if ev.stopped:
                return True
            turns.append(len(transcript.turns))
            _collect_unclear(unclear, ev, len(turns))
            rounds[0] += len(ev.boundaries)
            survival[0] = survival[0].add(ev.survival)
            for inv in ev.degradations:
                degradations[inv] = degradations.get(inv, 0) + 1
            if ev.infra is not None:
                infra.append(InfraFailure(ev.infra.kind, ev.infra.message, len(turns), ev.infra.output))
            progress.advance(f"· {len(first_seen)} failures · {len(infra)} infra errors"
                             + (f" · {len(unclear)} unclear" if unclear else ""))
            return ev.infra is not None and config.stop_on_error

        try:
            stages = _exploration(config, background, strategy)
            if config.jobs == 1:
                generated = itertools.count()

                def judge_now(skeleton) -> None:
                    if budget.check() is not None or record(*judge((next(generated), skeleton))):
                        raise StopJudging
                try:
                    _generate(stages, run_seed, judge_now)
                except StopJudging:
                    pass
            else:
                prefetched = _Prefetched(stages, run_seed, ahead=4 * config.jobs)
                try:
                    _judge_in_order(enumerate(prefetched), judge, record, config.jobs, budget)
                finally:
                    prefetched.close()
        except KeyboardInterrupt:
            budget.interrupt()
        budget.check()
        incomplete = budget.stopped or budget.cap_reached
        budget.reserve_for(0)  # exploration is over: what it left is for shrinking and trials
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
                                      skeleton_pass_for(key) if config.database else None,
                                      failures_left=len(ordered) - n + 1)
            failures.append(failure)
            if on_failure is not None:
                on_failure(failure, summarizer.protocol)
        progress.finish()

    return RunResult(config, run_seed, summarizer.protocol, len(turns), summarizer.calls, summarizer.cache.hits,
                     tuple(failures), degradations, tuple(infra), tuple(turns), incomplete,
                     tuple(summarizer.cache.discarded), kind_warnings(chosen) + _unprobed(config, chosen),
                     first_failure_calls[0],
                     summarizer.stats, budget.cap_reached, survival=survival[0],
                     unjudged=unjudged_oracles(config, chosen), unclear=_ordered(unclear))


def shrink_transcript(transcript: Transcript, config: RunConfig, *,
                      on_failure: Callable[[Failure, str], None] | None = None) -> RunResult:
    """The ``shrink`` command: minimize every distinct failure of one given transcript."""
    return shrink_transcripts((transcript,), config, on_failure=on_failure)


def shrink_transcripts(transcripts: tuple[Transcript, ...], config: RunConfig, *,
                       on_failure: Callable[[Failure, str], None] | None = None) -> RunResult:
    """Judge the given transcripts, then minimize every distinct failure from the first one showing it.

    What ``shrink`` does with one file, and ``fuzz`` with what the fuzzer found (the fuzzer's process
    called the summarizer inline for coverage; here it is called as the options say, so a finding the
    summarizer does not repeat is not reported).
    """
    chosen = select(only=config.only, skip=config.skip)
    progress = Progress(len(transcripts), label="judging", quiet=config.quiet)
    first_seen: dict[tuple[str, str | None], tuple[Transcript, Violation]] = {}
    unclear: dict[tuple[str, str | None, str | None], Unclear] = {}
    infra: list[InfraFailure] = []
    judged, stopped, compacted = 0, False, False
    survival = Survival()
    with open_summarizer(config) as summarizer:
        budget = _Budget(config, summarizer)
        again = asker(summarizer, budget) if config.trials else None
        for n, transcript in enumerate(transcripts, 1):
            progress.message(f"judging {len(transcript.turns)} turns" + (f" ({n}/{len(transcripts)})"
                                                                          if len(transcripts) > 1 else ""))
            try:
                ev = evaluate(transcript, budget.metered(summarizer), config, chosen, may_vary=summarizer.may_vary,
                              ask_again=again if n <= DETERMINISM_PROBES else None)
            except KeyboardInterrupt:
                budget.interrupt()
                ev = Evaluation(stopped=True)
            if ev.stopped:
                stopped = True
                break
            judged += 1
            _collect_unclear(unclear, ev, n)
            survival = survival.add(ev.survival)
            compacted = compacted or bool(ev.boundaries)
            if ev.infra is not None:
                infra.append(InfraFailure(ev.infra.kind, ev.infra.message, n, ev.infra.output))
            for key, violation in ev.violations.items():
                first_seen.setdefault(key, (transcript, violation))
        failures = []
        ordered = sorted(first_seen.items(), key=lambda kv: str(kv[0]))
        for n, (key, (first, violation)) in enumerate(ordered, 1):
            label = f"shrinking failure {n}/{len(ordered)}: {key[0]} ({key[1] or 'no fact'})"
            failure = _shrink_failure(key, first, violation, summarizer, config, chosen, budget, progress, label,
                                      failures_left=len(ordered) - n + 1)
            failures.append(failure)
            if on_failure is not None:
                on_failure(failure, summarizer.protocol)
        progress.finish()
        incomplete = budget.stopped if stopped else None
        if not stopped and not infra and not compacted:
            incomplete = ("the transcript never reached a compaction: nothing was judged (give it compaction_points "
                          "or a lower --budget)")
    return RunResult(config, config.seed or 0, summarizer.protocol, judged, summarizer.calls,
                     summarizer.cache.hits, tuple(failures), {}, tuple(infra),
                     tuple(len(t.turns) for t in transcripts[:judged]), incomplete,
                     tuple(summarizer.cache.discarded), stats=summarizer.stats, survival=survival,
                     unjudged=unjudged_oracles(config, chosen, tuple(c for t in transcripts for c in t.consumers)),
                     unclear=_ordered(unclear))


def _ordered(unclear: dict) -> tuple[Unclear, ...]:
    """A run's unclear readings in a stable order (by invariant, kind and why), whatever order they showed in."""
    return tuple(u for _, u in sorted(unclear.items(), key=lambda kv: tuple(str(k) for k in kv[0])))


def turn_stats(turns: tuple[int, ...]) -> str:
    if not turns:
        return "no examples"
    return f"{len(turns)} transcripts, {statistics.median(turns):.0f} turns median, {max(turns)} max"
