"""The fuzzing process: atheris mutates byte strings, Hypothesis reads them as our strategies' choices.

Started by ``harness._app.fuzzing._fuzz`` through a small executable entry script (libFuzzer's ``-merge``
and ``-fork`` start the same command again, so it must be runnable as it is). The summarizer is
called in this process, so that atheris can see which of its branches an input reaches; the team's
modules are instrumented after loading (``team_modules``), which works for ``path/to/file.py`` specs
too, whose modules never pass through the import hooks.

Nothing found here is a libFuzzer crash: a violation, or the summarizer raising or returning garbage,
is written as a finding file (the first per invariant and fact kind, then any smaller one) and the
fuzzing goes on; the parent process shrinks, reports and saves what these files hold. A libFuzzer
crash therefore means something outside that contract: the summarizer killed or hung the process, or
the harness itself has a bug.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

import atheris
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import StopTest
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.providers import BytestringProvider, bits_to_bytes

from harness._base._codec import transcript_to_dict
from harness._base._files import write_atomic
from harness._app.calling._cache import CallCache
from harness._app.fuzzing._fuzz import CONFIG_ENV, FUZZ_CACHE_ENTRIES, config_from_json, fuzz_strategy
from harness._app.calling._loading import load_callable, load_module, team_modules
from harness._app.running._evaluate import evaluate
from harness._app.running._run import open_summarizer
from harness.oracles import select
from harness.strategies import expand, load_background

__all__ = ["main"]

#: Bytes of this process's counters record, rewritten in place after every execution (libFuzzer ends the
#: process with C's exit(), so nothing written at exit would ever run).
_STATS_BYTES = 256


class _Findings:
    """Finding files for the parent: one per (invariant, fact kind) or infra kind, replaced by smaller ones."""

    def __init__(self, directory: Path, *, max_calls: int | None):
        self._dir = directory
        self._max_calls = max_calls
        self._smallest: dict[str, int] = {}
        self._started = time.monotonic()
        self._stats = os.open(directory / f"stats-{os.getpid()}.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.executions = 0
        self.first: dict[str, int] | None = None  # calls and executions when the first finding was made

    def record(self, key: list, transcript, budget: int, calls: int, *, infra: dict | None = None) -> None:
        name = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]
        turns = len(transcript.turns)
        if name in self._smallest and self._smallest[name] <= turns:
            return
        self._smallest[name] = turns
        if self.first is None:
            self.first = {"calls": calls, "executions": self.executions}
        document = {"key": key, "infra": infra, "budget": budget, "calls": calls, "executions": self.executions,
                    "seconds": round(time.monotonic() - self._started, 3),
                    "transcript": transcript_to_dict(transcript)}
        write_atomic(self._dir / f"{os.getpid()}-{name}.json", json.dumps(document, ensure_ascii=False))

    def stats(self, calls: int, protocol: str) -> None:
        """Rewrite the fixed-size counters record in place: one small write, cheap enough for every execution."""
        record = json.dumps({"executions": self.executions, "calls": calls, "first": self.first,
                             "protocol": protocol})
        os.pwrite(self._stats, record.ljust(_STATS_BYTES).encode(), 0)

    def out_of_calls(self, calls: int) -> bool:
        return self._max_calls is not None and calls >= self._max_calls


class _SpanRecorder(BytestringProvider):
    """Hypothesis's reader of fuzzer bytes, noting where each choice's bytes are."""

    def __init__(self, conjecturedata, /, *, bytestring: bytes):
        super().__init__(conjecturedata, bytestring=bytestring)
        self.spans: list[tuple[int, int]] = []

    def _draw_bits(self, n: int) -> int:
        start = self.index
        value = super()._draw_bits(n)
        self.spans.append((start, bits_to_bytes(n)))
        return value


def _choice_mutator(strategy):
    """A libFuzzer mutator that changes whole choices: a byte flipped at random mostly lands in bytes no
    choice reads (a skeleton reads ~100 of them) or splits one choice's bytes; this one re-draws one to
    three choices the input does read and keeps every other choice, so an input that reached a branch
    keeps what got it there. A quarter of the time, and whenever the bytes cannot be read (a Hypothesis
    whose internals moved), libFuzzer's own mutations."""

    def spans(data: bytes) -> list[tuple[int, int]]:
        data_ = ConjectureData(random=None, provider=_SpanRecorder, provider_kw={"bytestring": data})
        try:
            data_.draw(strategy)
        except StopTest:
            pass
        return data_.provider.spans

    def mutate(data: bytes, max_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        if rng.random() < 0.25:
            return atheris.Mutate(data, max_size)
        try:
            read = spans(data)
        except Exception:  # noqa: BLE001 - an internal API changed, or the strategy rejected the bytes
            read = []
        if not read:
            return atheris.Mutate(data, max_size)
        used = read[-1][0] + read[-1][1]
        out = bytearray(data[:used]) + rng.randbytes(64)  # room for the choices a change adds
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            start, width = rng.choice(read)
            out[start:start + width] = rng.randbytes(width)
        return bytes(out[:max_size])

    return mutate


def _instrument(spec: str) -> int:
    """Instrument the team's code behind ``spec`` for coverage; the number of functions instrumented."""
    fn = load_callable(spec)
    modules = {m.__name__ for m in team_modules(fn)}
    count = 0
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", None) not in modules:
            continue
        for value in list(vars(module).values()):
            for function in _functions(value, module.__name__):
                atheris.instrument_func(function)
                count += 1
    return count


def _functions(value, module_name: str):
    """The plain Python functions ``value`` is or defines (a class's methods), if they were written in ``module_name``."""
    if isinstance(value, type):
        for member in vars(value).values():
            member = getattr(member, "__func__", member)  # staticmethod, classmethod
            yield from _functions(member, module_name)
    elif callable(value) and hasattr(value, "__code__") and getattr(value, "__module__", None) == module_name:
        yield value


def main(argv: list[str] | None = None) -> None:
    """The entry script's body: read the parent's configuration, then hand control to libFuzzer."""
    doc = json.loads(os.environ[CONFIG_ENV])
    config = config_from_json(doc["run"])
    findings = _Findings(Path(doc["findings"]), max_calls=doc.get("max_calls"))
    for module in config.calling.extend:  # the oracles and fact kinds they register, before any is selected
        load_module(module)
    instrumented = _instrument(config.calling.summarizer)
    print(f"INFO: compaction-harness instrumented {instrumented} functions of {config.calling.summarizer}", file=sys.stderr)
    summarizer = open_summarizer(config, cache=CallCache(max_entries=FUZZ_CACHE_ENTRIES))
    summarizer.__enter__()
    chosen = select(only=config.judging.only, skip=config.judging.skip)

    background = load_background(config.generation.background) if config.generation.background else None
    strategy = fuzz_strategy(config, background)

    @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def one_input(skeleton) -> None:
        transcript = expand(skeleton, background=background)
        ev = evaluate(transcript, summarizer, config.judging, chosen)
        findings.executions += 1
        calls = summarizer.calls
        for (invariant, kind) in ev.violations:
            findings.record([invariant, kind], transcript, config.judging.budget, calls)
        if ev.infra is not None:
            findings.record(["infra", ev.infra.kind], transcript, config.judging.budget, calls,
                            infra={"kind": ev.infra.kind, "message": str(ev.infra), "output": ev.infra.output})
        findings.stats(calls, summarizer.protocol)
        if findings.out_of_calls(calls):
            sys.stderr.flush()
            os._exit(0)  # --max-calls spent: libFuzzer has no option for it, and exit() would run its handlers

    atheris.Setup(list(sys.argv if argv is None else argv), one_input.hypothesis.fuzz_one_input,
                  custom_mutator=_choice_mutator(strategy))
    atheris.Fuzz()
