"""Shrinking one failure within the run's budget, then confirming the minimal transcript by fresh trials."""

from __future__ import annotations

from harness._base._model import Transcript
from harness._app._outcome import Stop, StopReason
from harness._app._progress import Progress
from harness._app.calling._summarizer import Summarizer
from harness._app.judging._judge import Evaluation, StopJudging, Violation
from harness._app.running._budget import Budget, asker
from harness._app.running._causes import DROPPED, Cause, Key, Signature, dropped, signature_of
from harness._app.running._evaluate import evaluate, token_counter
from harness._app.running._options import RunConfig
from harness._app.running._results import Failure
from harness._app.shrinking._shrinker import Shrinker

__all__ = ["shrink_failure", "confirm"]


def shrink_failure(cause: Cause, first: Transcript, summarizer: Summarizer, config: RunConfig,
                   chosen, budget: Budget, progress: Progress, label: str, *, failures_left: int = 1, seen_with: frozenset[str] = frozenset(),
                   pairs_seen: frozenset[Key] = frozenset(), reported: frozenset[Signature] = frozenset()) -> Failure:
    """Shrink one root cause once, by its primary violation, as far as its allowance of calls goes; then
    ask which of the other invariants it broke the minimal transcript still breaks. Always returns it,
    shrunk or not.

    Every failing candidate is remembered, so an interrupt or a spent
    allowance still reports the smallest transcript found until then. ``seen_with`` names
    the invariants the same cause broke in other sessions, ``pairs_seen`` every (invariant, fact kind) it showed in them. Shrinking stops as soon as the smallest
    failing transcript shows one of the ``reported`` findings (a near miss that shrinks into the dropped
    literal already found): it is that finding, and the caller reports it once.
    """
    key, violation = cause.key, cause.violation
    judging, trials = config.judging, config.limits.trials
    spent_before = summarizer.stats.spent
    summarize = budget.metered(summarizer)
    budget.start_shrinking(failures_left)
    again = asker(summarizer, budget) if key[0] == "deterministic" else None

    def judge(candidate: Transcript, at_budget: int) -> Evaluation:
        return evaluate(candidate, summarize, judging, chosen, budget=at_budget, until=key, ask_again=again,
                        may_vary=summarizer.may_vary, until_evidence=cause.evidence)

    same = [False]  # the smallest failing transcript shows a reported finding

    def mechanism(transcript: Transcript, violation: Violation) -> str | None:
        return DROPPED if dropped(transcript, violation) else None

    def on_check(checks: int, best: Transcript) -> None:
        if not same[0] and reported and signature_of(
                key[0], shrinker.violation, mechanism(shrinker.transcript, shrinker.violation)) in reported:
            same[0] = True
            raise _SameAsReported
        budget.keep_for_trials(trials * _rounds_to_fail(shrinker.violation))
        progress.note(f"{label}: {len(best.turns)} turns after {checks} checks, "
                      f"{budget.shrink_calls()} new summarizer calls")

    shrinker = Shrinker(key, first, violation, judging.budget, judge, counter=token_counter(judging.token_counter),
                        on_check=on_check, calls=budget.shrink_calls, evidence=cause.evidence)
    budget.keep_for_trials(trials * _rounds_to_fail(violation))
    stopped = None
    try:
        shrinker.shrink()
    except _SameAsReported:
        pass  # the caller reports it once, as the finding it became
    except StopJudging:
        stopped = budget.check() or Stop(StopReason.HALTED, "stopped")
    except KeyboardInterrupt:
        budget.interrupt()
        stopped = budget.stopped
    shrunk = shrinker.result()
    try:  # already judged while shrinking: answered from the shrinker's own memo, no call
        judged = shrinker.evaluate(shrunk.transcript, shrunk.budget)
        boundaries, planned = judged.boundaries, judged.planned
    except StopJudging:
        boundaries, planned = (), ()
    shrink_calls, allowance = budget.shrink_calls(), budget.allowance
    budget.end_shrinking()
    also = () if same[0] else _also_broken(cause, shrunk.transcript, shrunk.budget, summarize, judging, chosen,
                                           summarizer.may_vary)
    seen = ({k[0] for k, _ in cause.others} | seen_with) - {key[0]} - {invariant for invariant, _ in also}
    confirmed = None
    if trials and not same[0] and budget.check() is None:
        progress.note(f"{label}: confirming, {trials} fresh trials")
        confirmed = confirm(key, shrunk.transcript, shrunk.budget, summarizer, config, chosen, budget,
                            evidence=cause.evidence)
    finding, rnd, boundary, context = shrunk.violation
    cause_kind = mechanism(shrunk.transcript, shrunk.violation)
    return Failure(invariant=finding.invariant, severity=finding.severity.value, fact_kind=finding.fact_kind,
                   fact_id=finding.fact_id, detail=finding.detail, expected=finding.expected, found=finding.found,
                   transcript=shrunk.transcript, round=rnd, boundary=boundary, context=context,
                   original_turns=len(first.turns), shrink_checks=shrunk.checks, shrink_calls=shrink_calls,
                   shrink_allowance=allowance, shrink_stopped=stopped, budget=shrunk.budget, elided=shrunk.elided,
                   trials=confirmed,
                   boundaries=boundaries, planned=planned, evidence=finding.evidence and str(finding.evidence),
                   outcome=finding.outcome and str(finding.outcome), also=also,
                   also_seen=tuple(sorted(seen)),
                   also_kinds=_other_kinds(None if cause_kind == DROPPED else key[0], finding.fact_kind, pairs_seen),
                   seen=tuple(sorted(pairs_seen, key=str)), cause=cause_kind,
                   spent_tokens=summarizer.stats.spent - spent_before, shrink_passes=shrunk.passes,
                   kept_window=shrunk.kept_window)


def _also_broken(cause: Cause, transcript: Transcript, at_budget: int, summarize, judging, chosen,
                 may_vary: bool) -> tuple[tuple[str, str], ...]:
    """Of the other invariants ``cause`` broke, those the minimal transcript still breaks on the same fact (or
    call), each with its detail: one session judged to its end, within the budget (None of them when
    the budget stops it: they are then reported as seen in the original session only)."""
    if not cause.others:
        return ()
    primary = cause.violation[0]
    wanted = {key for key, _ in cause.others}
    try:
        ev = evaluate(transcript, summarize, judging, chosen, budget=at_budget, may_vary=may_vary)
    except StopJudging:
        return ()
    if ev.stopped:
        return ()
    return tuple((key[0], v[0].detail) for key, v in sorted(ev.violations.items(), key=lambda kv: str(kv[0]))
                 if key in wanted and (v[0].fact_id, v[0].call_id) == (primary.fact_id, primary.call_id))


def _other_kinds(invariant: str | None, kind: str | None, pairs: frozenset[Key]) -> tuple[str, ...]:
    """The fact kinds besides ``kind`` on which ``invariant`` (any, for a dropped obligation) was seen broken
    by the same cause."""
    return tuple(sorted({k for i, k in pairs if invariant in (None, i) and k is not None} - {kind}))


class _SameAsReported(Exception):
    """Shrinking made the failure one already reported: stop, it is that finding."""


def _rounds_to_fail(violation: Violation) -> int:
    """Calls one trial of a transcript failing in this round takes (a session-wide finding: its rounds are
    not known, so one)."""
    return 1 if violation[1] is None else violation[1] + 1


def confirm(key: tuple[str, str | None], transcript: Transcript, at_budget: int, summarizer: Summarizer,
            config: RunConfig, chosen, budget: Budget, *, evidence: str | None = None) -> tuple[int, int] | None:
    """Re-ask a minimal transcript ``--trials`` times with the cache bypassed: (failed, of) trials that
    showed the same invariant on the same fact kind (resting on ``evidence``, when given). A trial the budget
    stopped is not counted; None when none could run."""
    ask = budget.metered(summarizer.ask_again)
    again = asker(summarizer, budget) if key[0] == "deterministic" else None
    failed = done = 0
    for _ in range(config.limits.trials):
        ev = evaluate(transcript, ask, config.judging, chosen, budget=at_budget, until=key, ask_again=again,
                      may_vary=summarizer.may_vary, until_evidence=evidence)
        if ev.stopped:
            break
        done += 1
        failed += ev.shown(key, evidence) is not None
    return (failed, done) if done else None
