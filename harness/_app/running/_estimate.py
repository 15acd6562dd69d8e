"""What a run will spend, said before it starts (``run --estimate``, and the first line a run prints).

A model-backed summarizer costs money per call and per token, and a run at a production budget hands it
contexts of a hundred thousand tokens. The estimate generates the run's own sessions (the same seed, the
same examples: generating costs no call) and plays each through the session runner with a stand-in
compactor that returns ``RETAINED_SHARE`` of its budget, so the calls and prompt tokens exploring takes
are counted as the run will count them. A compactor that returns more compacts more often, one that
keeps everything about once a window. On top of exploring: the determinism probes (each asked again), and
for each finding at most ``--shrink-calls`` calls to shrink it and ``--trials`` to confirm it, each handed
at most the largest context (shrinking's first checks replay the long session; later ones are small).
``--max-calls`` and ``--max-tokens`` stay the hard caps.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness._base._model import Role, Transcript, Turn
from harness._base._protocol import CompactionRequest, CompactionResult
from harness._base._tokens import context_tokens
from harness._app.judging._session import SessionConfig, run_session
from harness._app.running._evaluate import token_counter
from harness._app.running._exploration import generate, probed, run_strategy, stages
from harness._app.running._options import DEFAULT_SHRINK_CALLS, RunConfig
from harness.oracles import select
from harness.strategies import Background
from harness.strategies import expand as expand_skeleton

__all__ = ["Estimate", "estimate", "RETAINED_SHARE"]

#: The share of its budget the stand-in compactor of an estimate returns.
RETAINED_SHARE = 0.2


@dataclass(frozen=True, slots=True)
class Estimate:
    """What exploring a run's sessions costs, and the most each finding may add (``estimate``)."""

    sessions: int
    session_tokens: int  # the sessions' turns, in tokens, all together
    calls: int  # compactions exploring takes, the determinism probes' second asks included
    prompt_tokens: int  # the contexts those calls are handed, in tokens
    largest_request: int  # the largest context one call is handed, in tokens
    shrink_calls: int  # the most calls shrinking one finding may make (--shrink-calls; a model's default without it)
    trials: int  # fresh asks confirming each finding (--trials)

    @property
    def per_finding_tokens(self) -> int:
        """The most one finding's shrinking and trials may hand the summarizer: every call at the largest."""
        return (self.shrink_calls + self.trials) * self.largest_request

    def describe(self) -> str:
        return (f"estimate: exploring {self.sessions} sessions ({self.session_tokens:,} tokens of turns) takes about "
                f"{self.calls:,} calls handed {self.prompt_tokens:,} prompt tokens (for a compactor returning "
                f"{RETAINED_SHARE:.0%} of its budget; the largest context {self.largest_request:,}); each finding "
                f"adds at most {self.shrink_calls + self.trials:,} calls ({self.shrink_calls} shrinking, "
                f"{self.trials} trials) handed at most {self.per_finding_tokens:,} tokens (shrinking's first checks "
                f"replay the long session; lower --shrink-calls to spend less)")


def estimate(config: RunConfig, background: Background | None, run_seed: int) -> Estimate:
    """What ``run(config)`` with ``run_seed`` will spend exploring, played without calling the summarizer."""
    generation, judging = config.generation, config.judging
    counter = token_counter(judging.token_counter)
    session = SessionConfig(budget=judging.budget, trigger=judging.trigger, count_tokens=counter,
                            dialect=judging.dialect, use_compaction_points=judging.planned_cuts,
                            tighten=judging.tighten)
    retained: dict[int, Turn] = {}  # by the budget a round is given (a tightening lowers it)
    chosen = {o.id for o in select(only=judging.only, skip=judging.skip)}
    # Sessions whose every request is asked again (the ``deterministic`` oracle's probes; ``--trials 0`` has none).
    probes = probed(generation.examples) if "deterministic" in chosen and config.limits.trials else frozenset()
    totals = {"sessions": 0, "tokens": 0, "calls": 0, "prompt": 0, "largest": 0}
    index = 0

    def stand_in(request: CompactionRequest) -> CompactionResult:
        if request.budget not in retained:
            retained[request.budget] = Turn(Role.SYSTEM, " ".join(["summary"] * max(1, int(RETAINED_SHARE * request.budget))))
        return CompactionResult((retained[request.budget],))

    def take(skeleton) -> None:
        nonlocal index
        mine, index = generation.in_shard(index), index + 1
        if not mine:
            return
        transcript: Transcript = expand_skeleton(skeleton, background=background)
        rounds = run_session(transcript, stand_in, session)
        sizes = [r.tokens for r in rounds]
        asked = 2 if index - 1 in probes else 1
        totals["sessions"] += 1
        totals["tokens"] += context_tokens(transcript.turns, None, counter)
        totals["calls"] += asked * len(sizes)
        totals["prompt"] += asked * sum(sizes)
        totals["largest"] = max([totals["largest"], *sizes])

    generate(stages(generation, judging, background, run_strategy(generation, judging, background)), run_seed, take)
    return Estimate(totals["sessions"], totals["tokens"], totals["calls"], totals["prompt"], totals["largest"],
                    config.limits.shrink_calls or DEFAULT_SHRINK_CALLS, config.limits.trials)

