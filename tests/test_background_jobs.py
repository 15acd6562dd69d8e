"""Background jobs taught right: the rich protocol's worked example never rebuilds a call on a job handle,
and ``provider-valid`` holds a compactor to account for a call it wrote into an earlier round that the
source never made."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from harness import FactKind, Role, ToolCall, Turn
from harness._app.judging._session import SessionConfig, run_session
from harness._base._protocol import CompactionRequest, CompactionResult
from harness.oracles import Case, select
from harness.strategies import facts, transcripts

ROOT = Path(__file__).resolve().parent.parent


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLE = _load(ROOT / "docs" / "examples" / "protocol_rich.py", "protocol_rich_example")


def _job_handles(transcript) -> set[str]:
    return {f.literals[0] for f in transcript.facts
            if f.kind is FactKind.IN_FLIGHT_CALL and f.detail("mode") == "background"}


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(transcripts(facts=facts(kinds=[FactKind.IN_FLIGHT_CALL, FactKind.COMMITMENT]), min_facts=2, max_facts=5,
                   min_windows=3, max_windows=6, budget=400))
def test_the_worked_rich_example_never_holds_a_call_on_a_job_handle(transcript):
    handles = _job_handles(transcript)
    rounds = run_session(transcript, EXAMPLE.summarize, SessionConfig(budget=400))
    for rnd in rounds:
        calls = {c.id for t in rnd.result.messages for c in t.tool_calls}
        assert not calls & handles, (rnd.index, calls & handles)


def test_generated_sessions_have_background_jobs_across_several_compactions():
    """The property above is not vacuous: such sessions exist and are drawn."""
    from hypothesis import find

    transcript = find(transcripts(facts=facts(kinds=[FactKind.IN_FLIGHT_CALL]), min_facts=2, min_windows=3,
                                  max_windows=6, budget=400),
                      lambda t: len(_job_handles(t)) >= 1 and len(run_session(t, EXAMPLE.summarize,
                                                                               SessionConfig(budget=400))) >= 3,
                      settings=settings(max_examples=200, database=None, suppress_health_check=list(HealthCheck)))
    assert _job_handles(transcript)


def _provider_valid(transcript, boundary: int, request: CompactionRequest, result: CompactionResult):
    (check,) = [o.check for o in select() if o.id == "provider-valid"]
    return list(check(Case(transcript, boundary, request.budget, result, request=request)))


def test_a_call_the_compactor_wrote_on_a_job_handle_is_its_own_defect_the_next_round():
    from harness._base._model import Transcript

    call = ToolCall("call_a1", "deploy", "{}")
    source = (Turn(Role.USER, "Deploy it."), Turn(Role.ASSISTANT, "Starting.", (call,)),
              Turn(Role.TOOL, "Job job-77 accepted; no result yet.", tool_call_id="call_a1"),
              Turn(Role.USER, "Anything else?"), Turn(Role.ASSISTANT, "Waiting on job-77."))
    transcript = Transcript(turns=source)
    phantom = Turn(Role.ASSISTANT, "", (ToolCall("job-77", "deploy", "{}"),))  # written by round 1
    summary = Turn(Role.SYSTEM, "Deploy started as job-77.")
    request = CompactionRequest((summary, phantom, *source[3:]), 400, previous_output=2)
    carried_on = CompactionResult((summary, phantom, *source[3:]))
    findings = _provider_valid(transcript, len(source), request, carried_on)
    assert [f.call_id for f in findings] == ["job-77"]
    # A defect the source itself holds (a call it never answered, the session going on) stays the source's
    broken = (Turn(Role.USER, "Deploy it."), Turn(Role.ASSISTANT, "Starting.", (call,)), Turn(Role.USER, "And?"))
    request = CompactionRequest(broken, 400)
    assert _provider_valid(Transcript(turns=broken), len(broken), request, CompactionResult(broken)) == []


def test_a_call_left_awaiting_a_result_the_source_never_made_breaks_provider_valid_even_as_the_last_message():
    from harness._base._model import Transcript

    call = ToolCall("call_a1", "deploy", "{}")
    source = (Turn(Role.USER, "Deploy it."), Turn(Role.ASSISTANT, "Starting.", (call,)),
              Turn(Role.TOOL, "Job job-77 accepted; no result yet.", tool_call_id="call_a1"))
    transcript = Transcript(turns=source)
    request = CompactionRequest(source, 400)
    summary = Turn(Role.USER, "Earlier: deploy started as job-77, pending.")
    for dialect in ("chat", "anthropic", "openai-responses"):
        request = CompactionRequest(source, 400, dialect=dialect)
        phantom = CompactionResult((summary, Turn(Role.ASSISTANT, "", (ToolCall("job-77", "deploy", "{}"),))))
        findings = _provider_valid(transcript, len(source), request, phantom)
        assert [(f.call_id, f.detail.split(":")[0]) for f in findings] == [("job-77", f"{dialect} rule call-made")]
        # the handle stated as text is right; a pair the compactor made up and answered itself is accepted
        made_up = Turn(Role.ASSISTANT, "", (ToolCall("summary_1", "recall", "{}"),))
        answered = Turn(Role.TOOL, "Deploy started as job-77, pending.", tool_call_id="summary_1")
        for fine in (CompactionResult((summary,)), CompactionResult((Turn(Role.USER, "Go on."), made_up, answered))):
            assert _provider_valid(transcript, len(source), request, fine) == []


# Compactors written blind (tests/fixtures/background_jobs.py: from the shapes alone, without the oracles),
# each wrong about background jobs one way, or right.
JOB_ORACLES = ("dead-obligation", "provider-valid", "handle-retained", "closure", "handle-carried",
               "completion-honest", "ledger-monotone")
FIXTURE = ROOT / "tests" / "fixtures" / "background_jobs.py"


def _job_run(function: str):
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    spec = f"{FIXTURE}:{function}" if function != "example" else f"{ROOT / 'docs' / 'examples' / 'protocol_rich.py'}:summarize"
    return run(RunConfig.of(spec, examples=40, seed=3, quiet=True, isolation="inline", only=JOB_ORACLES))


@pytest.mark.parametrize("function, caught_by", [
    ("rich_phantom_call", "provider-valid"),  # a call rebuilt on the job handle, carried on
    ("rich_stale_ledger", "dead-obligation"),  # a ledger entry kept open after the job finished
    ("messages_all_jobs_pending", "dead-obligation"),  # every job ever seen stated as still running
])
def test_a_compactor_that_keeps_carrying_a_finished_job_is_caught_however_it_writes_it(function, caught_by):
    result = _job_run(function)
    assert not result.infra_errors
    assert caught_by in {f.invariant for f in result.failures}, [(f.invariant, f.detail) for f in result.failures]


@pytest.mark.parametrize("function", ["rich_jobs_right", "example"])
def test_compactors_that_state_jobs_and_carry_only_real_calls_pass(function):
    result = _job_run(function)
    assert not result.infra_errors and not result.failures, [(f.invariant, f.detail) for f in result.failures]
