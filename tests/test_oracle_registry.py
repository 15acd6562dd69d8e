"""Listing, selecting and extending the oracle catalogue."""

import re

import pytest

from harness import oracles
from harness import InvalidArgument, Role, Transcript, Turn
from harness._base._protocol import CompactionResult
from harness.oracles import Case, Finding, Severity, check, oracle, registered, select, unregister

CATALOGUE = [
    "commitment-retained", "completion-honest", "handle-retained", "closure", "error-retained",
    "gating-field-retained", "literal-verbatim", "negation-polarity", "threshold-exact", "supersession",
    "negative-fact-disposition", "no-invented-obligation", "tool-pairing", "provider-valid", "budget-respected",
    "ledger-budget",
    "self-report-honest", "summary-growth", "force-kept", "dead-obligation", "journal-reversible", "ledger-monotone",
    "marker-depth", "deterministic", "effect-window", "consumer-requirements", "handle-carried",
]


def test_catalogue_ids_are_exact():
    assert sorted(o.id for o in registered()) == sorted(CATALOGUE)


def test_every_oracle_documents_itself():
    for o in registered():
        assert o.summary and o.summary != o.id, o.id
        assert o.reference, o.id


def test_select_only_and_skip():
    assert [o.id for o in select(only=["closure", "supersession"])] == ["closure", "supersession"]
    assert "closure" not in {o.id for o in select(skip=["closure"])}
    assert len(select(skip=["closure"])) == len(CATALOGUE) - 1
    assert sorted(o.id for o in registered() if o.scope == "session") == sorted([
        "summary-growth", "ledger-monotone", "marker-depth", "deterministic", "effect-window", "consumer-requirements",
        "handle-carried"])


@pytest.mark.parametrize("kwargs", [{"only": ["nope"]}, {"skip": ["closure", "nope"]}])
def test_unknown_ids_are_named(kwargs):
    with pytest.raises(InvalidArgument, match=re.escape("unknown oracle id(s) ['nope']")):
        select(**kwargs)


def test_a_team_registers_its_own_oracle():
    @oracle("no-shouting", reference="team style guide")
    def no_shouting(case):
        """The context does not shout."""
        if case.result.summary_text.isupper():
            yield Finding("no-shouting", Severity.VIOLATE, "all caps")

    try:
        case = Case(Transcript((Turn(Role.USER, "hi"),)), 1, 100, CompactionResult((Turn(Role.SYSTEM, "HELLO"),)))
        assert [f.invariant for f in check(case).findings] == ["no-shouting"]
        assert select(only=["no-shouting"])[0].summary == "The context does not shout."
        with pytest.raises(InvalidArgument, match="already registered"):
            oracle("no-shouting", reference="x")(no_shouting)
    finally:
        unregister("no-shouting")
    assert "no-shouting" not in {o.id for o in registered()}


@pytest.mark.parametrize("bad", ["Literal", "with space", "", "trailing-", 3])
def test_oracle_ids_must_be_kebab_case(bad):
    with pytest.raises(InvalidArgument, match="must be kebab-case"):
        oracle(bad, reference="x")


def test_public_names():
    assert sorted(oracles.__all__) == sorted([
        "DEFAULT_RULES", "Case", "Evidence", "Finding", "Oracle", "Outcome", "ProseRules", "SessionCase", "Severity", "Verdict",
        "check", "check_session", "oracle",
        "registered", "select", "unregister",
    ])
