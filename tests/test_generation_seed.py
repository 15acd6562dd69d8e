"""A run's sessions are a function of its seed alone: importing another module (a summarizer, its helpers,
other tests) between two runs with one seed changes nothing they are handed."""

import importlib
import sys

from harness._app.running._exploration import generate, run_strategy, stages
from harness._app.running._options import Generation, Judging

# Integers, floats and strings of the sizes a session is drawn with (turns, tokens, seeds, budgets, names):
# Hypothesis draws constants like these from any local module it sees imported, unless told not to.
_CONSTANTS_MODULE = "\n".join(
    [f"INT_{i} = {v}" for i, v in enumerate((*range(0, 400, 3), *range(400, 200_000, 997), 2**31 - 1, 2**32 - 1))]
    + [f"FLOAT_{i} = {v / 7}" for i in range(200) for v in (i,)]
    + [f"TEXT_{i} = 'constant text {i} pool_size cache_ttl'" for i in range(200)])


def _sessions(seed: int) -> list[str]:
    generation, judging = Generation(examples=12, max_windows=3), Judging()
    drawn: list = []
    generate(stages(generation, judging, None, run_strategy(generation, judging, None)), seed, drawn.append)
    return [repr(skeleton) for skeleton in drawn]


def test_importing_a_module_full_of_constants_does_not_change_the_sessions_a_seed_generates(tmp_path, monkeypatch):
    before = _sessions(7)
    (tmp_path / "team_compactor_constants.py").write_text(_CONSTANTS_MODULE + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("team_compactor_constants")
    try:
        after = _sessions(7)
    finally:
        sys.modules.pop("team_compactor_constants", None)
    assert len(before) == 12
    assert after == before


def test_another_seed_generates_other_sessions():
    assert _sessions(7) != _sessions(8)
