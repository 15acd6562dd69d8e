"""The session mutation matrix: each session-level oracle catches the blind mutant built to break it,
the failure shrinks to a small session and replays from the corpus, and correct compactors pass.

The mutants and the correct compactors' protocol-2 fields were written by a session that never read
the oracles (see harness/summarizers/mutants.py).
"""

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from harness import compact_once
from harness._app.corpus._entries import CorpusSaver, load_corpus
from harness._app.judging._judge import judge_session
from harness._app.corpus._replay import replay_corpus
from harness._app.running._options import RunConfig
from harness._app.running._run import run
from harness._base._model import Consumer
from harness.summarizers import ledgered, prose
from harness.summarizers.mutants import MUTANTS, SESSION_MUTANTS
from harness.oracles import registered
from harness.strategies import transcripts

BUDGET = 1500
ROUTER = Consumer("router", ("handle-retained", "closure"))
_FIND = settings(max_examples=300, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
_SESSIONS = transcripts(min_turns=50, max_turns=600, max_facts=8, consumers=[ROUTER])


def judge(summarize, transcript, *, protocol="rich", oracles=None):
    """A whole session, the summarizer called in this process; every request asked a second time."""
    def call(request):
        return compact_once(summarize, request, protocol=protocol)
    return judge_session(transcript, call, budget=BUDGET, oracles=oracles,
                         ask_again=lambda requests: [call(r) for r in requests])


def test_every_session_oracle_has_a_mutant():
    assert set(SESSION_MUTANTS) == {o.id for o in registered() if o.scope == "session"}
    assert not set(SESSION_MUTANTS) & set(MUTANTS)


@pytest.mark.parametrize("invariant, mutant", sorted(SESSION_MUTANTS.items()), ids=lambda v: getattr(v, "__name__", v))
def test_session_mutant_is_caught_by_its_own_oracle(invariant, mutant):
    found = find(_SESSIONS, lambda t: any(key[0] == invariant for key in judge(mutant, t).violations), settings=_FIND)
    ev = judge(mutant, found)
    finding, rnd, boundary, _ = next(v for key, v in ev.violations.items() if key[0] == invariant)
    assert finding.detail and finding.severity.value == "violate"
    if invariant != "summary-growth":
        assert rnd is not None and boundary in ev.boundaries  # names the round that shows it


@pytest.mark.parametrize("summarize, protocol", [(ledgered.summarize, "rich"), (prose.summarize, "rich")],
                         ids=["ledgered", "prose"])
# 150 whole sessions each here; benchmarks/mutation_matrix.py runs 500 each, identity's too (its figures are in
# oracles/README.md); identity's sessions are also judged in test_styles.py.
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(transcript=_SESSIONS)
def test_correct_compactors_pass_whole_sessions(summarize, protocol, transcript):
    ev = judge(summarize, transcript, protocol=protocol)
    assert [v[0] for v in ev.violations.values()] == []
    assert ev.infra is None


# Which oracles a run of each mutant selects: its own, and those its own relies on (consumer-requirements
# judges what the per-result oracles verified).
_ALSO = {"consumer-requirements": ("handle-retained", "closure")}


@pytest.mark.parametrize("invariant", sorted(set(SESSION_MUTANTS) - {"summary-growth"}))
def test_a_session_failure_shrinks_to_a_small_session_and_replays_from_the_corpus(invariant, tmp_path):
    spec = f"harness.summarizers.mutants:{SESSION_MUTANTS[invariant].__name__}"
    saver = CorpusSaver(str(tmp_path), summarizer=spec, budget=BUDGET)
    config = RunConfig.of(spec, examples=60, seed=3, budget=BUDGET, max_turns=600, isolation="inline",
                       only=(invariant, *_ALSO.get(invariant, ())), quiet=True, trials=1,
                       consumers=(ROUTER,) if invariant == "consumer-requirements" else ())
    result = run(config, on_failure=saver)
    failure = next(f for f in result.failures if f.invariant == invariant)
    assert failure.original_turns > len(failure.transcript.turns)
    assert len(failure.transcript.turns) <= 40, len(failure.transcript.turns)
    assert failure.round is not None and failure.round <= 4  # few rounds: the session shrank too
    assert failure.trials == (1, 1)
    entries = load_corpus(tmp_path).entries
    assert invariant in {entry.invariant for _, entry in entries}
    replay = replay_corpus(tmp_path, RunConfig.of(spec, isolation="inline", quiet=True, trials=1))
    assert {o.status for o in replay.outcomes} == {"failing"}
