"""``compaction-harness init``: a starting point for a new team (a summarizer wrapper, a pytest test using the
plugin, a corpus directory and a CI workflow), each runnable at once.

The command's parser and its function; ``_parser`` and ``_commands`` only register them. The files' text is in
``_init_templates``.

Without ``--summarizer`` the wrapper holds a starter compactor in the rich protocol, the only one in which a
compactor small enough to read can be correct: it is told the obligations (the tags), while a messages
compactor must find them in the prose on its own, which no starter can do well enough to pass. A team with a
messages compactor names it (``--summarizer``) and the wrapper calls it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import io
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from harness._app._outcome import ExitCode
from harness._app.calling._frameworks import FRAMEWORKS
from harness._app.calling._loading import load_callable
from harness._app.calling._summarizer import ADAPTERS
from harness._app.cli import _init_templates as templates
from harness._base._dialects import DEFAULT_DIALECT, DIALECTS
from harness._base._errors import InvalidArgument
from harness._base._protocol import PROTOCOLS, RICH_PROTOCOL_VERSION, resolve_protocol

__all__ = ["add_init_arguments", "init_command", "installed_pin"]

WRAPPER = "summarizer_wrapper.py"
PYTEST_INI = "pytest.ini"
CORPUS_README = "corpora/README.md"
WORKFLOW = ".github/workflows/compaction.yml"
#: What the workflow runs, and what a team runs by hand: the same command.
TEST_COMMAND = "python -m pytest"
#: A pytest configuration beside which a pytest.ini would silently take over (pytest reads pytest.ini first).
_OTHER_PYTEST_CONFIGS = (("pyproject.toml", "[tool.pytest.ini_options]"), ("tox.ini", "[pytest]"),
                         ("setup.cfg", "[tool:pytest]"), (".pytest.ini", "[pytest]"))
_GITHUB_URL = re.compile(r"(?:git\+)?(?:https://(?:[^@/]+@)?github\.com/|ssh://git@github\.com/|git@github\.com:)"
                         r"(?P<repo>[\w.-]+/[\w.-]+?)(?:\.git)?/?")


def add_init_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``init`` command's options."""
    parser.add_argument("directory", nargs="?", default=".", metavar="DIR",
                        help="where to write the starter files (default: the current directory; created if missing)")
    parser.add_argument("--summarizer", metavar="MODULE:FUNCTION", default=None,
                        help="your existing compactor (module:function or path/to/file.py:function): the wrapper "
                             "imports it and calls it (default: a starter compactor in the wrapper, to replace)")
    parser.add_argument("--protocol", choices=PROTOCOLS, default=None,
                        help="the protocol the wrapper speaks: with --summarizer, your function's "
                             "compaction_protocol attribute, else messages (as run); without it, rich: the starter "
                             "is told the obligations, which a messages compactor must find on its own")
    parser.add_argument("--dialect", choices=DIALECTS, default=DEFAULT_DIALECT,
                        help=f"the message shape a messages wrapper is called with, and whose provider rules "
                             f"provider-valid applies (default {DEFAULT_DIALECT})")
    parser.add_argument("--force", action="store_true", help="overwrite the starter files where they exist")
    parser.set_defaults(extend=[], rules=None)


@dataclass(frozen=True)
class _StarterFile:
    """One file init writes: where in DIR (POSIX), its text, and what it is for (printed beside its path)."""
    relative: str
    text: str
    purpose: str


@dataclass(frozen=True)
class Pin:
    """The compaction-harness repository and commit the workflow installs."""
    repo: str
    ref: str


@dataclass(frozen=True)
class _Starter:
    """Everything init writes and says, decided before anything is written."""
    directory: Path
    files: tuple[_StarterFile, ...]
    notes: tuple[str, ...]
    next_commands: tuple[str, ...]


def init_command(args, outputs) -> ExitCode:
    """Write the starter files into ``args.directory``: every check first, so a refusal writes nothing."""
    starter = _plan(args)
    for file in starter.files:
        path = starter.directory / file.relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(file.text, encoding="utf-8")
        except OSError as exc:
            raise InvalidArgument(f"init {args.directory}: cannot write {path}: {exc.strerror or exc}") from None
    shown = str(Path(args.directory))
    print(f"compaction-harness init: wrote {len(starter.files)} files into {shown}")
    width = max(len(_shown_path(shown, f.relative)) for f in starter.files)
    for file in starter.files:
        print(f"  {_shown_path(shown, file.relative):<{width}}  {file.purpose}")
    for note in starter.notes:
        print(f"note: {note}")
    print("next:")
    for command in starter.next_commands:
        print(f"  {command}")
    return ExitCode.OK


def _shown_path(directory: str, relative: str) -> str:
    return relative if directory == "." else f"{directory.rstrip('/')}/{relative}"


def _plan(args) -> _Starter:
    directory = Path(args.directory)
    if directory.exists() and not directory.is_dir():
        raise InvalidArgument(f"init {args.directory}: not a directory")
    _refuse_a_pytest_config_beside(directory, args.directory)
    protocol, team_imports = _compactor(args, directory)
    wrapper = _wrapper(args, protocol, team_imports)
    repository_root = _repository_root(directory)
    working = _working_directory(directory, repository_root)
    pin = installed_pin()
    files = (
        _StarterFile(WRAPPER, wrapper, "the summarizer the harness calls; "
                     + ("it calls yours where it says YOUR COMPACTOR" if team_imports
                        else "replace its starter compactor with yours where it says YOUR COMPACTOR")),
        _StarterFile(PYTEST_INI, templates.fill(templates.PYTEST_INI, protocol=protocol, dialect=args.dialect),
                     f"`{TEST_COMMAND}` here runs the harness on the wrapper (the pytest plugin, profile ci)"),
        _StarterFile(CORPUS_README, templates.CORPUS_README,
                     "the corpus of minimal failures, replayed by pytest: commit it"),
        _StarterFile(WORKFLOW, _workflow(pin, working),
                     "CI: installs the harness and runs the same pytest"
                     + ("" if pin else " (set HARNESS_REPO and HARNESS_REF in it first)")),
    )
    _refuse_to_overwrite(directory, args.directory, files, args.force)
    notes = ()
    if working != ".":
        root_shown = os.path.relpath(repository_root) if repository_root else "."
        notes = (f"GitHub reads workflows at the repository's root only: move {_shown_path(args.directory, WORKFLOW)}"
                 f" to {_shown_path(root_shown, WORKFLOW)} (its steps already run in {working}).",)
    cd = "" if str(directory) == "." else f"cd {shlex.quote(str(directory))} && "
    run = (f"compaction-harness run --summarizer {WRAPPER}:summarize --protocol {protocol} --dialect {args.dialect} "
           f"--examples 200 --corpus corpora")
    return _Starter(directory, files, notes, (f"{cd}{TEST_COMMAND}", run))


def _refuse_a_pytest_config_beside(directory: Path, shown: str) -> None:
    """A pytest.ini beside another pytest configuration replaces it without a word: refuse, and say where to go."""
    for name, section in _OTHER_PYTEST_CONFIGS:
        path = directory / name
        try:
            configured = path.is_file() and section in path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            configured = False
        if configured:
            raise InvalidArgument(f"init {shown}: {_shown_path(shown, name)} configures pytest ({section}), and the "
                                  f"pytest.ini init writes would take its place: init into a folder of its own, "
                                  f"such as {_shown_path(shown, 'compaction')}")


def _refuse_to_overwrite(directory: Path, shown: str, files: tuple[_StarterFile, ...], force: bool) -> None:
    taken = [file.relative for file in files if os.path.lexists(directory / file.relative)]
    folders = [name for name in taken if (directory / name).is_dir()]
    if folders:
        raise InvalidArgument(f"init {shown}: {_shown_path(shown, folders[0])} is a folder, where init writes a file")
    if taken and not force:
        names = [_shown_path(shown, name) for name in taken]
        names = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        raise InvalidArgument(f"init {shown}: {names} already exist{'s' if len(taken) == 1 else ''}; init wrote "
                              f"nothing (--force overwrites)")


def _compactor(args, directory: Path) -> tuple[str, str]:
    """The protocol the wrapper speaks, and the lines importing the team's compactor ("" for the starter)."""
    if args.summarizer is None:
        if args.protocol == "messages":
            raise InvalidArgument("init --protocol messages needs --summarizer MODULE:FUNCTION, your compactor: a "
                                  "messages compactor is not told the obligations, so no starter small enough to read "
                                  "keeps them all (without --protocol, the starter is a rich one)")
        return "rich", ""
    spec = args.summarizer
    if spec.startswith((*ADAPTERS, *FRAMEWORKS)):
        raise InvalidArgument(f"init --summarizer {spec!r}: init wraps a Python function (module:function or "
                              f"path/to/file.py:function); give this spec to the plugin itself: "
                              f"python -m pytest --summarizer {spec}")
    target, sep, name = spec.rpartition(":")
    if not sep or not name.isidentifier():
        raise InvalidArgument(f"init --summarizer {spec!r}: expected module:function or path/to/file.py:function")
    fn = _load_from(directory, spec)
    protocol = resolve_protocol(fn, args.protocol, option="--protocol", spec=spec)
    return protocol, _import_lines(target, name, directory, spec)


def _load_from(directory: Path, spec: str):
    """The team's function, imported as the wrapper will import it when pytest runs in ``directory``."""
    folder = str(directory.resolve())
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return load_callable(spec, option="--summarizer")
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)


def _import_lines(target: str, name: str, directory: Path, spec: str) -> str:
    if not (target.endswith(".py") or "/" in target or os.sep in target):
        if not all(part.isidentifier() for part in target.split(".")):
            raise InvalidArgument(f"init --summarizer {spec!r}: {target!r} is not a module name")
        return f"from {target} import {name} as your_compactor"
    path = Path(target).resolve()
    if not path.stem.isidentifier():
        raise InvalidArgument(f"init --summarizer {spec!r}: {path.name!r} cannot be imported: its name is not a "
                              f"Python module name")
    try:
        folder = Path(os.path.relpath(path.parent, directory.resolve())).as_posix()
    except ValueError:  # another drive: only the absolute path reaches it
        folder = path.parent.as_posix()
    here = "Path(__file__).resolve().parent"
    where = here if folder == "." else f"({here} / {folder!r}).resolve()"
    return (f"import sys\nfrom pathlib import Path\n\n"
            f"sys.path.append(str({where}))  # the folder of {path.name}\n"
            f"from {path.stem} import {name} as your_compactor  # noqa: E402")


def _wrapper(args, protocol: str, team_imports: str) -> str:
    options = " ".join(part for part in (
        f"--summarizer {shlex.quote(args.summarizer)}" if args.summarizer else "",
        f"--protocol {protocol}", f"--dialect {args.dialect}") if part)
    if protocol == "rich":
        contract = ("a CompactionRequest (the turns to compact, the token budget and the live obligations as tags);\n"
                    "it returns a CompactionResult (or chat messages, or one string).")
        body = (templates.fill(templates.RICH_TEAM, imports=team_imports) if team_imports
                else templates.fill(templates.RICH_STARTER, version=str(RICH_PROTOCOL_VERSION)))
    else:
        argument, what_in, what_out = templates.DIALECT_CALLS[args.dialect]
        contract = f"{what_in}\nand a token budget; it returns {what_out}."
        body = templates.fill(templates.MESSAGES_TEAM, imports=team_imports, argument=argument)
    head = templates.fill(templates.WRAPPER_HEAD, options=options, protocol=protocol, dialect=args.dialect,
                          contract=contract)
    return head + body


def _workflow(pin: Pin | None, working: str) -> str:
    pinned = (templates.fill(templates.PIN_INSTALLED, repo=pin.repo, ref=pin.ref) if pin
              else templates.PIN_PLACEHOLDER)
    directory = "" if working == "." else templates.fill(templates.WORKFLOW_DIRECTORY, directory=json.dumps(working))
    return templates.fill(templates.WORKFLOW, pin=pinned, directory=directory, command=TEST_COMMAND)


def _repository_root(directory: Path) -> Path | None:
    """The git repository holding ``directory`` (which may not exist yet), or None."""
    for folder in (directory.resolve(), *directory.resolve().parents):
        if (folder / ".git").exists():
            return folder
    return None


def _working_directory(directory: Path, root: Path | None) -> str:
    """Where the workflow's steps run, from the repository's root: "." when DIR is the root (or in no repository)."""
    if root is None:
        return "."
    return Path(os.path.relpath(directory.resolve(), root)).as_posix()


def installed_pin() -> Pin | None:
    """The GitHub repository and commit this harness was installed from (pip's direct_url.json), if it was."""
    try:
        text = importlib.metadata.distribution("compaction-harness").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    return pin_from_direct_url(text)


def pin_from_direct_url(text: str | None) -> Pin | None:
    """A pin from pip's record of a direct install (PEP 610): only a git install from GitHub at a full commit."""
    try:
        record = json.loads(text or "")
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    vcs = record.get("vcs_info")
    match = _GITHUB_URL.fullmatch(str(record.get("url", "")))
    if not isinstance(vcs, dict) or vcs.get("vcs") != "git" or match is None:
        return None
    commit = str(vcs.get("commit_id", ""))
    return Pin(match.group("repo"), commit) if re.fullmatch(r"[0-9a-f]{40}", commit) else None
