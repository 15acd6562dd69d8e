"""The worker process a summarizer runs in: started on demand, timed out, and never outliving the harness.

The worker is a process-group leader, so the harness kills it together with
anything it started (``killpg``) on a timeout, at the end of a run, or on
SIGINT/SIGTERM. If the harness itself is killed outright (SIGKILL, the OOM
killer), the kernel kills the worker (Linux ``PR_SET_PDEATHSIG``; elsewhere a
thread watching the parent does it). What the summarizer prints goes to a
file of the worker's own, not into the harness's report; its tail comes back
with each answer.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
from typing import Any

from harness._base._calling import DEFAULT_MAX_RESULT_CHARS, call_once, output_tail
from harness._base._errors import InfraError, SpecError
from harness._app._loading import load_callable
from harness._base._protocol import CompactionRequest

__all__ = ["Worker"]


class Worker:
    """One summarizer in one process; ``call`` starts it if needed and restarts it after a hang or crash."""

    def __init__(self, spec: str, protocol: str, *, max_result_chars: int = DEFAULT_MAX_RESULT_CHARS):
        self.spec = spec
        self.protocol = protocol
        self.max_result_chars = max_result_chars
        self._process = None
        self._conn = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def call(self, request: CompactionRequest, timeout: float) -> tuple[dict[str, Any], str]:
        """The normalised result and the tail of what was printed; ``InfraError`` on any failure."""
        if self._process is None:
            self._start()
        try:
            self._conn.send(request)
            if not self._conn.poll(timeout):
                self.close()
                raise InfraError("timeout", f"no answer within {timeout:g} s")
            status, *payload = self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            how = self._exit_status()
            self.close()
            raise InfraError("crashed", f"the summarizer's process died ({how})") from None
        except BaseException:  # interrupted mid-call (SIGINT/SIGTERM): the worker's state is unknown
            self.close()
            raise
        if status == "ok":
            return payload[0], payload[1]
        kind, message, output = payload
        raise InfraError(kind, message, output)

    def close(self) -> None:
        """Kill the worker and its process group; safe to call twice."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is None:
            return
        conn.close()
        _kill_group(process.pid)
        process.kill()
        process.join(timeout=5)

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(child, self.spec, self.protocol, self.max_result_chars,
                                                         os.getpid()), daemon=True)
        self._process.start()
        child.close()

    def _exit_status(self) -> str:
        self._process.join(timeout=2)
        code = self._process.exitcode
        if code is None:
            return "it closed its end of the pipe but is still running"
        if code < 0:
            try:
                return f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"


def _kill_group(pid: int) -> None:
    try:
        if os.getpgid(pid) == pid:  # only once the worker has made its own group, never ours
            os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


# -- the child side -----------------------------------------------------------------------------


def _serve(conn, spec: str, protocol: str, max_result_chars: int, parent_pid: int) -> None:  # pragma: no cover
    """The worker's main loop (runs in the child): answer requests until the pipe closes."""
    _die_with_parent(parent_pid)
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness decides when we stop
    capture = _Capture()
    try:
        fn = load_callable(spec)
    except SpecError as exc:
        fn, load_error = None, str(exc)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        capture.reset()
        try:
            if fn is None:
                raise InfraError("exception", load_error)
            result = call_once(fn, protocol, request, max_result_chars=max_result_chars)
            conn.send(("ok", result, capture.tail()))
        except InfraError as exc:
            conn.send(("error", exc.kind, exc.message, capture.tail()))


def _die_with_parent(parent_pid: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # 1 = PR_SET_PDEATHSIG
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    if os.getppid() != parent_pid:  # the parent died before we could ask to follow it
        os._exit(1)


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(0.5)
    _kill_group(os.getpid())
    os._exit(1)


class _Capture:
    """Points the worker's stdout and stderr (file descriptors 1 and 2) at an unlinked file."""

    def __init__(self) -> None:
        fd, path = tempfile.mkstemp(prefix="compaction-harness-output-")
        os.unlink(path)
        self._fd = fd
        for stream, target in ((sys.stdout, 1), (sys.stderr, 2)):
            if stream is not None:
                stream.flush()
            os.dup2(fd, target)

    def reset(self) -> None:
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)

    def tail(self) -> str:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        size = os.lseek(self._fd, 0, os.SEEK_END)
        start = max(0, size - 8192)
        return output_tail(os.pread(self._fd, size - start, start).decode("utf-8", errors="replace"))
