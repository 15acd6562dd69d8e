"""Each command of the command line: from parsed options to the library's work, its report and its exit code.

A command takes the parsed ``args`` (read, never changed) and the ``Outputs`` checked before it started,
and returns an ``ExitCode``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
import shlex
import sys
from pathlib import Path

from harness._app.cli._init import init_command
from harness._base._codec import transcript_from_dict
from harness._base._errors import HarnessError, InvalidArgument, PathError, SchemaError
from harness._base._files import output_dir, read_json_file
from harness._app._compare import compare, comparison_dict, render_comparison_text
from harness._app._outcome import ExitCode, StopReason
from harness._app.calling._options import CallOptions
from harness._app.calling._redact import Redactor
from harness._app.corpus._entries import (Corpus, CorpusSaver, corpus_changes, dedupe_corpus, entry_from_dict,
                                          load_corpus, load_entry, merge_corpora, save_entry)
from harness._app.corpus._replay import Replayer, replay_corpus
from harness._app.cli._outputs import Outputs, report_problems
from harness._app.fuzzing._fuzz import DEFAULT_FUZZ_TIME, FuzzConfig, fuzz, merge_inputs
from harness._app.judging._audit import audit_files
from harness._app.reports._audit import audit_report
from harness._app.reports._document import fuzz_report_dict, read_report, report_dict
from harness._app.reports._gate import gate_outputs, judge_gate, read_baseline, replay_rows, run_defaults
from harness._app.reports._html import block_id, comparison_html, render_html
from harness._app.reports._sarif import annotations, parse_source, sarif_document, summarizer_source
from harness._app.reports._step_summary import gate_text, step_summary
from harness._app.reports._junit import compare_junit, replay_junit, run_junit
from harness._app.reports._text import printable, render_fuzz_text, render_text
from harness._app.reports._shards import merged_nights
from harness._app.reports._trend import nightly, trend_text
from harness._app.calling._summarizer import ADAPTERS
from harness._app.running._estimate import estimate
from harness._app.running._evaluate import prose_rules, token_counter
from harness._app.running._options import DEFAULT_BUDGET, Generation, Judging, Limits, RunConfig
from harness._app.running._run import run, shrink_transcript
from harness.oracles import registered, select
from harness.strategies import load_background

__all__ = ["COMMANDS", "check_prompt"]


def run_config(args, *, summarizer: str | None = None, prompt: str | None = None, budget: int | None = None,
               transcript_file: str | None = None, **generation) -> RunConfig:
    """A run's options from the parsed ones, built once (the protocol is resolved by the adapter); the
    keywords override what ``args`` says (``compare``'s sides, ``shrink``'s entry budget)."""
    calling = CallOptions(summarizer or args.summarizer, protocol=args.protocol, timeout=args.timeout,
                          isolation="inline" if args.inline else "process", cache_dir=args.cache_dir,
                          summarizer_version=args.summarizer_version, max_result_chars=args.max_result_chars,
                          redact_env=tuple(args.redact_env), extend=tuple(args.extend), base_url=args.base_url,
                          prompt=prompt if summarizer else args.prompt, api_key_env=args.api_key_env,
                          retries=args.retries, jobs=generation.pop("jobs", 1))
    if args.command in ("replay", "corpus"):  # replay (and dedupe) judge each entry with its own budget and oracle
        judging, limits = Judging(rules=args.rules, may_vary=args.may_vary), Limits(trials=args.trials)
    else:
        budget = budget if budget is not None else args.budget
        judging = Judging(budget=DEFAULT_BUDGET if budget is None else budget, only=args.only, skip=args.skip,
                          token_counter=args.token_counter, rules=args.rules, unclear=args.unclear,
                          may_vary=args.may_vary, dialect=args.dialect, trigger=args.trigger,
                          planned_cuts=args.planned_cuts, tighten=args.tighten)
        limits = Limits(max_time=args.max_time, max_calls=args.max_calls, max_tokens=args.max_tokens,
                        shrink_calls=args.shrink_calls, trials=args.trials, stop_on_error=args.stop_on_error)
    return RunConfig(calling, Generation(**generation), judging, limits, quiet=args.quiet,
                     transcript_file=transcript_file)


def _finish(args, outputs: Outputs, document: dict, text: str, exit_code: ExitCode,
            saver: CorpusSaver | None = None) -> ExitCode:
    """Write the report files, then print the report: a print that fails (a closed pipe) never leaves last
    night's files in place of tonight's. A failed write is reported without masking the verdict."""
    problems = _write_reports(document, args, outputs)
    print(text)
    if saver is not None and saver.directory is not None:
        print(f"corpus {saver.directory}: {saver.saved} new entr{'y' if saver.saved == 1 else 'ies'}")
    return report_problems((list(saver.errors) if saver is not None else []) + problems, exit_code)


def _write_reports(document: dict, args, outputs: Outputs) -> list[str]:
    """Write the JSON, HTML and JUnit reports asked for, each from ``document``."""
    return outputs.write({
        "report_json": lambda: json.dumps(document, indent=2, ensure_ascii=False) + "\n",
        "report_html": lambda: render_html([("this run", document)], threshold=args.survival_threshold,
                                           html_path=outputs.get("report_html")),
        "junit_xml": lambda: run_junit(document, oracles=document.get("oracles", [])),
    })


def _run(args, outputs: Outputs) -> ExitCode:
    seed = args.seed if args.seed is not None else secrets.randbits(32)  # one seed for the estimate and the run
    config = run_config(args, examples=args.examples, seed=seed, max_turns=args.max_turns,
                        max_windows=args.max_windows, background=args.background, jobs=args.jobs, consumers=tuple(args.consumer),
                        shard=args.shard, database=args.database, database_readonly=args.database_readonly)
    if args.estimate or (not args.quiet and config.calling.summarizer.startswith(tuple(ADAPTERS))):
        background = load_background(args.background) if args.background else None
        print(estimate(config, background, seed).describe(), file=sys.stdout if args.estimate else sys.stderr)
        if args.estimate:
            return ExitCode.OK
    saver = CorpusSaver(args.corpus, summarizer=config.calling.summarizer, budget=config.judging.budget,
                        dialect=config.judging.dialect)
    result = dataclasses.replace(run(config, on_failure=saver), corpus_files=saver.files)
    text = render_text(result, show_context=args.show_context)
    return _finish(args, outputs, report_dict(result), text, result.exit_code, saver)


def _fuzz(args, outputs: Outputs) -> ExitCode:
    config = run_config(args, seed=args.seed, max_turns=args.max_turns, background=args.background)
    max_time = args.max_time if args.max_time is not None else (None if args.runs else DEFAULT_FUZZ_TIME)
    fuzz_config = FuzzConfig(config.but(max_time=None), max_time=max_time, runs=args.runs,
                             jobs=args.jobs, directory=args.fuzz_dir, corpus=args.corpus,
                             libfuzzer_args=tuple(args.libfuzzer))
    if args.merge:
        before, after = merge_inputs(fuzz_config, args.merge)
        print(f"merged {', '.join(args.merge)} into the fuzz inputs: {before} -> {after} inputs "
              f"({after - before} reach coverage the others did not)")
        return ExitCode.OK
    saver = CorpusSaver(args.corpus, summarizer=config.calling.summarizer, budget=config.judging.budget,
                        dialect=config.judging.dialect)
    result = fuzz(fuzz_config, on_failure=saver)
    result = dataclasses.replace(result, run=dataclasses.replace(result.run, corpus_files=saver.files))
    text = render_fuzz_text(result, show_context=args.show_context)
    return _finish(args, outputs, fuzz_report_dict(result), text, result.exit_code, saver)


def _replay(args, outputs: Outputs) -> ExitCode:
    if Path(args.directory).is_file():
        raise PathError(f"replay {args.directory!r}: expected a corpus directory, got a file; to judge and minimize "
                        f"the transcript of one file, run: compaction-harness shrink {shlex.quote(args.directory)} "
                        f"--summarizer {shlex.quote(args.summarizer)}")
    replay = replay_corpus(args.directory, run_config(args))
    if not replay.corpus.entries and not replay.corpus.errors and not args.allow_empty:
        raise PathError(f"corpus directory {args.directory!r} holds no entries (*.json): nothing was replayed "
                        f"(pass --allow-empty if that is expected)")
    marks = {"failing": "✗ still failing", "fixed": "✓ fixed", "infra": "! summarizer failed",
             "unjudged": "! not judged", "not-reproduced": "? not reproduced"}
    for o in replay.outcomes:
        mark = marks[o.status] + (f" ({o.trials[0]}/{o.trials[1]})" if o.trials and o.status == "failing" else "")
        print(f"{mark:18} {o.path.name}  {printable(o.entry.invariant)} "
              f"({printable(o.entry.fact_kind or 'structure')}), {len(o.entry.transcript.turns)} turns: "
              f"{printable(o.detail)}")
    _print_unreadable(replay.corpus)
    counts = {s: sum(o.status == s for o in replay.outcomes) for s in marks}
    print(f"{len(replay.outcomes)} replayed: {counts['failing']} still failing, {counts['fixed']} fixed, "
          f"{counts['infra']} summarizer failures, {counts['unjudged']} not judged, "
          f"{len(replay.corpus.errors)} unreadable"
          + (f", {counts['not-reproduced']} flaky entries not reproduced" if counts['not-reproduced'] else "")
          + (f" · interrupted after {len(replay.outcomes)} of {len(replay.corpus.entries)}"
             if replay.interrupted else ""))
    problems = outputs.write({"junit_xml": lambda: replay_junit(replay, args.summarizer)})
    return report_problems(problems, replay.exit_code)


def _compare(args, outputs: Outputs) -> ExitCode:
    specs = args.summarizer
    if len(specs) < 2:
        raise InvalidArgument("compare needs --summarizer at least twice: the baseline, then what to compare with it")
    prompts = [p or None for p in args.prompt or [None]]  # '' is no prompt: the default one for openai:
    if len(prompts) not in (1, len(specs)):
        raise InvalidArgument(f"--prompt given {len(prompts)} times for {len(specs)} summarizers: give it once (for "
                              f"all) or once per --summarizer, in the same order")
    prompts = prompts * len(specs) if len(prompts) == 1 else prompts
    prompts = [p if spec.startswith("openai:") else None for spec, p in zip(specs, prompts)]
    sides = list(zip(specs, prompts))
    file_folders = {os.path.dirname(os.path.realpath(spec.rpartition(":")[0])) for spec in specs
                    if spec.rpartition(":")[0].endswith(".py")}
    if args.inline and len(file_folders) > 1:
        raise InvalidArgument("--inline with summarizer files from different folders: they would share one "
                              "interpreter, and a module one imports by name (a helper beside it) would be the other's; "
                              "leave --inline out so each side runs in its own worker")
    twice = next((side for n, side in enumerate(sides) if side in sides[:n]), None)
    if twice is not None:
        raise InvalidArgument(f"--summarizer {twice[0]}" + (f" with --prompt {twice[1]}" if twice[1] else "")
                              + " is given twice: comparing a summarizer with itself compares nothing (for a prompt "
                                "change, give --prompt once per --summarizer)")
    if args.corpus is not None and not os.path.isdir(args.corpus):
        raise PathError(f"--corpus {args.corpus!r}: no such directory (compare replays an existing corpus)")
    configs = [run_config(args, summarizer=spec, prompt=prompt, examples=args.examples, seed=args.seed,
                          max_turns=args.max_turns, max_windows=args.max_windows, jobs=args.jobs, shard=args.shard,
                          background=args.background
                          ).but(summarizer_version=_side_version(args.summarizer_version, spec, prompt, specs))
               for spec, prompt in sides]
    labels = [f"{spec} --prompt {prompt}" if len(set(prompts)) > 1 else spec for spec, prompt in sides]
    comparison = compare(configs, labels=labels, corpus=args.corpus, settle=args.settle_trials,
                         on_side=None if args.quiet else
                         lambda i, label: print(f"[{i}/{len(configs)}] running {printable(label)}", file=sys.stderr))
    document = comparison_dict(comparison)
    problems = outputs.write({
        "report_json": lambda: json.dumps(document, indent=2, ensure_ascii=False) + "\n",
        "report_html": lambda: _compare_page(document, args.survival_threshold),
        "junit_xml": lambda: compare_junit(document),
    })
    print(printable(render_comparison_text(comparison)))
    return report_problems(problems, comparison.exit_code)


def _gate(args, outputs: Outputs) -> ExitCode:
    """Run, replay ``--corpus``, and judge both against ``--baseline`` (``harness._app.reports._gate``): exit 0
    unless what ``--fail-on`` names was found; the step summary, SARIF and annotations say what and where."""
    baseline = read_baseline(args.baseline, allow_missing=args.allow_missing_baseline)
    if args.corpus is not None and not os.path.isdir(args.corpus):
        raise PathError(f"--corpus {args.corpus!r}: no such directory (gate replays an existing corpus; leave --corpus "
                        f"out to replay none)")
    source = parse_source(args.source, root=Path.cwd()) if args.source is not None else None
    examples, seed, max_time = run_defaults(args.mode, examples=args.examples, seed=args.seed, max_time=args.max_time,
                                            baseline=baseline)
    config = run_config(args, examples=examples, seed=seed, max_turns=args.max_turns, max_windows=args.max_windows,
                        background=args.background, jobs=args.jobs, shard=args.shard, database=args.database,
                        database_readonly=args.database_readonly).but(max_time=max_time)
    saver = CorpusSaver(args.save, summarizer=config.calling.summarizer, budget=config.judging.budget,
                        dialect=config.judging.dialect)
    try:
        result = dataclasses.replace(run(config, on_failure=saver), corpus_files=saver.files)
        interrupted = result.incomplete is not None and result.incomplete.reason is StopReason.INTERRUPTED
        replay = replay_corpus(args.corpus, config) if args.corpus is not None and not interrupted else None
    except HarnessError as exc:  # said by the command line too; the summary says it where the team looks
        said = Redactor.from_environ(extra_names=tuple(args.redact_env)).redact(f"{type(exc).__name__}: {exc}")
        outputs.append({"step_summary": f"## compaction-harness · {printable(args.summarizer)}\n\n:x: **the harness "
                                        f"could not run** (exit 2): {printable(said)}\n",
                        "github_output": "verdict=fail\nexit-code=2\n"})
        raise
    document = report_dict(result)
    if replay is not None:
        document["corpus_replay"] = replay_rows(replay)
    gate = judge_gate(document, baseline=baseline, fail_on=args.fail_on, mode=args.mode, corpus=args.corpus,
                      missing=tuple(f for f in args.baseline if not os.path.exists(f)),
                      unreadable=tuple(str(e) for e in replay.corpus.errors) if replay is not None else ())
    reports = [*([baseline] if baseline else []), ("this run", document)]
    source = source or summarizer_source(config.calling.summarizer, root=Path.cwd())
    problems = list(saver.errors) + outputs.write({
        "report_json": lambda: json.dumps(document, indent=2, ensure_ascii=False) + "\n",
        "report_html": lambda: render_html(reports, threshold=args.survival_threshold, html_path=outputs.get("report_html"),
                                           trend=gate.trend if baseline else None,
                                           title=f"compaction-harness {args.mode}: {config.calling.summarizer}"),
        "junit_xml": lambda: run_junit(document, oracles=document.get("oracles", [])),
        "sarif": lambda: json.dumps(sarif_document(gate, document, source), indent=2, ensure_ascii=False) + "\n",
    })
    print(render_text(result, show_context=args.show_context))
    print(gate_text(gate))
    for line in annotations(gate, document, source) if args.annotations else ():
        print(line)
    files = {name: getattr(args, name) for name in ("report_html", "report_json", "junit_xml", "sarif")}  # as given
    files.update(corpus=args.save, replayed=args.corpus)
    run_url = "/".join(os.environ.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY")) + \
        f"/actions/runs/{os.environ['GITHUB_RUN_ID']}" if os.environ.get("GITHUB_RUN_ID") else None
    problems += outputs.append({
        "step_summary": step_summary(gate, document, files=files, run_url=run_url, anchor=lambda f: block_id(
            f"run{len(reports)}", f.violation) if f.violation is not None else None),
        "github_output": "".join(f"{k}={v}\n" for k, v in gate_outputs(gate, document, files, source).items())})
    return report_problems(problems, gate.exit_code)


def _compare_page(document: dict, threshold: float, *, title: str | None = None) -> str:
    """The HTML of a ``compare`` document: the comparison, then each side's report with its corpus replay."""
    reports = [(side["summarizer"], dict(side["report"], corpus_replay=side.get("corpus")))
               for side in document["sides"]]
    return render_html(reports, threshold=threshold, title=title or "compaction-harness compare",
                       comparison=comparison_html(document, threshold=threshold))


def _side_version(version: str | None, spec: str, prompt: str | None, specs: list[str]) -> str | None:
    """A side's --summarizer-version: with one model under two prompts, the prompt's content joins it, or
    the candidate would be answered from the baseline's cache (the key is the spec and the version)."""
    if version is None or specs.count(spec) < 2 or prompt is None:
        return version
    try:
        content = Path(prompt).read_bytes()
    except OSError as exc:
        raise PathError(f"--prompt {prompt!r}: {exc.strerror or exc}") from None
    return f"{version}+prompt:{hashlib.sha256(content).hexdigest()[:16]}"


def check_prompt(args) -> None:
    """--prompt is the openai: adapter's; given to any other summarizer it would be silently ignored. In
    compare, a prompt given once goes to the openai: sides only, and one given per side may be '' (none)."""
    specs = args.summarizer if isinstance(args.summarizer, list) else [args.summarizer]
    prompts = args.prompt if isinstance(args.prompt, list) else [args.prompt]
    if len(prompts) == 1:
        prompts = prompts * len(specs)
        if len(specs) > 1 and any((s or "").startswith("openai:") for s in specs):
            return  # one prompt for the compared openai: models; the other sides take none
    for spec, prompt in zip(specs, prompts):
        if prompt and spec and not spec.startswith("openai:"):
            raise InvalidArgument(f"--prompt {prompt!r} is the prompt of openai: summarizers; {spec!r} is not one and "
                                  f"would ignore it (in compare, give '' for its side; a Python summarizer reads its "
                                  f"own prompt in its code)")


def _report(args, outputs: Outputs) -> ExitCode:
    """Render saved reports; exit 0 once the page is written (each run's own status is on the page). Of
    several run reports (nights, oldest first), the newest is compared with the one before: NEW, FIXED and
    STILL FAILING on top of the page and in a few lines on stdout."""
    documents = [(file, read_report(file, max_mb=args.max_file_mb)) for file in args.files]
    compared = [file for file, d in documents if "comparison_version" in d]
    if compared and len(documents) > 1:
        raise InvalidArgument(f"{compared[0]} is a compare report: render it on its own (report {compared[0]} -o FILE)")
    if compared:
        document = documents[0][1]
        verdict = f"; compare verdict: {document.get('verdict', '')} (exit {document.get('exit_code')})"
        reports = [(side["summarizer"], side["report"]) for side in document["sides"]]
        page, trend = _compare_page(document, args.survival_threshold, title=args.title), None
    else:  # nights, oldest first (a run's shards merged into one): the page and the terminal say what changed
        documents = merged_nights(documents)
        reports, verdict, trend = documents, "", nightly(documents)
        page = render_html(reports, threshold=args.survival_threshold, title=args.title, trend=trend,
                           html_path=outputs.get("output"))
    problems = outputs.write({"output": lambda: page})
    if problems:
        return report_problems(problems, ExitCode.OK)
    violations = sum(len(d["violations"]) for _, d in reports)
    crashed = sum(1 for _, d in reports if d.get("infra_errors"))
    incomplete = sum(1 for _, d in reports if d.get("incomplete"))
    print(f"wrote {outputs.get('output')}: {len(reports)} report(s), {violations} failure(s)"
          + (f", {crashed} with summarizer failures" if crashed else "")
          + (f", {incomplete} incomplete" if incomplete else "") + printable(verdict))
    if trend is not None:
        print(trend_text(trend))
    return ExitCode.OK


def _print_unreadable(corpus: Corpus) -> None:
    for error in corpus.errors:
        print(f"! unreadable {printable(str(error))}", file=sys.stderr)
    for warning in corpus.skipped:
        print(f"! {printable(warning)}", file=sys.stderr)


def _corpus(args, outputs: Outputs) -> ExitCode:
    if args.corpus_command == "list":
        corpus = load_corpus(args.directory)
        for path, e in corpus.entries:
            print(f"{path.name}  {printable(e.invariant):26} {printable(e.fact_kind or 'structure'):20} "
                  f"{len(e.transcript.turns):>4} turns  {printable(e.summarizer)}  {printable(e.found_at)}")
        _print_unreadable(corpus)
        print(f"{len(corpus.entries)} entries, {len(corpus.errors)} unreadable")
        return ExitCode.USAGE if corpus.errors else ExitCode.OK
    if args.corpus_command == "add":
        entries, errors = [], []
        for file in args.files:  # all or nothing: every file is checked before any is added
            try:
                entries.append(load_entry(file))
            except SchemaError as exc:
                errors.append(exc)
        for error in errors:
            print(f"! unreadable {printable(str(error))}", file=sys.stderr)
        if errors:
            print(f"added nothing to {args.directory}: {len(errors)} of {len(args.files)} files are not valid entries")
            return ExitCode.USAGE
        output_dir(args.directory, option="corpus directory")
        added = sum(save_entry(entry, args.directory)[1] for entry in entries)
        print(f"added {added} new entr{'y' if added == 1 else 'ies'} to {args.directory}")
        return ExitCode.OK
    if args.corpus_command == "changes":
        return _changes(args, outputs)
    if args.corpus_command == "merge":
        added, present, read = merge_corpora(args.directory, args.sources)
        _print_unreadable(read)
        print(f"merged into {args.directory}: {added} added, {present} already there, {len(read.errors)} unreadable")
        return ExitCode.USAGE if read.errors else ExitCode.OK
    if args.summarizer is None:
        removed, read = dedupe_corpus(args.directory)
    else:
        with Replayer(run_config(args), (entry for _, entry in load_corpus(args.directory).entries)) as replay:
            removed, read = dedupe_corpus(args.directory,
                                          still_fails=lambda path, entry: replay(path, entry).status == "failing")
    _print_unreadable(read)
    print(f"removed {len(removed)} duplicate entr{'y' if len(removed) == 1 else 'ies'}, "
          f"{len(read.errors)} unreadable left alone")
    return ExitCode.USAGE if read.errors else ExitCode.OK


def _changes(args, outputs: Outputs) -> ExitCode:
    """``corpus changes``: one line per change, and the lists as JSON (what the nightly template counts)."""
    for directory in (args.before, args.after):
        read = load_corpus(directory)
        if read.errors:
            _print_unreadable(read)
            return ExitCode.USAGE
    changes = corpus_changes(args.before, args.after)

    def row(path, entry, **more) -> dict:
        return {"entry": path.name, "invariant": entry.invariant, "fact_kind": entry.fact_kind,
                "turns": len(entry.transcript.turns), "summarizer": entry.summarizer,
                "trials": None if entry.trials is None else {"failed": entry.trials[0], "of": entry.trials[1]}, **more}

    document = {"new": [row(*item) for item in changes.new], "unsure": [row(*item) for item in changes.unsure],
                "replaced": [row(path, entry, replacing=old.name, replacing_turns=len(was.transcript.turns))
                             for path, entry, old, was in changes.replaced],
                "removed": [row(*item) for item in changes.removed]}
    for title, rows in document.items():
        for r in rows:
            print(f"{title:8} {r['entry']}  {printable(r['invariant'])} ({printable(r['fact_kind'] or 'structure')}), "
                  f"{r['turns']} turns" + (f", replacing {r['replacing']}" if "replacing" in r else ""))
    print(", ".join(f"{len(rows)} {title}" for title, rows in document.items()))
    problems = outputs.write({"report_json": lambda: json.dumps(document, indent=2, ensure_ascii=False) + "\n"})
    return report_problems(problems, ExitCode.OK)


def _shrink(args, outputs: Outputs) -> ExitCode:
    data = read_json_file(args.file, max_mb=args.max_file_mb)
    budget = None
    if isinstance(data, dict) and "invariant" in data and "transcript" in data:  # a corpus entry: its transcript
        entry = entry_from_dict(data, source=args.file)
        transcript = entry.transcript
        budget = entry.budget  # the budget it was saved failing at (shrinking may have lowered the run's)
    else:
        transcript = transcript_from_dict(data, source=args.file)
    config = run_config(args, budget=args.budget if args.budget is not None else budget, transcript_file=args.file)
    result = shrink_transcript(transcript, config)
    text = render_text(result, show_context=args.show_context)
    return _finish(args, outputs, report_dict(result), text, result.exit_code)


def _audit(args, outputs: Outputs) -> ExitCode:
    options = {"rules": prose_rules(args.rules), "oracles": select(only=args.only, skip=args.skip)}
    if args.budget is not None:
        options["budget"] = args.budget
    if args.token_counter:
        options["counter"] = token_counter(args.token_counter)
    result = audit_files(args.before, args.after, args.obligations, max_file_mb=args.max_file_mb, **options)
    text, document = audit_report(result, before=args.before, after=args.after, obligations=args.obligations,
                                  unclear=args.unclear)
    print(text)
    problems = outputs.write({"report_json": lambda: json.dumps(document, indent=2, ensure_ascii=False) + "\n"})
    return report_problems(problems, ExitCode(document["exit_code"]))


def _oracles(args, outputs: Outputs) -> ExitCode:
    for o in registered():
        print(f"{o.id:28} {o.severity.value:8} {o.scope:10} [{o.reference}] {o.summary}")
    return ExitCode.OK


#: Each command's function, by its name on the command line.
COMMANDS = {"run": _run, "shrink": _shrink, "fuzz": _fuzz, "replay": _replay, "compare": _compare,
            "report": _report, "gate": _gate, "corpus": _corpus, "audit": _audit, "oracles": _oracles, "init": init_command}
