"""The files a command writes: checked before any work starts, written each on its own, and removed when the
command ends in an error, so a finished run is never lost and last night's files never pass as tonight's."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable

from harness._base._errors import InvalidArgument, PathError
from harness._base._files import output_dir, output_file, write_atomic
from harness._app._outcome import ExitCode

__all__ = ["Outputs", "report_problems"]

#: The options naming a report file, by their argparse name.
_FILE_OPTIONS = {"report_json": "--report-json", "report_html": "--report-html", "junit_xml": "--junit-xml",
                 "output": "--output", "sarif": "--sarif"}
#: The files a command appends to, never replaces or removes: those GitHub Actions reads after a step.
_APPEND_OPTIONS = {"step_summary": "--step-summary", "github_output": "--github-output"}


class Outputs:
    """The report files asked for, by argparse name (``report_json``...), and which were written."""

    def __init__(self, paths: dict[str, str], appended: dict[str, str] | None = None):
        self.paths = paths
        self.appended = appended or {}
        self._written: set[str] = set()

    @classmethod
    def check(cls, args) -> Outputs:
        """Every path the command will write, checked before any work starts: each a writable file, no two
        the same, none over a file or folder the command reads; the corpus and cache directories made."""
        paths: dict[str, str] = {}
        by_real: dict[str, str] = {}
        for name, option in _FILE_OPTIONS.items():
            if getattr(args, name, None) is not None:
                path = str(output_file(getattr(args, name), option=option))
                real = os.path.realpath(path)
                if real in by_real:
                    raise InvalidArgument(f"{option} {path!r} is also {by_real[real]}: one file cannot hold both "
                                          f"reports")
                by_real[real], paths[name] = option, path
        for option, path in _inputs(args):  # a report never writes over what the command reads
            real = os.path.realpath(path)
            clash = by_real.get(real) or next((o for w, o in by_real.items() if os.path.isdir(real)
                                               and w.startswith(real.rstrip(os.sep) + os.sep)), None)
            if clash:
                name = next(n for n, o in _FILE_OPTIONS.items() if o == clash)
                raise InvalidArgument(f"{clash} {paths[name]!r} would write over {option} {path!r}, which this "
                                      f"command reads")
        if getattr(args, "corpus", None) is not None and args.command not in ("compare", "gate"):  # these only read it
            output_dir(args.corpus, option="--corpus")
        save = getattr(args, "save", None)
        for option, path in _inputs(args) if save is not None else ():  # nor a folder it writes inside one it reads
            real, saved = os.path.realpath(path), os.path.realpath(save)
            if os.path.isdir(real) and (saved == real or saved.startswith(real.rstrip(os.sep) + os.sep)):
                raise InvalidArgument(f"--save {save!r} is inside {option} {path!r}, which this command reads: save "
                                      f"elsewhere, then `corpus merge` the entries you keep")
        for name, option in (("save", "--save"), ("cache_dir", "--cache-dir")):
            if getattr(args, name, None) is not None:
                output_dir(getattr(args, name), option=option)
        appended = {name: getattr(args, name) for name in _APPEND_OPTIONS if getattr(args, name, None) is not None}
        for name, path in appended.items():
            try:
                with open(path, "a", encoding="utf-8"):
                    pass
            except OSError as exc:
                raise PathError(f"{_APPEND_OPTIONS[name]} {path!r}: {exc.strerror or exc} (expected a file this "
                                f"command may append to)") from None
        return cls(paths, appended)

    def get(self, name: str) -> str | None:
        return self.paths.get(name)

    def write(self, renderers: dict[str, Callable[[], str]]) -> list[str]:
        """Render and write each file asked for; each failure (a full disk, a bug of ours in one renderer) is
        one line of the returned list, and the other files are still written."""
        problems = []
        for name, render in renderers.items():
            path = self.paths.get(name)
            if not path:
                continue
            option = _FILE_OPTIONS[name]
            try:
                write_atomic(path, render())
                self._written.add(path)
            except OSError as exc:
                problems.append(f"PathError: {option} {path!r}: {exc.strerror or exc}")
            except Exception as exc:  # a bug of ours: the other reports are still written, and this is said
                problems.append(f"InternalError: writing {option} {path!r}: {type(exc).__name__}: {exc}")
        return problems

    def append(self, texts: dict[str, str]) -> list[str]:
        """Append each text to its file (``--step-summary``...), if asked for; each failure is one line returned."""
        problems = []
        for name, text in texts.items():
            path = self.appended.get(name)
            if path is None:
                continue
            try:
                with open(path, "a", encoding="utf-8") as handle:
                    handle.write(text)
            except OSError as exc:
                problems.append(f"PathError: {_APPEND_OPTIONS[name]} {path!r}: {exc.strerror or exc}")
        return problems

    def discard_unwritten(self) -> None:
        """After an error: remove the files asked for and not written (inputs were refused as outputs up front)."""
        for path in self.paths.values():
            if path not in self._written:
                with contextlib.suppress(OSError):
                    os.unlink(path)


def report_problems(problems: list[str], code: ExitCode) -> ExitCode:
    """Print what could not be written; a command that would have passed then exits 2."""
    for problem in problems:
        print(problem, file=sys.stderr)
    return ExitCode.USAGE if problems and code == ExitCode.OK else code


def _inputs(args) -> list[tuple[str, str]]:
    """The files and folders the command reads, by the option that names them."""
    out = [("JSON", f) for f in getattr(args, "files", None) or ()]
    out += [("--baseline", f) for f in getattr(args, "baseline", None) or ()]
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
