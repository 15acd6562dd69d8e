"""A run's options as four frozen objects (what to generate, how to call, how to judge, the limits),
built once and passed whole: each part of the harness takes the one it needs.

``RunConfig.of(summarizer, examples=..., budget=...)`` builds them from flat keywords, each going to
the object that declares it, for a library caller or a test; ``config.but(...)`` changes some.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from harness._base._dialects import DEFAULT_DIALECT, DIALECTS
from harness._base._errors import InvalidArgument
from harness._base._model import Consumer
from harness._app.calling._options import CallOptions
from harness.strategies import DEFAULT_MAX_WINDOWS, DEFAULT_TRIGGER

__all__ = ["RunConfig", "Generation", "Judging", "Limits", "UNCLEAR_MODES", "DEFAULT_BUDGET", "DEFAULT_SHRINK_CALLS",
           "FAST_CALL_SECONDS", "FAST_SECONDS_PER_KTOKEN", "FAST_SHRINK_CALLS", "DEFAULT_TRIALS", "DEFAULT_EXAMPLES", "DEFAULT_MAX_WINDOWS",
           "DEFAULT_TRIGGER"]

#: What an unclear reading does to a run: shown for review (the default), or a failure (``--unclear fail``).
UNCLEAR_MODES = ("review", "fail")
#: The context budget in tokens when none is given.
DEFAULT_BUDGET = 2000
#: New summarizer calls one failure's shrinking may make before it reports the smallest transcript so far.
#: Most failures shrink in a few dozen (benchmarks/shrink_quality.py); this bounds the few that do not.
DEFAULT_SHRINK_CALLS = 400
#: Without --shrink-calls, a summarizer whose calls so far took under ``FAST_CALL_SECONDS`` (median), or under
#: ``FAST_SECONDS_PER_KTOKEN`` per thousand tokens handed to it (a trimmer given 200k-token contexts), is code,
#: not a model behind an API (whose answers take a second, or tens for a long context), and each of its failures
#: may spend ``FAST_SHRINK_CALLS``: the checks a failure of many rounds needs cost it seconds, not hours and money.
FAST_CALL_SECONDS = 0.01
FAST_SECONDS_PER_KTOKEN = 0.002
FAST_SHRINK_CALLS = 1200
#: Fresh re-asks of each minimal failure (cache bypassed) that confirm it and measure its rate.
DEFAULT_TRIALS = 3
#: Transcripts a run generates when not told.
DEFAULT_EXAMPLES = 50


@dataclass(frozen=True, slots=True)
class Generation:
    """What to generate; the seed makes it reproducible."""

    examples: int = DEFAULT_EXAMPLES
    seed: int | None = None
    # Sessions are sized to the budget (``harness.strategies.skeletons(budget=...)``): each spans one to ``max_windows``
    # windows, a window the tokens from an empty context to the trigger; ``max_turns`` caps their turns.
    max_windows: int = DEFAULT_MAX_WINDOWS
    max_turns: int | None = None
    background: str | None = None  # a team's session logs used as the filler (strategies.load_background)
    consumers: tuple[Consumer, ...] = ()  # declared on every generated transcript (``consumer-requirements``)
    # The example database (``harness._app.running._database``): a directory, or redis://HOST:PORT/DB shared by
    # a night's shards; each finding's minimal transcript is kept there and judged first by the next run.
    database: str | None = None
    database_readonly: bool = False  # learn from the shared database, write nothing to it
    shard: tuple[int, int] | None = None  # (K, N): judge only the examples whose index is K-1 modulo N

    def __post_init__(self) -> None:
        if self.max_windows < 1 or (self.max_turns is not None and self.max_turns < 1):
            raise InvalidArgument(f"max_windows={self.max_windows}, max_turns={self.max_turns}: expected numbers >= 1")
        if self.shard is not None:
            k, n = self.shard
            if not 1 <= k <= n:
                raise InvalidArgument(f"--shard {k}/{n}: expected K/N with 1 <= K <= N")

    def in_shard(self, index: int) -> bool:
        """Whether the ``index``-th generated example (0-based, over the whole seed) is this shard's."""
        return self.shard is None or index % self.shard[1] == self.shard[0] - 1

    def shard_examples(self) -> int:
        """How many of the seed's ``examples`` this shard judges."""
        return self.examples if self.shard is None else len(range(self.shard[0] - 1, self.examples, self.shard[1]))


@dataclass(frozen=True, slots=True)
class Judging:
    """How each session is judged."""

    budget: int = DEFAULT_BUDGET
    trigger: float = DEFAULT_TRIGGER  # compaction fires at this share of the budget
    # As a team's runtime runs a session, both False: compaction only when the trigger fires, at one budget.
    planned_cuts: bool = True  # also compact at the generator's adversarial cut points (``Transcript.compaction_points``)
    tighten: bool = True  # lower the budget from the rounds a transcript's tightenings name (``Transcript.tightenings``)
    only: tuple[str, ...] | None = None  # oracle ids to run (None: all)
    skip: tuple[str, ...] = ()
    token_counter: str | None = None  # module:function, str -> int; default harness.count_tokens
    rules: str | None = None  # module:OBJECT naming a team's oracles.ProseRules; default DEFAULT_RULES
    unclear: str = "review"  # one of UNCLEAR_MODES: an unclear reading is shown for review, or fails the run
    may_vary: bool = False  # the summarizer may answer one request differently: ``deterministic`` notes, never fails
    dialect: str = DEFAULT_DIALECT  # the provider shape requests are written in and results judged by (DIALECTS)

    def __post_init__(self) -> None:
        if self.unclear not in UNCLEAR_MODES:
            raise InvalidArgument(f"unclear={self.unclear!r}: expected one of {', '.join(UNCLEAR_MODES)}")
        if self.dialect not in DIALECTS:
            raise InvalidArgument(f"--dialect {self.dialect!r}: expected one of {', '.join(DIALECTS)}")
        if not 0 < self.trigger <= 1:
            raise InvalidArgument(f"--trigger {self.trigger}: expected a share of the budget in (0, 1]")


@dataclass(frozen=True, slots=True)
class Limits:
    """What the run may spend, and when it stops."""

    max_time: float | None = None  # seconds for the whole run; then a partial report
    max_calls: int | None = None  # new summarizer calls the whole run may make (exploration leaves shrinking some)
    max_tokens: int | None = None  # prompt + completion tokens the whole run may spend, where usage is reported
    # New calls one failure's shrinking may make; None chooses by the summarizer's speed (FAST_SHRINK_CALLS).
    shrink_calls: int | None = None
    trials: int = DEFAULT_TRIALS  # fresh re-asks confirming each minimal failure (0: none, and no determinism probes)
    stop_on_error: bool = False  # stop at the first summarizer failure


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything a run depends on."""

    calling: CallOptions
    generation: Generation = field(default_factory=Generation)
    judging: Judging = field(default_factory=Judging)
    limits: Limits = field(default_factory=Limits)
    quiet: bool = False  # no progress output
    transcript_file: str | None = None  # set by ``shrink``: the file the reproduce command names

    @classmethod
    def of(cls, summarizer: str, **options: Any) -> RunConfig:
        """A config from flat keywords (``examples=``, ``budget=``, ``timeout=``...), each given to the
        object that declares it; an unknown one is an ``InvalidArgument``."""
        return cls(CallOptions(summarizer)).but(**options)

    def but(self, **options: Any) -> RunConfig:
        """This config with some options changed, named as in ``of``."""
        parts: dict[str, dict[str, Any]] = {}
        own: dict[str, Any] = {}
        for name, value in options.items():
            if name in _OWN:
                own[name] = value
            elif name in _PART_OF:
                parts.setdefault(_PART_OF[name], {})[name] = value
            else:
                raise InvalidArgument(f"RunConfig has no option {name!r}; known: {', '.join(sorted(_KNOWN))}")
        changed = {part: dataclasses.replace(getattr(self, part), **values) for part, values in parts.items()}
        return dataclasses.replace(self, **changed, **own)

    def to_dict(self) -> dict[str, Any]:
        """As plain JSON data (what a fuzzing process is handed)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """The inverse of ``to_dict``."""
        flat = {name: value for part in _PARTS for name, value in data[part].items()}
        for name in _TUPLES:
            if flat.get(name) is not None:
                flat[name] = tuple(flat[name])
        flat["consumers"] = tuple(Consumer(c["name"], tuple(c["requires"])) for c in flat.get("consumers") or ())
        return cls.of(**flat, **{name: data[name] for name in _OWN})


_PARTS = {"calling": CallOptions, "generation": Generation, "judging": Judging, "limits": Limits}
_PART_OF = {f.name: part for part, cls in _PARTS.items() for f in dataclasses.fields(cls)}
_OWN = ("quiet", "transcript_file")
_TUPLES = tuple(f.name for cls in _PARTS.values() for f in dataclasses.fields(cls) if "tuple" in str(f.type))
_KNOWN = (*_PART_OF, *_OWN)
assert len(_PART_OF) == sum(len(dataclasses.fields(cls)) for cls in _PARTS.values()), "an option in two parts"
