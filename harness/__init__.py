"""compaction-harness: property-based and fuzz testing for transcript compactors.

The public model lives here; strategies are in ``strategies`` and invariant
checks in ``oracles``.
"""

from harness._assertions import CompactionViolation, assert_compaction_holds
from harness._compact import compact_once, request_for
from harness._codec import dumps, load, loads, transcript_from_dict, transcript_to_dict
from harness._errors import (
    HarnessError,
    InfraError,
    InvalidArgument,
    MalformedResult,
    PathError,
    SchemaError,
    SpecError,
)
from harness._messages import to_messages
from harness._protocol import CompactionRequest, CompactionResult, LedgerEntry, result_from_return
from harness._tokens import count_tokens
from harness._model import (
    SCHEMA_VERSION,
    Fact,
    FactKind,
    Fate,
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
    "assert_compaction_holds",
    "CompactionResult",
    "LedgerEntry",
    "MalformedResult",
    "compact_once",
    "count_tokens",
    "request_for",
    "result_from_return",
    "Fact",
    "FactKind",
    "Fate",
    "HarnessError",
    "InfraError",
    "InvalidArgument",
    "PathError",
    "SpecError",
    "Polarity",
    "Role",
    "SchemaError",
    "Status",
    "ToolCall",
    "Transcript",
    "Turn",
    "__version__",
    "dumps",
    "live_facts",
    "load",
    "loads",
    "to_messages",
    "transcript_from_dict",
    "transcript_to_dict",
]
