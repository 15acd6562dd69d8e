"""The false alarms and misses issue 10 reported, as regression rows (the labelled set measures the classes).

Each row: the source, one obligation (the audit file's shape), a context, and whether a careful
reader calls it kept. The oracles must agree both ways.
"""

import pytest

from harness._app.judging._audit import audit, obligations_from_dict, turns_from_messages
from harness._base._protocol import CompactionResult
from harness._base._model import Role, Turn

BUCKET = {"kind": "prohibition", "literals": ["s3://three-image-98/"]}
CALL = {"kind": "in_flight_call", "literals": ["call_cd18fc9fb649"], "details": {"name": "run_migration"}}
LIMIT = {"kind": "threshold", "literals": ["rate_limit_rps", "5"], "details": {"operator": "<="}}
WORKERS = {"kind": "threshold", "literals": ["max_workers", "8"], "details": {"operator": "<="}}
JOBS = {"kind": "threshold", "literals": ["max_parallel_jobs", "12"], "details": {"operator": "<="}}
RELEASE = {"kind": "commitment", "literals": ["3.1.4"],
           "details": {"action": "deploy", "noun": "release", "past": "deployed", "trigger": "the review passes"}}
ERROR = {"kind": "unresolved_error", "literals": ["E4821"], "details": {"name": "apply_patch", "exception": "OSError"}}
REJECTED = {"kind": "negative_fact", "literals": ["add_column_then_backfill"], "details": {"disposition": "rejected"}}
LOGS = {"kind": "literal_binding", "literals": ["s3://logs-eu-3/"], "details": {"category": "bucket"}}
VERSION = {"kind": "literal_binding", "literals": ["6.24.1"], "details": {"category": "version"}}
PENDING_CALL = {"kind": "in_flight_call", "literals": ["call_0a1b2c3d4e5f"], "details": {"name": "run_tests"}}
CHANGED = {"kind": "threshold", "literals": ["rate_limit_rps", "1"], "details": {"operator": "<="},
           "fate": {"status": "superseded", "turn": 1, "replacement": "2"}}
DONE = {**RELEASE, "fate": {"status": "fulfilled", "turn": 1}}
WITHDRAWN = {**BUCKET, "fate": {"status": "retracted", "turn": 1}}

KEPT = [
    (BUCKET, "## Forbidden: never touch these\n- s3://three-image-98/"),
    (CALL, "## Tool calls still waiting (UNRESOLVED)\n- call_cd18fc9fb649 (run_migration)"),
    (BUCKET, '{\n  "forbidden": [\n    "s3://three-image-98/"\n  ]\n}'),
    (BUCKET, "_Never_ write to s3://three-image-98/."),
    (BUCKET, "__NEVER__ write to s3://three-image-98/."),
    (BUCKET, '{"forbidden_targets": ["s3://three-image-98/"]}'),
    (RELEASE, '{"pending_actions": ["deploy release 3.1.4 once the review passes"]}'),
    (LIMIT, "Keep rate_limit_rps at or below 5."),
    (LIMIT, "rate_limit_rps must not go above 5."),
    (LIMIT, "For rate_limit_rps: don't let it go over 5."),
    (WORKERS, "Do not use more than 8 workers (max_workers)."),
    (JOBS, "Builds are capped at 12 parallel jobs (max_parallel_jobs)."),
    (RELEASE, "Release 3.1.4 hasn't been deployed yet; it waits for the review."),
    (CALL, "call_cd18fc9fb649 (run_migration) has not come back yet."),
    (CALL, "No response so far for call_cd18fc9fb649."),
    (REJECTED, "add_column_then_backfill was turned down by the user."),
    (REJECTED, "add_column_then_backfill is a dead end."),
    (BUCKET, "Hands off s3://three-image-98/."),
    (BUCKET, "Keep away from s3://three-image-98/."),
    (ERROR, "E4821 was never resolved."),
    (CHANGED, "rate_limit_rps was changed from 1: it now must not exceed 2"),
    (WITHDRAWN, "The ban on s3://three-image-98/ was withdrawn."),
    (DONE, "Release 3.1.4 was deployed after the review."),
    (RELEASE, "Once the review passes, the user will sign off and I will deploy release 3.1.4."),
]

BROKEN = [
    (LOGS, "Ideally write to s3://logs-eu-3/."),
    (LOGS, "Artifacts may also go outside s3://logs-eu-3/ when it is full."),
    (LOGS, "s3://logs-eu-3/ is optional."),
    ({**LIMIT, "literals": ["retries", "3"]}, "retries should stay close to 3."),
    (VERSION, "Use version 6.24.13."),
    (LIMIT, "rate_limit_rps at most 5. The importer is fine. rate_limit_rps at most 50."),
    (BUCKET, "Never use s3://three-image-98/. Update: s3://three-image-98/ is fine to use now."),
    (REJECTED, "add_column_then_backfill was rejected at first, but it is now the chosen approach."),
    (DONE, "TODO: deploy release 3.1.4 once the review passes."),
    (WITHDRAWN, "Never use s3://three-image-98/."),
    (PENDING_CALL, "call_0a1b2c3d4e5f (run_tests) finished."),
    (RELEASE, "Once the review passes, the user will deploy release 3.1.4 on their side."),
]


def _verdict(obligation, context):
    source = "Required: " + " ".join(obligation["literals"]) + " " + " ".join(obligation.get("details", {}).values())
    turns = turns_from_messages([{"role": "user", "content": source}, {"role": "user", "content": "and later"},
                                 {"role": "assistant", "content": "noted"}], source="<rows>")
    facts = obligations_from_dict({"obligations": [obligation]}, turns=turns, source="<rows>")
    return audit(turns, CompactionResult((Turn(Role.SYSTEM, context),)), facts).verdict


@pytest.mark.parametrize("obligation, context", KEPT, ids=[c[:40] for _, c in KEPT])
def test_a_faithful_context_in_a_foreign_style_is_not_flagged(obligation, context):
    assert [f"{f.invariant}: {f.detail}" for f in _verdict(obligation, context).violations] == []


@pytest.mark.parametrize("obligation, context", BROKEN, ids=[c[:40] for _, c in BROKEN])
def test_a_weakened_stale_or_contradicted_obligation_is_caught(obligation, context):
    assert _verdict(obligation, context).violations
