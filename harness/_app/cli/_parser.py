"""The command line's parser: every command, its options and their checks (a usage error exits 2)."""

from __future__ import annotations

import argparse
import difflib
import re
import sys

from harness import __version__
from harness._app.cli._init import add_init_arguments
from harness._base._calling import DEFAULT_MAX_RESULT_CHARS, RESULT_CHARS_PER_TOKEN
from harness._base._dialects import DEFAULT_DIALECT, DIALECTS
from harness._base._errors import did_you_mean
from harness._base._files import DEFAULT_MAX_FILE_MB
from harness._base._model import Consumer
from harness._base._protocol import PROTOCOLS
from harness._app._compare import DEFAULT_SETTLE_TRIALS
from harness._app._numbers import MAX_SECONDS, positive_number, share, whole_number
from harness._app._outcome import ExitCode
from harness._app.calling._openai import API_KEY_ENV, OPENAI_BASE_URL
from harness._app.calling._options import DEFAULT_RETRIES, DEFAULT_TIMEOUT
from harness._app.fuzzing._fuzz import DEFAULT_FUZZ_MAX_TURNS, DEFAULT_FUZZ_TIME
from harness._app.reports._chart import DEFAULT_THRESHOLD
from harness._app.reports._gate import FAIL_ON, MODES, PR_EXAMPLES, PR_MAX_TIME, PR_SEED
from harness._app.running._options import (DEFAULT_BUDGET, DEFAULT_EXAMPLES, DEFAULT_MAX_WINDOWS, DEFAULT_SHRINK_CALLS,
                                           DEFAULT_TRIALS, DEFAULT_TRIGGER, FAST_CALL_SECONDS, FAST_SECONDS_PER_KTOKEN,
                                           FAST_SHRINK_CALLS,
                                           UNCLEAR_MODES)

__all__ = ["build_parser", "DEFAULT_SUMMARIZER"]

# The bundled example: a plausible extractive summarizer with the failures real ones have.
DEFAULT_SUMMARIZER = "harness.summarizers.example:summarize"


class _Parser(argparse.ArgumentParser):
    """argparse with no abbreviations (``--example`` is not ``--examples``), each command's own usage line on
    a usage error, and a "did you mean" for a misspelled command or option."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.commands: dict[str, _Parser] = {}  # filled by _command: each command's (and action's) parser

    def error(self, message: str):  # argparse's own usage errors: exit 2 without a traceback
        self.print_usage(sys.stderr)
        print(f"UsageError: {message}{_did_you_mean(message)}", file=sys.stderr)
        sys.exit(ExitCode.USAGE)

    def parse_known_args(self, args=None, namespace=None):
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self.commands:  # the top level: say it with the command's usage and its options
            chosen = self
            for name in (getattr(parsed, "command", None), getattr(parsed, "corpus_command", None)):
                chosen = chosen.commands.get(name, chosen) if name else chosen
            unknown = [a for a in extras if a.startswith("-")]
            near = [match for a in unknown for match in difflib.get_close_matches(
                a.split("=", 1)[0], chosen.option_strings(), n=1, cutoff=0.6)]
            chosen.error(f"unrecognized arguments: {' '.join(extras)}"
                         + (f" (did you mean {' or '.join(dict.fromkeys(near))}?)" if near else ""))
        return parsed, extras

    def option_strings(self) -> list[str]:
        return [o for action in self._actions for o in action.option_strings if o.startswith("--")]


def _did_you_mean(message: str) -> str:
    """For argparse's "invalid choice: 'rnu' (choose from 'run', ...)", the closest choice."""
    match = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not match:
        return ""
    return did_you_mean(match.group(1), re.findall(r"'([^']*)'", match.group(2)), cutoff=0.5)


def _command(sub, parent: _Parser, name: str, **kwargs) -> _Parser:
    """``sub.add_parser``, remembered by ``parent`` so a usage error is said with this command's usage."""
    parser = sub.add_parser(name, **kwargs)
    parent.commands[name] = parser
    return parser


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


def _argparse_type(check, name: str, *bounds):
    """An argparse type for one of ``harness._app._numbers``' checks: its error names the option and the bound."""
    def parse(text: str):
        try:
            return check(name, text, *bounds)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def _whole_number(name: str, minimum: int = 1):
    """An argparse type for a whole-number option of at least ``minimum``."""
    return _argparse_type(whole_number, name, minimum)


def _positive_number(name: str, maximum: float = MAX_SECONDS):
    """An argparse type for a positive, finite number of at most ``maximum`` (a month of seconds)."""
    return _argparse_type(positive_number, name, maximum)


def _add_call_options(p: argparse.ArgumentParser, *, many: bool = False) -> None:
    """How the summarizer is called: shared by run, shrink and replay."""
    p.add_argument("--protocol", choices=PROTOCOLS, default=None,
                   help="messages: fn(messages, budget) -> messages | str; rich: fn(CompactionRequest) -> "
                        "CompactionResult (default: the function's compaction_protocol attribute, else messages)")
    p.add_argument("--timeout", type=_positive_number("--timeout"), default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"per-call timeout for the summarizer (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--inline", action="store_true",
                   help="call the summarizer in this process (faster, but no timeout and no kill on a hang)")
    p.add_argument("--cache-dir", metavar="DIR", help="also keep the summarizer call cache on disk here")
    p.add_argument("--summarizer-version", metavar="TEXT", default=None,
                   help="key the call cache by this instead of a hash of the summarizer's code (use it when answers "
                        "depend on more than the code: a prompt file, a model name)")
    p.add_argument("--max-result-chars", type=_whole_number("--max-result-chars"), default=None,
                   metavar="N", help=f"a result larger than this (as JSON) is a summarizer failure (default "
                                     f"{DEFAULT_MAX_RESULT_CHARS:,}, or {RESULT_CHARS_PER_TOKEN} per token of a budget "
                                     f"over {DEFAULT_MAX_RESULT_CHARS // RESULT_CHARS_PER_TOKEN:,})")
    p.add_argument("--redact-env", action="append", default=[], metavar="NAME",
                   help="also redact this environment variable's value from everything written (repeatable; "
                        "names like *_KEY, *_TOKEN, *SECRET* are redacted anyway)")
    p.add_argument("--extend", action="append", default=[], metavar="MODULE",
                   help="import this module (or path/to/file.py) first, here and beside the summarizer, for the "
                        "oracles it registers (@oracles.oracle) and the fact kinds it defines "
                        "(harness.define_kind) (repeatable)")
    p.add_argument("--rules", metavar="SPEC", default=None,
                   help="module:OBJECT or path/to/file.py:OBJECT naming your own oracles.ProseRules (cue lists, "
                        "windows, reading units)")
    p.add_argument("--trials", type=_whole_number("--trials", minimum=0), default=DEFAULT_TRIALS, metavar="K",
                   help=f"re-ask each minimal failure (replay: each entry saved as flaky) K times with the cache bypassed "
                        f"and report how often it fails; "
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


def _share(name: str):
    """An argparse type for a share in (0, 1], or a percentage such as 90%."""
    return _argparse_type(share, name)


def _add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--report-json", metavar="FILE", help="write the full report as JSON")
    p.add_argument("--report-html", metavar="FILE",
                   help="write a self-contained HTML report: minimal failures with the obligation highlighted, "
                        "survival curves per fact kind, summarizer failures")
    p.add_argument("--junit-xml", metavar="FILE", help="write JUnit XML (one test case per oracle) for CI systems")
    p.add_argument("--show-context", action="store_true",
                   help="print what the summarizer returned for each failure whole, message by message (by "
                        "default one clipped line); tool calls and results are marked either way")
    p.add_argument("--survival-threshold", type=_share("--survival-threshold"), default=DEFAULT_THRESHOLD, metavar="SHARE",
                   help=f"the HTML report marks the first round a kind's share kept falls below this "
                        f"(default {DEFAULT_THRESHOLD * 100:.0f}%%)")


def _add_unclear_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--unclear", choices=UNCLEAR_MODES, default="review",
                   help="what a reading the oracles could not settle does: review (the default) lists it in its "
                        "own section of every report and leaves the exit code alone; fail makes it fail the run")


_SPECS = "module:function, path/to/file.py:function, openai:MODEL, http://HOST:PORT/PATH or cmd:COMMAND ARGS..."


def _add_summarizer_options(p: argparse.ArgumentParser, *, required: bool, many: bool = False,
                            max_time_help: str = "stop after this long and report what was found (exit 4 if "
                                                 "examples were left unjudged)") -> None:
    if many:
        p.add_argument("--summarizer", required=True, action="append", metavar="SPEC",
                       help="module:function, path/to/file.py:function, openai:MODEL, http://... or cmd:...; give it "
                            "two or more times: the first is the baseline the others are compared with")
    else:
        kinds = ("module:function or path/to/file.py:function (fuzzing needs Python code)" if p.prog.endswith(" fuzz")
                 else _SPECS)
        p.add_argument("--summarizer", required=required, default=None if required else DEFAULT_SUMMARIZER,
                       metavar="SPEC", help=kinds
                       + ("" if required else f" (default: the bundled example, {DEFAULT_SUMMARIZER})"))
    _add_call_options(p, many=many)
    p.add_argument("--budget", type=_whole_number("--budget"), default=None, metavar="TOKENS",
                   help=f"token budget of the context; compaction fires at --trigger of it (default {DEFAULT_BUDGET}; for shrink "
                        "given a corpus entry, the budget the entry records)")
    p.add_argument("--trigger", type=_share("--trigger"), default=DEFAULT_TRIGGER, metavar="SHARE",
                   help=f"compact when the context passes this share of the budget, as a runtime does (default "
                        f"{DEFAULT_TRIGGER * 100:.0f}%%)")
    p.add_argument("--no-planned-cuts", dest="planned_cuts", action="store_false",
                   help="compact only when the trigger fires, never at the generator's adversarial cut points "
                        "(between a call and its result, right after a change): a session as your runtime runs it")
    p.add_argument("--no-tighten", dest="tighten", action="store_false",
                   help="keep the budget of every compaction the same (by default some sessions lower it from a "
                        "round on, so summaries of summaries are written at a deeper tier)")
    p.add_argument("--only", type=_ids, default=None, metavar="ID,...", help="run only these oracles")
    p.add_argument("--skip", type=_ids, default=(), metavar="ID,...", help="skip these oracles")
    _add_unclear_option(p)
    p.add_argument("--dialect", choices=DIALECTS, default=DEFAULT_DIALECT,
                   help="the message shape a messages summarizer is called with and answers in: chat (OpenAI chat "
                        "completions, the default), anthropic (a Messages API body: system and messages of content "
                        "blocks) or openai-responses (a list of Responses API input items)")
    p.add_argument("--stop-on-error", action="store_true", help="stop at the first summarizer failure")
    p.add_argument("--token-counter", metavar="SPEC", default=None,
                   help="module:function counting tokens in a string (default: words plus punctuation marks)")
    p.add_argument("--max-time", type=_positive_number("--max-time"), default=None, metavar="SECONDS",
                   help=max_time_help)
    p.add_argument("--shrink-calls", type=_whole_number("--shrink-calls"), default=None,
                   metavar="N", help=f"new summarizer calls shrinking one failure may make (default "
                                     f"{DEFAULT_SHRINK_CALLS}, or {FAST_SHRINK_CALLS} for a summarizer answering in "
                                     f"under {FAST_CALL_SECONDS * 1000:g} ms a call or "
                                     f"{FAST_SECONDS_PER_KTOKEN * 1000:g} ms per 1,000 tokens); then the smallest "
                                     f"so far is reported")
    p.add_argument("--max-calls", type=_whole_number("--max-calls"), default=None, metavar="N",
                   help="new summarizer calls the whole run may make: exploration stops early enough to leave "
                        "shrinking some, and the report says the cap was reached")
    p.add_argument("--max-tokens", type=_whole_number("--max-tokens"), default=None, metavar="N",
                   help="prompt + completion tokens the whole run may spend (summarizers that report usage: openai, "
                        "or an http/cmd answer's 'usage')")
    _add_report_options(p)


def _shard(text: str) -> tuple[int, int]:
    """``K/N``: the K-th (1-based) of N shards."""
    k, slash, n = text.partition("/")
    try:
        shard = (int(k), int(n)) if slash else None
    except ValueError:
        shard = None
    if shard is None or not 1 <= shard[0] <= shard[1]:
        raise argparse.ArgumentTypeError(f"--shard expects K/N with 1 <= K <= N (the K-th of N shards), got {text!r}")
    return shard


def _add_size_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-windows", type=_whole_number("--max-windows"), default=DEFAULT_MAX_WINDOWS, metavar="W",
                   help=f"longest session, in windows (a window: the tokens from an empty context to the trigger); "
                        f"sessions span 1 to W windows of real-sized tool output, so a compactor that keeps "
                        f"everything compacts about once a window (default {DEFAULT_MAX_WINDOWS})")
    p.add_argument("--max-turns", type=_whole_number("--max-turns"), default=None, metavar="T",
                   help="cap every session at T turns, whatever its windows (default: no cap)")


def _add_background_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--background", metavar="PATH",
                   help="your own session logs as the filler, read as your tools write them (Claude Code or Codex "
                        "JSONL, Agents SDK items, an Anthropic body, a LangChain dump, chat messages): a file or a "
                        "folder of *.json and *.jsonl files; our obligations are planted between their turns")


def _add_sharing_options(p: argparse.ArgumentParser) -> None:
    """Splitting one night's run over machines, and what they share (``harness._app.running._database``)."""
    p.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                   help="judge only the K-th of N disjoint parts of the seed's examples (by example index): N "
                        "machines given the same seed run exactly the unsharded run's examples")
    p.add_argument("--database", metavar="DIR|redis://HOST:PORT/DB", default=None,
                   help="keep each finding's minimal transcript (and Hypothesis's shrunk examples) here, and judge "
                        "them first on the next run: a directory, or a Redis shared by a night's shards (multiplexed "
                        "with the directory .hypothesis/compaction-harness); a Redis that does not answer is exit 2")
    p.add_argument("--database-readonly", action="store_true",
                   help="read what the shared Redis holds, write nothing to it")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="compaction-harness",
        description="Property-based and fuzz testing for transcript compactors (summarizers).",
    )
    parser.add_argument("--version", action="version", version=f"compaction-harness {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = _command(sub, parser, "run", help="generate transcripts, run the summarizer, report minimal failures")
    _add_summarizer_options(run, required=False)
    run.add_argument("--examples", type=_whole_number("--examples"), default=DEFAULT_EXAMPLES, metavar="N",
                     help=f"transcripts to generate (default {DEFAULT_EXAMPLES})")
    run.add_argument("--jobs", type=_whole_number("--jobs"), default=1, metavar="K",
                     help="judge up to K sessions at once (worth it when the summarizer waits on a model or a "
                          "server); the result is the same as with --jobs 1 (default 1)")
    run.add_argument("--seed", type=_whole_number("--seed", minimum=0), default=None, metavar="S", help="seed (default: random, printed)")
    _add_size_options(run)
    run.add_argument("--corpus", metavar="DIR", help="save every new minimal failure into this corpus directory")
    run.add_argument("--consumer", type=_consumer, action="append", default=[], metavar="NAME=ID,...",
                     help="declare a reader of the compacted context and the invariant classes (oracle ids) it relies "
                          "on, e.g. router=handle-retained,closure; a result the oracles did not verify for it is a "
                          "consumer-requirements violation (repeatable)")
    _add_background_option(run)
    run.add_argument("--estimate", action="store_true",
                     help="say what the run will spend (calls and prompt tokens exploring, the most each finding may "
                          "add) without calling the summarizer, and exit; a run of a model (openai:, http://, cmd:) "
                          "prints it first anyway")
    _add_sharing_options(run)

    fuzz = _command(sub, parser, "fuzz", help="coverage-guided fuzzing of a Python summarizer's own code (atheris); "
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
    _add_background_option(fuzz)
    fuzz.add_argument("--corpus", metavar="DIR", help="save every new minimal failure into this corpus directory; the "
                                                      "fuzzer's own inputs then live beside it, in DIR.fuzz/")
    fuzz.add_argument("--fuzz-dir", metavar="DIR", default=None,
                      help="the fuzzer's directory (inputs/, failures/, crashes/); default DIR.fuzz/SUMMARIZER beside "
                           "--corpus, else .compaction-harness/fuzz/SUMMARIZER")
    fuzz.add_argument("--merge", nargs="+", metavar="DIR", default=None,
                      help="only merge these directories of fuzz inputs into the fuzz directory's inputs (libFuzzer's "
                           "-merge=1: an input is kept if it reaches new coverage), then exit")

    shrink = _command(sub, parser, "shrink", help="minimize the failures of one transcript given as JSON")
    shrink.add_argument("file", metavar="FILE", help="a transcript JSON document")
    _add_summarizer_options(shrink, required=True)
    shrink.add_argument("--max-file-mb", type=_positive_number("--max-file-mb", maximum=1024 * 1024), default=DEFAULT_MAX_FILE_MB,
                        metavar="MB", help=f"refuse larger transcript files (default {DEFAULT_MAX_FILE_MB})")

    replay = _command(sub, parser, "replay", help="replay a corpus: which saved failures does a summarizer still have?")
    replay.add_argument("directory", metavar="DIR", help="the corpus directory to replay")
    replay.add_argument("--summarizer", required=True, metavar="SPEC", help=_SPECS)
    replay.add_argument("--allow-empty", action="store_true",
                        help="exit 0 on a corpus with no entries (by default that is exit 2: a wrong directory)")
    replay.add_argument("--junit-xml", metavar="FILE", help="write JUnit XML (one test case per corpus entry)")
    _add_call_options(replay)

    comparing = _command(sub, parser, "compare", help="run two or more summarizers on the same transcripts (and corpus): "
                                               "what is new and fixed against the first; exit 1 on a new failure")
    _add_summarizer_options(comparing, required=True, many=True)
    comparing.add_argument("--examples", type=_whole_number("--examples"), default=DEFAULT_EXAMPLES, metavar="N",
                           help=f"transcripts to generate, the same for every summarizer (default {DEFAULT_EXAMPLES})")
    comparing.add_argument("--seed", type=_whole_number("--seed", minimum=0), default=None, metavar="S",
                           help="seed, shared by every summarizer (default: random, printed)")
    _add_size_options(comparing)
    comparing.add_argument("--jobs", type=_whole_number("--jobs"), default=1, metavar="K",
                           help="judge up to K sessions at once per summarizer (default 1)")
    _add_background_option(comparing)
    comparing.add_argument("--corpus", metavar="DIR", help="also replay this corpus with every summarizer")
    comparing.add_argument("--settle-trials", type=_whole_number("--settle-trials", minimum=0),
                           default=DEFAULT_SETTLE_TRIALS, metavar="N",
                           help="when a summarizer may vary: N more trials on every side for each failure the "
                                f"first --trials leave unsure (default {DEFAULT_SETTLE_TRIALS}; 0 leaves them unsure)")
    comparing.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                           help="judge only the K-th of N disjoint parts of the seed's examples, on every side")

    _add_gate_command(_command(sub, parser, "gate", help="a CI job's verdict: run the summarizer, replay the corpus, "
                                                         "and fail only on what --fail-on names against --baseline"))

    rendering = _command(sub, parser, "report", help="render saved JSON reports (--report-json) as one HTML page")
    rendering.add_argument("files", nargs="+", metavar="JSON", help="reports written by --report-json, oldest first")
    rendering.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file to write")
    rendering.add_argument("--title", default=None, metavar="TEXT", help="the page's heading")
    rendering.add_argument("--survival-threshold", type=_share("--survival-threshold"), default=DEFAULT_THRESHOLD, metavar="SHARE",
                           help=f"mark the first round a kind's share kept falls below this (default "
                                f"{DEFAULT_THRESHOLD * 100:.0f}%%)")
    rendering.add_argument("--max-file-mb", type=_positive_number("--max-file-mb", maximum=1024 * 1024),
                           default=DEFAULT_MAX_FILE_MB, metavar="MB", help=f"refuse larger files (default {DEFAULT_MAX_FILE_MB})")

    corpus = _command(sub, parser, "corpus", help="list, add, merge or dedupe corpus entries")
    corpus_sub = corpus.add_subparsers(dest="corpus_command", metavar="ACTION", parser_class=_Parser, required=True)
    kinds = _Parser(add_help=False)  # entries of a team's own fact kinds load once its module has defined them
    kinds.add_argument("--extend", action="append", default=[], metavar="MODULE",
                       help="import this module (or path/to/file.py) first, for the fact kinds it defines (repeatable)")
    _command(corpus_sub, corpus, "list", help="show the entries of a corpus", parents=[kinds]
                          ).add_argument("directory", metavar="DIR", help="the corpus directory")
    add = _command(corpus_sub, corpus, "add", help="validate entry files and add them to a corpus", parents=[kinds])
    add.add_argument("directory", metavar="DIR", help="the corpus to add to (created if missing)")
    add.add_argument("files", nargs="+", metavar="FILE", help="entry files (all are checked before any is added)")
    merge = _command(corpus_sub, corpus, "merge", help="merge the corpora of several CI shards into one", parents=[kinds])
    merge.add_argument("directory", metavar="DEST", help="the corpus to merge into (created if missing)")
    merge.add_argument("sources", nargs="+", metavar="SRC", help="corpus directories to merge from")
    changes = _command(corpus_sub, corpus, "changes", parents=[kinds],
                       help="what a corpus gained from BEFORE to AFTER: new failures, unsure ones, entries replaced")
    changes.add_argument("before", metavar="BEFORE", help="a copy of the corpus before merge and dedupe")
    changes.add_argument("after", metavar="AFTER", help="the corpus after them")
    changes.add_argument("--report-json", metavar="FILE", help="also write the lists as JSON")
    dedupe = _command(corpus_sub, corpus, "dedupe",  # --extend, for the kinds, is a call option here
                      help="keep one entry per root cause and fact kind: the one failing most surely, then the smallest")
    dedupe.add_argument("directory", metavar="DIR", help="the corpus directory")
    dedupe.add_argument("--summarizer", default=None, metavar="SPEC",
                        help="replay the entries of each cause that has several first, and keep one that still fails: "
                             "no entry still failing is removed unless one kept for its cause still fails too")
    _add_call_options(dedupe)

    audit = _command(sub, parser, "audit", help="judge one real compaction: messages before, context after, obligations")
    audit.add_argument("--before", required=True, metavar="FILE",
                       help="JSON: the chat messages that were compacted (role/content/tool_calls/tool_call_id)")
    audit.add_argument("--after", required=True, metavar="FILE",
                       help="JSON: the context that replaced them: a string, chat messages, or "
                            "{\"messages\": [...], \"ledger\": [...]}")
    audit.add_argument("--obligations", required=True, metavar="FILE",
                       help="JSON: {\"obligations\": [{\"kind\", \"literals\", ...}]} (see docs/how-to/audit.md)")
    audit.add_argument("--budget", type=_whole_number("--budget"), default=None, metavar="TOKENS",
                       help="the context's token budget (default: none, and the budget oracles never fire)")
    audit.add_argument("--only", type=_ids, default=None, metavar="ID,...", help="run only these oracles")
    audit.add_argument("--skip", type=_ids, default=(), metavar="ID,...", help="skip these oracles")
    _add_unclear_option(audit)
    audit.add_argument("--rules", metavar="SPEC", default=None, help="module:OBJECT or path/to/file.py:OBJECT naming your own oracles.ProseRules")
    audit.add_argument("--extend", action="append", default=[], metavar="MODULE",
                       help="import this module first, for its oracles and fact kinds (repeatable)")
    audit.add_argument("--token-counter", metavar="SPEC", default=None, help="module:function counting tokens")
    audit.add_argument("--max-file-mb", type=_positive_number("--max-file-mb", maximum=1024 * 1024),
                       default=DEFAULT_MAX_FILE_MB, metavar="MB", help=f"refuse larger files (default {DEFAULT_MAX_FILE_MB})")
    audit.add_argument("--report-json", metavar="FILE", help="write the findings as JSON")

    add_init_arguments(_command(sub, parser, "init", help="write a starter for a new team: a summarizer wrapper, a "
                                                            "pytest test, a corpus directory and a CI workflow"))

    catalogue = _command(sub, parser, "oracles", help="list the invariant catalogue")
    catalogue.add_argument("--extend", action="append", default=[], metavar="MODULE",
                           help="import this module first, so the oracles it registers are listed (repeatable)")
    return parser


def _add_gate_command(gate: argparse.ArgumentParser) -> None:
    """``gate``: ``run``'s options, the corpus it replays, the baseline it is judged against, what fails it and
    where it says so (``harness._app.reports._gate``)."""
    _add_summarizer_options(gate, required=True,
                            max_time_help=f"stop exploring after this long and judge what was found (default: none; "
                                          f"{PR_MAX_TIME:g} in pull-request mode); fails the gate only under "
                                          f"--fail-on any")
    gate.add_argument("--mode", choices=MODES, default="nightly",
                      help=f"nightly (the default): the run's defaults, a random seed unless --seed; pull-request: a "
                           f"short bounded run (--examples {PR_EXAMPLES}, --max-time {PR_MAX_TIME:g} unless given) "
                           f"with the baseline's seed (else {PR_SEED}), so a deterministic summarizer is judged on "
                           f"the baseline's transcripts when the options match")
    gate.add_argument("--examples", type=_whole_number("--examples"), default=None, metavar="N",
                      help=f"transcripts to generate (default {DEFAULT_EXAMPLES}; {PR_EXAMPLES} in pull-request mode)")
    gate.add_argument("--jobs", type=_whole_number("--jobs"), default=1, metavar="K", help="judge up to K sessions at once")
    gate.add_argument("--seed", type=_whole_number("--seed", minimum=0), default=None, metavar="S",
                      help=f"seed (default: random; in pull-request mode the baseline's, else {PR_SEED})")
    _add_size_options(gate)
    _add_background_option(gate)
    _add_sharing_options(gate)
    gate.add_argument("--corpus", metavar="DIR", default=None,
                      help="replay this corpus too (read, never written): an entry failing now that passed in the "
                           "baseline's own replay is new; one failing in both, or not in the baseline's, is known")
    gate.add_argument("--save", metavar="DIR", default=None,
                      help="save each minimal failure of the run here as a corpus entry (not inside --corpus: merge "
                           "them into it with `corpus merge`)")
    gate.add_argument("--baseline", action="append", default=[], metavar="FILE",
                      help="the JSON report to judge against: --report-json of an earlier gate (last night's, the "
                           "base branch's) or run; give the shards of one run each once; without it every failure is new")
    gate.add_argument("--allow-missing-baseline", action="store_true",
                      help="a --baseline file that does not exist is no baseline (a first night, a cache that missed): "
                           "every failure is new, and the summary says why (by default it is exit 2)")
    gate.add_argument("--fail-on", choices=FAIL_ON, default="new",
                      help="what fails the gate (exit 1): new (the default) a failure the baseline did not have, or "
                           "the summarizer failing, or a corpus entry not judged; any: also known failures and an "
                           "incomplete run; none: nothing the run finds")
    gate.add_argument("--sarif", metavar="FILE",
                      help="write every failure present as SARIF 2.1.0 (GitHub code scanning), at the summarizer's "
                           "file and line: new ones as errors, known ones as warnings")
    gate.add_argument("--annotations", action="store_true",
                      help="print GitHub workflow commands (::error file=...,line=...::) annotating the summarizer's "
                           "file with each new failure (::warning for known ones) and its minimal transcript")
    gate.add_argument("--source", metavar="PATH[:LINE]", default=None,
                      help="where --sarif and --annotations point (default: the file and line defining a "
                           "module:function or file.py:function summarizer; other summarizers have none)")
    gate.add_argument("--step-summary", metavar="FILE", default=None,
                      help="append the verdict, the failures by root cause against the baseline and the paths of the "
                           "reports as Markdown (in GitHub Actions: \"$GITHUB_STEP_SUMMARY\")")
    gate.add_argument("--github-output", metavar="FILE", default=None,
                      help="append the verdict, the counts and the paths written as NAME=VALUE lines (in GitHub "
                           "Actions: \"$GITHUB_OUTPUT\")")

