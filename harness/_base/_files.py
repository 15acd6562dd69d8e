"""Every document the harness keeps or reads (reports, corpus entries, cache entries, JSON inputs) goes through
here: one atomic writer, one JSON reader, path checks. (What else is read is not a document: a summarizer's
source hashed for its fingerprint, a prompt template, the counters a fuzzing process is rewriting; and the
fuzzing processes' entry script is written into a temporary folder of their own.)

Writes are atomic (a hidden temporary file in the same folder, then a rename),
respect the umask, and their temporary names never end in ``.json``, so no
reader ever sees a half-written file, even one a killed writer left behind.
Reads refuse what would hang or exhaust memory (a FIFO, a huge file, JSON
nested thousands deep) with an error naming the file.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import sys
import time
from pathlib import Path
from typing import Any

from harness._base._errors import PathError, SchemaError

__all__ = ["DEFAULT_MAX_FILE_MB", "TEMP_SUFFIX", "MISSING", "write_atomic", "read_json_file", "parse_json", "json_files",
           "existing_dir", "output_dir", "output_file", "remove_stale_temps"]

#: Largest JSON document read by default (a 4,000-turn transcript is about 1 MB).
DEFAULT_MAX_FILE_MB = 64
TEMP_SUFFIX = ".tmp"
#: What ``read_json_file(..., missing_ok=True)`` returns for a file that is gone (a JSON ``null`` is ``None``).
MISSING = object()


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never a part.

    The temporary file is created with mode 0666 and so gets the caller's umask
    (``mkstemp`` would force 0600 and leave CI artifacts unreadable). A symbolic
    link is written through (its target replaced, not the link); anything that is
    not a regular file (a device, a FIFO) is never replaced. Text that is not
    valid Unicode (a lone surrogate) is written escaped rather than failing.
    """
    path = Path(os.path.realpath(path))
    if path.exists() and not path.is_file():
        raise PathError(f"{str(path)!r}: will not replace a {_file_type(path.stat().st_mode)} with a file")
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_json_file(path: str | Path, *, max_mb: float = DEFAULT_MAX_FILE_MB, missing_ok: bool = False) -> Any:
    """Parse one JSON file; any problem is a ``SchemaError`` naming the file.

    With ``missing_ok``, a file that is gone (removed by another process
    between listing and reading) gives ``MISSING`` instead; a dangling
    symbolic link is still an error.
    """
    path = Path(path)
    source = str(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        if os.path.lexists(path):
            raise SchemaError("<root>", "an existing file", "a dangling symbolic link", source=source) from None
        if missing_ok:
            return MISSING
        raise SchemaError("<root>", "an existing file", "no such file", source=source) from None
    except OSError as exc:
        raise SchemaError("<root>", "a readable file", _reason(exc), source=source) from None
    if not stat.S_ISREG(info.st_mode):
        raise SchemaError("<root>", "a regular file", _file_type(info.st_mode), source=source)
    limit = int(max_mb * 1024 * 1024)
    if info.st_size > limit:
        raise SchemaError("<root>", f"a file of at most {max_mb:g} MB (raise the limit with --max-file-mb)",
                          f"{info.st_size / 1024 / 1024:.1f} MB", source=source)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(limit + 1)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        if missing_ok:
            return MISSING
        raise SchemaError("<root>", "an existing file", "no such file", source=source) from None
    except UnicodeDecodeError as exc:
        raise SchemaError("<root>", "UTF-8 text", f"an invalid byte at offset {exc.start}", source=source) from None
    except OSError as exc:
        raise SchemaError("<root>", "a readable file", _reason(exc), source=source) from None
    return parse_json(text, source=source)


def parse_json(text: str, *, source: str, expected: str = "valid JSON") -> Any:
    """``json.loads`` whose every failure is a ``SchemaError`` naming ``source`` and where it broke."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError("<root>", expected, f"{exc.msg} at line {exc.lineno} column {exc.colno}",
                          source=source) from None
    except RecursionError:
        raise SchemaError("<root>", "JSON nested less than about a thousand levels deep", "deeper nesting",
                          source=source) from None
    except ValueError:  # json.loads refuses an integer longer than Python's limit for int <-> text
        raise SchemaError("<root>", f"integers of at most {sys.get_int_max_str_digits()} digits", "a longer one",
                          source=source) from None


def json_files(directory: str | Path) -> tuple[list[Path], list[str]]:
    """The ``*.json`` regular files of a directory, sorted, and a warning per entry skipped.

    Hidden files (our temporary files among them) are not listed; a FIFO or a
    folder named ``x.json`` is skipped with a warning instead of hanging a reader.
    """
    files, warnings = [], []
    for path in sorted(existing_dir(directory, what="corpus directory").glob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            if os.path.lexists(path):  # a dangling symbolic link: let the reader name it
                files.append(path)
            continue  # else removed by another process (a concurrent dedupe) since the listing
        except OSError:  # a symbolic-link loop, a permission problem: the reader names it
            files.append(path)
            continue
        if stat.S_ISREG(mode):
            files.append(path)
        else:
            warnings.append(f"{path}: skipped, a {_file_type(mode)} and not a regular file")
    return files, warnings


def existing_dir(path: str | Path, *, what: str) -> Path:
    """``path`` as a directory that must already exist (an input)."""
    path = Path(path)
    if not path.exists():
        raise PathError(f"{what} {str(path)!r}: no such directory")
    if not path.is_dir():
        raise PathError(f"{what} {str(path)!r}: expected a directory, got a {_file_type(path.stat().st_mode)}")
    return path


def output_dir(path: str | Path, *, option: str) -> Path:
    """Check (and create) a directory the run will write into, before any work starts."""
    if not str(path):
        raise PathError(f"{option} '': expected a directory name")
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise PathError(f"{option} {str(path)!r}: expected a directory, got a {_file_type(path.stat().st_mode)}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PathError(f"{option} {str(path)!r}: cannot create the directory ({_reason(exc)})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise PathError(f"{option} {str(path)!r}: the directory is not writable")
    return path


def output_file(path: str | Path, *, option: str) -> Path:
    """Check a file the run will write at its end, before any work starts (its folder is created).

    Returns the path to write: a symbolic link's target. A device, a FIFO or a
    folder is refused (an atomic write would replace it), and the folder must
    accept a new file (that is how the atomic write works), which is tried.
    """
    if not str(path):
        raise PathError(f"{option} '': expected a file name")
    given = Path(path)
    path = Path(os.path.realpath(given))
    if path.is_dir():
        raise PathError(f"{option} {str(given)!r}: expected a file name, got a directory")
    if path.exists() and not path.is_file():
        raise PathError(f"{option} {str(given)!r}: expected a regular file, got a {_file_type(path.stat().st_mode)}")
    output_dir(path.parent, option=f"{option} {str(given)!r}: folder")
    probe = path.with_name(f".{path.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        probe.unlink()
    except OSError as exc:
        raise PathError(f"{option} {str(given)!r}: cannot write there ({_reason(exc)})") from None
    return path


def _reason(exc: OSError) -> str:
    return f"{type(exc).__name__} ({exc.strerror or exc})"


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"), (stat.S_ISREG, "file")):
        if test(mode):
            return name
    return "special file"


def remove_stale_temps(directory: str | Path, *, older_than: float = 3600.0) -> list[Path]:
    """Remove temporary files that killed writers left behind (only old ones: a live writer's stay)."""
    removed = []
    cutoff = time.time() - older_than
    for path in Path(directory).glob(f".*{TEMP_SUFFIX}"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed.append(path)
        except FileNotFoundError:
            continue
    return removed
