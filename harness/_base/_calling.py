"""One call of an untrusted summarizer, whatever isolates it: call, check, normalise.

Every way the call can go wrong becomes an ``InfraError`` of a named kind
(``INFRA_KINDS``). The same function runs inline and inside the worker
process, so both isolations judge a summarizer identically.
"""

from __future__ import annotations

import copy
import functools
import json
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness._base._dialects import read
from harness._base._errors import InfraError, MalformedResult
from harness._base._messages import turn_to_message
from harness._base._model import Turn
from harness._base._protocol import CompactionRequest, CompactionResult
from harness._base._request_key import request_digest
from harness._base._result_codec import result_from_return, result_to_dict

__all__ = ["DEFAULT_MAX_RESULT_CHARS", "RESULT_CHARS_PER_TOKEN", "result_chars_for", "call_once", "checked_result",
           "output_tail", "valid_text"]

#: Results larger than this (characters of the result as JSON) are an ``oversized`` infra error:
#: a context far over any budget, and judging costs time in proportion to its size.
DEFAULT_MAX_RESULT_CHARS = 2_000_000
#: ... or, at a budget where that is not far over, this many characters per token of the budget: a compactor
#: that keeps everything of a twelve-window session stays under it, and one that returns many times more fails.
RESULT_CHARS_PER_TOKEN = 64


def result_chars_for(budget: int) -> int:
    """The default limit on a result's size (``--max-result-chars``) at ``budget``."""
    return max(DEFAULT_MAX_RESULT_CHARS, RESULT_CHARS_PER_TOKEN * budget)
_OUTPUT_TAIL = 2000


def call_once(fn: Callable[..., Any], protocol: str, request: CompactionRequest, *,
              max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
              redact: Callable[[str], str] = lambda text: text, refer: bool = False) -> dict[str, Any]:
    """Call ``fn`` the way ``protocol`` says; return the result as plain JSON data or raise ``InfraError``.

    ``redact`` is applied to error messages before they are shortened, so a
    secret is never cut in two with one half left readable. With ``refer``, a message the summarizer kept
    as it was given is written as the index of the request's turn (``result_to_dict``): a compactor that
    keeps most of a long context costs what it changed, not what it kept.
    """
    try:
        if protocol == "messages":
            payload = request.payload()  # chat messages, an Anthropic body or Responses items (the dialect's)
            before = copy.deepcopy(payload)
            value = fn(payload, request.budget)
            if payload != before:
                raise InfraError("mutated-input", "the summarizer modified the messages it was given")
        else:
            before = request_digest(request)
            value = fn(request)
            if request_digest(request) != before:  # frozen, but object.__setattr__ gets past that
                raise InfraError("mutated-input", "the summarizer modified the request it was given")
    except (InfraError, KeyboardInterrupt):
        raise
    except SystemExit as exc:
        code = _clip(redact(_shown(repr, exc.code)))
        raise InfraError("exception", f"the summarizer called sys.exit({code})") from None
    except BaseException as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
        raise InfraError("exception", f"the summarizer raised {type(exc).__name__}: "
                                      f"{_clip(redact(valid_text(_shown(str, exc))))}{where}") from exc
    dialect = request.dialect if protocol == "messages" else "chat"
    return checked_result(lambda: result_from_return(read(value, dialect)), max_result_chars=max_result_chars,
                          redact=redact, given=request.turns if refer else ())


def checked_result(build: Callable[[], CompactionResult], *, max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
                   redact: Callable[[str], str] = lambda text: text, given: Sequence[Turn] = ()) -> dict[str, Any]:
    """The result ``build`` reads, checked and as plain JSON data, or ``InfraError`` (malformed, oversized).
    A message equal to one of ``given`` is written as its index (``result_to_dict``), and counts its own size.

    Shared by every adapter: a Python return value and a server's JSON answer are judged alike.
    """
    try:
        data = result_to_dict(build(), given)
    except MalformedResult as exc:
        raise InfraError("malformed", str(exc)) from None
    except (Exception, SystemExit) as exc:  # an object that breaks while being read (a list whose items raise)
        raise InfraError("malformed", f"reading the result raised {type(exc).__name__}: "
                                      f"{_clip(redact(valid_text(_shown(str, exc))))}") from None
    text = json.dumps(data, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InfraError("malformed", f"the result is not valid Unicode text: a lone surrogate "
                                      f"{exc.object[exc.start]!r}") from None
    size = len(text) + sum(_message_chars(given[m]) - len(str(m)) for m in data["messages"] if isinstance(m, int))
    if size > max_result_chars:
        raise InfraError("oversized", f"the result is {size:,} characters as JSON, over the limit of "
                                      f"{max_result_chars:,} (--max-result-chars)")
    # Plain data only: a str subclass or a str Enum from an SDK would not unpickle in the harness.
    return json.loads(text)


@functools.lru_cache(maxsize=1 << 16)
def _message_chars(turn: Turn) -> int:
    """A turn's size as a message in the result's JSON (a kept turn is sent as its index, and counted so)."""
    return len(json.dumps(turn_to_message(turn), ensure_ascii=False))


def output_tail(text: str) -> str:
    """The end of what a summarizer printed, short enough to show in a report."""
    text = valid_text(text.strip())
    return text if len(text) <= _OUTPUT_TAIL else "…" + text[-_OUTPUT_TAIL:]


def _shown(show: Callable[[Any], str], value: Any) -> str:
    """``show(value)`` (``str`` or ``repr``), or a note when that raises: a summarizer's exception may not print."""
    try:
        return show(value)
    except Exception as exc:
        return f"<{type(value).__name__} that cannot be shown ({type(exc).__name__})>"


def _clip(text: str, limit: int = 500) -> str:
    text = valid_text(text)
    return text if len(text) <= limit else text[:limit] + "…"


def valid_text(text: str) -> str:
    """``text`` with anything that is not valid Unicode (lone surrogates) escaped, so it can be written."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
