"""The progress line: a redrawn line on a terminal, a short log elsewhere, never silent on long work."""

import io

from harness._app import _progress
from harness._app._progress import Progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_a_log_gets_a_line_per_tenth_and_throttled_notes(monkeypatch):
    clock = iter([100.0, 101.0, 111.0])
    monkeypatch.setattr(_progress.time, "monotonic", lambda: next(clock))
    log = io.StringIO()
    progress = Progress(20, label="examples", stream=log)
    for _ in range(20):
        progress.advance()
    for text in ("shrinking: 40 turns", "shrinking: 30 turns", "shrinking: 20 turns"):
        progress.note(text)
    lines = log.getvalue().splitlines()
    assert lines[0] == "examples [#.......................] 1/20" and lines[10].endswith("20/20")
    assert len(lines) == 13  # 11 tenths (0 to 10), then the first note and the one 10 s later
    assert lines[11:] == ["shrinking: 40 turns", "shrinking: 20 turns"]


def test_a_terminal_line_is_redrawn_and_quiet_prints_nothing():
    tty = _Tty()
    progress = Progress(2, label="examples", stream=tty)
    progress.advance("· 1 failures")
    progress.note("shrinking")
    assert tty.getvalue() == "\r\033[Kexamples [############............] 1/2 · 1 failures\r\033[Kshrinking"
    quiet = io.StringIO()
    silent = Progress(2, label="examples", quiet=True, stream=quiet)
    silent.advance()
    silent.note("x")
    silent.message("y")
    assert quiet.getvalue() == ""
