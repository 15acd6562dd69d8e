"""Every bundled mutant is caught by its own oracle through ``run`` as a team runs it: sessions sized to the
default budget and number of examples, real-sized tool output, planned cuts and all. (``test_oracle_matrix`` and
``test_session_matrix`` judge the same mutants on ``transcripts()`` directly.)"""

import json

import pytest

from harness._app.cli._main import main
from harness.summarizers.mutants import MUTANTS, SESSION_MUTANTS, VARIANTS

# ledger-budget only degrades (a coarser ledger is honest): its mutant shows as a degradation, not a finding.
PAIRS = [(invariant, m.__name__) for invariant, m in (*MUTANTS.items(), *SESSION_MUTANTS.items(), *VARIANTS)]


@pytest.mark.parametrize("invariant, mutant", PAIRS, ids=[f"{i}-{m}" for i, m in PAIRS])
def test_a_mutant_is_caught_by_its_own_oracle_through_run(tmp_path, invariant, mutant):
    report = tmp_path / "r.json"
    extra = ["--consumer", "router=handle-retained,closure"] if invariant == "consumer-requirements" else []
    main(["run", "--summarizer", f"harness.summarizers.mutants:{mutant}", "--seed", "3",
          "--quiet", "--inline", "--shrink-calls", "30", "--trials", "3" if invariant == "deterministic" else "1",
          "--report-json", str(report), *extra])
    data = json.loads(report.read_text())
    if invariant == "ledger-budget":
        assert data["degradations"].get("ledger-budget", 0) > 0
        return
    seen = {i for f in data["findings"] for i in (*f["invariants"], *f["also_seen"])}
    assert invariant in seen, sorted(seen)
