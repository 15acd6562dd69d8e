"""The gate of a CI job: one run and one corpus replay, judged against a baseline report.

``compaction-harness gate`` (and the GitHub action, ``action.yml``, that calls it) runs the summarizer, replays
the corpus, then says what is NEW since the baseline: a JSON report an earlier gate or run wrote (last night's,
or the base branch's). Nothing here is a comparison of its own. A run's findings are matched to the baseline's
as ``report`` matches nights (``_trend.diff_reports``: by root cause, and by rates when the summarizer may
vary, so one random hit is unsure, never new). A corpus entry is new when it fails now and passed in the
baseline's own replay (its ``corpus_replay``); when both replays counted trials, only if Fisher's test says
so (``_rates``), as for the run. ``fail_on`` says what fails the job.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from typing import Any

from harness._base._codec import transcript_from_dict
from harness._base._errors import InvalidArgument, PathError, SchemaError
from harness._base._files import DEFAULT_MAX_FILE_MB
from harness._app._outcome import ExitCode, exit_code
from harness._app._rates import Change, Rate, family_threshold, judge_rates
from harness._app.corpus._replay import Replay
from harness._app.reports._document import read_report
from harness._app.running._options import DEFAULT_EXAMPLES
from harness._app.reports._shards import merged_nights
from harness._app.reports._text import clip, message_text, turn_marks
from harness._app.reports._trend import Finding, Trend, diff_reports, findings_of

__all__ = ["FAIL_ON", "MODES", "PR_EXAMPLES", "PR_MAX_TIME", "PR_SEED", "EntryChange", "Gate", "judge_gate", "replay_rows", "short_transcript", "violation_of",
           "read_baseline", "gate_outputs", "run_defaults"]

#: What fails the job: a new failure; any failure, known ones too; nothing found (only a harness that could not
#: run at all, exit 2).
FAIL_ON = ("new", "any", "none")
#: A night's run (the harness's defaults, a new seed each night) or a pull request's short one (``gate --mode``).
MODES = ("nightly", "pull-request")
#: A pull request's run: short and bounded (its examples and seconds), on one seed the base branch shares.
PR_EXAMPLES = 20
PR_MAX_TIME = 600.0
PR_SEED = 1

_FAILING = "failing"
#: Stops after which the run has not judged what the gate asked, whatever ``--fail-on`` (but ``none``) says: it
#: was interrupted or ended by the harness, or no session reached a compaction. A stop at a bound the gate was
#: given (``--max-time``, a spend cap) leaves an honest partial run: it fails only under ``any``, unless nothing
#: at all was judged before it.
_UNFINISHED = frozenset({"interrupted", "halted", "nothing-compacted"})


@dataclass(frozen=True, slots=True)
class EntryChange:
    """One corpus entry replayed, and what it is against the baseline's replay: ``new`` (it passed there),
    ``still`` (it failed there too, or the baseline has no replay of it: it is in the corpus, so it is known),
    ``fixed`` (it failed there), ``unsure`` (a difference of rates chance explains), ``passing``, or ``problem``
    (the summarizer failed on it, or it could not be judged)."""

    entry: str
    invariant: str
    fact_kind: str
    status: str
    detail: str
    change: str
    rates: str = ""


@dataclass(frozen=True)
class Gate:
    """A run's report judged against a baseline (``baseline`` its name, None without one): the run's findings
    as ``trend`` says, the corpus entries as ``entries`` say, and what else keeps it from passing."""

    mode: str
    fail_on: str
    trend: Trend
    baseline: str | None
    entries: tuple[EntryChange, ...] = ()
    replayed: bool = False  # a corpus was replayed (``--corpus``)
    baseline_replayed: bool = False  # the baseline holds its own corpus replay, so a regressed entry is new
    unreadable: tuple[str, ...] = ()
    summarizer_failures: tuple[str, ...] = ()
    incomplete: str | None = None
    unfinished: bool = False  # ``incomplete`` is a stop that judged nothing or not what was asked (``_UNFINISHED``)
    corpus: str | None = None  # the directory replayed
    missing: tuple[str, ...] = ()  # baseline files given that were not there (``--allow-missing-baseline``)

    def entries_of(self, change: str) -> tuple[EntryChange, ...]:
        return tuple(e for e in self.entries if e.change == change)

    @property
    def new(self) -> int:
        return len(self.trend.new) + len(self.entries_of("new"))

    @property
    def still(self) -> int:
        return len(self.trend.still) + len(self.entries_of("still"))

    @property
    def fixed(self) -> int:
        return len(self.trend.fixed) + len(self.entries_of("fixed"))

    @property
    def unsure(self) -> int:
        return len(self.trend.unsure) + len(self.entries_of("unsure"))

    @property
    def problems(self) -> tuple[str, ...]:
        """Corpus entries that could not be judged or read: the corpus needs fixing before it says anything."""
        return tuple(f"{e.entry}: {e.detail}" for e in self.entries_of("problem") if e.status != "infra") \
            + self.unreadable

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why the job fails, one line each; empty when it passes."""
        if self.fail_on == "none":
            return ()
        out = []
        if self.new:
            out.append(f"{self.new} new failure(s)" + ("" if self.baseline else " (no baseline: every failure is new)"))
        if self.fail_on == "any" and self.still:
            out.append(f"{self.still} known failure(s) still failing (fail-on: any)")
        failed = len(self.summarizer_failures) + sum(e.status == "infra" for e in self.entries)
        if failed:
            out.append(f"the summarizer itself failed {failed} time(s) (raised, hung, returned garbage)")
        if self.problems:
            out.append(f"{len(self.problems)} corpus entr{'y' if len(self.problems) == 1 else 'ies'} could not be "
                       f"judged or read")
        if self.unfinished:
            out.append(f"the run did not judge what was asked: {self.incomplete}")
        elif self.fail_on == "any" and self.incomplete:
            out.append(f"incomplete: {self.incomplete} (fail-on: any)")
        return tuple(out)

    @property
    def passed(self) -> bool:
        return not self.reasons

    @property
    def exit_code(self) -> ExitCode:
        """0 it passes; else the harness's rule: failures (1) outrank bad input (2), the summarizer failing (3)
        and an incomplete run (4)."""
        if self.passed:
            return ExitCode.OK
        failing = self.new or (self.fail_on == "any" and self.still)
        return exit_code(violated=bool(failing), unusable=bool(self.problems),
                         summarizer_failed=bool(self.summarizer_failures) or any(e.status == "infra" for e in self.entries),
                         incomplete=self.unfinished or (self.fail_on == "any" and self.incomplete is not None))


def run_defaults(mode: str, *, examples: int | None, seed: int | None, max_time: float | None,
                 baseline: tuple[str, dict[str, Any]] | None) -> tuple[int, int, float | None]:
    """The run's examples, seed and ``--max-time`` where not given: the harness's own at night (a random seed);
    for a pull request a short bounded run on the baseline's seed (else ``PR_SEED``), so a deterministic
    summarizer meets the transcripts the baseline's did when the other options match too."""
    if mode != "pull-request":
        return examples or DEFAULT_EXAMPLES, seed if seed is not None else secrets.randbits(32), max_time
    if seed is None:
        recorded = baseline[1].get("seed") if baseline is not None else None
        seed = recorded if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded >= 0 else PR_SEED
    return examples or PR_EXAMPLES, seed, max_time if max_time is not None else PR_MAX_TIME


def read_baseline(files: list[str], *, allow_missing: bool = False) -> tuple[str, dict[str, Any]] | None:
    """The report ``--baseline`` names (the shards of one run merged into one), read before any work; with
    ``allow_missing``, files that do not exist are left out."""
    documents = []
    for file in files:
        if allow_missing and not os.path.exists(file):
            continue
        if not os.path.isfile(file):
            raise PathError(f"--baseline {file!r}: no such file (expected the JSON report of an earlier gate or run, "
                            f"--report-json)")
        document = read_report(file, max_mb=DEFAULT_MAX_FILE_MB)
        if "comparison_version" in document:
            raise InvalidArgument(f"--baseline {file!r} is a compare report: give a run's or a gate's --report-json")
        documents.append((file, document))
    merged = merged_nights(documents)
    if len(merged) > 1:
        raise InvalidArgument(f"--baseline given {len(files)} reports that are not the shards of one run "
                              f"({merged[0][0]}, {merged[1][0]}): give one report, or every shard of one run")
    return merged[0] if merged else None


def gate_outputs(gate: Gate, current: dict[str, Any], files: dict[str, str | None], source: Any) -> dict[str, Any]:
    """The step's outputs (``--github-output``): the verdict, the counts, and the paths written ("" for none)."""
    return {"verdict": "pass" if gate.passed else "fail", "exit-code": int(gate.exit_code),
            "findings": len(current.get("findings") or []), "new": gate.new, "still-failing": gate.still,
            "fixed": gate.fixed, "unsure": gate.unsure,
            "corpus-failing": sum(e.status == _FAILING for e in gate.entries),
            **{name.replace("_", "-"): path or "" for name, path in files.items() if name != "replayed"},
            "source": f"{source.path}:{source.line}" if source is not None else ""}


def replay_rows(replay: Replay) -> list[dict[str, Any]]:
    """A corpus replay as the report's ``corpus_replay`` holds it (the rows of ``compare``'s ``sides[].corpus``,
    with each entry's fact kind and, when it was judged by fresh trials, their count)."""
    return [{"entry": o.path.name, "invariant": o.entry.invariant, "fact_kind": o.entry.fact_kind or "structure",
             "status": o.status, "detail": o.detail,
             "trials": None if o.trials is None else {"failed": o.trials[0], "of": o.trials[1]}}
            for o in replay.outcomes]


def judge_gate(current: dict[str, Any], *, baseline: tuple[str, dict[str, Any]] | None, fail_on: str = "new",
               mode: str = "nightly", source: str = "this run", unreadable: tuple[str, ...] = (),
               corpus: str | None = None, missing: tuple[str, ...] = ()) -> Gate:
    """``current`` (a run report, with ``corpus_replay`` when a corpus was replayed) against ``baseline``
    (its name and report)."""
    if baseline is None:
        trend = Trend("no baseline", source, findings_of(current), (), ())
    else:
        trend = diff_reports(baseline[1], current, old_source=baseline[0], new_source=source)
    rows = current.get("corpus_replay")
    before = baseline[1].get("corpus_replay") if baseline is not None else None
    infra = tuple(f"{e.get('kind')}: {e.get('message')}" for e in current.get("infra_errors") or [])
    incomplete = current.get("incomplete")
    return Gate(mode, fail_on, trend, baseline[0] if baseline else None,
                _entry_changes(rows or [], before if isinstance(before, list) else None), rows is not None,
                isinstance(before, list), unreadable, infra, incomplete, _unfinished(current), corpus, missing)


def _unfinished(current: dict[str, Any]) -> bool:
    """The run stopped before judging what the gate asked (``_UNFINISHED``), or judged no example at all (a
    bound reached before the first): a gate must not pass on it."""
    if not current.get("incomplete"):
        return False
    return current.get("incomplete_reason") in _UNFINISHED or current.get("examples_run") == 0


def _rate(row: dict[str, Any] | None) -> Rate | None:
    trials = (row or {}).get("trials")
    if isinstance(trials, dict) and isinstance(trials.get("of"), int) and trials["of"] > 0:
        return Rate(int(trials.get("failed") or 0), trials["of"])
    return None


def _entry_changes(rows: list[dict[str, Any]], before: list[dict[str, Any]] | None) -> tuple[EntryChange, ...]:
    """Each entry replayed now against the baseline's replay of it (see ``EntryChange``)."""
    was = {r.get("entry"): r for r in before or [] if isinstance(r, dict)}
    tables = {}  # entries failing on one side only, with trials counted on both: judged by their rates
    for r in rows:
        b = was.get(r["entry"])
        if b is not None and (r["status"] == _FAILING) != (b.get("status") == _FAILING) \
                and _rate(r) is not None and _rate(b) is not None:
            tables[r["entry"]] = (_rate(b), _rate(r))
    alpha, _ = family_threshold(list(tables.values()))
    out = []
    for r in rows:
        b = was.get(r["entry"])
        then = b.get("status") if b is not None else None
        change, rates = _change(r["status"], then), ""
        if r["entry"] in tables and change in ("new", "fixed"):
            verdict = judge_rates(*tables[r["entry"]], alpha=alpha)
            rates = f"failed {verdict.other.text} trials now, {verdict.base.text} in the baseline's replay; " \
                    f"Fisher exact p={verdict.p_value:.2g} {'<=' if verdict.p_value <= alpha else '>'} {alpha:.2g}"
            wanted = Change.NEW if change == "new" else Change.FIXED
            change = change if verdict.change is wanted else "unsure"
        out.append(EntryChange(r["entry"], r["invariant"], r.get("fact_kind") or "structure", r["status"],
                               r.get("detail") or "", change, rates))
    return tuple(out)


def _change(now: str, then: str | None) -> str:
    if now in ("infra", "unjudged"):
        return "problem"
    if now == _FAILING:
        return "new" if then in ("fixed", "not-reproduced") else "still"
    if then == _FAILING:
        return "fixed" if now == "fixed" else "unsure"  # not reproduced now: no proof of a fix
    return "passing"


def short_transcript(violation: dict[str, Any], *, turns: int = 12) -> list[str]:
    """A finding's minimal transcript in a few lines, as the text report prints it: each turn clipped, the
    ledger of obligations, and what the summarizer returned."""
    try:
        transcript = transcript_from_dict(violation.get("transcript"))
    except SchemaError:
        return []
    elided = {e["turn"]: e for e in violation.get("elided") or [] if isinstance(e, dict) and "turn" in e}
    lines = []
    for i, turn in enumerate(transcript.turns[:turns]):
        if i in elided:
            lines.append(f"[{i}] {turn.role.value}: … {elided[i].get('tokens', 0):,} tokens of unrelated work "
                         f"({elided[i].get('merged_turns', 0)} turns merged)")
            continue
        lines.append(f"[{i}] {turn.role.value}: {clip(turn.text, 90)}{turn_marks(turn)}")
    if len(transcript.turns) > turns:
        lines.append(f"… {len(transcript.turns) - turns} more turns")
    lines += [f"ledger: {f.id} {f.kind} {' | '.join(f.literals)} (turn {f.origin_turn})" for f in transcript.facts]
    context = violation.get("context")
    if isinstance(context, dict) and isinstance(context.get("messages"), list):
        returned = " / ".join(message_text(m) for m in context["messages"] if isinstance(m, dict))
        lines.append(f"summarizer returned: {clip(returned, 200) if returned.strip() else '(no text at all)'}")
    return lines


def violation_of(document: dict[str, Any], finding: Finding) -> dict[str, Any]:
    """The ``violations`` record a finding of ``document`` was read from ({} when it has none)."""
    violations = document.get("violations") or []
    n = finding.violation
    return violations[n] if n is not None and 0 <= n < len(violations) and isinstance(violations[n], dict) else {}
