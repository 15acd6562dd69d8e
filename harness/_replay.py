"""Replaying a corpus: which saved failures does a summarizer still have?"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness._adapters import Summarizer
from harness._corpus import CorpusEntry, load_corpus
from harness._errors import SchemaError
from harness._progress import Progress

__all__ = ["ReplayOutcome", "replay_entry", "replay_corpus"]


@dataclass(frozen=True, slots=True)
class ReplayOutcome:
    """``failing``: the invariant is still broken; ``fixed``: it holds now; ``infra``: the summarizer failed."""

    path: Path
    entry: CorpusEntry
    status: str
    detail: str


def replay_entry(path: Path, entry: CorpusEntry, summarizer: Summarizer) -> ReplayOutcome:
    from harness._runner import RunConfig, evaluate
    from oracles import select

    config = RunConfig(summarizer=summarizer.spec, protocol=summarizer.protocol, budget=entry.budget)
    chosen = select(only=[entry.invariant]) if entry.invariant in {o.id for o in select()} else select()
    ev = evaluate(entry.transcript, summarizer, config, chosen)
    if ev.infra is not None:
        return ReplayOutcome(path, entry, "infra", f"{ev.infra.kind}: {ev.infra.message}")
    if entry.key in ev.violations:
        return ReplayOutcome(path, entry, "failing", ev.violations[entry.key][0].detail)
    return ReplayOutcome(path, entry, "fixed", "the invariant holds now")


def replay_corpus(directory: str | Path, spec: str, *, protocol: str | None = None, timeout: float = 30.0,
                  isolation: str = "process", quiet: bool = False) -> tuple[list[ReplayOutcome], list[SchemaError]]:
    """Replay every loadable entry; files that fail to load are returned as errors, the rest still run."""
    entries, errors = load_corpus(directory)
    summarizers: dict[str, Summarizer] = {}
    progress = Progress(len(entries), label="replaying", quiet=quiet)
    outcomes = []
    try:
        for path, entry in entries:
            # The protocol belongs to the summarizer: the entry's only when it is the same summarizer.
            chosen_protocol = protocol or (entry.protocol if entry.summarizer == spec else "messages")
            if chosen_protocol not in summarizers:
                summarizers[chosen_protocol] = Summarizer(spec, protocol=chosen_protocol, timeout=timeout,
                                                          isolation=isolation)
            outcomes.append(replay_entry(path, entry, summarizers[chosen_protocol]))
            progress.advance()
    finally:
        for s in summarizers.values():
            s.close()
        progress.finish()
    return outcomes, errors
