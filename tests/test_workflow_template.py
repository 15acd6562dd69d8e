"""The nightly CI template is valid YAML and names only real commands and options of ours."""

import re
import shlex
from pathlib import Path

import yaml

from harness._app.cli._parser import build_parser as _parser

TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "github" / "compaction-nightly.yml"


def _steps():
    workflow = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))
    assert set(workflow["jobs"]) == {"shard", "merge"}
    assert workflow["jobs"]["merge"]["needs"] == "shard"
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def _commands():
    for step in _steps():
        for line in step.get("run", "").replace(" || true", "").splitlines():
            line = line.strip()
            if line.startswith("compaction-harness "):
                yield shlex.split(_substitute(line))[1:]


def _substitute(line: str) -> str:
    """Stand in for the workflow's variables with values of the right kind."""
    line = re.sub(r"\$\{\{[^}]*\}\}", "7", line)
    return line.replace("$SUMMARIZER", "harness.summarizers.identity:summarize").replace("$PROTOCOL", "messages")


def test_every_harness_command_parses():
    commands = list(_commands())
    assert {c[0] for c in commands} >= {"run", "corpus", "replay"}
    for argv in commands:
        _parser().parse_args(argv)  # exits (fails the test) on an unknown command or option


def test_pytest_step_uses_real_plugin_options():
    from harness._app import _pytest_plugin

    source = Path(_pytest_plugin.__file__).read_text()
    runs = " ".join(step.get("run", "") for step in _steps())
    for option in set(re.findall(r"--summarizer[-a-z]*", runs)):
        assert f'"{option}"' in source, option
    assert "--summarizer-profile nightly" in runs
