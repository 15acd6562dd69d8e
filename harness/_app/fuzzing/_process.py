"""One fuzzing process seen from outside: started, its libFuzzer output read, its end explained.

``harness._app.fuzzing._fuzz`` runs several of these; what killed one (the summarizer, a hang, memory, or a
bug of ours) decides whether it is a finding, and what the report shows of its last words.
"""

from __future__ import annotations

import collections
import os
import re
import signal
import subprocess
import threading

__all__ = ["FuzzProcess", "why_it_ended", "crash_report"]

_STATUS = re.compile(r"^#(\d+)\s+\S+\s+cov: (\d+) ft: (\d+) corp: (\d+)/")
_DONE = re.compile(r"^Done (\d+) runs")


class FuzzProcess:
    """One fuzzing process, and what its output says (libFuzzer's status lines, its last words)."""

    def __init__(self, index: int, argv: list[str], env: dict[str, str]):
        self.index = index
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, errors="replace", start_new_session=True)
        self.tail: collections.deque[str] = collections.deque(maxlen=60)
        self.executions = self.coverage = self.features = self.inputs = 0
        self.done_runs: int | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            line = line.rstrip("\n")
            self.tail.append(line)
            if m := _STATUS.match(line):
                self.executions, self.coverage, self.features, self.inputs = map(int, m.groups())
            elif m := _DONE.match(line):
                self.done_runs = int(m.group(1))

    def wait(self) -> int:
        code = self.proc.wait()
        self._reader.join(timeout=5)
        return code

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.wait()


def why_it_ended(child: FuzzProcess) -> tuple[str, str]:
    """(kind, message) for a fuzzing process that ended with an error: who is to blame, in the report's terms."""
    text = "\n".join(child.tail)
    artifact = re.search(r"Test unit written to (\S+)", text)
    where = f" (input saved as {artifact.group(1)})" if artifact else ""
    if "Uncaught Python exception" in text:
        return "internal", f"the harness raised inside the fuzzing process{where}:\n" + text
    if "ALARM: working on the last Unit" in text or "timeout-" in (artifact.group(1) if artifact else ""):
        return "timeout", f"the summarizer ran longer than --timeout in the fuzzing process{where}"
    if "out-of-memory" in text:
        return "oom", f"the fuzzing process ran out of memory (over libFuzzer's -rss_limit_mb){where}"
    signalled = re.search(r"deadly signal|==\d+== ERROR", text)
    return "crashed", (f"the summarizer ended the fuzzing process (exit status {child.proc.returncode}"
                       f"{', a deadly signal' if signalled else ''}){where}")


def crash_report(child: FuzzProcess) -> str:
    """What a fuzzing process's last words say happened, in at most 8 lines (the report shows 8): the
    error, the innermost Python frames (where the summarizer was), libFuzzer's verdict."""
    lines = list(child.tail)
    first = next((i for i, line in enumerate(lines) if re.search(r"=== Timeout|ERROR|Uncaught|deadly", line)), None)
    if first is None:
        return "\n".join(lines[-8:])
    frames = [line for line in lines if line.lstrip().startswith("File ")][:5]  # innermost first
    verdict = [line for line in lines[first + 1:] if line.startswith("SUMMARY:")][:1]
    return "\n".join([lines[first].strip(), *frames, *verdict])
