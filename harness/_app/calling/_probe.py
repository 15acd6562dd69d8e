"""Trying a team's module in a throwaway process before the harness imports it.

``--extend`` modules (a team's oracles), ``--rules`` and ``--token-counter`` run
inside the harness (they judge), unlike the summarizer. A module that calls ``os._exit`` or hangs while importing would
end or stall the run without a word, so it is first imported (and a counter
called once) in a child process with a time limit; only if that works is it
imported here. Whatever the child printed or raised is redacted.
"""

from __future__ import annotations

import subprocess
import sys

from harness._app.calling._loading import checked_counter, load_module, load_rules
from harness._app.calling._redact import Redactor
from harness._base._errors import HarnessError, InvalidArgument, SpecError

__all__ = ["probe"]

_OK = "compaction-harness-probe-ok"


def probe(spec: str, *, option: str, timeout: float, redactor: Redactor) -> None:
    """Raise ``SpecError`` or ``InvalidArgument`` (redacted) unless ``spec`` loads, as ``option`` would load it,
    within ``timeout``."""
    code = "import sys; from harness._app.calling._probe import _child; _child(sys.argv[1], sys.argv[2])"
    try:
        proc = subprocess.run([sys.executable, "-c", code, spec, option], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        raise SpecError(f"{option} {spec!r}: loading it took longer than {timeout:g} s") from None
    if proc.returncode == 0 and proc.stdout.rstrip().endswith(_OK):
        return
    said = [line for line in proc.stderr.splitlines() if line.startswith(("SpecError: ", "InvalidArgument: "))]
    if said:
        kind, message = said[-1].split(": ", 1)
        raise (InvalidArgument if kind == "InvalidArgument" else SpecError)(redactor.redact(message))
    raise SpecError(redactor.redact(f"{option} {spec!r}: its process ended while loading and trying it (exit code "
                                    f"{proc.returncode})"))


def _child(spec: str, option: str) -> None:  # pragma: no cover - runs in the child process
    try:
        if option == "--token-counter":
            checked_counter(spec)
        elif option == "--extend":
            load_module(spec, option=option)
        else:
            load_rules(spec, option=option)
    except HarnessError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(3)
    print(_OK)
