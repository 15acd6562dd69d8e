"""How the summarizer under test is called: one frozen object, built once and passed whole.

Its defaults are the only ones: the command line, the pytest plugin and a library caller all start
from ``CallOptions``, and the adapters see it as their ``Setup``.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness._base._errors import InvalidArgument
from harness._base._protocol import PROTOCOLS
from harness._app.calling._redact import Redactor

__all__ = ["CallOptions", "ISOLATIONS", "DEFAULT_TIMEOUT", "DEFAULT_RETRIES", "DEFAULT_LOAD_TIMEOUT"]

#: ``process``: a Python summarizer runs in its own worker (timed out, killed on a hang); ``inline``: in this one.
ISOLATIONS = ("process", "inline")
#: Seconds one call may take.
DEFAULT_TIMEOUT = 30.0
#: Retries of a remote summarizer's 429, 5xx, dropped connection or timeout (``harness._app.calling._remote``).
DEFAULT_RETRIES = 4
#: How long loading the summarizer (its module in the worker, a server's first answer) may take: heavy imports
#: are slow.
DEFAULT_LOAD_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class CallOptions:
    """Which summarizer, and how each call reaches it (the ``--summarizer`` and call options)."""

    summarizer: str  # module:function, path/to/file.py:function, openai:MODEL, http(s)://..., cmd:...
    protocol: str | None = None  # None: the summarizer's declared protocol (harness._base._protocol.resolve_protocol)
    timeout: float = DEFAULT_TIMEOUT
    isolation: str = "process"
    cache_dir: str | None = None  # the call cache also kept on disk here
    summarizer_version: str | None = None  # replaces the code fingerprint in cache keys
    max_result_chars: int | None = None  # None: the default at the run's budget (``result_chars_for``)
    redact_env: tuple[str, ...] = ()  # more environment variables whose values never reach a file
    extend: tuple[str, ...] = ()  # modules imported beside the summarizer, for the kinds and oracles they define
    base_url: str | None = None  # openai: the chat-completions endpoint's base URL
    prompt: str | None = None  # openai: the prompt template file
    api_key_env: str | None = None  # openai: the environment variable holding the API key (never its value)
    retries: int = DEFAULT_RETRIES  # remote summarizers: retries of 429, 5xx, dropped connections and timeouts
    jobs: int = 1  # calls that may run at once (adapter instances); --inline always runs one

    def __post_init__(self) -> None:
        if self.protocol is not None and self.protocol not in PROTOCOLS:
            raise InvalidArgument(f"--protocol {self.protocol!r}: expected 'messages' or 'rich'")
        if self.isolation not in ISOLATIONS:
            raise InvalidArgument(f"isolation={self.isolation!r}: expected 'process' or 'inline'")
        if not self.timeout > 0:
            raise InvalidArgument(f"--timeout {self.timeout!r}: expected a number of seconds > 0")
        if self.max_result_chars is not None and self.max_result_chars < 1:
            raise InvalidArgument(f"--max-result-chars {self.max_result_chars!r}: expected a positive number")
        if self.jobs < 1:
            raise InvalidArgument(f"--jobs {self.jobs!r}: expected a whole number >= 1")
        if self.retries < 0:
            raise InvalidArgument(f"--retries {self.retries!r}: expected a whole number >= 0")

    def redactor(self) -> Redactor:
        """What keeps secrets out of everything written: the usual names, ``redact_env`` and the API key's."""
        return Redactor.from_environ(extra_names=(*self.redact_env, *filter(None, [self.api_key_env])))

    def load_timeout(self, max_time: float | None = None) -> float:
        """How long loading may take: at least a call's timeout, never beyond the run's ``max_time``."""
        return min(max(DEFAULT_LOAD_TIMEOUT, self.timeout), max_time or float("inf"))
