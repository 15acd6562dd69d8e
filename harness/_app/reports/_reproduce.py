"""The command that reproduces a run, or one failure of it (``reproduce:`` in every report)."""

from __future__ import annotations

import shlex

from harness._base._dialects import DEFAULT_DIALECT
from harness._app.running._options import DEFAULT_MAX_WINDOWS, DEFAULT_TRIGGER
from harness._app.running._results import RunResult

__all__ = ["reproduce_command"]


def reproduce_command(result: RunResult, *, only: str | None = None, transcript_file: str | None = None) -> str:
    c = result.config
    entry = transcript_file is not None and transcript_file != c.transcript_file
    transcript_file = transcript_file or c.transcript_file
    if transcript_file is not None:
        parts = ["compaction-harness", "shrink", transcript_file, "--summarizer", c.calling.summarizer,
                 "--protocol", result.protocol]
        if not entry:  # a saved entry (fuzz's failures/) records the budget it fails at, and shrink uses it
            parts += ["--budget", str(c.judging.budget)]
    else:
        parts = ["compaction-harness", "run", "--summarizer", c.calling.summarizer, "--protocol", result.protocol,
                 "--seed", str(result.seed), "--examples", str(c.generation.examples), "--budget", str(c.judging.budget)]
        if c.generation.max_windows != DEFAULT_MAX_WINDOWS:
            parts += ["--max-windows", str(c.generation.max_windows)]
        if c.generation.max_turns is not None:
            parts += ["--max-turns", str(c.generation.max_turns)]
        if c.generation.shard is not None:
            parts += ["--shard", "/".join(map(str, c.generation.shard))]
    for option, value in (("--base-url", c.calling.base_url), ("--prompt", c.calling.prompt), ("--api-key-env", c.calling.api_key_env)):
        if value:
            parts += [option, value]
    if c.generation.background and transcript_file is None:
        parts += ["--background", c.generation.background]
    if transcript_file is None:  # a transcript file carries its own consumers
        for consumer in c.generation.consumers:
            parts += ["--consumer", f"{consumer.name}={','.join(consumer.requires)}"]
    if c.judging.trigger != DEFAULT_TRIGGER:
        parts += ["--trigger", f"{c.judging.trigger:g}"]
    if not c.judging.planned_cuts:
        parts.append("--no-planned-cuts")
    if not c.judging.tighten:
        parts.append("--no-tighten")
    if c.judging.dialect != DEFAULT_DIALECT:
        parts += ["--dialect", c.judging.dialect]
    if c.judging.may_vary:
        parts.append("--may-vary")
    if c.judging.token_counter:
        parts += ["--token-counter", c.judging.token_counter]
    for module in c.calling.extend:
        parts += ["--extend", module]
    if c.judging.rules:
        parts += ["--rules", c.judging.rules]
    if only or c.judging.only:
        parts += ["--only", only or ",".join(c.judging.only)]
    if c.judging.skip and not only:
        parts += ["--skip", ",".join(c.judging.skip)]
    if c.judging.unclear != "review":
        parts += ["--unclear", c.judging.unclear]
    return shlex.join(parts)

