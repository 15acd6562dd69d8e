"""Correct compactors in styles we never wrote for, and the identity summarizer, judged over whole sessions.

``tests/fixtures/style_compactors.py``, ``more_styles.py`` and ``new_styles.py`` were
written by sessions that never read the oracles: per-item prose, grouped Markdown,
pretty JSON, a prose recap with a verbatim tail, YAML with camelCase keys, one
Markdown table, terse engineer notes, and (issue 29) XML-tagged state, a past-tense
narrative, a Markdown ledger table, an on-call handover note and a YAML runbook. Each
keeps every obligation faithfully, so any violation is a false alarm of ours.

They name in-flight calls in their text, as a summary does; re-attaching a pending
call is the runtime's part (reference 000: the router re-attaches the handle), so each
is judged inside a runtime whose router keeps pending calls as structured calls, and
``handle-carried`` holds that runtime to it like every other oracle.
"""

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings

from harness import compact_once
from harness._app.judging._judge import judge_session
from harness._base._result_codec import result_from_return
from harness.summarizers import identity
from harness.summarizers._render import handle_turn, in_flight_calls
from harness.strategies import transcripts
from tests.fixtures import more_styles, new_styles, style_compactors

STYLES = (
    (style_compactors, "per_item_prose"), (style_compactors, "grouped_markdown"), (style_compactors, "pretty_json"),
    (style_compactors, "recap_with_tail"), (more_styles, "yaml_state"), (more_styles, "markdown_table"),
    (more_styles, "terse_notes"),
)
# new_styles re-attaches its own in-flight calls (a structured call after the summary), so it is judged as it is.
NEW_STYLES = ("xml_state", "past_tense_narrative", "ledger_table", "incident_notes", "yaml_runbook")
_SESSIONS = settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
_FEWER = settings(_SESSIONS, max_examples=150)


def _routed(summarize):
    """``summarize`` inside a runtime that re-attaches each call still in flight after the summary."""
    def compact(request):
        result = result_from_return(summarize(request))
        kept = {c.id for t in result.messages for c in t.tool_calls}  # a call the tail kept is not made twice
        pending = tuple(c for c in in_flight_calls(request) if c.id not in kept)
        return dataclasses.replace(result, messages=result.messages + handle_turn(pending))
    compact.compaction_protocol = "rich"
    return compact


def _violations(summarize, protocol, transcript, *, ignore=()):
    ev = judge_session(transcript, lambda request: compact_once(summarize, request, protocol=protocol), budget=2000)
    assert ev.infra is None, ev.infra
    return [line for line, key in zip(ev.describe(), ev.violations) if key[0] not in ignore]


@pytest.mark.parametrize("module, style", STYLES, ids=[name for _, name in STYLES])
def test_a_correct_compactor_in_another_style_is_never_flagged(module, style):
    summarize = _routed(getattr(module, style))

    @_SESSIONS
    @given(transcripts(max_turns=400))
    def check(transcript):
        assert _violations(summarize, "rich", transcript) == []

    check()


@pytest.mark.parametrize("style", NEW_STYLES)
def test_a_correct_compactor_in_a_style_written_for_issue_29_is_never_flagged(style):
    """Their writer chose to keep every obligation over fitting a budget tightened to a few dozen tokens: an
    overrun there is theirs (budget-respected is right to say so), not a false alarm of the reading."""
    summarize = getattr(new_styles, style)

    @_FEWER
    @given(transcripts(max_turns=400))
    def check(transcript):
        assert _violations(summarize, "rich", transcript, ignore=("budget-respected",)) == []

    check()


@_SESSIONS
@given(transcripts(max_turns=400))
def test_identity_passes_everything_but_the_budget(transcript):
    """Keeping everything loses nothing: only the budget oracles may object (summary-growth included)."""
    assert _violations(identity.summarize, "messages", transcript, ignore=("budget-respected", "ledger-budget")) == []
