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
from multiprocessing import resource_tracker
import os
import signal
import sys
import threading
import time
from typing import Any

from harness._base._calling import DEFAULT_MAX_RESULT_CHARS, call_once, output_tail
from harness._base._errors import InfraError, SpecError
from harness._base._protocol import CompactionRequest, declared_version, resolve_protocol
from harness._app.calling._loading import code_fingerprint, load_callable, load_module, may_vary, spec_identity
from harness._app.calling._options import DEFAULT_LOAD_TIMEOUT
from harness._app.calling._redact import Redactor
from harness._app.calling._transport import Loaded

__all__ = ["Worker"]


class Worker:
    """One summarizer in one process; ``call`` starts it if needed and restarts it after a hang or crash.

    The team's module is imported only in the worker, never in the harness: a
    module that exits, hangs or prints at import cannot end or stall the run.
    ``load`` starts the worker and returns what it found (or raises ``SpecError``).
    """

    def __init__(self, spec: str, protocol: str | None, *, recorded_protocol: str | None = None,
                 max_result_chars: int = DEFAULT_MAX_RESULT_CHARS, load_timeout: float = DEFAULT_LOAD_TIMEOUT,
                 redactor: Redactor | None = None, extend: tuple[str, ...] = ()):
        self.spec = spec
        self.extend = tuple(extend)
        self.redactor = redactor if redactor is not None else Redactor()
        self.protocol = protocol
        self.recorded_protocol = recorded_protocol
        self.max_result_chars = max_result_chars
        self.load_timeout = load_timeout
        self._process = None
        self._conn = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def load(self) -> Loaded:
        """Start the worker (if needed) and wait until it has loaded the summarizer."""
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        # The kernel's parent-death signal follows the *thread* that started the child: a worker started
        # by one of --jobs' threads would die with that thread, so those watch the process instead.
        by_main_thread = threading.current_thread() is threading.main_thread()
        self._process = ctx.Process(target=_serve, args=(child, self.spec, self.protocol, self.recorded_protocol,
                                                         self.max_result_chars, os.getpid(), self.redactor,
                                                         self.extend, by_main_thread),
                                    daemon=True)
        self._process.start()
        child.close()
        try:
            message = self._receive(self.load_timeout)
            if message is None:
                self.close()
                raise SpecError(f"--summarizer {self.spec!r}: loading it took longer than {self.load_timeout:g} s")
            status, *payload = message
        except (EOFError, BrokenPipeError, ConnectionResetError, _Garbled):
            how = self._exit_status()
            self.close()
            raise SpecError(f"--summarizer {self.spec!r}: its process ended while importing it ({how})") from None
        except BaseException:
            self.close()
            raise
        if status == "loaded":
            return Loaded(*payload)
        self.close()
        raise SpecError(payload[0])

    def call(self, request: CompactionRequest, timeout: float) -> tuple[dict[str, Any], str]:
        """The normalised result and the tail of what was printed; ``InfraError`` on any failure."""
        if self._process is None:
            try:
                self.load()
            except SpecError as exc:  # it loaded before: failing now is the summarizer's failure
                raise InfraError("crashed", str(exc)) from None
        try:
            self._conn.send(request)
            message = self._receive(timeout)
            if message is None:
                self.close()
                raise InfraError("timeout", f"no answer within {timeout:g} s")
            status, *payload = message
        except (EOFError, BrokenPipeError, ConnectionResetError):
            how = self._exit_status()
            self.close()
            raise InfraError("crashed", f"the summarizer's process died ({how})") from None
        except _Garbled:
            self.close()
            raise InfraError("crashed", "the answer from the summarizer's process was garbled (did the summarizer "
                                        "write to a file descriptor it inherited?)") from None
        except BaseException:  # interrupted mid-call (SIGINT/SIGTERM): the worker's state is unknown
            self.close()
            raise
        if status == "ok":
            return payload[0], payload[1]
        kind, message, output = payload
        raise InfraError(kind, message, output)

    def _receive(self, timeout: float):
        """The next message, or None after ``timeout`` seconds. A message that never completes (its
        pipe written to by the summarizer itself) or does not unpickle is ``_Garbled``, never a hang."""
        deadline = time.monotonic() + min(timeout, _LONGEST_WAIT)
        if not self._conn.poll(min(timeout, _LONGEST_WAIT)):
            return None
        box: list = []
        reader = threading.Thread(target=_recv_into, args=(self._conn, box), daemon=True)
        reader.start()
        reader.join(max(0.0, deadline - time.monotonic()) + 1.0)
        if reader.is_alive() or not box:
            raise _Garbled
        kind, value = box[0]
        if kind == "error":
            if isinstance(value, EOFError | BrokenPipeError | ConnectionResetError):
                raise value
            raise _Garbled
        if not isinstance(value, tuple) or not value:
            raise _Garbled
        return value

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


class _Garbled(Exception):
    """The worker's answer could not be read."""


# The longest a wait may be (threading's limit; a --timeout of 1e10 seconds would overflow it).
_LONGEST_WAIT = min(threading.TIMEOUT_MAX, 10 * 365 * 24 * 3600.0)


def _recv_into(conn, box: list) -> None:
    try:
        box.append(("ok", conn.recv()))
    except BaseException as exc:  # noqa: BLE001 - anything a garbled pickle raises is reported as garbled
        box.append(("error", exc))


def _kill_group(pid: int) -> None:
    try:
        if os.getpgid(pid) == pid:  # only once the worker has made its own group, never ours
            os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


# -- the child side -----------------------------------------------------------------------------


def _serve(conn, spec: str, protocol: str | None, recorded: str | None, max_result_chars: int,
           parent_pid: int, redactor: Redactor, extend: tuple[str, ...],
           by_main_thread: bool = True) -> None:  # pragma: no cover - child
    """The worker's main loop (runs in the child): load the summarizer, then answer requests.

    The ``--extend`` modules are imported first: a team's fact kinds must be
    defined here too, for the summarizer (or a bundled one) to state them.
    Secrets are redacted here too, before anything is shortened: a cut could leave half a key.
    """
    _die_with_parent(parent_pid, kernel=by_main_thread)
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness decides when we stop
    _close_inherited(keep=conn.fileno())
    capture = _Capture(redactor)  # before the import: what the module prints while loading is captured too
    try:
        extensions = tuple(load_module(module) for module in extend)
        fn = load_callable(spec)
        protocol = resolve_protocol(fn, protocol, recorded=recorded, spec=spec)
        conn.send(("loaded", protocol, code_fingerprint(fn, also=extensions), may_vary(fn), spec_identity(spec),
                   declared_version(fn, protocol)))
    except SpecError as exc:
        printed = capture.tail()
        conn.send(("error", redactor.redact(str(exc)) + (f"; it printed: {printed}" if printed else "")))
        return
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        capture.reset()
        try:
            result = call_once(fn, protocol, request, max_result_chars=max_result_chars, redact=redactor.redact,
                               refer=True)  # a kept turn comes back as its index: resolved by Summarizer
            conn.send(("ok", result, capture.tail()))
        except InfraError as exc:
            conn.send(("error", exc.kind, exc.message, capture.tail()))


def _close_inherited(*, keep: int) -> None:
    """Close what the worker inherited besides its pipe, so a summarizer writing to stray descriptors
    cannot reach the harness's other children (multiprocessing's resource tracker)."""
    tracker = getattr(resource_tracker, "_resource_tracker", None)
    if getattr(tracker, "_fd", None) is not None:
        tracker._fd = None  # it starts its own tracker if the summarizer ever needs one
        tracker._pid = None
    os.closerange(3, keep)
    os.closerange(keep + 1, 256)


def _die_with_parent(parent_pid: int, *, kernel: bool = True) -> None:
    try:
        if not kernel:
            raise OSError("started by a thread other than the main one")
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
    """Points the worker's stdout and stderr (file descriptors 1 and 2) at a pipe that a thread drains.

    Only the last ``_KEEP`` bytes are kept, so a summarizer printing without end
    costs CPU but never memory or disk.
    """

    _KEEP = 8192
    _MARK = b"\0compaction-harness-flush\0"

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        read, write = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        os.dup2(write, 1)
        os.dup2(write, 2)
        os.close(write)
        self._tail = bytearray()
        self._cut = False  # whether the kept bytes start in the middle of what was printed
        self._lock = threading.Lock()
        self._flushed = threading.Event()
        threading.Thread(target=self._drain, args=(read,), daemon=True).start()

    def _drain(self, fd: int) -> None:
        while chunk := os.read(fd, 65536):
            with self._lock:
                self._tail += chunk
                if self._MARK in self._tail:
                    self._tail = self._tail.replace(self._MARK, b"")
                    self._flushed.set()
                excess = len(self._tail) - self._KEEP - len(self._MARK)
                if excess > 0:
                    del self._tail[:excess]
                    self._cut = True

    def reset(self) -> None:
        self.tail()
        with self._lock:
            self._tail.clear()
            self._cut = False

    def tail(self) -> str:
        """What was printed since the last reset (its end), once everything written so far is drained."""
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        self._flushed.clear()
        os.write(1, self._MARK)
        self._flushed.wait(timeout=2)
        with self._lock:
            text = bytes(self._tail[-self._KEEP:]).decode("utf-8", errors="replace")
            cut = self._cut
        if cut:  # a secret cut in two at the start would escape redaction: drop what could be its end
            text = text[self._redactor.longest:]
        return output_tail(self._redactor.redact(text))
