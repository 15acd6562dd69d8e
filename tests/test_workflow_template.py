"""The nightly CI template (templates/github/compaction-nightly.yml): strict about what it runs, and its steps
really run.

Besides reading the YAML, these tests execute the `run:` scripts of both jobs with bash (as GitHub does for
`shell: bash`: `bash --noprofile --norc -eo pipefail`) in a temporary checkout, with the workflow's env, its
`${{ ... }}` expressions and `if:` conditions evaluated by a small simulator below, `pip` replaced by a stub that
records what it was asked to install, `uses:` steps skipped except upload-artifact / download-artifact, which
copy files through a local artifact store the way the actions do (files only: an empty directory is not
uploaded), and `compaction-harness` the real one (from this venv) behind a wrapper that records each argv.
A night runs one or two shards of one small seed (SHARD_COUNT set to match), with a small MAX_TURNS.
One test installs the harness as the template does instead, with the template's own install steps and a real
pip into fresh virtualenvs, and runs a night with that (test_the_template_s_own_installs_run_a_night).
"""

from __future__ import annotations

import base64
import fnmatch
import glob
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import xml.etree.ElementTree as ET
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from harness._app.cli._parser import build_parser
from harness._app.corpus._entries import entry_from_dict, entry_name

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "templates" / "github" / "compaction-nightly.yml"
VENV_BIN = ROOT / ".venv" / "bin" if (ROOT / ".venv" / "bin" / "compaction-harness").exists() else Path(sys.executable).parent
REAL_HARNESS = shutil.which("compaction-harness", path=str(VENV_BIN))
REPO_CORPUS = ROOT / "corpora"
RUN_ID = "4242"
SHA = "0123456789abcdef0123456789abcdef01234567"
CLEAN = "harness.summarizers.ledgered:summarize"  # rich protocol; identity is clean only budget aside
FINDS = "harness.summarizers.naive:tail"
STEP_TIMEOUT = 180
# Small nights; --inline (the summarizer in the harness's own process) through the template's SUMMARIZER_ARGS
# saves a worker process per run: tests that need the default (a worker per summarizer) say SUMMARIZER_ARGS "".
# Twelve examples split over the night's shards; no example database (nothing listens on the service
# container's port here), except where a test starts a redis-server of its own.
SMALL = {"EXAMPLES": "12", "MAX_TURNS": "40", "MAX_TIME": "120", "REPLAY_MAX_TIME": "120", "HARNESS_REF": SHA,
         "SUMMARIZER_ARGS": "--inline", "DATABASE_URL": ""}

# What the steps of a merge job before its replay set on a night whose shards all judged their part and whose
# corpus merge found nothing: given to a re-run of its last steps alone (run_job's `only` and `outputs`).
FOUND_NOTHING = {"install": {"installed": "true"}, "shards": {"problems": "0"}, "report": {"status": "0"},
                 "merge": {"status": "0", "new": "0", "unsure": "0", "replaced": "0", "changed": "0"}}

pytestmark = pytest.mark.skipif(REAL_HARNESS is None, reason="compaction-harness is not installed in this venv")


def workflow() -> dict:
    return yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))


def runs(job: dict) -> list[dict]:
    return [step for step in job["steps"] if "run" in step]


def harness_commands(script: str) -> set[str]:
    """The subcommands a script invokes at the start of a line (a command, or one continued from `timeout ... \\`):
    "run", "replay", "report", "corpus list" ..."""
    found = re.finditer(r"^\s*compaction-harness\s+(corpus\s+)?(\w+)", script, re.M)
    return {" ".join("".join(m.groups("")).split()) for m in found}


# --- a small GitHub Actions simulator ----------------------------------------------------------------------

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_TOKEN = re.compile(r"\s*('[^']*'|&&|\|\||==|!=|!|\(|\)|[A-Za-z_][\w.\-]*\(\)|[A-Za-z_][\w.\-]*)")


def lookup(reference: str, context: dict) -> str:
    """A context reference; an unknown one raises (teach the simulator rather than guess)."""
    head, *rest = reference.split(".")
    if head == "secrets":
        return ""  # no secret reaches a test
    if head == "steps":
        step, kind, name = rest
        assert kind == "outputs", reference
        return context["steps"][step].get(name, "")  # KeyError: a step id the job does not have
    value = context[head]
    for part in rest:
        value = value[part]
    return str(value)


def substitute(text: str, context: dict) -> str:
    return _EXPR.sub(lambda m: lookup(m.group(1), context), str(text))


def condition(expression, context: dict, failed: bool) -> bool:
    """An `if:` with the operators and functions the template may use; none means success()."""
    if expression is None:
        return not failed
    expression = _EXPR.sub(lambda m: m.group(1), str(expression)).strip()
    tokens, end = [], 0
    while end < len(expression.rstrip()):
        match = _TOKEN.match(expression, end)
        assert match, f"the simulator cannot read {expression!r} at {expression[end:]!r}"
        tokens.append(match.group(1))
        end = match.end()
    functions = {"always()": "True", "cancelled()": "False", "success()": str(not failed), "failure()": str(failed)}
    python = []
    for token in tokens:
        if token in functions:
            python.append(functions[token])
        elif token in ("&&", "||", "!"):
            python.append({"&&": "and", "||": "or", "!": "not"}[token])
        elif token in ("==", "!=", "(", ")") or token.startswith("'"):
            python.append(token)
        else:
            python.append(repr(lookup(token, context)))
    return bool(eval(" ".join(python), {"__builtins__": {}}, {}))


@dataclass
class Step:
    name: str
    rc: int | None  # None: not run (skipped, or a `uses:` step the simulator does not perform)
    output: str = ""
    would_run: bool = True
    seconds: float = 0.0


@dataclass
class Job:
    name: str
    checkout: Path
    steps: list[Step] = field(default_factory=list)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    summary: str = ""
    argv: list[dict] = field(default_factory=list)
    pip: list[list[str]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(s.rc not in (None, 0) for s in self.steps)

    def step(self, prefix: str) -> Step:
        return next(s for s in self.steps if s.name.startswith(prefix))

    @property
    def log(self) -> str:
        return "\n".join(f"--- {s.name} (rc {s.rc}, {s.seconds:.1f} s)\n{s.output}" for s in self.steps) + "\n--- summary\n" + self.summary

    def assert_clean(self) -> None:
        assert not self.failed, self.log


def stubs(directory: Path, *, harness: str | None = REAL_HARNESS, pip: bool = True) -> Path:
    """`compaction-harness` recording its argv and the program it runs (then `harness`, or canned output for a
    dry run); `pip` recording what it would install, unless `pip` is False (a real pip is on the PATH)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "compaction-harness").write_text(f"""#!{sys.executable}
import json, os, sys
with open(os.environ["HARNESS_ARGV_LOG"], "a", encoding="utf-8") as log:
    call = {{"step": os.environ.get("TEST_STEP", ""), "argv": sys.argv[1:], "harness": {harness!r}}}
    log.write(json.dumps(call) + "\\n")
if os.environ.get("HARNESS_DRY_RUN"):
    if sys.argv[1:3] == ["corpus", "list"]:
        print("0 entries, 0 unreadable")
    if sys.argv[1:2] == ["run"] and "--corpus" in sys.argv:  # as the real one makes it, before any work
        os.makedirs(sys.argv[sys.argv.index("--corpus") + 1], exist_ok=True)
    if sys.argv[1:3] == ["corpus", "changes"] and "--report-json" in sys.argv:  # as for two equal corpora
        with open(sys.argv[sys.argv.index("--report-json") + 1], "w", encoding="utf-8") as out:
            json.dump({{"new": [], "unsure": [], "replaced": [], "removed": []}}, out)
    sys.exit(0)
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


def upload(store: Path, checkout: Path, name: str, paths: str) -> str:
    """actions/upload-artifact: the files under the paths, relative to their least common ancestor."""
    patterns = [p.strip() for p in paths.splitlines() if p.strip()]
    bases = [checkout / re.split(r"[*?\[]", p)[0].rstrip("/") for p in patterns]
    root = Path(os.path.commonpath(bases)) if len(bases) > 1 else (bases[0] if bases[0].is_dir() else bases[0].parent)
    files = []
    for pattern in patterns:
        for hit in map(Path, glob.glob(str(checkout / pattern), recursive=True)):
            files += [f for f in hit.rglob("*") if f.is_file()] if hit.is_dir() else [hit]
    files = [f for f in files if not any(part.startswith(".") for part in f.relative_to(root).parts)]  # hidden: left out
    for f in files:
        target = store / name / f.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, target)
    return f"uploaded {len(files)} file(s) as {name}"


def download(store: Path, checkout: Path, pattern: str, path: str) -> tuple[int, str]:
    """actions/download-artifact@v4 with a pattern: each artifact into path/NAME; none found is an error."""
    names = sorted(n.name for n in store.iterdir() if fnmatch.fnmatch(n.name, pattern)) if store.exists() else []
    if not names:
        return 1, "Error: Unable to download artifact(s): no artifacts found"
    for name in names:
        shutil.copytree(store / name, checkout / path / name, dirs_exist_ok=True)
    return 0, f"downloaded {', '.join(names)}"


def run_job(name: str, checkout: Path, work: Path, *, env: dict[str, str], store: Path, matrix: dict | None = None,
            needs: dict | None = None, only: str | tuple[str, ...] | None = None, outputs: dict | None = None,
            venv: Path | None = None) -> Job:
    """Run one job of the template in `checkout`; `only` runs just the steps whose name starts with it, with
    `outputs` as what the steps before it had set (a re-run of one step). With `venv`, the job's `pip` and
    `compaction-harness` are that virtualenv's (its install steps really install), not this one's."""
    wf = workflow()
    spec = wf["jobs"][name]
    tag = f"{name}-{(matrix or {}).get('shard', '')}"
    if venv is None:
        bin_dir, path = stubs(work / "bin"), f"{work / 'bin'}:{VENV_BIN}:/usr/bin:/bin"
    else:
        bin_dir = stubs(work / "bin", harness=str(venv / "bin" / "compaction-harness"), pip=False)
        path = f"{bin_dir}:{venv / 'bin'}:/usr/bin:/bin"
    job = Job(name, checkout)
    argv_log, pip_log, summary = work / f"argv-{tag}.jsonl", work / f"pip-{tag}.jsonl", work / f"summary-{tag}.md"
    for f in (argv_log, pip_log, summary):
        f.write_text("")
    context = {"matrix": matrix or {}, "github": {"run_id": RUN_ID}, "needs": needs or {},
               "steps": {s["id"]: dict((outputs or {}).get(s["id"], {})) for s in spec["steps"] if "id" in s}}
    merged = {k: str(v) for k, v in {**wf.get("env", {}), **spec.get("env", {})}.items()}
    merged.update(env)
    context["env"] = merged
    base = {"PATH": path, "HOME": str(work), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(checkout), "RUNNER_TEMP": str(work),
            "GITHUB_STEP_SUMMARY": str(summary), "HARNESS_ARGV_LOG": str(argv_log),
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"), "PYTHONDONTWRITEBYTECODE": "1"}
    if venv is None:  # the stub's log (a real pip reads PIP_LOG as its --log)
        base["PIP_LOG"] = str(pip_log)
    if env.get("HARNESS_DRY_RUN"):
        base["HARNESS_DRY_RUN"] = "1"
    failed = False
    for n, step in enumerate(spec["steps"]):
        label = step.get("name") or step.get("uses")
        selected = only is None or label.startswith(only)
        if not selected or not condition(step.get("if"), context, failed):
            job.steps.append(Step(label, None, would_run=False))
            continue
        if "uses" in step:
            action, inputs = step["uses"].split("@")[0], {k: substitute(v, context) for k, v in step.get("with", {}).items()}
            if action == "actions/upload-artifact":
                job.steps.append(Step(label, 0, upload(store, checkout, inputs["name"], inputs["path"])))
            elif action == "actions/download-artifact":
                rc, output = download(store, checkout, inputs["pattern"], inputs["path"])
                job.steps.append(Step(label, rc, output))
                failed |= rc != 0
            else:  # checkout, setup-python, create-pull-request: outside a test's reach
                job.steps.append(Step(label, None))
            continue
        script = step["run"]
        assert "${{" not in script, f"{label}: an expression in a run script (pass it through env:)"
        outputs = work / f"output-{tag}-{n}"
        outputs.write_text("")
        process_env = {**base, **merged, **{k: substitute(v, context) for k, v in step.get("env", {}).items()},
                       "GITHUB_OUTPUT": str(outputs), "TEST_STEP": label}
        (work / f"step-{tag}-{n}.sh").write_text(script)
        started = time.monotonic()
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(work / f"step-{tag}-{n}.sh")],
                              cwd=checkout, env=process_env, capture_output=True, text=True, timeout=STEP_TIMEOUT)
        job.steps.append(Step(label, done.returncode, done.stdout + done.stderr, seconds=time.monotonic() - started))
        failed |= done.returncode != 0
        if "id" in step:
            context["steps"][step["id"]] = dict(line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    job.outputs = context["steps"]
    job.summary = summary.read_text()
    job.argv = [json.loads(line) for line in argv_log.read_text().splitlines()]
    job.pip = [json.loads(line) for line in pip_log.read_text().splitlines()]
    return job


def checkout(path: Path, corpus: Path | None, files: dict[str, str] | None = None) -> Path:
    """A team's checkout: its corpora/ (a copy of `corpus`, or empty) and its own summarizer files."""
    path.mkdir(parents=True)
    if corpus is not None:
        shutil.copytree(corpus, path / "corpora", ignore=shutil.ignore_patterns("*.md"))
    else:
        (path / "corpora").mkdir()
    for name, text in (files or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return path


@dataclass
class Night:
    shards: dict[int, Job]
    merge: Job | None
    store: Path

    @property
    def jobs(self) -> list[Job]:
        return [*self.shards.values(), *([self.merge] if self.merge else [])]

    @property
    def failed(self) -> bool:
        return any(job.failed for job in self.jobs)


def night(tmp: Path, env: dict[str, str], *, corpus: Path | None, shards=(0, 1), files=None, merge=True) -> Night:
    """Both jobs, as GitHub would run them: the shards (each on a fresh runner) at once, then the merge. The
    night has as many shards as it runs (SHARD_COUNT: the merge expects each), EXAMPLES over them all."""
    assert tuple(shards) == tuple(range(len(shards))), "shards 0..N-1: the merge job expects SHARD_COUNT of them"
    env = {**SMALL, "SHARD_COUNT": str(len(shards)), **env}
    store = tmp / "artifacts"
    matrix = workflow()["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    assert set(shards) <= set(matrix)

    def shard(n: int) -> Job:
        return run_job("shard", checkout(tmp / f"shard-{n}", corpus, files), tmp / f"work-shard-{n}", env=env,
                       store=store, matrix={"shard": n})

    with ThreadPoolExecutor(len(shards)) as pool:
        done = dict(zip(shards, pool.map(shard, shards)))
    result = "failure" if any(job.failed for job in done.values()) else "success"
    merged = merge_job(tmp / "merge", env, store, corpus, files, shards=result) if merge else None
    return Night(done, merged, store)


def merge_job(tmp: Path, env: dict[str, str], store: Path, corpus: Path | None, files=None, *, shards="success") -> Job:
    return run_job("merge", checkout(tmp / "checkout", corpus, files), tmp, env={**SMALL, **env}, store=store,
                   needs={"shard": {"result": shards}})


def assert_commands_parse(jobs) -> None:
    """Every argv a step gave compaction-harness is one the project's own parser accepts."""
    for job in jobs:
        for call in job.argv:
            try:
                build_parser().parse_args(call["argv"])
            except SystemExit as exc:
                pytest.fail(f"{call['step']}: compaction-harness {' '.join(call['argv'])} does not parse (exit {exc.code})")


def entries(directory: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in directory.glob("*.json")} if directory.is_dir() else {}


def junit_counts(path: Path) -> dict[str, int]:
    suites = list(ET.parse(path).getroot().iter("testsuite"))
    return {key: sum(int(s.get(key, 0)) for s in suites) for key in ("tests", "failures", "errors")}


# --- the YAML itself --------------------------------------------------------------------------------------


def test_template_is_strict_yaml():
    text = TEMPLATE.read_text(encoding="utf-8")
    wf = workflow()
    assert set(wf[True]) == {"schedule", "workflow_dispatch"}  # YAML 1.1 reads the key `on` as True
    assert not re.search(r"\|\|\s*true\b", text), "|| true hides a failing command"
    assert not re.search(r"continue-on-error", text), "continue-on-error hides a failing step"
    assert set(wf["jobs"]) == {"shard", "merge"}
    shard, merge = wf["jobs"]["shard"], wf["jobs"]["merge"]
    assert merge["needs"] == "shard" and "!cancelled()" in merge["if"]  # merges what the other shards found
    assert shard["strategy"]["fail-fast"] is False and len(shard["strategy"]["matrix"]["shard"]) >= 2
    for name, job in wf["jobs"].items():
        assert isinstance(job.get("timeout-minutes"), int) and job["timeout-minutes"] > 0, name
    env = wf["env"]
    for name in ("SUMMARIZER", "PROTOCOL", "EXAMPLES", "MAX_TURNS", "MAX_TIME", "REPLAY_MAX_TIME", "HARNESS_REF"):
        assert name in env, name
    assert env["FAIL_ON_KNOWN"] == "false" and "FAIL_ON_KNOWN" in text.split("jobs:")[0].split("env:")[0]  # documented
    assert re.fullmatch(r"[0-9a-f]{40}", env["HARNESS_REF"])
    # the run is bounded by --max-time well below the job's timeout (install and upload need minutes too)
    assert int(env["MAX_TIME"]) + 600 <= shard["timeout-minutes"] * 60
    assert int(env["REPLAY_MAX_TIME"]) + 600 <= merge["timeout-minutes"] * 60
    run_step = next(s for s in runs(shard) if "run" in harness_commands(s["run"]))
    assert '--max-time "$MAX_TIME"' in run_step["run"]
    # least privilege: read at the top, write only where the pull request is opened
    assert wf["permissions"] == {"contents": "read"} and "permissions" not in shard
    assert merge["permissions"] == {"contents": "write", "pull-requests": "write"}
    pr = [s for s in merge["steps"] if s.get("uses", "").startswith("peter-evans/create-pull-request@")]
    assert len(pr) == 1 and pr[0]["with"]["add-paths"] == "corpora/*.json"
    assert "Allow GitHub Actions to create and approve pull requests" in text
    # secrets: only on the steps calling a summarizer, and no expression spliced into a script
    for job in wf["jobs"].values():
        for step in runs(job):
            assert "${{" not in step["run"], step.get("name")
            if harness_commands(step["run"]) & {"run", "replay"}:
                assert step["env"]["OPENAI_API_KEY"] == "${{ secrets.OPENAI_API_KEY }}", step["name"]
    assert "only needed for openai:" in text.lower() or "only for openai:" in text.lower()
    # every upload still happens on a failed night
    uploads = [s for job in wf["jobs"].values() for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert len(uploads) == 2 and all(re.search(r"always\(\)|!cancelled\(\)", s.get("if", "")) for s in uploads)
    # no Hypothesis cache unless `run` can use a database
    run_parser = build_parser()._subparsers._group_actions[0].choices["run"]
    run_options = {o for a in run_parser._actions for o in a.option_strings}
    assert "--max-time" in run_options
    if "--database" not in run_options:
        assert "actions/cache" not in text


def test_install_step_pins_the_harness(tmp_path):
    """The install step refuses the placeholder and a branch name, and installs the pinned commit plus the team's
    own project (pip is a stub here that records its arguments); a shard, whose default DATABASE_URL is a Redis,
    installs the redis extra with it (without it every shard stopped at start-up, exit 2)."""
    for job in ("shard", "merge"):
        harness = "compaction-harness[redis]" if job == "shard" else "compaction-harness"
        for ref, ok in (("0" * 40, False), ("main", False), (SHA, True)):
            work = tmp_path / f"{job}-{ref}"
            done = run_job(job, checkout(work / "co", None), work, env={"HARNESS_REF": ref}, store=tmp_path / "store",
                           matrix={"shard": 0}, only="Install")
            step = done.step("Install")
            if ok:
                assert step.rc == 0, done.log
                assert done.pip == [["install", f"{harness} @ git+https://github.com/OWNER/compaction-harness@{SHA}"],
                                    ["install", "-e", "."]]
            else:
                assert step.rc != 0 and "HARNESS_REF" in step.output and done.pip == [], done.log


def test_every_harness_command_parses(tmp_path):
    """A dry run of both jobs (compaction-harness answers 0 without doing anything) reaches every harness command
    of every step; each argv, as bash expanded it, parses with the project's parser."""
    store = tmp_path / "store"
    env = {**SMALL, "HARNESS_DRY_RUN": "1", "SUMMARIZER": FINDS, "PROTOCOL": "messages",
           "SUMMARIZER_ARGS": "--timeout 60", "RUN_ARGS": "--budget 3000 --jobs 2"}
    shard = run_job("shard", checkout(tmp_path / "shard", None), tmp_path / "ws", env=env, store=store, matrix={"shard": 3})
    shard.assert_clean()
    fake = store / "shard-3"  # what a shard that found something uploads
    (fake / "corpus").mkdir(parents=True)
    (fake / "corpus" / "x.json").write_text("{}")
    (fake / "report-3.json").write_text("{}")
    for n in (0, 1, 2):  # the other shards of the night: each judged its part and found nothing wrong with it
        (store / f"shard-{n}").mkdir()
        (store / f"shard-{n}" / "verdict.txt").write_text("")
    merge = run_job("merge", checkout(tmp_path / "merge", None), tmp_path / "wm", env=env, store=store,
                    needs={"shard": {"result": "success"}})
    merge.assert_clean()
    assert_commands_parse([shard, merge])
    wf = workflow()
    for job in (shard, merge):
        expected = {(s["name"], c) for s in runs(wf["jobs"][job.name]) for c in harness_commands(s["run"])}
        seen = {(call["step"], " ".join(call["argv"][:2] if call["argv"][0] == "corpus" else call["argv"][:1]))
                for call in job.argv}
        assert expected == seen, (expected, seen)
    run_argv = next(c["argv"] for c in shard.argv if c["argv"][0] == "run")
    args = build_parser().parse_args(run_argv)
    assert (args.report_json, args.report_html, args.junit_xml) == (  # one run writes all three, where the merge
        "shards/shard-3/report-3.json", "shards/shard-3/report-3.html", "shards/shard-3/junit-3.xml")  # finds them
    assert (args.summarizer, args.protocol, args.examples, args.max_turns, args.max_time, args.seed, args.corpus) == (
        FINDS, "messages", 12, 40, 120, int(RUN_ID), "shards/shard-3/corpus")  # one seed for the night's shards
    assert (args.shard, args.database) == ((4, 4), None)  # matrix shard 3 of 4; the secret reaches no test
    assert (args.timeout, args.budget, args.jobs) == (60, 3000, 2)  # SUMMARIZER_ARGS and RUN_ARGS reach it
    replay = build_parser().parse_args(next(c["argv"] for c in merge.argv if c["argv"][0] == "replay"))
    assert (replay.directory, replay.summarizer, replay.junit_xml, replay.timeout) == ("corpora", FINDS, "nightly/replay.xml", 60)


# --- nights, for real -------------------------------------------------------------------------------------


def test_clean_night_passes(tmp_path):
    """A summarizer with nothing to find: every step exits 0, the merge copes with shards that saved nothing (their
    empty corpus directories are not even uploaded), and no pull request is proposed."""
    done = night(tmp_path, {"SUMMARIZER": CLEAN, "PROTOCOL": "rich", "EXAMPLES": "3"}, corpus=REPO_CORPUS, shards=(0,))
    for job in done.jobs:
        job.assert_clean()
    assert_commands_parse(done.jobs)
    for n, job in done.shards.items():
        assert job.outputs["run"]["status"] == "0", job.log
        artifact = done.store / f"shard-{n}"
        assert {p.name for p in artifact.iterdir()} == {f"report-{n}.json", f"report-{n}.html", f"junit-{n}.xml",
                                                        "status.txt", "stderr.txt", "verdict.txt"}
        assert (artifact / "verdict.txt").read_text() == ""  # nothing wrong with this shard's run
        assert json.loads((artifact / f"report-{n}.json").read_text())["exit_code"] == 0
    merge = done.merge
    assert not (merge.checkout / "shards" / "shard-0" / "corpus").exists()
    assert merge.outputs["merge"] == {"new": "0", "unsure": "0", "replaced": "0", "changed": "0", "status": "0"}
    assert merge.outputs["replay"]["status"] == "0" and merge.outputs["shards"]["problems"] == "0"
    assert "no new finding" in merge.summary
    assert "shards: all 1 ran and judged every example of their part" in merge.summary
    assert entries(merge.checkout / "corpora").keys() == entries(REPO_CORPUS).keys()
    assert not merge.step("Propose").would_run
    nightly = done.store / "nightly"
    counts = junit_counts(nightly / "nightly" / "replay.xml")
    assert counts == {"tests": len(entries(REPO_CORPUS)), "failures": 0, "errors": 0}
    assert (nightly / "nightly" / "nightly.html").stat().st_size > 0


@pytest.fixture(scope="module")
def finding_night(tmp_path_factory):
    """A team's first night (an empty corpora/) with a summarizer that drops things."""
    tmp = tmp_path_factory.mktemp("finding")
    return night(tmp, {"SUMMARIZER": FINDS, "PROTOCOL": "messages", "MAX_TURNS": "80"}, corpus=None)


def test_new_finding_fails_the_night(finding_night):
    done = finding_night
    assert_commands_parse(done.jobs)
    for n, job in done.shards.items():
        job.assert_clean()  # exit 1 is the merge job's to judge: new or known
        assert job.outputs["run"]["status"] == "1"
        artifact = done.store / f"shard-{n}"
        report = json.loads((artifact / f"report-{n}.json").read_text())
        assert report["findings"] and len(entries(artifact / "corpus")) == len(report["findings"])
        assert junit_counts(artifact / f"junit-{n}.xml")["failures"] > 0
        assert "<html" in (artifact / f"report-{n}.html").read_text().lower()
    merge = done.merge
    assert merge.failed and merge.step("Verdict").rc != 0, merge.log
    assert all(s.rc in (0, None) for s in merge.steps if not s.name.startswith("Verdict")), merge.log
    new = int(merge.outputs["merge"]["new"])
    saved = entries(merge.checkout / "corpora")
    assert new == len(saved) > 0 and all(e["summarizer"] == FINDS for e in saved.values())
    assert (merge.outputs["merge"]["unsure"], merge.outputs["merge"]["replaced"]) == ("0", "0")  # a first night
    listed = (merge.checkout / "nightly" / "new.txt").read_text().splitlines()
    assert sorted(line.split()[0] for line in listed) == sorted(saved)
    assert f"{new} new finding(s)" in merge.step("Verdict").output and f"{new} new finding(s)" in merge.summary
    assert merge.step("Propose").would_run
    body = (merge.checkout / "nightly" / "pull-request.md").read_text()
    assert FINDS in body and f"### {new} new finding(s)" in body
    uploaded = done.store / "nightly"
    assert entries(uploaded / "corpora").keys() == saved.keys() and (uploaded / "nightly" / "nightly.html").exists()


def test_known_failures_are_not_new_and_follow_fail_on_known(finding_night, tmp_path):
    """The next night, once the pull request is merged: the same failures are known, not new, even found again
    with another minimal transcript (a larger one, which dedupe drops); replay still fails on them, which is a
    warning, or red with FAIL_ON_KNOWN=true. The shards' artifacts are those of the first night (the same run id
    gives the same seeds), plus that second transcript of a known failure."""
    first = finding_night
    known = first.merge.checkout / "corpora"
    store = tmp_path / "artifacts"
    shutil.copytree(first.store, store)
    name, entry = sorted(entries(known).items())[0]
    entry["transcript"]["turns"].append({"role": "user", "text": "Thanks, that is all for today."})
    (store / "shard-0" / "corpus" / "again.json").write_text(json.dumps(entry))
    env = {"SUMMARIZER": FINDS, "PROTOCOL": "messages", "FAIL_ON_KNOWN": "false", "SHARD_COUNT": "2"}
    merge = merge_job(tmp_path / "night", env, store, known)
    assert_commands_parse([merge])
    merge.assert_clean()
    assert re.search(r"merged into corpora: [1-9]\d* added", merge.step("Merge").output), merge.log  # it was merged,
    assert entries(merge.checkout / "corpora").keys() == entries(known).keys()                       # then deduped away
    assert merge.outputs["merge"]["new"] == "0" and merge.outputs["merge"]["changed"] == "0", merge.log
    assert "no new finding" in merge.summary
    assert merge.outputs["replay"]["status"] == "1" and not merge.step("Propose").would_run
    counts = junit_counts(store / "nightly" / "nightly" / "replay.xml")  # uploaded with the reports
    assert counts["tests"] == len(entries(known)) == counts["failures"] and counts["errors"] == 0
    verdict = merge.step("Verdict")
    assert "known failure(s)" in verdict.output and "::warning" in verdict.output
    strict = run_job("merge", merge.checkout, tmp_path / "strict", env={**SMALL, **env, "FAIL_ON_KNOWN": "true"},
                     store=store, needs={"shard": {"result": "success"}}, only="Verdict", outputs=merge.outputs)
    assert strict.step("Verdict").rc != 0 and "FAIL_ON_KNOWN is true" in strict.step("Verdict").output, strict.log


def test_misspelled_summarizer_fails(tmp_path):
    env = {"SUMMARIZER": "harness.summarizers.nope:summarize", "PROTOCOL": "messages"}
    done = night(tmp_path, env, corpus=REPO_CORPUS, shards=(0,), merge=False)
    shard = done.shards[0]
    assert shard.outputs["run"]["status"] == "2" and (done.store / "shard-0" / "status.txt").read_text().strip() == "2"
    said = ("exit 2, nothing was judged; fix what the harness names and re-run: SpecError: --summarizer "
            "'harness.summarizers.nope:summarize': cannot import module 'harness.summarizers.nope'")
    assert shard.step("Verdict").rc != 0 and said in shard.step("Verdict").output and said in shard.summary
    assert (done.store / "shard-0" / "verdict.txt").read_text().startswith(said)
    assert done.failed
    # the merge job runs after a failed shard; its replay of corpora/ says the same (its other steps are given as
    # having found nothing, so the replay alone can make the verdict red)
    merge = run_job("merge", checkout(tmp_path / "merge", REPO_CORPUS), tmp_path / "wm", env={**SMALL, **env},
                    store=done.store, needs={"shard": {"result": "success"}}, only=("Replay", "Verdict"),
                    outputs=FOUND_NOTHING)
    assert merge.outputs["replay"]["status"] == "2", merge.log
    verdict = merge.step("Verdict")
    said = ("replay exit 2, nothing was judged; fix what it names (the workflow's env, an entry of corpora/) and "
            "re-run: SpecError: --summarizer 'harness.summarizers.nope:summarize'")
    assert verdict.rc != 0 and said in verdict.output, merge.log


def test_raising_summarizer_fails_and_keeps_its_reports(tmp_path):
    raising = "def summarize(messages, budget):\n    raise RuntimeError('compaction backend down')\n"
    done = night(tmp_path, {"SUMMARIZER": "team_compact.py:summarize", "PROTOCOL": "messages"}, corpus=None,
                 shards=(0,), files={"team_compact.py": raising}, merge=False)
    shard = done.shards[0]
    assert shard.outputs["run"]["status"] == "3", shard.log
    verdict = shard.step("Verdict")
    assert verdict.rc != 0 and "exit 3: the summarizer itself failed" in verdict.output
    artifact = done.store / "shard-0"
    assert json.loads((artifact / "report-0.json").read_text())["infra_errors"]
    assert (artifact / "report-0.html").exists() and junit_counts(artifact / "junit-0.xml")["tests"] > 0


SLOW_CLEAN = """import time
from harness.summarizers.ledgered import summarize as _ledgered

def summarize(request):
    time.sleep(0.4)
    return _ledgered(request)

summarize.compaction_protocol = "rich"
"""

# keeps the last message only (a violation at the first compaction), quickly at first, then slowly
LOSSY_THEN_SLOW = """import time
calls = 0

def summarize(messages, budget):
    global calls
    calls += 1
    if calls > 8:
        time.sleep(0.5)
    return messages[-1:]
"""

# keeps the last message only, and raises on every fourth call (one process: SUMMARIZER_ARGS has --inline)
LOSSY_AND_RAISING = """calls = 0

def summarize(messages, budget):
    global calls
    calls += 1
    if calls % 4 == 0:
        raise RuntimeError("compaction backend hiccup")
    return messages[-1:]
"""


@pytest.mark.parametrize("code, env, status, said", [
    (SLOW_CLEAN, {"MAX_TIME": "2"}, "4", r"exit 4: incomplete"),
    (LOSSY_THEN_SLOW, {"MAX_TIME": "4"}, "1", r"exit 1 hides an incomplete run \(exit 4 otherwise\): --max-time"),
    (LOSSY_AND_RAISING, {}, "1", r"exit 1 hides [1-9]\d* summarizer failure\(s\)"),
], ids=["max-time", "max-time-behind-exit-1", "summarizer-failures-behind-exit-1"])
def test_a_cut_run_or_a_failing_summarizer_fails_even_behind_exit_1(tmp_path, code, env, status, said):
    """--max-time reached is exit 4, or exit 1 when violations were found first; a summarizer that raised is exit
    3, or exit 1 when it also lost something. Red in every case: the shard reads its JSON report."""
    done = night(tmp_path, {"SUMMARIZER": "team_compact.py:summarize", "PROTOCOL": "", "EXAMPLES": "6", **env},
                 corpus=None, shards=(0,), files={"team_compact.py": code}, merge=False)
    shard = done.shards[0]
    assert shard.outputs["run"]["status"] == status, shard.log
    verdict = shard.step("Verdict")
    assert verdict.rc != 0 and re.search(said, verdict.output), shard.log
    assert (done.store / "shard-0" / "report-0.html").exists()


def test_replay_errors_behind_exit_1_fail_the_night(finding_night, tmp_path):
    """Replay exits 1 when a known failure still fails, even if another entry could not be judged: the merge job
    counts the errors of its JUnit, so that is red whatever FAIL_ON_KNOWN says."""
    first = finding_night
    corpus = tmp_path / "corpora"
    shutil.copytree(first.merge.checkout / "corpora", corpus)
    name, entry = sorted(entries(corpus).items())[0]
    entry["invariant"] = "no-such-invariant"  # an oracle this harness does not have: not judged
    (corpus / "unjudged.json").write_text(json.dumps(entry))
    merge = run_job("merge", checkout(tmp_path / "co", corpus), tmp_path / "w",
                    env={**SMALL, "SUMMARIZER": FINDS, "PROTOCOL": "messages"}, store=first.store,
                    needs={"shard": {"result": "success"}}, only=("Replay", "Verdict"), outputs=FOUND_NOTHING)
    assert merge.outputs["replay"]["status"] == "1" and merge.outputs["replay"]["errors"] == "1", merge.log
    verdict = merge.step("Verdict")
    assert verdict.rc != 0 and "replay exit 1 hides 1 error(s)" in verdict.output, merge.log


def test_findings_that_miss_the_shard_corpus_fail(tmp_path):
    """A finding saved somewhere the artifact does not hold (here RUN_ARGS overrides --corpus) never reaches the
    merge job, so it could not count as new: the shard says so and goes red."""
    done = night(tmp_path, {"SUMMARIZER": FINDS, "PROTOCOL": "messages", "MAX_TURNS": "80",
                         "RUN_ARGS": "--corpus elsewhere"},
                 corpus=None, shards=(0,), merge=False)
    shard = done.shards[0]
    assert shard.outputs["run"]["status"] == "1" and int(shard.outputs["run"]["findings"]) > 0, shard.log
    assert entries(shard.checkout / "elsewhere") and not (done.store / "shard-0" / "corpus").exists()
    verdict = shard.step("Verdict")
    assert verdict.rc != 0 and "corpus entries saved: the merge job cannot see them" in verdict.output, shard.log


def test_the_shards_of_a_night_share_a_real_redis(tmp_path):
    """DATABASE_URL set to a live redis-server (the secret COMPACTION_REDIS_URL in a real workflow): the first
    shard's findings are judged first by the next shard, and the merge draws the two shards as one night."""
    from tests.test_sharing import RedisServer

    server = RedisServer(tmp_path)
    try:
        env = {"SUMMARIZER": FINDS, "PROTOCOL": "messages", "EXAMPLES": "12", "SHARD_COUNT": "2", "MAX_TURNS": "80",
               "DATABASE_URL": server.url}
        store = tmp_path / "artifacts"
        for n in (0, 1):  # one after the other, as a night whose second shard starts later
            job = run_job("shard", checkout(tmp_path / f"shard-{n}", None), tmp_path / f"work-{n}", env={**SMALL, **env},
                          store=store, matrix={"shard": n})
            job.assert_clean()
            assert any("--database" in c["argv"] for c in job.argv)
        first, second = (json.loads((store / f"shard-{n}" / f"report-{n}.json").read_text()) for n in (0, 1))
        assert first["findings"] and first["shard"] == {"index": 1, "of": 2}
        assert second["replayed"] >= 1 and second["first_failure_calls"] <= 10
        merge = merge_job(tmp_path / "merge", env, store, None)
        assert "nightly.html: 1 report(s)" in merge.step("Draw").output, merge.log  # one night, not two
    finally:
        server.stop()


# --- what the night says: shards that could not run, links, counts ------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_shard_that_could_not_run_fails_the_night_with_its_own_reason(tmp_path):
    """A shard whose Redis does not answer (exit 2) says so in the harness's own words, not a guessed cause; one
    whose install failed quotes the install's error; one that uploaded nothing did not run. The merge job, which
    finds nothing new, is red all the same, and names each shard with its reason."""
    dead = f"redis://127.0.0.1:{_free_port()}/0"  # nothing listens there
    env = {**SMALL, "SUMMARIZER": FINDS, "PROTOCOL": "messages", "SHARD_COUNT": "3"}
    store = tmp_path / "artifacts"
    no_redis = run_job("shard", checkout(tmp_path / "s0", None), tmp_path / "w0", env={**env, "DATABASE_URL": dead},
                       store=store, matrix={"shard": 0})
    not_installed = run_job("shard", checkout(tmp_path / "s1", None), tmp_path / "w1",
                            env={**env, "HARNESS_REF": "main"}, store=store, matrix={"shard": 1})
    # shard 2 never ran: its artifact is missing
    # the harness redacts the value of DATABASE_URL (it may hold a password) from what it prints
    database = ("exit 2, nothing was judged; fix what the harness names and re-run: DatabaseError: --database "
                "[REDACTED:DATABASE_URL]: Redis did not answer (ConnectionError: Error 111 connecting to 127.0.0.1:")
    install = ("the harness did not run, its install failed (see the step's log): HARNESS_REF is 'main': set it to "
               "the full 40-hex commit")
    assert no_redis.outputs["run"]["status"] == "2", no_redis.log
    for n, job, said in ((0, no_redis, database), (1, not_installed, install)):
        verdict = job.step("Verdict")
        assert verdict.rc == 1 and f"::error title=compaction-harness shard {n}::{said}" in verdict.output, job.log
        assert f"- :x: {said}" in job.summary and "misspelled" not in job.log
    assert not not_installed.step("Run the harness").would_run
    assert {p.name for p in (store / "shard-1").iterdir()} == {"verdict.txt"}  # the shard's reason reaches the merge
    merge = merge_job(tmp_path / "merge", env, store, None, shards="failure")
    assert all(s.rc in (0, None) for s in merge.steps if not s.name.startswith("Verdict")), merge.log
    assert merge.outputs["shards"]["problems"] == "3" and merge.outputs["merge"]["new"] == "0", merge.log
    verdict = merge.step("Verdict")
    assert verdict.rc == 1, merge.log
    missing = "shard 2: no artifact shard-2, so nothing of its part was judged"
    for said in (f"shard 0: {database}", f"shard 1: {install}", missing):
        assert f"::error title=compaction-harness nightly::{said}" in verdict.output, merge.log
        assert f"- :x: {said}" in merge.summary
    assert "no new finding" in merge.summary  # and still red
    # a merge job that could not install says so too, after the shards
    broken = merge_job(tmp_path / "broken", {**env, "HARNESS_REF": "main"}, store, None, shards="failure")
    assert not broken.step("Replay").would_run and broken.step("Verdict").rc == 1, broken.log
    assert broken.step("Verdict").output.splitlines()[-1] == (
        "::error title=compaction-harness nightly::the harness was not installed, so nothing was replayed, merged or "
        "drawn: HARNESS_REF is 'main': set it to the full 40-hex commit of OWNER/compaction-harness to install (see the "
        "comment above it)")
    assert f"- :x: shard 1: {install}" in broken.summary


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.found += [value for name, value in attrs if name in ("href", "src") and value]


def test_every_link_of_the_night_s_report_lands_in_its_artifact(finding_night):
    """nightly.html links each finding to its corpus entry, and so do the shards' own pages the artifact holds:
    every relative link of every page of the uploaded `nightly` artifact resolves to a file inside it, wherever
    the artifact is unpacked. The merged page's links point into shards/, which the artifact holds too."""
    artifact = (finding_night.store / "nightly").resolve()
    page = artifact / "nightly" / "nightly.html"
    pages = sorted(artifact.rglob("*.html"))
    assert page in pages and len(pages) == 1 + len(finding_night.shards)
    corpus_links = 0
    for html in pages:
        links = _Links()
        links.feed(html.read_text(encoding="utf-8"))
        for link in links.found:
            target = urlsplit(link)
            if target.scheme in ("http", "https", "mailto") or not target.path:  # the web, or an anchor of the page
                continue
            where = f"{html.relative_to(artifact)}: {link}"
            assert not target.scheme and not target.netloc, f"{where} is not a relative link"
            resolved = (html.parent / unquote(target.path)).resolve()
            assert resolved.is_relative_to(artifact) and resolved.is_file(), f"{where}: not a file of the artifact"
            assert entries(resolved.parent)[resolved.name]["summarizer"] == FINDS  # a corpus entry, readable
            corpus_links += html == page
    assert corpus_links > 0  # the merged page does link its findings


def _variant(entry: dict, **changes) -> dict:
    """A corpus entry for another failure of the same transcript: merge and dedupe read entries, they judge none."""
    out = {**json.loads(json.dumps(entry)), **changes}
    out.pop("cause", None)
    return out


def _save(directory: Path, entry: dict) -> str:
    """Save `entry` under the name the harness gives it (a hash of the failure); return that name."""
    name = entry_name(entry_from_dict(entry))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(json.dumps(entry))
    return name


COUNTED = r"(\d+) (new finding\(s\)|unsure finding\(s\)|known failure\(s\) found smaller)"


def test_the_counts_of_a_night_agree(finding_night, tmp_path):
    """A night whose shards add entries of every sort: failures corpora/ had no entry of (new, red), one saved from
    a summarizer that varies and reproduced in none of its 3 fresh trials (unsure: proposed, not red), and a known
    failure found with a smaller transcript (replaced). The verdict, the job summary and the pull request print
    the same three counts, each the length of the list printed with it (not the entries added less those removed,
    which counted the unsure one as new, nor the files added, which counted the replaced one too)."""
    first = finding_night
    found = entries(first.merge.checkout / "corpora")  # the first night's entries, what its shards saved (deduped)
    name, entry = next((n, e) for n, e in sorted(found.items()) if not e.get("cause"))
    larger = json.loads(json.dumps(entry))
    larger["transcript"]["turns"].append({"role": "user", "text": "Thanks, that is all for today."})
    corpus = tmp_path / "corpora"
    known = _save(corpus, larger)  # in git: the same failure as `name`, one turn longer
    store = tmp_path / "artifacts"
    shutil.copytree(first.store, store)
    shard = store / "shard-0" / "corpus"
    without_trials = _variant(entry, invariant="literal-verbatim", fact_kind="artifact_reference")
    without_trials.pop("trials", None)  # as a summarizer that does not vary saves them: new
    with_trials = _variant(entry, invariant="threshold-exact", fact_kind="threshold")  # failed 3 of 3: new
    new = {n for n in found if n != name} | {_save(shard, with_trials), _save(shard, without_trials)}
    once = _variant(entry, invariant="tool-pairing", fact_kind="structure", trials={"failed": 0, "of": 3})
    unsure = _save(shard, once)
    env = {"SUMMARIZER": FINDS, "PROTOCOL": "messages", "SHARD_COUNT": "2"}
    merge = merge_job(tmp_path / "night", env, store, corpus)
    assert all(s.rc in (0, None) for s in merge.steps if not s.name.startswith("Verdict")), merge.log
    nightly = merge.checkout / "nightly"
    listed = {kind: (nightly / f"{kind}.txt").read_text().splitlines() for kind in ("new", "unsure", "replaced")}
    assert {kind: {line.split()[0] for line in lines} for kind, lines in listed.items()} == {
        "new": new, "unsure": {unsure}, "replaced": {name}}, merge.log
    assert listed["unsure"][0].endswith(": unsure (not reproduced in 3 trials; re-run with more --trials in RUN_ARGS)")
    assert listed["replaced"][0].endswith(f", replacing {known} ({len(larger['transcript']['turns'])} turns)")
    assert set(entries(merge.checkout / "corpora")) == new | {unsure, name}  # what the pull request proposes
    counts = {"new finding(s)": len(new), "unsure finding(s)": 1, "known failure(s) found smaller": 1}
    assert {k: merge.outputs["merge"][k] for k in ("new", "unsure", "replaced", "changed")} == {
        "new": str(len(new)), "unsure": "1", "replaced": "1",
        "changed": str(len(new) + 1 + 1 + 1)}  # added, and `known` removed
    verdict, body = merge.step("Verdict"), (nightly / "pull-request.md").read_text()
    for where, text in (("verdict", verdict.output), ("summary", merge.summary), ("pull request", body)):
        said: dict[str, set[int]] = {}
        for count, label in re.findall(COUNTED, text):
            said.setdefault(label, set()).add(int(count))
        assert said == {label: {n} for label, n in counts.items()}, (where, text)
        for kind, lines in listed.items():  # each list is printed whole under its count
            assert "\n".join(lines) in text or where == "verdict", (where, kind, text)
    assert verdict.rc == 1 and "no new finding" not in merge.summary
    assert merge.step("Propose").would_run


def test_an_unsure_finding_is_proposed_but_not_red(finding_night, tmp_path):
    """The only entry a night adds was reproduced in none of its fresh trials: the night is not red for it (a
    warning says why, and what to do), and the pull request proposes it as unsure."""
    first = finding_night
    found = entries(first.merge.checkout / "corpora")
    entry = next(e for _, e in sorted(found.items()) if not e.get("cause"))
    store = tmp_path / "artifacts"
    shutil.copytree(first.store, store)
    unsure = _save(store / "shard-1" / "corpus",
                   _variant(entry, invariant="tool-pairing", fact_kind="structure", trials={"failed": 0, "of": 5}))
    merge = merge_job(tmp_path / "night", {"SUMMARIZER": FINDS, "PROTOCOL": "messages", "SHARD_COUNT": "2"}, store,
                      first.merge.checkout / "corpora")
    assert (merge.outputs["merge"]["new"], merge.outputs["merge"]["unsure"]) == ("0", "1"), merge.log
    verdict = merge.step("Verdict")
    assert verdict.rc == 0, merge.log  # the known failures still failing on replay are a warning too
    assert "::warning title=compaction-harness nightly::1 unsure finding(s) (not red)" in verdict.output
    assert "no new finding" in merge.summary and unsure in merge.summary
    assert merge.step("Propose").would_run
    body = (merge.checkout / "nightly" / "pull-request.md").read_text()
    assert "### 1 unsure finding(s)" in body and f"{unsure}  tool-pairing (structure)" in body
    assert "not reproduced in 5 trials; re-run with more --trials in RUN_ARGS" in body


# --- the template's own install steps, for real --------------------------------------------------------------


def _site_packages_without(directory: Path, *, hidden: tuple[str, ...]) -> Path:
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


def _wheel_of_installed(name: str, wheelhouse: Path) -> Path:
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


def _fresh_venv(path: Path, dependencies: Path) -> Path:
    """A new virtualenv (with its own pip) that sees `dependencies` as installed, through a .pth file."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", str(path)], check=True, capture_output=True, timeout=120)
    # the setuptools ensurepip brings (3.11's, with no bdist_wheel of its own) would hide the project's
    subprocess.run([str(path / "bin" / "python"), "-m", "pip", "uninstall", "--yes", "--quiet", "setuptools"],
                   check=True, capture_output=True, timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(path)})
    site = next(path.glob("lib/python*/site-packages"))
    (site / "project-dependencies.pth").write_text(f"{dependencies}\n")
    return path


def _in(venv: Path, code: str) -> subprocess.CompletedProcess:
    """Python `code` run by the venv's interpreter, from the venv (not this checkout: its harness/ is importable)."""
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=venv, env={"PATH": "/usr/bin:/bin", "HOME": str(venv)})


# a team's own project, as `pip install -e .` finds it: its summarizer (it keeps the last message only) is
# importable once installed, and only then (src/ layout)
TEAM_PROJECT = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
                      '[project]\nname = "team-compact"\nversion = "0.1.0"\n\n'
                      '[tool.setuptools.packages.find]\nwhere = ["src"]\n',
    "src/team_compact/__init__.py": "def summarize(messages, budget):\n    return messages[-1:]\n",
}


def test_the_template_s_own_installs_run_a_night(tmp_path):
    """Each job's install step, as the template ships it, run with a real pip into a fresh virtualenv, and a night
    run with what it installed: the shard against a real redis-server at the template's DATABASE_URL.

    Nothing is downloaded: PIP_NO_INDEX; the harness's dependencies are this venv's, seen through a .pth file;
    build isolation is off (PIP_NO_BUILD_ISOLATION=0, pip's env spelling of --no-build-isolation); and
    `git+https://github.com/{HARNESS_REPO}@{HARNESS_REF}` is a clone of this repository's HEAD, through a git
    `url.<file URL>.insteadOf https://github.com/` in GIT_CONFIG_GLOBAL. The redis client is NOT among the
    dependencies it sees: pip finds it in a local wheelhouse only, so only the `[redis]` extra installs it, and
    a shard installed without the extra stops at exit 2 (what the first users of this template met).
    The redis-server listens on a free port of 127.0.0.1: the URL is the template's with that port.
    """
    from tests.test_sharing import RedisServer

    if shutil.which("git") is None:
        if os.environ.get("CI") or os.environ.get("COMPACTION_HARNESS_REQUIRE_ASSETS"):
            pytest.fail("git is not installed: pip installs the harness from a git URL")
        pytest.skip("git is not installed: pip installs the harness from a git URL")
    wf = workflow()
    server = RedisServer(tmp_path)
    try:
        dependencies = _site_packages_without(tmp_path / "dependencies", hidden=("redis",))
        wheelhouse = tmp_path / "wheelhouse"
        _wheel_of_installed("redis", wheelhouse)
        github = tmp_path / "github"  # https://github.com/OWNER/NAME is github/OWNER/NAME here
        subprocess.run(["git", "clone", "--quiet", "--bare", str(ROOT), str(github / wf["env"]["HARNESS_REPO"])],
                       check=True, capture_output=True, timeout=120)
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()
        gitconfig = tmp_path / "gitconfig"
        gitconfig.write_text(f'[url "{github.as_uri()}/"]\n\tinsteadOf = https://github.com/\n')
        template = urlsplit(wf["env"]["DATABASE_URL"])
        database = template._replace(netloc=f"{template.hostname}:{server.port}").geturl()
        env = {**SMALL, "SUMMARIZER": "team_compact:summarize", "PROTOCOL": "messages", "SUMMARIZER_ARGS": "",
               "SHARD_COUNT": "1", "EXAMPLES": "6", "MAX_TURNS": "80", "DATABASE_URL": database, "HARNESS_REF": head,
               "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_NO_BUILD_ISOLATION": "0",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_CONFIG_FILE": os.devnull,
               "GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1"}
        store = tmp_path / "artifacts"
        venvs = {job: _fresh_venv(tmp_path / f"venv-{job}", dependencies) for job in ("shard", "merge")}

        shard = run_job("shard", checkout(tmp_path / "shard", None, TEAM_PROJECT), tmp_path / "work-shard", env=env,
                        store=store, matrix={"shard": 0}, venv=venvs["shard"])
        install = shard.step("Install")
        assert install.rc == 0 and re.search(r"Successfully installed .*compaction-harness-", install.output), shard.log
        assert re.search(r"Successfully installed .*redis-", install.output), shard.log  # the extra, from wheelhouse/
        assert shard.outputs["run"]["status"] == "1" and shard.step("Verdict").rc == 0, shard.log
        harness = str(venvs["shard"] / "bin" / "compaction-harness")
        assert shard.argv and all(call["harness"] == harness for call in shard.argv)
        run = build_parser().parse_args(next(call["argv"] for call in shard.argv if call["argv"][0] == "run"))
        assert run.database == database and server.keys() > 0  # the shard kept its findings in the Redis
        where = _in(venvs["shard"], "import harness, redis, team_compact; print(harness.__file__, redis.__file__, "
                                    "team_compact.__file__)")
        assert where.returncode == 0, where.stderr
        site = str(next(venvs["shard"].glob("lib/python*/site-packages")))
        assert where.stdout.split() == [f"{site}/harness/__init__.py", f"{site}/redis/__init__.py",
                                        str(shard.checkout / "src" / "team_compact" / "__init__.py")]

        merge = run_job("merge", checkout(tmp_path / "merge", None, TEAM_PROJECT), tmp_path / "work-merge", env=env,
                        store=store, needs={"shard": {"result": "success"}}, venv=venvs["merge"])
        install = merge.step("Install")
        assert install.rc == 0 and re.search(r"Successfully installed .*compaction-harness-", install.output), merge.log
        assert "No module named 'redis'" in _in(venvs["merge"], "import redis").stderr  # the merge installs no extra
        assert all(call["harness"] == str(venvs["merge"] / "bin" / "compaction-harness") for call in merge.argv)
        assert all(s.rc in (0, None) for s in merge.steps if not s.name.startswith("Verdict")), merge.log
        assert merge.outputs["shards"]["problems"] == "0" and int(merge.outputs["merge"]["new"]) > 0, merge.log
        assert merge.step("Verdict").rc == 1 and "new finding(s)" in merge.step("Verdict").output  # red for those only
        assert (store / "nightly" / "nightly" / "nightly.html").is_file()
    finally:
        server.stop()
