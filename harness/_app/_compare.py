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

import dataclasses
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness._app._replay import Replay, replay_corpus
from harness._app._report import report_dict
from harness._app._runner import RunConfig, RunResult, run

__all__ = ["Side", "Comparison", "compare", "comparison_dict", "render_comparison_text", "COMPARISON_VERSION"]

#: The layout of ``comparison_dict`` (``compare --report-json``).
COMPARISON_VERSION = 1

#: A failure as compared: ("run", invariant, fact kind), ("corpus", entry file, invariant) or
#: ("summarizer", infra kind, "").
FailureKey = tuple[str, str, str]


@dataclass(frozen=True)
class Side:
    """One summarizer's run and, with ``--corpus``, its replay of the corpus."""

    spec: str
    run: RunResult
    replay: Replay | None = None

    def failures(self) -> dict[FailureKey, str]:
        """Every failure this side has, with a line saying what it is."""
        out: dict[FailureKey, str] = {}
        for f in self.run.failures:
            out[("run", f.invariant, f.fact_kind or "structure")] = f"{f.detail} (minimal transcript: " \
                                                                    f"{len(f.transcript.turns)} turns)"
        for e in self.run.infra_errors:
            out.setdefault(("summarizer", e.kind, ""), e.message)
        for o in self.replay.outcomes if self.replay is not None else ():
            if o.status == "failing":
                out[("corpus", o.path.name, o.entry.invariant)] = o.detail
            elif o.status == "infra":
                out.setdefault(("summarizer", o.detail.split(":", 1)[0], ""), o.detail)
        return out

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


@dataclass(frozen=True)
class Comparison:
    """Every side, the first being the baseline; ``new``/``fixed`` per later side, against the baseline."""

    sides: tuple[Side, ...]

    @property
    def baseline(self) -> Side:
        return self.sides[0]

    def new(self, side: Side) -> dict[FailureKey, str]:
        """Failures ``side`` has that the baseline does not."""
        base = self.baseline.failures()
        return {k: v for k, v in side.failures().items() if k not in base}

    def fixed(self, side: Side) -> dict[FailureKey, str]:
        """Failures of the baseline that ``side`` no longer has (a corpus entry only when it judged it fixed)."""
        mine = side.failures()
        judged_fixed = {o.path.name for o in (side.replay.outcomes if side.replay else ()) if o.status == "fixed"}
        return {k: v for k, v in self.baseline.failures().items()
                if k not in mine and (k[0] != "corpus" or k[1] in judged_fixed)}

    @property
    def exit_code(self) -> int:
        """1 when a later side introduces a failure; else 4 when some side was not judged completely; else 0."""
        if any(self.new(side) for side in self.sides[1:]):
            return 1
        return 4 if any(side.incomplete for side in self.sides) else 0


def compare(config: RunConfig, summarizers: Sequence[str], *, corpus: str | None = None,
            on_side: Callable[[int, str], None] | None = None) -> Comparison:
    """Run each summarizer with ``config`` (one seed for all) and replay ``corpus`` with each."""
    seed = config.seed if config.seed is not None else secrets.randbits(32)
    sides = []
    for n, spec in enumerate(summarizers, 1):
        if on_side is not None:
            on_side(n, spec)
        side_config = dataclasses.replace(config, summarizer=spec, seed=seed)
        result = run(side_config)
        replay = replay_corpus(corpus, side_config) if corpus is not None else None
        sides.append(Side(spec, result, replay))
    return Comparison(tuple(sides))


def _key_text(key: FailureKey) -> str:
    where, a, b = key
    if where == "run":
        return f"{a} ({b})"
    if where == "corpus":
        return f"corpus entry {a} ({b})"
    return f"the summarizer itself failed ({a})"


def comparison_dict(comparison: Comparison) -> dict[str, Any]:
    """The JSON of ``compare``: each side's full report, and per later side what is new and what is fixed."""
    base = comparison.baseline
    return {
        "comparison_version": COMPARISON_VERSION,
        "baseline": base.spec,
        "seed": base.run.seed,
        "sides": [{"summarizer": s.spec, "report": report_dict(s.run),
                   "corpus": None if s.replay is None else
                   [{"entry": o.path.name, "invariant": o.entry.invariant, "status": o.status, "detail": o.detail}
                    for o in s.replay.outcomes],
                   "incomplete": s.incomplete} for s in comparison.sides],
        "against_baseline": [{"summarizer": s.spec,
                              "new": [_key_dict(k, v) for k, v in sorted(comparison.new(s).items())],
                              "fixed": [_key_dict(k, v) for k, v in sorted(comparison.fixed(s).items())]}
                             for s in comparison.sides[1:]],
        "matrix": [{"failure": _key_text(k), "has": [k in side.failures() for side in comparison.sides]}
                   for k in sorted({k for side in comparison.sides for k in side.failures()})],
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
    """The share of ``kind``'s live obligations kept, summed over every round of every session, as a percentage."""
    tallies = [side.run.survival.tally(kind, r) for r in range(len(side.run.survival.rounds))]
    live = sum(t.live for t in tallies)
    return f"{round(100 * sum(t.kept + t.bent for t in tallies) / live)}%" if live else "-"


def render_comparison_text(comparison: Comparison) -> str:
    """What a person reads: per summarizer its failures, then per later side what is new and fixed."""
    lines = [f"compaction-harness compare · seed {comparison.baseline.run.seed} · baseline {comparison.baseline.spec}"]
    for i, side in enumerate(comparison.sides, 1):
        run_ = side.run
        lines.append(f"[{i}] {side.spec}: {run_.examples_run} examples, {len(run_.failures)} distinct violation(s), "
                     f"{len(run_.infra_errors)} summarizer failure(s)"
                     + (f", corpus {sum(o.status == 'failing' for o in side.replay.outcomes)} of "
                        f"{len(side.replay.outcomes)} entries failing" if side.replay is not None else "")
                     + (f" · incomplete: {side.incomplete}" if side.incomplete else ""))
    rows = sorted({k for side in comparison.sides for k in side.failures()})
    width = max([len(_key_text(k)) for k in rows] + [28])
    columns = "  ".join(f"{f'[{i + 1}]':>4}" for i in range(len(comparison.sides)))
    lines += ["", f"{'failure (✗ has it)':<{width}}  {columns}"]
    for key in rows:
        marks = "  ".join(f"{'✗' if key in side.failures() else '✓':>4}" for side in comparison.sides)
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
        lines.append(f"{side.spec} against {comparison.baseline.spec}: {len(new)} new, {len(fixed)} fixed")
        lines += [f"  new   ✗ {_key_text(k)}: {v}" for k, v in sorted(new.items())]
        lines += [f"  fixed ✓ {_key_text(k)}" for k in sorted(fixed)]
    lines.append("")
    verdict = {1: "a later summarizer introduces failures the baseline did not have",
               4: "no new failure in what was judged, but not everything was judged",
               0: "no new failure"}[comparison.exit_code]
    lines.append(verdict)
    return "\n".join(lines)
