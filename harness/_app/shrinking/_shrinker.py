"""Shrinking one failure cheaply: the domain minimizer's moves, in the order that costs fewest calls.

Every check replays a session through the summarizer, and with a model behind
it each call costs seconds and money, so the order of the moves matters more
than their cleverness. Moves that keep every request the session makes the
same come first (they are answered by the call cache for free); then moves
that make the transcript small in one step (one fact, filler coalesced); only
then the budget and delta debugging, by which point each check costs a call or
two.

What belongs where (the issue asked us to decide):

- The *skeleton* (Hypothesis) can shrink only what it generated: how many
  facts, of which kinds, how many turns and decoys. It cannot tie the amount of
  filler to the budget, and each of its attempts regenerates a transcript the
  summarizer has never seen, so on a position-driven failure it spends hundreds
  of full sessions to remove a few turns. So shrinking is the domain
  minimizer's alone; with ``--database`` the minimal transcript it finds is
  kept and judged first by the next run, so its cost is paid once.
- The *budget* is not part of the skeleton: exploration tests the budget the
  team runs with. Lowering it belongs to shrinking, because a failure that needs
  2,000 tokens of unrelated work at a budget of 2,000 usually needs 200 at a
  budget of 200, and only the domain minimizer can move the two together
  (coalesce the filler, lower the budget, then cut the filler to what is
  still needed). The minimal transcript is reported and saved with the budget
  it fails at, and replay uses that budget.
- Facts are removed as units (``fact_units``), the single-fact transcript
  first: most failures are about one obligation, and ddmin over turns would
  otherwise spend checks discovering that a retraction needs its target.
- Tightenings, consumers and effects (the session-level ground truth) go when
  the failure does not need them, so a minimal session has only the tiers and
  declarations its failure is about; a tightening the failure needs moves to
  the earliest round it still fails at, and the rounds after the failure go.
- Rounds: every check costs a call per round the session makes, so a failure
  that showed many rounds into a session first restarts from the request of
  that round (``_rounds.from_failing_request``), a transcript of source turns for a
  compactor that keeps messages verbatim, answered by the call cache (a loss
  between rounds restarts from the round before, an effect run after its
  fact was dropped from the last request holding the fact). Merging the filler
  leaves few rounds, so every later check costs few calls; a failure that needs
  its rounds where they fired has them pinned as cut points instead. A failure
  that needs a window to end where it did (a tool result kept without its call)
  keeps the turns it is about and is retried at the budgets that put the
  window's edge back beside them.
- The window's edge, directly (``harness._app.shrinking._window``): the turns the failure is
  about, with the rest merged or gone, at a budget found by bisection, steered
  by which of those turns the last round still held (all: lower; none:
  higher). A tool result cut from its call at a budget of 2,000 becomes the
  call and its result at the budget that splits them, in about ten small
  checks. A window of the oldest tokens is found the other way, by cutting the
  merged work before the subject to the length that leaves it just outside.
  It runs early for a failure that still takes many rounds (each other check
  would replay them all), otherwise after the cheap moves, only on what they
  left long.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from harness._base._model import Tightening, Transcript, Turn
from harness._base._tokens import TokenCounter, count_tokens, message_tokens
from harness._app.judging._judge import Evaluation, StopJudging, Violation
from harness._app.shrinking._moves import (call_turns, coalesce, ddmin, fact_units, ledger_turns, minimize, prefix,
                                           shortened, size, without_turns)
from harness._app.shrinking._floor import own_window
from harness._app.shrinking._rounds import RESTART_SAVES_ROUNDS, from_failing_request, thin
from harness._app.shrinking._tally import PassTally
from harness._app.shrinking._window import subject_window

__all__ = ["MIN_SHRUNK_BUDGET", "PassTally", "Shrunk", "Shrinker"]

#: The lowest budget shrinking tries. It never goes below twice what the remaining obligations'
#: own turns take, either, so a summarizer always had room to keep them.
MIN_SHRUNK_BUDGET = 100

#: Above this many turns after plain delta debugging, try removals that lower the budget with them, at most
#: this many checks, stopping after this many misses in a row (a guess at the compactor's token count).
COMPENSATE_ABOVE, COMPENSATED_CHECKS, COMPENSATED_MISSES = 4, 40, 10

#: What a merged turn is cut to at each try: a sixteenth while the failure holds and the turn is over
#: this many budgets long, then halves (near the budget a sixteenth mostly loses the failure: a wasted check).
TRIM_SHARES = (1 / 16, 1 / 2)
TRIM_FAST_ABOVE = 4


@dataclass(frozen=True, slots=True)
class Shrunk:
    """The smallest failing transcript found, the budget it fails at, which of its turns are merged
    filler: (turn index, source turns merged into it, its tokens), and what each pass cost and earned."""

    transcript: Transcript
    budget: int
    violation: Violation
    elided: tuple[tuple[int, int, int], ...]
    checks: int
    passes: tuple[PassTally, ...] = ()
    kept_window: int | None = None  # the compactor's own window, when the transcript is at its floor


class Shrinker:
    """Shrinks one failure, identified by its (invariant, fact kind) key.

    ``judge(transcript, budget)`` runs and judges a session (stopping at the
    round that shows ``key``, as the caller arranges); it may raise
    ``StopJudging`` when the caller's allowance is spent, which ends
    ``shrink`` with the best transcript so far kept in ``result()``.
    """

    def __init__(self, key: tuple[str, str | None], first: Transcript, violation: Violation, budget: int,
                 judge: Callable[[Transcript, int], Evaluation], *, counter: TokenCounter = count_tokens,
                 on_check: Callable[[int, Transcript], None] | None = None, calls: Callable[[], int] = lambda: 0,
                 evidence: str | None = None):
        self.key = key
        self.evidence = evidence  # the evidence the violation must rest on, for a cause another of its key hides
        self._calls = calls  # the summarizer calls spent so far, for each pass's tally
        self._tallies: dict[str, PassTally] = {}
        # Removing a turn takes its tool call's other half along, unless the failure is about pairing.
        self.pairs = key[0] != "tool-pairing"
        self._judge = judge
        self._counter = counter
        self._on_check = on_check
        self._seen: dict[tuple[Transcript, int], Evaluation] = {}
        self.merged: dict[Turn, int] = {}  # merged filler turn -> how many source turns it stands for
        self.transcript, self.violation, self.budget = first, violation, budget
        self._run_budget = budget
        self._window: int | None = None
        self.checks = 0

    # -- checking ---------------------------------------------------------------------------------

    def evaluate(self, transcript: Transcript, budget: int | None = None) -> Evaluation:
        """The session's evaluation, computed once per (transcript, budget)."""
        budget = self.budget if budget is None else budget
        memo = (transcript, budget)
        if memo not in self._seen:
            self.checks += 1
            if self._on_check is not None:
                self._on_check(self.checks, self.transcript)
            ev = self._judge(transcript, budget)
            if ev.stopped:
                raise StopJudging
            self._seen[memo] = ev
        return self._seen[memo]

    def still_fails(self, transcript: Transcript, budget: int | None = None) -> bool:
        """Whether ``transcript`` (at ``budget``) still shows the violation; if so and it is no larger
        than the best so far, it becomes the best."""
        budget = self.budget if budget is None else budget
        violation = self.evaluate(transcript, budget).shown(self.key, self.evidence)
        if violation is None:
            return False
        if size(transcript) <= size(self.transcript) and budget <= self.budget:
            self.transcript, self.violation, self.budget = transcript, violation, budget
        return True

    def result(self) -> Shrunk:
        elided = tuple((i, self.merged[t], message_tokens(t, self._counter))
                       for i, t in enumerate(self.transcript.turns) if t in self.merged)
        return Shrunk(self.transcript, self.budget, self.violation, elided, self.checks, tuple(self._tallies.values()),
                      self._window)

    def _run(self, name: str, move: Callable[[], object]) -> object:
        """Run one pass, tallying its checks, calls and whether it changed what is reported (a candidate is
        kept only when no larger, so a change is a gain; also when the allowance stops it midway)."""
        checks, calls, before = self.checks, self._calls(), (self.transcript, self.budget)
        try:
            return move()
        finally:
            earned = (self.transcript, self.budget) != before
            self._tallies[name] = self._tallies.get(name, PassTally(name)).plus(
                PassTally(name, 1, self.checks - checks, self._calls() - calls, int(earned)))

    # -- the moves, cheapest first ---------------------------------------------------------------

    def shrink(self) -> None:
        """Apply every move once, then the cheap ones again on what delta debugging left."""
        run = self._run
        run("cut-after-failure", self._cut_after_failure)
        run("from-failing-request", lambda: from_failing_request(self))
        run("thin", lambda: thin(self))
        if len(self.evaluate(self.transcript).boundaries) >= RESTART_SAVES_ROUNDS:
            run("subject-window", lambda: subject_window(self))  # every other move's check would replay those rounds
        # Merging first leaves a session of few rounds, so every later check is cheap; when the failure
        # needs its rounds where they were, pin them, and merge only between them.
        if not run("coalesce", lambda: self._coalesce(thorough=False)):
            run("pin-compactions", self._pin_compactions)
            run("coalesce", self._coalesce)
        run("lower-budget", self._lower_budget)  # before dropping facts: at a lower budget the filler pushes enough
        run("one-fact", self._one_fact)
        run("lower-budget", self._lower_budget)
        run("subject-window", lambda: subject_window(self))  # what is still long is often a window's edge
        searched = self._about()
        run("drop-facts", self._drop_facts)
        run("drop-session-truth", self._drop_session_truth)
        if run("earlier-tightenings", self._earlier_tightenings):
            run("cut-after-failure", self._cut_after_failure)  # the failure shows in an earlier round now
        for _ in range(2):
            before = self.transcript
            if self._at_floor():
                break
            run("cut-after-failure", self._cut_after_failure)  # the failure may show in an earlier round now
            run("pin-compactions", self._pin_compactions)
            # The capped, budget-lowering pass first: for a failure that depends on where a window
            # ends it removes what plain ddmin cannot, and it leaves plain ddmin fewer turns to try.
            if len(self.transcript.turns) > COMPENSATE_ABOVE:
                run("drop-turns-with-budget", self._drop_turns_with_budget)
            run("drop-turns", self._drop_turns)
            if self._about() != searched and not self._at_floor():  # another call or fact is cut now: its edge
                searched = self._about()
                run("subject-window", lambda: subject_window(self))
            run("coalesce", self._coalesce)
            run("lower-budget", self._lower_budget)
            run("trim-merged", self._trim_merged)
            if self.transcript is before:
                break
        run("restore-budget", self._restore_budget)
        self._window = run("own-window", lambda: own_window(self))  # for the report: a minimal transcript at its floor

    def _about(self) -> tuple[str | None, str | None]:
        """The fact and the tool call the failure is about (a window's edge falls beside them)."""
        return self.violation[0].fact_id, self.violation[0].call_id

    def _at_floor(self) -> bool:
        """One turn past the compactor's own window: it drops nothing from fewer, so no deletion can still
        fail, and each check would replay every round."""
        return own_window(self, slack=1) is not None

    def _cut_after_failure(self) -> None:
        """Turns after the round that showed the violation cannot matter to it: every request up to
        that round is unchanged, so this check is answered from the call cache. A finding about a tool
        call (an effect that ran after that round, a call whose result arrives later) keeps the call
        and its answer too."""
        finding, _, boundary, _ = self.violation
        if boundary is None:
            return
        if finding.call_id is not None:
            boundary = max([boundary, *(i + 1 for i in call_turns(self.transcript, finding.call_id))])
        if boundary < len(self.transcript.turns):
            self.still_fails(prefix(self.transcript, boundary))

    def _pin_compactions(self) -> None:
        """Make the rounds that fired into cut points, so removing text before a round does not stop
        it from firing (the requests stay the same: the cache answers)."""
        ev = self.evaluate(self.transcript)
        points = tuple(sorted(set(ev.boundaries) | set(self.transcript.compaction_points)))
        if points != self.transcript.compaction_points:
            self.still_fails(dataclasses.replace(self.transcript, compaction_points=points))

    def _one_fact(self) -> None:
        """The failing fact alone: first with nothing before it and the filler merged, then with the
        filler before it too, then unmerged."""
        fact_id = self.violation[0].fact_id
        units = fact_units(self.transcript)
        if fact_id not in units:
            return
        unit = units[fact_id]
        others = set().union(*(u for f, u in units.items() if f != fact_id)) - unit
        alone = without_turns(self.transcript, others, pairs=self.pairs)
        start = min(unit)
        before = set(range(start)) - unit
        candidates = [without_turns(self.transcript, others | before, pairs=self.pairs), alone]
        for candidate in candidates:
            merged = self.merged_version(candidate)
            if merged is not None and self.still_fails(merged):
                return
        if len(units) > 1:
            self.still_fails(alone)

    def merged_version(self, transcript: Transcript, keep: frozenset[int] = frozenset()) -> Transcript | None:
        """``transcript`` with its filler runs merged (None if there is none), remembering how many
        source turns each merged turn stands for (a merged turn merged again counts its own)."""
        merged, groups = coalesce(transcript, keep)
        for index, group in groups.items():
            self.merged[merged.turns[index]] = sum(self.merged.get(transcript.turns[i], 1) for i in group)
        return merged if groups else None

    def _coalesce(self, *, thorough: bool = True) -> bool:
        """Merge the filler runs; if the failure needs some turn at a cut point (a tool call cut from
        its answer), merge again keeping the turns either side of every cut point, then (``thorough``)
        the turns the failure is about as well. Whether a merged transcript still fails.

        Each merged candidate is also tried with merged turns capped (one larger than the budget
        changes what a window can hold) and, when ``thorough``, at the budgets that keep the window's
        edge where it was relative to the failure (``_edge_budgets``)."""
        transcript = self.transcript
        n = len(transcript.turns)
        around = frozenset(i for p in transcript.compaction_points for i in (p - 1, p) if 0 <= i < n)
        keeps = (frozenset(), around, around | self.subject(transcript)) if thorough else (frozenset(), around)
        tried: set[Transcript] = set()
        for keep in keeps:
            merged = self.merged_version(transcript, keep)
            if merged is None:
                return False
            if merged in tried:
                continue
            tried.add(merged)
            shares = (2, 8) if thorough else (2,)
            candidates = [merged, *(c for share in shares if (c := self._capped(merged, self.budget // share)) is not None)]
            for candidate in candidates:
                if self.still_fails(candidate):
                    return True
                if thorough and any(self.still_fails(candidate, b) for b in self._edge_budgets(transcript, candidate)):
                    return True
        return False

    def subject(self, transcript: Transcript) -> frozenset[int]:
        """The turns the failure is about: the failing fact's unit, or the tool call it names."""
        finding = self.violation[0]
        turns = set(fact_units(transcript).get(finding.fact_id, ()))
        if finding.call_id is not None:
            turns |= call_turns(transcript, finding.call_id)
        return frozenset(turns)

    def _edge_budgets(self, before: Transcript, after: Transcript) -> list[int]:
        """Budgets at which a compactor that keeps the newest (or the oldest) tokens of ``after`` cuts
        as close to the failure's turns as it did in ``before``: the budget less what the reduction
        took from the tokens after those turns (or before them). Counted with our counter, so close
        to the compactor's own count, not equal."""
        old, new = self.subject(before), self.subject(after)
        if not old or not new:
            return []

        def tokens(t: Transcript, indices) -> int:
            return sum(message_tokens(t.turns[i], self._counter) for i in indices)

        after_old = tokens(before, range(max(old) + 1, len(before.turns)))
        after_new = tokens(after, range(max(new) + 1, len(after.turns)))
        head_old, head_new = tokens(before, range(min(old))), tokens(after, range(min(new)))
        floor = self.budget_floor()
        budgets = [self.budget - (after_old - after_new), self.budget - (head_old - head_new)]
        return [b for b in dict.fromkeys(budgets) if floor <= b < self.budget]

    def _capped(self, transcript: Transcript, tokens: int) -> Transcript | None:
        """``transcript`` with each merged turn cut to about ``tokens`` (None if none is longer)."""
        turns, changed = list(transcript.turns), False
        for i, turn in enumerate(turns):
            size = message_tokens(turn, self._counter)
            if turn in self.merged and size > tokens:
                shorter = shortened(turn, tokens / size)
                if shorter is not None:
                    self.merged[shorter] = self.merged[turn]
                    turns[i], changed = shorter, True
        return dataclasses.replace(transcript, turns=tuple(turns)) if changed else None

    def _lower_budget(self) -> None:
        """Halve the budget while the failure still shows, down to ``MIN_SHRUNK_BUDGET`` and never below
        twice the tokens of the obligations' own turns."""
        floor = self.budget_floor()
        while self.budget // 2 >= floor and self.still_fails(self.transcript, self.budget // 2):
            pass

    def _restore_budget(self) -> None:
        """Report the run's own budget if the minimal transcript fails at it too: a lower budget in
        the report should mean the failure needs it (the filler it takes to push a fact out)."""
        if self.budget == self._run_budget:
            return
        violation = self.evaluate(self.transcript, self._run_budget).shown(self.key, self.evidence)
        if violation is not None:
            self.violation, self.budget = violation, self._run_budget

    def budget_floor(self, transcript: Transcript | None = None) -> int:
        transcript = self.transcript if transcript is None else transcript
        return max(MIN_SHRUNK_BUDGET, 2 * sum(message_tokens(transcript.turns[i], self._counter)
                                              for i in ledger_turns(transcript)))

    def _trim_merged(self) -> None:
        """Cut each merged turn's text while the failure still shows, by halves: at a lower budget,
        less unrelated work pushes an obligation out. A turn many budgets long (thousands of source
        turns merged) is cut to a sixteenth at a time first, or it would take a check per halving."""
        for index in sorted(range(len(self.transcript.turns)), key=lambda i: -len(self.transcript.turns[i].text)):
            for share in TRIM_SHARES:
                while (turn := self.transcript.turns[index]) in self.merged:
                    if share < 0.5 and message_tokens(turn, self._counter) <= TRIM_FAST_ABOVE * self.budget:
                        break
                    shorter = shortened(turn, share)
                    if shorter is None:
                        break
                    self.merged[shorter] = self.merged[turn]
                    turns = self.transcript.turns[:index] + (shorter,) + self.transcript.turns[index + 1:]
                    if not self.still_fails(dataclasses.replace(self.transcript, turns=turns)):
                        break

    def _drop_facts(self) -> None:
        """ddmin over whole facts (a fact with what ends it), before ddmin over single turns."""
        units = fact_units(self.transcript)
        if len(units) < 2:
            return
        base = self.transcript
        every = set().union(*units.values())

        def fails(kept: list[str]) -> bool:
            keep = set().union(*(units[f] for f in kept)) if kept else set()
            return self.still_fails(without_turns(base, every - keep, pairs=self.pairs))

        ddmin(sorted(units), fails)

    def _drop_session_truth(self) -> None:
        """The tightenings, consumers and effects the failure does not need: a session of fewer tiers,
        fewer declarations to read. All of a kind at once first, then ddmin over them."""
        for name in ("tightenings", "consumers", "effects"):
            items = getattr(self.transcript, name)
            if not items or self.still_fails(dataclasses.replace(self.transcript, **{name: ()})):
                continue
            base = self.transcript
            if len(items) > 1:
                ddmin(list(items), lambda kept: self.still_fails(dataclasses.replace(base, **{name: tuple(kept)})))

    def _earlier_tightenings(self) -> bool:
        """Each tightening as early as it still fails (the earliest first): a tier change after one round
        instead of after five makes a session of two rounds. Whether any moved."""
        moved = False
        for i in range(len(self.transcript.tightenings)):
            tightenings = self.transcript.tightenings
            lowest = tightenings[i - 1].round + 1 if i else 1
            for target in range(lowest, tightenings[i].round):
                candidate = tightenings[:i] + (Tightening(target, tightenings[i].share),) + tightenings[i + 1:]
                if self.still_fails(dataclasses.replace(self.transcript, tightenings=candidate)):
                    moved = True
                    break
        return moved

    def _drop_turns(self) -> None:
        minimize(self.transcript, self.still_fails, pairs=self.pairs)

    def _drop_turns_with_budget(self) -> None:
        """ddmin over the turns no fact lives in, each removal lowering the budget by what the removed
        turns cost: a compactor that keeps a window of the newest (or oldest) tokens then cuts at the
        same place in what is left, so a failure that depends on exactly where the window ends (a tool
        call cut from its answer) survives the removal. Counted with our token counter, so the cut
        moves by the difference between its count and the compactor's: close, not exact."""
        base, budget = self.transcript, self.budget
        ledger = ledger_turns(base)
        free = [i for i in range(len(base.turns)) if i not in ledger]
        floor = self.budget_floor()

        misses = 0

        def fails(kept: list[int]) -> bool:
            nonlocal misses
            if misses >= COMPENSATED_MISSES:
                return False  # the guess at the compactor's count is not landing: stop paying for it
            dropped = set(free) - set(kept)
            lower = budget - sum(message_tokens(base.turns[i], self._counter) for i in dropped)
            failed = lower >= floor and self.still_fails(without_turns(base, dropped, pairs=self.pairs), lower)
            misses = 0 if failed else misses + 1
            return failed

        if len(free) > 1:
            ddmin(free, fails, max_checks=COMPENSATED_CHECKS)
