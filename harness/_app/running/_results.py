"""What a run found: its minimal failures, unclear readings, summarizer failures, and the result a report reads."""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field
from typing import Any

from harness._base._kinds import defined_kinds
from harness._base._model import Consumer, FactKind, Transcript, normalise_kind
from harness._app._outcome import ExitCode, Stop, exit_code
from harness._app.calling._summarizer import CallStats
from harness._app.judging._judge import Evaluation, evidence_of
from harness._app.judging._survival import Survival
from harness._app.shrinking._tally import PassTally
from harness._app.running._options import DEFAULT_BUDGET, RunConfig

__all__ = ["Failure", "Unclear", "Degradation", "InfraFailure", "RunResult", "Sessions", "kind_warnings",
           "unjudged_oracles", "turn_stats", "collect_unclear", "ordered_unclear", "degradations_of"]


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
    shrink_allowance: int | None = None  # the calls its shrinking was allowed (--shrink-calls, or chosen by speed)
    shrink_stopped: Stop | None = None
    budget: int = DEFAULT_BUDGET  # the budget the minimal transcript fails at (shrinking may lower the run's)
    elided: tuple[tuple[int, int, int], ...] = ()  # merged filler: (turn index, source turns, tokens)
    trials: tuple[int, int] | None = None  # (failed, of) in fresh re-asks of the minimal transcript
    boundaries: tuple[int, ...] = ()  # where the minimal session's rounds compacted (up to the failing one)
    planned: tuple[bool, ...] = ()  # per round of those, whether a planned cut forced it (else the trigger fired)
    evidence: str | None = None  # what the violation rests on (``harness.oracles.Evidence``)
    outcome: str | None = None  # what happened to the obligation, in one word (``harness.oracles.Outcome``)
    # The other invariants this root cause breaks on the minimal transcript too, each with its detail; and
    # those it broke only in the sessions it was seen in (``harness._app.running._causes``).
    also: tuple[tuple[str, str], ...] = ()
    also_seen: tuple[str, ...] = ()
    # The other fact kinds the same cause (invariant and evidence) was seen on in the run's sessions, and
    # every (invariant, fact kind) it showed in them.
    also_kinds: tuple[str, ...] = ()
    seen: tuple[tuple[str, str | None], ...] = ()
    # ``"dropped"`` when the compactor dropped the obligation's own turns and wrote nothing for it: one root
    # cause whatever invariant and kind showed it (``harness._app.running._causes``); None when it wrote it wrong.
    cause: str | None = None
    # Tokens its shrinking and trials cost (``CallStats.spent``: the provider's count, else the contexts handed over).
    spent_tokens: int = 0
    # In how many of the run's examples the cause showed (a saved failure judged first not counted): of
    # ``RunResult.examples_run``, its rate over generated transcripts, which nights compare (``_trend``).
    sightings: int = 0
    shrink_passes: tuple[PassTally, ...] = ()  # what each of the shrinker's passes cost and earned on it
    # The compactor's own window (it kept this many messages verbatim, and as many at half the budget), when the
    # minimal transcript is at most a few turns longer: the floor shrinking cannot go under (``shrinking._floor``).
    kept_window: int | None = None

    @property
    def forced(self) -> bool:
        """The round that shows it was forced by a planned cut, not fired by the trigger."""
        return self.round is not None and self.round < len(self.planned) and self.planned[self.round]

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

    @property
    def invariants(self) -> tuple[str, ...]:
        """Every invariant the minimal transcript breaks: the primary one first."""
        return (self.invariant, *(invariant for invariant, _ in self.also))

    @property
    def signature(self) -> tuple[str, str | None]:
        """What tells this root cause from another: ``("dropped", None)`` for a dropped obligation, else the
        invariant and its evidence."""
        return (self.cause, None) if self.cause else (self.invariant, self.evidence)

    @property
    def kinds(self) -> tuple[str | None, ...]:
        """The fact kinds this cause was seen on: its own first."""
        return (self.fact_kind, *self.also_kinds)

    @property
    def pairs(self) -> frozenset[tuple[str, str | None]]:
        """Every (invariant, fact kind) this cause showed: on its minimal transcript, or where it was seen."""
        return frozenset({*((i, self.fact_kind) for i in (*self.invariants, *self.also_seen)), *self.seen})


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



def collect_unclear(seen: dict, ev: Evaluation, example: int) -> None:
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
class Degradation:
    """One degrade finding of a run (honest but coarser: kept, but bent), where it showed: what was bent and
    how, in the finding's own words. Listed for review, never shrunk, never a failure."""

    invariant: str
    fact_kind: str | None
    fact_id: str | None
    detail: str
    expected: str | None
    found: str | None
    evidence: str | None
    outcome: str | None
    example: int
    round: int | None
    boundary: int | None


def degradations_of(ev: Evaluation, example: int) -> tuple[Degradation, ...]:
    """Each degrade finding of one example's session, in the order it was judged."""
    return tuple(Degradation(f.invariant, f.fact_kind, f.fact_id, f.detail, f.expected, f.found, evidence_of(f),
                             None if f.outcome is None else str(f.outcome), example, rnd, boundary)
                 for f, rnd, boundary in ev.degraded)


@dataclass(frozen=True, slots=True)
class InfraFailure:
    """The summarizer failed on one example (``kind`` is one of ``INFRA_KINDS``)."""

    kind: str
    message: str
    example: int
    output: str = ""


@dataclass(frozen=True, slots=True)
class Sessions:
    """How big the judged sessions were and what made them compact: per session its size in tokens and its
    compactions; per compaction its context in tokens; how many compactions the trigger fired and how many a
    planned cut forced; in how many sessions the budget was lowered (a tightening)."""

    tokens: tuple[int, ...] = ()
    rounds: tuple[int, ...] = ()
    requests: tuple[int, ...] = ()
    by_trigger: int = 0
    planned: int = 0
    tightened: int = 0

    def add(self, session_tokens: int, ev: Evaluation) -> Sessions:
        """These sessions and one more, judged as ``ev`` says."""
        return Sessions((*self.tokens, session_tokens), (*self.rounds, len(ev.boundaries)),
                        (*self.requests, *ev.sizes), self.by_trigger + sum(not p for p in ev.planned),
                        self.planned + sum(ev.planned), self.tightened + (len(set(ev.budgets)) > 1))


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
    degradations: dict[str, int]  # oracle id -> how many degrade findings it made (each is in ``degraded``)
    infra_errors: tuple[InfraFailure, ...]
    turns: tuple[int, ...] = field(default=())
    incomplete: Stop | None = None
    cache_discarded: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    first_failure_calls: int | None = None  # summarizer calls made when the first violation was seen
    stats: CallStats = field(default_factory=CallStats)  # calls, retries, tokens, latencies, re-asks
    cap_reached: Stop | None = None  # "--max-calls 300 reached" when a spend cap ended or limited work
    # By failure key, a file holding its minimal transcript, which its reproduce line names (fuzz: a fuzzing
    # session cannot be replayed from a seed, the file can).
    reproduce_files: dict[tuple[str, str | None], str] = field(default_factory=dict)  # by signature
    survival: Survival = field(default_factory=Survival)  # per round and fact kind, over the sessions explored
    unjudged: tuple[tuple[str, str], ...] = ()  # selected oracles that judged nothing, and why (``unjudged_oracles``)
    unclear: tuple[Unclear, ...] = ()  # readings the oracles could not settle, for review (``Unclear``)
    # By signature, the corpus entry file saved for a failure and whether this run added it (``--corpus``).
    corpus_files: dict[tuple[str, str | None], tuple[str, bool]] = field(default_factory=dict)
    replayed: int = 0  # saved failures of the example database judged before generating (``--database``)
    sessions: Sessions = field(default_factory=Sessions)  # how big the sessions were, what made them compact
    background: dict[str, Any] | None = None  # ``Background.summary()`` of --background: files, formats, left out
    may_vary: bool = False  # the summarizer may answer one request differently (--may-vary, compaction_may_vary)
    degraded: tuple[Degradation, ...] = ()  # each degrade finding, in the order the examples were judged

    @property
    def nondeterministic(self) -> bool:
        """The same request was answered differently when asked again."""
        return self.stats.answered_differently > 0

    @property
    def unclear_fails(self) -> bool:
        """The run was told an unclear reading is a failure (``--unclear fail``), and there is one."""
        return bool(self.unclear) and self.config.judging.unclear == "fail"

    @property
    def exit_code(self) -> ExitCode:
        """1 violations (or, with ``--unclear fail``, unclear readings); 3 the summarizer failed; 4 not every
        example was judged; 0 only when all were, cleanly. Unclear readings alone never fail by default."""
        return exit_code(violated=bool(self.failures) or self.unclear_fails, summarizer_failed=bool(self.infra_errors),
                         incomplete=self.incomplete is not None)


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
    if not config.limits.trials and "deterministic" in selected:
        out.append(("deterministic", "--trials 0 asks no request twice"))
    if not (config.generation.consumers or consumers) and "consumer-requirements" in selected:
        out.append(("consumer-requirements", "no consumer was declared (--consumer, or a transcript's consumers)"))
    return tuple(out)



def ordered_unclear(unclear: dict) -> tuple[Unclear, ...]:
    """A run's unclear readings in a stable order (by invariant, kind and why), whatever order they showed in."""
    return tuple(u for _, u in sorted(unclear.items(), key=lambda kv: tuple(str(k) for k in kv[0])))


def turn_stats(turns: tuple[int, ...]) -> str:
    if not turns:
        return "no examples"
    return f"{len(turns)} transcripts, {statistics.median(turns):.0f} turns median, {max(turns)} max"
