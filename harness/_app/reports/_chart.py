"""Survival curves as inline SVG, written by hand: one curve per fact kind, a threshold line, the cliffs.

Our own SVG rather than a charting library: the chart is a few polylines and
labels, and a report must open from a CI artifact with no network, so a
library would have to be inlined into every report for no gain.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from harness._app.judging._survival import Survival

__all__ = ["survival_svg", "kind_colour", "DEFAULT_THRESHOLD"]

#: The share kept below which a kind's curve is marked (``--survival-threshold``).
DEFAULT_THRESHOLD = 0.9

# Ten colours people tell apart (Tableau 10), then they repeat with a dash pattern.
_COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
            "#bab0ac")
_WIDTH, _HEIGHT = 640, 300
_LEFT, _RIGHT, _TOP, _BOTTOM = 48, 16, 16, 40


def kind_colour(index: int) -> tuple[str, str]:
    """The stroke colour and dash pattern of the ``index``-th kind (sorted by name)."""
    return _COLOURS[index % len(_COLOURS)], "" if index < len(_COLOURS) else "6 3"


def survival_svg(survival: Survival, threshold: float = DEFAULT_THRESHOLD, *, title: str = "",
                 colour_order: Sequence[str] = ()) -> str:
    """An SVG chart: x the compaction round (1, 2, ...), y the share of live obligations kept, per fact kind.

    ``colour_order`` lists kinds in the order their colours are given, so charts side by side agree
    (default: this chart's kinds, sorted)."""
    rounds = len(survival.rounds)
    kinds = survival.kinds()
    order = list(colour_order) + [k for k in kinds if k not in colour_order]
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM

    def x(r: int) -> float:  # r is 0-based; round 1 sits at the left edge
        return _LEFT + (plot_w * r / (rounds - 1) if rounds > 1 else plot_w / 2)

    def y(share: float) -> float:
        return _TOP + plot_h * (1 - share)

    label = escape(title or "Share of live obligations kept after each compaction, per fact kind")
    out = [f'<svg class="survival" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" aria-label="{label}" '
           f'xmlns="http://www.w3.org/2000/svg">', f"<title>{label}</title>"]
    for share in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<line class="grid" x1="{_LEFT}" x2="{_WIDTH - _RIGHT}" y1="{y(share):.1f}" y2="{y(share):.1f}"/>')
        out.append(f'<text class="axis" x="{_LEFT - 6}" y="{y(share) + 4:.1f}" text-anchor="end">{share:.0%}</text>')
    for r in _ticks(rounds):
        out.append(f'<text class="axis" x="{x(r):.1f}" y="{_HEIGHT - _BOTTOM + 16}" text-anchor="middle">{r + 1}</text>')
    out.append(f'<text class="axis" x="{_LEFT + plot_w / 2:.1f}" y="{_HEIGHT - 6}" text-anchor="middle">'
               f'compaction round</text>')
    out.append(f'<line class="threshold" x1="{_LEFT}" x2="{_WIDTH - _RIGHT}" y1="{y(threshold):.1f}" '
               f'y2="{y(threshold):.1f}"><title>threshold {threshold:.0%}</title></line>')
    out.append(f'<text class="threshold-label" x="{_WIDTH - _RIGHT - 2}" y="{y(threshold) - 4:.1f}" '
               f'text-anchor="end">threshold {threshold:.0%}</text>')
    for kind in kinds:
        colour, dash = kind_colour(order.index(kind))
        path = []
        pen_down = False
        for r in range(rounds):
            share = survival.share(kind, r)
            if share is None:  # no live obligation of this kind in that round: a gap, not a zero
                pen_down = False
                continue
            path.append(f"{'L' if pen_down else 'M'}{x(r):.1f},{y(share):.1f}")
            pen_down = True
        if not path:
            continue
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<path class="curve" data-kind="{escape(kind)}" d="{" ".join(path)}" stroke="{colour}"{dashes}>'
                   f'<title>{escape(kind)}</title></path>')
        for r in range(rounds):  # a point per round with data: a lone point would not show as a line
            share = survival.share(kind, r)
            if share is not None:
                t = survival.tally(kind, r)
                out.append(f'<circle class="point" cx="{x(r):.1f}" cy="{y(share):.1f}" r="2.5" fill="{colour}">'
                           f'<title>{escape(kind)}, round {r + 1}: {t.kept + t.bent} of {t.settled} kept</title></circle>')
        cliff = survival.cliff(kind, threshold)
        if cliff is not None:
            share = survival.share(kind, cliff)
            t = survival.tally(kind, cliff)
            out.append(f'<circle class="cliff" data-kind="{escape(kind)}" data-round="{cliff + 1}" cx="{x(cliff):.1f}" '
                       f'cy="{y(share):.1f}" r="6" stroke="{colour}"><title>{escape(kind)}: {share:.0%} kept '
                       f'({t.kept + t.bent} of {t.settled}) at round {cliff + 1}, the first below {threshold:.0%}'
                       f'</title></circle>')
    out.append("</svg>")
    return "\n".join(out)


def _ticks(rounds: int) -> list[int]:
    """Round labels: every one up to 12 rounds, then about a dozen evenly spaced (always the last)."""
    if rounds <= 12:
        return list(range(rounds))
    step = -(-rounds // 12)
    return sorted(set(range(0, rounds, step)) | {rounds - 1})
