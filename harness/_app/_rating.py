"""Each failure's rate on every side of a comparison, when a summarizer may vary.

Two runs of a varying summarizer do not fail the same transcripts, so a failure one side found and the
other did not is measured, not assumed: its minimal transcript (a run's finding) or its entry (the corpus)
is asked afresh on every side, ``--trials`` times each, and the failure counts in a trial when one of its
invariants shows on its fact kind. A side re-uses the trials that confirmed its own finding, and a corpus
entry its replay's. Where the first trials leave a difference to chance (``Change.UNSURE``), ``settle``
more trials are asked on every side for exactly those failures. ``harness._app._rates`` judges the rates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness._app._progress import Progress
from harness._app._rates import Change, Rate, RateVerdict, family_threshold, judge_rates
from harness._app.corpus._entries import CorpusEntry, entry_of
from harness._app.corpus._replay import Replay, Replayer, run_trials
from harness._app.running._options import RunConfig
from harness._app.running._results import RunResult

__all__ = ["Rated", "FailureKey", "rate_failures"]

#: A failure as compared: ("run", invariant, fact kind), ("corpus", entry file, invariant) or
#: ("summarizer", infra kind, "").
FailureKey = tuple[str, str, str]


@dataclass(frozen=True)
class Rated:
    """Per failure, its rate on every side (in side order) and what it is; ``alpha`` is each test's threshold
    (``harness._app._rates.family_threshold``), ``tests`` how many tests it counts (each looked at twice when
    unsure ones were settled); ``incomplete`` says why some trials were not asked (an interrupt), and
    ``summarizer_failed`` where a summarizer failed in a trial (that trial is not counted)."""

    rates: Mapping[FailureKey, tuple[Rate, ...]]
    details: Mapping[FailureKey, str]
    alpha: float
    tests: int
    trials: int
    settle: int
    incomplete: str | None = None
    summarizer_failed: tuple[str, ...] = ()  # each time a summarizer itself failed in a trial (raised, hung, garbage)

    def verdict(self, key: FailureKey, side: int) -> RateVerdict:
        """The change of ``key`` from the baseline (side 0) to ``side``."""
        rates = self.rates[key]
        return judge_rates(rates[0], rates[side], alpha=self.alpha)

    def changed(self, side: int, change: Change) -> dict[FailureKey, str]:
        """The failures whose change to ``side`` is ``change``, each with what it is and the rates it rests on."""
        out = {}
        for key in sorted(self.rates):
            verdict = self.verdict(key, side)
            if verdict.change is change:
                out[key] = f"{self.details[key]}; {verdict.text}"
        return out


@dataclass(frozen=True)
class _Probe:
    """What one failure is measured on: an entry, the side that found it (whose trials count), and those trials."""

    entry: CorpusEntry
    detail: str
    owner: int | None = None
    owner_rate: Rate | None = None
    from_corpus: bool = False  # asked with the protocol the entry recorded for this summarizer, as replay does


def rate_failures(configs: Sequence[RunConfig], runs: Sequence[RunResult], replays: Sequence[Replay | None], *,
                  settle: int, quiet: bool = False) -> Rated:
    """Every run finding and corpus entry of any side, rated on every side (see the module's docstring)."""
    trials = configs[0].limits.trials
    probes = _probes(configs, runs, replays)
    rates: dict[FailureKey, list[Rate]] = {key: [Rate(0, 0)] * len(configs) for key in probes}
    looks = 2 if settle else 1

    def threshold() -> tuple[float, int]:
        return family_threshold([(r[0], other) for r in rates.values() for other in r[1:]], looks=looks)

    progress = Progress(len(probes) * len(configs), label="rating", quiet=quiet)
    incomplete = None
    failures: list[str] = []  # the summarizer failing in a trial: that side is not judged there
    entries = [p.entry for p in probes.values()]

    def ask(replayer: Replayer, probe: _Probe, n: int, config: RunConfig) -> Rate:
        count = run_trials(probe.entry, replayer.summarizer_for(probe.entry, recorded=probe.from_corpus),
                           config.judging, n)
        if count.infra is not None:
            failures.append(f"{config.calling.summarizer}: {count.infra.kind}: {count.infra.message}")
        return Rate(count.failed, count.done)

    try:
        for side, config in enumerate(configs):
            with Replayer(config, entries) as replayer:
                for key, probe in probes.items():
                    rates[key][side] = _first_rate(key, probe, side, replays[side],
                                                   lambda p, n: ask(replayer, p, n, config), trials)
                    progress.advance()
        alpha, _ = threshold()
        unsure = [key for key in probes if any(judge_rates(rates[key][0], rate, alpha=alpha).change is Change.UNSURE
                                               for rate in rates[key][1:])]
        if settle and unsure:
            progress.finish()
            progress = Progress(len(unsure) * len(configs), label="settling", quiet=quiet)
            for side, config in enumerate(configs):
                with Replayer(config, entries) as replayer:
                    for key in unsure:
                        rates[key][side] = rates[key][side].plus(ask(replayer, probes[key], settle, config))
                        progress.advance()
    except KeyboardInterrupt:
        incomplete = "the trials rating each failure were interrupted: rates count the trials asked until then"
    finally:
        progress.finish()
    alpha, tests = threshold()
    return Rated({k: tuple(v) for k, v in rates.items()}, {k: p.detail for k, p in probes.items()}, alpha, tests,
                 trials, settle, incomplete, tuple(dict.fromkeys(failures)))


def _probes(configs: Sequence[RunConfig], runs: Sequence[RunResult], replays: Sequence[Replay | None]
            ) -> dict[FailureKey, _Probe]:
    """One probe per failure: a run finding's minimal transcript (the first side's to find it), or a corpus entry."""
    probes: dict[FailureKey, _Probe] = {}
    for side, (config, result) in enumerate(zip(configs, runs)):
        for f in result.failures:
            key = ("run", f.invariant, f.fact_kind or "structure")
            if key in probes:
                continue
            # its primary invariant only, as the trials confirming it counted: the finder's own are then comparable
            entry = dataclasses.replace(entry_of(f, summarizer=config.calling.summarizer,
                                                 protocol=config.calling.protocol or "", budget=config.judging.budget,
                                                 dialect=config.judging.dialect), also=())
            owned = Rate(*f.trials) if f.trials is not None and f.trials[1] else None
            probes[key] = _Probe(entry, f"{f.detail} (minimal transcript: {len(f.transcript.turns)} turns)", side, owned)
    for replay in replays:
        for o in replay.outcomes if replay is not None else ():
            probes.setdefault(("corpus", o.path.name, o.entry.invariant), _Probe(o.entry, o.entry.detail or o.detail,
                                                                                      from_corpus=True))
    return probes


def _first_rate(key: FailureKey, probe: _Probe, side: int, replay: Replay | None, ask, trials: int) -> Rate:
    """``side``'s rate of one failure: its own confirming trials, its replay's, or ``trials`` asked now."""
    if probe.owner == side and probe.owner_rate is not None:
        return probe.owner_rate
    if key[0] == "corpus" and replay is not None:
        outcome = next((o for o in replay.outcomes if o.path.name == key[1]), None)
        if outcome is not None and outcome.trials is not None and outcome.trials[1]:
            return Rate(*outcome.trials)
    return ask(probe, trials)
