"""The ``compaction-harness`` command line's entry point: parse, load a team's modules, run the command,
and turn every error into its exit code (``harness._app._outcome.ExitCode``).

Exit codes: 0 every example judged and nothing violated (unclear readings are
shown for review and do not count unless ``--unclear fail``), 1 violations found,
2 usage or input error, 3 the summarizer itself failed (and nothing was
violated), 4 incomplete: ``--max-time``, a spend cap or an interrupt (SIGINT, SIGTERM)
ended the work before everything asked for was judged, and nothing was violated.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import threading
import traceback

from harness._base._errors import HarnessError, InfraError, InvalidArgument
from harness._app._outcome import ExitCode
from harness._app.calling._loading import checked_counter, load_module, load_rules
from harness._app.calling._options import DEFAULT_LOAD_TIMEOUT
from harness._app.calling._probe import probe
from harness._app.calling._redact import Redactor
from harness._app.cli._commands import COMMANDS, check_prompt
from harness._app.cli._outputs import Outputs
from harness._app.cli._parser import DEFAULT_SUMMARIZER, build_parser
from harness._app.reports._text import printable
from harness.oracles import select

__all__ = ["main", "DEFAULT_SUMMARIZER"]


def main(argv: list[str] | None = None) -> ExitCode:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    libfuzzer: list[str] = []
    if argv[:1] == ["fuzz"] and "--" in argv:  # what follows "--" is libFuzzer's
        libfuzzer = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    try:
        args = parser.parse_args(argv)
        args.libfuzzer = libfuzzer
    except SystemExit as exc:  # --help, --version, or a usage error already printed
        return ExitCode(exc.code) if exc.code in set(ExitCode) else ExitCode.USAGE
    if args.command is None:
        parser.print_help()
        return ExitCode.OK
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, _interrupt) for sig in _STOP_SIGNALS} if in_main_thread else {}
    outputs = Outputs({})
    try:
        if args.command not in ("corpus", "oracles", "init") or getattr(args, "corpus_command", None) == "changes":
            outputs = Outputs.check(args)
        if args.command in ("run", "shrink", "fuzz", "replay", "compare", "gate"):
            check_prompt(args)
        if args.command != "report":
            for module in args.extend:  # before anything selects oracles or loads facts: their definitions must be in
                _load_in_harness(args, module, "--extend", load_module)
            if args.command not in ("oracles", "corpus", "init") and args.rules:
                _load_in_harness(args, args.rules, "--rules", load_rules)
            if args.command not in ("oracles", "corpus", "replay", "init"):
                _validate_ids(args)
        return COMMANDS[args.command](args, outputs)
    except InfraError as exc:  # the adapter reports these as findings; one reaching here is still the summarizer's
        print(f"InfraError: {printable(_redacted(args, str(exc)))}", file=sys.stderr)
        outputs.discard_unwritten()
        return ExitCode.SUMMARIZER
    except HarnessError as exc:
        print(f"{type(exc).__name__}: {printable(_redacted(args, str(exc)))}", file=sys.stderr)
        outputs.discard_unwritten()
        return ExitCode.USAGE
    except KeyboardInterrupt:
        print("interrupted before anything was judged", file=sys.stderr)
        outputs.discard_unwritten()
        return ExitCode.INCOMPLETE
    except BrokenPipeError:  # the reader went away (`| head`): not an error of ours, and nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush cannot fail again
        # Only the catalogue is a listing with no verdict in it; anything else (a corpus listing that would
        # have named unreadable files, a report) was not delivered whole: incomplete, never a silent 0.
        return ExitCode.OK if args.command == "oracles" else ExitCode.INCOMPLETE
    except Exception as exc:  # a bug of ours: say so plainly; the traceback only on request
        print(f"InternalError: {type(exc).__name__}: {exc} (set COMPACTION_HARNESS_DEBUG=1 for the traceback)",
              file=sys.stderr)
        if os.environ.get("COMPACTION_HARNESS_DEBUG"):
            traceback.print_exc()
        outputs.discard_unwritten()
        return ExitCode.USAGE
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
