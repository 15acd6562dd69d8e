"""What changed between two runs' JSON reports, by finding: NEW, FIXED and STILL FAILING.

``compaction-harness report OLD.json NEW.json`` (or a list of nights, oldest first) puts this at the top of
its page: the newest report against the one before it. Everything here is a pure function of the JSON
documents (``report_dict``), so a page drawn from files saved months apart says the same thing.

A finding's identity across runs. Within a run a finding is a root cause: an obligation the compactor
dropped (``cause`` ``"dropped"``, whatever invariant first saw it), or one invariant broken with one kind of
evidence (``Failure.signature``), listing every invariant it broke on its minimal transcript
(``invariants``, the primary first) and the other fact kinds the same cause was seen on (``also_kinds``).
Across runs the same cause may be grouped a little differently (another kind found first, one more
invariant broken on tonight's minimal transcript), so findings are matched one to one in two passes:

1. *the same*: both dropped obligations, or equal ``(primary invariant, fact_kind, evidence)``
   (``fact_kind`` None is "structure", a missing evidence, as in reports before version 3, is "");
2. *related*, among those left: findings sharing an ``(invariant, fact kind)`` pair, the pairs of a
   finding being (``invariants`` and ``also_seen``) × (``fact_kind`` and ``also_kinds``); a pair of the
   primary invariant and kind is preferred, then the first in report order.

A finding matched either way is STILL FAILING (a related match says what changed); one only in the
newest is NEW; one only in the one before is FIXED. The second pass is the safe side: a cause the
oracles now describe differently is not claimed fixed and reported new at once. A FIXED that may only
mean "not reached" (the newest run incomplete, another seed, fewer examples) comes with a caveat.

When either night's summarizer may vary (``may_vary``), one night finding a cause the other did not says
little, so NEW and FIXED rest on rates: in how many of its examples each night saw the cause
(``sightings``; the other night saw it in none of its own), compared by Fisher's exact test
(``harness._app._rates``, one threshold shared by every finding compared). A difference chance explains is
UNSURE: neither new nor fixed, listed apart; more examples, or ``compare`` of the two summarizers, settle it.
Reports without ``findings`` (before version 3) are read from their ``violations``, one finding each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from harness._app._rates import Change, Rate, family_threshold, judge_rates
from harness._app.reports._text import printable

__all__ = ["Finding", "Match", "Trend", "findings_of", "diff_reports", "nightly", "trend_text", "trend_html"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One finding of one report, as matched across runs (``violation`` indexes the report's ``violations``)."""

    invariant: str
    fact_kind: str
    evidence: str
    invariants: tuple[str, ...] = ()
    also_kinds: tuple[str, ...] = ()
    violation: int | None = None
    minimal_turns: int | None = None
    detail: str = ""
    corpus_file: str | None = None
    cause: str = ""  # "dropped": the compactor dropped the obligation, whichever invariant and kind showed it
    outcome: str = ""  # what happened to the obligation, in one word (``harness.oracles.Outcome``; "" in older reports)
    sightings: int | None = None  # in how many of its night's examples the cause showed (None: not recorded)
    also_seen: tuple[str, ...] = ()  # invariants the same cause broke in the sessions it was seen in only

    @property
    def happened(self) -> str:
        """What happened, then the evidence it rests on where that says more ("rewritten (near-miss)", "weakened");
        a report written before findings carried the word gives the evidence alone."""
        if not self.outcome:
            return (self.evidence or "-") + (f" ({self.cause})" if self.cause else "")
        more = [w for w in (self.evidence, self.cause) if w and w != self.outcome]
        return f"{self.outcome} ({', '.join(more)})" if more else self.outcome

    @property
    def key(self) -> tuple[str, str, str]:
        """Its identity for the first pass: (primary invariant, fact kind, evidence), or the cause alone."""
        return (self.cause, "", "") if self.cause else (self.invariant, self.fact_kind, self.evidence)

    @property
    def pairs(self) -> frozenset[tuple[str, str]]:
        """Its (invariant, fact kind) pairs for the second pass: every invariant it broke (on its minimal transcript
        or only where it was seen) with every kind it was seen on."""
        return frozenset((i, k) for i in (self.invariant, *self.invariants, *self.also_seen)
                         for k in (self.fact_kind, *self.also_kinds))

    @property
    def label(self) -> str:
        others = [i for i in self.invariants if i != self.invariant]
        return (f"{self.invariant} ({self.fact_kind}" + (f"; {self.evidence}" if self.evidence else "")
                + (f"; {self.cause}" if self.cause else "") + ")" + (f" + {', '.join(others)}" if others else ""))


@dataclass(frozen=True, slots=True)
class Match:
    """A finding in both reports: ``exact`` when its identity is the same, else related by a shared pair."""

    old: Finding
    new: Finding
    exact: bool

    @property
    def change(self) -> str:
        """What differs between the two, for a related match ("" for the same finding)."""
        if self.exact:
            return ""
        changed = [f"{name} {a or '-'} → {b or '-'}" for name, a, b in (
            ("invariant", self.old.invariant, self.new.invariant), ("kind", self.old.fact_kind, self.new.fact_kind),
            ("evidence", self.old.evidence, self.new.evidence)) if a != b]
        return "; ".join(changed)


@dataclass(frozen=True, slots=True)
class Trend:
    """The newest report (``new_source``) against the one before (``old_source``); ``unsure`` the findings of
    either a varying summarizer's night did not show beyond chance, each with the rates it rests on (``rates``,
    by finding, also for new and fixed ones)."""

    old_source: str
    new_source: str
    new: tuple[Finding, ...]
    fixed: tuple[Finding, ...]
    still: tuple[Match, ...]
    caveats: tuple[str, ...] = ()
    unsure_new: tuple[Finding, ...] = ()  # only in the newest, not beyond chance
    unsure_old: tuple[Finding, ...] = ()  # only in the one before, not beyond chance
    rates: dict[Finding, str] = field(default_factory=dict)
    rated: bool = False  # a night's summarizer may vary: new and fixed rest on rates

    @property
    def unsure(self) -> tuple[Finding, ...]:
        return self.unsure_new + self.unsure_old


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def findings_of(document: dict[str, Any]) -> tuple[Finding, ...]:
    """A report's findings: its ``findings`` rows (each completed from its violation), or, in a report
    without them, one per violation."""
    violations = [v for v in document.get("violations") or [] if isinstance(v, dict)]
    rows = document.get("findings")
    if not isinstance(rows, list):
        rows = [{"violation": n} for n in range(len(violations))]
    out = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        n = _count(row.get("violation"))
        v = violations[n] if n is not None and 0 <= n < len(violations) else {}
        invariants = _texts(row.get("invariants")) or _texts(v.get("invariants"))
        invariant = _text(v.get("invariant")) or (invariants[0] if invariants else "")
        if not invariant:
            continue
        kind = _text(row.get("fact_kind", v.get("fact_kind")), "structure")
        out.append(Finding(invariant, kind, _text(row.get("evidence", v.get("evidence"))),
                           invariants or (invariant,), _texts(row.get("also_kinds", v.get("also_kinds"))),
                           n if v else None, _count(row.get("minimal_turns", v.get("minimal_turns"))),
                           _text(v.get("detail")), _text(row.get("corpus_file", v.get("corpus_file"))) or None,
                           _text(row.get("cause", v.get("cause"))), _text(row.get("outcome", v.get("outcome"))),
                           _sessions(row.get("sightings", v.get("sightings"))),
                           _texts(row.get("also_seen", v.get("also_seen")))))
    return tuple(out)


def _sessions(value: Any) -> int | None:
    return _count(value.get("sessions")) if isinstance(value, dict) else None


def diff_reports(old: dict[str, Any], new: dict[str, Any], *, old_source: str = "before",
                 new_source: str = "newest") -> Trend:
    """What is NEW in ``new``, FIXED since ``old`` and STILL FAILING in both (see the module's docstring)."""
    before, after = list(findings_of(old)), list(findings_of(new))
    matches: list[Match] = []
    for exact in (True, False):
        for f in list(after):
            if exact:
                other = next((o for o in before if o.key == f.key), None)
            else:
                primary = (f.invariant, f.fact_kind)
                other = next((o for o in before if primary in o.pairs), None) or \
                    next((o for o in before if o.pairs & f.pairs), None)
            if other is not None:
                matches.append(Match(other, f, exact))
                before.remove(other)
                after.remove(f)
    still = sorted(matches, key=lambda m: (m.new.violation is None, m.new.violation or 0))  # the newest's order
    if not (old.get("may_vary") or new.get("may_vary")):
        return Trend(old_source, new_source, tuple(after), tuple(before), tuple(still), _caveats(old, new, bool(before)))
    new_, fixed, unsure, rates = _by_rates(after, before, old, new)
    return Trend(old_source, new_source, new_, fixed, tuple(still), _caveats(old, new, bool(fixed)),
                 tuple(f for f in unsure if f in after), tuple(f for f in unsure if f in before), rates, rated=True)


#: The examples of one run are not independent draws: Hypothesis generates families of related transcripts,
#: so how often a cause shows varies more from night to night than independent examples would make it (16
#: nights of 20 examples of a summarizer failing at random: 1.5 times the binomial variance). Each night's
#: counts are divided by it before the test (the effective sample size of an overdispersed binomial).
_DISPERSION = 1.5


def _by_rates(after: list[Finding], before: list[Finding], old: dict[str, Any], new: dict[str, Any]):
    """Of the findings one night only showed, those whose sightings differ beyond chance (new, fixed), the rest
    unsure; each with the rates it rests on."""
    examples_old, examples_new = _count(old.get("examples_run")) or 0, _count(new.get("examples_run")) or 0
    tables = {}  # each finding's (before, after) rates, counts divided by the dispersion
    for f, mine, others, change in [*((f, examples_new, examples_old, Change.NEW) for f in after),
                                    *((f, examples_old, examples_new, Change.FIXED) for f in before)]:
        if f.sightings and others and f.sightings <= mine:
            seen = Rate(int(f.sightings / _DISPERSION), int(mine / _DISPERSION))
            unseen = Rate(0, int(others / _DISPERSION))
            tables[f] = (unseen, seen) if change is Change.NEW else (seen, unseen)
    alpha, _ = family_threshold(list(tables.values()))
    new_, fixed, unsure, rates = [], [], [], {}
    for f, mine, others, change in [*((f, examples_new, examples_old, Change.NEW) for f in after),
                                    *((f, examples_old, examples_new, Change.FIXED) for f in before)]:
        if f not in tables:
            unsure.append(f)
            rates[f] = "its sightings were not recorded: cannot tell chance from change"
            continue
        verdict = judge_rates(*tables[f], alpha=alpha)
        rates[f] = (f"seen in {f.sightings} of {mine} examples of its night, the other night in none of {others}; "
                    f"Fisher exact p={verdict.p_value:.2g} {'<=' if verdict.change is change else '>'} {alpha:.2g} "
                    f"(each night's counts divided by {_DISPERSION}, its examples being related draws)")
        (new_ if change is Change.NEW else fixed).append(f) if verdict.change is change else unsure.append(f)
    return tuple(new_), tuple(fixed), tuple(unsure), rates


def _caveats(old: dict[str, Any], new: dict[str, Any], fixed: bool) -> tuple[str, ...]:
    out = []
    if old.get("summarizer") != new.get("summarizer"):
        out.append(f"The two runs are of different summarizers ({printable(str(old.get('summarizer')))} then "
                   f"{printable(str(new.get('summarizer')))}).")
    if not fixed:
        return tuple(out)
    why = []
    if new.get("incomplete"):
        why.append(f"the newest run is incomplete ({printable(str(new['incomplete']))})")
    if new.get("infra_errors"):
        why.append(f"the summarizer failed {len(new['infra_errors'])} time(s) in the newest run")
    if old.get("seed") != new.get("seed"):
        why.append(f"the seeds differ ({old.get('seed')} then {new.get('seed')}), so other transcripts were generated")
    a, b = _count(old.get("examples_run")), _count(new.get("examples_run"))
    if a is not None and b is not None and b < a:
        why.append(f"the newest run judged fewer examples ({b}, against {a})")
    if why:
        out.append("FIXED may only mean not found this time: " + "; ".join(why)
                   + ". Replaying the corpus (compaction-harness replay) tells fixed from not reached.")
    return tuple(out)


def nightly(reports: Sequence[tuple[str, dict[str, Any]]]) -> Trend | None:
    """The newest of ``reports`` (oldest first) against the one before it; None for fewer than two."""
    if len(reports) < 2:
        return None
    (old_source, old), (new_source, new) = reports[-2], reports[-1]
    return diff_reports(old, new, old_source=old_source, new_source=new_source)


def trend_text(trend: Trend) -> str:
    """A few lines for the terminal: the counts, then each new and fixed finding (and each still failing one
    matched only as related, with what it was)."""
    lines = [f"{printable(trend.new_source)} against {printable(trend.old_source)}: {len(trend.new)} new, "
             f"{len(trend.fixed)} fixed, {len(trend.still)} still failing"
             + (f", {len(trend.unsure)} unsure" if trend.rated else "")]

    def rate(f: Finding) -> str:
        return f": {printable(trend.rates[f])}" if f in trend.rates else ""

    lines += [f"  new    ✗ {printable(f.label)}{rate(f)}" for f in trend.new]
    lines += [f"  fixed  ✓ {printable(f.label)}{rate(f)}" for f in trend.fixed]
    lines += [f"  unsure ? {printable(f.label)}{rate(f)}" for f in trend.unsure]
    lines += [f"  still  ✗ {printable(m.new.label)} (was {printable(m.old.label)})"
              for m in trend.still if not m.exact]
    lines += [f"  ! {printable(c)}" for c in trend.caveats]
    return "\n".join(lines)


def _e(value: Any) -> str:
    return escape(printable(str(value)))


#: Where a finding's block is on the page: (which report, "old" or "new"; its violation index) -> "#id", or None.
Href = Callable[[str, int], "str | None"]


def trend_html(trend: Trend, href: Href) -> str:
    """The head of a page of several reports: NEW, FIXED and STILL FAILING, each finding linked to its block."""
    def name(side: str, f: Finding) -> str:
        target = href(side, f.violation) if f.violation is not None else None
        return f'<a href="{escape(target, quote=True)}">{_e(f.invariant)}</a>' if target else _e(f.invariant)

    def row(side: str, f: Finding, note: str = "") -> str:
        others = ", ".join(i for i in f.invariants if i != f.invariant)
        turns = "" if f.minimal_turns is None else f.minimal_turns
        return (f"<tr><td>{name(side, f)}</td><td>{_e(f.fact_kind)}</td><td>{_e(f.happened)}</td>"
                f"<td>{_e(others or '-')}</td><td>{_e(turns)}</td><td>{_e(note or f.detail)}</td></tr>")

    def table(rows: list[str], empty: str, kind: str) -> str:
        if not rows:
            return f'<p class="muted">{empty}</p>'
        return (f'<div class="scroll"><table class="diff trend-table" data-trend="{kind}"><tr><th>invariant</th>'
                "<th>fact kind</th><th>what happened</th><th>also broken</th><th>minimal turns</th><th>what it is</th></tr>"
                + "".join(rows) + "</table></div>")

    new = table([row("new", f, trend.rates.get(f, "")) for f in trend.new], "Nothing new.", "new")
    fixed = table([row("old", f, trend.rates.get(f, "")) for f in trend.fixed], "Nothing fixed.", "fixed")
    unsure = table([row(side, f, trend.rates.get(f, "")) for side, found in (("new", trend.unsure_new),
                                                                              ("old", trend.unsure_old)) for f in found],
                   "Nothing unsure.", "unsure")
    still = table([row("new", m.new, f"related to the one before ({m.change}): {m.new.detail}" if not m.exact else "")
                   for m in trend.still], "Nothing failing in both.", "still")
    caveats = "".join(f'<p class="notice">{_e(c)}</p>' for c in trend.caveats)
    return (f'<section id="trend" class="trend"><h2>Since the report before: {len(trend.new)} new, '
            f"{len(trend.fixed)} fixed, {len(trend.still)} still failing</h2>"
            f'<p class="muted">The newest report, <code>{_e(trend.new_source)}</code>, against the one before it, '
            f"<code>{_e(trend.old_source)}</code>. A finding is the same in both when its invariant, fact kind and "
            f"evidence are; one left over is matched to a finding sharing an (invariant, fact kind) pair.</p>{caveats}"
            f'<h3 id="trend-new" class="new">NEW ({len(trend.new)})</h3>{new}'
            f'<h3 id="trend-fixed" class="fixed">FIXED ({len(trend.fixed)})</h3>{fixed}'
            + (f'<h3 id="trend-unsure">UNSURE ({len(trend.unsure)})</h3><p class="muted">The summarizer may vary: '
               "a finding one night showed and the other did not is new or fixed only when its sightings differ "
               f"beyond chance (Fisher's exact test).</p>{unsure}" if trend.rated else "")
            + f'<h3 id="trend-still">STILL FAILING ({len(trend.still)})</h3>{still}</section>')
