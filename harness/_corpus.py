"""Regression corpora: one JSON file per minimal failure, named by its content hash.

An entry records the minimal transcript, the invariant (and fact kind) it
broke, the summarizer it broke, the budget and protocol it ran with, the
harness version and when it was found. The name hashes everything but the
version and the date, so finding the same failure twice writes one file.
Writes are atomic (temporary file, then rename): several CI shards or xdist
workers may save into one directory at once and nothing is lost or half-written.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness._codec import transcript_from_dict, transcript_to_dict
from harness._errors import SchemaError
from harness._model import Transcript
from harness._schema import Reader, check_version

__all__ = ["CORPUS_VERSION", "CorpusEntry", "entry_to_dict", "entry_from_dict", "entry_name", "save_entry",
           "load_entry", "load_corpus", "merge_corpora", "dedupe_corpus"]

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

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.invariant, self.fact_kind)


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
    if protocol not in ("messages", "rich"):
        r.fail("protocol", "'messages' or 'rich'", protocol)
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
    )


def entry_name(entry: CorpusEntry) -> str:
    """The file name: a hash of what makes the failure (not when or by which release it was found)."""
    data = entry_to_dict(entry)
    for volatile in ("found_at", "harness_version", "detail"):
        data.pop(volatile)
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"{digest[:20]}.json"


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_entry(entry: CorpusEntry, directory: str | Path) -> tuple[Path, bool]:
    """Save ``entry`` (atomically); returns its path and whether it was new."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / entry_name(entry)
    if path.exists():
        return path, False
    _write_atomic(path, json.dumps(entry_to_dict(entry), indent=1, ensure_ascii=False) + "\n")
    return path, True


def load_entry(path: str | Path) -> CorpusEntry:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError("<root>", "a readable UTF-8 file", type(exc).__name__, source=str(path)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError("<root>", "valid JSON", f"{exc.msg} at line {exc.lineno} column {exc.colno}",
                          source=str(path)) from None
    return entry_from_dict(data, source=str(path))


def load_corpus(directory: str | Path) -> tuple[list[tuple[Path, CorpusEntry]], list[SchemaError]]:
    """Every entry that loads, and one error per file that does not (the rest still load)."""
    entries, errors = [], []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            entries.append((path, load_entry(path)))
        except SchemaError as exc:
            errors.append(exc)
    return entries, errors


def merge_corpora(destination: str | Path, sources: list[str | Path]) -> tuple[int, int, list[SchemaError]]:
    """Copy every valid entry of ``sources`` into ``destination``: (added, already there, errors)."""
    added = present = 0
    errors: list[SchemaError] = []
    for source in sources:
        entries, bad = load_corpus(source)
        errors.extend(bad)
        for _, entry in entries:
            _, new = save_entry(entry, destination)
            added += new
            present += not new
    return added, present, errors


def dedupe_corpus(directory: str | Path) -> list[Path]:
    """Keep the smallest entry per (summarizer, invariant, fact kind); remove the rest. Returns removed paths."""
    entries, _ = load_corpus(directory)
    best: dict[tuple[str, str, str | None], tuple[Path, CorpusEntry]] = {}
    removed = []
    for path, entry in entries:
        key = (entry.summarizer, entry.invariant, entry.fact_kind)
        if key not in best:
            best[key] = (path, entry)
            continue
        kept_path, kept = best[key]
        size, kept_size = (len(entry.transcript.turns), path.name), (len(kept.transcript.turns), kept_path.name)
        loser = path if size >= kept_size else kept_path
        if loser == kept_path:
            best[key] = (path, entry)
        loser.unlink()
        removed.append(loser)
    return removed


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()
