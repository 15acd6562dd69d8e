"""The one path of every command that judges: sessions judged, each distinct failure shrunk and confirmed,
one ``RunResult``.

``run`` judges the transcripts exploration generates; ``shrink_transcripts`` judges given ones (``shrink``
with one file, ``fuzz`` with what its processes found). Both record what each session showed in one
``_Found`` and end in one ``_conclude``, so a stop (a spend cap, a time limit, an interrupt) or a session
that never compacted is said the same way by each command, and none reports a clean pass it did not
judge.
"""

from __future__ import annotations

import dataclasses
import itertools
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from harness._base._calling import result_chars_for
from harness._base._model import Transcript
from harness._base._tokens import context_tokens
from harness._app._outcome import Stop, StopReason
from harness._app._progress import Progress
from harness._app.calling._cache import CallCache
from harness._app.calling._summarizer import Summarizer
from harness._app.judging._judge import Evaluation, StopJudging, evidence_of
from harness._app.judging._survival import Survival
from harness._app.running._budget import Budget, asker
from harness._app.running._causes import Cause, Key, Signature, causes, shown_violations
from harness._app.running._database import SavedFailure, SharedDatabase, namespace_of, open_database
from harness._app.running._evaluate import check_consumers, evaluate
from harness._app.running._exploration import (DETERMINISM_PROBES, Prefetched, generate, judge_in_order, probed,
                                               run_strategy, stages)
from harness._app.running._options import RunConfig
from harness._app.running._results import (Degradation, Failure, InfraFailure, RunResult, Sessions, Unclear,
                                           collect_unclear, degradations_of, kind_warnings, ordered_unclear,
                                           unjudged_oracles)
from harness._app.running._shrink import shrink_failure
from harness.oracles import select
from harness.strategies import PART_DIALECTS, load_background, with_provider_parts
from harness.strategies import expand as expand_skeleton

__all__ = ["run", "shrink_transcript", "shrink_transcripts", "open_summarizer", "Explored"]

OnFailure = Callable[[Failure, str], None]


def open_summarizer(config: RunConfig, *, recorded_protocol: str | None = None,
                    cache: CallCache | None = None, budget: int | None = None) -> Summarizer:
    """The summarizer a run calls: its call options, loading within the run's time limit; a result may be as
    large as ``--max-result-chars`` says, or as the default at ``budget`` (the run's) allows."""
    calling = config.calling
    if calling.max_result_chars is None:
        at = config.judging.budget if budget is None else budget
        calling = dataclasses.replace(calling, max_result_chars=result_chars_for(at))
    return Summarizer(calling, cache=cache, recorded_protocol=recorded_protocol,
                      load_timeout=calling.load_timeout(config.limits.max_time))


@dataclass(frozen=True)
class Explored:
    """Exploration done outside this process (``fuzz``'s processes), counted in the result as ``run`` counts
    its own: the examples it judged and the calls they cost, the summarizer failures it met, why it ended
    early, the failures it saw (one not shown again when judged here is said, never dropped) and the
    oracles it could not judge."""

    examples: int
    executions: int
    calls: int
    first_failure_calls: int | None = None
    infra: tuple[InfraFailure, ...] = ()
    stop: Stop | None = None
    seen: frozenset[tuple[str, str | None]] = frozenset()
    unjudged: tuple[tuple[str, str], ...] = ()


class _Found:
    """What the judged sessions showed, in the order they were judged: the first transcript showing each
    root cause (``harness._app.running._causes``), unclear readings, summarizer failures, degradations and
    survival."""

    def __init__(self) -> None:
        self.first_seen: dict[Signature, tuple[Transcript, Cause]] = {}  # each root cause, as seen earliest
        self.seen_with: dict[Signature, set[str]] = {}  # the invariants each cause broke, over every session
        self.seen: dict[Signature, set[Key]] = {}  # each cause's (invariant, fact kind) pairs, over every session
        self.unclear: dict[tuple[str, str | None, str | None], Unclear] = {}
        self.infra: list[InfraFailure] = []
        self.degradations: dict[str, int] = {}
        self.degraded: list[Degradation] = []  # each degrade finding, with its example and round
        self.turns: list[int] = []
        self.rounds = 0
        self.sessions = Sessions()
        self.survival = Survival()
        self.calls = 0  # fresh calls of the sessions recorded so far
        self.replayed = 0  # saved failures judged first (``--database``), not counted as examples
        self.first_failure_calls: int | None = None
        self.sightings: dict[Signature, int] = {}  # in how many of the examples each cause showed: its rate over runs
        self.evidences: dict[Key, set[str | None]] = {}  # what each (invariant, kind)'s violations rested on

    def add(self, transcript: Transcript, ev: Evaluation, calls: int = 0, *, replayed: bool = False) -> bool:
        """Record one session; False when it was stopped before its end (then only its violations count).
        A ``replayed`` one (a saved failure judged first) counts its causes and failures, not as an example."""
        self.calls += calls
        shown = causes(ev, transcript)
        for key, violation in shown_violations(ev):
            self.evidences.setdefault(key, set()).add(evidence_of(violation[0]))
        for cause in shown:
            held = self.first_seen.get(cause.signature)
            if held is None or cause.cost < held[1].cost:  # the earliest round shrinks cheapest
                self.first_seen[cause.signature] = (transcript, cause)
            keys = (cause.key, *(key for key, _ in cause.others))
            self.seen_with.setdefault(cause.signature, set()).update(key[0] for key in keys)
            self.seen.setdefault(cause.signature, set()).update(keys)
        if self.first_seen and self.first_failure_calls is None:
            self.first_failure_calls = self.calls  # the same whatever --jobs is
        if ev.stopped:
            return False
        if replayed:
            self.replayed += 1
            if ev.infra is not None:
                self.infra.append(InfraFailure(ev.infra.kind, f"(a saved failure judged first) {ev.infra.message}", 0,
                                               ev.infra.output))
            return True
        self.turns.append(len(transcript.turns))
        for signature in {cause.signature for cause in shown}:
            self.sightings[signature] = self.sightings.get(signature, 0) + 1
        collect_unclear(self.unclear, ev, len(self.turns))
        self.rounds += len(ev.boundaries)
        self.sessions = self.sessions.add(context_tokens(transcript.turns), ev)
        self.survival = self.survival.add(ev.survival)
        for invariant in ev.degradations:
            self.degradations[invariant] = self.degradations.get(invariant, 0) + 1
        self.degraded.extend(degradations_of(ev, len(self.turns)))
        if ev.infra is not None:
            self.infra.append(InfraFailure(ev.infra.kind, ev.infra.message, len(self.turns), ev.infra.output))
        return True

    def progress(self) -> str:
        return (f"· {len(self.first_seen)} causes seen · {len(self.infra)} infra errors"
                + (f" · {len(self.unclear)} unclear" if self.unclear else ""))

    def why_incomplete(self, budget: Budget, asked: int, *, nothing_compacted: str, fewer: str) -> Stop | None:
        """Why what was asked was not all judged: a stop or cap, no session compacting, fewer sessions judged
        than asked (a summarizer failure says itself, exit 3)."""
        if budget.ended is not None:
            return budget.ended
        if self.infra:
            return None
        if self.turns and not self.rounds:
            return Stop(StopReason.NOTHING_COMPACTED, nothing_compacted)
        if len(self.turns) < asked:
            return Stop(StopReason.FEW_EXAMPLES, fewer)
        return None


def run(config: RunConfig, *, on_failure: OnFailure | None = None) -> RunResult:
    """The ``run`` command as a function: returns everything the report needs.

    All reproducible from the seed: explore ``examples`` transcripts (short, dense ones first, see
    ``harness._app.running._exploration``); then shrink each distinct failure from its first occurrence.
    ``on_failure`` receives each failure, and the protocol the summarizer was called with, as soon as it
    is final (the CLI saves it to the corpus then, so a run killed later loses nothing already shrunk).
    ``--max-time`` or an interrupt ends exploration early; failures found are still shrunk as far as the
    budget allows and reported.
    """
    generation = config.generation
    chosen = select(only=config.judging.only, skip=config.judging.skip)
    check_consumers(generation.consumers)
    run_seed = generation.seed if generation.seed is not None else secrets.randbits(32)
    asked = generation.shard_examples()
    background = load_background(generation.background) if generation.background else None  # fails before any call
    shared = open_database(generation.database, readonly=generation.database_readonly,
                           namespace=database_namespace(config))  # a Redis that does not answer fails here
    progress = Progress(asked, label="examples", quiet=config.quiet)
    strategy = run_strategy(generation, config.judging, background)
    found = _Found()

    parts = config.judging.dialect in PART_DIALECTS  # the provider shapes carry reasoning and compaction items

    def expand(skeleton) -> Transcript:
        transcript = expand_skeleton(skeleton, background=background)
        transcript = with_provider_parts(transcript) if parts else transcript
        return dataclasses.replace(transcript, consumers=generation.consumers) if generation.consumers else transcript

    with open_summarizer(config) as summarizer:
        budget = Budget(config.limits, summarizer)
        summarize = budget.metered(summarizer)
        again = asker(summarizer, budget) if config.limits.trials else None
        probes = probed(generation.examples)

        def judge(item) -> tuple[Transcript, Evaluation, int]:
            index, skeleton = item
            transcript = expand(skeleton)
            before = summarizer.calls_in_this_thread()
            ev = evaluate(transcript, summarize, config.judging, chosen, may_vary=summarizer.may_vary,
                          ask_again=again if index in probes else None)
            return transcript, ev, summarizer.calls_in_this_thread() - before

        def record(transcript: Transcript, ev: Evaluation, calls: int) -> bool:
            """Take one judged example, in generation order; True to stop exploring."""
            judged = found.add(transcript, ev, calls)
            budget.reserve_for(len(found.first_seen))
            if not judged:
                return True
            progress.advance(found.progress())
            return ev.infra is not None and config.limits.stop_on_error

        try:
            saved = _saved_parts(shared, generation)
            _replay_saved(saved[0], shared, found, summarize, config, chosen, summarizer, budget, progress)
            exploration = stages(generation, config.judging, background, strategy)
            if summarizer.options.jobs == 1:
                generated = itertools.count()

                def judge_now(skeleton) -> None:
                    index = next(generated)
                    if not generation.in_shard(index):
                        return  # another shard's example: generated all the same, so every shard sees the seed's
                    if budget.check() is not None or record(*judge((index, skeleton))):
                        raise StopJudging
                try:
                    generate(exploration, run_seed, judge_now)
                except StopJudging:
                    pass
            else:
                prefetched = Prefetched(exploration, run_seed, ahead=4 * summarizer.options.jobs)
                try:
                    mine = ((i, s) for i, s in enumerate(prefetched) if generation.in_shard(i))
                    judge_in_order(mine, judge, record, summarizer.options.jobs, budget)
                finally:
                    prefetched.close()
            _replay_saved(saved[1], shared, found, summarize, config, chosen, summarizer, budget, progress)
        except KeyboardInterrupt:
            budget.interrupt()
        budget.check()
        progress.finish()
        incomplete = found.why_incomplete(
            budget, asked,
            nothing_compacted="no example reached a compaction (raise --max-turns or lower --budget)",
            fewer=f"Hypothesis generated only {len(found.turns)} of {asked} examples"
                  + (f" (of this shard, {generation.shard[0]}/{generation.shard[1]})" if generation.shard else ""))

        def keep(failure: Failure, protocol: str) -> None:
            if shared is not None and not generation.database_readonly:
                shared.save_failure(failure.transcript, failure.budget, failure.signature)  # judged first next run
            if on_failure is not None:
                on_failure(failure, protocol)

        result = _conclude(found, incomplete, config, chosen, summarizer, budget, progress, keep, seed=run_seed)
        warnings = tuple(shared.warnings) if shared is not None else ()
        return dataclasses.replace(result, replayed=found.replayed, warnings=result.warnings + warnings,
                                   background=background.summary() if background is not None else None)


def database_namespace(config: RunConfig) -> str:
    """What a saved example's verdict depends on: the summarizer, its protocol and dialect, the prose rules and
    the token counter (``harness._app.running._database``)."""
    return namespace_of(config.calling.summarizer, config.calling.protocol, config.judging.dialect,
                        config.judging.rules, config.judging.token_counter)


def _saved_parts(shared: SharedDatabase | None, generation) -> tuple[list[SavedFailure], list[SavedFailure]]:
    """The saved failures to judge before exploring, and those to judge after it. Unsharded, or with a
    database of this machine's own, all of them first. A shard K of N sharing a Redis judges every N-th from
    the K-th first, so the shards of a night running side by side see every known failure early between
    them, and the rest once it has explored (by then it has seen most of their causes, and skips those)."""
    if shared is None:
        return [], []
    saved = shared.failures()
    if generation.shard is None or not shared.remote:
        return saved, []
    k, n = generation.shard
    own = saved[k - 1::n] or saved[:1]  # fewer saved than shards: each still starts on one
    return own, [s for s in saved if s not in own]


def _replay_saved(saved: list[SavedFailure], shared: SharedDatabase | None, found: _Found, summarize,
                  config: RunConfig, chosen, summarizer: Summarizer, budget: Budget, progress: Progress) -> None:
    """Judge minimal transcripts earlier runs saved (any shard's): a failure found last night, or by another
    machine, is seen again in the few calls it takes. A transcript of a root cause this run has already seen
    is skipped (shards save their own of one cause); one that no longer fails is deleted from the database,
    unless the summarizer may vary: one session that held proves nothing, and the case is kept."""
    for n, item in enumerate(saved, 1):
        if budget.check() is not None:
            break
        if item.signature is not None and item.signature in found.first_seen:
            continue
        progress.message(f"judging saved failures ({n}/{len(saved)})")
        before = summarizer.calls_in_this_thread()
        ev = evaluate(item.transcript, summarize, config.judging, chosen, budget=item.budget,
                      may_vary=summarizer.may_vary)
        if ev.stopped:
            break
        found.add(item.transcript, ev, summarizer.calls_in_this_thread() - before, replayed=True)
        varies = summarizer.may_vary or config.judging.may_vary
        if not ev.violations and ev.infra is None and not config.generation.database_readonly and not varies:
            shared.forget(item)


def shrink_transcript(transcript: Transcript, config: RunConfig, *,
                      on_failure: OnFailure | None = None) -> RunResult:
    """The ``shrink`` command: minimize every distinct failure of one given transcript."""
    return shrink_transcripts((transcript,), config, on_failure=on_failure)


def shrink_transcripts(transcripts: tuple[Transcript, ...], config: RunConfig, *,
                       on_failure: OnFailure | None = None, explored: Explored | None = None) -> RunResult:
    """Judge the given transcripts, then minimize every distinct failure from the first one showing it.

    What ``shrink`` does with one file, and ``fuzz`` with what the fuzzer found (``explored``: its
    processes called the summarizer inline for coverage and spent the run's time and calls; here it is
    called as the options say, within ``--shrink-calls``, so a finding the summarizer does not repeat is
    said as such).
    """
    chosen = select(only=config.judging.only, skip=config.judging.skip)
    progress = Progress(len(transcripts), label="judging", quiet=config.quiet)
    limits = config.limits if explored is None else dataclasses.replace(config.limits, max_time=None, max_calls=None)
    found = _Found()
    with open_summarizer(config) as summarizer:
        budget = Budget(limits, summarizer)
        again = asker(summarizer, budget) if limits.trials else None
        for n, transcript in enumerate(transcripts, 1):
            progress.message(f"judging {len(transcript.turns)} turns" + (f" ({n}/{len(transcripts)})"
                                                                          if len(transcripts) > 1 else ""))
            before = summarizer.calls
            try:
                ev = evaluate(transcript, budget.metered(summarizer), config.judging, chosen,
                              may_vary=summarizer.may_vary, ask_again=again if n <= DETERMINISM_PROBES else None)
            except KeyboardInterrupt:
                budget.interrupt()
                ev = Evaluation(stopped=True)
            if not found.add(transcript, ev, summarizer.calls - before):
                break
        budget.check()
        incomplete = found.why_incomplete(
            budget, len(transcripts),
            nothing_compacted="the transcript never reached a compaction: nothing was judged (give it "
                              "compaction_points or a lower --budget)",
            fewer=f"judged {len(found.turns)} of {len(transcripts)} transcripts")
        return _conclude(found, incomplete, config, chosen, summarizer, budget, progress, on_failure,
                         seed=config.generation.seed or 0, consumers=tuple(c for t in transcripts for c in t.consumers),
                         explored=explored)


def _conclude(found: _Found, incomplete: Stop | None, config: RunConfig, chosen, summarizer: Summarizer,
              budget: Budget, progress: Progress, on_failure: OnFailure | None, *, seed: int,
              consumers=(), explored: Explored | None = None) -> RunResult:
    """Shrink and confirm each root cause once (sorted, so the order never depends on which showed first),
    then the one result, counting ``explored`` (exploration elsewhere) as if it had been this run's."""
    budget.reserve_for(0)  # judging is over: what it left is for shrinking and trials
    failures = []
    ordered = sorted(found.first_seen.items(), key=lambda kv: str(kv[0]))
    for n, (signature, (first, cause)) in enumerate(ordered, 1):
        key = cause.key
        if len(found.evidences.get(key, ())) > 1:  # another root cause shares its key: shrink this one, not that
            cause = dataclasses.replace(cause, evidence=evidence_of(cause.violation[0]))
        label = f"shrinking failure {n}/{len(ordered)}: {key[0]} ({key[1] or 'no fact'})"
        progress.message(f"{label}, first seen in {len(first.turns)} turns")
        failure = shrink_failure(cause, first, summarizer, config, chosen, budget, progress, label,
                                 failures_left=len(ordered) - n + 1,
                                 seen_with=frozenset(found.seen_with.get(signature, ())),
                                 pairs_seen=frozenset(found.seen.get(signature, ())),
                                 reported=frozenset(f.signature for f in failures))
        failure = dataclasses.replace(failure, sightings=found.sightings.get(signature, 0))
        same = next((i for i, kept in enumerate(failures) if kept.signature == failure.signature), None)
        if same is not None:  # two causes told apart as first seen shrank to one: reported once
            failures[same] = _merged(failures[same], failure)
            continue
        failures.append(failure)
        if on_failure is not None:
            on_failure(failure, summarizer.protocol)
    progress.finish()
    unjudged = dict(unjudged_oracles(config, chosen, consumers))
    examples, calls, infra, first_calls = len(found.turns), summarizer.calls, tuple(found.infra), found.first_failure_calls
    if explored is not None:
        for oracle, why in explored.unjudged:
            unjudged.setdefault(oracle, why)
        incomplete = _explored_incomplete(explored, incomplete, failures)
        examples, calls, first_calls = explored.examples, explored.calls + calls, explored.first_failure_calls
        infra = explored.infra + infra
        config = config.but(examples=max(1, explored.examples))
    return RunResult(config, seed, summarizer.protocol, examples, calls, summarizer.cache.hits, tuple(failures),
                     found.degradations, infra, tuple(found.turns), incomplete, tuple(summarizer.cache.discarded),
                     summarizer.warnings + kind_warnings(chosen), first_calls, summarizer.stats,
                     budget.cap_reached, survival=found.survival, unjudged=tuple(unjudged.items()),
                     unclear=ordered_unclear(found.unclear), sessions=found.sessions,
                     may_vary=summarizer.may_vary or config.judging.may_vary, degraded=tuple(found.degraded))


def _merged(kept: Failure, again: Failure) -> Failure:
    """``kept`` with what ``again`` (the same cause once shrunk) saw besides: the invariants it broke, the
    kinds it was seen on."""
    shown = {kept.invariant, *(invariant for invariant, _ in kept.also)}
    seen = (set(kept.also_seen) | set(again.invariants) | set(again.also_seen)) - shown
    kinds = {kind for kind in (*kept.also_kinds, *again.kinds) if kind is not None} - {kept.fact_kind}
    pairs = sorted({*kept.seen, *again.seen, *((i, again.fact_kind) for i in again.invariants)}, key=str)
    return dataclasses.replace(kept, also_seen=tuple(sorted(seen)), also_kinds=tuple(sorted(kinds)), seen=tuple(pairs),
                               sightings=kept.sightings + again.sightings)


def _explored_incomplete(explored: Explored, own: Stop | None, failures: list[Failure]) -> Stop | None:
    """Why a run that explored elsewhere must not pass as clean: that exploration stopped early, a finding
    it saw did not show again here, judging here stopped, or no example it made reached a compaction."""
    if explored.stop is not None:
        return explored.stop
    shown = {pair for f in failures for pair in f.pairs}
    lost = explored.seen - shown
    if lost:
        named = ", ".join(f"{inv} ({kind or 'structure'})" for inv, kind in sorted(lost, key=str))
        return Stop(StopReason.NOT_REPEATED, f"the fuzzing processes saw {named}, which did not show again when "
                                             f"judged here (a summarizer that answers differently from one call to "
                                             f"the next?)")
    if own is not None:
        return own
    if explored.calls == 0 and not explored.infra and not failures:
        return Stop(StopReason.NOTHING_COMPACTED, f"no example reached a compaction, so nothing was judged "
                                                  f"({explored.examples} of {explored.executions} inputs became "
                                                  f"transcripts)")
    return None
