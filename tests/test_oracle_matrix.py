"""The mutation matrix: every mutant is caught by its own oracle; correct compactors never are."""

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from harness.summarizers import identity, ledgered, naive, prose
from harness.summarizers.mutants import MUTANTS, VARIANTS
from harness.oracles import Severity, registered
from harness.strategies import transcripts
from tests._cases import judge

_GENERATE = settings(max_examples=400, database=None, phases=[Phase.generate, Phase.shrink],
                     suppress_health_check=list(HealthCheck))
_TRANSCRIPTS = transcripts(min_turns=50, max_turns=600, max_facts=8)


def test_every_single_compaction_oracle_has_a_mutant():
    assert set(MUTANTS) == {o.id for o in registered() if o.scope == "compaction"}


@pytest.mark.parametrize("invariant, mutant", [*sorted(MUTANTS.items()), *VARIANTS],
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_mutant_is_caught_by_its_own_oracle(invariant, mutant):
    def caught(transcript):
        _, verdict = judge(mutant, transcript)
        return any(f.invariant == invariant for f in verdict.findings)

    minimal = find(_TRANSCRIPTS, caught, settings=_GENERATE)  # raises NoSuchExample if never caught
    case, verdict = judge(mutant, minimal)
    (finding, *_) = [f for f in verdict.findings if f.invariant == invariant]
    expected_severity = Severity.DEGRADE if invariant == "ledger-budget" else Severity.VIOLATE
    assert finding.severity is expected_severity
    assert finding.detail
    if finding.fact_id is not None:  # fact-level findings name a fact live at the boundary (or, for
        fact = case.transcript.fact(finding.fact_id)  # dead-obligation, one that ended before it)
        if invariant == "dead-obligation":
            assert fact not in case.live and fact.fate.turn < case.boundary
        else:
            assert fact in case.live
        assert finding.expected


@pytest.mark.parametrize(
    "summarize, protocol",
    [(ledgered.summarize, "rich"), (prose.summarize, "rich"), (identity.summarize, "messages")],
    ids=["ledgered", "prose", "identity"],
)
@settings(max_examples=500, suppress_health_check=list(HealthCheck))
@given(transcript=_TRANSCRIPTS)
def test_correct_compactors_are_never_flagged(summarize, protocol, transcript):
    _, verdict = judge(summarize, transcript, protocol=protocol)
    violations = [f for f in verdict.violations if not (summarize is identity.summarize and f.invariant == "budget-respected")]
    assert violations == []


@settings(max_examples=200, suppress_health_check=list(HealthCheck))
@given(transcript=_TRANSCRIPTS)
def test_correct_compactors_record_a_loss_ratio(transcript):
    _, verdict = judge(ledgered.summarize, transcript)
    assert 0.0 <= verdict.loss_ratio <= 1.0
    _, same = judge(identity.summarize, transcript, protocol="messages")
    assert same.loss_ratio == 0.0


@pytest.mark.parametrize("truncate", [naive.tail, naive.head_tail], ids=["tail", "head_tail"])
def test_naive_truncation_is_caught(truncate):
    found = find(_TRANSCRIPTS, lambda t: bool(judge(truncate, t, protocol="messages", budget=300)[1].violations),
                 settings=_GENERATE)
    assert judge(truncate, found, protocol="messages", budget=300)[1].violations
