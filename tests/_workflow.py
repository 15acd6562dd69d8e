"""A small GitHub Actions simulator: the steps of the repository's composite action (action.yml) and of the workflow
templates (templates/github/) run for real, as a runner would run them.

Each `run:` script runs with bash as GitHub runs `shell: bash` (`bash --noprofile --norc -eo pipefail`), with its
`${{ ... }}` expressions and `if:` conditions evaluated here (references, string literals, `==`, `!=`, `!`, `&&`,
`||`, parentheses, and the status functions), `GITHUB_OUTPUT` a file of its own and `GITHUB_STEP_SUMMARY` the
job's. `compaction-harness` is the real one from this venv behind a wrapper recording each argv, and `pip` a stub
recording what it was asked to install (or a real pip, in a fresh virtualenv: `fresh_venv`). `uses:` steps:
this repository's action runs its own steps (a composite action); actions/upload-artifact, download-artifact and
actions/cache (restore, save) copy files through a local store as the actions do; anything else
(checkout, setup-python, create-pull-request, upload-sarif) is outside a test's reach and recorded as not run.
An unknown context reference raises: teach the simulator rather than guess.
"""

from __future__ import annotations

import base64
import glob
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
VENV_BIN = ROOT / ".venv" / "bin" if (ROOT / ".venv" / "bin" / "compaction-harness").exists() else Path(sys.executable).parent
REAL_HARNESS = shutil.which("compaction-harness", path=str(VENV_BIN))
RUN_ID = "4242"
SHA = "0123456789abcdef0123456789abcdef01234567"
STEP_TIMEOUT = 240


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def is_this_action(uses: str) -> bool:
    """A `uses:` naming this repository's action: `./` (a checkout of it) or OWNER/compaction-harness@REF."""
    return uses.rstrip("/") == "." or uses.split("@")[0].endswith("/compaction-harness")


# --- expressions -----------------------------------------------------------------------------------------------

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_TOKEN = re.compile(r"\s*('[^']*'|&&|\|\||==|!=|!|\(|\)|[A-Za-z_][\w\-]*\(\)|[A-Za-z_][\w.\-]*)")


def lookup(reference: str, context: dict) -> Any:
    """A context reference (`inputs.fail-on`, `steps.gate.outputs.new`, `github.event.pull_request.base.sha`)."""
    head, *rest = reference.split(".")
    if head == "secrets":
        return ""  # no secret reaches a test
    if head == "steps":
        step, kind, *name = rest
        assert kind == "outputs" and len(name) == 1, reference
        return context["steps"][step].get(name[0], "")  # KeyError: a step id the job does not have
    value = context[head]
    for part in rest:
        if head == "github" and not isinstance(value, dict):
            return ""  # a property the event does not have is null, as GitHub says it
        value = value.get(part, "") if head == "github" else value[part]
    return value


def evaluate(expression: str, context: dict, failed: bool = False) -> Any:
    """An expression's value, with GitHub's `||` and `&&` (the first operand deciding, as Python's `or`/`and`)."""
    tokens, end = [], 0
    expression = expression.strip()
    while end < len(expression):
        match = _TOKEN.match(expression, end)
        assert match, f"the simulator cannot read {expression!r} at {expression[end:]!r}"
        tokens.append(match.group(1))
        end = match.end()
        while end < len(expression) and expression[end].isspace():
            end += 1
    functions = {"always()": "True", "cancelled()": "False", "success()": str(not failed), "failure()": str(failed)}
    python = []
    for token in tokens:
        if token in functions:
            python.append(functions[token])
        elif token in ("&&", "||", "!"):
            python.append({"&&": "and", "||": "or", "!": "not"}[token])
        elif token in ("==", "!=", "(", ")") or token.startswith("'"):
            python.append(token)
        elif token in ("true", "false"):
            python.append(str(token == "true"))
        else:
            python.append(repr(lookup(token, context)))
    return eval(" ".join(python), {"__builtins__": {}}, {})


def substitute(text: Any, context: dict) -> str:
    def value(match: re.Match) -> str:
        found = evaluate(match.group(1), context)
        return {True: "true", False: "false"}.get(found, found) if isinstance(found, bool) else str(found)
    return _EXPR.sub(value, str(text))


def condition(expression: Any, context: dict, failed: bool) -> bool:
    """An `if:`; none means success()."""
    if expression is None:
        return not failed
    if isinstance(expression, bool):
        return expression
    inner = _EXPR.fullmatch(str(expression).strip())
    return bool(evaluate(inner.group(1) if inner else str(expression), context, failed))


# --- a runner ----------------------------------------------------------------------------------------------------


@dataclass
class Step:
    name: str
    rc: int | None  # None: not run (skipped, or a `uses:` step the simulator does not perform)
    output: str = ""
    would_run: bool = True
    seconds: float = 0.0
    uses: str = ""


@dataclass
class Run:
    """What a job (or one use of the action) did: its steps, outputs, step summary and the commands it ran."""

    name: str
    checkout: Path
    steps: list[Step] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)  # by step id (a job), or the action's own outputs
    summary: str = ""
    argv: list[dict] = field(default_factory=list)
    pip: list[list[str]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(s.rc not in (None, 0) for s in self.steps)

    def step(self, prefix: str) -> Step:
        return next(s for s in self.steps if s.name.startswith(prefix))

    @property
    def output(self) -> str:
        return "\n".join(s.output for s in self.steps)

    @property
    def log(self) -> str:
        return "\n".join(f"--- {s.name} (rc {s.rc}, {s.seconds:.1f} s)\n{s.output}" for s in self.steps) \
            + "\n--- summary\n" + self.summary

    def assert_clean(self) -> None:
        assert not self.failed, self.log


def stubs(directory: Path, *, harness: str | None = REAL_HARNESS, pip: bool = True) -> Path:
    """`compaction-harness` recording its argv, then running `harness`; `pip` recording what it would install,
    unless `pip` is False (a real pip is on the PATH)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "compaction-harness").write_text(f"""#!{sys.executable}
import json, os, sys
with open(os.environ["HARNESS_ARGV_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({{"step": os.environ.get("TEST_STEP", ""), "argv": sys.argv[1:], "harness": {harness!r}}}) + "\\n")
os.execv({harness!r}, [{harness!r}, *sys.argv[1:]])
""")
    (directory / "compaction-harness").chmod(0o755)
    if pip:
        (directory / "pip").write_text(f"""#!{sys.executable}
import json, os, sys
with open(os.environ["PIP_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
""")
        (directory / "pip").chmod(0o755)
    return directory


class Store:
    """Artifacts and caches, shared by the jobs and runs of a test, as GitHub keeps them between jobs and runs."""

    def __init__(self, root: Path):
        self.artifacts, self.caches = root / "artifacts", root / "caches"

    def upload(self, checkout: Path, name: str, paths: str) -> str:
        """actions/upload-artifact: the files under the paths, relative to their least common ancestor."""
        patterns = [p.strip() for p in paths.splitlines() if p.strip()]
        bases = [checkout / re.split(r"[*?\[]", p)[0].rstrip("/") for p in patterns]
        root = Path(os.path.commonpath(bases)) if len(bases) > 1 else (bases[0] if bases[0].is_dir() else bases[0].parent)
        files = []
        for pattern in patterns:
            for hit in map(Path, glob.glob(str(checkout / pattern), recursive=True)):
                files += [f for f in hit.rglob("*") if f.is_file()] if hit.is_dir() else [hit]
        for f in files:
            target = self.artifacts / name / f.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)
        return f"uploaded {len(files)} file(s) as {name}"

    def save(self, checkout: Path, key: str, path: str) -> tuple[int, str]:
        """actions/cache/save: the paths under a key; a key once saved is never overwritten."""
        target = self.caches / key
        if target.exists():
            return 0, f"Failed to save: cache {key} already exists"
        for item in (p.strip() for p in path.splitlines() if p.strip()):
            if not (checkout / item).exists():
                return 1, f"Error: Path Validation Error: {item} does not exist"
            shutil.copytree(checkout / item, target / item) if (checkout / item).is_dir() else \
                (target / item).parent.mkdir(parents=True, exist_ok=True) or shutil.copy2(checkout / item, target / item)
        (target / ".saved").write_text(str(time.monotonic_ns()))
        return 0, f"Cache saved with key: {key}"

    def restore(self, checkout: Path, key: str, restore_keys: str) -> tuple[str, str]:
        """actions/cache/restore: the exact key, else the newest cache whose key starts with a restore key."""
        found = self.caches / key if (self.caches / key).is_dir() else None
        for prefix in (p.strip() for p in restore_keys.splitlines() if p.strip()):
            if found is None and self.caches.is_dir():
                hits = [c for c in self.caches.iterdir() if c.name.startswith(prefix)]
                found = max(hits, key=lambda c: int((c / ".saved").read_text()), default=None)
        if found is None:
            return "", f"Cache not found for input keys: {key}"
        shutil.copytree(found, checkout, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".saved"))
        return found.name, f"Cache restored from key: {found.name}"


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@dataclass
class Runner:
    """One job on one runner: its checkout, its work directory (RUNNER_TEMP, the logs), its PATH and the store."""

    checkout: Path
    work: Path
    store: Store
    github: dict = field(default_factory=dict)
    venv: Path | None = None  # a real virtualenv: its pip and compaction-harness, not the stubs and this venv's
    action_path: Path = ROOT  # the checkout of this action a runner makes for `uses:`

    def __post_init__(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        if self.venv is None:
            bin_dir = stubs(self.work / "bin")
            self.path = f"{bin_dir}:{VENV_BIN}:/usr/bin:/bin"
        else:
            bin_dir = stubs(self.work / "bin", harness=str(self.venv / "bin" / "compaction-harness"), pip=False)
            self.path = f"{bin_dir}:{self.venv / 'bin'}:/usr/bin:/bin"
        self.argv_log, self.pip_log, self.summary = (self.work / name for name in ("argv.jsonl", "pip.jsonl", "summary.md"))
        for f in (self.argv_log, self.pip_log, self.summary):
            f.write_text("")
        self.github = {"run_id": RUN_ID, "sha": SHA, "event_name": "schedule", "event": {}, "workspace": str(self.checkout),
                       "server_url": "https://github.com", "repository": "team/project", **self.github}
        self._scripts = 0

    def base_env(self) -> dict[str, str]:
        env = {"PATH": self.path, "HOME": str(self.work), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "CI": "true",
               "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(self.checkout), "RUNNER_TEMP": str(self.work),
               "GITHUB_STEP_SUMMARY": str(self.summary), "HARNESS_ARGV_LOG": str(self.argv_log),
               "GITHUB_RUN_ID": RUN_ID, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "team/project",
               "TMPDIR": os.environ.get("TMPDIR", "/tmp"), "PYTHONDONTWRITEBYTECODE": "1"}
        if self.venv is None:
            env["PIP_LOG"] = str(self.pip_log)
        return env

    def script(self, label: str, script: str, env: dict[str, str]) -> tuple[Step, dict[str, str]]:
        """One `run:` step: its outcome and the outputs it set."""
        assert "${{" not in script, f"{label}: an expression in a run script (pass it through env:)"
        self._scripts += 1
        outputs, path = self.work / f"output-{self._scripts}", self.work / f"step-{self._scripts}.sh"
        outputs.write_text("")
        path.write_text(script)
        started = time.monotonic()
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)], cwd=self.checkout,
                              env={**self.base_env(), **env, "GITHUB_OUTPUT": str(outputs), "TEST_STEP": label},
                              capture_output=True, text=True, timeout=STEP_TIMEOUT)
        return Step(label, done.returncode, done.stdout + done.stderr, seconds=time.monotonic() - started), _outputs(outputs)

    def finish(self, run: Run) -> Run:
        run.summary = self.summary.read_text()
        run.argv = [json.loads(line) for line in self.argv_log.read_text().splitlines()]
        run.pip = [json.loads(line) for line in self.pip_log.read_text().splitlines()]
        return run

    def action(self, inputs: dict[str, Any], *, env: dict[str, str] | None = None, only: str | None = None) -> Run:
        """This repository's composite action, used with `inputs` (the `with:` of the step, already substituted);
        `only` runs just the steps whose name starts with it."""
        spec = load(ACTION)
        declared = spec["inputs"]
        unknown = set(inputs) - set(declared)
        assert not unknown, f"inputs action.yml does not declare: {sorted(unknown)}"
        missing = [name for name, item in declared.items() if item.get("required") and not inputs.get(name)]
        assert not missing, f"required inputs not given: {missing}"
        values = {name: str(inputs.get(name, item.get("default", ""))) for name, item in declared.items()}
        context = {"inputs": values, "github": {**self.github, "action_path": str(self.action_path)},
                   "steps": {s["id"]: {} for s in spec["runs"]["steps"] if "id" in s}}
        run, failed = Run("action", self.checkout), False
        for step in spec["runs"]["steps"]:
            label = step.get("name") or step.get("uses")
            if (only is not None and not label.startswith(only)) or not condition(step.get("if"), context, failed):
                run.steps.append(Step(label, None, would_run=False))
                continue
            assert "run" in step and step.get("shell") == "bash", f"{label}: a composite run step needs shell: bash"
            done, outputs = self.script(label, step["run"], {**(env or {}), **{
                k: substitute(v, context) for k, v in step.get("env", {}).items()}})
            run.steps.append(done)
            failed |= done.rc != 0
            if "id" in step:
                context["steps"][step["id"]] = outputs
        run.outputs = {name: substitute(item["value"], context) for name, item in spec["outputs"].items()}
        return self.finish(run)

    def job(self, workflow: dict, name: str, *, env: dict[str, str] | None = None) -> Run:
        """One job of a workflow: its steps in order, `uses:` steps as the class's docstring says."""
        spec = workflow["jobs"][name]
        merged = {k: str(v) for k, v in {**workflow.get("env", {}), **spec.get("env", {})}.items()}
        merged.update(env or {})
        context = {"github": self.github, "env": merged, "steps": {s["id"]: {} for s in spec["steps"] if "id" in s},
                   "matrix": {}}
        run, failed = Run(name, self.checkout), False
        for step in spec["steps"]:
            label = step.get("name") or step.get("uses")
            if not condition(step.get("if"), context, failed):
                run.steps.append(Step(label, None, would_run=False, uses=step.get("uses", "")))
                continue
            step_env = {**merged, **{k: substitute(v, context) for k, v in step.get("env", {}).items()}}
            if "run" in step:
                done, outputs = self.script(label, step["run"], step_env)
            else:
                done, outputs = self._uses(step, context, step_env)
            run.steps.append(done)
            failed |= done.rc not in (None, 0)
            if "id" in step:
                context["steps"][step["id"]] = outputs
        run.outputs = context["steps"]
        return self.finish(run)

    def _uses(self, step: dict, context: dict, env: dict[str, str]) -> tuple[Step, dict[str, str]]:
        uses, label = step["uses"], step.get("name") or step["uses"]
        inputs = {k: substitute(v, context) for k, v in (step.get("with") or {}).items()}
        action = uses.split("@")[0]
        if is_this_action(uses):
            used = self.action(inputs, env=env)
            return Step(label, 1 if used.failed else 0, used.log, uses=uses), used.outputs
        if action == "actions/upload-artifact":
            return Step(label, 0, self.store.upload(self.checkout, inputs["name"], inputs["path"]), uses=uses), {}
        if action == "actions/cache/save":
            rc, said = self.store.save(self.checkout, inputs["key"], inputs["path"])
            return Step(label, rc, said, uses=uses), {}
        if action == "actions/cache/restore":
            hit, said = self.store.restore(self.checkout, inputs["key"], inputs.get("restore-keys", ""))
            return Step(label, 0, said, uses=uses), {"cache-hit": str(hit == inputs["key"]).lower(),
                                                      "cache-matched-key": hit}
        return Step(label, None, uses=uses), {}  # checkout, setup-python, create-pull-request, upload-sarif


# --- real installs, with no network -----------------------------------------------------------------------------


def site_packages_without(directory: Path, *, hidden: tuple[str, ...] = ()) -> Path:
    """This venv's installed distributions, as links in `directory`, less the harness itself, pip and the `hidden`
    ones, and less every .pth file (this venv's editable harness is one)."""
    site = Path(sysconfig.get_paths()["purelib"])
    left_out = set()
    for name in ("compaction-harness", "pip", *hidden):
        left_out |= {f.parts[0] for f in importlib.metadata.distribution(name).files or [] if f.parts[0] != ".."}
    directory.mkdir(parents=True)
    for item in site.iterdir():
        if item.name in left_out or item.suffix == ".pth" or item.name.startswith("__editable__"):
            continue
        (directory / item.name).symlink_to(item)
    return directory


def wheel_of_installed(name: str, wheelhouse: Path) -> Path:
    """A wheel of an installed pure-Python distribution, made of its installed files (RECORD written anew)."""
    dist = importlib.metadata.distribution(name)
    files = [f for f in dist.files or [] if f.parts[0] != ".." and "__pycache__" not in f.parts
             and f.name not in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")]
    info = next(f.parts[0] for f in files if f.parts[0].endswith(".dist-info"))
    assert "Tag: py3-none-any" in (Path(dist.locate_file(info)) / "WHEEL").read_text(), f"{name} is not pure Python"
    wheelhouse.mkdir(parents=True, exist_ok=True)
    wheel = wheelhouse / f"{info.removesuffix('.dist-info')}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(wheel, "w") as archive:
        for f in files:
            data = Path(dist.locate_file(f)).read_bytes()
            archive.writestr(f.as_posix(), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{f.as_posix()},sha256={digest},{len(data)}")
        archive.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return wheel


def fresh_venv(path: Path, dependencies: Path) -> Path:
    """A new virtualenv (with its own pip) that sees `dependencies` as installed, through a .pth file."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", str(path)], check=True, capture_output=True, timeout=120)
    # the setuptools ensurepip brings (3.11's, with no bdist_wheel of its own) would hide the project's
    subprocess.run([str(path / "bin" / "python"), "-m", "pip", "uninstall", "--yes", "--quiet", "setuptools"],
                   check=True, capture_output=True, timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(path)})
    site = next(path.glob("lib/python*/site-packages"))
    (site / "project-dependencies.pth").write_text(f"{dependencies}\n")
    return path


def in_venv(venv: Path, code: str) -> subprocess.CompletedProcess:
    """Python `code` run by the venv's interpreter, from the venv (not this checkout: its harness/ is importable)."""
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=venv, env={"PATH": "/usr/bin:/bin", "HOME": str(venv)})


#: pip's environment for an install with no network: no index, no build isolation (the build backend is this
#: venv's, seen through the fresh venv's .pth), no user configuration.
OFFLINE_PIP = {"PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
               "PIP_CONFIG_FILE": os.devnull}


def source_copy(directory: Path) -> Path:
    """The files git tracks in this checkout (and this action's own new ones), copied as they are now: what a
    runner checks out for `uses: OWNER/compaction-harness@REF`, with nothing of the working tree's build output."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True, text=True).stdout.split("\n")
    for name in filter(None, listed):
        if (ROOT / name).is_file() and name.split("/")[0] in ("harness", "strategies", "oracles") \
                or name in ("pyproject.toml", "README.md", "action.yml"):
            (directory / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, directory / name)
    return directory

