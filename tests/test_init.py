"""``compaction-harness init``, tested the way a new team uses it: init in an empty folder, then `python -m pytest`
there (a subprocess, with the folder as its cwd and this Python), as the printed next step and the workflow say.

The starter wrapper passes in every dialect, and fails naming an invariant once its compactor is broken; a team's
own function is wrapped (by module or by file, in each dialect's shape); existing files are never overwritten
without --force, and a refusal writes nothing; the workflow is YAML that runs the same command.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness._app.cli._init import (CORPUS_README, PYTEST_INI, TEST_COMMAND, WORKFLOW, WRAPPER, Pin,
                                    pin_from_direct_url)
from harness._app.cli._init import _workflow as _workflow_text
from harness.oracles import registered

FILES = (WRAPPER, PYTEST_INI, CORPUS_README, WORKFLOW)
TIMEOUT = 600
INVARIANTS = {o.id for o in registered()}
FAILED_ITEM = re.compile(r"^FAILED compaction-harness::property\[([a-z-]+)\]", re.MULTILINE)

# A team's messages compactor in each dialect: it checks it was given that dialect's shape (a wrong shape raises,
# which fails property[summarizer-answered]) and keeps the newest message or item only: a window that loses.
TEAM_WINDOWS = {
    "chat": '''
def compact(messages, budget):
    assert isinstance(messages, list) and all("role" in m for m in messages), "not chat messages"
    return messages[-1:]
''',
    "anthropic": '''
def compact(request, budget):
    assert set(request) <= {"system", "messages"}, "not an Anthropic body"
    return {"messages": request["messages"][-1:]}
''',
    "openai-responses": '''
def compact(items, budget):
    assert isinstance(items, list) and all("type" in item for item in items), "not Responses items"
    return items[-1:]
''',
}

# A team's correct rich compactor: it hands each request to the bundled ledger compactor.
TEAM_RICH = '''
from harness.summarizers import ledgered


def compact(request):
    return ledgered.summarize(request)


compact.compaction_protocol = "rich"
'''

# Broken compactors put in place of the starter's (a later definition of the name wins when summarize calls it).
BROKEN = {
    "keeps-the-last-turn": "def starter_compactor(request):\n    return request.messages()[-1:]\n",
    "a-fixed-string": "def starter_compactor(request):\n    return 'Earlier work summarized.'\n",
}


def _env() -> dict[str, str]:
    """This environment without the outer pytest's (and xdist's) variables, which would steer the inner one."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}


def init(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "init", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=TIMEOUT, env=_env())


def pytest_in(folder: Path, *extra: str) -> subprocess.CompletedProcess:
    """`python -m pytest` in ``folder``: the command the printed next step and the workflow run."""
    return subprocess.run([sys.executable, "-m", "pytest", *extra], cwd=folder, capture_output=True, text=True,
                          timeout=TIMEOUT, env=_env())


def started(tmp_path: Path, *args: str) -> Path:
    folder = tmp_path / "team"
    done = init(str(folder), *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return folder


def failed_invariants(output: str) -> set[str]:
    return set(FAILED_ITEM.findall(output))


def _one_line_error(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stderr.splitlines() if not line.startswith(("usage:", " "))]
    assert len(lines) == 1, done.stderr
    return lines[0]


# -- the starter ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [(), ("--protocol", "rich", "--dialect", "anthropic"),
                                     ("--protocol", "rich", "--dialect", "openai-responses")],
                         ids=["default", "rich-anthropic", "rich-openai-responses"])
def test_the_starter_passes_its_own_pytest(tmp_path, options):
    folder = started(tmp_path, *options)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == sorted(FILES)
    done = pytest_in(folder)
    assert done.returncode == 0, done.stdout[-4000:]
    assert re.search(r"\b2\d passed\b", done.stdout) and "failed" not in done.stdout, done.stdout[-2000:]
    dialect = options[-1] if options else "chat"
    assert f"--summarizer-dialect {dialect}" in (folder / PYTEST_INI).read_text()


@pytest.mark.parametrize("broken", BROKEN, ids=list(BROKEN))
def test_a_broken_compactor_fails_naming_the_invariant(tmp_path, broken):
    folder = started(tmp_path)
    wrapper = folder / WRAPPER
    wrapper.write_text(wrapper.read_text() + "\n\n" + BROKEN[broken])
    done = pytest_in(folder)
    assert done.returncode == 1, done.stdout[-4000:]
    named = failed_invariants(done.stdout)
    assert named and named <= INVARIANTS, done.stdout[-4000:]


def test_the_printed_next_commands_run_and_pass(tmp_path):
    done = init("team", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    commands = [line.strip() for line in lines[lines.index("next:") + 1:]]
    assert commands[0] == f"cd team && {TEST_COMMAND}" and commands[1].startswith("compaction-harness run "), commands
    assert pytest_in(tmp_path / "team").returncode == 0
    run = subprocess.run([sys.executable, "-m", "harness", *shlex.split(commands[1])[1:], "--seed", "1", "--quiet"],
                         cwd=tmp_path / "team", capture_output=True, text=True, timeout=TIMEOUT, env=_env())
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def test_it_says_what_it_wrote_the_same_way_every_time(tmp_path):
    first, second = init("one", cwd=tmp_path), init("one", "--force", cwd=tmp_path)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    for name in FILES:
        assert f"one/{name}" in first.stdout
    assert "next:" in first.stdout and first.stderr == ""


def test_messages_without_a_function_of_the_team_is_refused(tmp_path):
    done = init("team", "--protocol", "messages", cwd=tmp_path)
    assert done.returncode == 2
    assert "needs --summarizer" in _one_line_error(done)
    assert not (tmp_path / "team").exists()


# -- a team's own function -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dialect", TEAM_WINDOWS)
def test_a_team_messages_function_is_wrapped_in_its_dialect(tmp_path, dialect):
    """The team's file lives apart from the starter (named by path), and is called with the dialect's shape:
    it answers every call (summarizer-answered passes) and loses what a window loses."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "window.py").write_text(TEAM_WINDOWS[dialect])
    folder = started(tmp_path, "--summarizer", "src/window.py:compact", "--dialect", dialect)
    wrapper = (folder / WRAPPER).read_text()
    assert "from window import compact as your_compactor" in wrapper and "'../src'" in wrapper
    assert 'summarize.compaction_protocol = "messages"' in wrapper
    done = pytest_in(folder, "-rA")
    assert done.returncode == 1, done.stdout[-4000:]
    assert "PASSED compaction-harness::property[summarizer-answered]" in done.stdout, done.stdout[-4000:]
    named = failed_invariants(done.stdout)
    assert named and named <= INVARIANTS, done.stdout[-4000:]


def test_a_team_rich_function_is_wrapped_by_module_and_its_protocol_read_off_it(tmp_path):
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "our_compactor.py").write_text(TEAM_RICH)
    done = init("--summarizer", "our_compactor:compact", cwd=folder)
    assert done.returncode == 0, done.stderr
    wrapper = (folder / WRAPPER).read_text()
    assert "from our_compactor import compact as your_compactor" in wrapper
    assert 'summarize.compaction_protocol = "rich"' in wrapper and "starter_compactor" not in wrapper
    assert "--summarizer-protocol rich" in (folder / PYTEST_INI).read_text()
    passed = pytest_in(folder)
    assert passed.returncode == 0, passed.stdout[-4000:]


# -- refusals ----------------------------------------------------------------------------------------------------

def test_an_existing_file_is_refused_and_nothing_is_written_unless_force(tmp_path):
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / PYTEST_INI).write_text("[pytest]\n# ours\n")
    done = init(str(folder), cwd=tmp_path)
    assert done.returncode == 2
    line = _one_line_error(done)
    assert "pytest.ini" in line and "--force" in line and WRAPPER not in line
    assert sorted(p.name for p in folder.rglob("*")) == [PYTEST_INI]
    assert (folder / PYTEST_INI).read_text() == "[pytest]\n# ours\n"
    forced = init(str(folder), "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "--summarizer summarizer_wrapper.py:summarize" in (folder / PYTEST_INI).read_text()
    assert all((folder / name).is_file() for name in FILES)


def test_a_missing_directory_is_created(tmp_path):
    done = init("a/b/team", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert all((tmp_path / "a" / "b" / "team" / name).is_file() for name in FILES)


def test_a_pytest_configuration_already_there_is_never_shadowed(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    done = init(cwd=tmp_path)
    assert done.returncode == 2
    line = _one_line_error(done)
    assert "pyproject.toml" in line and "a folder of its own" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]


@pytest.mark.parametrize("args, said", [
    (("--protocol", "nope"), "invalid choice: 'nope'"),
    (("--dialect", "gemini"), "invalid choice: 'gemini'"),
    (("--summarizer", "no_function_named"), "expected module:function"),
    (("--summarizer", "not_a_module_anywhere:compact"), "cannot import module 'not_a_module_anywhere'"),
    (("--summarizer", "team.py:compat"), "has no callable named 'compat' (did you mean 'compact'?)"),
    (("--summarizer", "openai:gpt-4o-mini"), "init wraps a Python function"),
    (("--summarizer", "team.py:compact", "--protocol", "rich"), "cannot be called as fn(request)"),
    (("--summarizer", "rich_team.py:compact", "--protocol", "messages"), "cannot be called as fn(messages, budget)"),
    (("file.txt",), "not a directory"),
])
def test_bad_values_are_refused_in_one_line_writing_nothing(tmp_path, args, said):
    (tmp_path / "team.py").write_text(TEAM_WINDOWS["chat"])
    (tmp_path / "rich_team.py").write_text(TEAM_RICH)
    (tmp_path / "file.txt").write_text("")
    before = sorted(p.name for p in tmp_path.iterdir())
    done = init(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in _one_line_error(done)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__") == before


# -- the workflow ------------------------------------------------------------------------------------------------

def _workflow(folder: Path) -> dict:
    return yaml.safe_load((folder / WORKFLOW).read_text())


def test_the_workflow_is_yaml_that_runs_the_test_command(tmp_path):
    folder = started(tmp_path)
    job = _workflow(folder)["jobs"]["compaction"]
    assert "working-directory" not in job["defaults"]["run"]  # no repository around: the folder is its root
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert runs[-1] == TEST_COMMAND == " ".join(["python", "-m", "pytest"])  # what pytest_in runs
    install = runs[0]
    assert 'pip install "compaction-harness @ git+https://github.com/${HARNESS_REPO}@${HARNESS_REF}"' in install
    env = {**_env(), **{k: str(v) for k, v in _workflow(folder)["env"].items()}}
    refused = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", install], cwd=folder,
                             capture_output=True, text=True, timeout=60, env=env)
    assert refused.returncode == 2 and "::error::HARNESS_REF is '0000" in refused.stdout


def test_the_workflow_runs_where_init_wrote_inside_a_repository(tmp_path):
    (tmp_path / ".git").mkdir()
    done = init("tools/compaction", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    job = _workflow(tmp_path / "tools" / "compaction")["jobs"]["compaction"]
    assert job["defaults"]["run"]["working-directory"] == "tools/compaction"
    install = next(step for step in job["steps"] if "run" in step)
    assert install["working-directory"] == "."  # the repository's own package installs from its root
    assert f"move tools/compaction/{WORKFLOW} to {WORKFLOW}" in done.stdout


def test_the_pin_is_the_commit_the_harness_was_installed_from():
    commit = "0123456789abcdef0123456789abcdef01234567"

    def record(url, **vcs):
        return '{"url": "%s", "vcs_info": {"vcs": "git", "commit_id": "%s"%s}}' % (
            url, vcs.get("commit", commit), ', "requested_revision": "main"' if vcs.get("branch") else "")

    assert pin_from_direct_url(record("https://github.com/acme/compaction-harness.git")) == Pin(
        "acme/compaction-harness", commit)
    assert pin_from_direct_url(record("ssh://git@github.com/acme/compaction-harness.git", branch=True)) == Pin(
        "acme/compaction-harness", commit)
    assert pin_from_direct_url(record("https://gitlab.com/acme/compaction-harness.git")) is None
    assert pin_from_direct_url(record("https://github.com/acme/compaction-harness.git", commit="abc")) is None
    assert pin_from_direct_url('{"url": "file:///work/main", "dir_info": {"editable": true}}') is None
    assert pin_from_direct_url(None) is None and pin_from_direct_url("not json") is None
    pinned = yaml.safe_load(_workflow_text(Pin("acme/compaction-harness", commit), "."))
    assert pinned["env"] == {"HARNESS_REPO": "acme/compaction-harness", "HARNESS_REF": commit}


def test_the_rich_starter_is_the_protocol_page_s_worked_example_statement_for_statement():
    """Two copies of one compactor (the wheel has no docs/ to read it from): a change to one fails here."""
    import ast

    from harness._app.cli._init_templates import RICH_STARTER

    def body(source: str, name: str) -> list[str]:
        (function,) = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name]
        statements = function.body[1:] if isinstance(function.body[0], ast.Expr) else function.body  # no docstring
        return [ast.dump(s) for s in statements]

    example = (Path(__file__).resolve().parent.parent / "docs" / "examples" / "protocol_rich.py").read_text("utf-8")
    assert body(RICH_STARTER.replace("<<version>>", "1"), "starter_compactor") == body(example, "summarize")
