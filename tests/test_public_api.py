"""The public surface is exactly what we mean to support."""

import harness
import strategies


def test_harness_public_names():
    assert sorted(harness.__all__) == sorted([
        "SCHEMA_VERSION", "CompactionRequest", "CompactionViolation", "assert_compaction_holds", "CompactionResult", "LedgerEntry", "MalformedResult", "compact_once",
        "count_tokens", "request_for", "result_from_return", "Fact", "FactKind", "Fate", "HarnessError", "InfraError", "InvalidArgument", "PathError", "SpecError", "Polarity", "Role",
        "SchemaError", "Status", "ToolCall", "Transcript", "Turn", "__version__", "dumps", "live_facts", "load",
        "loads", "to_messages", "transcript_from_dict", "transcript_to_dict",
    ])
    for name in harness.__all__:
        assert hasattr(harness, name), name


def test_strategies_public_names():
    assert sorted(strategies.__all__) == sorted([
        "MAX_TURNS_PER_FACT", "PRIMARY_KINDS", "Anchor", "Cut", "FactSpec", "Skeleton", "cuts", "expand", "facts",
        "make_literal", "skeleton_from_dict", "skeleton_to_dict", "skeletons", "transcripts",
    ])
    for name in strategies.__all__:
        assert hasattr(strategies, name), name


def test_every_error_class_has_a_docstring():
    for cls in (harness.HarnessError, harness.SchemaError, harness.InvalidArgument, harness.MalformedResult,
                harness.CompactionViolation, harness.InfraError, harness.PathError, harness.SpecError):
        assert cls.__doc__ and cls.__doc__.strip()
