"""Survival counts: per fact kind and compaction round, the live obligations kept, bent and lost."""

from __future__ import annotations

import pytest

from harness._app.running._options import RunConfig
from harness._app.running._run import run
from harness._app.judging._survival import Survival, Tally, session_survival, survival_from_dict
from harness._base._errors import SchemaError
from harness._base._model import Fact, FactKind, Fate, Polarity, Role, Status, Transcript, Turn
from tests._report_subjects import CLIFF_ROUND


def _transcript() -> Transcript:
    turns = tuple(Turn(Role.USER, f"turn {i}") for i in range(6))
    facts = (Fact("P", FactKind.PROHIBITION, ("prod-db",), 0, Polarity.FORBID),
             Fact("T", FactKind.THRESHOLD, ("3",), 0),
             Fact("C", FactKind.COMMITMENT, ("deploy",), 2, fate=Fate(Status.FULFILLED, 4)))
    return Transcript(turns=turns, facts=facts)


def test_a_round_counts_live_obligations_and_sorts_them_kept_bent_lost():
    t = _transcript()
    rounds = session_survival(t, (3, 6), {0: {"P": "lost"}, 1: {"T": "bent"}},
                              frozenset({"negation-polarity", "threshold-exact", "commitment-retained"}))
    first, second = dict(rounds[0]), dict(rounds[1])
    assert first == {"commitment": Tally(1, 1, 0), "prohibition": Tally(1, 0, 0), "threshold": Tally(1, 1, 0)}
    # The commitment was fulfilled at turn 4: no longer live at the second boundary, so not counted there.
    assert second == {"prohibition": Tally(1, 1, 0), "threshold": Tally(1, 0, 1)}
    assert second["threshold"].lost == 0 and first["prohibition"].lost == 1


def test_obligations_no_selected_oracle_judges_are_left_out_not_counted_as_kept():
    rounds = session_survival(_transcript(), (3,), {}, frozenset({"threshold-exact"}))
    assert dict(rounds[0]) == {"threshold": Tally(1, 1, 0)}


def test_sessions_add_up_per_round_and_the_cliff_is_the_first_round_below_the_threshold():
    keep = ((("prohibition", Tally(2, 2, 0)),), (("prohibition", Tally(2, 2, 0)),), (("prohibition", Tally(2, 0, 0)),))
    short = ((("prohibition", Tally(1, 1, 0)), ("threshold", Tally(1, 0, 1))),)
    s = Survival().add(keep).add(short)
    assert s.sessions == (2, 1, 1)
    assert s.tally("prohibition", 0) == Tally(3, 3, 0)
    assert s.share("threshold", 0) == 1.0  # bent counts as kept in the share
    assert s.share("threshold", 1) is None  # no live threshold in round 2: no data, not zero
    assert s.cliff("prohibition", 0.9) == 2 and s.cliff("threshold", 0.9) is None
    assert survival_from_dict(s.to_dict(), source="x") == s


@pytest.mark.parametrize("damage, field", [
    (lambda d: d.update(version=99), "survival.version"),
    (lambda d: d.update(sessions_per_round="3"), "sessions_per_round"),
    (lambda d: d["kinds"]["prohibition"].pop(), "kinds.prohibition"),
    (lambda d: d["kinds"]["prohibition"][0].update(kept=5), "kinds.prohibition[0]"),
    (lambda d: d["kinds"]["prohibition"][0].update(live=True), "kinds.prohibition[0]"),
])
def test_damaged_survival_counts_are_refused_naming_the_field(damage, field):
    document = Survival().add(((("prohibition", Tally(2, 1, 0)),), (("prohibition", Tally(1, 1, 0)),))).to_dict()
    damage(document)
    with pytest.raises(SchemaError, match=field.replace("[", r"\[").replace("]", r"\]")) as caught:
        survival_from_dict(document, source="nightly.json")
    assert "nightly.json" in str(caught.value)


def _shares(survival: Survival, kind: str) -> list[float | None]:
    return [survival.share(kind, r) for r in range(len(survival.rounds))]


def test_a_summarizer_failing_only_from_its_fifth_compaction_shows_a_cliff_at_round_five():
    result = run(RunConfig.of("tests._report_subjects:forgets_prohibitions_late", examples=25, seed=2,
                           quiet=True, isolation="inline", trials=0))
    s = result.survival
    assert s.cliff("prohibition", 0.9) == CLIFF_ROUND - 1
    assert all(share in (None, 1.0) for share in _shares(s, "prohibition")[:CLIFF_ROUND - 1])
    assert all(share in (None, 0.0) for share in _shares(s, "prohibition")[CLIFF_ROUND - 1:])
    assert [k for k in s.kinds() if s.cliff(k, 0.9) is not None] == ["prohibition"]
    assert {f.fact_kind for f in result.failures} == {"prohibition"}


def test_a_correct_summarizer_keeps_every_kind_in_every_round():
    result = run(RunConfig.of("harness.summarizers.ledgered:summarize", examples=20, seed=4, quiet=True,
                           isolation="inline", trials=0))
    s = result.survival
    assert len(s.kinds()) >= 6 and s.sessions[0] == result.examples_run
    assert all(s.share(k, r) in (None, 1.0) for k in s.kinds() for r in range(len(s.rounds)))


def _drops_everything(messages, budget):
    return "Work continued."


def test_kinds_judged_only_by_oracles_blind_to_a_loss_are_left_out_not_shown_as_kept():
    # force-kept looks for weakened obligations; it says nothing about one that is gone. With only it
    # selected, a summarizer that drops everything must not show as keeping everything.
    blind = run(RunConfig.of("tests.test_survival:_drops_everything", examples=8, seed=1, quiet=True,
                          isolation="inline", trials=0, only=("force-kept",)))
    assert blind.survival.kinds() == ()
    # literal_binding and artifact_reference are retained only through literal-verbatim; skip it and they go.
    skipped = run(RunConfig.of("tests.test_survival:_drops_everything", examples=8, seed=1, quiet=True,
                            isolation="inline", trials=0, skip=("literal-verbatim",)))
    kinds = skipped.survival.kinds()
    assert "literal_binding" not in kinds and "artifact_reference" not in kinds and "prohibition" not in kinds
    assert "threshold" in kinds and all(skipped.survival.share("threshold", r) in (None, 0.0)
                                        for r in range(len(skipped.survival.rounds)))


def test_a_superseded_value_is_an_obligation_whose_loss_the_curve_shows():
    result = run(RunConfig.of("harness.summarizers.mutants:keeps_stale_value", examples=30, seed=3,
                           quiet=True, isolation="inline", trials=0))
    s = result.survival
    assert "supersession" in s.kinds() and s.cliff("supersession", 0.9) is not None
    assert "retraction" not in s.kinds()
