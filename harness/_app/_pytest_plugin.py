"""The pytest plugin: ``pytest --summarizer SPEC`` tests a summarizer and replays the corpus.

Kept thin: options and items here, the work in ``harness._app.running._run`` and
``harness._app.corpus._replay``, imported only when a summarizer is given (pytest loads
this module in every session of every project that installs us).

The options are ``compaction-harness run``'s under the prefix (``--summarizer-jobs`` is ``--jobs``): a
number is checked with run's bounds and words, and an option not given is left out of the one ``RunConfig``
built at start-up, so its default is the records' (the command line's). Every item, the corpus replays
included, calls the summarizer with that config.

The property search is one run (made once per session: under xdist by the first worker to need it, the
others reading it, ``_shared_result``), reported as one item per invariant, plus one for the summarizer's
own failures and one for a run that could not judge every example. Items are named at collection, before
the run (``-k``, ``-m``, ``--collect-only`` and xdist's same-collection check must not call the summarizer),
so they are named by invariant, not by finding, and each shows only the findings of its name: a root cause
fails the item of its primary invariant, whose message gives each finding's fact kind; the other invariants
it broke are named in its text, and their items are skipped naming that item (unless a finding of their
own fails them). So one root cause is one failure, never a second item repeating another invariant's
finding, and no item of a broken invariant passes. Every item carries the ``compaction_harness`` marker.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
import secrets
import tempfile
from pathlib import Path
from typing import Any

import pytest

from harness._app._numbers import positive_number, share, whole_number

_SEED = pytest.StashKey[int]()
_RESULT = pytest.StashKey[object]()
_CONFIG = pytest.StashKey[object]()  # the RunConfig every item starts from (``_run_config``)
#: The items of the property search besides one per invariant: the summarizer answered every call, and
#: every example asked for was judged.
_ANSWERED, _COMPLETE = "summarizer-answered", "every-example-judged"
MARKER = "compaction_harness"

#: The options that are ``run``'s under the prefix, by pytest dest: the ``RunConfig.of`` keyword each sets.
_AS_RUN = {
    "summarizer_protocol": "protocol", "summarizer_timeout": "timeout", "summarizer_cache_dir": "cache_dir",
    "summarizer_version": "summarizer_version", "summarizer_max_result_chars": "max_result_chars",
    "summarizer_redact_env": "redact_env", "summarizer_extend": "extend", "summarizer_base_url": "base_url",
    "summarizer_prompt": "prompt", "summarizer_api_key_env": "api_key_env", "summarizer_retries": "retries",
    "summarizer_jobs": "jobs", "summarizer_max_windows": "max_windows", "summarizer_max_turns": "max_turns",
    "summarizer_background": "background", "summarizer_budget": "budget", "summarizer_trigger": "trigger",
    "summarizer_rules": "rules", "summarizer_unclear": "unclear", "summarizer_may_vary": "may_vary",
    "summarizer_dialect": "dialect", "summarizer_trials": "trials", "summarizer_max_time": "max_time",
    "summarizer_max_calls": "max_calls", "summarizer_max_tokens": "max_tokens",
    "summarizer_shrink_calls": "shrink_calls", "summarizer_stop_on_error": "stop_on_error",
}
#: Whole-number options and their least value; seconds; shares of the budget: the bounds of the ``run`` option
#: each mirrors, checked by the same functions (``harness._app._numbers``).
_WHOLE = {"summarizer_seed": 0, "summarizer_budget": 1, "summarizer_max_windows": 1, "summarizer_max_turns": 1,
          "summarizer_jobs": 1, "summarizer_trials": 0, "summarizer_retries": 0, "summarizer_max_result_chars": 1,
          "summarizer_max_calls": 1, "summarizer_max_tokens": 1, "summarizer_shrink_calls": 1}
_SECONDS = ("summarizer_timeout", "summarizer_max_time", "summarizer_fuzz")
_SHARES = ("summarizer_trigger",)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("compaction-harness", "compaction-harness: test a transcript summarizer")
    group.addoption("--summarizer", metavar="SPEC", default=None,
                    help="module:function, path/to/file.py:function, openai:MODEL, http://HOST:PORT/PATH or "
                         "cmd:COMMAND; adds the harness's tests to the run")
    group.addoption("--summarizer-protocol", metavar="NAME", default=None,
                    help="messages or rich (default: the function's compaction_protocol attribute, else messages)")
    group.addoption("--summarizer-profile", metavar="NAME", default="dev",
                    help="dev (20 examples), ci (100, derandomized) or nightly (1000, random, with a database)")
    group.addoption("--summarizer-corpus", metavar="DIR", default="corpora",
                    help="corpus to replay, one test per entry (default: corpora)")
    group.addoption("--summarizer-save", action="store_true", help="save new minimal failures into the corpus")
    group.addoption("--summarizer-seed", metavar="S", default=None,
                    help="run seed (default: random, shown in the header)")
    # How the summarizer is called (run's call options)
    group.addoption("--summarizer-jobs", metavar="K", default=None,
                    help="judge up to K examples at once, as run --jobs (worth it when the summarizer waits on a "
                         "model or a server; the findings are the same as with 1, the default)")
    group.addoption("--summarizer-timeout", metavar="SECONDS", default=None,
                    help="per-call timeout, as run --timeout (default 30)")
    group.addoption("--summarizer-inline", action="store_true", default=None,
                    help="call a Python summarizer in the pytest process, as run --inline (faster, but no timeout "
                         "and no kill on a hang)")
    group.addoption("--summarizer-cache-dir", metavar="DIR", default=None,
                    help="also keep the call cache on disk here, as run --cache-dir: a re-run pays no call twice")
    group.addoption("--summarizer-version", metavar="TEXT", default=None,
                    help="key the call cache by this instead of a hash of the summarizer's code, as run "
                         "--summarizer-version (a model name, a prompt's hash)")
    group.addoption("--summarizer-max-result-chars", metavar="N", default=None,
                    help="a larger result (as JSON) is a summarizer failure, as run --max-result-chars (default "
                         "2,000,000, or 64 per token of a budget over 31,250)")
    group.addoption("--summarizer-redact-env", metavar="NAME", action="append", default=None,
                    help="also redact this environment variable's value from everything written, as run "
                         "--redact-env (repeatable)")
    group.addoption("--summarizer-base-url", metavar="URL", default=None,
                    help="openai: the API's base URL, as run --base-url (default https://api.openai.com/v1)")
    group.addoption("--summarizer-prompt", metavar="FILE", default=None,
                    help="openai: your compaction prompt, as run --prompt (default: the bundled one)")
    group.addoption("--summarizer-api-key-env", metavar="NAME", default=None,
                    help="openai: the environment variable holding the API key, as run --api-key-env (default "
                         "OPENAI_API_KEY)")
    group.addoption("--summarizer-retries", metavar="N", default=None,
                    help="openai and http: retries of 429, 5xx, dropped connections and timeouts, as run --retries "
                         "(default 4)")
    group.addoption("--summarizer-extend", metavar="MODULE", action="append", default=None,
                    help="import this module first, for the oracles it registers and the fact kinds it defines "
                         "(repeatable)")
    # What is generated
    group.addoption("--summarizer-budget", metavar="TOKENS", default=None, help="token budget (default 2000)")
    group.addoption("--summarizer-max-windows", metavar="W", default=None,
                    help="longest session, in windows of the budget up to the trigger (default 12)")
    group.addoption("--summarizer-max-turns", metavar="T", default=None,
                    help="cap every session at T turns (default: no cap)")
    group.addoption("--summarizer-trigger", metavar="SHARE", default=None,
                    help="compact when the context passes this share of the budget, 0.9 or 90 followed by a "
                         "percent sign (default 0.8)")
    group.addoption("--summarizer-runtime", action="store_true",
                    help="run sessions as a runtime does: compaction only at the trigger (no planned cuts), one "
                         "budget throughout (no tightening)")
    group.addoption("--summarizer-background", metavar="PATH", default=None,
                    help="your own session logs as the filler of generated transcripts: a file or folder of Claude "
                         "Code or Codex JSONL, Agents SDK items, Anthropic bodies, LangChain dumps or chat messages")
    # How it is judged
    group.addoption("--summarizer-rules", metavar="SPEC", default=None,
                    help="module:OBJECT naming your own oracles.ProseRules for judging prose")
    group.addoption("--summarizer-unclear", metavar="MODE", default=None,
                    help="review (default): readings the oracles could not settle are listed as a warning and do not "
                         "fail; fail: they fail the property test")
    group.addoption("--summarizer-dialect", metavar="NAME", default=None,
                    help="chat (default), anthropic or openai-responses: the message shape a messages summarizer is "
                         "called with and answers in")
    group.addoption("--summarizer-may-vary", action="store_true", default=None,
                    help="the summarizer may answer one request differently each time (a model at temperature > 0), "
                         "as run --may-vary: the deterministic invariant then notes it instead of failing")
    group.addoption("--summarizer-trials", metavar="K", default=None,
                    help="re-ask each minimal failure (and each replayed entry saved as flaky) K times with the cache "
                         "bypassed, as run --trials; 0 also leaves deterministic unjudged (default 3)")
    # What the run may spend
    group.addoption("--summarizer-max-time", metavar="SECONDS", default=None,
                    help="stop the property search after this long and report what was found, as run --max-time "
                         "(property[every-example-judged] then fails)")
    group.addoption("--summarizer-max-calls", metavar="N", default=None,
                    help="new summarizer calls the property search may make, as run --max-calls")
    group.addoption("--summarizer-max-tokens", metavar="N", default=None,
                    help="prompt + completion tokens it may spend, where the summarizer reports usage, as run "
                         "--max-tokens")
    group.addoption("--summarizer-shrink-calls", metavar="N", default=None,
                    help="new calls shrinking one failure may make, as run --shrink-calls (default 400, "
                         "or 1200 for a summarizer answering in under 10 ms a call or 2 ms per 1,000 tokens)")
    group.addoption("--summarizer-stop-on-error", action="store_true", default=None,
                    help="stop at the first summarizer failure, as run --stop-on-error")
    group.addoption("--summarizer-fuzz", metavar="SECONDS", default=None,
                    help="also fuzz the summarizer's own code for this long (atheris; a Python summarizer), as one "
                         "more test beside the property search")


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _read(dest: str, raw: Any) -> Any:
    """An option's value as the run takes it (None when not given); a bad one is a usage error naming it."""
    if raw is None:
        return None
    try:  # run's own checks (harness._app._numbers), naming the plugin's option
        if dest in _WHOLE:
            return whole_number(_flag(dest), raw, _WHOLE[dest])
        if dest in _SECONDS:
            return positive_number(_flag(dest), raw)
        if dest in _SHARES:
            return share(_flag(dest), raw)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return tuple(raw) if isinstance(raw, list) else raw


def _given(config: pytest.Config) -> dict[str, Any]:
    """The ``run`` options given, as ``RunConfig.of`` keywords; those not given keep the records' defaults."""
    given = {keyword: value for dest, keyword in _AS_RUN.items()
             if (value := _read(dest, config.getoption(dest))) is not None}
    if config.getoption("summarizer_inline"):
        given["isolation"] = "inline"
    if config.getoption("summarizer_runtime"):
        given.update(planned_cuts=False, tighten=False)
    return given


def _choose(config: pytest.Config, dest: str, choices) -> None:
    value = config.getoption(dest)
    if value is not None and value not in choices:
        raise pytest.UsageError(f"{_flag(dest)} {value!r}: expected one of {', '.join(choices)}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: an item of the compaction-harness plugin (run only them "
                                       f"with -m {MARKER})")
    spec = config.getoption("summarizer")
    if spec is None:
        return
    # lazy: this plugin loads in every pytest session; the harness itself only when --summarizer is given
    from harness._app.calling._loading import load_callable, load_module, load_rules
    from harness._app.calling._summarizer import ADAPTERS
    from harness._app._profiles import PROFILE_NAMES, profile
    from harness._app.running._options import UNCLEAR_MODES, RunConfig
    from harness._base._dialects import DIALECTS  # lazy: as above
    from harness._base._errors import InvalidArgument, SpecError
    from harness._base._protocol import PROTOCOLS, resolve_protocol

    for dest, choices in (("summarizer_profile", PROFILE_NAMES), ("summarizer_unclear", UNCLEAR_MODES),
                          ("summarizer_protocol", PROTOCOLS), ("summarizer_dialect", DIALECTS)):
        _choose(config, dest, choices)
    prompt = config.getoption("summarizer_prompt")
    if prompt and not spec.startswith("openai:"):  # as run's --prompt: never silently ignored
        raise pytest.UsageError(f"--summarizer-prompt {prompt!r} is the prompt of openai: summarizers; {spec!r} is "
                                f"not one and would ignore it (a Python summarizer reads its own prompt in its code)")
    _read("summarizer_fuzz", config.getoption("summarizer_fuzz"))  # checked now; the fuzz item reads it
    try:
        config.stash[_CONFIG] = RunConfig.of(spec, quiet=True, **_given(config))
    except InvalidArgument as exc:
        raise pytest.UsageError(str(exc)) from None
    try:  # fail at start-up, naming the option, rather than in every test
        for module in config.getoption("summarizer_extend") or ():
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
        seed = _read("summarizer_seed", config.getoption("summarizer_seed"))
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


def _findings(invariant: str, failures) -> tuple[list, list]:
    """The findings an invariant's item shows (those whose primary invariant it is) and those it was broken
    by too (another invariant's, shown in that one's item): see the module docstring."""
    own = [f for f in failures if f.invariant == invariant]
    elsewhere = [f for f in failures if f.invariant != invariant and invariant in (*f.invariants, *f.also_seen)]
    return own, elsewhere


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
        """This item's part of the one property search: the findings of its invariant, each with its fact
        kind and minimal transcript; or the summarizer's failures; or why not every example was judged."""
        # lazy: see pytest_configure
        from harness._app.reports._text import render_finding
        from harness._app.running._results import unjudged_oracles
        from harness.oracles import select

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
        own, elsewhere = _findings(self.invariant, result.failures)
        if own:
            kinds = ", ".join(f.fact_kind or "structure" for f in own)
            blocks = "\n\n".join(render_finding(result, f) for f in own)
            raise HarnessFailure(f"{self.invariant} ({kinds}): {len(own)} finding(s) ({seed})\n\n{blocks}")
        if elsewhere:
            items = ", ".join(dict.fromkeys(f"property[{f.invariant}] ({f.fact_kind or 'structure'})"
                                            for f in elsewhere))
            pytest.skip(f"{self.invariant} was broken only by the root cause(s) of {items}, which name it and fail "
                        f"there: one failure per root cause")
        unjudged = dict(unjudged_oracles(result.config, select()))
        if self.invariant in unjudged:
            pytest.skip(f"{self.invariant} judged nothing: {unjudged[self.invariant]}")

    def _fuzz(self) -> None:
        # lazy: see pytest_configure
        from harness._app.corpus._entries import CorpusSaver
        from harness._app.fuzzing._fuzz import DEFAULT_FUZZ_MAX_TURNS, FuzzConfig, fuzz
        from harness._app.reports._text import render_fuzz_text

        cfg = self.config
        # As fuzz does: the session's length is the fuzzing's own, not --summarizer-max-time's
        config = self._run_config(seed=self._seed(), max_turns=DEFAULT_FUZZ_MAX_TURNS, max_time=None)
        corpus = cfg.getoption("summarizer_corpus")
        saver = CorpusSaver(corpus if cfg.getoption("summarizer_save") else None,
                            summarizer=config.calling.summarizer, budget=config.judging.budget,
                            dialect=config.judging.dialect)
        max_time = _read("summarizer_fuzz", cfg.getoption("summarizer_fuzz"))
        result = fuzz(FuzzConfig(config, max_time=max_time, corpus=corpus), on_failure=saver)
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
        config = self._run_config(examples=chosen.max_examples, seed=cfg.stash[_SEED],
                                  database=str(database) if database else None)
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
        """The run's options, the same for every item (built once by ``pytest_configure``): the property
        search, the fuzzing session and each replay call the summarizer alike (replay judges each entry with
        its own budget)."""
        return self.config.stash[_CONFIG].but(**generation)

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
    from harness.oracles import select

    parent = _Collector.from_parent(session, name="compaction-harness", nodeid="compaction-harness")
    for invariant in (*(o.id for o in select()), _ANSWERED, _COMPLETE):
        items.append(HarnessItem.from_parent(parent, name=f"property[{invariant}]", invariant=invariant))
    if config.getoption("summarizer_fuzz") is not None:
        items.append(HarnessItem.from_parent(parent, name="fuzz", fuzz=True))
    from harness._base._files import json_files  # lazy: as above

    corpus = Path(config.getoption("summarizer_corpus"))
    for path in json_files(corpus)[0] if corpus.is_dir() else ():  # what replay reads: no dot-file, no FIFO
        items.append(HarnessItem.from_parent(parent, name=f"replay[{path.stem}]", entry_path=path))
