"""The domain minimizer keeps the ledger true while it removes turns."""

from harness import Fact, FactKind, Fate, Polarity, Role, Status, Transcript, Turn
from harness._app._minimize import minimize, without_turns
from strategies import Skeleton, expand


def _transcript():
    turns = tuple(Turn(Role.USER, f"turn {i}") for i in range(6))
    facts = (
        Fact("A", FactKind.PROHIBITION, ("x1",), 1, Polarity.FORBID, Fate(Status.RETRACTED, 4, "A.r")),
        Fact("A.r", FactKind.RETRACTION, ("x1",), 4, details=(("target", "A"),)),
        Fact("B", FactKind.COMMITMENT, ("y2",), 2, Polarity.REQUIRE),
    )
    return Transcript(turns, facts, (3, 6), seed=5)


def test_without_turns_reindexes_facts_and_points():
    t = without_turns(_transcript(), {0, 2})
    assert [turn.text for turn in t.turns] == ["turn 1", "turn 3", "turn 4", "turn 5"]
    assert [(f.id, f.origin_turn, f.fate.turn) for f in t.facts] == [("A", 0, 2), ("A.r", 2, None)]
    assert t.compaction_points == (1, 4)
    assert t.seed == 5


def test_removing_a_fate_turn_reopens_the_fact():
    t = without_turns(_transcript(), {4})
    assert t.fact("A").fate == Fate()
    assert [f.id for f in t.facts] == ["A", "B"]


def test_minimize_finds_the_one_turn_that_matters():
    transcript = expand(Skeleton(seed=9, length=3000))
    needle = transcript.turns[1234]
    minimal, checks = minimize(transcript, lambda t: needle in t.turns)
    assert minimal.turns == (needle,)
    assert checks < 200  # ddmin halves its way down rather than trying turns one by one


def test_minimize_keeps_pairs_the_predicate_needs():
    transcript = expand(Skeleton(seed=9, length=500))
    call = next(i for i, t in enumerate(transcript.turns) if t.tool_calls)
    pair = transcript.turns[call : call + 2]
    minimal, _ = minimize(transcript, lambda t: all(p in t.turns for p in pair))
    assert minimal.turns == pair
