"""Session-level ground truth from the generators: effects, tightenings, consumers."""

import json
import re
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from harness import FactKind, InvalidArgument, Role, SchemaError, Status, transcript_from_dict, transcript_to_dict
from harness._base._model import Consumer, Tightening
from harness._base._wholetoken import has_token
from harness.strategies import (
    EffectSpec,
    FactSpec,
    Skeleton,
    effects,
    expand,
    facts,
    skeleton_from_dict,
    skeleton_to_dict,
    skeletons,
    transcripts,
)
from harness.strategies._internal import _phrasing as P
from harness.strategies._internal._expand import event_turn_count

_GOVERNING = {FactKind.GATING_FIELD, FactKind.PROHIBITION}
_FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_FIND = settings(database=None, max_examples=200, phases=[Phase.generate, Phase.shrink])  # no explain: it is slow

# Facts that can govern an effect, among others, so most skeletons carry some effects.
_GOVERNED_SKELETONS = skeletons(
    min_turns=10, max_turns=300, max_facts=5, min_effects=1, max_effects=3,
    facts=facts(kinds=[FactKind.GATING_FIELD, FactKind.PROHIBITION, FactKind.THRESHOLD, FactKind.IN_FLIGHT_CALL,
                       FactKind.RETRACTION, FactKind.SUPERSESSION]),
)

# Words that state an obligation or end one, written here independently of the phrasing tables.
_OBLIGATION_WORDS = re.compile(
    r"\b(must|never|always|don't|do not|should|has to|have to|needs? to|required|make sure|use|keep|stay|only|"
    r"at most|at least|limit|set to|target|switch|forbidden|off limits|pin|will|promise|pending|"
    r"done|finished|completed?|fulfil+ed|resolved|fixed|retract\w*|withdr[ae]w\w*|cancel+ed|supersed\w*|"
    r"replaced?|no longer|obsolete|retired|rejected|failed|scratch|forget|never mind)\b",
    re.IGNORECASE)


def _GATING(field="max_retries", value="0", **extra):
    params = {"write": "write the new cache config", **extra}
    return FactSpec(FactKind.GATING_FIELD, (field, value), tuple(sorted(params.items())),
                    fate=Status.SUPERSEDED if "replacement" in extra else Status.OPEN, fate_delay=500)


def _PROHIBITION(lit="s3://alpha-beta-07/", fate=Status.OPEN):
    return FactSpec(FactKind.PROHIBITION, (lit,), (("category", "bucket"),), fate=fate, position=100, fate_delay=300)


def _texts(turn):
    return (turn.text, *(x for c in turn.tool_calls for x in (c.id, c.name, c.arguments)))


def _effect_turns(transcript):
    return {i for e in transcript.effects for i in (e.turn, e.turn + 1)}


# -- effects --------------------------------------------------------------------------------------------

@_FAST
@given(_GOVERNED_SKELETONS)
def test_an_effect_is_exactly_its_recorded_call_and_its_result_follows(skeleton):
    transcript = expand(skeleton)
    all_ids = [c.id for t in transcript.turns for c in t.tool_calls]
    for effect in transcript.effects:
        call_turn, result = transcript.turns[effect.turn], transcript.turns[effect.turn + 1]
        assert call_turn.role is Role.ASSISTANT and len(call_turn.tool_calls) == 1
        call = call_turn.tool_calls[0]
        assert (call.id, call.name) == (effect.call_id, effect.action)
        assert re.fullmatch(r"call_[0-9a-f]{12}", call.id)
        json.loads(call.arguments)
        assert result.role is Role.TOOL and result.tool_call_id == effect.call_id and result.text
        assert all_ids.count(effect.call_id) == 1, "an effect's call id is unique in the transcript"
        assert [i for i, t in enumerate(transcript.turns) if t.tool_call_id == effect.call_id] == [effect.turn + 1]
    assert [e.turn for e in transcript.effects] == sorted(e.turn for e in transcript.effects)


@_FAST
@given(_GOVERNED_SKELETONS)
def test_the_governing_fact_is_a_gating_field_or_prohibition_live_at_the_effect(skeleton):
    transcript = expand(skeleton)
    governing = [i for i, f in enumerate(skeleton.facts) if f.kind in _GOVERNING]
    if not governing:
        assert transcript.effects == ()
        return
    assert len(transcript.effects) == len(skeleton.effects), "every effect finds a governing fact"
    for effect in transcript.effects:
        (fact_id,) = effect.governed_by
        fact = transcript.fact(fact_id)
        assert fact.kind in _GOVERNING
        assert fact.is_live_at(effect.turn) and fact.is_live_at(effect.turn + 2)
        assert fact.fate.turn is None or fact.fate.turn > effect.turn + 1, "its fate comes after the result"
        if fact.kind is FactKind.GATING_FIELD:  # after the plan the config read leads to
            plan = transcript.turns[fact.origin_turn + 1]
            assert plan.role is Role.ASSISTANT and plan.text.startswith("Config read.")
            assert effect.turn > fact.origin_turn + 1


# What each governing fact plausibly governs, written out here apart from the generator's tables: a gating
# field its own pending write, a prohibition an action on the kind of target it forbids (issue 29: a
# finding names this link, "a chat message governed by a prohibition on a file path" says nothing).
_PLAUSIBLE = {
    "apply the patch to the staging filesystem": {"apply_patch"},
    "push the schema change to the shared database": {"push_schema"},
    "write the new cache config": {"write_file"},
    "upload the artifacts to the release bucket": {"upload_artifacts"},
    "restart the workers with the new settings": {"restart_workers"},
    "bucket": {"upload_artifacts", "sync_bucket"},
    "host": {"run_remote", "deploy_service"},
    "service": {"deploy_service", "restart_service"},
    "path": {"write_file", "delete_file"},
}


@_FAST
@given(_GOVERNED_SKELETONS)
def test_an_effect_acts_on_what_its_governing_fact_is_about(skeleton):
    transcript = expand(skeleton)
    for effect in transcript.effects:
        fact = transcript.fact(effect.governed_by[0])
        about = fact.detail("write") if fact.kind is FactKind.GATING_FIELD else fact.detail("category")
        assert effect.action in _PLAUSIBLE[about], (about, effect.action)


def test_an_effect_is_governed_by_its_target_or_the_next_fact_that_can_govern():
    threshold = FactSpec(FactKind.THRESHOLD, ("batch_size", "8"), (("operator", "<="),))
    skeleton = Skeleton(seed=1, length=80, facts=(threshold, _PROHIBITION(), threshold, _GATING()),
                        effects=tuple(EffectSpec(target=t) for t in (0, 1, 2, 7)))
    governors = sorted(e.governed_by for e in expand(skeleton).effects)
    assert governors == [("F1",), ("F1",), ("F3",), ("F3",)]
    alone = Skeleton(seed=1, length=40, facts=(threshold,), effects=(EffectSpec(),))
    assert expand(alone).effects == () and event_turn_count(alone) == event_turn_count(replace(alone, effects=()))


@pytest.mark.parametrize("position", [0, 1, 500, 999, 1000])
@pytest.mark.parametrize("fact", [_GATING(), _GATING(replacement="1"), _PROHIBITION(),
                                  _PROHIBITION(fate=Status.RETRACTED)], ids=["gating", "gating-superseded",
                                                                             "prohibition", "prohibition-retracted"])
def test_an_effect_stays_inside_the_live_span_at_every_position(fact, position):
    for delay in (0, 1, 1000):
        spec = replace(fact, fate_delay=delay if fact.fate is not Status.OPEN else 0)
        transcript = expand(Skeleton(seed=3, length=60, facts=(spec,), effects=(EffectSpec(0, position, 2),)))
        (effect,) = transcript.effects
        fact_ = transcript.fact("F0")
        assert fact_.origin_turn < effect.turn
        assert fact_.fate.turn is None or effect.turn + 1 < fact_.fate.turn


@_FAST
@given(_GOVERNED_SKELETONS)
def test_no_fact_literal_and_no_obligation_word_appears_in_an_effect_turn(skeleton):
    transcript = expand(skeleton)
    literals = {lit for f in transcript.facts for lit in f.literals}  # digits too: the texts have none
    for i in _effect_turns(transcript):
        for text in _texts(transcript.turns[i]):
            assert not any(has_token(text, lit) for lit in literals), (i, text)
            assert not _OBLIGATION_WORDS.search(text), (i, text)


def test_an_action_whose_words_are_a_literal_is_skipped_for_the_next():
    team_like = FactSpec(FactKind.PROHIBITION, ("deploy_service",), (("category", "service"),))
    transcript = expand(Skeleton(seed=2, length=30, facts=(team_like,), effects=(EffectSpec(variant=0),)))
    (effect,) = transcript.effects
    assert effect.action != "deploy_service"
    assert not any(has_token(x, "deploy_service") for x in _texts(transcript.turns[effect.turn]))


@_FAST
@given(_GOVERNED_SKELETONS)
def test_effect_turns_are_counted_and_the_length_is_kept(skeleton):
    transcript = expand(skeleton)
    events = event_turn_count(skeleton)
    # Filler makes room for an opening user message; only when the events alone fill the length does it add one.
    opened = events >= skeleton.length and transcript.turns[0].text in P.OPENERS
    assert len(transcript.turns) == max(skeleton.length, events + opened)
    without = replace(skeleton, effects=())
    assert event_turn_count(skeleton) == event_turn_count(without) + 2 * len(transcript.effects)
    shortest = expand(replace(skeleton, length=1)).turns
    assert len(shortest) == event_turn_count(skeleton) + (shortest[0].text in P.OPENERS)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_transcripts_stay_within_max_turns_with_effects(data):
    high = data.draw(st.integers(12, 120))
    transcript = data.draw(transcripts(min_turns=1, max_turns=high, max_facts=3, max_effects=4))
    assert len(transcript.turns) <= high


# -- tightenings ----------------------------------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(skeletons(min_turns=10, max_turns=150, max_facts=2, max_tightenings=4))
def test_tightenings_are_valid_and_copied_to_the_transcript(skeleton):
    rounds = [t.round for t in skeleton.tightenings]
    shares = [t.share for t in skeleton.tightenings]
    assert len(rounds) <= 4 and all(1 <= r <= 6 for r in rounds) and all(1 <= s <= 1000 for s in shares)
    assert rounds == sorted(set(rounds)) and shares == sorted(set(shares), reverse=True)
    assert expand(skeleton).tightenings == skeleton.tightenings


def test_max_tightenings_zero_means_none():
    skeleton = find(skeletons(max_turns=60, max_tightenings=0, max_effects=0),
                    lambda s: s.facts[0].position > 0, settings=_FIND)
    assert skeleton.tightenings == () and skeleton.effects == ()


# -- shrinking ------------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:Generating overly large repr")
def test_a_minimal_skeleton_has_no_effects_and_no_tightenings():
    skeleton = find(skeletons(max_turns=100), lambda s: True, settings=_FIND)
    assert skeleton.effects == () and skeleton.tightenings == ()
    transcript = find(transcripts(max_turns=100), lambda t: True, settings=_FIND)
    assert transcript.effects == () and transcript.tightenings == ()


@pytest.mark.filterwarnings("ignore:Generating overly large repr")
def test_effects_and_tightenings_shrink_to_the_simplest():
    skeleton = find(skeletons(max_turns=100), lambda s: s.effects and s.tightenings, settings=_FIND)
    assert skeleton.effects == (EffectSpec(0, 0, 0),)
    assert skeleton.tightenings == (Tightening(1, 800),)
    transcript = find(transcripts(max_turns=100), lambda t: t.effects, settings=_FIND)
    assert len(transcript.effects) == 1


# -- consumers ------------------------------------------------------------------------------------------

PLANNER = Consumer("planner", ("handle-retained", "commitment-retained"))
ROUTER = Consumer("router", ("closure",))


@settings(max_examples=15, deadline=None)
@given(transcripts(max_turns=120, consumers=[PLANNER, ROUTER]))
def test_consumers_are_attached_to_every_transcript(transcript):
    assert transcript.consumers == (PLANNER, ROUTER)


@pytest.mark.parametrize("consumers, message", [
    (PLANNER, "consumers must be a sequence of Consumer"),
    ("planner", "consumers must be a sequence of Consumer"),
    ([PLANNER, "router"], "consumers must be Consumer instances"),
    ([PLANNER, Consumer("planner", ("closure",))], "consumer names must be unique"),
])
def test_consumers_are_validated(consumers, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        transcripts(consumers=consumers)


@pytest.mark.parametrize("kwargs, message", [
    ({"min_effects": 3, "max_effects": 1}, "Cannot have max_effects=1 < min_effects=3"),
    ({"max_effects": -1}, "max_effects=-1 must be a non-negative integer"),
    ({"max_tightenings": 5}, "max_tightenings=5; at most 4"),
    ({"max_tightenings": True}, "max_tightenings=True must be a non-negative integer"),
    ({"effects": [EffectSpec()]}, "effects must be a strategy"),
])
def test_effect_and_tightening_sizes_are_validated(kwargs, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        skeletons(**kwargs)
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        transcripts(**kwargs)


# -- documents ------------------------------------------------------------------------------------------

@_FAST
@given(_GOVERNED_SKELETONS)
def test_a_current_skeleton_round_trips_through_json(skeleton):
    data = json.loads(json.dumps(skeleton_to_dict(skeleton)))
    assert data["schema_version"] == 4
    assert skeleton_from_dict(data) == skeleton
    assert expand(skeleton_from_dict(data)) == expand(skeleton)


@settings(max_examples=40, deadline=None)
@given(_GOVERNED_SKELETONS, st.lists(st.sampled_from([PLANNER, ROUTER]), unique=True))
def test_a_transcript_with_session_truth_round_trips_through_the_codec(skeleton, consumers):
    transcript = replace(expand(skeleton), consumers=tuple(consumers))
    data = json.loads(json.dumps(transcript_to_dict(transcript)))
    assert transcript_from_dict(data) == transcript


@settings(max_examples=30, deadline=None)
@given(_GOVERNED_SKELETONS)
def test_expand_is_deterministic_with_effects(skeleton):
    first, second = expand(skeleton), expand(skeleton)
    assert first == second and first.effects == second.effects
    assert transcript_to_dict(first) == transcript_to_dict(second)


_OLD = Skeleton(seed=4, length=30, facts=(_PROHIBITION(),), version=1)


@pytest.mark.parametrize("version", [1, 2])
def test_older_versions_read_as_themselves_and_write_back_the_same(version):
    skeleton = replace(_OLD, version=version)
    data = skeleton_to_dict(skeleton)
    assert data["schema_version"] == version
    assert "effects" not in data and "tightenings" not in data and ("decoys" in data) == (version == 2)
    assert skeleton_from_dict(data) == skeleton
    assert skeleton_to_dict(skeleton_from_dict(data)) == data
    assert expand(skeleton_from_dict(data)).effects == ()


def test_a_version_two_document_from_before_effects_reads():
    data = {"schema_version": 2, "seed": 4, "length": 30, "cuts": [],
            "facts": [{"kind": "prohibition", "literals": ["s3://alpha-beta-07/"], "params": {"category": "bucket"}}],
            "decoys": [{"kind": "near_miss", "target": 0, "position": 10, "variant": 1, "nudge": 2}]}
    skeleton = skeleton_from_dict(data)
    assert skeleton.version == 2 and len(skeleton.decoys) == 1 and skeleton.effects == skeleton.tightenings == ()


_V3 = Skeleton(seed=4, length=30, facts=(_PROHIBITION(),), effects=(EffectSpec(0, 10, 1),),
               tightenings=(Tightening(1, 800), Tightening(3, 500)))


@pytest.mark.parametrize("change, field, message", [
    ({"effects": [{"target": -1}]}, "effects[0].target", "an integer >= 0"),
    ({"effects": [{"position": 1001}]}, "effects[0]", "permille"),
    ({"effects": [{"variant": "x"}]}, "effects[0].variant", "an integer"),
    ({"tightenings": [{"round": 1, "share": 2000}]}, "tightenings[0]", "share=2000"),
    ({"tightenings": [{"share": 500}]}, "tightenings[0].round", "required"),
    ({"tightenings": [{"round": 2, "share": 500}, {"round": 2, "share": 400}]}, "tightenings", "strictly increasing"),
    ({"effects": None}, "effects", "a list"),
    ({"schema_version": 5}, "schema_version", "one of [1, 2, 3, 4]"),
    ({"tokens": -5}, "tokens", "an integer >= 0"),
    ({"output_cap": "big"}, "output_cap", "an integer"),
])
def test_a_bad_current_document_is_refused_naming_the_field(change, field, message):
    data = {**skeleton_to_dict(_V3), **change}
    with pytest.raises(SchemaError, match=re.escape(f"field {field!r}") + ".*" + re.escape(message)):
        skeleton_from_dict(data)


@pytest.mark.parametrize("missing", ["facts", "cuts", "decoys", "effects", "tightenings"])
def test_a_current_document_lists_every_part(missing):
    data = skeleton_to_dict(_V3)
    del data[missing]
    with pytest.raises(SchemaError, match=re.escape(f"field {missing!r}") + ".*schema_version 4"):
        skeleton_from_dict(data)


def test_a_version_three_document_reads_as_one_sized_by_turns_and_refuses_sizes():
    data = {**skeleton_to_dict(_V3), "schema_version": 3}
    del data["tokens"], data["output_cap"]
    skeleton = skeleton_from_dict(data)
    assert skeleton.version == 3 and skeleton.tokens == skeleton.output_cap == 0
    assert skeleton_to_dict(skeleton) == data
    with pytest.raises(SchemaError, match=re.escape("field 'tokens'") + ".*schema_version 3 has none"):
        skeleton_from_dict({**data, "tokens": 9000})


def test_a_skeleton_sized_in_tokens_holds_them_in_real_sized_tool_results():
    sized = replace(_V3, length=5000, tokens=60_000, output_cap=8_000)
    transcript = expand(sized)
    from harness._base._tokens import message_tokens
    total = sum(message_tokens(t) for t in transcript.turns)
    results = [message_tokens(t) for t in transcript.turns if t.role.value == "tool"]
    assert 60_000 <= total <= 60_000 + 8_000 + 2_000  # filler stops at the target; the last unit may overshoot
    assert max(results) <= 8_000 + 40 and sorted(results)[len(results) // 2] >= 100
    assert len(transcript.turns) < 5000 and expand(sized) == transcript
    assert skeleton_from_dict(json.loads(json.dumps(skeleton_to_dict(sized)))) == sized


_PARTS = {"decoys": [{"kind": "near_miss"}], "effects": [{"target": 1}], "tightenings": [{"round": 2, "share": 500}]}


@pytest.mark.parametrize("version, key", [(1, "decoys"), (1, "effects"), (2, "effects"), (2, "tightenings")])
def test_an_older_document_with_parts_of_a_later_version_is_refused(version, key):
    data = {**skeleton_to_dict(replace(_V3, effects=(), tightenings=())), key: _PARTS[key]}
    part = getattr(skeleton_from_dict(data), key)
    data["schema_version"] = version
    with pytest.raises(SchemaError, match=re.escape(f"field {key!r}") + f".*schema_version {version} has none"):
        skeleton_from_dict(data)
    with pytest.raises(InvalidArgument, match=f"a version {version} skeleton has no {key}"):
        Skeleton(4, 30, **{key: part}, version=version)


@pytest.mark.parametrize("build, message", [
    (lambda: EffectSpec(target=-1), "EffectSpec target=-1"),
    (lambda: EffectSpec(position=1001), "EffectSpec position=1001 is permille"),
    (lambda: EffectSpec(variant=True), "EffectSpec variant=True"),
    (lambda: Skeleton(0, 5, effects=(3,)), "Skeleton effects must be EffectSpecs"),
    (lambda: Skeleton(0, 5, tightenings=(Tightening(2, 500), Tightening(1, 400))), "strictly increasing round"),
    (lambda: Skeleton(0, 5, version=5), "Skeleton version=5"),
    (lambda: Skeleton(0, 5, tokens=-1), "Skeleton tokens=-1"),
    (lambda: Skeleton(0, 5, output_cap=900, version=3), "a version 3 skeleton has no output_cap"),
])
def test_effect_specs_and_skeletons_validate(build, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        build()


def test_the_effects_strategy_draws_valid_specs():
    spec = find(effects(), lambda e: e.position > 0, settings=_FIND)
    assert spec == EffectSpec(0, 1, 0)


def test_effects_appear_often_enough_at_the_default_settings():
    counts = {"with": 0, "all": 0}

    @settings(max_examples=150, derandomize=True, database=None, deadline=None)
    @given(transcripts(max_turns=300))
    def draw(transcript):
        counts["all"] += 1
        counts["with"] += bool(transcript.effects)

    draw()
    assert counts["with"] / counts["all"] > 0.1, counts


@settings(max_examples=60, deadline=None)
@given(skeletons(min_turns=1, max_turns=14, max_facts=3, min_decoys=2, max_decoys=4, min_effects=2, max_effects=2))
def test_a_crowded_skeleton_leaves_out_decoys_first_then_effects(skeleton):
    assert event_turn_count(skeleton) <= 14
    assert not skeleton.decoys or len(skeleton.effects) == 2, "effects go only once every decoy has gone"
