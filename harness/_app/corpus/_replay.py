"""Replaying a corpus: which saved failures does a summarizer still have?"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness._base._errors import InfraError
from harness._app.calling._summarizer import Summarizer
from harness._app.corpus._entries import Corpus, CorpusEntry, load_corpus
from harness._app._progress import Progress
from harness._app._outcome import ExitCode, exit_code
from harness._app.running._evaluate import evaluate
from harness._app.running._options import Judging, RunConfig
from harness._app.running._run import open_summarizer
from harness.oracles import select

__all__ = ["ReplayOutcome", "Replay", "Replayer", "TrialCount", "replay_entry", "replay_corpus", "run_trials"]


@dataclass(frozen=True, slots=True)
class ReplayOutcome:
    """``failing``: the invariant is still broken; ``fixed``: it holds now; ``infra``: the summarizer failed;
    ``unjudged``: the entry could not be judged (its oracle is not registered, or no compaction happened);
    ``not-reproduced``: an entry saved from a flaky summarizer, or replayed by one that may vary, held in every
    trial (not proof of a fix). ``trials`` is (failed, of) when the entry was judged by fresh trials."""

    path: Path
    entry: CorpusEntry
    status: str
    detail: str
    trials: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Replay:
    """A corpus replayed: one outcome per entry judged, what could not be read, and whether it was cut short."""

    outcomes: tuple[ReplayOutcome, ...]
    corpus: Corpus
    interrupted: bool = False

    @property
    def exit_code(self) -> ExitCode:
        """1 still failing; 2 unreadable or unjudgeable entries; 3 the summarizer failed; 4 interrupted; 0 all fixed."""
        statuses = {o.status for o in self.outcomes}
        return exit_code(violated="failing" in statuses, unusable=bool(self.corpus.errors) or "unjudged" in statuses,
                         summarizer_failed="infra" in statuses, incomplete=self.interrupted)


def replay_entry(path: Path, entry: CorpusEntry, summarizer: Summarizer, config: RunConfig | None = None
                 ) -> ReplayOutcome:
    """Judge one entry with the entry's own budget and its own oracles (its invariant and those the same root
    cause broke, ``also``): "failing" if any of them still shows, "fixed" only if they judged it."""
    config = config or RunConfig.of(summarizer.spec)
    judging = dataclasses.replace(config.judging, budget=entry.budget, dialect=entry.dialect)
    trials = config.limits.trials
    if entry.invariant not in {o.id for o in select()}:
        return ReplayOutcome(path, entry, "unjudged", f"its oracle {entry.invariant!r} is not registered in this "
                                                     f"harness: nothing was judged")
    if trials and (entry.flaky or summarizer.may_vary or judging.may_vary):
        return _replay_trials(path, entry, summarizer, judging, trials)
    ev = evaluate(entry.transcript, summarizer, judging, _oracles(entry), **_asking(entry, summarizer))
    shown = _shown(ev, entry)
    if shown is not None:  # a violation counts even if the summarizer failed in a later round
        return ReplayOutcome(path, entry, "failing", shown)
    if ev.infra is not None:
        return ReplayOutcome(path, entry, "infra", f"{ev.infra.kind}: {ev.infra.message}")
    if not ev.boundaries:
        return ReplayOutcome(path, entry, "unjudged", "no compaction happened in its transcript: nothing was judged")
    return ReplayOutcome(path, entry, "fixed", "the invariant holds now")


def _replay_trials(path: Path, entry: CorpusEntry, summarizer: Summarizer, judging: Judging, trials: int) -> ReplayOutcome:
    """An entry saved from a flaky summarizer, or replayed by one that may vary: ``--trials`` fresh sessions,
    the cache bypassed."""
    count = run_trials(entry, summarizer, judging, trials)
    saved = "" if entry.trials is None else f"; saved failing {entry.trials[0]} of {entry.trials[1]}"
    if count.failed:
        return ReplayOutcome(path, entry, "failing", f"{count.detail}{saved}", (count.failed, count.done))
    if count.infra is not None:
        return ReplayOutcome(path, entry, "infra", f"{count.infra.kind}: {count.infra.message}", (0, count.done))
    return ReplayOutcome(path, entry, "not-reproduced", f"not reproduced in {count.done} trials ({saved[2:] or 'it may vary'}"
                                                        f": not proof of a fix)", (0, count.done))


@dataclass(frozen=True, slots=True)
class TrialCount:
    """Fresh trials of one entry: how many showed one of its invariants on its fact kind, of how many were
    judged (a trial in which the summarizer itself failed first is not one); the first such failure's detail,
    and the first time the summarizer failed."""

    failed: int
    done: int
    detail: str = ""
    infra: InfraError | None = None


def run_trials(entry: CorpusEntry, summarizer: Summarizer, judging: Judging, trials: int) -> TrialCount:
    """Ask ``entry``'s transcript ``trials`` times afresh (the cache bypassed), each session judged until one of
    the entry's invariants shows on its kind (``judging``'s budget and dialect are the entry's own)."""
    judging = dataclasses.replace(judging, budget=entry.budget, dialect=entry.dialect)
    failed = done = 0
    detail, infra = "", None
    for _ in range(trials):
        ev = evaluate(entry.transcript, summarizer.ask_again, judging, _oracles(entry),
                      until=None if entry.also else entry.key, **_asking(entry, summarizer))
        shown = _shown(ev, entry)
        if shown is not None:
            failed += 1
            detail = detail or shown
        elif ev.infra is not None:  # the summarizer failed before the session could show it: not a trial that held
            infra = infra or ev.infra
            continue
        done += 1
    return TrialCount(failed, done, detail, infra)


def _oracles(entry: CorpusEntry):
    """The registered oracles among the entry's invariants (its own is checked to be one first)."""
    registered = {o.id for o in select()}
    return select(only=[invariant for invariant in entry.invariants if invariant in registered])


def _shown(ev, entry: CorpusEntry) -> str | None:
    """The detail of the first of the entry's invariants that the evaluation shows on its fact kind, or None."""
    for invariant in entry.invariants:
        violation = ev.violations.get((invariant, entry.fact_kind))
        if violation is not None:
            detail = violation[0].detail
            return detail if invariant == entry.invariant else f"{invariant}: {detail}"
    return None


def _asking(entry: CorpusEntry, summarizer: Summarizer) -> dict:
    """A ``deterministic`` entry asks each request again in a restarted worker, as the run did."""
    if entry.invariant != "deterministic":
        return {}
    return {"ask_again": summarizer.ask_fresh, "may_vary": summarizer.may_vary}


def recorded_protocol(entry: CorpusEntry, spec: str) -> str | None:
    """The protocol saved with an entry counts only for the summarizer that entry was saved from."""
    return entry.protocol if entry.summarizer == spec else None


class Replayer:
    """Replays entries one at a time, opening the summarizer once per protocol the entries recorded (with room
    for the largest entry's result), and closing them together: what ``replay`` and ``corpus dedupe
    --summarizer`` judge entries with."""

    def __init__(self, config: RunConfig, entries: Iterable[CorpusEntry]):
        self._config = config
        self._largest = max((entry.budget for entry in entries), default=None)  # the result size it may need
        self._open: dict[str | None, Summarizer] = {}

    def __enter__(self) -> Replayer:
        return self

    def __call__(self, path: Path, entry: CorpusEntry) -> ReplayOutcome:
        return replay_entry(path, entry, self.summarizer_for(entry), self._config)

    def summarizer_for(self, entry: CorpusEntry, *, recorded: bool = True) -> Summarizer:
        """The summarizer that judges ``entry``: with the protocol it recorded for this summarizer, if any (and
        ``recorded``: a run's own finding is asked as its run asked it)."""
        protocol = recorded_protocol(entry, self._config.calling.summarizer) if recorded else None
        if protocol not in self._open:
            self._open[protocol] = open_summarizer(self._config, recorded_protocol=protocol, budget=self._largest)
        return self._open[protocol]

    def __exit__(self, *exc) -> None:
        for summarizer in self._open.values():
            summarizer.close()


def replay_corpus(directory: str | Path, config: RunConfig) -> Replay:
    """Replay every loadable entry of ``directory`` (which must exist) against ``config``'s summarizer.

    The protocol is decided per entry by ``resolve_protocol``: ``--protocol``
    if given, else the function's declared one, else the one the entry recorded
    for this same summarizer. Ctrl-C (or SIGTERM via the CLI) stops the replay
    and reports the entries judged so far.
    """
    corpus = load_corpus(directory)
    if not corpus.entries:  # nothing to replay: still load the summarizer, so a misspelled one is exit 2 tonight
        open_summarizer(config).close()
    progress = Progress(len(corpus.entries), label="replaying", quiet=config.quiet)
    outcomes = []
    interrupted = False
    try:
        with Replayer(config, (entry for _, entry in corpus.entries)) as replay:
            for path, entry in corpus.entries:
                outcomes.append(replay(path, entry))
                progress.advance()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        progress.finish()
    return Replay(tuple(outcomes), corpus, interrupted)
