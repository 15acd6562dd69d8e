"""The process's entry point: a harness that cannot start, or an error that escapes a command, is one line and
the internal-error exit code (2), never exit 1 (which says a violation was found) and never a traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness._app._outcome import ExitCode
from harness._app.cli import _entry, _main
from tests._proc import harness_crashed

SCRIPT = Path(sys.executable).with_name("compaction-harness")
HINT = "(set COMPACTION_HARNESS_DEBUG=1 for the traceback)"


_TEAM_SUMMARIZER = """from oracles import TEAM_ORACLE
from strategies import TEAM_STRATEGY

from harness.summarizers.ledgered import summarize as _ledgered


def summarize(request):
    assert (TEAM_STRATEGY, TEAM_ORACLE) == ("the team's", "the team's")
    return _ledgered(request)


summarize.compaction_protocol = "rich"
"""


def _team_repository(tmp_path: Path) -> Path:
    """A team's repository whose own packages are named ``strategies`` and ``oracles`` (generic names), beside its
    summarizer, which imports them."""
    for package, name in (("strategies", "TEAM_STRATEGY"), ("oracles", "TEAM_ORACLE")):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(f"{name} = \"the team's\"\n", encoding="utf-8")
    (tmp_path / "team_summarizer.py").write_text(_TEAM_SUMMARIZER, encoding="utf-8")
    return tmp_path


_COMMANDS = [pytest.param([sys.executable, "-m", "harness"], id="python -m harness"),
             pytest.param([str(SCRIPT)], id="console script",
                          marks=pytest.mark.skipif(not SCRIPT.exists(), reason="no compaction-harness script"))]

_TEAM_COMMANDS = [
    pytest.param(["run", "--summarizer", "team_summarizer:summarize", "--examples", "3", "--seed", "1", "--quiet",
                  "--corpus", "corpus"], ExitCode.OK, id="run"),
    pytest.param(["replay", "--summarizer", "team_summarizer:summarize", "--allow-empty", "corpus"], ExitCode.OK,
                 id="replay"),
    pytest.param(["oracles"], ExitCode.OK, id="oracles"),
    pytest.param(["corpus", "list", "corpus"], ExitCode.OK, id="corpus list"),
]


@pytest.mark.parametrize("command", _COMMANDS)
@pytest.mark.parametrize("argv, code", _TEAM_COMMANDS)
def test_a_team_s_own_strategies_and_oracles_packages_first_on_the_path_import_beside_ours(tmp_path, command, argv,
                                                                                           code):
    team = _team_repository(tmp_path)
    (team / "corpus").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(team), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([*command, *argv], cwd=team, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == code, done.stdout + done.stderr
    assert not harness_crashed(done.stderr), done.stderr


def test_the_traceback_is_there_on_request(monkeypatch, capsys):
    def missing(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'hypothesis'", name="hypothesis")

    monkeypatch.setenv("COMPACTION_HARNESS_DEBUG", "1")
    monkeypatch.delitem(sys.modules, "harness._app.cli._main")
    monkeypatch.setattr("builtins.__import__", _failing_import("harness._app.cli._main", missing))
    assert _entry.main(["oracles"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("InternalError: cannot import the harness's modules: ModuleNotFoundError")
    assert harness_crashed(err)


def test_a_broken_install_is_an_internal_error(monkeypatch, capsys):
    def missing(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'hypothesis'", name="hypothesis")

    monkeypatch.delitem(sys.modules, "harness._app.cli._main")
    monkeypatch.setattr("builtins.__import__", _failing_import("harness._app.cli._main", missing))
    assert _entry.main(["oracles"]) == 2
    assert capsys.readouterr().err == ("InternalError: cannot import the harness's modules: ModuleNotFoundError: "
                                       f"No module named 'hypothesis' (a broken install? reinstall compaction-harness) "
                                       f"{HINT}\n")


def _failing_import(name: str, fail):
    real = __import__

    def importing(module, *args, **kwargs):
        return fail() if module == name else real(module, *args, **kwargs)

    return importing


@pytest.mark.parametrize("raised", [RuntimeError("boom\nsecond line"), SystemExit(1)])
def test_an_error_escaping_the_command_line_is_an_internal_error(monkeypatch, capsys, raised):
    def broken(*args, **kwargs):
        raise raised

    monkeypatch.setattr(_main, "build_parser", broken)  # outside _main's own try
    assert _entry.main(["oracles"]) == 2
    said = "RuntimeError: boom second line" if isinstance(raised, RuntimeError) else "SystemExit: 1"
    assert capsys.readouterr().err == f"InternalError: {said} {HINT}\n"


@pytest.mark.parametrize("argv, code", [
    (["oracles"], ExitCode.OK),
    (["run", "--examples", "0"], ExitCode.USAGE),
    (["run", "--summarizer", str(Path(__file__).parent / "fixtures" / "faulty.py") + ":raises", "--examples", "2",
      "--max-turns", "60", "--stop-on-error", "--seed", "0", "--quiet", "--inline"], ExitCode.SUMMARIZER),
    (["run", "--summarizer", "harness.summarizers.mutants:rounds_threshold", "--only", "threshold-exact",
      "--examples", "10", "--seed", "3", "--max-turns", "60", "--quiet", "--inline", "--trials", "0"], ExitCode.VIOLATIONS),
])
def test_the_codes_the_command_line_gives_pass_through(argv, code, capsys):
    assert _entry.main(argv) == code
    assert "InternalError" not in capsys.readouterr().err
