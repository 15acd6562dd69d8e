"""Shrinking one failure within the run's budget, then confirming the minimal transcript by fresh trials."""

from __future__ import annotations

from collections.abc import Callable

from harness._base._model import Transcript
from harness._app._outcome import Stop, StopReason
from harness._app._progress import Progress
from harness._app.calling._summarizer import Summarizer
from harness._app.judging._judge import Evaluation, StopJudging, Violation
from harness._app.running._budget import Budget, asker
from harness._app.running._evaluate import evaluate, token_counter
from harness._app.running._options import RunConfig
from harness._app.running._results import Failure
from harness._app.shrinking._shrinker import Shrinker

__all__ = ["shrink_failure", "confirm", "SKELETON_PASS_SHARE"]

#: With --database, the share of a failure's shrink calls the skeleton pass may spend: the rest is kept for the
#: domain shrinker, which removes single turns (a skeleton never shrinks below the strategy's min_turns).
SKELETON_PASS_SHARE = 0.6


def shrink_failure(key, first: Transcript, violation: Violation, summarizer: Summarizer, config: RunConfig,
                   chosen, budget: Budget, progress: Progress, label: str,
                   skeleton_pass: Callable[[Callable[[Transcript], bool]], None] | None = None, *,
                   failures_left: int = 1) -> Failure:
    """Shrink one failure as far as its allowance of calls goes; always returns it, shrunk or not.

    With ``--database``, Hypothesis first shrinks the skeleton (see
    ``harness._app.shrinking._shrinker`` for why only then); the domain shrinker does
    the rest. Every failing candidate is remembered, so an interrupt or a spent
    allowance still reports the smallest transcript found until then.
    """
    judging, trials = config.judging, config.limits.trials
    summarize = budget.metered(summarizer)
    budget.start_shrinking(failures_left)
    again = asker(summarizer, budget) if key[0] == "deterministic" else None

    def judge(candidate: Transcript, at_budget: int) -> Evaluation:
        return evaluate(candidate, summarize, judging, chosen, budget=at_budget, until=key, ask_again=again,
                        may_vary=summarizer.may_vary)

    def on_check(checks: int, best: Transcript) -> None:
        budget.keep_for_trials(trials * _rounds_to_fail(shrinker.violation))
        progress.note(f"{label}: {len(best.turns)} turns after {checks} checks, "
                      f"{budget.shrink_calls()} new summarizer calls")

    shrinker = Shrinker(key, first, violation, judging.budget, judge, counter=token_counter(judging.token_counter),
                        on_check=on_check)
    budget.keep_for_trials(trials * _rounds_to_fail(violation))
    stopped = None
    try:
        if skeleton_pass is not None:
            budget.cap_phase(int(config.limits.shrink_calls * SKELETON_PASS_SHARE))
            try:
                skeleton_pass(shrinker.still_fails)
            except StopJudging:
                if not budget.phase_spent():
                    raise
            finally:
                budget.cap_phase(None)
        shrinker.shrink()
    except StopJudging:
        stopped = budget.check() or Stop(StopReason.HALTED, "stopped")
    except KeyboardInterrupt:
        budget.interrupt()
        stopped = budget.stopped
    shrunk = shrinker.result()
    try:  # already judged while shrinking: answered from the shrinker's own memo, no call
        boundaries = shrinker.evaluate(shrunk.transcript, shrunk.budget).boundaries
    except StopJudging:
        boundaries = ()
    shrink_calls = budget.shrink_calls()
    budget.end_shrinking()
    confirmed = None
    if trials and budget.check() is None:
        progress.note(f"{label}: confirming, {trials} fresh trials")
        confirmed = confirm(key, shrunk.transcript, shrunk.budget, summarizer, config, chosen, budget)
    finding, rnd, boundary, context = shrunk.violation
    return Failure(invariant=finding.invariant, severity=finding.severity.value, fact_kind=finding.fact_kind,
                   fact_id=finding.fact_id, detail=finding.detail, expected=finding.expected, found=finding.found,
                   transcript=shrunk.transcript, round=rnd, boundary=boundary, context=context,
                   original_turns=len(first.turns), shrink_checks=shrunk.checks, shrink_calls=shrink_calls,
                   shrink_stopped=stopped, budget=shrunk.budget, elided=shrunk.elided, trials=confirmed,
                   boundaries=boundaries, evidence=finding.evidence and str(finding.evidence))


def _rounds_to_fail(violation: Violation) -> int:
    """Calls one trial of a transcript failing in this round takes (a session-wide finding: its rounds are
    not known, so one)."""
    return 1 if violation[1] is None else violation[1] + 1


def confirm(key: tuple[str, str | None], transcript: Transcript, at_budget: int, summarizer: Summarizer,
            config: RunConfig, chosen, budget: Budget) -> tuple[int, int] | None:
    """Re-ask a minimal transcript ``--trials`` times with the cache bypassed: (failed, of) trials that
    showed the same invariant on the same fact kind. A trial the budget stopped is not counted; None
    when none could run."""
    ask = budget.metered(summarizer.ask_again)
    again = asker(summarizer, budget) if key[0] == "deterministic" else None
    failed = done = 0
    for _ in range(config.limits.trials):
        ev = evaluate(transcript, ask, config.judging, chosen, budget=at_budget, until=key, ask_again=again,
                      may_vary=summarizer.may_vary)
        if ev.stopped:
            break
        done += 1
        failed += key in ev.violations
    return (failed, done) if done else None
