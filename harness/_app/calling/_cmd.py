"""``cmd:COMMAND ARGS...``: a summarizer in any language, as a long-lived process speaking JSON lines.

The harness writes one request per line (``harness._base._wire``) to its
stdin and reads one answer per line from its stdout; its stderr is kept (the
end of it) for reports. A process that exits, answers garbage or takes longer
than ``--timeout`` is killed (with its process group) and started afresh for
the next request.
"""

from __future__ import annotations

import hashlib
import json
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from harness._base._calling import output_tail
from harness._base._errors import InfraError, SpecError
from harness._base._wire import WIRE_VERSION, answer_from_wire, request_to_wire
from harness._app.calling._transport import Answer, Loaded, Setup, checked_answer

__all__ = ["CommandTransport"]

#: How long a started process may take to show it is alive (not exit) before the first request.
_START_GRACE = 0.3
_MAX_LINE = 64 * 1024 * 1024


class CommandTransport:
    """One process, one request at a time; restarted after a crash or a timeout."""

    def __init__(self, spec: str, setup: Setup):
        self._spec = spec
        self._setup = setup
        try:
            self._argv = shlex.split(spec.removeprefix("cmd:"))
        except ValueError as exc:
            raise SpecError(f"--summarizer {spec!r}: cannot split the command ({exc})") from None
        if not self._argv:
            raise SpecError(f"--summarizer {spec!r}: expected cmd:COMMAND ARGS...")
        if shutil.which(self._argv[0]) is None:
            raise SpecError(f"--summarizer {spec!r}: no program {self._argv[0]!r} on PATH")
        self.protocol = setup.protocol or setup.recorded_protocol or "messages"
        self._process: subprocess.Popen | None = None
        self._stderr = None
        self._buffer = b""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def load(self) -> Loaded:
        self._start()
        time.sleep(_START_GRACE)
        if self._process.poll() is not None:
            code, said = self._process.returncode, self._stderr_tail()
            self.close()
            raise SpecError(f"--summarizer {self._spec!r}: the process exited at once (exit code {code})"
                            + (f"; it printed: {said}" if said else ""))
        return Loaded(self.protocol, self._fingerprint())

    def _fingerprint(self) -> str:
        """The command and the contents of every argument that is a file (the script itself, usually)."""
        digest = hashlib.sha256(f"cmd|{WIRE_VERSION}|{json.dumps(self._argv)}".encode())
        for arg in self._argv[1:]:
            path = Path(arg)
            try:
                if path.is_file() and path.stat().st_size <= 16 * 1024 * 1024:
                    digest.update(path.read_bytes())
            except OSError:
                pass
        return digest.hexdigest()

    def _start(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        self._buffer = b""
        self._process = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._stderr, start_new_session=True)

    def call(self, request, timeout: float) -> Answer:
        if self._process is None or self._process.poll() is not None:
            if self._process is not None:
                self.close()
            self._start()
        line = json.dumps(request_to_wire(request, self.protocol), ensure_ascii=False).encode() + b"\n"
        try:
            self._process.stdin.write(line)
            self._process.stdin.flush()
            answer = self._read_line(timeout)
        except (BrokenPipeError, ConnectionResetError, EOFError):
            raise self._died() from None
        try:
            data = json.loads(answer)
        except (ValueError, RecursionError):
            said = self._stderr_tail()
            self.close()  # its stdout is out of step now: start afresh
            raise InfraError("malformed", f"the process answered a line that is not JSON: {answer[:200]!r}",
                             said) from None
        result, usage = answer_from_wire(data, request.dialect if self.protocol == "messages" else "chat")
        return checked_answer(result, self._setup, usage=usage)

    def _read_line(self, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        stdout = self._process.stdout
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    said = self._stderr_tail()
                    self.close()
                    raise InfraError("timeout", f"no answer within {timeout:g} s (the process was killed and is "
                                                f"restarted for the next request)", said)
                chunk = os.read(stdout.fileno(), 1 << 20)
                if not chunk:
                    raise EOFError
                self._buffer += chunk
                if len(self._buffer) > _MAX_LINE:
                    self.close()
                    raise InfraError("oversized", f"the process's answer is over {_MAX_LINE:,} bytes")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace")

    def _died(self) -> InfraError:
        process = self._process
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        code = process.returncode
        how = f"exit code {code}" if code is not None and code >= 0 else \
            f"killed by signal {-code}" if code is not None else "it closed its stdout"
        said = self._stderr_tail()
        self.close()
        return InfraError("crashed", f"the summarizer's process died ({how}; it is restarted for the next request)",
                          said)

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - 8192))
            text = self._stderr.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return ""
        return output_tail(self._setup.redactor.redact(text))

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, OSError):
                pass
            for stream in (process.stdin, process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
