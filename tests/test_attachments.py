"""Images and documents on user turns and tool results (``harness.Part`` of kind image or document).

Each provider dialect writes them where its API has them and reads them back byte-exact; chat drops them; generated
sources in the provider dialects carry them; and ``provider-valid`` holds a compactor to them: an attachment in the
context is byte-exact one it was given (``attachment-intact``), and a message kept word for word keeps its
attachments (``attachment-kept``), while a message that says in other words that its image is gone, or a message
dropped whole, is not held to it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness import InvalidArgument, Part, PartKind, Role, ToolCall, Transcript, Turn
from harness._base._dialects import read, render
from harness._base._protocol import CompactionRequest, CompactionResult
from harness.oracles import Case, select
from harness.strategies import PART_DIALECTS, with_provider_parts
from tests._cases import without_references

SHOT = Part(PartKind.IMAGE, "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB", "image/png", "error-dialog.png")
SPEC = Part(PartKind.DOCUMENT, "JVBERi0xLjQKJcfsj6IKNSAwIG9iago=", "application/pdf", "design-spec.pdf")
CALL = ToolCall("call_1", "take_screenshot", "{}")
SOURCE = (Turn(Role.USER, "The build page shows this error; what does it say?", parts=(SHOT,)),
          Turn(Role.ASSISTANT, "Let me look at the page myself.", (CALL,)),
          Turn(Role.TOOL, "captured", (), "call_1", (SPEC,)),
          Turn(Role.USER, "And the spec?"))


def _attachments(turns) -> list[tuple]:
    return [(t.role, p.kind, p.data, p.text) for t in turns for p in t.parts]


@pytest.mark.parametrize("dialect", PART_DIALECTS)
def test_each_provider_dialect_writes_the_attachments_and_reads_them_back_byte_exact(dialect):
    back = read(render(SOURCE, dialect), dialect)
    assert back == SOURCE
    assert _attachments(back) == _attachments(SOURCE)


def test_anthropic_names_a_document_but_not_an_image_and_responses_names_a_file_but_not_an_image():
    anthropic = read(render(SOURCE, "anthropic"), "anthropic")
    responses = read(render(SOURCE, "openai-responses"), "openai-responses")
    assert [p.id for t in anthropic for p in t.parts] == ["", "design-spec.pdf"]
    assert [p.id for t in responses for p in t.parts] == ["", "design-spec.pdf"]


def test_the_shapes_are_the_apis():
    body = render(SOURCE, "anthropic")
    first, result = body["messages"][0]["content"], body["messages"][2]["content"][0]
    assert first[0] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": SHOT.data}}
    assert first[1] == {"type": "text", "text": SOURCE[0].text}
    assert result["content"][1]["type"] == "document" and result["content"][1]["title"] == "design-spec.pdf"
    items = render(SOURCE, "openai-responses")
    assert items[0]["content"][1] == {"type": "input_image", "image_url": f"data:image/png;base64,{SHOT.data}",
                                      "detail": "auto"}
    output = next(i for i in items if i["type"] == "function_call_output")["output"]
    assert output[1] == {"type": "input_file", "filename": "design-spec.pdf",
                         "file_data": f"data:application/pdf;base64,{SPEC.data}"}


def test_an_attachment_given_by_reference_reads_as_its_reference():
    anthropic = {"messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}},
        {"type": "document", "source": {"type": "file", "file_id": "file_123"}, "title": "notes"}]}]}
    (turn,) = read(anthropic, "anthropic")
    assert [(p.kind, p.data, p.text, p.id) for p in turn.parts] == [
        (PartKind.IMAGE, "https://example.invalid/a.png", "url", ""), (PartKind.DOCUMENT, "file_123", "file", "notes")]
    responses = [{"type": "message", "role": "user", "content": [{"type": "input_file", "file_id": "file_9"}]}]
    (turn,) = read(responses, "openai-responses")
    assert [(p.data, p.text) for p in turn.parts] == [("file_9", "")]


def test_an_image_block_without_a_source_is_a_malformed_answer_naming_where():
    from harness._base._errors import MalformedResult

    with pytest.raises(MalformedResult, match=r"messages\[0\]\.content\[0\]\.source"):
        read({"messages": [{"role": "user", "content": [{"type": "image"}]}]}, "anthropic")


def test_chat_drops_attachments_and_a_turn_that_was_only_an_image():
    only = Turn(Role.USER, "", parts=(SHOT,))
    messages = render((*SOURCE, only), "chat")
    assert len(messages) == len(SOURCE)
    assert all(isinstance(m["content"], str) for m in messages if m["role"] != "assistant")


def test_attachments_belong_to_user_and_tool_turns_and_reasoning_to_assistant_turns():
    with pytest.raises(InvalidArgument, match="role 'assistant' cannot carry a part of kind 'image'"):
        Turn(Role.ASSISTANT, "Here.", parts=(SHOT,))
    with pytest.raises(InvalidArgument, match="role 'user' cannot carry a part of kind 'reasoning'"):
        Turn(Role.USER, "Hi.", parts=(Part(PartKind.REASONING, "c2ln", "thinking"),))


def _rules(dialect: str, result_turns) -> list[str]:
    (check,) = [o.check for o in select() if o.id == "provider-valid"]
    request = CompactionRequest(SOURCE, 400, dialect=dialect)
    case = Case(Transcript(turns=SOURCE), len(SOURCE), 400, CompactionResult(tuple(result_turns)), request=request)
    return [f.detail.split(":")[0].split()[-1] for f in check(case)]


@pytest.mark.parametrize("dialect", PART_DIALECTS)
def test_a_message_kept_word_for_word_without_its_image_is_caught_and_every_honest_way_passes(dialect):
    assert _rules(dialect, SOURCE) == []
    assert _rules(dialect, (Turn(Role.USER, "(earlier: a screenshot)"), *SOURCE[1:])) == []  # dropped whole
    said_gone = Turn(Role.USER, SOURCE[0].text + "\n[the screenshot error-dialog.png was removed]")
    assert _rules(dialect, (said_gone, *SOURCE[1:])) == []
    stripped = dataclasses.replace(SOURCE[0], parts=())
    assert _rules(dialect, (stripped, *SOURCE[1:])) == ["attachment-kept"]
    result_stripped = dataclasses.replace(SOURCE[2], parts=())
    assert _rules(dialect, (*SOURCE[:2], result_stripped, SOURCE[3])) == ["attachment-kept"]


@pytest.mark.parametrize("dialect", PART_DIALECTS)
def test_an_attachment_cut_or_retyped_is_caught(dialect):
    cut = dataclasses.replace(SOURCE[0], parts=(dataclasses.replace(SHOT, data=SHOT.data[:-4]),))
    assert _rules(dialect, (cut, *SOURCE[1:])) == ["attachment-intact", "attachment-kept"]
    retyped = dataclasses.replace(SOURCE[2], parts=(dataclasses.replace(SPEC, text="image/jpeg"),))
    assert _rules(dialect, (*SOURCE[:2], retyped, SOURCE[3])) == ["attachment-intact", "attachment-kept"]


def test_a_message_whose_text_another_given_message_shares_without_attachments_is_given_the_benefit_of_the_doubt():
    twin = Turn(Role.USER, SOURCE[0].text)  # the same words, sent again without the image
    given = (*SOURCE, twin)
    (check,) = [o.check for o in select() if o.id == "provider-valid"]
    case = Case(Transcript(turns=given), len(given), 400, CompactionResult((twin,)),
                request=CompactionRequest(given, 400, dialect="anthropic"))
    assert list(check(case)) == []


def test_chat_judges_no_attachments():
    assert _rules("chat", (dataclasses.replace(SOURCE[0], parts=()), *SOURCE[1:])) == []


def test_generated_sources_attach_images_and_documents_to_user_turns_and_tool_results_from_the_seed():
    turns = tuple(Turn(Role.USER if i % 3 == 0 else Role.ASSISTANT if i % 3 == 1 else Role.TOOL, f"turn {i}",
                       (ToolCall(f"c{i}", "f", "{}"),) if i % 3 == 1 else (), f"c{i - 1}" if i % 3 == 2 else None)
                  for i in range(30))
    source = with_provider_parts(Transcript(turns=turns, seed=11))
    attached = [(i, t.role, p) for i, t in enumerate(source.turns) for p in t.parts if p.kind in (PartKind.IMAGE,
                                                                                                   PartKind.DOCUMENT)]
    assert {role for _, role, _ in attached} == {Role.USER, Role.TOOL}
    assert {p.kind for _, _, p in attached} == {PartKind.IMAGE, PartKind.DOCUMENT}
    assert all(p.id.endswith((".png", ".pdf")) and p.text in ("image/png", "application/pdf") for _, _, p in attached)
    assert with_provider_parts(Transcript(turns=turns, seed=11)).turns[attached[0][0]].parts == attached[0][2:]
    assert without_references(source.turns) == list(turns)  # only references appended: every ground truth stays


def test_the_next_user_turn_after_an_attachment_names_it_and_no_other_turn_does():
    turns = tuple(Turn(Role.USER if i % 3 == 0 else Role.ASSISTANT if i % 3 == 1 else Role.TOOL, f"Turn {i}.",
                       (ToolCall(f"c{i}", "f", "{}"),) if i % 3 == 1 else (), f"c{i - 1}" if i % 3 == 2 else None)
                  for i in range(60))
    source = with_provider_parts(Transcript(turns=turns, seed=5)).turns
    attached = [(i, p.id) for i, t in enumerate(source) for p in t.parts if p.kind in (PartKind.IMAGE, PartKind.DOCUMENT)]
    assert len(attached) >= 5
    for i, name in attached:
        naming = [j for j, t in enumerate(source) if name in t.text]
        following = [j for j in range(i + 1, len(source)) if source[j].role is Role.USER]
        assert naming == following[:1], (name, i, naming)


BLIND = Path(__file__).resolve().parent / "fixtures" / "attachment_compactors.py"  # a helper's, from the API shapes only


@pytest.mark.parametrize("function, dialect, rule", [
    ("anthropic_window_keeps_attachments", "anthropic", None),
    ("anthropic_marks_removed_images", "anthropic", None),
    ("anthropic_strips_images", "anthropic", "attachment-kept"),
    ("anthropic_downscales_images", "anthropic", "attachment-intact"),
    ("responses_window_keeps_attachments", "openai-responses", None),
    ("responses_strips_files", "openai-responses", "attachment-kept"),
    ("responses_reencodes_images", "openai-responses", "attachment-intact"),
])
def test_compactors_written_blind_from_the_api_shapes_are_judged_by_the_attachment_rule_they_break(function, dialect,
                                                                                                  rule):
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    result = run(RunConfig.of(f"{BLIND}:{function}", examples=30, seed=3, quiet=True, isolation="inline",
                              dialect=dialect, only=("provider-valid", "tool-pairing")))
    assert not result.infra_errors
    assert {f.detail.split(":")[0].split()[-1] for f in result.failures} == ({rule} if rule else set()), [
        f.detail for f in result.failures]
    assert all(len(f.transcript.turns) <= 4 for f in result.failures)


def test_the_blind_compactors_pass_their_own_selfcheck():
    """The helper's own checks of its fixtures (written apart from the oracles): each does what it says."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(BLIND.with_name("attachment_compactors_selfcheck.py"))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "selfcheck: OK" in done.stdout


ASKED = Turn(Role.USER, "Is it fixed now? The error-dialog.png I sent earlier shows the same thing.")
ANSWERED = (*SOURCE, Turn(Role.ASSISTANT, "The spec says the build must pass first."), ASKED)


def _referenced(dialect: str, result_turns, given=ANSWERED) -> list[tuple[str, str]]:
    """The attachment-referenced findings (rule, severity) of ``result_turns`` as a compaction of ``given``."""
    (check,) = [o.check for o in select() if o.id == "provider-valid"]
    case = Case(Transcript(turns=given), len(given), 400, CompactionResult(tuple(result_turns)),
                request=CompactionRequest(given, 400, dialect=dialect))
    return [(f.detail.split(":")[0].split()[-1], f.severity.value) for f in check(case)
            if "attachment-referenced" in f.detail]


@pytest.mark.parametrize("dialect", PART_DIALECTS)
def test_the_pending_turn_asking_about_a_dropped_image_is_a_degrade_and_every_way_of_keeping_or_saying_so_passes(
        dialect):
    assert _referenced(dialect, (ASKED,)) == [("attachment-referenced", "degrade")]
    silent = Turn(Role.USER, "Earlier: the build page showed an error and the spec was checked.")
    assert _referenced(dialect, (silent, ASKED)) == [("attachment-referenced", "degrade")]
    assert _referenced(dialect, ANSWERED) == []  # kept
    assert _referenced(dialect, (SOURCE[0], ASKED)) == []  # the message holding it kept
    carried = Turn(Role.USER, "Earlier turns, summarized: the build page errored.", parts=(SHOT,))
    assert _referenced(dialect, (carried, ASKED)) == []  # carried into the summary byte-exact
    named = Turn(Role.USER, "Earlier the user sent error-dialog.png, a screenshot of the failing build page.")
    assert _referenced(dialect, (named, ASKED)) == []  # the compactor's own text names it
    for note in ("[2 screenshots from earlier turns are no longer attached]", "Removed: one image, one PDF.",
                 "(Attachments from the earlier part of the conversation were dropped to save space.)"):
        assert _referenced(dialect, (Turn(Role.USER, note), ASKED)) == [], note
    edited = Turn(Role.USER, ASKED.text + " (That image is not in this context any more.)")
    assert _referenced(dialect, (edited,)) == []  # not kept word for word: it says so itself


@pytest.mark.parametrize("dialect", PART_DIALECTS)
def test_only_the_pending_turn_and_only_what_the_compactor_was_given_count(dialect):
    later = (*ANSWERED, Turn(Role.ASSISTANT, "Looking."), Turn(Role.USER, "Thanks."))
    assert _referenced(dialect, later[-4:], given=later) == []  # an answered turn naming it: not the pending one
    summary = Turn(Role.USER, "Earlier turns, summarized.")
    given = (summary, ASKED)  # the image was dropped in an earlier round, before anyone asked about it
    assert _referenced(dialect, (ASKED,), given=given) == []
    document = Turn(Role.USER, "And does design-spec.pdf agree?")
    assert _referenced(dialect, (document,), given=(*SOURCE, Turn(Role.ASSISTANT, "Yes."), document)) == [
        ("attachment-referenced", "degrade")]  # a tool result's document


def test_chat_judges_no_references():
    assert _referenced("chat", (ASKED,)) == []


MUTANTS = Path(__file__).resolve().parent / "fixtures" / "parts_mutants.py"


def test_a_window_dropping_files_the_last_question_names_is_listed_as_degraded_and_the_report_names_the_files():
    from harness._app.reports._text import render_finding, render_text
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    strip = run(RunConfig.of(f"{MUTANTS}:anthropic_strips_attachments", examples=30, seed=3, quiet=True,
                             isolation="inline", dialect="anthropic", only=("provider-valid",)))
    (failure,) = strip.failures
    named = [p.id for t in failure.transcript.turns for p in t.parts if p.kind in (PartKind.IMAGE, PartKind.DOCUMENT)]
    assert named and all(f"[{'image' if n.endswith('.png') else 'document'} {n}]" in render_finding(strip, failure)
                         for n in named)
    window = run(RunConfig.of(f"{MUTANTS}:anthropic_keeps_thinking", examples=30, seed=3, quiet=True,
                              isolation="inline", dialect="anthropic", only=("provider-valid",)))
    assert window.failures == () and window.degradations["provider-valid"] > 0
    assert {g.detail.split(":")[0] for g in window.degraded} == {"anthropic rule attachment-referenced"}
    assert {g.outcome for g in window.degraded} == {"dropped"}  # what happened, in one word: not a malformed request
    assert "e.g. provider-valid: anthropic rule attachment-referenced: the pending user turn" in render_text(window)


REFERENCES = Path(__file__).resolve().parent / "fixtures" / "reference_compactors.py"  # a helper's, written blind


@pytest.mark.parametrize("function, dialect, silent", [
    ("anthropic_window_pins_attachments", "anthropic", False),
    ("anthropic_window_notes_dropped_files", "anthropic", False),
    ("anthropic_window_silent", "anthropic", True),
    ("responses_window_keeps_from_first_attachment", "openai-responses", False),
    ("responses_summary_mentions_files", "openai-responses", False),
    ("responses_window_silent", "openai-responses", True),
])
@pytest.mark.parametrize("seed", [3, 11])
def test_windows_written_blind_are_degraded_exactly_when_they_drop_an_asked_about_file_without_a_word(function, dialect,
                                                                                                     silent, seed):
    """Compactors written from the API shapes alone, two keeping the files, two saying in their own words that they
    dropped them, two silent: only the silent ones are listed, and none fails on an attachment rule."""
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    result = run(RunConfig.of(f"{REFERENCES}:{function}", examples=30, seed=seed, quiet=True, isolation="inline",
                              dialect=dialect, only=("provider-valid", "tool-pairing")))
    assert not result.infra_errors
    degraded = {g.detail.split(":")[0].split()[-1] for g in result.degraded}
    assert degraded == ({"attachment-referenced"} if silent else set())
    # The summarizing one also keeps, at budgets shrinking lowers to about 100 tokens, a function_call without the
    # reasoning item before it: a true finding the API refuses, and no attachment rule's.
    allowed = {"reasoning-with-call"} if function == "responses_summary_mentions_files" else set()
    assert {f.detail.split(":")[0].split()[-1] for f in result.failures} <= allowed


def test_the_blind_reference_compactors_pass_their_own_selfcheck():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(REFERENCES)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reference_compactors selfcheck: OK" in done.stdout
