"""Invariant oracles: pure checks of a compaction result against the source ledger.

``check(Case(transcript, boundary, budget, result))`` runs every registered
oracle; ``select(only=..., skip=...)`` filters by id; ``@oracle("my-id", ...)``
registers a team's own. The catalogue: ``docs/reference/oracles.md`` (generated from this registry).
"""

from harness.oracles import _force, _obligations, _prose, _invented, _provider, _runtime, _session_oracles, _shape  # noqa: F401  (registers the built-in oracles)
from harness.oracles._core import (
    Case,
    Evidence,
    Finding,
    Oracle,
    Outcome,
    SessionCase,
    Severity,
    Verdict,
    check,
    check_session,
    oracle,
    registered,
    select,
    unregister,
)
from harness.oracles._rules import DEFAULT_RULES, ProseRules

__all__ = [
    "DEFAULT_RULES",
    "Case",
    "Evidence",
    "Finding",
    "Oracle",
    "Outcome",
    "ProseRules",
    "SessionCase",
    "Severity",
    "Verdict",
    "check",
    "check_session",
    "oracle",
    "registered",
    "select",
    "unregister",
]
