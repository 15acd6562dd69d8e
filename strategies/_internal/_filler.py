"""Cheap, deterministic filler turns: the ordinary chatter between obligations.

Filler is built from pools fixed at import time and picked with a
``random.Random`` seeded per transcript, so thousands of turns cost a few
milliseconds and the same seed always gives the same text. Filler text never
contains a digit or an underscore, and every obligation literal contains one
(see ``_literals``), so filler cannot restate an obligation by accident.
"""

from __future__ import annotations

import json
import random

from harness._base._model import Role, ToolCall, Turn

__all__ = ["FillerPlan", "filler_units"]

_NOUNS = (
    "parser", "cache", "scheduler", "config loader", "retry helper", "logging setup", "test suite",
    "request handler", "queue consumer", "session store", "index page", "auth middleware", "exporter",
    "dashboard", "feature flag", "router", "serializer", "lint rules", "build script", "docs page",
)
_ADJECTIVES = ("flaky", "slow", "verbose", "stale", "noisy", "tidy", "brittle", "clean", "odd", "long")
_USER_LINES = (
    "Can you take a look at the {n}?",
    "What do you think about the {a} {n}?",
    "Let's keep going with the {n}.",
    "The {n} looks {a} to me.",
    "Any idea why the {n} is so {a}?",
    "Please tidy up the {n} when you get a chance.",
    "Ok, that makes sense.",
    "Sounds good, carry on.",
    "Hmm, I'm not sure about the {n}.",
    "Could you explain the {n} change once more?",
)
_ASSISTANT_LINES = (
    "I looked at the {n}; it reads fine.",
    "The {n} is {a}, mostly because of the {m}.",
    "I'll refactor the {n} a little so it is easier to read.",
    "Here is what I found in the {n}: nothing unusual.",
    "The {m} calls into the {n} in two places.",
    "Renamed a few helpers in the {n} for clarity.",
    "The {n} change is small; the {m} is untouched.",
    "Checked the {n} again and the {a} part is gone.",
    "That should make the {n} less {a}.",
    "Moving on to the {m} next.",
)
_TOOLS = (
    ("read_file", "path"),
    ("search_code", "query"),
    ("list_dir", "path"),
    ("run_linter", "target"),
    ("show_diff", "path"),
)
_RESULT_LINES = (
    "function {v}{N}(request) returns response",
    "class {N}{M} handles the {n}",
    "import helpers from the {m} module",
    "no matches in the {n}",
    "warning: the {n} is {a}",
    "ok: the {m} passed",
    "todo: revisit the {n}",
)
_VERBS = ("load", "parse", "build", "render", "check", "fetch", "store", "merge")


def _camel(noun: str) -> str:
    return "".join(part.capitalize() for part in noun.split())


def _fill(template: str, rng: random.Random) -> str:
    n, m = rng.choice(_NOUNS), rng.choice(_NOUNS)
    return template.format(n=n, m=m, a=rng.choice(_ADJECTIVES), v=rng.choice(_VERBS), N=_camel(n), M=_camel(m))


def _pool(templates: tuple[str, ...], size: int, seed: int) -> tuple[str, ...]:
    rng = random.Random(seed)
    return tuple(_fill(rng.choice(templates), rng) for _ in range(size))


def _tool_calls(size: int, seed: int) -> tuple[tuple[str, str], ...]:
    rng = random.Random(seed)
    out = []
    for _ in range(size):
        name, arg = rng.choice(_TOOLS)
        noun = rng.choice(_NOUNS)
        value = "src/" + noun.replace(" ", "-") + ".py" if arg == "path" else noun
        out.append((name, json.dumps({arg: value})))
    return tuple(out)


# Rendered once at import (immutable): per-turn cost is then two random draws.
_POOL_SIZE = 512
_USER_POOL = _pool(_USER_LINES, _POOL_SIZE, 1)
_ASSISTANT_POOL = _pool(_ASSISTANT_LINES, _POOL_SIZE, 2)
_RESULT_POOL = tuple(
    "\n".join(_pool(_RESULT_LINES, 1 + i % 4, 1000 + i)) for i in range(_POOL_SIZE)
)
_CALL_POOL = _tool_calls(_POOL_SIZE, 3)


class FillerPlan:
    """Draws filler units from one seeded stream; not shared, not global."""

    __slots__ = ("_random", "_calls")

    def __init__(self, seed: int):
        self._random = random.Random(seed).random
        self._calls = 0

    def unit(self, room: int) -> tuple[Turn, ...]:
        """One or two filler turns (a tool call and its result never split), at most ``room``."""
        rnd = self._random
        roll = rnd()
        pick = int(rnd() * _POOL_SIZE)
        if room >= 2 and roll < 0.3:
            self._calls += 1
            name, arguments = _CALL_POOL[pick]
            # Filler call ids share no shape with fact call ids ("call_" + 12 hex).
            call = ToolCall(f"fill-{self._calls:05d}", name, arguments)
            return (
                Turn(Role.ASSISTANT, "", (call,)),
                Turn(Role.TOOL, _RESULT_POOL[int(rnd() * _POOL_SIZE)], (), call.id),
            )
        if roll < 0.65:
            return (Turn(Role.USER, _USER_POOL[pick]),)
        return (Turn(Role.ASSISTANT, _ASSISTANT_POOL[pick]),)


def filler_units(seed: int, count: int) -> list[tuple[Turn, ...]]:
    """Exactly ``count`` filler turns, grouped into units that must not be split."""
    plan = FillerPlan(seed)
    units: list[tuple[Turn, ...]] = []
    left = count
    while left > 0:
        unit = plan.unit(left)
        units.append(unit)
        left -= len(unit)
    return units
