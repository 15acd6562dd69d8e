"""Python summarizers (``module:function``, ``path/to/file.py:function``): in a worker process, or inline."""

from __future__ import annotations

import contextlib
import io
import sys

from harness._base._calling import call_once, output_tail
from harness._base._errors import InfraError, SpecError
from harness._base._protocol import declared_version, resolve_protocol
from harness._app.calling._loading import code_fingerprint, load_callable, load_module, may_vary, spec_identity
from harness._app.calling._transport import Answer, Loaded, Setup
from harness._app.calling._worker import Worker

__all__ = ["ProcessTransport", "InlineTransport"]


class ProcessTransport:
    """The function in its own worker process (``harness._app.calling._worker``): timed out, killed, restarted."""

    def __init__(self, spec: str, setup: Setup):
        self._worker = Worker(spec, setup.protocol, recorded_protocol=setup.recorded_protocol,
                              max_result_chars=setup.max_result_chars, load_timeout=setup.load_timeout,
                              redactor=setup.redactor, extend=setup.extend)
        self._redactor = setup.redactor

    @property
    def pid(self) -> int | None:
        return self._worker.pid

    def load(self) -> Loaded:
        try:
            loaded = self._worker.load()
        except SpecError as exc:
            raise SpecError(self._redactor.redact(str(exc))) from None
        self._worker.protocol = loaded.protocol
        return loaded

    def call(self, request, timeout: float) -> Answer:
        result, output = self._worker.call(request, timeout)
        return Answer(result, output)

    def close(self) -> None:
        self._worker.close()


class _Printed(io.StringIO):
    """What an inline summarizer prints. Code that needs a file descriptor (``faulthandler``, and atheris
    reporting a timeout in a fuzzing process, which then ends the process) gets the real stderr's."""

    def fileno(self) -> int:
        return (sys.__stderr__ or sys.stderr).fileno()


class InlineTransport:
    """The function called in this process: fast, but no timeout and no kill on a hang (``--inline``)."""

    def __init__(self, spec: str, setup: Setup):
        self._spec = spec
        self._setup = setup
        self._fn = None
        self.protocol = "messages"

    pid = None

    def load(self) -> Loaded:
        setup = self._setup
        self._fn = load_callable(self._spec)
        self.protocol = resolve_protocol(self._fn, setup.protocol, recorded=setup.recorded_protocol,
                                         spec=self._spec)
        return Loaded(self.protocol, code_fingerprint(self._fn, also=tuple(load_module(m) for m in setup.extend)),
                      may_vary(self._fn), spec_identity(self._spec), declared_version(self._fn, self.protocol))

    def call(self, request, timeout: float) -> Answer:
        redact = self._setup.redactor.redact
        printed = _Printed()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            try:
                result = call_once(self._fn, self.protocol, request, max_result_chars=self._setup.max_result_chars,
                                   redact=redact, refer=True)
            except InfraError as exc:
                exc.output = output_tail(redact(printed.getvalue()))
                raise
        return Answer(result, output_tail(redact(printed.getvalue())))

    def close(self) -> None:
        pass
