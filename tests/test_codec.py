import re
import json

import pytest

import harness
from harness import SchemaError, dumps, load, loads
from tests.test_model import _transcript


def test_round_trip_is_exact():
    t = _transcript()
    assert loads(dumps(t)) == t
    assert dumps(loads(dumps(t))) == dumps(t)


def _doc(**changes):
    data = json.loads(dumps(_transcript()))
    for path, value in changes.items():
        target = data
        *parents, last = path.split("__")
        for p in parents:
            target = target[int(p)] if p.isdigit() else target[p]
        if value is _DELETE:
            del target[int(last) if last.isdigit() else last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return json.dumps(data)


_DELETE = object()


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"schema_version": 2}, "field 'schema_version': expected 1 (this release reads only that version), got 2"),
        ({"schema_version": _DELETE}, "field 'schema_version': expected a value (the field is required)"),
        ({"turns": "nope"}, "field 'turns': expected a list, got 'nope'"),
        ({"turns__0__role": "robot"}, "field 'turns[0].role': expected one of 'system', 'user', 'assistant', 'tool', got 'robot'"),
        ({"turns__0__text": 5}, "field 'turns[0].text': expected a string, got 5"),
        ({"turns__1__tool_calls__0__id": ""}, "field 'turns[1].tool_calls[0].id': expected a non-empty string"),
        ({"facts__0__kind": "wish"}, "field 'facts[0].kind': expected a defined fact kind (one of artifact_reference,"),
        ({"facts__0__literals": ["ok", 3]}, "field 'facts[0].literals[1]': expected a non-empty string, got 3"),
        ({"facts__0__origin_turn": -1}, "field 'facts[0].origin_turn': expected an integer >= 0, got -1"),
        ({"facts__0__origin_turn": True}, "field 'facts[0].origin_turn': expected an integer, got True"),
        ({"facts__1__fate__status": "open"}, "field 'facts[1].fate': expected a consistent value"),
        ({"facts__2__origin_turn": 99}, "field '<root>': expected a consistent value, got \"fact 'F0.retraction' has origin_turn=99"),
        ({"compaction_points": [3, 2]}, "compaction_points must be strictly increasing"),
        ({"seed": "x"}, "field 'seed': expected an integer, got 'x'"),
    ],
)
def test_malformed_documents_name_the_field(changes, message):
    with pytest.raises(SchemaError) as info:
        loads(_doc(**changes), source="t.json")
    assert str(info.value).startswith("t.json: ")
    assert message in str(info.value)


def test_not_json_names_the_position():
    with pytest.raises(SchemaError, match=r"t.json: field '<root>': expected valid JSON, got 'Expecting value at line 1 column 1'"):
        loads("nope", source="t.json")


def test_root_must_be_an_object():
    with pytest.raises(SchemaError, match=r"field '<root>': expected an object, got \[\]"):
        loads("[]")


def test_load_names_the_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"schema_version": 1, "turns": [{"role": "user"}]}')
    with pytest.raises(SchemaError, match=rf"{path}: field 'turns\[0\].text': expected a value"):
        load(path)
    with pytest.raises(SchemaError, match=re.escape("missing.json: field '<root>': expected an existing file, got 'no such file'")):
        load(tmp_path / "missing.json")


def test_schema_error_is_a_value_error_and_harness_error():
    assert issubclass(SchemaError, ValueError)
    assert issubclass(SchemaError, harness.HarnessError)
