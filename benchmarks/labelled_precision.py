"""Precision and recall of the oracles on the labelled phrasing set (tests/labelled/*.jsonl).

Per fact kind and per class of phrasing: how many kept rows the oracles
wrongly flag (a violation on a kept row), how many broken rows they catch, and
the share of each side they leave *unclear* (shown for review, neither a
violation nor a pass). Then every row they get wrong or leave unclear, with
the finding or the miss. Asserts nothing.

    python benchmarks/labelled_precision.py [--wrong N] [--file heldout2.jsonl]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests._labelled import Tally, judge, load_rows, table  # noqa: E402


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "n/a"


def _print_table(title: str, rows) -> None:
    """Per group: kept rows (violated on them, unclear on them), broken rows (violated, unclear), then
    precision (violations that were right) and recall (broken rows violated)."""
    print(f"\n{title:30} {'kept':>5} {'violated':>9} {'unclear':>8} {'broken':>7} {'violated':>9} {'unclear':>8}"
          f" {'precision':>10} {'recall':>7}")
    total = Tally("all")
    for t in [*rows, None]:
        if t is None:
            t = total
        else:
            total = Tally("all", *(getattr(total, f) + getattr(t, f) for f in _COUNTS))
        flagged = t.caught + t.false_alarms
        print(f"{t.group:30} {t.kept:5} {t.false_alarms:9} {_share(t.kept_unclear, t.kept):>8} {t.broken:7} "
              f"{t.caught:9} {_share(t.broken_unclear, t.broken):>8} {_share(t.caught, flagged):>10} "
              f"{_share(t.caught, t.broken):>7}")


_COUNTS = ("kept", "false_alarms", "kept_unclear", "broken", "caught", "broken_unclear")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wrong", type=int, default=1000, help="list at most this many wrong or unclear rows")
    parser.add_argument("--file", action="append", help="judge only these files of tests/labelled (by name)")
    args = parser.parse_args()
    judged = [judge(row) for row in load_rows() if not args.file or row.where.split(":")[0] in args.file]
    print(f"{len(judged)} labelled rows")
    _print_table("kind", table(judged, lambda r: r.kind))
    _print_table("class", table(judged, lambda r: r.cls))
    wrong = [j for j in judged if not j.right or j.predicted == "unclear"]
    print(f"\n{len(wrong)} rows judged wrong or unclear:")
    for j in wrong[: args.wrong]:
        what = ("UNCLEAR " + j.row.expected) if j.predicted == "unclear" else (
            "FALSE ALARM" if j.row.expected == "kept" else "MISSED")
        print(f"- {what} {j.row.where} {j.row.id} [{j.row.kind}/{j.row.cls}]")
        print(f"    context: {j.row.context[:300]!r}")
        if j.findings:
            print(f"    found: {'; '.join(j.findings)[:300]}")
        elif j.row.note:
            print(f"    note: {j.row.note[:200]}")


if __name__ == "__main__":
    main()
