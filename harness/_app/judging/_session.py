"""A long-horizon session: turns stream in, compaction fires again and again.

The context is the previous compaction's result plus the turns since. When
it passes ``trigger`` of the budget (default 80%), or a transcript's own
compaction point is reached (a *planned* cut, unless ``use_compaction_points``
is off), the summarizer compacts the whole context, previous summary included,
so generational loss (a threshold turning into "a few" by the third summary) is
exercised. Oracles judge every round against the source ledger at that point.
If a result is itself over the trigger, the next compaction waits for another
trigger's worth of turns, so a summarizer that never shrinks costs linear, not
quadratic, time. Like a runtime, which compacts between model calls, the trigger
never fires while a step's tool results are still coming in. A transcript's
tightenings lower the budget from a round on, unless ``tighten`` is off; a
runtime does neither of those, and with both off a session runs as one does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness._base._dialects import DEFAULT_DIALECT, DIALECTS
from harness._base._errors import InvalidArgument
from harness._base._model import Transcript, Turn, live_facts, mid_results, round_budget
from harness._base._protocol import CompactionRequest, CompactionResult
from harness._base._tokens import TokenCounter, context_tokens, count_tokens, message_tokens

__all__ = ["Round", "SessionConfig", "run_session"]


@dataclass(frozen=True, slots=True)
class SessionConfig:
    """How a session compacts: the budget, the trigger share, and how tokens are counted."""

    budget: int = 2000
    trigger: float = 0.8
    use_compaction_points: bool = True  # compact at the transcript's planned cuts too, not only at the trigger
    count_tokens: TokenCounter = count_tokens
    dialect: str = DEFAULT_DIALECT  # the provider shape each request is written in
    tighten: bool = True  # lower the budget from the rounds the transcript's tightenings name

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise InvalidArgument(f"--dialect {self.dialect!r}: expected one of {', '.join(DIALECTS)}")
        if self.budget < 1:
            raise InvalidArgument(f"--budget {self.budget}: expected a positive number of tokens")
        if not 0 < self.trigger <= 1:
            raise InvalidArgument(f"trigger={self.trigger}: expected a share of the budget in (0, 1]")


@dataclass(frozen=True)
class Round:
    """One compaction: how many source turns had been seen, what came back, and whether a planned cut forced
    it (``planned``) or the context passing the trigger fired it."""

    index: int
    boundary: int
    request: CompactionRequest
    result: CompactionResult
    planned: bool = False
    tokens: int = 0  # the context's size when it fired, as the session counts it (the request's turns)


def run_session(
    transcript: Transcript,
    summarize: Callable[[CompactionRequest], CompactionResult],
    config: SessionConfig = SessionConfig(),
    *,
    on_round: Callable[[Round], bool] | None = None,
) -> list[Round]:
    """Stream ``transcript`` through ``summarize``; ``on_round`` may return True to stop early."""
    forced = set(transcript.compaction_points) if config.use_compaction_points else set()
    between = mid_results(transcript.turns)  # a step's results still coming in: the trigger waits for them
    context: list[Turn] = []
    used = 0
    rounds: list[Round] = []
    budget_of = (lambda index: round_budget(transcript, config.budget, index)) if config.tighten else \
        (lambda index: config.budget)
    budget = budget_of(0)
    tier, last_budget = 1, budget
    carried = 0  # the leading turns of the context that the previous compaction returned
    threshold = config.trigger * budget
    fire_at = threshold
    counted: dict[int, tuple[Turn, int]] = {}  # id(turn) -> (turn, its tokens): each turn is counted once

    def tokens_of(turn: Turn) -> int:
        held = counted.get(id(turn))
        if held is None or held[0] is not turn:
            held = counted[id(turn)] = (turn, message_tokens(turn, config.count_tokens))
        return held[1]

    for i, turn in enumerate(transcript.turns):
        context.append(turn)
        used += tokens_of(turn)
        boundary = i + 1
        if (used <= fire_at or boundary in between) and boundary not in forced:
            continue
        if rounds:
            tier += budget < last_budget
        request = CompactionRequest(tuple(context), budget, live_facts(transcript, boundary), tier,
                                    transcript.consumers, carried, config.dialect)
        result = summarize(request)
        rnd = Round(len(rounds), boundary, request, result, planned=used <= fire_at or boundary in between,
                    tokens=used)
        rounds.append(rnd)
        if on_round is not None and on_round(rnd):
            break
        context = list(result.messages)
        carried = len(context)
        # As budget-respected counts it: the messages (a kept turn is the request's own object, counted already)
        # and the ledger as the agent sees it rendered.
        used = sum(tokens_of(t) for t in context) + context_tokens((), result.ledger, config.count_tokens)
        last_budget, budget = budget, budget_of(len(rounds))
        threshold = config.trigger * budget
        # A result still over the trigger would fire again on every turn (and a summarizer that
        # never shrinks would make the session quadratic): wait for a trigger's worth of new turns.
        fire_at = threshold if used <= threshold else used + threshold
    return rounds
