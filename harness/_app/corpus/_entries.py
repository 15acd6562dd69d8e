"""Regression corpora: one JSON file per minimal failure, named by its content hash.

An entry records the minimal transcript, the invariant (and fact kind) it
broke and the others the same root cause broke on it (``also``), the summarizer
it broke, the budget and protocol it ran with, the harness version, when it was
found and the finding's detail. The name hashes everything but the version, the
date, the detail (wording that may change between releases), the trials and
``also``, so finding the same failure twice writes one file. Writes
are atomic (``harness._base._files``): several CI shards or xdist workers may save
into one directory at once, and readers never see a writer's temporary file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness import __version__
from harness._base._codec import transcript_from_dict, transcript_to_dict
from harness._base._errors import HarnessError, SchemaError
from harness._base._files import MISSING, existing_dir, json_files, output_dir, read_json_file, remove_stale_temps, write_atomic
from harness._base._model import Transcript
from harness._base._dialects import DEFAULT_DIALECT, DIALECTS
from harness._base._protocol import PROTOCOLS
from harness._base._schema import Reader, check_version

__all__ = ["CORPUS_VERSION", "CorpusEntry", "Corpus", "entry_to_dict", "entry_from_dict", "entry_name", "save_entry",
           "load_entry", "load_corpus", "merge_corpora", "dedupe_corpus", "CorpusSaver", "entry_of",
           "failure_key", "CorpusChanges", "corpus_changes"]

CORPUS_VERSION = 1


@dataclass(frozen=True, slots=True)
class CorpusEntry:
    invariant: str
    fact_kind: str | None
    summarizer: str
    protocol: str
    budget: int
    transcript: Transcript
    harness_version: str
    found_at: str
    detail: str = ""
    trials: tuple[int, int] | None = None  # (failed, of): a flaky summarizer's observed rate, when confirmed
    also: tuple[str, ...] = ()  # the other invariants this root cause broke on the transcript; replay judges them too
    evidence: str | None = None  # what the violation rests on (absent, near-miss...): with the invariant, its root cause
    dialect: str = DEFAULT_DIALECT  # the provider shape it was found in (--dialect): replay calls with the same
    cause: str | None = None  # "dropped": the compactor dropped the obligation's own turns, whatever invariant saw it

    @property
    def flaky(self) -> bool:
        """Saved from a summarizer that failed it in some trials only."""
        return self.trials is not None and self.trials[0] < self.trials[1]

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.invariant, self.fact_kind)

    @property
    def invariants(self) -> tuple[str, ...]:
        """Every invariant the entry is replayed against: its own first."""
        return (self.invariant, *self.also)


def entry_to_dict(entry: CorpusEntry) -> dict[str, Any]:
    return {
        "schema_version": CORPUS_VERSION,
        "invariant": entry.invariant,
        "fact_kind": entry.fact_kind,
        "summarizer": entry.summarizer,
        "protocol": entry.protocol,
        "budget": entry.budget,
        "harness_version": entry.harness_version,
        "found_at": entry.found_at,
        "detail": entry.detail,
        **({"trials": {"failed": entry.trials[0], "of": entry.trials[1]}} if entry.trials is not None else {}),
        **({"also": list(entry.also)} if entry.also else {}),
        **({"evidence": entry.evidence} if entry.evidence else {}),
        **({"dialect": entry.dialect} if entry.dialect != DEFAULT_DIALECT else {}),
        **({"cause": entry.cause} if entry.cause else {}),
        "transcript": transcript_to_dict(entry.transcript),
    }


def entry_from_dict(data: Any, *, source: str = "<document>") -> CorpusEntry:
    r = Reader(data, source=source)
    check_version(r, CORPUS_VERSION)
    r.child("transcript")  # must be an object; its own fields are checked below
    try:
        transcript = transcript_from_dict(data["transcript"], source=source)
    except SchemaError as exc:  # re-anchor the field path under "transcript."
        raise SchemaError(f"transcript.{exc.field}" if exc.field != "<root>" else "transcript", exc.expected,
                          exc.got, source=source) from None
    protocol = r.str("protocol")
    if protocol not in PROTOCOLS:
        r.fail("protocol", " or ".join(repr(p) for p in PROTOCOLS), protocol)
    dialect = r.str("dialect", default=DEFAULT_DIALECT)
    if dialect not in DIALECTS:
        r.fail("dialect", " or ".join(repr(d) for d in DIALECTS), dialect)
    return CorpusEntry(
        invariant=r.str("invariant", nonempty=True),
        fact_kind=r.optional_str("fact_kind"),
        summarizer=r.str("summarizer", nonempty=True),
        protocol=protocol,
        budget=r.int("budget", minimum=1),
        transcript=transcript,
        harness_version=r.str("harness_version"),
        found_at=r.str("found_at"),
        detail=r.str("detail", default=""),
        trials=_trials(r),
        also=r.str_list("also", default=[], nonempty_items=True),
        evidence=r.optional_str("evidence") or None,
        dialect=dialect,
        cause=r.optional_str("cause") or None,
    )


def _trials(r: Reader) -> tuple[int, int] | None:
    trials = r.child("trials", optional=True)
    if trials is None:
        return None
    failed, of = trials.int("failed", minimum=0), trials.int("of", minimum=0)
    if failed > of:
        trials.fail("failed", f"a number <= of ({of})", failed)
    return failed, of


def entry_name(entry: CorpusEntry) -> str:
    """The file name: a hash of what makes the failure (not when or by which release it was found)."""
    data = entry_to_dict(entry)
    for volatile in ("found_at", "harness_version", "detail", "trials", "also", "evidence", "cause"):
        data.pop(volatile, None)
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"{digest[:20]}.json"


def save_entry(entry: CorpusEntry, directory: str | Path) -> tuple[Path, bool]:
    """Save ``entry`` (atomically); returns its path and whether it was new."""
    directory = output_dir(directory, option="corpus directory")
    path = directory / entry_name(entry)
    if path.exists():
        return path, False
    write_atomic(path, json.dumps(entry_to_dict(entry), indent=1, ensure_ascii=False) + "\n")
    return path, True


def load_entry(path: str | Path) -> CorpusEntry:
    return entry_from_dict(read_json_file(path), source=str(path))


@dataclass(frozen=True, slots=True)
class Corpus:
    """What a corpus directory holds: the entries that load, one error per file that does not,
    and a warning per file skipped (a FIFO, a folder named ``x.json``)."""

    entries: tuple[tuple[Path, CorpusEntry], ...]
    errors: tuple[SchemaError, ...] = ()
    skipped: tuple[str, ...] = field(default=())


def load_corpus(directory: str | Path) -> Corpus:
    """Every entry that loads; a missing directory is a ``PathError``, a bad file an error in the result.

    A file removed by another process while we read (a concurrent dedupe) is
    simply not there: that is not an error.
    """
    files, skipped = json_files(directory)
    entries, errors = [], []
    for path in files:
        try:
            data = read_json_file(path, missing_ok=True)
            if data is not MISSING:
                entries.append((path, entry_from_dict(data, source=str(path))))
        except SchemaError as exc:
            errors.append(exc)
    return Corpus(tuple(entries), tuple(errors), tuple(skipped))


def merge_corpora(destination: str | Path, sources: list[str | Path]) -> tuple[int, int, Corpus]:
    """Copy every valid entry of ``sources`` into ``destination``: (added, already there, what was read).

    Every source must be an existing directory, checked before anything is written.
    """
    for source in sources:
        existing_dir(source, what="corpus merge source")
    output_dir(destination, option="corpus merge destination")
    added = present = 0
    errors, skipped = [], []
    for source in sources:
        corpus = load_corpus(source)
        errors.extend(corpus.errors)
        skipped.extend(corpus.skipped)
        for _, entry in corpus.entries:
            _, new = save_entry(entry, destination)
            added += new
            present += not new
    return added, present, Corpus((), tuple(errors), tuple(skipped))


def dedupe_corpus(directory: str | Path, still_fails: Callable[[Path, CorpusEntry], bool] | None = None
                  ) -> tuple[list[Path], Corpus]:
    """Keep one entry per root cause and fact kind, (summarizer, invariant, fact kind, evidence); remove the rest.

    Two entries of one invariant and kind with different evidence (a dropped literal, a near miss of it)
    are two causes and both stay; an entry saved before entries recorded evidence is a cause of its own.
    Entries of an obligation the compactor dropped (``cause``) are one cause per summarizer and dialect,
    whatever invariant each was saved under, and one entry is kept for each kind of fact it dropped: a
    team that fixes dropped prohibitions and breaks commitments again is still told by its corpus.

    Of one cause's entries the one kept is the one that fails most surely, then the smallest: by the rate
    its trials recorded (a summarizer that does not vary fails always), or, given ``still_fails`` (which
    replays an entry), one that still fails before one that does not. No entry that still fails is
    removed unless one kept for the same cause still fails too.

    Returns the removed paths and what was read (its unreadable files are left alone).
    """
    remove_stale_temps(directory)
    corpus = load_corpus(directory)
    groups: dict[tuple, list[tuple[Path, CorpusEntry]]] = {}
    for path, entry in corpus.entries:
        groups.setdefault(failure_key(entry), []).append((path, entry))
    removed = []
    for members in groups.values():
        if len(members) < 2:
            continue
        failing = {path: still_fails(path, entry) for path, entry in members} if still_fails is not None else {}
        members.sort(key=lambda item: (not failing.get(item[0], True), -_surely(item[1]),
                                       len(item[1].transcript.turns), item[0].name))
        for path, _ in members[1:]:
            path.unlink(missing_ok=True)  # another dedupe may have removed it first
            removed.append(path)
    return removed, corpus


def failure_key(entry: CorpusEntry) -> tuple:
    """What ``dedupe_corpus`` keeps one entry of: an obligation the compactor dropped, per summarizer, dialect and
    fact kind; any other failure per summarizer, invariant, fact kind and evidence."""
    if entry.cause:
        return ("cause", entry.summarizer, entry.dialect, entry.cause, entry.fact_kind)
    return (entry.summarizer, entry.invariant, entry.fact_kind, entry.evidence)


@dataclass(frozen=True, slots=True)
class CorpusChanges:
    """What a corpus gained between two states of it (before and after ``merge`` and ``dedupe``): entries of a
    failure it had no entry of (``new``), of those the ones a summarizer that varies never reproduced in the
    fresh trials that confirmed them (``unsure``: perhaps one random hit), entries that took the place of a
    removed one of the same failure (``replaced``: new name -> the old), and removals nothing replaced."""

    new: tuple[tuple[Path, CorpusEntry], ...]
    unsure: tuple[tuple[Path, CorpusEntry], ...]
    replaced: tuple[tuple[Path, CorpusEntry, Path, CorpusEntry], ...]
    removed: tuple[tuple[Path, CorpusEntry], ...]


def corpus_changes(before: str | Path, after: str | Path) -> CorpusChanges:
    """The changes from corpus directory ``before`` to ``after`` (both must load: see ``CorpusChanges``)."""
    old = {path.name: (path, entry) for path, entry in load_corpus(before).entries}
    now = {path.name: (path, entry) for path, entry in load_corpus(after).entries}
    added = [now[name] for name in sorted(now.keys() - old.keys())]
    gone = {failure_key(entry): (path, entry) for path, entry in (old[n] for n in sorted(old.keys() - now.keys()))}
    replaced = [(path, entry, *gone[failure_key(entry)]) for path, entry in added if failure_key(entry) in gone]
    rest = [(path, entry) for path, entry in added if failure_key(entry) not in gone]
    unsure = [(path, entry) for path, entry in rest if entry.trials is not None and entry.trials[1] and not entry.trials[0]]
    taken = {old_path.name for *_, old_path, _ in replaced}
    return CorpusChanges(tuple(item for item in rest if item not in unsure), tuple(unsure), tuple(replaced),
                         tuple(item for key, item in gone.items() if item[0].name not in taken))


def _surely(entry: CorpusEntry) -> float:
    """How surely an entry fails, as its trials recorded it: 1 when it was not tried again (a summarizer that
    does not vary fails every time)."""
    return 1.0 if entry.trials is None or not entry.trials[1] else entry.trials[0] / entry.trials[1]


class CorpusSaver:
    """Saves each failure of a run the moment it is final (``run(on_failure=saver)``); a failed save is
    recorded, never fatal.

    ``failure`` is anything with ``invariant``, ``fact_kind``, ``transcript`` and
    ``detail`` (a ``harness._app.running._run.Failure``), and ``budget`` if shrinking lowered the run's:
    an entry records the budget its transcript fails at, and replay uses it.
    """

    def __init__(self, directory: str | Path | None, *, summarizer: str, budget: int,
                 dialect: str = DEFAULT_DIALECT):
        self.directory = directory
        self.summarizer = summarizer
        self.budget = budget
        self.dialect = dialect
        self.saved = 0
        self.errors: list[str] = []
        self.stamp = now()
        # By failure signature: the entry file holding it, and whether this run added it (new) or found
        # it already saved; the reports name the file.
        self.files: dict[tuple, tuple[str, bool]] = {}

    def __call__(self, failure, protocol: str) -> None:
        """Save ``failure``, found calling the summarizer with ``protocol`` (as the runner resolved it)."""
        if self.directory is None:
            return
        entry = entry_of(failure, summarizer=self.summarizer, protocol=protocol, budget=self.budget,
                         dialect=self.dialect, found_at=self.stamp)
        try:
            path, added = save_entry(entry, self.directory)
        except (OSError, HarnessError) as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return
        self.saved += added
        signature = getattr(failure, "signature", None)
        if signature is not None:
            self.files[signature] = (str(path), bool(added))


def entry_of(failure, *, summarizer: str, protocol: str, budget: int, dialect: str = DEFAULT_DIALECT,
             found_at: str | None = None) -> CorpusEntry:
    """The corpus entry of a run's failure (see ``CorpusSaver``): what replay, and a comparison's trials, judge."""
    return CorpusEntry(failure.invariant, failure.fact_kind, summarizer, protocol, getattr(failure, "budget", budget),
                       failure.transcript, __version__, found_at or now(), failure.detail,
                       getattr(failure, "trials", None), tuple(invariant for invariant, _ in getattr(failure, "also", ())),
                       getattr(failure, "evidence", None), dialect, getattr(failure, "cause", None))


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()
