"""The pytest plugin: ``pytest --summarizer SPEC`` tests a summarizer and replays the corpus.

Kept thin: options and items here, the work in ``harness._app.running._run`` and
``harness._app.corpus._replay``, imported only when a summarizer is given (pytest loads
this module in every session of every project that installs us).

The property search is one run, but it is reported as one item per invariant (and one for the
summarizer's own failures, one for a run that could not judge every example), so ``-q`` and JUnit say
what broke. The run is made once per session: under xdist the first worker to need it makes it and the
others read it (``_shared_result``). Every item carries the ``compaction_harness`` marker.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
import secrets
import tempfile
from pathlib import Path

import pytest

_SEED = pytest.StashKey[int]()
_RESULT = pytest.StashKey[object]()
_PROFILES = ("dev", "ci", "nightly")
#: The items of the property search besides one per invariant: the summarizer answered every call, and
#: every example asked for was judged.
_ANSWERED, _COMPLETE = "summarizer-answered", "every-example-judged"
MARKER = "compaction_harness"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("compaction-harness", "compaction-harness: test a transcript summarizer")
    group.addoption("--summarizer", metavar="SPEC", default=None,
                    help="module:function or path/to/file.py:function; adds the harness's tests to the run")
    group.addoption("--summarizer-protocol", metavar="NAME", default=None,
                    help="messages or rich (default: the function's compaction_protocol attribute, else messages)")
    group.addoption("--summarizer-profile", metavar="NAME", default="dev",
                    help="dev (20 examples), ci (100, derandomized) or nightly (1000, random, with a database)")
    group.addoption("--summarizer-corpus", metavar="DIR", default="corpora",
                    help="corpus to replay, one test per entry (default: corpora)")
    group.addoption("--summarizer-save", action="store_true", help="save new minimal failures into the corpus")
    group.addoption("--summarizer-seed", metavar="S", default=None, help="run seed (default: random, shown in the header)")
    group.addoption("--summarizer-budget", metavar="TOKENS", default="2000", help="token budget (default 2000)")
    group.addoption("--summarizer-max-windows", metavar="W", default="12",
                    help="longest session, in windows of the budget up to the trigger (default 12)")
    group.addoption("--summarizer-max-turns", metavar="T", default=None, help="cap every session at T turns (default: "
                                                                               "no cap)")
    group.addoption("--summarizer-trigger", metavar="SHARE", default="0.8",
                    help="compact when the context passes this share of the budget (default 0.8)")
    group.addoption("--summarizer-runtime", action="store_true",
                    help="run sessions as a runtime does: compaction only at the trigger (no planned cuts), one "
                         "budget throughout (no tightening)")
    group.addoption("--summarizer-extend", metavar="MODULE", action="append", default=[],
                    help="import this module first, for the oracles it registers and the fact kinds it defines "
                         "(repeatable)")
    group.addoption("--summarizer-rules", metavar="SPEC", default=None,
                    help="module:OBJECT naming your own oracles.ProseRules for judging prose")
    group.addoption("--summarizer-fuzz", metavar="SECONDS", default=None,
                    help="also fuzz the summarizer's own code for this long (atheris; a Python summarizer), as one "
                         "more test beside the property search")
    group.addoption("--summarizer-unclear", metavar="MODE", default="review",
                    help="review (default): readings the oracles could not settle are listed as a warning and do not "
                         "fail; fail: they fail the property test")
    group.addoption("--summarizer-dialect", metavar="NAME", default="chat",
                    help="chat (default), anthropic or openai-responses: the message shape a messages summarizer is "
                         "called with and answers in")
    group.addoption("--summarizer-background", metavar="PATH", default=None,
                    help="your own session logs as the filler of generated transcripts: a file or folder of Claude "
                         "Code or Codex JSONL, Agents SDK items, Anthropic bodies, LangChain dumps or chat messages")


def _int_option(config: pytest.Config, name: str, minimum: int) -> int:
    raw = config.getoption(name)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"--{name.replace('_', '-')} {raw!r}: expected a whole number") from None
    if value < minimum:
        raise pytest.UsageError(f"--{name.replace('_', '-')} {value}: expected a number >= {minimum}")
    return value


def _share_option(config: pytest.Config, name: str) -> float:
    raw = config.getoption(name)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = -1.0
    if not 0 < value <= 1:
        raise pytest.UsageError(f"--{name.replace('_', '-')} {raw!r}: expected a share of the budget in (0, 1]")
    return value


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: an item of the compaction-harness plugin (run only them "
                                       f"with -m {MARKER})")
    spec = config.getoption("summarizer")
    if spec is None:
        return
    if config.getoption("summarizer_profile") not in _PROFILES:
        raise pytest.UsageError(f"--summarizer-profile {config.getoption('summarizer_profile')!r}: "
                                f"expected one of {', '.join(_PROFILES)}")
    # lazy: this plugin loads in every pytest session; the harness itself only when --summarizer is given
    from harness._app.calling._loading import load_callable, load_module, load_rules
    from harness._app.calling._summarizer import ADAPTERS
    from harness._app._profiles import profile
    from harness._base._errors import SpecError
    from harness._base._protocol import PROTOCOLS, resolve_protocol
    from harness._base._dialects import DIALECTS  # lazy: as above

    if config.getoption("summarizer_unclear") not in ("review", "fail"):
        raise pytest.UsageError(f"--summarizer-unclear {config.getoption('summarizer_unclear')!r}: "
                                "expected review or fail")
    if config.getoption("summarizer_protocol") not in (None, *PROTOCOLS):
        raise pytest.UsageError(f"--summarizer-protocol {config.getoption('summarizer_protocol')!r}: "
                                "expected messages or rich")
    if config.getoption("summarizer_dialect") not in DIALECTS:
        raise pytest.UsageError(f"--summarizer-dialect {config.getoption('summarizer_dialect')!r}: "
                                f"expected one of {', '.join(DIALECTS)}")
    for name, minimum in (("summarizer_budget", 1), ("summarizer_max_windows", 1)):
        _int_option(config, name, minimum)
    if config.getoption("summarizer_max_turns") is not None:
        _int_option(config, "summarizer_max_turns", 1)
    _share_option(config, "summarizer_trigger")
    if config.getoption("summarizer_fuzz") is not None:
        _int_option(config, "summarizer_fuzz", 1)
    try:  # fail at start-up, naming the option, rather than in every test
        for module in config.getoption("summarizer_extend"):
            load_module(module, option="--summarizer-extend")
        if not spec.startswith(tuple(ADAPTERS)):  # a Python function: its protocol is checked here, at start-up
            resolve_protocol(load_callable(spec), config.getoption("summarizer_protocol"),
                             option="--summarizer-protocol", spec=spec)
        if config.getoption("summarizer_rules"):
            load_rules(config.getoption("summarizer_rules"), option="--summarizer-rules")
    except SpecError as exc:
        raise pytest.UsageError(str(exc)) from None
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "compaction_harness_seed" in workerinput:
        seed = workerinput["compaction_harness_seed"]  # every xdist worker uses the controller's seed
    elif config.getoption("summarizer_seed") is not None:
        seed = _int_option(config, "summarizer_seed", 0)
    elif profile(config.getoption("summarizer_profile")).derandomize:
        seed = 0  # a derandomized profile (ci) runs the same examples every time
    else:
        seed = secrets.randbits(32)
    config.stash[_SEED] = seed


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # pytest-xdist: hand the run seed to each worker
    if _SEED in node.config.stash:
        node.workerinput["compaction_harness_seed"] = node.config.stash[_SEED]


def pytest_report_header(config: pytest.Config) -> str | None:
    if _SEED not in config.stash:
        return None
    return (f"compaction-harness: summarizer {config.getoption('summarizer')}, profile "
            f"{config.getoption('summarizer_profile')}, seed {config.stash[_SEED]} "
            f"(reproduce with --summarizer-seed {config.stash[_SEED]})")


class HarnessFailure(Exception):
    """A harness test failed; the message is the readable report."""


class _Collector(pytest.Collector):
    def collect(self):
        return []


class HarnessItem(pytest.Item):
    """One harness test: the property search, a bounded fuzzing session, or the replay of one corpus entry."""

    def __init__(self, *, entry_path: Path | None = None, fuzz: bool = False, invariant: str | None = None,
                 **kwargs):
        super().__init__(**kwargs)
        self.entry_path = entry_path
        self.fuzz = fuzz
        self.invariant = invariant  # the property search's item for this invariant (or _ANSWERED, _COMPLETE)
        self.add_marker(MARKER)

    def _seed(self) -> int:
        material = f"{self.config.stash[_SEED]}:{self.nodeid}".encode()
        return int(hashlib.sha256(material).hexdigest()[:8], 16)  # stable across processes, unlike hash()

    def runtest(self) -> None:
        if self.fuzz:
            self._fuzz()
        elif self.entry_path is None:
            self._property()
        else:
            self._replay()

    def _property(self) -> None:
        """This item's part of the one property search: its invariant's findings, each with its minimal
        transcript; or the summarizer's failures; or why not every example was judged."""
        # lazy: see pytest_configure
        from harness._app.reports._text import render_finding
        from harness._app.running._results import unjudged_oracles
        from oracles import select

        result = _shared_result(self)
        seed = f"seed {result.seed}, {result.examples_run} examples"
        if self.invariant == _ANSWERED:
            if result.infra_errors:
                lines = [f"example {e.example}: {e.kind}: {e.message}" for e in result.infra_errors[:5]]
                raise HarnessFailure(f"the summarizer failed in {len(result.infra_errors)} example(s) ({seed}):\n"
                                     + "\n".join(lines))
            return
        if self.invariant == _COMPLETE:
            if result.incomplete is not None:
                raise HarnessFailure(f"not every example was judged ({seed}): {result.incomplete}")
            if result.unclear_fails:
                first = result.unclear[0]
                raise HarnessFailure(f"{len(result.unclear)} unclear reading(s), failing under --summarizer-unclear "
                                     f"fail; first: {first.invariant} ({first.fact_kind}): {first.detail} | "
                                     f"sentence: {first.sentence}")
            if result.unclear:  # for review: pytest lists it in its warnings summary, the test passes
                first = result.unclear[0]
                self.warn(pytest.PytestWarning(
                    f"compaction-harness: {len(result.unclear)} unclear reading(s) for review (not violations; "
                    f"--summarizer-unclear fail makes them fail), first: {first.invariant} ({first.fact_kind}): "
                    f"{first.detail} | sentence: {first.sentence}"))
            return
        # A finding this invariant saw in the session only (``also_seen``) fails it too: the run saw it broken.
        found = [f for f in result.failures if self.invariant in (*f.invariants, *f.also_seen)]
        if found:
            blocks = "\n\n".join(render_finding(result, f) for f in found)
            raise HarnessFailure(f"{self.invariant}: {len(found)} finding(s) ({seed})\n\n{blocks}")
        unjudged = dict(unjudged_oracles(result.config, select()))
        if self.invariant in unjudged:
            pytest.skip(f"{self.invariant} judged nothing: {unjudged[self.invariant]}")

    def _fuzz(self) -> None:
        # lazy: see pytest_configure
        from harness._app.corpus._entries import CorpusSaver
        from harness._app.fuzzing._fuzz import DEFAULT_FUZZ_MAX_TURNS, FuzzConfig, fuzz
        from harness._app.reports._text import render_fuzz_text

        cfg = self.config
        config = self._run_config(seed=self._seed(), max_turns=DEFAULT_FUZZ_MAX_TURNS)
        corpus = cfg.getoption("summarizer_corpus")
        saver = CorpusSaver(corpus if cfg.getoption("summarizer_save") else None,
                            summarizer=config.calling.summarizer, budget=config.judging.budget,
                            dialect=config.judging.dialect)
        result = fuzz(FuzzConfig(config, max_time=float(cfg.getoption("summarizer_fuzz")), corpus=corpus),
                      on_failure=saver)
        if result.exit_code:
            raise HarnessFailure(render_fuzz_text(result))

    def property_run(self):
        """The property search this session's items report on (made once: see ``_shared_result``). Its seed
        is the run seed of the header, so the header and the reproduce line say the same."""
        # lazy: see pytest_configure
        from harness._app.corpus._entries import CorpusSaver
        from harness._app._profiles import profile
        from harness._app.running._run import run

        cfg = self.config
        chosen = profile(cfg.getoption("summarizer_profile"))
        database = chosen.database.path if getattr(chosen.database, "path", None) else None
        turns = cfg.getoption("summarizer_max_turns")
        config = self._run_config(examples=chosen.max_examples, seed=cfg.stash[_SEED],
                                  max_windows=int(cfg.getoption("summarizer_max_windows")),
                                  max_turns=None if turns is None else int(turns),
                                  database=str(database) if database else None,
                                  background=cfg.getoption("summarizer_background"))
        corpus = cfg.getoption("summarizer_corpus") if cfg.getoption("summarizer_save") else None
        saver = CorpusSaver(corpus, summarizer=config.calling.summarizer, budget=config.judging.budget,
                            dialect=config.judging.dialect)
        return run(config, on_failure=saver)

    def _replay(self) -> None:
        # lazy: see pytest_configure
        from harness._app.corpus._entries import load_entry
        from harness._app.corpus._replay import recorded_protocol, replay_entry
        from harness._app.running._run import open_summarizer

        entry = load_entry(self.entry_path)
        config = self._run_config()
        with open_summarizer(config, recorded_protocol=recorded_protocol(entry, config.calling.summarizer)
                             ) as summarizer:
            outcome = replay_entry(self.entry_path, entry, summarizer, config)
        if outcome.status == "not-reproduced":  # as replay says it: exit 0, but not proof of a fix
            pytest.skip(f"{self.entry_path.name}: {entry.invariant} {outcome.detail}")
        if outcome.status != "fixed":
            raise HarnessFailure(f"{self.entry_path.name}: {entry.invariant} ({entry.fact_kind or 'structure'}) "
                                 f"{outcome.status}: {outcome.detail}")

    def _run_config(self, **generation):
        """The run's options from the plugin's, built in one place for every item (replay judges each entry
        with its own budget)."""
        # lazy: see pytest_configure
        from harness._app.calling._options import CallOptions
        from harness._app.running._options import Generation, Judging, RunConfig

        cfg = self.config
        calling = CallOptions(cfg.getoption("summarizer"), protocol=cfg.getoption("summarizer_protocol"),
                              extend=tuple(cfg.getoption("summarizer_extend")))
        runtime = cfg.getoption("summarizer_runtime")
        judging = Judging(budget=int(cfg.getoption("summarizer_budget")), rules=cfg.getoption("summarizer_rules"),
                          unclear=cfg.getoption("summarizer_unclear"), dialect=cfg.getoption("summarizer_dialect"),
                          trigger=float(cfg.getoption("summarizer_trigger")), planned_cuts=not runtime,
                          tighten=not runtime)
        return RunConfig(calling, Generation(**generation), judging, quiet=True)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, HarnessFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.entry_path or Path("compaction-harness"), None, self.name


def _shared_result(item: HarnessItem):
    """The session's one property run: made by the first item that needs it; under xdist by the first
    worker, the others waiting on a lock and reading what it wrote (keyed by xdist's run id)."""
    config = item.config
    if _RESULT in config.stash:
        return config.stash[_RESULT]
    run_id = getattr(config, "workerinput", {}).get("testrunuid")
    if run_id is None:
        config.stash[_RESULT] = item.property_run()
        return config.stash[_RESULT]
    factory = getattr(config, "_tmp_path_factory", None)  # pytest's: a worker's basetemp is in the run's own
    shared = factory.getbasetemp().parent if factory is not None else Path(tempfile.gettempdir())
    saved = shared / f"compaction-harness-{run_id}.pickle"
    with open(saved.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if saved.exists():
            result = pickle.loads(saved.read_bytes())
        else:
            result = item.property_run()
            partial = saved.with_suffix(f".{os.getpid()}.tmp")
            partial.write_bytes(pickle.dumps(result))
            partial.replace(saved)
    config.stash[_RESULT] = result
    return result


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    if _SEED not in config.stash:
        return
    # lazy: see pytest_configure (the oracles of a team's --summarizer-extend are registered by then)
    from oracles import select

    parent = _Collector.from_parent(session, name="compaction-harness", nodeid="compaction-harness")
    for invariant in (*(o.id for o in select()), _ANSWERED, _COMPLETE):
        items.append(HarnessItem.from_parent(parent, name=f"property[{invariant}]", invariant=invariant))
    if config.getoption("summarizer_fuzz") is not None:
        items.append(HarnessItem.from_parent(parent, name="fuzz", fuzz=True))
    from harness._base._files import json_files  # lazy: as above

    corpus = Path(config.getoption("summarizer_corpus"))
    for path in json_files(corpus)[0] if corpus.is_dir() else ():  # what replay reads: no dot-file, no FIFO
        items.append(HarnessItem.from_parent(parent, name=f"replay[{path.stem}]", entry_path=path))
