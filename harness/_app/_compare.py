"""Comparing summarizers on the same transcripts: which failures are new in B, which are fixed.

The gate a team puts in front of a prompt change: every summarizer is run with
the same seed (so on the same generated transcripts) and replayed on the same
corpus; each one after the first is compared with the first, the baseline.
A failure is an (invariant, fact kind) the run found, a corpus entry still
failing, or the summarizer itself failing (raising, hanging, garbage): B
"introduces" one when it has it and A does not, and then the comparison
exits 1. Failures both have are shared, not new: the gate is about change.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness._base._errors import InvalidArgument
from harness._app.corpus._replay import Replay, replay_corpus
from harness._app.reports._document import report_dict
from harness._app._outcome import ExitCode, StopReason, exit_code
from harness._app.running._options import RunConfig
from harness._app.running._results import RunResult
from harness._app.running._run import open_summarizer, run

__all__ = ["Side", "Comparison", "compare", "comparison_dict", "render_comparison_text", "COMPARISON_VERSION"]

#: The layout of ``comparison_dict`` (``compare --report-json``).
COMPARISON_VERSION = 1

#: A failure as compared: ("run", invariant, fact kind), ("corpus", entry file, invariant) or
#: ("summarizer", infra kind, "").
FailureKey = tuple[str, str, str]


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
    ``not_run`` names the sides an interrupt kept from running."""

    sides: tuple[Side, ...]
    not_run: tuple[str, ...] = ()

    @property
    def baseline(self) -> Side:
        return self.sides[0]

    def new(self, side: Side) -> dict[FailureKey, str]:
        """Failures ``side`` has that the baseline does not; a summarizer failure is new where the baseline
        answered (a baseline that failed once does not excuse a side that fails every time)."""
        base = self.baseline.failures()
        base_where = self.baseline.infra_where()
        out = {}
        for key, detail in side.failures().items():
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
        """Failures of the baseline that ``side`` was judged not to have: never claimed for a side that did not
        judge everything (a cut-short run has not reached them), a corpus entry only when judged fixed."""
        mine = side.failures()
        judged_fixed = {o.path.name for o in (side.replay.outcomes if side.replay else ()) if o.status == "fixed"}
        complete = side.judged_everything
        return {k: v for k, v in self.baseline.failures().items()
                if k not in mine and (k[1] in judged_fixed if k[0] == "corpus" else complete)}

    def holds(self, side: Side, key: FailureKey) -> str:
        """``side``'s mark for one failure: "✗" has it, "✓" judged not to, "?" not reached (cut short)."""
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
                         summarizer_failed=any(side.infra_where() for side in self.sides),
                         incomplete=bool(self.not_run) or any(side.incomplete for side in self.sides))


def compare(configs: Sequence[RunConfig], *, labels: Sequence[str] | None = None, corpus: str | None = None,
            on_side: Callable[[int, str], None] | None = None) -> Comparison:
    """Run each configuration (one seed for all) and replay ``corpus`` with each.

    Every summarizer is opened (loaded, its worker started) before any runs, so a typo in the last spec
    is an error at once, not after the baseline's hour. An interrupt ends the comparison after the side
    it stopped: the sides not run are named and the comparison exits 4.
    """
    labels = list(labels or [c.calling.summarizer for c in configs])
    seed = configs[0].generation.seed if configs[0].generation.seed is not None else secrets.randbits(32)
    configs = [c.but(seed=seed) for c in configs]
    seen: dict[tuple[str, str], str] = {}
    for config, label in zip(configs, labels):
        with open_summarizer(config) as summarizer:
            identity = (summarizer.identity, summarizer.protocol)
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
    return Comparison(tuple(sides))


def _interrupted(result: RunResult) -> bool:
    return result.incomplete is not None and result.incomplete.reason is StopReason.INTERRUPTED


def _key_text(key: FailureKey) -> str:
    where, a, b = key
    if where == "run":
        return f"{a} ({b})"
    if where == "corpus":
        return f"corpus entry {a} ({b})"
    return f"the summarizer itself failed ({a})"


_VERDICTS = {ExitCode.VIOLATIONS: "a later summarizer introduces failures the baseline did not have",
             ExitCode.SUMMARIZER: "no new failure, but a summarizer itself failed (raised, hung, returned garbage) "
                                  "somewhere",
             ExitCode.INCOMPLETE: "no new failure in what was judged, but not everything was judged",
             ExitCode.OK: "no new failure"}


def comparison_dict(comparison: Comparison) -> dict[str, Any]:
    """The JSON of ``compare``: each side's full report, and per later side what is new and what is fixed."""
    base = comparison.baseline
    rows = sorted({k for side in comparison.sides for k in side.failures()})
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
                              "fixed": [_key_dict(k, v) for k, v in sorted(comparison.fixed(s).items())]}
                             for s in comparison.sides[1:]],
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
    rows = sorted({k for side in comparison.sides for k in side.failures()})
    width = max([len(_key_text(k)) for k in rows] + [28])
    columns = "  ".join(f"{f'[{i + 1}]':>4}" for i in range(len(comparison.sides)))
    lines += ["", f"{'failure (✗ has it, ? not reached)':<{width}}  {columns}"]
    for key in rows:
        marks = "  ".join(f"{comparison.holds(side, key):>4}" for side in comparison.sides)
        lines.append(f"{_key_text(key):<{width}}  {marks}")
    if not rows:
        lines.append("(no summarizer failed anything)")
    kinds = sorted({kind for side in comparison.sides for kind in side.run.survival.kinds()})
    if kinds:
        lines += ["", f"{'kept over all rounds, per kind':<{width}}  {columns}"]
        for kind in kinds:
            lines.append(f"{kind:<{width}}  " + "  ".join(f"{_kept(side, kind):>4}" for side in comparison.sides))
    for side in comparison.sides[1:]:
        new, fixed = comparison.new(side), comparison.fixed(side)
        lines.append("")
        lines.append(f"{side.label} against {comparison.baseline.label}: {len(new)} new, {len(fixed)} fixed")
        lines += [f"  new   ✗ {_key_text(k)}: {v}" for k, v in sorted(new.items())]
        lines += [f"  fixed ✓ {_key_text(k)}" for k in sorted(fixed)]
    lines.append("")
    lines.append(_VERDICTS[comparison.exit_code])
    return "\n".join(lines)
