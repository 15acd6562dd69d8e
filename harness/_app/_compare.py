"""Comparing summarizers on the same transcripts: which failures are new in B, which are fixed.

The gate a team puts in front of a prompt change: every summarizer is run with
the same seed (so on the same generated transcripts) and replayed on the same
corpus; each one after the first is compared with the first, the baseline.
A failure is an (invariant, fact kind) the run found, a corpus entry still
failing, or the summarizer itself failing (raising, hanging, garbage): B
"introduces" one when it has it and A does not, and then the comparison
exits 1. Failures both have are shared, not new: the gate is about change.

When a summarizer may vary (``--may-vary``, or its own ``compaction_may_vary``), having a failure is not
a yes or no: every failure of any side is asked afresh on every side and new or fixed rest on the rates
(``harness._app._rating``, ``harness._app._rates``); a difference chance explains is unsure, which never
fails the gate. A deterministic summarizer is compared as above.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness._base._errors import InvalidArgument
from harness._app._rates import FAMILY_ALPHA, Change
from harness._app._rating import FailureKey, Rated, rate_failures
from harness._app.corpus._replay import Replay, replay_corpus
from harness._app.reports._document import report_dict
from harness._app._outcome import ExitCode, StopReason, exit_code
from harness._app.running._options import RunConfig
from harness._app.running._results import RunResult
from harness._app.running._run import open_summarizer, run

__all__ = ["Side", "Comparison", "compare", "comparison_dict", "render_comparison_text", "COMPARISON_VERSION",
           "DEFAULT_SETTLE_TRIALS"]

#: The layout of ``comparison_dict`` (``compare --report-json``): 2 added the rates of a varying summarizer.
COMPARISON_VERSION = 2

#: More trials, per side, for each failure the first trials leave unsure (``compare --settle-trials``): with
#: the default three, fifteen a side, enough for a failure two trials in three of one side show and none of
#: the other's to be new or fixed among a dozen compared.
DEFAULT_SETTLE_TRIALS = 12


@dataclass(frozen=True)
class Side:
    """One summarizer's run and, with ``--corpus``, its replay of the corpus. ``label`` names it in reports
    (its spec, with its prompt when the sides differ only by ``--prompt``)."""

    label: str
    run: RunResult
    replay: Replay | None = None

    def failures(self) -> dict[FailureKey, str]:
        """Every failure this side has, with a line saying what it is."""
        out: dict[FailureKey, str] = {}
        for f in self.run.failures:  # every invariant a finding breaks, so a new one is never hidden behind it
            for invariant, detail in ((f.invariant, f.detail), *f.also):
                out.setdefault(("run", invariant, f.fact_kind or "structure"),
                               f"{detail} (minimal transcript: {len(f.transcript.turns)} turns)")
            for invariant, kind in sorted(f.seen, key=str):  # what the same cause showed where it was seen
                out.setdefault(("run", invariant, kind or "structure"),
                               f"{invariant}, the same cause as {f.invariant} ({f.fact_kind or 'structure'}), "
                               f"seen on a {kind or 'structure'} fact")
        for kind, (where, first) in self._infra().items():
            out[("summarizer", kind, "")] = f"in {len(where)} place(s): {first}"
        for o in self.replay.outcomes if self.replay is not None else ():
            if o.status == "failing":
                out[("corpus", o.path.name, o.entry.invariant)] = o.detail
        return out

    def infra_where(self) -> dict[str, frozenset[str]]:
        """Per kind of summarizer failure, where it happened: "example N" of the run, "entry X" of the corpus
        (one seed for all sides, so example N is the same transcript on every side)."""
        return {kind: where for kind, (where, _) in self._infra().items()}

    def _infra(self) -> dict[str, tuple[frozenset[str], str]]:
        """Per kind of summarizer failure: where it happened, and the first message."""
        places: dict[str, list[tuple[str, str]]] = {}
        for e in self.run.infra_errors:
            places.setdefault(e.kind, []).append((f"example {e.example}", e.message))
        for o in self.replay.outcomes if self.replay is not None else ():
            if o.status == "infra":
                places.setdefault(_infra_kind(o.detail), []).append((f"entry {o.path.name}", o.detail))
        return {kind: (frozenset(place for place, _ in items), items[0][1]) for kind, items in places.items()}

    @property
    def judged_everything(self) -> bool:
        """Every example of its run was judged to its end: not cut short, and the summarizer never failed (an
        example it failed in is not judged past that round), so the absence of a failure means something."""
        return (self.incomplete is None and not self.run.infra_errors
                and self.run.examples_run >= self.run.config.generation.examples)

    @property
    def interrupted(self) -> bool:
        return _interrupted(self.run) or (self.replay is not None and self.replay.interrupted)

    @property
    def incomplete(self) -> str | None:
        if self.run.incomplete:
            return self.run.incomplete
        if self.replay is not None and self.replay.interrupted:
            return "the corpus replay was interrupted"
        unjudged = sum(o.status == "unjudged" for o in self.replay.outcomes) if self.replay is not None else 0
        unreadable = len(self.replay.corpus.errors) if self.replay is not None else 0
        if unjudged or unreadable:
            return f"{unjudged} corpus entries could not be judged and {unreadable} could not be read"
        return None


def _infra_kind(detail: str) -> str:
    return detail.split(":", 1)[0]


@dataclass(frozen=True)
class Comparison:
    """Every side, the first being the baseline; ``new``/``fixed`` per later side, against the baseline.
    ``not_run`` names the sides an interrupt kept from running; ``rated`` holds the failures' rates when a
    summarizer may vary (None: each side's failures are compared as found)."""

    sides: tuple[Side, ...]
    not_run: tuple[str, ...] = ()
    rated: Rated | None = None

    @property
    def baseline(self) -> Side:
        return self.sides[0]

    def new(self, side: Side) -> dict[FailureKey, str]:
        """Failures ``side`` has that the baseline does not (rated: fails more often, beyond chance); a summarizer
        failure is new where the baseline answered (a baseline that failed once does not excuse a side that
        fails every time)."""
        base = self.baseline.failures()
        base_where = self.baseline.infra_where()
        out = self.rated.changed(self.sides.index(side), Change.NEW) if self.rated is not None else {}
        for key, detail in side.failures().items():
            if key[0] != "summarizer" and self.rated is not None:
                continue
            if key not in base:
                out[key] = detail
            elif key[0] == "summarizer":
                extra = side.infra_where()[key[1]] - base_where.get(key[1], frozenset())
                if extra:
                    first = min(extra, key=lambda place: (place.split()[0], int(place.split()[1])
                                                          if place.split()[1].isdigit() else place))
                    out[key] = f"{detail.split(': ', 1)[1]} (in {len(extra)} place(s) where the baseline answered, " \
                               f"the first {first})"
        return out

    def fixed(self, side: Side) -> dict[FailureKey, str]:
        """Failures of the baseline that ``side`` was judged not to have (rated: fails less often, beyond chance):
        never claimed for a side that did not judge everything (a cut-short run has not reached them), a
        corpus entry only when judged fixed."""
        if self.rated is not None:
            return self.rated.changed(self.sides.index(side), Change.FIXED)
        mine = side.failures()
        judged_fixed = {o.path.name for o in (side.replay.outcomes if side.replay else ()) if o.status == "fixed"}
        complete = side.judged_everything
        return {k: v for k, v in self.baseline.failures().items()
                if k not in mine and (k[1] in judged_fixed if k[0] == "corpus" else complete)}

    def unsure(self, side: Side) -> dict[FailureKey, str]:
        """Failures only one of ``side`` and the baseline showed in its trials, by a difference chance explains:
        neither new nor fixed until more trials (``--settle-trials``) tell. Empty when nothing varies."""
        return {} if self.rated is None else self.rated.changed(self.sides.index(side), Change.UNSURE)

    def rows(self) -> list[FailureKey]:
        """The failures the matrix shows: every side's (rated: those measured, and the summarizers' own)."""
        keys = {k for side in self.sides for k in side.failures()
                if self.rated is None or k[0] == "summarizer"}
        return sorted(keys | set(self.rated.rates if self.rated is not None else ()))

    def holds(self, side: Side, key: FailureKey) -> str:
        """``side``'s mark for one failure: "✗" has it, "✓" judged not to, "?" not reached (cut short); rated,
        how many of its trials failed ("3/12")."""
        if self.rated is not None and key in self.rated.rates:
            rate = self.rated.rates[key][self.sides.index(side)]
            return f"{rate.failed}/{rate.of}"
        if key in side.failures():
            return "✗"
        if key[0] == "corpus":
            status = next((o.status for o in (side.replay.outcomes if side.replay else ()) if o.path.name == key[1]),
                          None)
            return "✓" if status == "fixed" else "?"
        return "✓" if side.judged_everything else "?"

    @property
    def exit_code(self) -> ExitCode:
        """As ``run``'s: 1 a later side introduces a failure; 3 some side's summarizer itself failed; 4 some side
        was not judged completely (or not run at all); 0 only when every side was judged cleanly."""
        return exit_code(violated=any(self.new(side) for side in self.sides[1:]),
                         summarizer_failed=any(side.infra_where() for side in self.sides)
                         or (self.rated is not None and bool(self.rated.summarizer_failed)),
                         incomplete=bool(self.not_run) or any(side.incomplete for side in self.sides)
                         or (self.rated is not None and self.rated.incomplete is not None))


def compare(configs: Sequence[RunConfig], *, labels: Sequence[str] | None = None, corpus: str | None = None,
            on_side: Callable[[int, str], None] | None = None, settle: int = DEFAULT_SETTLE_TRIALS) -> Comparison:
    """Run each configuration (one seed for all) and replay ``corpus`` with each.

    Every summarizer is opened (loaded, its worker started) before any runs, so a typo in the last spec
    is an error at once, not after the baseline's hour. An interrupt ends the comparison after the side
    it stopped: the sides not run are named and the comparison exits 4. When any summarizer may vary (and
    ``--trials`` is not 0), every failure is then rated on every side, ``settle`` more trials settling the
    unsure ones (``harness._app._rating``).
    """
    labels = list(labels or [c.calling.summarizer for c in configs])
    seed = configs[0].generation.seed if configs[0].generation.seed is not None else secrets.randbits(32)
    configs = [c.but(seed=seed) for c in configs]
    seen: dict[tuple[str, str], str] = {}
    varies = False
    for config, label in zip(configs, labels):
        with open_summarizer(config) as summarizer:
            identity = (summarizer.identity, summarizer.protocol)
            varies = varies or summarizer.may_vary or config.judging.may_vary
        if identity in seen:
            raise InvalidArgument(f"{label!r} runs the same code as {seen[identity]!r} (the same function, or the "
                                  f"same model and prompt): comparing them compares nothing")
        seen[identity] = label
    sides: list[Side] = []
    for n, (config, label) in enumerate(zip(configs, labels), 1):
        if on_side is not None:
            on_side(n, label)
        result = run(config)
        replay = replay_corpus(corpus, config) if corpus is not None and not _interrupted(result) else None
        sides.append(Side(label, result, replay))
        if sides[-1].interrupted:
            return Comparison(tuple(sides), tuple(labels[n:]))
    if not varies or not configs[0].limits.trials:
        return Comparison(tuple(sides))
    rated = rate_failures(configs, [s.run for s in sides], [s.replay for s in sides], settle=settle,
                          quiet=configs[0].quiet)
    return Comparison(tuple(sides), rated=rated)


def _interrupted(result: RunResult) -> bool:
    return result.incomplete is not None and result.incomplete.reason is StopReason.INTERRUPTED


def _key_text(key: FailureKey) -> str:
    where, a, b = key
    if where == "run":
        return f"{a} ({b})"
    if where == "corpus":
        return f"corpus entry {a} ({b})"
    return f"the summarizer itself failed ({a})"


#: How rates are compared, as reports say it.
_TEST = (f"Fisher's exact test, two-sided, each at the family's {FAMILY_ALPHA} divided by the number of tests "
         "that could reach it (Bonferroni, with Tarone's count)")

_VERDICTS = {ExitCode.VIOLATIONS: "a later summarizer introduces failures the baseline did not have",
             ExitCode.SUMMARIZER: "no new failure, but a summarizer itself failed (raised, hung, returned garbage) "
                                  "somewhere",
             ExitCode.INCOMPLETE: "no new failure in what was judged, but not everything was judged",
             ExitCode.OK: "no new failure"}


def comparison_dict(comparison: Comparison) -> dict[str, Any]:
    """The JSON of ``compare``: each side's full report, and per later side what is new and what is fixed."""
    base = comparison.baseline
    rows = comparison.rows()
    rated = comparison.rated
    return {
        "comparison_version": COMPARISON_VERSION,
        "baseline": base.label,
        "seed": base.run.seed,
        "verdict": _VERDICTS[comparison.exit_code],
        "sides": [{"summarizer": s.label, "report": report_dict(s.run),
                   "corpus": None if s.replay is None else
                   [{"entry": o.path.name, "invariant": o.entry.invariant, "status": o.status, "detail": o.detail}
                    for o in s.replay.outcomes],
                   "incomplete": s.incomplete} for s in comparison.sides],
        "not_run": list(comparison.not_run),
        "against_baseline": [{"summarizer": s.label,
                              "new": [_key_dict(k, v) for k, v in sorted(comparison.new(s).items())],
                              "fixed": [_key_dict(k, v) for k, v in sorted(comparison.fixed(s).items())],
                              "unsure": [_key_dict(k, v) for k, v in sorted(comparison.unsure(s).items())]}
                             for s in comparison.sides[1:]],
        "rates": None if rated is None else {
            "test": _TEST, "family_alpha": FAMILY_ALPHA, "tests": rated.tests, "alpha": rated.alpha,
            "trials": rated.trials, "settle_trials": rated.settle, "incomplete": rated.incomplete,
            "summarizer_failed": list(rated.summarizer_failed),
            "failures": [{**_key_dict(k, rated.details[k]), "rates": [r.to_dict() for r in rated.rates[k]],
                          "against_baseline": [{"change": str(v.change), "p_value": v.p_value}
                                               for v in (rated.verdict(k, i) for i in range(1, len(comparison.sides)))]}
                         for k in sorted(rated.rates)]},
        "matrix": [{"failure": _key_text(k), "marks": [comparison.holds(side, k) for side in comparison.sides]}
                   for k in rows],
        "kept_per_kind": [{"kind": kind, "kept": [_kept(side, kind) for side in comparison.sides]}
                          for kind in sorted({kind for side in comparison.sides for kind in side.run.survival.kinds()})],
        "exit_code": comparison.exit_code,
    }


def _key_dict(key: FailureKey, detail: str) -> dict[str, str]:
    where, a, b = key
    names = {"run": ("invariant", "fact_kind"), "corpus": ("entry", "invariant"), "summarizer": ("infra_kind", "")}
    out = {"where": where, names[where][0]: a, "detail": detail}
    if names[where][1]:
        out[names[where][1]] = b
    return out


def _kept(side: Side, kind: str) -> str:
    """The share of ``kind``'s settled obligations kept (unclear ones left out), summed over every round of every
    session, as a percentage."""
    tallies = [side.run.survival.tally(kind, r) for r in range(len(side.run.survival.rounds))]
    settled = sum(t.settled for t in tallies)
    return f"{round(100 * sum(t.kept + t.bent for t in tallies) / settled)}%" if settled else "-"


def render_comparison_text(comparison: Comparison) -> str:
    """What a person reads: per summarizer its failures, then per later side what is new and fixed."""
    lines = [f"compaction-harness compare · seed {comparison.baseline.run.seed} · baseline {comparison.baseline.label}"]
    for i, side in enumerate(comparison.sides, 1):
        run_ = side.run
        lines.append(f"[{i}] {side.label}: {run_.examples_run} examples, {len(run_.failures)} finding(s), "
                     f"{len(run_.infra_errors)} summarizer failure(s)"
                     + (f", corpus {sum(o.status == 'failing' for o in side.replay.outcomes)} of "
                        f"{len(side.replay.outcomes)} entries failing" if side.replay is not None else "")
                     + (f" · incomplete: {side.incomplete}" if side.incomplete else ""))
    for label in comparison.not_run:
        lines.append(f"[-] {label}: not run (interrupted)")
    rows = comparison.rows()
    width = max([len(_key_text(k)) for k in rows] + [28])
    mark = max([len(comparison.holds(side, k)) for side in comparison.sides for k in rows] + [4])
    columns = "  ".join(f"{f'[{i + 1}]':>{mark}}" for i in range(len(comparison.sides)))
    legend = "failure (failed trials/trials)" if comparison.rated is not None else "failure (✗ has it, ? not reached)"
    lines += ["", f"{legend:<{width}}  {columns}"]
    for key in rows:
        marks = "  ".join(f"{comparison.holds(side, key):>{mark}}" for side in comparison.sides)
        lines.append(f"{_key_text(key):<{width}}  {marks}")
    if not rows:
        lines.append("(no summarizer failed anything)")
    kinds = sorted({kind for side in comparison.sides for kind in side.run.survival.kinds()})
    if kinds:
        lines += ["", f"{'kept over all rounds, per kind':<{width}}  {columns}"]
        for kind in kinds:
            lines.append(f"{kind:<{width}}  " + "  ".join(f"{_kept(side, kind):>{mark}}" for side in comparison.sides))
    if comparison.rated is not None:
        rated = comparison.rated
        lines += ["", f"A summarizer may vary: each failure was asked {rated.trials} times on every side (its finder's "
                      f"own confirming trials counting), {rated.settle} more where that left it unsure; new and fixed "
                      f"need {_TEST}: p <= {rated.alpha:.2g} ({rated.tests} test(s) counted"
                      + (", each looked at twice)." if rated.settle else ").")]
        if rated.incomplete:
            lines.append(f"! {rated.incomplete}")
        lines += [f"! a summarizer failed in a trial (not counted): {failure}" for failure in rated.summarizer_failed[:5]]
    for side in comparison.sides[1:]:
        new, fixed, unsure = comparison.new(side), comparison.fixed(side), comparison.unsure(side)
        lines.append("")
        lines.append(f"{side.label} against {comparison.baseline.label}: {len(new)} new, {len(fixed)} fixed"
                     + (f", {len(unsure)} unsure" if comparison.rated is not None else ""))
        if comparison.rated is None:
            lines += [f"  new   ✗ {_key_text(k)}: {v}" for k, v in sorted(new.items())]
            lines += [f"  fixed ✓ {_key_text(k)}" for k in sorted(fixed)]
            continue
        lines += [f"  new    ✗ {_key_text(k)}: {v}" for k, v in sorted(new.items())]
        lines += [f"  fixed  ✓ {_key_text(k)}: {v}" for k, v in sorted(fixed.items())]
        lines += [f"  unsure ? {_key_text(k)}: {v}" for k, v in sorted(unsure.items())]
    lines.append("")
    lines.append(_VERDICTS[comparison.exit_code])
    if any(comparison.unsure(side) for side in comparison.sides[1:]):
        lines.append("unsure failures do not fail the gate; more trials settle them: --settle-trials N (now "
                     f"{comparison.rated.settle}) asks N more on every side for exactly those")
    return "\n".join(lines)
