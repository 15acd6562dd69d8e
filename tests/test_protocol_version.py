"""Protocol versions: a request says the version it is written in (in Python and on the wire), a compactor may
declare the version it was written for, and the changelog covers every version up to the current one."""

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from harness import (CompactionRequest, InvalidArgument, Part, PartKind, Role, SchemaError, SpecError, ToolCall,
                     Transcript, Turn)
from harness import compact_once, request_for
from harness._app.calling._options import CallOptions
from harness._app.calling._summarizer import Summarizer
from harness._app.cli._main import main
from harness._base._protocol import (MESSAGES_PROTOCOL_VERSION, PROTOCOL_CHANGES, PROTOCOL_VERSIONS, PROTOCOLS,
                                     RICH_PROTOCOL_VERSION, ProtocolChange, changes_since, declared_version,
                                     version_warning)
from harness._base._request_key import request_digest, request_key_material
from harness._base._wire import WIRE_VERSION, request_from_wire, request_to_wire
from tests._stubs import wire_stub

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "protocol-changes.md"
NEWER = (f"compaction_protocol_version = {RICH_PROTOCOL_VERSION + 1} is newer than this harness knows: it speaks the "
         f"rich protocol versions 1 to {RICH_PROTOCOL_VERSION}")


def _request() -> CompactionRequest:
    return request_for(Transcript((Turn(Role.USER, "Deploy to staging."), Turn(Role.ASSISTANT, "On it."))), 2, 100)


# -- the request says its version ---------------------------------------------------------------------------


def test_a_rich_request_is_written_in_the_current_version_unless_it_says_another():
    turns = _request().turns
    assert CompactionRequest(turns, 100).protocol_version == RICH_PROTOCOL_VERSION
    assert request_for(Transcript(turns), 2, 100).protocol_version == RICH_PROTOCOL_VERSION
    positional = CompactionRequest(turns, 100, (), 1, (), 0, "chat")  # as existing callers build it
    assert positional.protocol_version == RICH_PROTOCOL_VERSION
    assert CompactionRequest(turns, 100, protocol_version=1).protocol_version == 1


@pytest.mark.parametrize("value", [0, RICH_PROTOCOL_VERSION + 1, True, "2", None])
def test_a_request_version_the_harness_does_not_know_is_refused(value):
    with pytest.raises(InvalidArgument) as info:
        CompactionRequest(_request().turns, 100, protocol_version=value)
    assert str(info.value) == (f"protocol_version={value!r}: expected a rich protocol version this harness knows, "
                               f"versions 1 to {RICH_PROTOCOL_VERSION}")


def test_the_current_version_leaves_cache_keys_as_they_were_and_another_one_changes_them():
    request = _request()
    assert "protocol_version" not in request_key_material(request)
    older = CompactionRequest(request.turns, request.budget, request.tags, protocol_version=1)
    assert request_key_material(older)["protocol_version"] == 1
    assert request_digest(older) != request_digest(request)


_OLD_KEYS = {"schema", "version", "protocol", "budget", "messages"}  # what a request said before versions


@pytest.mark.parametrize("protocol, version, extra", [("rich", RICH_PROTOCOL_VERSION, {"tags"}),
                                                     ("messages", MESSAGES_PROTOCOL_VERSION, set())])
def test_the_wire_request_adds_its_protocol_version_and_changes_nothing_else(protocol, version, extra):
    data = request_to_wire(_request(), protocol)
    assert data["protocol_version"] == version == PROTOCOL_VERSIONS[protocol]
    assert data["version"] == WIRE_VERSION == 1  # the envelope's own version: old servers still accept it
    assert set(data) == _OLD_KEYS | extra | {"protocol_version"}


def test_a_messages_request_carries_the_messages_shape_s_version():
    older = next(v for v in range(1, RICH_PROTOCOL_VERSION) if v != MESSAGES_PROTOCOL_VERSION)  # tells them apart
    older_rich = CompactionRequest(_request().turns, 100, protocol_version=older)
    assert request_to_wire(older_rich, "rich")["protocol_version"] == older
    assert request_to_wire(older_rich, "messages")["protocol_version"] == MESSAGES_PROTOCOL_VERSION


def test_a_server_reads_the_version_back_and_refuses_one_newer_than_it_knows():
    request = CompactionRequest(_request().turns, 100, protocol_version=1)
    assert request_from_wire(request_to_wire(request, "rich"))[0] == request
    data = request_to_wire(_request(), "rich")
    del data["protocol_version"]  # a request from a harness before versions: read as the current one
    assert request_from_wire(data)[0].protocol_version == RICH_PROTOCOL_VERSION
    messages = request_to_wire(_request(), "messages")
    assert request_from_wire(messages)[0].protocol_version == RICH_PROTOCOL_VERSION  # the rich request it becomes
    with pytest.raises(SchemaError) as info:
        request_from_wire({**data, "protocol_version": RICH_PROTOCOL_VERSION + 1})
    assert str(info.value) == ("<request>: field 'protocol_version': expected a rich protocol version this reader "
                               f"knows (at most {RICH_PROTOCOL_VERSION}), got {RICH_PROTOCOL_VERSION + 1}")
    with pytest.raises(SchemaError, match="field 'protocol_version': expected a messages protocol version this "
                                          rf"reader knows \(at most {MESSAGES_PROTOCOL_VERSION}\), "
                                          rf"got {MESSAGES_PROTOCOL_VERSION + 1}"):
        request_from_wire({**messages, "protocol_version": MESSAGES_PROTOCOL_VERSION + 1})


def test_on_the_wire_a_rich_request_s_messages_carry_their_parts_and_a_chat_messages_request_never_does():
    parts = (Part(PartKind.REASONING, "c2lnbmF0dXJl", "Check the env first.", "rs_1"),
             Part(PartKind.COMPACTION, "ZW5jcnlwdGVk", "", "cmp_1"))
    turns = (Turn(Role.USER, "Deploy to staging."),
             Turn(Role.ASSISTANT, "On it.", (ToolCall("call_1", "deploy", "{}"),), None, parts))
    request = CompactionRequest(turns, 100, dialect="openai-responses")
    sent = request_to_wire(request, "rich")["messages"]
    assert "parts" not in sent[0]
    assert sent[1]["parts"] == [
        {"kind": "reasoning", "data": "c2lnbmF0dXJl", "text": "Check the env first.", "id": "rs_1"},
        {"kind": "compaction", "data": "ZW5jcnlwdGVk", "text": "", "id": "cmp_1"}]
    assert request_from_wire(request_to_wire(request, "rich"))[0].turns[1].parts == parts  # equality leaves parts out
    chat = request_to_wire(CompactionRequest(turns, 100), "messages")["messages"]
    assert chat[1] == {"role": "assistant", "content": "On it.", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "deploy", "arguments": "{}"}}]}


_RECORDER = '''import json, sys
with open(sys.argv[1], "a") as log:
    for line in sys.stdin:
        log.write(line)
        log.flush()
        print(json.dumps({"messages": "Summary."}), flush=True)
'''


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_pipe_summarizer_is_sent_the_version(tmp_path, protocol):
    script, log = tmp_path / "recorder.py", tmp_path / "requests.jsonl"
    script.write_text(_RECORDER)
    spec = f"cmd:{shlex.join([sys.executable, str(script), str(log)])}"
    with Summarizer(CallOptions(spec, protocol=protocol)) as summarizer:
        summarizer(_request())
        assert summarizer.declared_version is None and summarizer.warnings == ()  # a command has no attribute
    sent = json.loads(log.read_text().splitlines()[0])
    assert (sent["protocol"], sent["protocol_version"]) == (protocol, PROTOCOL_VERSIONS[protocol])


def test_an_http_summarizer_is_sent_the_version():
    def summarize(request):
        return "Summary."

    summarize.compaction_protocol_version = 1  # on the server's side: the harness never sees it
    with wire_stub(summarize) as server:
        with Summarizer(CallOptions(server.url, protocol="rich")) as summarizer:
            summarizer(_request())
            assert summarizer.declared_version is None and summarizer.warnings == ()
        assert server.requests[0].body["protocol_version"] == RICH_PROTOCOL_VERSION


# -- the version a compactor declares -----------------------------------------------------------------------


def _declaring(version):
    def summarize(request):
        return "Summary."

    summarize.compaction_protocol = "rich"
    if version is not None:
        summarize.compaction_protocol_version = version
    return summarize


@pytest.mark.parametrize("version", [None, *range(1, RICH_PROTOCOL_VERSION + 1)])
def test_a_declared_version_the_harness_knows_is_read(version):
    assert declared_version(_declaring(version), "rich") == version
    assert compact_once(_declaring(version), _request()).summary_text == "Summary."


@pytest.mark.parametrize("value, problem", [
    (RICH_PROTOCOL_VERSION + 1, f"is newer than this harness knows: it speaks the rich protocol versions 1 to "
                                f"{RICH_PROTOCOL_VERSION}; upgrade compaction-harness, or declare the version the "
                                "compactor was written for"),
    (0, f": expected a whole number, a rich protocol version (versions 1 to {RICH_PROTOCOL_VERSION})"),
    ("2", f": expected a whole number, a rich protocol version (versions 1 to {RICH_PROTOCOL_VERSION})"),
    (True, f": expected a whole number, a rich protocol version (versions 1 to {RICH_PROTOCOL_VERSION})"),
    (2.0, f": expected a whole number, a rich protocol version (versions 1 to {RICH_PROTOCOL_VERSION})"),
])
def test_a_declared_version_the_harness_does_not_know_is_refused_naming_the_attribute(value, problem):
    with pytest.raises(SpecError) as info:
        declared_version(_declaring(value), "rich", spec="team.py:summarize")
    assert str(info.value) == f"summarizer 'team.py:summarize': compaction_protocol_version = {value!r}" + (
        f" {problem}" if problem[0] != ":" else problem)
    with pytest.raises(SpecError, match="compaction_protocol_version"):
        compact_once(_declaring(value), _request())


def test_a_messages_summarizer_declares_a_messages_protocol_version():
    def summarize(messages, budget):
        return messages

    summarize.compaction_protocol_version = MESSAGES_PROTOCOL_VERSION + 1
    with pytest.raises(SpecError) as info:
        declared_version(summarize, "messages")
    assert str(info.value) == (f"compaction_protocol_version = {MESSAGES_PROTOCOL_VERSION + 1} is newer than this "
                               f"harness knows: it speaks the messages protocol versions 1 to {MESSAGES_PROTOCOL_VERSION}; "
                               "upgrade compaction-harness, or declare the version the compactor was written for")


_COMPACTORS = f'''from harness.summarizers.ledgered import summarize as _ledgered


def _declared(version):
    def summarize(request):
        return _ledgered(request)

    summarize.compaction_protocol = "rich"
    if version is not None:
        summarize.compaction_protocol_version = version
    return summarize


undeclared, older = _declared(None), _declared(1)
current, newer = _declared({RICH_PROTOCOL_VERSION}), _declared({RICH_PROTOCOL_VERSION + 1})
'''


@pytest.fixture
def compactors(tmp_path):
    path = tmp_path / "declared.py"
    path.write_text(_COMPACTORS)
    return path


def _warnings_of(compactors, name, isolation, tmp_path, capsys):
    report = tmp_path / f"{name}.json"
    code = main(["run", "--summarizer", f"{compactors}:{name}", "--examples", "3", "--seed", "1", "--quiet",
                 "--report-json", str(report), *isolation])
    assert code == 0, capsys.readouterr()
    text = capsys.readouterr().out
    warnings = [w for w in json.loads(report.read_text())["warnings"] if "protocol version" in w]
    return warnings, [line for line in text.splitlines() if "protocol version" in line]


@pytest.mark.parametrize("isolation", [[], ["--inline"]], ids=["worker", "inline"])
def test_a_compactor_written_for_an_older_version_is_warned_once_with_what_changed(compactors, tmp_path, capsys,
                                                                                   isolation):
    warnings, lines = _warnings_of(compactors, "older", isolation, tmp_path, capsys)
    assert len(warnings) == 1 and lines == [f"! {warnings[0]}"]
    said = warnings[0]
    assert said == version_warning("rich", 1)
    assert said.startswith("the summarizer was written for rich protocol version 1 (compaction_protocol_version = 1);"
                           f" this harness speaks version {RICH_PROTOCOL_VERSION}. Version 2 changed: an "
                           "in_flight_call tag whose detail mode is background is a background job: its literal is the "
                           "job handle, not a call id;")
    for change in changes_since("rich", 1):
        for text in (*change.changed, *change.added):
            assert text in said
    assert said.endswith("See the protocol changes page (reference/protocol-changes.md).")


@pytest.mark.parametrize("name", ["current", "undeclared"])
def test_a_compactor_written_for_the_current_version_or_saying_none_is_not_warned(compactors, tmp_path, capsys, name):
    assert _warnings_of(compactors, name, [], tmp_path, capsys) == ([], [])


@pytest.mark.parametrize("isolation", [[], ["--inline"]], ids=["worker", "inline"])
def test_a_compactor_written_for_a_newer_version_stops_the_run_with_exit_2(compactors, capsys, isolation):
    assert main(["run", "--summarizer", f"{compactors}:newer", "--examples", "3", "--quiet", *isolation]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == (f"SpecError: summarizer '{compactors}:newer': {NEWER}; upgrade "
                                    f"compaction-harness, or declare the version the compactor was written for")
    assert "compaction-harness:" not in captured.out  # refused before any example


def test_the_warning_names_every_later_version_and_none_for_the_current_one():
    assert version_warning("rich", None) is None and version_warning("rich", RICH_PROTOCOL_VERSION) is None
    assert version_warning("messages", MESSAGES_PROTOCOL_VERSION) is None
    assert [c.version for c in changes_since("rich", 1)] == list(range(2, RICH_PROTOCOL_VERSION + 1))
    assert changes_since("rich", RICH_PROTOCOL_VERSION) == ()


def _change(protocol: str, version: int) -> ProtocolChange:
    return next(c for c in PROTOCOL_CHANGES if (c.protocol, c.version) == (protocol, version))


def test_a_compactor_written_for_rich_2_is_told_of_the_opaque_parts_and_not_of_what_it_already_knew():
    said = version_warning("rich", 2)
    assert said.startswith("the summarizer was written for rich protocol version 2 (compaction_protocol_version = 2);"
                           f" this harness speaks version {RICH_PROTOCOL_VERSION}. Version 3 added: a Turn may carry "
                           "opaque parts (Turn.parts: harness.Part, kind reasoning or compaction)")
    assert [c.version for c in changes_since("rich", 2)] == list(range(3, RICH_PROTOCOL_VERSION + 1))
    for change in changes_since("rich", 2):
        for text in (*change.changed, *change.added):
            assert text in said
    version_2 = _change("rich", 2)
    assert not [text for text in (*version_2.changed, *version_2.added) if text in said]
    assert "Version 2 " not in said
    assert said.endswith("See the protocol changes page (reference/protocol-changes.md).")


def test_a_messages_compactor_written_for_version_1_is_told_of_the_provider_parts():
    said = version_warning("messages", 1)
    assert said.startswith("the summarizer was written for messages protocol version 1 "
                           "(compaction_protocol_version = 1); this harness speaks version "
                           f"{MESSAGES_PROTOCOL_VERSION}. Version 2 added: in the anthropic and openai-responses "
                           "dialects, assistant messages carry the provider's opaque parts: thinking and "
                           "redacted_thinking blocks, reasoning items and compaction items;")
    for change in changes_since("messages", 1):
        for text in (*change.changed, *change.added):
            assert text in said
    assert not [text for text in _change("messages", 1).added if text in said]


# -- the changelog covers every version ---------------------------------------------------------------------


def _sections(page: str) -> dict[tuple[str, int], str]:
    """The page's ``## <Protocol> protocol`` / ``### Version N`` sections: (protocol, N) -> text, spaces collapsed."""
    out: dict[tuple[str, int], list[str]] = {}
    protocol, key = None, None
    for line in page.splitlines():
        if line.startswith("## "):
            m = re.fullmatch(r"## (\w+) protocol", line)
            protocol, key = (m.group(1).lower() if m else None), None
        elif line.startswith("### "):
            m = re.fullmatch(r"### Version (\d+)", line)
            key = (protocol, int(m.group(1))) if m and protocol else None
            if key:
                out[key] = []
        elif key:
            out[key].append(line)
    return {k: " ".join(" ".join(lines).split()) for k, lines in out.items()}


def _missing(versions, changes: tuple[ProtocolChange, ...], page: str) -> list[str]:
    """Every version up to each protocol's current one without its changelog entry in code or on the page."""
    sections = _sections(page)
    missing = []
    for protocol, current in versions.items():
        for version in range(1, current + 1):
            entry = [c for c in changes if (c.protocol, c.version) == (protocol, version)]
            if len(entry) != 1 or not (entry[0].added or entry[0].changed):
                missing.append(f"{protocol} {version}: no ProtocolChange")
            if (protocol, version) not in sections:
                missing.append(f"{protocol} {version}: no section on the page")
                continue
            missing += [f"{protocol} {version}: the page does not quote {text!r}"
                        for c in entry for text in (*c.added, *c.changed) if f'"{text}"' not in sections[protocol, version]]
    return missing


def test_the_changelog_covers_every_version_up_to_the_current_one_in_code_and_on_the_page():
    assert set(PROTOCOL_VERSIONS) == set(PROTOCOLS)
    assert _missing(PROTOCOL_VERSIONS, PROTOCOL_CHANGES, PAGE.read_text(encoding="utf-8")) == []
    assert all(c.version <= PROTOCOL_VERSIONS[c.protocol] for c in PROTOCOL_CHANGES)  # nothing from the future
    ordered = [(c.protocol, c.version) for c in PROTOCOL_CHANGES]
    assert ordered == sorted(set(ordered), key=lambda pv: (PROTOCOLS.index(pv[0]), pv[1]))


def test_a_bump_without_a_changelog_entry_is_caught():
    bumped = {**PROTOCOL_VERSIONS, "rich": RICH_PROTOCOL_VERSION + 1}
    assert _missing(bumped, PROTOCOL_CHANGES, PAGE.read_text(encoding="utf-8")) == [
        f"rich {RICH_PROTOCOL_VERSION + 1}: no ProtocolChange", f"rich {RICH_PROTOCOL_VERSION + 1}: no section on the page"]
    unquoted = PAGE.read_text(encoding="utf-8").replace('"a retraction or supersession tag', '"a retraction tag')
    assert _missing(PROTOCOL_VERSIONS, PROTOCOL_CHANGES, unquoted) == [
        "rich 2: the page does not quote 'a retraction or supersession tag names the kind of the fact it ended "
        "(detail target_kind)'"]


def test_the_changelog_page_sits_next_to_the_protocols_page_and_is_linked_from_it():
    reference = next(item["Reference"] for item in yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
                     if isinstance(item, dict) and "Reference" in item)
    pages = [next(iter(entry.values())) for entry in reference]
    assert pages[pages.index("reference/protocols.md") + 1] == "reference/protocol-changes.md"
    assert "(protocol-changes.md)" in (ROOT / "docs" / "reference" / "protocols.md").read_text(encoding="utf-8")


def test_the_protocols_page_names_the_current_versions():
    """The page states the versions in words; a bump that leaves it behind fails here."""
    page = (ROOT / "docs" / "reference" / "protocols.md").read_text(encoding="utf-8")
    assert f"the current one, {RICH_PROTOCOL_VERSION}, unless it says another" in page
    assert f"`protocol_version` ({RICH_PROTOCOL_VERSION}), or `{MESSAGES_PROTOCOL_VERSION}` for the messages shape" in page
    changes = PAGE.read_text(encoding="utf-8")
    assert (f"**messages protocol, version {MESSAGES_PROTOCOL_VERSION}** and the **rich protocol, version "
            f"{RICH_PROTOCOL_VERSION}**") in changes
