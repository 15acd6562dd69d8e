"""The public surface is exactly what we mean to support, and ``__all__`` says exactly what is exposed."""

import inspect

import pytest

import harness
import harness.testing
from harness import oracles, strategies
from harness.oracles import reading


@pytest.mark.parametrize("package", [harness, harness.testing, strategies, oracles, reading],
                         ids=lambda p: p.__name__)
def test_all_is_exactly_what_the_package_exposes(package):
    """A name imported into a package but missing from ``__all__`` (or the reverse) fails here."""
    exposed = {name for name, value in vars(package).items()
               if not name.startswith("_") and not inspect.ismodule(value)}
    declared = {name for name in package.__all__ if not name.startswith("__")}
    assert declared == exposed
    assert len(package.__all__) == len(set(package.__all__))


def test_harness_public_names():
    assert sorted(harness.__all__) == sorted([
        "SCHEMA_VERSION", "CompactionRequest", "Consumer", "CompactionViolation", "CompactionResult", "LedgerEntry", "MalformedResult", "compact_once",
        "count_tokens", "message_tokens", "request_for", "result_from_return", "Fact", "FactKind", "Fate", "HarnessError", "InfraError", "InvalidArgument", "KindDef", "PathError", "SpecError", "Polarity", "Role", "Part", "PartKind", "ATTACHMENTS",
        "SchemaError", "Status", "ToolCall", "Transcript", "Turn", "__version__", "define_kind", "defined_kinds",
        "dumps", "kind_def", "live_facts", "load", "loads", "to_messages", "transcript_from_dict", "transcript_to_dict",
        "undefine_kind",
    ])
    assert sorted(harness.testing.__all__) == ["CompactionViolation", "assert_compaction_holds"]


def test_strategies_public_names():
    assert sorted(strategies.__all__) == sorted([
        "DEFAULT_MAX_WINDOWS", "DEFAULT_TRIGGER",
        "MAX_TURNS_PER_DECOY", "MAX_TURNS_PER_FACT", "PRIMARY_KINDS", "Anchor", "Background", "Cut", "DecoyKind",
        "DecoySpec", "EffectSpec", "FactSpec", "KindGenerator", "Skeleton", "cuts", "decoys", "effects", "expand", "facts",
        "load_background", "PART_DIALECTS", "with_provider_parts",
        "make_literal", "skeleton_from_dict", "skeleton_to_dict", "skeletons", "transcripts",
    ])
    for name in strategies.__all__:
        assert hasattr(strategies, name), name


def test_the_reading_a_teams_oracle_uses_is_small_and_documented():
    assert sorted(oracles.reading.__all__) == ["Clause", "Context", "cue_near", "free_cue", "governing_cue",
                                               "name_shaped", "negated", "phrase_pattern", "reading_lines"]
    for name in oracles.reading.__all__:
        assert getattr(oracles.reading, name).__doc__, name
    for method in ("mentions", "ledger_entry", "units_with", "clauses_with", "sentences_with", "lines_with"):
        assert getattr(oracles.reading.Context, method).__doc__, method


def test_every_error_class_has_a_docstring():
    for cls in (harness.HarnessError, harness.SchemaError, harness.InvalidArgument, harness.MalformedResult,
                harness.CompactionViolation, harness.InfraError, harness.PathError, harness.SpecError):
        assert cls.__doc__ and cls.__doc__.strip()
