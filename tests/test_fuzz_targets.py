"""The fuzz targets (``fuzz/``): their saved inputs, a plain test per bug they found, and a short run of each.

Every seed and every saved crash input is replayed through its target function, which lets
nothing but the documented errors out (``SchemaError`` from a loader, ``InfraError`` from what a
summarizer returns or answers) and checks that what loads writes back. The runs under atheris
are skipped where atheris is not installed (``pip install -e '.[fuzz]'``).
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz import _targets
from harness import CompactionRequest, CompactionResult, InfraError, Role, SchemaError, ToolCall, Turn, loads
from harness import transcript_from_dict
from harness._app.corpus._entries import load_entry
from harness._app.calling._openai import _completion
from harness._base._calling import call_once
from harness._base._wire import Usage

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
SAVED = sorted(p for kind in ("seeds", "regressions") for p in (FUZZ / kind).glob("*/*") if p.is_file())


@pytest.mark.parametrize("path", SAVED, ids=lambda p: "/".join(p.parts[-3:]))
def test_saved_input_raises_only_documented_errors(path):
    """Replayed as the fuzzer ran it (the same recursion headroom): JSON nested ~940 deep overflows alike."""
    _targets.replay(path.parent.name, path.read_bytes())


def test_saved_inputs_are_filed_under_a_target():
    folders = {p.parent.name for p in SAVED}
    assert folders <= set(_targets.TARGETS)
    assert {p.parent.name for p in SAVED if p.parent.parent.name == "seeds"} == set(_targets.TARGETS)


def test_seed_documents_are_valid():
    for path in (FUZZ / "seeds" / "transcript").glob("*.json"):
        loads(path.read_text(encoding="utf-8"))
    for path in (FUZZ / "seeds" / "corpus_entry").glob("*.json"):
        load_entry(path)


# --- one test per bug the targets found -------------------------------------------------------

def _deep(depth: int = 100_000) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def test_a_value_too_deep_to_repr_is_named_in_the_schema_error():
    """Was RecursionError from ``repr`` while building the SchemaError (JSON text nested ~990 deep did it too)."""
    with pytest.raises(SchemaError, match=r"field 'schema_version': expected an integer, "
                                          r"got <list that cannot be shown \(RecursionError\)>"):
        transcript_from_dict({"schema_version": _deep(), "turns": []})


def test_a_number_over_pythons_digit_limit_is_a_schema_error(tmp_path):
    """Was ValueError ("Exceeds the limit (4300 digits) for integer string conversion") out of loads and parse_json."""
    text = '{"schema_version": 1, "seed": ' + "9" * 5000 + ', "turns": []}'
    with pytest.raises(SchemaError, match=r"<t>: field '<root>': expected integers of at most 4300 digits"):
        loads(text, source="<t>")
    entry = tmp_path / "entry.json"
    entry.write_text(text, encoding="utf-8")
    with pytest.raises(SchemaError, match=r"entry\.json: field '<root>': expected integers of at most 4300 digits"):
        load_entry(entry)


@pytest.mark.parametrize("details, field", [({"exception": "Conn\udcc3Error"}, "facts[0].details.exception"),
                                            ({"\ud800": "x"}, "facts[0].details")])
def test_a_lone_surrogate_in_fact_details_is_a_schema_error(details, field):
    """Was accepted, then dumps(...).encode() (saving a corpus entry, naming it) failed with UnicodeEncodeError."""
    doc = {"schema_version": 1, "turns": [{"role": "user", "text": "E5314"}],
           "facts": [{"id": "F0", "kind": "unresolved_error", "literals": ["E5314"], "origin_turn": 0,
                      "details": details}]}
    expected = f"field '{field}': expected valid Unicode text, got 'a lone surrogate"
    with pytest.raises(SchemaError, match=re.escape(expected)):
        loads(json.dumps(doc))


_REQUEST = CompactionRequest((Turn(Role.USER, "Never use s3://prod-01/."),), 100)


def _turn_past_its_checks(role: Role, calls: tuple, call_id: str | None) -> Turn:
    turn = object.__new__(Turn)
    for name, value in zip(Turn.__slots__, (role, "text", calls, call_id)):
        object.__setattr__(turn, name, value)
    return turn


def test_a_turn_built_past_its_checks_is_a_malformed_result():
    """Was accepted, then failed to load back from the call cache with MalformedResult (not InfraError)."""
    turn = _turn_past_its_checks(Role.USER, (ToolCall("call_1", "run"),), None)
    with pytest.raises(InfraError, match=r"malformed: message \[0\]: only assistant turns make tool calls"):
        call_once(lambda request: CompactionResult((turn,)), "rich", _REQUEST)


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError("no message")


def test_a_summarizer_exception_that_cannot_be_printed_is_an_infra_error():
    """Was the ValueError from its __str__, raised out of call_once."""
    def summarize(messages, budget):
        raise _Unprintable()

    with pytest.raises(InfraError, match=r"exception: the summarizer raised _Unprintable: "
                                         r"<_Unprintable that cannot be shown \(ValueError\)>"):
        call_once(summarize, "messages", _REQUEST)


def test_sys_exit_with_an_unprintable_code_is_an_infra_error():
    def summarize(messages, budget):
        sys.exit(10**5000)

    with pytest.raises(InfraError, match=r"called sys.exit\(<int that cannot be shown \(ValueError\)>\)"):
        call_once(summarize, "messages", _REQUEST)


class _Exits(list):
    def __iter__(self):
        sys.exit(3)


def test_a_result_that_exits_while_it_is_read_is_malformed():
    """Was SystemExit out of call_once (inline, the harness itself exited); during the call it was already caught."""
    with pytest.raises(InfraError, match=r"malformed: reading the result raised SystemExit: 3"):
        call_once(lambda messages, budget: _Exits(), "messages", _REQUEST)


def test_a_chat_completion_too_deep_to_show_is_malformed():
    """Was RecursionError from json.dumps(data) while writing the 'malformed' message."""
    with pytest.raises(InfraError, match=r"malformed: expected a chat completion .* got a list nested too deeply"):
        _completion(_deep())


def test_chat_completion_usage_counts_only_non_negative_ints():
    """Was Usage(-40, True): a negative count lowered the run's token total under --max-tokens."""
    text, usage = _completion({"choices": [{"message": {"content": "summary"}}],
                               "usage": {"prompt_tokens": -40, "completion_tokens": True}})
    assert (text, usage) == ("summary", Usage(0, 0))


# --- each target under atheris ----------------------------------------------------------------

needs_atheris = pytest.mark.skipif(importlib.util.find_spec("atheris") is None,
                                   reason="atheris is not installed (pip install -e '.[fuzz]')")


def test_targets_script_is_executable():
    """libFuzzer's -fork and -merge=1 re-execute argv[0] itself."""
    script = FUZZ / "targets.py"
    assert os.access(script, os.X_OK)
    assert script.read_text(encoding="utf-8").startswith("#!/usr/bin/env python3\n")


@needs_atheris
@pytest.mark.parametrize("target", sorted(_targets.TARGETS))
def test_target_runs_under_atheris(target, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(FUZZ / "seeds" / target, corpus)
    done = subprocess.run([sys.executable, str(FUZZ / "targets.py"), target, "-runs=200", "-seed=1",
                           f"-artifact_prefix={tmp_path}/", str(corpus)],
                          cwd=tmp_path, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    log = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, log[-4000:]
    assert "Done 200 runs" in log
