"""The reading's mechanisms (issue 45), each both ways: a faithful context is not flagged, a bent one is, with the
one word for what happened and the fact it happened to.

Every row is an obligation stated in a source sentence of its own and a context written here; none is taken from
the labelled sets or the foreign data, and none from the generator's phrasing tables.
"""

from __future__ import annotations

import pytest

from harness._app.judging._audit import audit, obligations_from_dict, turns_from_messages
from harness._base._model import Role, Turn
from harness._base._protocol import CompactionResult

BUCKET = ({"kind": "prohibition", "literals": ["s3://ledger-cold-4/"]},
          "Never write anything to s3://ledger-cold-4/; it is the auditors' archive.")
ERROR = ({"kind": "unresolved_error", "literals": ["E7310"], "details": {"name": "sync_catalog", "exception": "IOError"}},
         "sync_catalog failed with IOError E7310 while copying the product feed to the mirror.")
JOB = ({"kind": "in_flight_call", "literals": ["job_51c0e2"], "details": {"name": "rebuild_index"}},
       "rebuild_index was started in the background as job_51c0e2; its result is not back.")
RETRIES = ({"kind": "threshold", "literals": ["max_attempts", "3"], "details": {"operator": "<="}},
           "Keep max_attempts at 3 or fewer for the payment retries.")
TIMEOUT = ({"kind": "threshold", "literals": ["fetch_timeout_s", "45"], "details": {"operator": "<="}},
           "fetch_timeout_s must not go above 45 on the crawler.")
METRIC = ({"kind": "literal_binding", "literals": ["p99_latency_ms"], "details": {"category": "metric"}},
          "Always report p99_latency_ms in the weekly performance notes.")
REGION = ({"kind": "literal_binding", "literals": ["ap-south-2"], "details": {"category": "region"}},
          "Deploy the new ingest workers to ap-south-2 only.")
GATEWAY = ({"kind": "literal_binding", "literals": ["route-gw-12"], "details": {"category": "gateway"}},
           "Send all partner traffic through route-gw-12 while the old proxy is drained.")
PLAN = ({"kind": "literal_binding", "literals": ["flood cover"]},
        "The Harbour plan includes flood cover for ground-floor units.")
RELEASE = ({"kind": "commitment", "literals": ["4.9.2"], "details": {"action": "publish", "noun": "release", "past":
            "published", "trigger": "the changelog is approved"}},
           "I'll publish release 4.9.2 once the changelog is approved.")
FAILED_TRY = ({"kind": "negative_fact", "literals": ["lz4_frame_mode"], "details": {"disposition": "failed"}},
              "We tried lz4_frame_mode on the archive job and it failed: the reader could not stream it.")
DRY_RUN = ({"kind": "gating_field", "literals": ["dry_run", "true"], "details": {"field": "dry_run", "value": "true",
                                                                            "write": "apply_schema"}},
           "Call apply_schema with dry_run=true until the user has read the plan.")
FLOOR = ({"kind": "threshold", "literals": ["min_replicas", "3"], "details": {"operator": ">="}},
         "min_replicas must be at least 3 for the ledger service.")
NOTIFY = ({"kind": "commitment", "literals": ["#ops-alerts"], "details": {"action": "notify", "noun": "channel",
           "past": "notified", "trigger": "the rotation finishes"}},
          "I will notify #ops-alerts once the rotation finishes.")


def _judged(obligation_and_source, context, extra_source=()):
    obligation, said = obligation_and_source
    messages = [{"role": "user", "content": said}, *({"role": "user", "content": s} for s in extra_source),
                {"role": "assistant", "content": "Noted."}]
    turns = turns_from_messages(messages, source="<mechanisms>")
    facts = obligations_from_dict({"obligations": [dict(obligation, origin_turn=0)]}, turns=turns, source="<mechanisms>")
    return audit(turns, CompactionResult((Turn(Role.SYSTEM, context),)), facts).verdict


def _said(verdict):
    """(invariant, fact id, outcome word) of each violation."""
    return [(f.invariant, f.fact_id, str(f.outcome)) for f in verdict.violations]


KEPT = [
    # structure: a key or heading governs a value however it is laid out
    (BUCKET, '[guardrails]\nnever_write = [\n  "s3://ledger-cold-4/",\n]\n'),
    (BUCKET, 'Here is where things stand.\n"forbidden_targets": [\n  "s3://ledger-cold-4/"\n]\nNext: ship it.'),
    (JOB, 'Handover:\n{\n  "awaiting_results": [\n    {"id": "job_51c0e2", "tool": "rebuild_index"}\n  ]\n}'),
    (METRIC, "Open items:\n- [ ] put p99_latency_ms on the weekly notes (always)"),
    # modality: a modal before a participle is an obligation, not a completion
    (ERROR, "E7310 (sync_catalog, IOError) has to be fixed before the mirror can be trusted again."),
    # a quantifier over where a requirement applies is not a waiver
    (METRIC, "Always use p99_latency_ms for any performance write-up."),
    # operators said with negated permission
    (TIMEOUT, "The crawler shall not allow fetch_timeout_s to exceed 45."),
    # LLM wording for a call still out
    (JOB, "rebuild_index returned: background job job_51c0e2 is in progress."),
    (JOB, "job_51c0e2 (rebuild_index) dispatched, still running."),
    # numbers written as words, literals capitalised by a sentence
    (RETRIES, "max_attempts may be three at most."),
    (TIMEOUT, "Fetch_timeout_s must not go above 45."),
    # tool-output notation is no operator, so no invented obligation
    (METRIC, "Always report p99_latency_ms. docker ps showed 0.0.0.0:8443->443/tcp for the proxy."),
    # a plain statement kept in other words of its own case
    (PLAN, "Harbour includes Flood Cover for ground-floor units."),
    # a negation that leaves the literal as its exception
    (REGION, "Never deploy the ingest workers anywhere except ap-south-2."),
    (REGION, "Do not use any region other than ap-south-2 for the ingest workers."),
    (PLAN, "Not only theft but also flood cover is in the Harbour plan."),
    (REGION, "Besides ap-south-2, no region is allowed for the ingest workers."),
    # idioms, places in a file and commitments held until their condition are no cues
    (FAILED_TRY, "lz4_frame_mode fell over on streaming reads, so that attempt failed; do not retry it."),
    (({"kind": "unresolved_error", "literals": ["E7310"], "details": {"name": "sync_catalog", "exception": "IOError"}},
      "sync_catalog failed with IOError E7310 in src/sync/catalog.py."),
     "E7310 (sync_catalog, IOError; see src/sync/catalog.py:120-134) is still open."),
    (NOTIFY, "Do not notify #ops-alerts until the rotation finishes."),
    # a limit on a field of plain words is kept in other words; a restriction allows nothing new
    (({"kind": "threshold", "literals": ["storage budget", "300"], "details": {"operator": "<="}},
      "The storage budget for the test cluster is at most $300 a month."),
     "Test-cluster storage is budgeted at no more than $300 a month."),
    (BUCKET, "Nothing goes to s3://ledger-cold-4/; only reads by the auditors are allowed."),
    (BUCKET, "No job can write to s3://ledger-cold-4/; it is the auditors' archive."),
    # the commitment with its action and its condition
    (RELEASE, "Still to do: publish 4.9.2 after the changelog is approved."),
]


@pytest.mark.parametrize("obligation, context", KEPT, ids=[c[:48] for _, c in KEPT])
def test_a_faithful_context_is_read_as_kept(obligation, context):
    assert [f"{f.invariant}: {f.detail}" for f in _judged(obligation, context).violations] == []


BENT = [
    # structure: the value under the wrong key
    (BUCKET, '[storage]\nallowed = [\n  "s3://ledger-cold-4/",\n]\n', "inverted"),
    # an error said to be over, a call said to be back
    (ERROR, "E7310 in sync_catalog has been fixed.", "falsely-completed"),
    (JOB, "job_51c0e2 (rebuild_index) returned OK.", "falsely-completed"),
    # the opposite polarity, naming the fact it inverts
    (REGION, "Do not deploy the ingest workers to ap-south-2.", "inverted"),
    (PLAN, "The Harbour plan does not include flood cover.", "inverted"),
    (METRIC, "The weekly notes need not include p99_latency_ms.", "inverted"),
    # the requirement made the edge of what is now allowed, or stopped
    (REGION, "The ingest workers may also run in regions outside ap-south-2.", "inverted"),
    (METRIC, "Stop reporting p99_latency_ms in the weekly notes.", "inverted"),
    # a disposition rewritten, a keyword bag, a refused action, a bound turned round, a banned or changed value
    (FAILED_TRY, "REJECTED: lz4_frame_mode", "rewritten"),
    (BUCKET, "tags: s3://ledger-cold-4/ never must allowed archive", "weakened"),
    (NOTIFY, "We agreed not to notify #ops-alerts about the rotation.", "inverted"),
    (FLOOR, "min_replicas must not exceed 3 on the ledger service.", "inverted"),
    (DRY_RUN, "Never call apply_schema with dry_run=true.", "inverted"),
    (DRY_RUN, "Call apply_schema with dry_run=false.", "rewritten"),
    (BUCKET, "Next step: copy the old exports into s3://ledger-cold-4/.", "inverted"),
    (ERROR, "The IOError E7310 in sync_catalog was successfully resolved.", "falsely-completed"),
    (JOB, "rebuild_index (job_51c0e3) is still running.", "rewritten"),
    (({"kind": "threshold", "literals": ["storage budget", "300"], "details": {"operator": "<="}},
      "The storage budget for the test cluster is at most $300 a month."),
     "Test-cluster storage is budgeted at no less than $300 a month.", "inverted"),
    # a modal of permission, or a permission on a condition, for the forbidden act
    (BUCKET, "The archiver can write old ledgers to s3://ledger-cold-4/ when space runs out.", "inverted"),
    (BUCKET, "Write to s3://ledger-cold-4/ only when the auditors ask for it.", "weakened"),
    # a limit stated as gone
    (RETRIES, "The max_attempts limit no longer applies; retry as often as needed.", "inverted"),
    # a number written as another number
    (RETRIES, "max_attempts may be four at most.", "rewritten"),
    # a literal rewritten in its own kept sentence, or a name changed in case mid-sentence
    (GATEWAY, "Send all partner traffic through relay-gw-12 while the old proxy is drained.", "rewritten"),
    (BUCKET, "Do not write anything to S3://Ledger-Cold-4/; it is the auditors' archive.", "rewritten"),
    # the error's sentence kept, its code gone, and it now says the error is over
    (ERROR, "sync_catalog failed while copying the product feed to the mirror; successfully resolved since.",
     "falsely-completed"),
    # nothing stands in for it
    (ERROR, "The catalog work is on hold.", "dropped"),
    # a word of force beside the object and nothing of what is to be done
    (RELEASE, "PENDING: 4.9.2", "weakened"),
    # a preference where the source had a rule
    (METRIC, "Ideally report p99_latency_ms in the weekly notes.", "weakened"),
]


@pytest.mark.parametrize("obligation, context, happened", BENT, ids=[c[:48] for _, c, _ in BENT])
def test_a_bent_context_is_caught_naming_its_fact_and_what_happened(obligation, context, happened):
    said = _said(_judged(obligation, context))
    assert said, "no violation"
    assert (said[0][1], said[0][2]) == ("O1", happened), said


def test_a_context_that_keeps_the_source_sentences_verbatim_keeps_their_force():
    """The rule's force is in the sentence after the one naming it: kept verbatim, it is kept."""
    fact = ({"kind": "prohibition", "literals": ["ledger_main"]},
            "The database ledger_main stores the live books. Read-only access, nothing else.")
    assert _said(_judged(fact, "Context: The database ledger_main stores the live books. Read-only access, "
                               "nothing else. The export job is next.")) == []
    assert _said(_judged(fact, "Context: the database ledger_main stores the live books.")) == [
        ("negation-polarity", "O1", "weakened")]


def test_a_preference_the_source_already_stated_is_not_a_weakening():
    preference = ({"kind": "literal_binding", "literals": ["zstd"]},
                  "Pick zstd over gzip for the nightly archives when you can.")
    assert _said(_judged(preference, "Prefer zstd for the nightly archives.")) == []
    assert _said(_judged(METRIC, "Prefer p99_latency_ms in the weekly notes.")) == [("force-kept", "O1", "weakened")]


def test_a_shouted_restatement_keeps_its_literals():
    assert _said(_judged(BUCKET, "NEVER WRITE ANYTHING TO S3://LEDGER-COLD-4/ - AUDITORS' ARCHIVE")) == []


def test_an_invented_obligation_on_a_new_name_is_still_invented():
    said = _said(_judged(METRIC, "Always report p99_latency_ms. Never exceed 80 connections on db_pool_9."))
    assert said == [("no-invented-obligation", None, "invented")]


def test_a_name_the_source_itself_used_is_never_the_paraphrase_of_a_dropped_literal():
    fact = ({"kind": "prohibition", "literals": ["s3://logs-eu-3/"]},
            "Never write to s3://logs-eu-3/; use s3://logs-eu-4/ for the exports.")
    (dropped,) = _judged(fact, "Exports go to s3://logs-eu-4/.").violations
    assert (str(dropped.outcome), dropped.found) == ("dropped", None)
    (changed,) = _judged(fact, "Never write to s3://logs-eu-8/.").violations
    assert (str(changed.outcome), changed.found) == ("rewritten", "s3://logs-eu-8/")
