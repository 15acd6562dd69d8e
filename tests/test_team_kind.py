"""A team's own fact kind, end to end: defined in one module, generated, compacted, judged, saved, replayed.

The kind is ``examples/approval_gate.py`` (the example the README shows); its
mutants are in ``tests/fixtures/approval_mutants.py``. Defining a kind writes to
process-wide registries, so every test here removes it again afterwards.
"""

import json
import re
import runpy
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, find, given, settings

from harness import (
    CompactionViolation,
    InvalidArgument,
    SchemaError,
    Status,
    dumps,
    kind_def,
    loads,
    undefine_kind,
)
from harness._app.cli._main import main
from harness.summarizers import ledgered, prose
from harness.testing import assert_compaction_holds
from harness.oracles import registered, unregister
from harness.strategies import Anchor, Cut, FactSpec, Skeleton, expand, facts, skeleton_from_dict, skeleton_to_dict, skeletons, transcripts

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "examples" / "approval_gate.py")
MUTANTS = str(ROOT / "tests" / "fixtures" / "approval_mutants.py")
KIND = "approval_gate"
ORACLE = "approval-gate-held"
_SMALL = settings(max_examples=25, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _forget() -> None:
    undefine_kind(KIND)
    if ORACLE in {o.id for o in registered()}:
        unregister(ORACLE)
    for name, module in list(sys.modules.items()):
        if getattr(module, "__file__", None) in (EXAMPLE, MUTANTS):
            del sys.modules[name]


@pytest.fixture
def forget_the_kind():
    _forget()
    yield
    _forget()


@pytest.fixture
def approval(forget_the_kind):
    return runpy.run_path(EXAMPLE)


def _gate(fate: Status = Status.OPEN, phrasing: int = 0) -> Skeleton:
    spec = FactSpec(KIND, ("CHG-4821",), (("action", "deploy to production"), ("approver", "release manager")),
                    phrasing=phrasing, position=300, fate=fate, fate_delay=500)
    return Skeleton(seed=7, length=60, facts=(spec,), cuts=(Cut(Anchor.AFTER_ORIGIN, 0, 2),))


def test_an_undefined_kind_is_named_with_how_to_define_it(forget_the_kind):
    with pytest.raises(InvalidArgument, match="unknown fact kind 'approval_gate'.*define_kind"):
        facts(kinds=[KIND])
    document = json.dumps({"schema_version": 1, "turns": [{"role": "user", "text": "CHG-1 needs approval"}],
                           "facts": [{"id": "F0", "kind": KIND, "literals": ["CHG-1"], "origin_turn": 0}]})
    with pytest.raises(SchemaError, match=r"gate\.json: field 'facts\[0\]\.kind': expected a defined fact kind.*--extend"):
        loads(document, source="gate.json")


def test_the_definition_is_what_every_layer_reads(approval):
    definition = kind_def(KIND)
    assert definition.verbatim and definition.fates == (Status.OPEN, Status.FULFILLED, Status.RETRACTED)
    transcript = expand(_gate())
    (fact,) = transcript.facts
    assert fact.kind == KIND and fact.literals == ("CHG-4821",)
    assert dict(fact.details) == {"action": "deploy to production", "approver": "release manager"}
    assert "CHG-4821" in transcript.turns[fact.origin_turn].text  # stated where the ledger says
    assert loads(dumps(transcript)) == transcript
    assert "CHG-4821 is approved by the release manager" in prose.summarize(
        _request(transcript)).messages[0].text
    entry = ledgered.summarize(_request(transcript)).ledger[0]
    assert (entry.kind, entry.literals, entry.details) == (KIND, ("CHG-4821",), (("approver", "release manager"),))


def _request(transcript):
    from harness import request_for

    return request_for(transcript, len(transcript.turns), 2000)


def test_a_fulfilled_gate_ends_at_its_approval_turn(approval):
    transcript = expand(_gate(Status.FULFILLED))
    (fact,) = transcript.facts
    assert fact.fate.status is Status.FULFILLED and fact.fate.turn > fact.origin_turn
    assert "CHG-4821" in transcript.turns[fact.fate.turn].text


def test_default_facts_place_the_teams_kind_beside_the_built_in_ones(approval):
    spec = find(facts(), lambda s: s.kind == KIND, settings=settings(database=None, max_examples=500))
    assert spec.fate is Status.OPEN and spec.literals[0]  # shrunk to the plainest gate


def test_generated_skeletons_round_trip_and_expand_with_the_kind(approval):
    @_SMALL
    @given(skeletons(facts=facts(kinds=[KIND]), max_turns=120))
    def check(skeleton):
        assert skeleton_from_dict(json.loads(json.dumps(skeleton_to_dict(skeleton)))) == skeleton
        transcript = expand(skeleton)
        gates = [f for f in transcript.facts if f.kind == KIND]
        assert len(gates) == len(skeleton.facts)
        for fact in gates:
            assert fact.literals[0] in transcript.turns[fact.origin_turn].text

    check()


def test_correct_compactors_keep_the_teams_kind(approval):
    @_SMALL
    @given(transcripts(facts=facts(kinds=[KIND, "prohibition", "threshold", "retraction"]), max_turns=150))
    def check(transcript):
        for summarize in (prose.summarize, ledgered.summarize):
            assert_compaction_holds(summarize, transcript, protocol="rich", budget=2000)

    check()


@pytest.mark.parametrize("mutant, detail", [
    ("forgets_the_gate", "is kept without its approval gate"),
    ("claims_approval", "is stated as approved, but it is not"),
])
def test_each_mutant_of_the_kind_is_caught_by_its_oracle_alone(approval, mutant, detail):
    summarize = runpy.run_path(MUTANTS)[mutant]
    with pytest.raises(CompactionViolation) as info:
        assert_compaction_holds(summarize, expand(_gate()), protocol="rich", budget=2000)
    message = str(info.value)
    assert set(re.findall(r"\): ([a-z-]+) \[", message)) == {ORACLE}, message
    assert f"{ORACLE} [{KIND}] CHG-4821 {detail}" in message


def test_the_kind_through_the_cli_run_corpus_and_replay(forget_the_kind, tmp_path, capsys):
    corpus = tmp_path / "corpus"
    common = ["--only", ORACLE, "--examples", "30", "--max-turns", "150", "--seed", "3", "--quiet"]
    assert main(["run", "--summarizer", f"{MUTANTS}:claims_approval", *common]) == 2  # no such oracle yet
    assert f"unknown oracle id(s) ['{ORACLE}']" in capsys.readouterr().err
    code = main(["run", "--extend", EXAMPLE, "--summarizer", f"{MUTANTS}:claims_approval", *common,
                 "--corpus", str(corpus)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert ORACLE in out and "is stated as approved" in out and f"--extend {EXAMPLE}" in out
    saved = list(corpus.glob("*.json"))
    assert saved and all(json.loads(p.read_text())["fact_kind"] == KIND for p in saved)

    # The bundled correct compactor, in its own worker process, states the team's kind too.
    assert main(["run", "--extend", EXAMPLE, "--summarizer", "harness.summarizers.prose:summarize", *common]) == 0
    capsys.readouterr()
    assert main(["replay", str(corpus), "--extend", EXAMPLE, "--summarizer", f"{MUTANTS}:claims_approval",
                 "--quiet"]) == 1
    assert main(["replay", str(corpus), "--extend", EXAMPLE, "--summarizer", "harness.summarizers.prose:summarize",
                 "--quiet"]) == 0
    capsys.readouterr()

    _forget()  # a fresh process that was not told about the kind: the entries are unreadable, and say why
    assert main(["corpus", "list", str(corpus)]) == 2
    assert "expected a defined fact kind" in capsys.readouterr().err
    assert main(["corpus", "list", str(corpus), "--extend", EXAMPLE]) == 0
    assert f"{len(saved)} entries, 0 unreadable" in capsys.readouterr().out


def test_every_kind_names_oracles_that_exist():
    from harness import defined_kinds

    ids = {o.id for o in registered()}
    for definition in defined_kinds():
        assert definition.judges <= ids, definition.name


def test_a_run_warns_when_no_selected_oracle_judges_a_teams_kind(forget_the_kind, tmp_path, capsys):
    common = ["--summarizer", "harness.summarizers.prose:summarize", "--examples", "5", "--max-turns", "80",
              "--seed", "2", "--quiet", "--extend", EXAMPLE]
    report = tmp_path / "report.json"
    assert main(["run", *common, "--skip", ORACLE + ",literal-verbatim", "--report-json", str(report)]) == 0
    warning = "kind 'approval_gate' is generated but no selected oracle judges it"
    assert warning in capsys.readouterr().out
    assert any(warning in w for w in json.loads(report.read_text())["warnings"])
    assert main(["run", *common]) == 0
    assert "no selected oracle judges it" not in capsys.readouterr().out


def test_a_kind_without_a_generator_is_reported_as_never_generated(forget_the_kind, tmp_path, capsys):
    module = tmp_path / "judge_only.py"
    module.write_text("from harness import KindDef, define_kind\n"
                      "define_kind(KindDef('residency_rule', statement=lambda f: f'Keep data in {f.literals[0]}.',"
                      " verbatim=True))\n")
    try:
        assert main(["run", "--summarizer", "harness.summarizers.prose:summarize", "--examples", "3",
                     "--max-turns", "60", "--seed", "1", "--quiet", "--extend", str(module)]) == 0
        assert "kind 'residency_rule' has no generator" in capsys.readouterr().out
    finally:
        undefine_kind("residency_rule")


def test_a_bug_in_a_teams_kind_or_oracle_names_it(approval):
    from harness import CompactionRequest, Fact, KindDef, Role, SpecError, Turn, define_kind
    from harness.oracles import Case, check, oracle
    from harness.strategies import KindGenerator

    def state(spec):
        raise ZeroDivisionError("oops")

    define_kind(KindDef("broken_kind", statement=lambda f: 1 / 0, verbatim=True,
                        generator=KindGenerator(draw=approval["_draw"], state=state)))
    try:
        spec = FactSpec("broken_kind", ("CHG-1",), position=10)
        with pytest.raises(InvalidArgument, match="kind 'broken_kind': its KindGenerator.state raised ZeroDivisionError"):
            expand(Skeleton(seed=1, length=10, facts=(spec,)))
        request = CompactionRequest((Turn(Role.USER, "CHG-1"),), 2000, (Fact("X", "broken_kind", ("CHG-1",), 0),))
        with pytest.raises(InvalidArgument, match="kind 'broken_kind': its KindDef.statement raised ZeroDivisionError"):
            prose.summarize(request)
    finally:
        undefine_kind("broken_kind")

    @oracle("team-oracle-with-a-bug", reference="test")
    def buggy(case):
        raise RuntimeError("my oracle bug")

    try:
        transcript = expand(_gate())
        case = Case(transcript, len(transcript.turns), 2000, prose.summarize(_request(transcript)))
        with pytest.raises(SpecError, match="oracle 'team-oracle-with-a-bug' raised RuntimeError: my oracle bug"):
            check(case)
    finally:
        unregister("team-oracle-with-a-bug")


def test_the_catalogue_lists_a_teams_oracle_with_extend(forget_the_kind, capsys):
    assert main(["oracles", "--extend", EXAMPLE]) == 0
    assert ORACLE in capsys.readouterr().out


def test_the_kind_through_fuzz(forget_the_kind, tmp_path, capsys):
    pytest.importorskip("atheris")
    code = main(["fuzz", "--extend", EXAMPLE, "--summarizer", "harness.summarizers.naive:tail", "--only", ORACLE,
                 "--runs", "300", "--seed", "3", "--trials", "0", "--quiet", "--shrink-calls", "40",
                 "--fuzz-dir", str(tmp_path / "fz")])
    out = capsys.readouterr().out
    assert code == 1, out  # the fuzzing processes imported the team's module before selecting its oracle
    assert f"✗ {ORACLE} — {KIND}" in out
