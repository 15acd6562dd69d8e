"""The labelled phrasing set: hand-written (obligation, context, verdict) rows, judged through ``audit``.

Rows live in ``tests/labelled/*.jsonl`` and were written without reading the
oracles or the generator's phrasing tables. A row is "kept" when a careful
reader agrees the context keeps the obligation faithfully (or, for one that
ended, does not present it as binding), "broken" otherwise. The oracles call
a row broken when any of them reports a violation on it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from harness._app.judging._audit import audit, obligations_from_dict
from harness._base._codec import transcript_from_dict
from harness._base._model import Role, Turn
from harness._base._protocol import CompactionResult

ROWS_DIR = Path(__file__).resolve().parent / "labelled"


@dataclass(frozen=True)
class Row:
    """One labelled row, and where it came from (file and line) for messages."""

    id: str
    kind: str
    cls: str
    expected: str
    source: list
    fact: dict
    context: str
    note: str
    where: str
    outcome: str | None = None  # on a broken row, what a careful reader says happened (``harness.oracles.Outcome``)


@dataclass(frozen=True)
class Judged:
    row: Row
    predicted: str
    findings: tuple[str, ...]
    outcomes: tuple[str, ...] = ()  # the one word each violation says happened

    @property
    def right(self) -> bool:
        """A verdict that is not wrong: a violation on a broken row, none on a kept row (an unclear
        reading is neither right nor wrong; it is counted apart)."""
        return self.predicted == self.row.expected or self.predicted == "unclear"


def load_rows(directory: Path = ROWS_DIR) -> list[Row]:
    rows = []
    for path in sorted(directory.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            data = json.loads(line)
            rows.append(Row(data["id"], data["kind"], data["class"], data["expected"], data["source"], data["fact"],
                            data["context"], data.get("note", ""), f"{path.name}:{number}",
                            (data.get("outcome") or "").replace("_", "-") or None))
    return rows


def judge(row: Row) -> Judged:
    """The oracles' verdict on one row: broken if any oracle reports a violation."""
    turns = transcript_from_dict({"schema_version": 1, "turns": row.source}, source=row.where).turns
    obligation = {"id": "F0", "kind": row.kind, **row.fact}
    facts = obligations_from_dict({"obligations": [obligation]}, turns=turns, source=row.where)
    result = CompactionResult((Turn(Role.SYSTEM, row.context),))
    verdict = audit(turns, result, facts).verdict
    findings = tuple(f"{f.invariant}: {f.detail}" for f in verdict.violations)
    if findings:
        return Judged(row, "broken", findings, tuple(str(f.outcome) for f in verdict.violations))
    unclear = tuple(f"{f.invariant} (unclear): {f.detail}" for f in verdict.unclear)
    return Judged(row, "unclear" if unclear else "kept", unclear)


@dataclass(frozen=True)
class Tally:
    """One group's rows: kept rows and how many were flagged or unclear; broken rows, caught or unclear."""

    group: str
    kept: int = 0
    false_alarms: int = 0
    kept_unclear: int = 0
    broken: int = 0
    caught: int = 0
    broken_unclear: int = 0


def table(judged: list[Judged], key) -> list[Tally]:
    """One ``Tally`` per group, in sorted order."""
    counts: dict[str, Counter] = {}
    for j in judged:
        c = counts.setdefault(key(j.row), Counter())
        side = "kept" if j.row.expected == "kept" else "broken"
        c[side] += 1
        if j.predicted == "unclear":
            c[f"{side}_unclear"] += 1
        elif j.predicted == "broken":
            c["false_alarms" if side == "kept" else "caught"] += 1
    return [Tally(g, **c) for g, c in sorted(counts.items())]
