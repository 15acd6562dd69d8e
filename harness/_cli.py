"""The ``compaction-harness`` command line: a thin layer over the library.

Exit codes: 0 nothing violated, 1 violations found, 2 usage or input error,
3 the summarizer itself failed (and nothing was violated).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from harness import __version__
from harness._errors import HarnessError

__all__ = ["main", "DEFAULT_SUMMARIZER"]

# The bundled example: a plausible extractive summarizer with the failures real ones have.
DEFAULT_SUMMARIZER = "harness.summarizers.example:summarize"

EXIT_OK, EXIT_VIOLATIONS, EXIT_USAGE, EXIT_SUMMARIZER = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own usage errors: exit 2 without a traceback
        self.print_usage(sys.stderr)
        print(f"UsageError: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _ids(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


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


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout expects seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"--timeout expects seconds > 0, got {text}")
    return value


def _add_summarizer_options(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument("--summarizer", required=required, default=None if required else DEFAULT_SUMMARIZER,
                   metavar="SPEC", help="module:function or path/to/file.py:function"
                   + ("" if required else f" (default: the bundled example, {DEFAULT_SUMMARIZER})"))
    p.add_argument("--protocol", choices=("messages", "rich"), default=None,
                   help="messages: fn(messages, budget) -> messages | str; rich: fn(CompactionRequest) -> "
                        "CompactionResult (default: the function's compaction_protocol attribute, else messages)")
    p.add_argument("--budget", type=_whole_number("--budget"), default=2000, metavar="TOKENS",
                   help="token budget of the context; compaction fires at 80%% of it (default 2000)")
    p.add_argument("--only", type=_ids, default=None, metavar="ID,...", help="run only these oracles")
    p.add_argument("--skip", type=_ids, default=(), metavar="ID,...", help="skip these oracles")
    p.add_argument("--timeout", type=_seconds, default=30.0, metavar="SECONDS",
                   help="per-call timeout for the summarizer (default 30)")
    p.add_argument("--inline", action="store_true",
                   help="call the summarizer in this process (faster, but no timeout)")
    p.add_argument("--stop-on-error", action="store_true", help="stop at the first summarizer failure")
    p.add_argument("--token-counter", metavar="SPEC", default=None,
                   help="module:function counting tokens in a string (default: words plus punctuation marks)")
    p.add_argument("--cache-dir", metavar="DIR", help="also keep the summarizer call cache on disk here")
    p.add_argument("--report-json", metavar="FILE", help="write the full report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress output (for CI logs)")


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
    run.add_argument("--seed", type=_whole_number("--seed", minimum=0), default=None, metavar="S", help="seed (default: random, printed)")
    run.add_argument("--max-turns", type=_whole_number("--max-turns"), default=400, metavar="T",
                     help="longest transcript to generate (default 400; try 4000)")
    run.add_argument("--corpus", metavar="DIR", help="save every new minimal failure into this corpus directory")

    shrink = sub.add_parser("shrink", help="minimize the failures of one transcript given as JSON")
    shrink.add_argument("file", metavar="FILE", help="a transcript JSON document")
    _add_summarizer_options(shrink, required=True)

    replay = sub.add_parser("replay", help="replay a corpus: which saved failures does a summarizer still have?")
    replay.add_argument("directory", metavar="DIR")
    replay.add_argument("--summarizer", required=True, metavar="SPEC")
    replay.add_argument("--protocol", choices=("messages", "rich"), default=None,
                        help="the summarizer's protocol (default: as recorded when the entry's summarizer is "
                             "this one, else messages)")
    replay.add_argument("--timeout", type=_seconds, default=30.0, metavar="SECONDS")
    replay.add_argument("--inline", action="store_true")
    replay.add_argument("--quiet", action="store_true")

    corpus = sub.add_parser("corpus", help="list, add, merge or dedupe corpus entries")
    corpus_sub = corpus.add_subparsers(dest="corpus_command", metavar="ACTION", parser_class=_Parser, required=True)
    corpus_sub.add_parser("list", help="show the entries of a corpus").add_argument("directory", metavar="DIR")
    add = corpus_sub.add_parser("add", help="validate entry files and add them to a corpus")
    add.add_argument("directory", metavar="DIR")
    add.add_argument("files", nargs="+", metavar="FILE")
    merge = corpus_sub.add_parser("merge", help="merge the corpora of several CI shards into one")
    merge.add_argument("directory", metavar="DEST")
    merge.add_argument("sources", nargs="+", metavar="SRC")
    corpus_sub.add_parser("dedupe", help="keep the smallest entry per summarizer, invariant and fact kind"
                          ).add_argument("directory", metavar="DIR")

    sub.add_parser("oracles", help="list the invariant catalogue")
    return parser


def _config(args, **extra):
    from harness._runner import RunConfig

    from harness._adapters import declared_protocol, load_callable

    protocol = args.protocol or declared_protocol(load_callable(args.summarizer))
    return RunConfig(summarizer=args.summarizer, protocol=protocol, budget=args.budget, only=args.only,
                     skip=args.skip, timeout=args.timeout, isolation="inline" if args.inline else "process",
                     stop_on_error=args.stop_on_error, cache_dir=args.cache_dir, quiet=args.quiet,
                     token_counter=args.token_counter, **extra)


def _finish(result, args) -> int:
    from harness._report import render_text, write_json

    print(render_text(result))
    if args.report_json:
        write_json(result, args.report_json)
    return result.exit_code


def _run(args) -> int:
    from harness._runner import run

    config = _config(args, examples=args.examples, seed=args.seed, max_turns=args.max_turns)
    result = run(config)
    code = _finish(result, args)
    if args.corpus:
        saved = _save_failures(result, args.corpus)
        print(f"corpus {args.corpus}: {saved} new entr{'y' if saved == 1 else 'ies'}")
    return code


def _save_failures(result, directory: str) -> int:
    from harness import __version__
    from harness._corpus import CorpusEntry, now, save_entry

    stamp = now()
    return sum(
        save_entry(CorpusEntry(f.invariant, f.fact_kind, result.config.summarizer, result.config.protocol,
                               result.config.budget, f.transcript, __version__, stamp, f.detail), directory)[1]
        for f in result.failures
    )


def _replay(args) -> int:
    from harness._replay import replay_corpus

    outcomes, errors = replay_corpus(args.directory, args.summarizer, protocol=args.protocol, timeout=args.timeout,
                                     isolation="inline" if args.inline else "process", quiet=args.quiet)
    marks = {"failing": "✗ still failing", "fixed": "✓ fixed", "infra": "! summarizer failed"}
    for o in outcomes:
        print(f"{marks[o.status]:18} {o.path.name}  {o.entry.invariant} ({o.entry.fact_kind or 'structure'}), "
              f"{len(o.entry.transcript.turns)} turns: {o.detail}")
    for error in errors:
        print(f"{'! unreadable':18} {error}", file=sys.stderr)
    counts = {s: sum(o.status == s for o in outcomes) for s in marks}
    print(f"{len(outcomes)} replayed: {counts['failing']} still failing, {counts['fixed']} fixed, "
          f"{counts['infra']} summarizer failures, {len(errors)} unreadable")
    if counts["failing"]:
        return EXIT_VIOLATIONS
    if errors:
        return EXIT_USAGE
    return EXIT_SUMMARIZER if counts["infra"] else EXIT_OK


def _corpus(args) -> int:
    from harness._corpus import dedupe_corpus, load_corpus, load_entry, merge_corpora, save_entry

    if args.corpus_command == "list":
        entries, errors = load_corpus(args.directory)
        for path, e in entries:
            print(f"{path.name}  {e.invariant:26} {e.fact_kind or 'structure':20} {len(e.transcript.turns):>4} turns  "
                  f"{e.summarizer}  {e.found_at}")
        for error in errors:
            print(f"! unreadable {error}", file=sys.stderr)
        print(f"{len(entries)} entries, {len(errors)} unreadable")
        return EXIT_USAGE if errors else EXIT_OK
    if args.corpus_command == "add":
        added = 0
        for file in args.files:
            added += save_entry(load_entry(file), args.directory)[1]
        print(f"added {added} new entr{'y' if added == 1 else 'ies'} to {args.directory}")
        return EXIT_OK
    if args.corpus_command == "merge":
        added, present, errors = merge_corpora(args.directory, args.sources)
        for error in errors:
            print(f"! unreadable {error}", file=sys.stderr)
        print(f"merged into {args.directory}: {added} added, {present} already there, {len(errors)} unreadable")
        return EXIT_USAGE if errors else EXIT_OK
    removed = dedupe_corpus(args.directory)
    print(f"removed {len(removed)} duplicate entr{'y' if len(removed) == 1 else 'ies'}")
    return EXIT_OK


def _shrink(args) -> int:
    from harness._codec import load
    from harness._runner import shrink_transcript

    transcript = load(args.file)
    return _finish(shrink_transcript(transcript, _config(args)), args)


def _oracles(args) -> int:
    from oracles import registered

    for o in registered():
        print(f"{o.id:28} {o.severity.value:8} {o.scope:10} [{o.reference}] {o.summary}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    try:
        if args.command == "oracles":
            return _oracles(args)
        if args.command == "corpus":
            return _corpus(args)
        if args.command == "replay":
            return _replay(args)
        _validate_ids(args)
        return _run(args) if args.command == "run" else _shrink(args)
    except HarnessError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a bug of ours: say so plainly; the traceback only on request
        print(f"InternalError: {type(exc).__name__}: {exc} (set COMPACTION_HARNESS_DEBUG=1 for the traceback)",
              file=sys.stderr)
        if os.environ.get("COMPACTION_HARNESS_DEBUG"):
            traceback.print_exc()
        return EXIT_USAGE


def _validate_ids(args) -> None:
    from harness._adapters import load_callable
    from oracles import select

    select(only=args.only, skip=args.skip)  # raises InvalidArgument naming unknown ids
    if args.token_counter:
        load_callable(args.token_counter, option="--token-counter")  # SpecError naming the option


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
