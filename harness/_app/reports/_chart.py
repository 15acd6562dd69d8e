"""Survival curves as inline SVG, written by hand, and the report's survival section around them.

Our own SVG rather than a charting library: the chart is a few polylines and
labels, and a report must open from a CI artifact with no network, so a
library would have to be inlined into every report for no gain.

What is charted (``chart_columns``): a round reached by few sessions is a
handful of obligations, and its share jumps between 0% and 100% on one of
them, so rounds reached by fewer than ``max(3, 10%)`` of the sessions that
compacted at least once are left out of the chart (never out of the numbers
table); and past round 8 of a long chart, rounds are pooled in bins (9-12,
13-16, 17-24, 25-32, 33-48, ...) whose share is over every obligation-round in
them. A run's page draws one small chart per fact kind (small multiples), each
with the threshold line; ``compare`` draws one chart per side with every kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from harness._app.judging._survival import Survival, Tally
from harness._app.reports._document import report_survival
from harness._app.reports._text import printable

__all__ = ["survival_svg", "kind_colour", "DEFAULT_THRESHOLD", "Column", "Chart", "chart_columns", "survival_section"]

#: The share kept below which a kind's curve is marked (``--survival-threshold``).
DEFAULT_THRESHOLD = 0.9
#: Rounds charted one by one before later ones are pooled, and the most columns charted without pooling.
SINGLE_ROUNDS, MAX_UNPOOLED = 8, 12
#: Points resting on fewer settled obligations than this are drawn faint.
FEW_OBLIGATIONS = 3

# Ten colours people tell apart (Tableau 10), then they repeat with a dash pattern.
_COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
            "#bab0ac")
# (width, height, left, right, top, bottom) of the full chart and of a small multiple.
_FULL = (640, 300, 48, 16, 16, 40)
_SMALL = (300, 160, 34, 10, 10, 30)


def kind_colour(index: int) -> tuple[str, str]:
    """The stroke colour and dash pattern of the ``index``-th kind (sorted by name)."""
    return _COLOURS[index % len(_COLOURS)], "" if index < len(_COLOURS) else "6 3"


@dataclass(frozen=True, slots=True)
class Column:
    """One point on the x axis: rounds ``first`` to ``last`` (0-based, inclusive) pooled."""

    first: int
    last: int
    sessions: int  # the sessions that reached its first round
    tallies: tuple[tuple[str, Tally], ...]

    @property
    def label(self) -> str:
        return str(self.first + 1) if self.first == self.last else f"{self.first + 1}–{self.last + 1}"

    def tally(self, kind: str) -> Tally:
        return dict(self.tallies).get(kind, Tally())

    def share(self, kind: str) -> float | None:
        t = self.tally(kind)
        return (t.kept + t.bent) / t.settled if t.settled else None


@dataclass(frozen=True, slots=True)
class Chart:
    """The columns of a survival chart, drawn from ``survival``; rounds reached by fewer than ``cutoff``
    sessions are left out."""

    survival: Survival
    columns: tuple[Column, ...]
    cutoff: int

    @property
    def charted(self) -> int:
        """How many rounds (from the first) the chart covers."""
        return self.columns[-1].last + 1 if self.columns else 0

    @property
    def pooled(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.first != c.last)

    def column_of(self, r: int) -> int | None:
        return next((i for i, c in enumerate(self.columns) if c.first <= r <= c.last), None)


def chart_columns(survival: Survival) -> Chart:
    """What of ``survival`` is worth a point: rounds reached by at least ``max(3, 10%)`` of the sessions
    (at most all of them), the first 8 one by one and later ones pooled when there are more than 12."""
    first = survival.sessions[0] if survival.sessions else 0
    cutoff = max(1, min(first, max(3, -(-first // 10))))
    shown = 0
    while shown < len(survival.sessions) and survival.sessions[shown] >= cutoff:
        shown += 1
    spans = [(r, r) for r in range(shown)]
    if shown > MAX_UNPOOLED:
        spans, edges = spans[:SINGLE_ROUNDS], [SINGLE_ROUNDS, SINGLE_ROUNDS * 3 // 2]
        while edges[-2] < shown:
            edges.append(edges[-2] * 2)
        spans += [(a, min(b, shown) - 1) for a, b in zip(edges, edges[1:]) if a < shown]
    columns = []
    for a, b in spans:
        pooled: dict[str, Tally] = {}
        for r in range(a, b + 1):
            for kind, t in survival.rounds[r]:
                pooled[kind] = pooled.get(kind, Tally()) + t
        columns.append(Column(a, b, survival.sessions[a], tuple(sorted(pooled.items()))))
    return Chart(survival, tuple(columns), cutoff)


def survival_svg(chart: Chart, threshold: float = DEFAULT_THRESHOLD, *, title: str = "",
                 colour_order: Sequence[str] = (), kinds: Sequence[str] | None = None, small: bool = False) -> str:
    """An SVG chart: x the compaction round (1, 2, ..., then pooled bins), y the share of live obligations
    kept, one curve per fact kind of ``kinds`` (default every one); a ring marks the column holding each
    kind's first round below ``threshold``, when that round is charted.

    ``colour_order`` lists kinds in the order their colours are given, so charts side by side agree
    (default: this chart's kinds, sorted)."""
    width, height, left, right, top, bottom = _SMALL if small else _FULL
    columns = chart.columns
    kinds = list(chart.survival.kinds() if kinds is None else kinds)
    order = list(colour_order) + [k for k in chart.survival.kinds() if k not in colour_order]
    plot_w, plot_h = width - left - right, height - top - bottom
    n = len(columns)

    def x(c: int) -> float:  # the first column sits at the left edge
        return left + (plot_w * c / (n - 1) if n > 1 else plot_w / 2)

    def y(share: float) -> float:
        return top + plot_h * (1 - share)

    label = escape(title or "Share of live obligations kept after each compaction, per fact kind")
    cls = "survival small" if small else "survival"
    out = [f'<svg class="{cls}" viewBox="0 0 {width} {height}" role="img" aria-label="{label}" '
           f'xmlns="http://www.w3.org/2000/svg">', f"<title>{label}</title>"]
    pooled = [i for i, c in enumerate(columns) if c.first != c.last]
    if pooled:  # a band behind the pooled columns
        a, b = x(pooled[0]) - (x(1) - x(0)) / 2, x(pooled[-1]) + 2
        out.append(f'<rect class="pooled" x="{a:.1f}" y="{top}" width="{b - a:.1f}" height="{plot_h}">'
                   f"<title>rounds pooled in bins</title></rect>")
    for share in (0, 0.5, 1) if small else (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(share):.1f}" y2="{y(share):.1f}"/>')
        out.append(f'<text class="axis" x="{left - 5}" y="{y(share) + 4:.1f}" text-anchor="end">{share:.0%}</text>')
    for c in _ticks(n, 5 if small else 12):  # the last label ends at the edge, so "33–48" is never cut
        anchor = "end" if c == n - 1 and n > 1 and columns[c].first != columns[c].last else "middle"
        out.append(f'<text class="axis" x="{x(c) + (4 if anchor == "end" else 0):.1f}" y="{height - bottom + 14}" '
                   f'text-anchor="{anchor}">{columns[c].label}</text>')
    out.append(f'<text class="axis" x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle">'
               f'compaction round</text>')
    out.append(f'<line class="threshold" x1="{left}" x2="{width - right}" y1="{y(threshold):.1f}" '
               f'y2="{y(threshold):.1f}"><title>threshold {threshold:.0%}</title></line>')
    out.append(f'<text class="threshold-label" x="{width - right - 2}" y="{y(threshold) - 4:.1f}" '
               f'text-anchor="end">threshold {threshold:.0%}</text>')
    for kind in kinds:
        out += _curve(chart, kind, threshold, kind_colour(order.index(kind)), x, y)
    out.append("</svg>")
    return "\n".join(out)


def _curve(chart: Chart, kind: str, threshold: float, style: tuple[str, str], x, y) -> list[str]:
    colour, dash = style
    path, pen_down, out = [], False, []
    for c, column in enumerate(chart.columns):
        share = column.share(kind)
        if share is None:  # no live obligation of this kind there: a gap, not a zero
            pen_down = False
            continue
        path.append(f"{'L' if pen_down else 'M'}{x(c):.1f},{y(share):.1f}")
        pen_down = True
    if not path:
        return out
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    out.append(f'<path class="curve" data-kind="{escape(kind)}" d="{" ".join(path)}" stroke="{colour}"{dashes}>'
               f'<title>{escape(kind)}</title></path>')
    for c, column in enumerate(chart.columns):  # a point per column with data: a lone point would not show as a line
        share = column.share(kind)
        if share is not None:
            t = column.tally(kind)
            few = ' class="point few"' if t.settled < FEW_OBLIGATIONS else ' class="point"'
            out.append(f'<circle{few} data-round="{column.label}" cx="{x(c):.1f}" cy="{y(share):.1f}" r="2.5" '
                       f'fill="{colour}"><title>{escape(kind)}, round {column.label}: {t.kept + t.bent} of '
                       f"{t.settled} kept ({column.sessions} sessions)</title></circle>")
    cliff = chart.survival.cliff(kind, threshold)  # over every round; ringed only where it is charted
    at = chart.column_of(cliff) if cliff is not None else None
    if at is not None:
        t = chart.survival.tally(kind, cliff)
        share = chart.columns[at].share(kind)
        out.append(f'<circle class="cliff" data-kind="{escape(kind)}" data-round="{cliff + 1}" cx="{x(at):.1f}" '
                   f'cy="{y(share if share is not None else 0):.1f}" r="6" stroke="{colour}"><title>{escape(kind)}: '
                   f"{(t.kept + t.bent) / t.settled:.0%} kept ({t.kept + t.bent} of {t.settled}) at round {cliff + 1}, "
                   f"the first below {threshold:.0%}</title></circle>")
    return out


def _ticks(columns: int, most: int) -> list[int]:
    """Column labels: every one up to ``most``, then about ``most`` evenly spaced (always the first and last,
    never one crowding the last)."""
    if columns <= most:
        return list(range(columns))
    step = -(-columns // most)
    ticks = [c for c in range(0, columns, step) if columns - 1 - c >= step / 2 or c == 0]
    return ticks + [columns - 1]


# -- the report's survival section ------------------------------------------------------------------------------------

def _e(value: Any) -> str:
    return escape(printable(str(value)))


def survival_section(d: dict[str, Any], source: str, threshold: float, *, anchor: str) -> str:
    """A run's survival over compaction rounds: a caption saying what was left out or pooled, one small chart
    per fact kind, and every round's numbers (folded)."""
    survival = report_survival(d, source)
    head = f'<h2 id="{anchor}-survival">Survival over compaction rounds</h2>'
    if survival is None:
        return head + '<p class="muted">This report has no survival counts (written by an older version).</p>'
    if not survival.rounds:
        return head + '<p class="muted">No compaction was judged.</p>'
    if not survival.kinds():
        return head + ('<p class="muted">No kind is counted: none of the selected oracles reports a lost obligation of '
                       "the kinds that were live (a retention oracle, docs/reference/oracles.md), so an obligation they found "
                       "nothing wrong with may still have been dropped.</p>")
    chart = chart_columns(survival)
    figures = []
    for kind in survival.kinds():
        colour, _ = kind_colour(survival.kinds().index(kind))
        cliff = survival.cliff(kind, threshold)  # over every round, charted or not
        note = f"below {threshold:.0%} from round {cliff + 1}" if cliff is not None else f"never below {threshold:.0%}"
        if cliff is not None and cliff >= chart.charted:
            note += f", reached by {survival.sessions[cliff]} session(s): past the chart, in the numbers below"
        svg = survival_svg(chart, threshold, kinds=[kind], small=True, title=f"Survival of {kind}")
        figures.append(f'<figure class="kind-chart" data-kind="{_e(kind)}"><figcaption><span class="swatch" '
                       f'style="background:{colour}"></span><strong>{_e(kind)}</strong> <span class="muted">'
                       f"({note})</span></figcaption>{svg}</figure>")
    rest = len(survival.rounds) - chart.charted
    left_out = (f" {_rounds(chart.charted, len(survival.rounds) - 1)} reached by fewer than {chart.cutoff} sessions "
                f"(of {survival.sessions[0]}) and {'is' if rest == 1 else 'are'} left out of the charts (in the "
                f"numbers below)." if rest else "")
    pooled = chart.pooled
    binned = (f" Rounds {pooled[0].first + 1} to {pooled[-1].last + 1} are pooled in bins "
              f"({', '.join(c.label for c in pooled)}, shaded): a bin's share is over every obligation of every round "
              f"in it." if pooled else "")
    return (head + f'<p class="muted">Share of the live obligations of each kind that the summarizer kept (bent ones '
            f"counted as kept, unclear ones left out) after each compaction, over every session of the run "
            f"({survival.sessions[0]} sessions compacted at least once); the dashed line is the {threshold:.0%} "
            f"threshold and a ring marks the first round below it. A kind is counted only when a selected oracle "
            f"reports its losses (Oracle.retention). Faint points rest on fewer than {FEW_OBLIGATIONS} "
            f"obligations.{binned}{left_out}</p>"
            f'<div class="chart kind-charts">{"".join(figures)}</div>' + _survival_numbers(survival, threshold))


def _rounds(first: int, last: int) -> str:
    return f"Round {first + 1} was" if first == last else f"Rounds {first + 1} to {last + 1} were"


def _survival_numbers(survival: Survival, threshold: float) -> str:
    rounds = range(len(survival.rounds))
    head = "".join(f"<th>{r + 1}</th>" for r in rounds)
    rows = ["<tr><th>sessions</th>" + "".join(f"<td>{n}</td>" for n in survival.sessions) + "</tr>"]
    for kind in survival.kinds():
        cells = []
        for r in rounds:
            t = survival.tally(kind, r)
            share = survival.share(kind, r)
            below = ' class="below"' if share is not None and share < threshold else ""
            unclear = f" ({t.unclear} unclear)" if t.unclear else ""
            cells.append(f"<td{below}>{t.kept + t.bent}/{t.settled}{unclear}</td>" if t.live else "<td></td>")
        rows.append(f"<tr><th>{_e(kind)}</th>{''.join(cells)}</tr>")
    return ('<details><summary>The numbers (kept/live per round, every round)</summary><div class="scroll">'
            f'<table class="numbers"><tr><th>kind \\ round</th>{head}</tr>{"".join(rows)}</table></div></details>')
