"""The ``compaction-harness`` command line: a thin layer over the library.

Exit codes: 0 every example judged and nothing violated (unclear readings are
shown for review and do not count unless ``--unclear fail``), 1 violations found,
2 usage or input error, 3 the summarizer itself failed (and nothing was
violated), 4 incomplete: ``--max-time`` or an interrupt (SIGINT, SIGTERM) ended
the run before every example was judged, and nothing was violated.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import io
import json
import math
import os
import signal
import sys
import threading
import traceback
from pathlib import Path

from harness import __version__
from harness._base._calling import DEFAULT_MAX_RESULT_CHARS
from harness._base._codec import transcript_from_dict
from harness._base._errors import HarnessError, InfraError, InvalidArgument, PathError, SchemaError
from harness._base._model import Consumer
from harness._base._files import DEFAULT_MAX_FILE_MB, output_dir, output_file, read_json_file, write_atomic
from harness._base._protocol import PROTOCOLS
from harness._app.judging._audit import audit_files
from harness._app.corpus._entries import (Corpus, CorpusSaver, dedupe_corpus, entry_from_dict, load_corpus, load_entry,
                                  merge_corpora, save_entry)
from harness._app.calling._loading import load_module, load_rules
from harness._app.calling._probe import probe
from harness._app.calling._redact import Redactor
from harness._app.calling._worker import DEFAULT_LOAD_TIMEOUT
from harness._app.fuzzing._fuzz import DEFAULT_FUZZ_MAX_TURNS, DEFAULT_FUZZ_TIME, FuzzConfig, fuzz, merge_inputs
from harness._app.corpus._replay import replay_corpus
from harness._app._compare import compare, comparison_dict, render_comparison_text
from harness._app.reports._html import comparison_html, read_report, render_html
from harness._app.reports._junit import compare_junit, replay_junit, run_junit
from harness._app.reports._chart import DEFAULT_THRESHOLD
from harness._app.reports._text import audit_report, fuzz_report_dict, printable, render_fuzz_text, render_text, report_dict
from harness._app.calling._openai import API_KEY_ENV, OPENAI_BASE_URL
from harness._app.running._run import (DEFAULT_BUDGET, DEFAULT_RETRIES, DEFAULT_SHRINK_CALLS, DEFAULT_TRIALS,
                                  UNCLEAR_MODES, RunConfig, RunResult, checked_counter, run, shrink_transcript)
from oracles import DEFAULT_RULES, registered, select

__all__ = ["main", "DEFAULT_SUMMARIZER"]

# The bundled example: a plausible extractive summarizer with the failures real ones have.
DEFAULT_SUMMARIZER = "harness.summarizers.example:summarize"

EXIT_OK, EXIT_VIOLATIONS, EXIT_USAGE, EXIT_SUMMARIZER, EXIT_INCOMPLETE = 0, 1, 2, 3, 4


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own usage errors: exit 2 without a traceback
        self.print_usage(sys.stderr)
        print(f"UsageError: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _ids(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _consumer(text: str) -> Consumer:
    """``NAME=ID,ID``: a consumer of compacted contexts and the oracle ids it relies on."""
    name, sep, ids = text.partition("=")
    try:
        if not sep:
            raise ValueError("no '='")
        return Consumer(name.strip(), _ids(ids))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--consumer expects NAME=ORACLE-ID,... (e.g. router=handle-retained,closure), "
                                         f"got {text!r}: {exc}") from None


def _whole_number(name: str, minimum: int = 1):
    """An argparse type for a whole-number option; errors name the option and the bound."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} expects a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{name} expects a number >= {minimum}, got {value}")
        return value
    return parse


def _positive_number(name: str, maximum: float = 30 * 24 * 3600.0):
    """An argparse type for a positive, finite number of at most ``maximum`` (a month of seconds)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} expects a number, got {text!r}") from None
        if not value > 0 or not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{name} expects a finite number > 0, got {text}")
        if value > maximum:
            raise argparse.ArgumentTypeError(f"{name} expects a number <= {maximum:g}, got {text}")
        return value
    return parse


def _add_call_options(p: argparse.ArgumentParser, *, many: bool = False) -> None:
    """How the summarizer is called: shared by run, shrink and replay."""
    p.add_argument("--protocol", choices=PROTOCOLS, default=None,
                   help="messages: fn(messages, budget) -> messages | str; rich: fn(CompactionRequest) -> "
                        "CompactionResult (default: the function's compaction_protocol attribute, else messages)")
    p.add_argument("--timeout", type=_positive_number("--timeout"), default=30.0, metavar="SECONDS",
                   help="per-call timeout for the summarizer (default 30)")
    p.add_argument("--inline", action="store_true",
                   help="call the summarizer in this process (faster, but no timeout and no kill on a hang)")
    p.add_argument("--cache-dir", metavar="DIR", help="also keep the summarizer call cache on disk here")
    p.add_argument("--summarizer-version", metavar="TEXT", default=None,
                   help="key the call cache by this instead of a hash of the summarizer's code (use it when answers "
                        "depend on more than the code: a prompt file, a model name)")
    p.add_argument("--max-result-chars", type=_whole_number("--max-result-chars"), default=DEFAULT_MAX_RESULT_CHARS,
                   metavar="N", help=f"a result larger than this (as JSON) is a summarizer failure "
                                     f"(default {DEFAULT_MAX_RESULT_CHARS:,})")
    p.add_argument("--redact-env", action="append", default=[], metavar="NAME",
                   help="also redact this environment variable's value from everything written (repeatable; "
                        "names like *_KEY, *_TOKEN, *SECRET* are redacted anyway)")
    p.add_argument("--extend", action="append", default=[], metavar="MODULE",
                   help="import this module (or path/to/file.py) first, here and beside the summarizer, for the "
                        "oracles it registers (@oracles.oracle) and the fact kinds it defines "
                        "(harness.define_kind) (repeatable)")
    p.add_argument("--rules", metavar="SPEC", default=None,
                   help="module:OBJECT naming your own oracles.ProseRules (cue lists, windows, reading units)")
    p.add_argument("--trials", type=_whole_number("--trials", minimum=0), default=DEFAULT_TRIALS, metavar="K",
                   help=f"re-ask each minimal failure K times with the cache bypassed and report how often it fails; "
                        f"also notices a non-deterministic summarizer (default {DEFAULT_TRIALS}; 0: neither)")
    p.add_argument("--may-vary", action="store_true",
                   help="the summarizer may answer one request differently each time (a model at temperature > 0): "
                        "the deterministic oracle then notes it instead of failing (a Python summarizer can say so "
                        "itself with fn.compaction_may_vary = True)")
    remote = p.add_argument_group("summarizers outside Python (openai:MODEL, http://HOST:PORT/PATH, cmd:COMMAND ...)")
    remote.add_argument("--base-url", metavar="URL", default=None,
                        help=f"openai: the OpenAI-compatible API's base URL (default {OPENAI_BASE_URL})")
    remote.add_argument("--prompt", metavar="FILE", default=None, action="append" if many else "store",
                        help="openai: your compaction prompt, with {transcript}, {budget} and {obligations} "
                             "placeholders (default: the bundled harness/summarizers/compaction_prompt.txt)"
                             + ("; compare: once for every summarizer, or once per --summarizer in their order "
                                "(a prompt change: the same openai:MODEL twice, two prompts)" if many else ""))
    remote.add_argument("--api-key-env", metavar="NAME", default=None,
                        help=f"openai: the environment variable holding the API key (default {API_KEY_ENV}); its "
                             f"value is never written anywhere")
    remote.add_argument("--retries", type=_whole_number("--retries", minimum=0), default=DEFAULT_RETRIES, metavar="N",
                        help=f"openai and http: retries of 429, 5xx, dropped connections and timeouts, with "
                             f"exponential backoff honouring Retry-After (default {DEFAULT_RETRIES})")
    p.add_argument("--quiet", action="store_true", help="no progress output (for CI logs)")


def _share(text: str) -> float:
    """``--survival-threshold``: a share in (0, 1], or a percentage such as 90%."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--survival-threshold expects a share such as 0.9 or 90%, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"--survival-threshold expects a share in (0, 1] (or 1% to 100%), got {text}")
    return value


def _add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--report-json", metavar="FILE", help="write the full report as JSON")
    p.add_argument("--report-html", metavar="FILE",
                   help="write a self-contained HTML report: minimal failures with the obligation highlighted, "
                        "survival curves per fact kind, summarizer failures")
    p.add_argument("--junit-xml", metavar="FILE", help="write JUnit XML (one test case per oracle) for CI systems")
    p.add_argument("--survival-threshold", type=_share, default=DEFAULT_THRESHOLD, metavar="SHARE",
                   help=f"the HTML report marks the first round a kind's share kept falls below this "
                        f"(default {DEFAULT_THRESHOLD * 100:.0f}%%)")


def _add_unclear_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--unclear", choices=UNCLEAR_MODES, default="review",
                   help="what a reading the oracles could not settle does: review (the default) lists it in its "
                        "own section of every report and leaves the exit code alone; fail makes it fail the run")


def _add_summarizer_options(p: argparse.ArgumentParser, *, required: bool, many: bool = False,
                            max_time_help: str = "stop after this long and report what was found (exit 4 if "
                                                 "examples were left unjudged)") -> None:
    if many:
        p.add_argument("--summarizer", required=True, action="append", metavar="SPEC",
                       help="module:function, path/to/file.py:function, openai:MODEL, http://... or cmd:...; give it "
                            "two or more times: the first is the baseline the others are compared with")
    else:
        p.add_argument("--summarizer", required=required, default=None if required else DEFAULT_SUMMARIZER,
                       metavar="SPEC", help="module:function or path/to/file.py:function"
                       + ("" if required else f" (default: the bundled example, {DEFAULT_SUMMARIZER})"))
    _add_call_options(p, many=many)
    p.add_argument("--budget", type=_whole_number("--budget"), default=None, metavar="TOKENS",
                   help="token budget of the context; compaction fires at 80%% of it (default 2000; for shrink "
                        "given a corpus entry, the budget the entry records)")
    p.add_argument("--only", type=_ids, default=None, metavar="ID,...", help="run only these oracles")
    p.add_argument("--skip", type=_ids, default=(), metavar="ID,...", help="skip these oracles")
    _add_unclear_option(p)
    p.add_argument("--stop-on-error", action="store_true", help="stop at the first summarizer failure")
    p.add_argument("--token-counter", metavar="SPEC", default=None,
                   help="module:function counting tokens in a string (default: words plus punctuation marks)")
    p.add_argument("--max-time", type=_positive_number("--max-time"), default=None, metavar="SECONDS",
                   help=max_time_help)
    p.add_argument("--shrink-calls", type=_whole_number("--shrink-calls"), default=DEFAULT_SHRINK_CALLS,
                   metavar="N", help=f"new summarizer calls shrinking one failure may make "
                                     f"(default {DEFAULT_SHRINK_CALLS}); then the smallest so far is reported")
    p.add_argument("--max-calls", type=_whole_number("--max-calls"), default=None, metavar="N",
                   help="new summarizer calls the whole run may make: exploration stops early enough to leave "
                        "shrinking some, and the report says the cap was reached")
    p.add_argument("--max-tokens", type=_whole_number("--max-tokens"), default=None, metavar="N",
                   help="prompt + completion tokens the whole run may spend (summarizers that report usage: openai, "
                        "or an http/cmd answer's 'usage')")
    _add_report_options(p)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="compaction-harness",
        description="Property-based and fuzz testing for transcript compactors (summarizers).",
    )
    parser.add_argument("--version", action="version", version=f"compaction-harness {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = sub.add_parser("run", help="generate transcripts, run the summarizer, report minimal failures")
    _add_summarizer_options(run, required=False)
    run.add_argument("--examples", type=_whole_number("--examples"), default=50, metavar="N",
                     help="transcripts to generate (default 50)")
    run.add_argument("--jobs", type=_whole_number("--jobs"), default=1, metavar="K",
                     help="judge up to K sessions at once (worth it when the summarizer waits on a model or a "
                          "server); the result is the same as with --jobs 1 (default 1)")
    run.add_argument("--seed", type=_whole_number("--seed", minimum=0), default=None, metavar="S", help="seed (default: random, printed)")
    run.add_argument("--max-turns", type=_whole_number("--max-turns"), default=400, metavar="T",
                     help="longest transcript to generate (default 400; try 4000)")
    run.add_argument("--corpus", metavar="DIR", help="save every new minimal failure into this corpus directory")
    run.add_argument("--consumer", type=_consumer, action="append", default=[], metavar="NAME=ID,...",
                     help="declare a reader of the compacted context and the invariant classes (oracle ids) it relies "
                          "on, e.g. router=handle-retained,closure; a result the oracles did not verify for it is a "
                          "consumer-requirements violation (repeatable)")
    run.add_argument("--background", metavar="PATH",
                     help="your own session logs as the filler: a .json file (one session), a .jsonl file (one "
                          "session per line) or a directory of them; our obligations are planted between them")

    fuzz = sub.add_parser("fuzz", help="coverage-guided fuzzing of a Python summarizer's own code (atheris); "
                                       "arguments after -- go to libFuzzer")
    _add_summarizer_options(fuzz, required=False, max_time_help=f"seconds of fuzzing (default {DEFAULT_FUZZ_TIME:g} "
                            f"unless --runs is given); shrinking what was found comes after, within --shrink-calls")
    fuzz.add_argument("--runs", type=_whole_number("--runs"), default=None, metavar="N",
                      help="executions per fuzzing process (libFuzzer's -runs); with neither this nor --max-time, "
                           f"fuzzing lasts {DEFAULT_FUZZ_TIME:g} s")
    fuzz.add_argument("--jobs", type=_whole_number("--jobs"), default=1, metavar="K",
                      help="fuzzing processes sharing one corpus (default 1)")
    fuzz.add_argument("--seed", type=_whole_number("--seed", minimum=0), default=None, metavar="S",
                      help="seed (default: random, printed)")
    fuzz.add_argument("--max-turns", type=_whole_number("--max-turns"), default=DEFAULT_FUZZ_MAX_TURNS, metavar="T",
                      help=f"longest transcript to generate (default {DEFAULT_FUZZ_MAX_TURNS}: fuzzing wants many "
                           f"cheap executions)")
    fuzz.add_argument("--corpus", metavar="DIR", help="save every new minimal failure into this corpus directory; the "
                                                      "fuzzer's own inputs then live beside it, in DIR.fuzz/")
    fuzz.add_argument("--fuzz-dir", metavar="DIR", default=None,
                      help="the fuzzer's directory (inputs/, failures/, crashes/); default DIR.fuzz/SUMMARIZER beside "
                           "--corpus, else .compaction-harness/fuzz/SUMMARIZER")
    fuzz.add_argument("--merge", nargs="+", metavar="DIR", default=None,
                      help="only merge these directories of fuzz inputs into the fuzz directory's inputs (libFuzzer's "
                           "-merge=1: an input is kept if it reaches new coverage), then exit")

    shrink = sub.add_parser("shrink", help="minimize the failures of one transcript given as JSON")
    shrink.add_argument("file", metavar="FILE", help="a transcript JSON document")
    _add_summarizer_options(shrink, required=True)
    shrink.add_argument("--max-file-mb", type=_positive_number("--max-file-mb", maximum=1024 * 1024), default=DEFAULT_MAX_FILE_MB,
                        metavar="MB", help=f"refuse larger transcript files (default {DEFAULT_MAX_FILE_MB})")

    replay = sub.add_parser("replay", help="replay a corpus: which saved failures does a summarizer still have?")
    replay.add_argument("directory", metavar="DIR")
    replay.add_argument("--summarizer", required=True, metavar="SPEC")
    replay.add_argument("--allow-empty", action="store_true",
                        help="exit 0 on a corpus with no entries (by default that is exit 2: a wrong directory)")
    replay.add_argument("--junit-xml", metavar="FILE", help="write JUnit XML (one test case per corpus entry)")
    _add_call_options(replay)

    comparing = sub.add_parser("compare", help="run two or more summarizers on the same transcripts (and corpus): "
                                               "what is new and fixed against the first; exit 1 on a new failure")
    _add_summarizer_options(comparing, required=True, many=True)
    comparing.add_argument("--examples", type=_whole_number("--examples"), default=50, metavar="N",
                           help="transcripts to generate, the same for every summarizer (default 50)")
    comparing.add_argument("--seed", type=_whole_number("--seed", minimum=0), default=None, metavar="S",
                           help="seed, shared by every summarizer (default: random, printed)")
    comparing.add_argument("--max-turns", type=_whole_number("--max-turns"), default=400, metavar="T",
                           help="longest transcript to generate (default 400)")
    comparing.add_argument("--jobs", type=_whole_number("--jobs"), default=1, metavar="K",
                           help="judge up to K sessions at once per summarizer (default 1)")
    comparing.add_argument("--corpus", metavar="DIR", help="also replay this corpus with every summarizer")

    rendering = sub.add_parser("report", help="render saved JSON reports (--report-json) as one HTML page")
    rendering.add_argument("files", nargs="+", metavar="JSON", help="reports written by --report-json, oldest first")
    rendering.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file to write")
    rendering.add_argument("--title", default=None, metavar="TEXT", help="the page's heading")
    rendering.add_argument("--survival-threshold", type=_share, default=DEFAULT_THRESHOLD, metavar="SHARE",
                           help=f"mark the first round a kind's share kept falls below this (default "
                                f"{DEFAULT_THRESHOLD * 100:.0f}%%)")
    rendering.add_argument("--max-file-mb", type=_positive_number("--max-file-mb", maximum=1024 * 1024),
                           default=DEFAULT_MAX_FILE_MB, metavar="MB", help=f"refuse larger files (default {DEFAULT_MAX_FILE_MB})")

    corpus = sub.add_parser("corpus", help="list, add, merge or dedupe corpus entries")
    corpus_sub = corpus.add_subparsers(dest="corpus_command", metavar="ACTION", parser_class=_Parser, required=True)
    kinds = _Parser(add_help=False)  # entries of a team's own fact kinds load once its module has defined them
    kinds.add_argument("--extend", action="append", default=[], metavar="MODULE",
                       help="import this module (or path/to/file.py) first, for the fact kinds it defines (repeatable)")
    corpus_sub.add_parser("list", help="show the entries of a corpus", parents=[kinds]
                          ).add_argument("directory", metavar="DIR")
    add = corpus_sub.add_parser("add", help="validate entry files and add them to a corpus", parents=[kinds])
    add.add_argument("directory", metavar="DIR")
    add.add_argument("files", nargs="+", metavar="FILE")
    merge = corpus_sub.add_parser("merge", help="merge the corpora of several CI shards into one", parents=[kinds])
    merge.add_argument("directory", metavar="DEST")
    merge.add_argument("sources", nargs="+", metavar="SRC")
    corpus_sub.add_parser("dedupe", help="keep the smallest entry per summarizer, invariant and fact kind",
                          parents=[kinds]).add_argument("directory", metavar="DIR")

    audit = sub.add_parser("audit", help="judge one real compaction: messages before, context after, obligations")
    audit.add_argument("--before", required=True, metavar="FILE",
                       help="JSON: the chat messages that were compacted (role/content/tool_calls/tool_call_id)")
    audit.add_argument("--after", required=True, metavar="FILE",
                       help="JSON: the context that replaced them: a string, chat messages, or "
                            "{\"messages\": [...], \"ledger\": [...]}")
    audit.add_argument("--obligations", required=True, metavar="FILE",
                       help="JSON: {\"obligations\": [{\"kind\", \"literals\", ...}]} (see the README)")
    audit.add_argument("--budget", type=_whole_number("--budget"), default=None, metavar="TOKENS",
                       help="the context's token budget (default: none, and the budget oracles never fire)")
    audit.add_argument("--only", type=_ids, default=None, metavar="ID,...", help="run only these oracles")
    audit.add_argument("--skip", type=_ids, default=(), metavar="ID,...", help="skip these oracles")
    _add_unclear_option(audit)
    audit.add_argument("--rules", metavar="SPEC", default=None, help="module:OBJECT naming your own oracles.ProseRules")
    audit.add_argument("--extend", action="append", default=[], metavar="MODULE",
                       help="import this module first, for its oracles and fact kinds (repeatable)")
    audit.add_argument("--token-counter", metavar="SPEC", default=None, help="module:function counting tokens")
    audit.add_argument("--max-file-mb", type=_positive_number("--max-file-mb", maximum=1024 * 1024),
                       default=DEFAULT_MAX_FILE_MB, metavar="MB", help=f"refuse larger files (default {DEFAULT_MAX_FILE_MB})")
    audit.add_argument("--report-json", metavar="FILE", help="write the findings as JSON")

    catalogue = sub.add_parser("oracles", help="list the invariant catalogue")
    catalogue.add_argument("--extend", action="append", default=[], metavar="MODULE",
                           help="import this module first, so the oracles it registers are listed (repeatable)")
    return parser


def _config(args, **extra) -> RunConfig:
    """The run's configuration from parsed options (the protocol is resolved by the adapter)."""
    common = dict(summarizer=args.summarizer, protocol=args.protocol, timeout=args.timeout,
                  isolation="inline" if args.inline else "process", cache_dir=args.cache_dir, quiet=args.quiet,
                  max_result_chars=args.max_result_chars, summarizer_version=args.summarizer_version,
                  redact_env=tuple(args.redact_env), rules=args.rules, extend=tuple(args.extend),
                  trials=args.trials, base_url=args.base_url, prompt=args.prompt, api_key_env=args.api_key_env,
                  retries=args.retries, may_vary=args.may_vary)
    if args.command != "replay":
        common.update(budget=DEFAULT_BUDGET if args.budget is None else args.budget, only=args.only, skip=args.skip,
                      stop_on_error=args.stop_on_error,
                      token_counter=args.token_counter, max_time=args.max_time, shrink_calls=args.shrink_calls,
                      max_calls=args.max_calls, max_tokens=args.max_tokens, unclear=args.unclear)
    return RunConfig(**common, **extra)


def _check_paths(args) -> None:
    """Every path the command will write, checked before any work starts (so a finished run is never lost)."""
    written: dict[str, str] = {}
    for name in ("report_json", "report_html", "junit_xml", "output"):
        if getattr(args, name, None) is not None:
            option = "--output" if name == "output" else "--" + name.replace("_", "-")
            path = str(output_file(getattr(args, name), option=option))
            if os.path.realpath(path) in written:
                raise InvalidArgument(f"{option} {path!r} is also {written[os.path.realpath(path)]}: one file "
                                      f"cannot hold both reports")
            written[os.path.realpath(path)] = option
            setattr(args, name, path)
    for option, path in _inputs(args):  # a report never writes over what the command reads
        real = os.path.realpath(path)
        clash = written.get(real) or next((o for w, o in written.items() if os.path.isdir(real)
                                           and w.startswith(real.rstrip(os.sep) + os.sep)), None)
        if clash:
            raise InvalidArgument(f"{clash} {getattr(args, clash.lstrip('-').replace('-', '_'))!r} would write over "
                                  f"{option} {path!r}, which this command reads")
    if getattr(args, "corpus", None) is not None and args.command != "compare":  # compare only reads its corpus
        output_dir(args.corpus, option="--corpus")
    if getattr(args, "cache_dir", None) is not None:
        output_dir(args.cache_dir, option="--cache-dir")
    args.outputs_asked = dict(written)


def _inputs(args) -> list[tuple[str, str]]:
    """The files and folders the command reads, by the option that names them."""
    out = [("JSON", f) for f in getattr(args, "files", None) or ()]
    for name, option in (("file", "FILE"), ("before", "--before"), ("after", "--after"),
                         ("obligations", "--obligations"), ("background", "--background"), ("directory", "DIR"),
                         ("corpus", "--corpus")):
        value = getattr(args, name, None)
        if isinstance(value, str) and value and not (name == "corpus" and args.command in ("run", "fuzz")):
            out.append((option, value))
    prompts = getattr(args, "prompt", None)
    out += [("--prompt", p) for p in (prompts if isinstance(prompts, list) else [prompts]) if p]
    specs = getattr(args, "summarizer", None)
    for spec in specs if isinstance(specs, list) else [specs]:
        target = (spec or "").rpartition(":")[0]
        if target.endswith(".py"):
            out.append(("--summarizer", target))
    return out


def _discard_unwritten_outputs(args) -> None:
    """A command that ended in an error removes the report files it was asked for and did not write, so
    last night's (green) files are never published as tonight's. Inputs were refused as outputs up front."""
    for path in getattr(args, "outputs_asked", {}):
        if path not in getattr(args, "outputs_written", set()):
            with contextlib.suppress(OSError):
                os.unlink(path)


def _finish(result: RunResult, args, saver: CorpusSaver | None = None) -> int:
    """Write the report files, then print the report: a print that fails (a closed pipe) never leaves last
    night's files in place of tonight's. A failed write is reported without masking the verdict."""
    problems = _write_reports(report_dict(result), args)
    print(render_text(result))
    if saver is not None and saver.directory is not None:
        print(f"corpus {saver.directory}: {saver.saved} new entr{'y' if saver.saved == 1 else 'ies'}")
    return _report_problems((list(saver.errors) if saver is not None else []) + problems, result.exit_code)


def _write_reports(document: dict, args) -> list[str]:
    """Write the JSON, HTML and JUnit reports asked for, each from ``document``."""
    return _write_outputs(args, {
        "report_json": lambda: json.dumps(document, indent=2, ensure_ascii=False) + "\n",
        "report_html": lambda: render_html([("this run", document)], threshold=args.survival_threshold),
        "junit_xml": lambda: run_junit(document, oracles=document.get("oracles", [])),
    })


def _write_outputs(args, renderers: dict) -> list[str]:
    """Render and write each output file asked for; each failure (a full disk, a bug of ours in one
    renderer) is one line of the returned list, and the other files are still written."""
    problems = []
    for name, render in renderers.items():
        path = getattr(args, name, None)
        if not path:
            continue
        option = f"--{name.replace('_', '-')}"
        try:
            write_atomic(path, render())
            args.outputs_written = getattr(args, "outputs_written", set()) | {os.path.realpath(path)}
        except OSError as exc:
            problems.append(f"PathError: {option} {path!r}: {exc.strerror or exc}")
        except Exception as exc:  # a bug of ours: the other reports are still written, and this is said
            problems.append(f"InternalError: writing {option} {path!r}: {type(exc).__name__}: {exc}")
    return problems


def _report_problems(problems: list[str], code: int) -> int:
    for problem in problems:
        print(problem, file=sys.stderr)
    return EXIT_USAGE if problems and code == EXIT_OK else code


def _run(args) -> int:
    config = _config(args, examples=args.examples, seed=args.seed, max_turns=args.max_turns,
                     background=args.background, jobs=args.jobs, consumers=tuple(args.consumer))
    saver = CorpusSaver(args.corpus, summarizer=config.summarizer, budget=config.budget)
    return _finish(run(config, on_failure=saver), args, saver)


def _fuzz(args) -> int:
    config = _config(args, seed=args.seed, max_turns=args.max_turns)
    max_time = args.max_time if args.max_time is not None else (None if args.runs else DEFAULT_FUZZ_TIME)
    fuzz_config = FuzzConfig(dataclasses.replace(config, max_time=None), max_time=max_time, runs=args.runs,
                             jobs=args.jobs, directory=args.fuzz_dir, corpus=args.corpus,
                             libfuzzer_args=tuple(args.libfuzzer))
    if args.merge:
        before, after = merge_inputs(fuzz_config, args.merge)
        print(f"merged {', '.join(args.merge)} into the fuzz inputs: {before} -> {after} inputs "
              f"({after - before} reach coverage the others did not)")
        return EXIT_OK
    saver = CorpusSaver(args.corpus, summarizer=config.summarizer, budget=config.budget)
    result = fuzz(fuzz_config, on_failure=saver)
    problems = _write_reports(fuzz_report_dict(result), args)
    print(render_fuzz_text(result))
    if saver.directory is not None:
        print(f"corpus {saver.directory}: {saver.saved} new entr{'y' if saver.saved == 1 else 'ies'}")
    return _report_problems(list(saver.errors) + problems, result.exit_code)


def _replay(args) -> int:
    replay = replay_corpus(args.directory, _config(args))
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
    problems = _write_outputs(args, {"junit_xml": lambda: replay_junit(replay, args.summarizer)})
    return _report_problems(problems, replay.exit_code)


def _compare(args) -> int:
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
    args.summarizer, args.prompt = specs[0], prompts[0]  # the shared options are checked and built once
    base = _config(args, examples=args.examples, seed=args.seed, max_turns=args.max_turns, jobs=args.jobs)
    configs = [dataclasses.replace(base, summarizer=spec, prompt=prompt,
                                   summarizer_version=_side_version(args.summarizer_version, spec, prompt, specs))
               for spec, prompt in sides]
    labels = [f"{spec} --prompt {prompt}" if len(set(prompts)) > 1 else spec for spec, prompt in sides]
    comparison = compare(configs, labels=labels, corpus=args.corpus,
                         on_side=None if args.quiet else
                         lambda i, label: print(f"[{i}/{len(configs)}] running {printable(label)}", file=sys.stderr))
    document = comparison_dict(comparison)
    problems = _write_outputs(args, {
        "report_json": lambda: json.dumps(document, indent=2, ensure_ascii=False) + "\n",
        "report_html": lambda: _compare_page(document, args.survival_threshold),
        "junit_xml": lambda: compare_junit(document),
    })
    print(printable(render_comparison_text(comparison)))
    return _report_problems(problems, comparison.exit_code)


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


def _check_prompt(args) -> None:
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


def _report(args) -> int:
    """Render saved reports; exit 0 once the page is written (each run's own status is on the page)."""
    documents = [(file, read_report(file, max_mb=args.max_file_mb)) for file in args.files]
    compared = [file for file, d in documents if "comparison_version" in d]
    if compared and len(documents) > 1:
        raise InvalidArgument(f"{compared[0]} is a compare report: render it on its own (report {compared[0]} -o FILE)")
    if compared:
        document = documents[0][1]
        verdict = f"; compare verdict: {document.get('verdict', '')} (exit {document.get('exit_code')})"
        reports = [(side["summarizer"], side["report"]) for side in document["sides"]]
        page = _compare_page(document, args.survival_threshold, title=args.title)
    else:
        reports, verdict = documents, ""
        page = render_html(reports, threshold=args.survival_threshold, title=args.title)
    problems = _write_outputs(args, {"output": lambda: page})
    if problems:
        return _report_problems(problems, EXIT_OK)
    violations = sum(len(d["violations"]) for _, d in reports)
    crashed = sum(1 for _, d in reports if d.get("infra_errors"))
    incomplete = sum(1 for _, d in reports if d.get("incomplete"))
    print(f"wrote {args.output}: {len(reports)} report(s), {violations} failure(s)"
          + (f", {crashed} with summarizer failures" if crashed else "")
          + (f", {incomplete} incomplete" if incomplete else "") + printable(verdict))
    return EXIT_OK


def _print_unreadable(corpus: Corpus) -> None:
    for error in corpus.errors:
        print(f"! unreadable {printable(str(error))}", file=sys.stderr)
    for warning in corpus.skipped:
        print(f"! {printable(warning)}", file=sys.stderr)


def _corpus(args) -> int:
    if args.corpus_command == "list":
        corpus = load_corpus(args.directory)
        for path, e in corpus.entries:
            print(f"{path.name}  {printable(e.invariant):26} {printable(e.fact_kind or 'structure'):20} "
                  f"{len(e.transcript.turns):>4} turns  {printable(e.summarizer)}  {printable(e.found_at)}")
        _print_unreadable(corpus)
        print(f"{len(corpus.entries)} entries, {len(corpus.errors)} unreadable")
        return EXIT_USAGE if corpus.errors else EXIT_OK
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
            return EXIT_USAGE
        output_dir(args.directory, option="corpus directory")
        added = sum(save_entry(entry, args.directory)[1] for entry in entries)
        print(f"added {added} new entr{'y' if added == 1 else 'ies'} to {args.directory}")
        return EXIT_OK
    if args.corpus_command == "merge":
        added, present, read = merge_corpora(args.directory, args.sources)
        _print_unreadable(read)
        print(f"merged into {args.directory}: {added} added, {present} already there, {len(read.errors)} unreadable")
        return EXIT_USAGE if read.errors else EXIT_OK
    removed, read = dedupe_corpus(args.directory)
    _print_unreadable(read)
    print(f"removed {len(removed)} duplicate entr{'y' if len(removed) == 1 else 'ies'}, "
          f"{len(read.errors)} unreadable left alone")
    return EXIT_USAGE if read.errors else EXIT_OK


def _shrink(args) -> int:
    data = read_json_file(args.file, max_mb=args.max_file_mb)
    if isinstance(data, dict) and "invariant" in data and "transcript" in data:  # a corpus entry: its transcript
        entry = entry_from_dict(data, source=args.file)
        transcript = entry.transcript
        if args.budget is None:  # the budget it was saved failing at (shrinking may have lowered the run's)
            args.budget = entry.budget
    else:
        transcript = transcript_from_dict(data, source=args.file)
    config = _config(args, transcript_file=args.file)
    return _finish(shrink_transcript(transcript, config), args)


def _audit(args) -> int:
    options = {"rules": load_rules(args.rules) if args.rules else DEFAULT_RULES,
               "oracles": select(only=args.only, skip=args.skip)}
    if args.budget is not None:
        options["budget"] = args.budget
    if args.token_counter:
        options["counter"] = checked_counter(args.token_counter)
    result = audit_files(args.before, args.after, args.obligations, max_file_mb=args.max_file_mb, **options)
    text, document = audit_report(result, before=args.before, after=args.after, obligations=args.obligations,
                                  unclear=args.unclear)
    print(text)
    if args.report_json:
        try:
            write_atomic(args.report_json, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        except OSError as exc:
            print(f"PathError: --report-json {args.report_json!r}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
    return document["exit_code"]


def _oracles(args) -> int:
    for o in registered():
        print(f"{o.id:28} {o.severity.value:8} {o.scope:10} [{o.reference}] {o.summary}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    libfuzzer: list[str] = []
    if argv[:1] == ["fuzz"] and "--" in argv:  # what follows "--" is libFuzzer's
        libfuzzer = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    try:
        args = parser.parse_args(argv)
        args.libfuzzer = libfuzzer
    except SystemExit as exc:  # --help, --version, or a usage error already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, _interrupt) for sig in _STOP_SIGNALS} if in_main_thread else {}
    try:
        if args.command not in ("corpus", "oracles"):
            _check_paths(args)
        if args.command == "report":
            return _report(args)
        if args.command in ("run", "shrink", "fuzz", "replay", "compare"):
            _check_prompt(args)
        for module in args.extend:  # before anything selects oracles or loads facts: their definitions must be in
            _load_in_harness(args, module, "--extend", load_module)
        if args.command == "oracles":
            return _oracles(args)
        if args.command == "corpus":
            return _corpus(args)
        if args.rules:
            _load_in_harness(args, args.rules, "--rules", load_rules)
        if args.command == "replay":
            return _replay(args)
        _validate_ids(args)
        if args.command == "audit":
            return _audit(args)
        if args.command == "fuzz":
            return _fuzz(args)
        if args.command == "compare":
            return _compare(args)
        return _run(args) if args.command == "run" else _shrink(args)
    except InfraError as exc:  # the adapter reports these as findings; one reaching here is still the summarizer's
        print(f"InfraError: {printable(_redacted(args, str(exc)))}", file=sys.stderr)
        _discard_unwritten_outputs(args)
        return EXIT_SUMMARIZER
    except HarnessError as exc:
        print(f"{type(exc).__name__}: {printable(_redacted(args, str(exc)))}", file=sys.stderr)
        _discard_unwritten_outputs(args)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted before anything was judged", file=sys.stderr)
        _discard_unwritten_outputs(args)
        return EXIT_INCOMPLETE
    except Exception as exc:  # a bug of ours: say so plainly; the traceback only on request
        print(f"InternalError: {type(exc).__name__}: {exc} (set COMPACTION_HARNESS_DEBUG=1 for the traceback)",
              file=sys.stderr)
        if os.environ.get("COMPACTION_HARNESS_DEBUG"):
            traceback.print_exc()
        _discard_unwritten_outputs(args)
        return EXIT_USAGE
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# SIGTERM (a CI job cancelled) and SIGHUP (a terminal closed) stop a run the way Ctrl-C does.
_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _redacted(args, text: str) -> str:
    names = (*getattr(args, "redact_env", ()), *filter(None, [getattr(args, "api_key_env", None)]))
    return Redactor.from_environ(extra_names=names).redact(text)


def _interrupt(signum, frame) -> None:
    """SIGTERM or SIGHUP as Ctrl-C: the run stops, workers are killed, what was found is reported and saved."""
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _load_in_harness(args, spec: str, option: str, load) -> None:
    """Load a team module that runs inside the harness: tried in a throwaway process first (see
    ``_probe``), then imported here with its prints kept off the report. Fails with a ``SpecError``
    or ``InvalidArgument`` naming ``option``, before any work."""
    redactor = Redactor.from_environ(extra_names=getattr(args, "redact_env", ()))
    timeout = min(DEFAULT_LOAD_TIMEOUT, getattr(args, "max_time", None) or DEFAULT_LOAD_TIMEOUT)
    probe(spec, option=option, timeout=timeout, redactor=redactor)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        if option == "--token-counter":
            load(spec)
        else:
            load(spec, option=option)


def _validate_ids(args) -> None:
    if not select(only=args.only, skip=args.skip):
        raise InvalidArgument(f"--only {','.join(args.only or ()) or '(all)'} with --skip {','.join(args.skip) or '(none)'}"
                              f" selects no oracle: nothing would be checked")
    select(only=args.only, skip=args.skip)  # raises InvalidArgument naming unknown ids
    if args.token_counter:
        _load_in_harness(args, args.token_counter, "--token-counter", checked_counter)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
