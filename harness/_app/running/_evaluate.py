"""One session judged with a run's options: its budget, trigger, token counter, rules and oracles."""

from __future__ import annotations

import functools
from collections.abc import Callable

from harness._base._errors import InvalidArgument
from harness._base._model import Consumer, Transcript
from harness._base._protocol import CompactionRequest, CompactionResult
from harness._base._tokens import count_tokens
from harness._app.calling._loading import checked_counter, load_rules
from harness._app.judging._judge import Evaluation, judge_session
from harness._app.running._options import Judging
from harness.oracles import DEFAULT_RULES, ProseRules, registered

__all__ = ["evaluate", "check_consumers", "token_counter", "prose_rules"]


def evaluate(transcript: Transcript, summarize: Callable[[CompactionRequest], CompactionResult], judging: Judging,
             chosen, *, budget: int | None = None, until: tuple[str, str | None] | None = None, ask_again=None,
             may_vary: bool = False, until_evidence: str | None = None) -> Evaluation:
    """``judge_session`` with a run's judging options (``budget`` replaces theirs: shrinking may lower it)."""
    return judge_session(transcript, summarize, budget=judging.budget if budget is None else budget,
                         trigger=judging.trigger, count_tokens=token_counter(judging.token_counter),
                         rules=prose_rules(judging.rules), oracles=chosen, until=until, ask_again=ask_again,
                         may_vary=may_vary or judging.may_vary, dialect=judging.dialect,
                         planned_cuts=judging.planned_cuts, tighten=judging.tighten, until_evidence=until_evidence)


def check_consumers(consumers: tuple[Consumer, ...]) -> None:
    """Consumers may only require what an oracle verifies for one result: an unknown class, or one judged
    over a whole session, is an ``InvalidArgument`` naming the consumer and what is known."""
    scopes = {o.id: o.scope for o in registered()}
    for consumer in consumers:
        for needed in consumer.requires:
            if needed not in scopes:
                known = ", ".join(sorted(i for i, s in scopes.items() if s == "compaction"))
                raise InvalidArgument(f"--consumer {consumer.name}: no oracle verifies {needed!r}; known: {known}")
            if scopes[needed] != "compaction":
                raise InvalidArgument(f"--consumer {consumer.name}: {needed!r} is judged over a whole session, not "
                                      "per result, so no result can be verified for it")



@functools.lru_cache(maxsize=8)
def token_counter(spec: str | None) -> Callable[[str], int]:
    """``--token-counter``'s function (checked on every call), or ours."""
    return count_tokens if spec is None else checked_counter(spec)


@functools.lru_cache(maxsize=8)
def prose_rules(spec: str | None) -> ProseRules:
    """``--rules``'s object, or ``DEFAULT_RULES``."""
    return DEFAULT_RULES if spec is None else load_rules(spec)
