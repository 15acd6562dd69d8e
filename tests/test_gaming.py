"""Summarizers that understand nothing must not pass.

They live in ``tests/fixtures/gaming_summarizers.py``, written by a session that never read the
oracles or the strategies: they keep text by its surface (digits, identifiers, obligation words,
roles, positions) or stuff it with words a checker might look for. On transcripts where most numbers
are noise and the value that binds sits beside ones that do not, each must be caught, and caught
for a reason a user can act on: an obligation it mangled, or what it spent the budget on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from harness._app.running._evaluate import evaluate
from harness._app.running._options import RunConfig
from harness._app.running._run import open_summarizer
from harness.oracles import select
from harness.strategies import expand, skeletons
from tests.fixtures.gaming_summarizers import GAMING

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "gaming_summarizers.py"


def _skeletons(count: int, max_turns: int):
    drawn = []

    @settings(max_examples=count, derandomize=True, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(skeletons(max_turns=max_turns, max_facts=8))
    def collect(skeleton):
        drawn.append(skeleton)

    collect()
    return drawn


_EXAMPLES = _skeletons(25, 250)


def _names_what_went_wrong(finding) -> bool:
    """A finding a user can act on: it is about one obligation, or it names what filled the budget."""
    return finding.fact_id is not None or (finding.invariant == "budget-respected" and "such as" in finding.detail)


@pytest.mark.parametrize("name", [name for name, _ in GAMING])
def test_every_gaming_summarizer_is_caught_naming_what_it_did(name):
    config = RunConfig.of(f"{FIXTURE}:{name}", isolation="inline", budget=2000)
    chosen = select()
    caught = []
    with open_summarizer(config) as summarizer:
        for skeleton in _EXAMPLES:
            evaluation = evaluate(expand(skeleton), summarizer, config.judging, chosen)
            assert evaluation.infra is None, evaluation.infra
            caught += [finding for finding, *_ in evaluation.violations.values()]
    assert caught, f"{name} passed {len(_EXAMPLES)} transcripts"
    assert any(_names_what_went_wrong(f) for f in caught), [f.detail for f in caught]


@pytest.mark.parametrize("name", ["keeps_digit_sentences", "appends_force_words"])
def test_the_two_reported_gaming_summarizers_fail_a_run_of_100_examples(tmp_path, name):
    """The two summarizers of issue 11, which passed all 17 oracles on the old transcripts."""
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--summarizer", f"{FIXTURE}:{name}", "--examples", "100",
         "--seed", "3", "--shrink-calls", "50", "--quiet", "--report-json", str(report)],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    violations = json.loads(report.read_text())["violations"]
    assert any(v["fact_id"] is not None or "such as" in v["detail"] for v in violations), violations
