"""One night over several machines (issue 35): ``--shard K/N`` splits a seed's examples, ``--database`` keeps
each finding's minimal transcript where the next run (of any shard) judges it first, and a real Redis
(Debian's redis-server, started here on 127.0.0.1) shares it between shards. A Redis that is down is exit 2
before any call; one that goes away during a run is a warning, never a lost finding."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness._app.cli._main import main
from harness._app.corpus._entries import load_corpus
from harness._app.reports._shards import merge_shards, merged_nights
from harness._app.running._database import open_database
from harness._app.running._options import RunConfig
from harness._app.running._run import database_namespace, run
from harness._base._errors import DatabaseError

TRIMMER = "harness.summarizers.naive:tail"
ROOT = Path(__file__).resolve().parent.parent
_REQUIRED = bool(os.environ.get("CI") or os.environ.get("COMPACTION_HARNESS_REQUIRE_ASSETS"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A redis-server of our own on 127.0.0.1, on a free port, stopped (or killed) by the test."""

    def __init__(self, directory: Path):
        binary = shutil.which("redis-server")
        if binary is None:
            if _REQUIRED:
                pytest.fail("redis-server is not installed (tests/assets/fetch_assets.py installs Debian's)")
            pytest.skip("redis-server is not installed (python tests/assets/fetch_assets.py installs it)")
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                         "--appendonly", "no", "--dir", str(directory)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self.stop()
        pytest.fail(f"redis-server did not answer on port {self.port}")

    def keys(self) -> int:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            s.sendall(b"DBSIZE\r\n")
            return int(s.recv(64).strip().lstrip(b":"))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path)
    yield server
    server.stop()


def _config(**options) -> RunConfig:
    return RunConfig.of(TRIMMER, **{"examples": 12, "seed": 3, "max_turns": 100, "quiet": True, "isolation": "inline",
                                    **options})


# -- shards -------------------------------------------------------------------------------------------

def test_two_shards_judge_exactly_the_unsharded_runs_examples_and_merge_into_its_report():
    whole = run(_config())
    one, two = run(_config(shard=(1, 2))), run(_config(shard=(2, 2)))
    assert (one.examples_run, two.examples_run) == (6, 6)
    interleaved = [n for pair in zip(one.turns, two.turns) for n in pair]
    assert interleaved == list(whole.turns)  # example i is judged by shard i mod 2, in the seed's order
    from harness._app.reports._document import report_dict

    documents = [report_dict(r) for r in (one, two)]
    assert [d["shard"] for d in documents] == [{"index": 1, "of": 2}, {"index": 2, "of": 2}]
    merged = merge_shards(documents)
    unsharded = report_dict(whole)
    assert merged["examples_run"] == unsharded["examples_run"]
    assert merged["survival"] == unsharded["survival"]
    key = lambda d: sorted(str(f["cause"] or (f["invariants"][0], f["evidence"])) for f in d["findings"])  # noqa: E731
    assert key(merged) == key(unsharded)
    assert "--shard 2/2" in documents[1]["violations"][0]["reproduce"]


def test_report_puts_the_shards_of_one_night_together(tmp_path, capsys):
    paths = []
    for k in (1, 2):
        path = tmp_path / f"shard-{k}.json"
        assert main(["run", "--summarizer", TRIMMER, "--examples", "8", "--seed", "4", "--max-turns", "80", "--inline",
                     "--quiet", "--shard", f"{k}/2", "--report-json", str(path)]) == 1
        paths.append(str(path))
    capsys.readouterr()
    assert main(["report", *paths, "-o", str(tmp_path / "night.html")]) == 0
    assert "1 report(s)" in capsys.readouterr().out  # one night, not two nights compared
    (source, document), = merged_nights([(p, json.loads(Path(p).read_text())) for p in paths])
    assert source.endswith("(+ 1 shards)") and document["examples_run"] == 8
    assert len({f["cause"] or str(f["invariants"]) for f in document["findings"]}) == len(document["findings"])


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0"])
def test_a_bad_shard_is_a_usage_error(text, capsys):
    assert main(["run", "--shard", text, "--examples", "1"]) == 2
    assert "--shard expects K/N" in capsys.readouterr().err


# -- the database: a directory, then a real Redis --------------------------------------------------------

def test_a_directory_database_judges_saved_failures_first_and_forgets_fixed_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = run(_config(database="db"))
    assert first.failures and first.replayed == 0
    again = run(_config(database="db", seed=99))  # other examples: what it sees first is what was saved
    assert again.replayed == len(first.failures) and again.first_failure_calls <= 10
    shared = open_database("db", namespace=database_namespace(_config()))
    assert len(shared.failures()) >= len(first.failures)
    fixed = run(RunConfig.of("harness.summarizers.identity:summarize", examples=2, seed=3, max_turns=60, quiet=True,
                             isolation="inline", database="db", skip=("budget-respected",)))
    assert fixed.replayed == 0  # another summarizer's saved failures are never its own


def test_a_saved_failure_that_held_once_is_forgotten_only_for_a_summarizer_that_does_not_vary(tmp_path, monkeypatch):
    """A varying summarizer holding in one session proves nothing: its saved failure stays in the database."""
    monkeypatch.chdir(tmp_path)
    module = tmp_path / "sometimes.py"
    module.write_text("import os\nfrom harness.summarizers import naive, identity\n\n"
                      "def summarize(messages, budget):\n"
                      "    fn = identity.summarize if os.environ.get('HOLDS') else naive.tail\n"
                      "    return fn(messages, budget)\n")
    spec = f"{module}:summarize"
    options = {"examples": 6, "seed": 3, "max_turns": 100, "quiet": True, "isolation": "inline", "database": "db",
               "skip": ("budget-respected",)}
    first = run(RunConfig.of(spec, **options))
    assert first.failures
    shared = open_database("db", namespace=database_namespace(RunConfig.of(spec, **options)))
    saved = len(shared.failures())
    monkeypatch.setenv("HOLDS", "1")
    run(RunConfig.of(spec, **options, may_vary=True))
    assert len(shared.failures()) == saved  # held once: kept
    run(RunConfig.of(spec, **options))
    assert len(shared.failures()) < saved  # a summarizer that does not vary and holds: fixed, forgotten


def test_a_failure_one_shard_found_is_seen_by_the_others_next_run_within_10_calls(tmp_path, redis_server,
                                                                                  monkeypatch):
    machines = [tmp_path / "machine-1", tmp_path / "machine-2"]  # each its own local database and corpus
    for m in machines:
        m.mkdir()
    reports = []
    for n, machine in enumerate(machines, 1):
        monkeypatch.chdir(machine)
        code = main(["run", "--summarizer", TRIMMER, "--examples", "12", "--seed", "3", "--max-turns", "100",
                     "--inline", "--quiet", "--shard", f"{n}/2", "--database", redis_server.url,
                     "--corpus", "corpus", "--report-json", "r.json"])
        assert code == 1
        reports.append(json.loads((machine / "r.json").read_text()))
    assert reports[0]["replayed"] == 0
    assert reports[1]["replayed"] >= 1 and reports[1]["first_failure_calls"] <= 10
    assert redis_server.keys() >= 1
    # A read-only machine learns from it and writes nothing.
    before = redis_server.keys()
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--summarizer", TRIMMER, "--examples", "4", "--seed", "8", "--max-turns", "100",
                 "--inline", "--quiet", "--database", redis_server.url, "--database-readonly"]) == 1
    assert redis_server.keys() == before


def test_a_dead_redis_is_exit_2_before_any_call(tmp_path, capsys):
    marker = tmp_path / "called"
    module = tmp_path / "counting.py"
    module.write_text(f"def summarize(messages, budget):\n    open({str(marker)!r}, 'a').write('x')\n"
                      f"    return messages[-2:]\n")
    url = f"redis://127.0.0.1:{_free_port()}/0"  # nothing listens there
    code = main(["run", "--summarizer", f"{module}:summarize", "--examples", "3", "--inline", "--database", url])
    assert code == 2 and not marker.exists()
    assert f"DatabaseError: --database {url}: Redis did not answer" in capsys.readouterr().err
    with pytest.raises(DatabaseError, match="redis://HOST:PORT/DB"):
        open_database("redis://127.0.0.1:notaport/0", namespace="x")


_STOPS_REDIS = '''
import os, signal
calls = 0

def summarize(messages, budget):
    """Keeps the newest two messages; on its 5th call the shared Redis dies."""
    global calls
    calls += 1
    if calls == 5:
        os.kill(int(os.environ["SHARED_REDIS_PID"]), signal.SIGKILL)
    return messages[-2:]
'''


def test_redis_stopped_mid_run_is_a_warning_and_no_finding_is_lost(tmp_path, redis_server, monkeypatch):
    module = tmp_path / "stops_redis.py"
    module.write_text(_STOPS_REDIS)
    monkeypatch.setenv("SHARED_REDIS_PID", str(redis_server.process.pid))
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--summarizer", f"{module}:summarize", "--examples", "10", "--seed", "2", "--max-turns", "80",
                 "--inline", "--quiet", "--database", redis_server.url, "--corpus", "corpus", "--report-json", "r.json"])
    report = json.loads((tmp_path / "r.json").read_text())
    assert code == 1 and report["findings"]
    assert any(w.startswith(f"--database {redis_server.url}: ") and "local database only" in w
               for w in report["warnings"])
    assert len(load_corpus(tmp_path / "corpus").entries) == len(report["findings"])  # the record is whole
    local = open_database(".hypothesis/compaction-harness",
                          namespace=database_namespace(RunConfig.of(f"{module}:summarize")))
    assert len(local.failures()) == len(report["findings"])  # and the local database kept them too


def test_a_shard_killed_mid_run_loses_nothing_already_saved(tmp_path, redis_server):
    """Shard 1 runs to its end; shard 2 is killed (SIGKILL) while it works. What shard 1 saved (corpus, Redis) is
    whole, shard 2's corpus holds no half-written entry, and its rerun sees shard 1's findings first."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    common = [sys.executable, "-m", "harness", "run", "--summarizer", TRIMMER, "--examples", "16", "--seed", "5",
              "--max-turns", "200", "--database", redis_server.url, "--quiet"]
    one = subprocess.run([*common, "--shard", "1/2", "--corpus", str(tmp_path / "c1")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert one.returncode == 1, one.stderr
    saved = redis_server.keys()
    killed = subprocess.Popen([*common, "--shard", "2/2", "--corpus", str(tmp_path / "c2")], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(3)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    assert len(load_corpus(tmp_path / "c1").entries) >= 1
    if (tmp_path / "c2").exists():
        assert load_corpus(tmp_path / "c2").errors == ()  # atomic writes: no half an entry
    assert redis_server.keys() >= saved
    rerun = subprocess.run([*common, "--shard", "2/2", "--corpus", str(tmp_path / "c2"), "--report-json",
                            str(tmp_path / "r2.json")], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)
    assert rerun.returncode == 1, rerun.stderr
    report = json.loads((tmp_path / "r2.json").read_text())
    assert report["replayed"] >= 1 and report["first_failure_calls"] <= 10
