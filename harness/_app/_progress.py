"""A progress line for long runs on stderr; silent with ``quiet``.

On a terminal it redraws one line; in a log (CI) it prints a line every tenth
of the way, and long steps with no fixed end (shrinking) a note at most every
``NOTE_INTERVAL`` seconds, so logs stay short but never go silent.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress", "NOTE_INTERVAL"]

NOTE_INTERVAL = 10.0


class Progress:
    def __init__(self, total: int, *, label: str, quiet: bool = False, stream: TextIO | None = None):
        self.total = max(1, total)
        self.label = label
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_decile = -1
        self._last_note = 0.0

    def advance(self, note: str = "") -> None:
        self.done = min(self.total, self.done + 1)
        self.show(note)

    def show(self, note: str = "") -> None:
        if self.quiet:
            return
        width = 24
        filled = int(width * self.done / self.total)
        line = f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {note}".rstrip()
        decile = self.done * 10 // self.total
        self._emit(line, due=decile != self._last_decile)
        self._last_decile = decile

    def note(self, text: str) -> None:
        """A status line for open-ended work: redrawn on a terminal, throttled in a log."""
        if self.quiet:
            return
        now = time.monotonic()
        due = now - self._last_note >= NOTE_INTERVAL
        if due:
            self._last_note = now
        self._emit(text[:200], due=due)

    def _emit(self, line: str, *, due: bool) -> None:
        """Redraw ``line`` on a terminal; in a log, write it only when ``due``."""
        if self._tty:
            self.stream.write("\r\033[K" + line)
        elif due:
            self.stream.write(line + "\n")
        else:
            return
        self.stream.flush()

    def message(self, text: str) -> None:
        if self.quiet:
            return
        if self._tty:
            self.stream.write("\r\033[K")
        self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if not self.quiet and self._tty:
            self.stream.write("\r\033[K")
            self.stream.flush()
