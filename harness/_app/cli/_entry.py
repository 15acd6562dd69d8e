"""The process's entry point (``compaction-harness``, ``python -m harness``): run the command line, and end with
an exit code and one line on stderr even when the harness cannot start.

``_main`` turns every error of a command into its exit code, but it cannot catch its own import failing (a
broken install), nor an error outside its own handling. Those end here as an internal error, exit 2 like
``_main``'s own, and never exit 1, which says that a violation was found.
"""

from __future__ import annotations

import os
import sys
import traceback

from harness._app._outcome import ExitCode

__all__ = ["main", "INTERNAL_ERROR"]

#: The exit code of an error of the harness's own (``_main`` says ``InternalError`` with it too).
INTERNAL_ERROR = ExitCode.USAGE

_DEBUG = "COMPACTION_HARNESS_DEBUG"


def main(argv: list[str] | None = None) -> ExitCode:
    """``_main.main``, imported here so that failing to import it is an exit code too."""
    try:
        from harness._app.cli._main import main as run  # lazy: this import is what may fail
    except KeyboardInterrupt:
        return _interrupted()
    except BaseException as exc:  # SystemExit too: a shadowing package may call sys.exit(1) as it is imported
        return _internal(_start_failure(exc))
    try:
        return run(argv)
    except KeyboardInterrupt:  # before or after _main's own handling (its signal handlers are set inside it)
        return _interrupted()
    except BaseException as exc:  # what escaped _main's own handling
        return _internal(f"{type(exc).__name__}: {_line(exc)}")


def _interrupted() -> ExitCode:
    print("interrupted before anything was judged", file=sys.stderr)
    return ExitCode.INCOMPLETE


def _internal(cause: str) -> ExitCode:
    print(f"InternalError: {cause} (set {_DEBUG}=1 for the traceback)", file=sys.stderr)
    if os.environ.get(_DEBUG):
        traceback.print_exc()
    return INTERNAL_ERROR


def _start_failure(exc: BaseException) -> str:
    """What stopped the harness's own modules from importing, in words a user can act on."""
    if isinstance(exc, ImportError):
        return (f"cannot import the harness's modules: {type(exc).__name__}: {_line(exc)} (a broken install? "
                f"reinstall compaction-harness)")
    return f"the harness failed to start: {type(exc).__name__}: {_line(exc)}"


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or repr(exc)
