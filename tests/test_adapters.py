"""Loading specs and calling untrusted summarizers: every misbehaviour is an InfraError."""

import re
from pathlib import Path

import pytest

from harness import CompactionResult, Role, Transcript, Turn, request_for
from harness import InfraError, SpecError
from harness._app.calling._options import CallOptions
from harness._app.calling._summarizer import Summarizer
from harness._app.calling._cache import CallCache
from harness._app.calling._loading import load_callable

FAULTY = str(Path(__file__).parent / "fixtures" / "faulty.py")


def _request(text="hello"):
    return request_for(Transcript((Turn(Role.USER, text), Turn(Role.ASSISTANT, "ok"))), 2, 100)


def test_loads_module_and_file_specs():
    assert load_callable("harness.summarizers.identity:summarize").__name__ == "summarize"
    assert load_callable(f"{FAULTY}:raises").__name__ == "raises"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nocolon", "expected 'module:function' or 'path/to/file.py:function'"),
        (":fn", "expected 'module:function'"),
        ("no_such_module_xyz:fn", "cannot import module 'no_such_module_xyz'"),
        ("harness.summarizers.identity:missing", "has no callable named 'missing'"),
        (f"{FAULTY}:not_callable", "has no callable named 'not_callable'"),
        ("missing/file.py:fn", "no such file 'missing/file.py'"),
    ],
)
def test_bad_specs_are_named(spec, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        load_callable(spec)


@pytest.mark.parametrize("isolation", ["inline", "process"])
@pytest.mark.parametrize(
    "name, kind, message",
    [
        ("raises", "exception", "the summarizer raised ValueError: model quota exceeded (at faulty.py:"),
        ("returns_int", "malformed", "expected a string, a list of message dicts or a CompactionResult, got int"),
        ("mutates", "mutated-input", "the summarizer modified the messages it was given"),
        ("bad_messages", "malformed", "message [0].role: expected one of"),
        ("exits", "exception", "the summarizer called sys.exit(0)"),
        ("bad_tool_calls", "malformed", "message [0].tool_calls: expected a list, got int"),
        ("rich_none_literals", "malformed", "ledger[0].literals: expected a list of strings, got None"),
        ("huge", "oversized", "the result is 3,000,049 characters as JSON, over the limit of 2,000,000 (--max-result-chars)"),
    ],
)
def test_misbehaviour_becomes_an_infra_error(isolation, name, kind, message):
    with Summarizer(CallOptions(f"{FAULTY}:{name}", isolation=isolation)) as summarizer:
        with pytest.raises(InfraError) as info:
            summarizer(_request())
    assert info.value.kind == kind
    assert info.value.message.startswith(message)


def test_a_hang_times_out_and_the_worker_recovers():
    with Summarizer(CallOptions(f"{FAULTY}:hangs", timeout=0.5)) as summarizer:
        with pytest.raises(InfraError, match=r"timeout: no answer within 0.5 s"):
            summarizer(_request())
        assert summarizer.worker_pid is None  # the hung worker was killed
        with pytest.raises(InfraError, match="timeout"):  # a fresh worker takes the next request
            summarizer(_request("other"))
        assert summarizer.calls == 2


def test_cache_pays_once_per_distinct_request(tmp_path):
    with Summarizer(CallOptions("harness.summarizers.identity:summarize", isolation="inline"),
                    cache=CallCache(tmp_path)) as first:
        a = first(_request())
        b = first(_request())
        first(_request("different"))
        assert (first.calls, first.cache.hits) == (2, 1)
        assert a == b and isinstance(a, CompactionResult)
    files = sorted(p.name for p in tmp_path.rglob("*.json"))
    assert len(files) == 2 and not [p for p in tmp_path.rglob("*") if p.name.startswith(".")]
    with Summarizer(CallOptions("harness.summarizers.identity:summarize", isolation="inline"),
                    cache=CallCache(tmp_path)) as second:
        assert second(_request()) == a
        assert second.calls == 0  # answered from disk


def test_infra_errors_are_cached_for_the_run_but_not_on_disk(tmp_path):
    with Summarizer(CallOptions(f"{FAULTY}:raises", isolation="inline"), cache=CallCache(tmp_path)) as summarizer:
        for _ in range(2):
            with pytest.raises(InfraError):
                summarizer(_request())
        assert summarizer.calls == 1
    assert list(tmp_path.rglob("*.json")) == []


def test_rejects_bad_settings():
    with pytest.raises(ValueError, match="--protocol 'chat'"):
        Summarizer(CallOptions("harness.summarizers.identity:summarize", protocol="chat"))
    with pytest.raises(ValueError, match="--timeout 0"):
        Summarizer(CallOptions("harness.summarizers.identity:summarize", timeout=0))
