"""A team's own prose rules reach every entry point: the CLI, the plugin, the helper, replay."""

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings

from harness import FactKind, InvalidArgument
from harness._app.cli._main import main
from harness.testing import CompactionViolation, assert_compaction_holds
from harness.oracles import DEFAULT_RULES, ProseRules
from harness.strategies import facts, transcripts

pytest_plugins = ["pytester"]

TEAM = str(Path(__file__).parent / "fixtures" / "team_rules.py")
RUN = ["run", "--summarizer", f"{TEAM}:summarize", "--only", "negation-polarity", "--examples", "30",
       "--max-turns", "200", "--seed", "4", "--quiet", "--inline"]


def test_a_team_rule_changes_the_verdict_through_the_cli(capsys):
    assert main(RUN) == 1  # the default rules do not read "verboten" as a prohibition
    assert "is mentioned without its prohibition" in capsys.readouterr().out
    assert main([*RUN, "--rules", f"{TEAM}:RULES"]) == 0


def test_the_reproduce_command_carries_the_rules(capsys):
    assert main([*RUN, "--rules", f"{TEAM}:RULES"]) == 0
    assert f"reproduce the run: compaction-harness run --summarizer {TEAM}:summarize" in (out := capsys.readouterr().out)
    assert f"--rules {TEAM}:RULES" in out


@pytest.mark.parametrize(
    "spec, message",
    [
        ("NOT_RULES", "expected an oracles.ProseRules (for example dataclasses.replace(oracles.DEFAULT_RULES, ...)), got dict"),
        ("MISSING", "has no attribute named 'MISSING'"),
    ],
)
def test_bad_rules_are_named(capsys, spec, message):
    assert main([*RUN, "--rules", f"{TEAM}:{spec}"]) == 2
    assert f"SpecError: --rules '{TEAM}:{spec}': " in capsys.readouterr().err


def test_the_helper_takes_rules():
    from tests.fixtures.team_rules import RULES, summarize

    def checker(rules):
        @settings(max_examples=15, database=None)
        @given(transcripts(facts=facts(kinds=[FactKind.PROHIBITION]), max_turns=200))
        def check(transcript):
            assert_compaction_holds(summarize, transcript, budget=600, only=["negation-polarity"], rules=rules)
        return check

    with pytest.raises(CompactionViolation, match="negation-polarity"):
        checker(DEFAULT_RULES)()
    checker(RULES)()


def test_the_plugin_takes_rules(pytester):
    pytester.makepyfile("def test_nothing():\n    pass\n")
    common = ["-p", "no:cacheprovider", "--summarizer", f"{TEAM}:summarize", "--summarizer-max-turns", "200",
              "--summarizer-corpus", str(pytester.path / "none"), "-k", "property"]
    default = pytester.runpytest_subprocess(*common).parseoutcomes()  # default rules: "verboten" is no prohibition
    assert default.get("failed", 0) >= 1
    team = pytester.runpytest_subprocess(*common, "--summarizer-rules", f"{TEAM}:RULES").parseoutcomes()
    assert team.get("failed", 0) == 0 and team["passed"] > 20  # every invariant's item of the search passes
    bad = pytester.runpytest_subprocess(*common, "--summarizer-rules", f"{TEAM}:NOT_RULES")
    assert "--summarizer-rules" in bad.stderr.str() and "expected an oracles.ProseRules" in bad.stderr.str()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"prohibition_unit": "paragraph"}, "ProseRules(prohibition_unit='paragraph'): expected one of clause, sentence, line"),
        ({"cue_window": -1}, "ProseRules(cue_window=-1): expected a whole number of words >= 0"),
        ({"prohibition_cues": ("",)}, "ProseRules(prohibition_cues=('',)): expected a tuple of non-empty strings"),
        ({"prohibition_cues": "never"}, "ProseRules(prohibition_cues='never'): expected a tuple of non-empty strings"),
        ({"near_miss_ratio": float("nan")}, "ProseRules(near_miss_ratio=nan): expected a number in (0, 1]"),
        ({"ledger_budget_share": -1.0}, "ProseRules(ledger_budget_share=-1.0): expected a number in (0, 1]"),
    ],
)
def test_rules_check_their_own_fields(change, message):
    with pytest.raises(InvalidArgument) as info:
        dataclasses.replace(DEFAULT_RULES, **change)
    assert str(info.value) == message


def test_every_cue_list_and_window_is_a_field():
    """No oracle module keeps a cue tuple of its own: they all read ProseRules."""
    import ast

    root = Path(__file__).resolve().parent.parent / "oracles"
    for path in root.glob("_*.py"):
        if path.name == "_rules.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple) and node.value.elts and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts) and not (
                    [getattr(t, "id", None) for t in node.targets] == ["__slots__"]):  # attribute names, not cues
                raise AssertionError(f"{path.name}:{node.lineno} keeps its own string table")
    assert {"cue_window", "completion_window", "disposition_window", "unresolved_window"} <= set(
        ProseRules.__dataclass_fields__)


EXTRA = str(Path(__file__).parent / "fixtures" / "team_oracle.py")


@pytest.fixture
def forget_team_oracle():
    """--extend registers into the process-wide oracle registry: undo it so other tests never see it."""
    import sys

    from harness.oracles import registered, unregister

    yield
    if "team-bucket-named-twice" in {o.id for o in registered()}:
        unregister("team-bucket-named-twice")
    for name, module in list(sys.modules.items()):
        if getattr(module, "__file__", None) == EXTRA:
            del sys.modules[name]


def test_a_team_oracle_reaches_the_cli_through_extend(capsys, forget_team_oracle):
    argv = ["run", "--summarizer", "harness.summarizers.prose:summarize", "--only", "team-bucket-named-twice",
            "--examples", "30", "--max-turns", "200", "--seed", "4", "--quiet"]
    assert main(argv) == 2  # not registered without --extend: an unknown oracle id
    assert "unknown oracle id(s) ['team-bucket-named-twice']" in capsys.readouterr().err
    assert main([*argv, "--extend", EXTRA]) == 1  # the prose compactor names each prohibition once
    out = capsys.readouterr().out
    assert "team-bucket-named-twice" in out and f"--extend {EXTRA}" in out


def test_a_bad_extension_is_named(capsys, tmp_path):
    module = tmp_path / "broken_ext.py"
    module.write_text("raise ImportError('no such dependency: teamlib')\n")
    assert main(["run", "--extend", str(module), "--examples", "2", "--quiet"]) == 2
    assert f"SpecError: --extend {str(module)!r}: importing {str(module)!r} raised ImportError: no such dependency" \
        in capsys.readouterr().err
