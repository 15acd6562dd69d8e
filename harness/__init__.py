"""compaction-harness: property-based and fuzz testing for transcript compactors.

The public model and summarizer protocol live here; strategies are in
``harness.strategies``, invariant checks in ``harness.oracles`` (the repository's
top-level ``strategies/`` and ``oracles/`` folders, installed under ``harness`` so
that a team's own packages of those generic names never shadow them), and the
helper for a team's own tests (``assert_compaction_holds``) in ``harness.testing``.
"""

from harness._base._compact import compact_once, request_for
from harness._base._codec import dumps, load, loads, transcript_from_dict, transcript_to_dict
from harness._base._errors import (
    CompactionViolation,
    HarnessError,
    InfraError,
    InvalidArgument,
    MalformedResult,
    PathError,
    SchemaError,
    SpecError,
)
from harness._base._kinds import KindDef, define_kind, defined_kinds, kind_def, undefine_kind
from harness._base._messages import to_messages
from harness._base._protocol import CompactionRequest, CompactionResult, LedgerEntry
from harness._base._result_codec import result_from_return
from harness._base._tokens import count_tokens, message_tokens
from harness._base._model import (
    SCHEMA_VERSION,
    Consumer,
    Fact,
    FactKind,
    Fate,
    Part,
    PartKind,
    ATTACHMENTS,
    Polarity,
    Role,
    Status,
    ToolCall,
    Transcript,
    Turn,
    live_facts,
)

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
    "CompactionRequest",
    "CompactionViolation",
    "Consumer",
    "CompactionResult",
    "LedgerEntry",
    "MalformedResult",
    "compact_once",
    "count_tokens",
    "message_tokens",
    "request_for",
    "result_from_return",
    "Fact",
    "FactKind",
    "Fate",
    "HarnessError",
    "InfraError",
    "InvalidArgument",
    "KindDef",
    "PathError",
    "SpecError",
    "Part",
    "PartKind",
    "ATTACHMENTS",
    "Polarity",
    "Role",
    "SchemaError",
    "Status",
    "ToolCall",
    "Transcript",
    "Turn",
    "__version__",
    "define_kind",
    "defined_kinds",
    "dumps",
    "kind_def",
    "live_facts",
    "load",
    "loads",
    "to_messages",
    "transcript_from_dict",
    "transcript_to_dict",
    "undefine_kind",
]
