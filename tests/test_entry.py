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


def _shadow(tmp_path: Path, package: str, source: str = "") -> Path:
    """A directory holding a user's package named ``package``, to put first on ``PYTHONPATH``."""
    init = tmp_path / "shadow" / package / "__init__.py"
    init.parent.mkdir(parents=True)
    init.write_text(source, encoding="utf-8")
    return init


def _started(command: list[str], tmp_path: Path, first: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(first), os.environ.get("PYTHONPATH")]))}
    env.pop("COMPACTION_HARNESS_DEBUG", None)
    return subprocess.run([*command, "run", "--examples", "1"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


_COMMANDS = [pytest.param([sys.executable, "-m", "harness"], id="python -m harness"),
             pytest.param([str(SCRIPT)], id="console script",
                          marks=pytest.mark.skipif(not SCRIPT.exists(), reason="no compaction-harness script"))]


@pytest.mark.parametrize("command", _COMMANDS)
@pytest.mark.parametrize("package, source", [("strategies", ""), ("oracles", ""),
                                             ("strategies", "import sys\nsys.exit(1)\n")],
                         ids=["strategies", "oracles", "strategies calling sys.exit(1)"])
def test_a_package_shadowing_ours_is_an_internal_error_naming_it(tmp_path, command, package, source):
    init = _shadow(tmp_path, package, source)
    done = _started(command, tmp_path, init.parent.parent)
    assert done.returncode == _entry.INTERNAL_ERROR == ExitCode.USAGE, done.stderr
    assert done.stderr == (f"InternalError: cannot import the harness's module {package!r} (found {init.resolve()} "
                           f"first on sys.path: a package of yours shadows it?) {HINT}\n")
    assert done.stdout == "" and not harness_crashed(done.stderr)


def test_the_traceback_is_there_on_request(tmp_path):
    init = _shadow(tmp_path, "oracles")
    env = {**os.environ, "PYTHONPATH": str(init.parent.parent), "COMPACTION_HARNESS_DEBUG": "1"}
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--examples", "1"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("InternalError: cannot import the harness's module 'oracles'")
    assert harness_crashed(done.stderr) and "ImportError: cannot import name" in done.stderr


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
