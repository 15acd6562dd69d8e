"""Precision and recall of the oracles on the labelled phrasing set (tests/labelled/*.jsonl).

Per fact kind and per class of phrasing: how many kept rows the oracles
wrongly flag (false alarms) and how many broken rows they catch. Then every
row they still get wrong, with the finding or the miss. Asserts nothing.

    python benchmarks/labelled_precision.py [--wrong N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests._labelled import judge, load_rows, table  # noqa: E402


def _print_table(title: str, rows) -> None:
    print(f"\n{title:28} {'kept':>5} {'false alarms':>13} {'precision':>10} {'broken':>7} {'caught':>7} {'recall':>7}")
    totals = [0, 0, 0, 0]
    for group, kept, false_alarms, broken, caught in rows:
        flagged = caught + false_alarms
        precision = f"{caught / flagged:.1%}" if flagged else "n/a"
        recall = f"{caught / broken:.1%}" if broken else "n/a"
        print(f"{group:28} {kept:5} {false_alarms:13} {precision:>10} {broken:7} {caught:7} {recall:>7}")
        for i, v in enumerate((kept, false_alarms, broken, caught)):
            totals[i] += v
    kept, false_alarms, broken, caught = totals
    flagged = caught + false_alarms
    print(f"{'all':28} {kept:5} {false_alarms:13} {caught / flagged if flagged else 0:>10.1%} {broken:7} {caught:7} "
          f"{caught / broken if broken else 0:>7.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wrong", type=int, default=1000, help="list at most this many wrong rows")
    args = parser.parse_args()
    judged = [judge(row) for row in load_rows()]
    print(f"{len(judged)} labelled rows")
    _print_table("kind", table(judged, lambda r: r.kind))
    _print_table("class", table(judged, lambda r: r.cls))
    wrong = [j for j in judged if not j.right]
    print(f"\n{len(wrong)} rows judged wrong:")
    for j in wrong[: args.wrong]:
        what = "FALSE ALARM" if j.row.expected == "kept" else "MISSED"
        print(f"- {what} {j.row.where} {j.row.id} [{j.row.kind}/{j.row.cls}]")
        print(f"    context: {j.row.context[:300]!r}")
        if j.findings:
            print(f"    found: {'; '.join(j.findings)[:300]}")
        elif j.row.note:
            print(f"    note: {j.row.note[:200]}")


if __name__ == "__main__":
    main()
