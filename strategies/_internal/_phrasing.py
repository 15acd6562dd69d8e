"""The many ways a transcript states each kind of obligation.

Phrasing varies on purpose: a summarizer (or an oracle) tuned to one template
must not pass by luck. Each table has at least five entries (the preference
decoys, appended to every other prohibition, have three); a fact's
``phrasing`` integer picks one (modulo the table size), so shrinking moves
towards the first, plainest entry. Obligation templates never add digits or
underscores of their own beyond the literals they are given; decoy templates
(at the end) may, since they bind nothing.
"""

from __future__ import annotations

__all__ = [
    "pick",
    "PROHIBITIONS",
    "PREFERENCE_DECOYS",
    "BINDINGS",
    "BINDING_SUPERSESSIONS",
    "BOUND_FORMS",
    "THRESHOLD_FRAMES",
    "THRESHOLD_RESTATEMENTS",
    "THRESHOLD_SUPERSESSIONS",
    "COMMITMENTS",
    "COMMITMENT_ACTIONS",
    "COMMITMENT_TRIGGERS",
    "FULFILMENTS",
    "CALL_STARTS",
    "CALL_TOOLS",
    "CALL_RESULTS",
    "JOB_ACCEPTED",
    "JOB_NOTIFICATIONS",
    "JOB_POLL",
    "REASONING",
    "JOB_OUTCOMES",
    "OPENERS",
    "ERROR_RESULTS",
    "ERROR_CALLS",
    "ERROR_FIXES",
    "NEGATIVE_FACTS",
    "ARTIFACTS",
    "ARTIFACT_KINDS",
    "GATING_CONFIGS",
    "GATING_WRITES",
    "GATING_SUPERSESSIONS",
    "RETRACTIONS",
    "EFFECT_CALLS",
    "EFFECT_CALLS_BY_WRITE",
    "EFFECT_CALLS_BY_CATEGORY",
    "EFFECT_NOTES",
    "DECOY_NEAR_MISSES",
    "DECOY_LOG_LINES",
    "DECOY_OLD_VALUES",
    "DECOY_STALE_VALUES",
    "DECOY_STALE_SETTINGS",
    "DECOY_PASSING",
    "DECOY_HYPOTHETICALS",
]


def pick(table: tuple[str, ...], index: int) -> str:
    return table[index % len(table)]


PROHIBITIONS = (
    "Never use {lit}.",
    "Under no circumstances should anything go to {lit}.",
    "Do not ever run against {lit}.",
    "{lit} is off limits.",
    "You must not touch {lit}.",
    "Don't write anything to {lit}, ever.",
    "Stay away from {lit}; it is forbidden for this task.",
)

# The hard case from reference 004: a real prohibition next to a mere preference.
PREFERENCE_DECOYS = (
    " I'd prefer shorter log lines, but that's just taste.",
    " Personally I like the dashboard dark, not important.",
    " Ideally keep the commit messages brief if possible.",
)

BINDINGS = (
    "Use {lit} for the {category}.",
    "The {category} to use is {lit}, exactly that.",
    "Point everything at {lit}.",
    "Make sure you target {lit} as the {category}.",
    "We're standardising on {lit} for the {category}.",
)

BINDING_SUPERSESSIONS = (
    "Switch from {old} to {new} for the {category}.",
    "Use {new} now; {old} is retired.",
    "{new} replaces {old} as the {category}.",
    "Move over to {new} instead of {old}.",
    "New {category}: {new} (not {old} any more).",
)

# Operator -> ways to say "<op> {v}". Includes the ambiguous-looking but exact forms.
BOUND_FORMS = {
    "<=": ("at most {v}", "no more than {v}", "<= {v}", "{v} max", "up to {v}", "never more than {v}", "capped at {v}"),
    ">=": ("at least {v}", "no fewer than {v}", ">= {v}", "a minimum of {v}", "{v} or more"),
    "<": ("fewer than {v}", "strictly below {v}", "< {v}", "less than {v}", "under {v}"),
    ">": ("more than {v}", "above {v}", "> {v}", "greater than {v}", "over {v}"),
    "==": ("exactly {v}", "== {v}", "precisely {v}", "set to {v}", "equal to {v}"),
}

THRESHOLD_FRAMES = (
    "Keep {field} {bound}.",
    "{field} must be {bound}.",
    "Please configure {field} {bound}.",
    "The limit: {field} {bound}.",
    "Hard rule, {field} {bound}, no exceptions.",
)

THRESHOLD_RESTATEMENTS = (
    "Reminder: {field} stays {bound}.",
    "Just to repeat, {field} {bound}.",
    "Again, {field} is {bound}.",
    "As said before: {field} {bound}.",
    "Don't forget {field} {bound}.",
)

THRESHOLD_SUPERSESSIONS = (
    "Update: {field} is now {bound}.",
    "Change of plan, {field} goes from {old} to {new}: {bound}.",
    "Raise {field} to {new}; {old} was too tight, so {bound}.",
    "New value for {field}: {bound}.",
    "Scratch {old}. {field} should be {bound}.",
)

COMMITMENTS = (
    "Decision made: we go ahead with the plan. I will {action} {noun} {lit} once {trigger}.",
    "Agreed, the approach is settled. After {trigger}, I'll {action} {noun} {lit}.",
    "Plan approved. Still to do on my side: {action} {noun} {lit} when {trigger}.",
    "I'm committing to {action} {noun} {lit} after {trigger}; the decision itself is made.",
    "Noted the decision. Pending: {action} {noun} {lit}, right after {trigger}.",
)

# (action, noun, past tense) for a commitment's pending action.
COMMITMENT_ACTIONS = (
    ("re-run", "migration", "re-ran"),
    ("deploy", "release", "deployed"),
    ("backfill", "table", "backfilled"),
    ("rotate", "key", "rotated"),
    ("roll back", "change", "rolled back"),
)

COMMITMENT_TRIGGERS = (
    "the schema diff is reviewed",
    "the staging smoke tests pass",
    "the security review signs off",
    "the freeze window ends",
    "the backup finishes",
)

FULFILMENTS = (
    "Done: {past} {noun} {lit}.",
    "{noun} {lit}: {past}, all good.",
    "I {past} {noun} {lit} as promised.",
    "Finished. {noun} {lit} has been {past}.",
    "Completed the pending step, {past} {noun} {lit}.",
)

CALL_STARTS = (
    "Starting {name} now; it takes a while.",
    "Kicking off {name} in the background.",
    "Launching {name}, will report when it returns.",
    "Running {name}; the result comes later.",
    "Calling {name} now.",
)

CALL_TOOLS = ("run_migration", "deploy_service", "run_load_test", "build_image", "export_table")

CALL_RESULTS = (
    "{name} finished: ok.",
    "{name} completed without errors.",
    "done ({name}).",
    "{name}: success.",
    "{name} returned: all steps passed.",
)

# A background job: the call is answered at once with its handle, the outcome comes later. The placeholder
# never uses a word that says the job is over.
JOB_ACCEPTED = (
    "Job {job} accepted: {name} is running in the background; no result yet.",
    "{name} queued as background job {job} (status: pending).",
    "Started {name} as {job}. It keeps running after this call; poll {job} for its outcome.",
    "Background task {job} ({name}) is in progress.",
    "{job}: {name} dispatched, still running.",
)

JOB_NOTIFICATIONS = (
    "[background job {job} finished] {name}: ok.",
    "Notification: job {job} ({name}) completed without errors.",
    "Your background task {job} is done; {name} succeeded.",
    "Job {job} has finished. {name} reported success.",
    "{name} in {job}: completed.",
)

JOB_POLL = "check_job"

#: The readable text of a reasoning part (``harness.strategies._internal._parts``): neutral, no obligation and no cue word.
REASONING = (
    "Looking at the output before choosing the next step.",
    "The result matches the plan so far; continuing with the next file.",
    "Comparing the two outputs first.",
    "Checking which file to open next.",
    "That answers the question; moving on.",
)

#: The stem of an attached file's name (``harness.Part`` of kind image or document).
ATTACHMENT_NAMES = ("screenshot", "error-dialog", "design-spec", "stack-trace", "dashboard", "invoice", "diagram")
#: A later user turn naming an attachment (``{name}``, the file's name): neutral, no obligation and no cue word.
ATTACHMENT_REFERENCES = (
    "That matches what {name} shows.",
    "The {name} I sent earlier shows the same thing.",
    "It is the same as in {name}.",
    "{name} has the details of it.",
    "Compare it with {name}, the one I attached.",
)

#: Tools that wait for a person's approval (an MCP approval request), and what the person answers.
APPROVAL_TOOLS = ("deploy_service", "delete_branch", "send_invoice", "rotate_api_key", "drop_table")
APPROVAL_TARGETS = ("billing-api", "release/2.3", "INV-2041", "ci-deploy-key", "sessions_archive")
#: The MCP servers a server-side call is made on (the provider runs the call; its result comes in the same response).
MCP_SERVERS = ("docs-search", "issue-tracker", "metrics", "wiki", "calendar")
APPROVAL_REASONS = {"approve": ("Go ahead.", ""), "deny": ("Not yet: wait for the review.", "No, leave it as it is.")}

JOB_OUTCOMES = (
    "{job}: finished, {name} ok.",
    "job {job} completed; {name} returned success.",
    "{job} done ({name}).",
    "status of {job}: succeeded ({name}).",
    "{name} ({job}) finished without errors.",
)

# The first user message, when a transcript would otherwise open with the assistant (no provider accepts that).
OPENERS = (
    "Picking up this repository again; carry on with the current task.",
    "Please continue with the work on this service.",
    "Let's keep going on the task from before.",
)

ERROR_CALLS = ("apply_patch", "run_tests", "sync_bucket", "restart_workers", "compile_assets")

ERROR_RESULTS = (
    "ERROR {lit}: {exc} while running {name}.",
    "{name} failed with {lit} ({exc}).",
    "Traceback (most recent call last): ... {exc}: code {lit}",
    "fatal: {lit} {exc}",
    "{name} aborted. Error {lit}: {exc}.",
)

ERROR_FIXES = (
    "Fixed {lit}: the cause was a bad setting.",
    "{lit} is resolved now.",
    "The {lit} error no longer happens after my change.",
    "Resolved {lit}; {name} passes again.",
    "Good news, {lit} is gone.",
)

NEGATIVE_FACTS = {
    "rejected": (
        "We tried {lit} in a dry run and it failed; that approach is rejected.",
        "{lit} is rejected: the user said no after the dry run.",
        "Dropping {lit}. Rejected, do not propose it again.",
        "Ruled out {lit} after review; rejected for good.",
        "Verdict on {lit}: rejected.",
    ),
    "failed": (
        "{lit} failed in the dry run.",
        "The {lit} attempt failed and corrupted the staging copy.",
        "Tried {lit}: it failed, do not retry it.",
        "{lit} did not work; it failed twice.",
        "Result for {lit}: failed.",
    ),
    "superseded": (
        "{lit} is superseded by the new plan.",
        "We replaced {lit} with a different approach; it's superseded.",
        "{lit} is obsolete now, superseded.",
        "Superseded: {lit} is no longer the plan.",
        "The {lit} route was superseded yesterday.",
    ),
}

ARTIFACT_KINDS = ("rollback script", "migration plan", "backup manifest", "runbook", "test fixture")

ARTIFACTS = (
    "A {what} already exists at {lit}; reuse it, don't regenerate it.",
    "Note: {lit} is the existing {what}.",
    "We already have the {what}: {lit}.",
    "The {what} is in place at {lit}.",
    "Found an existing {what} at {lit}, so no need to write a new one.",
)

# How a config file states "<field> <value>"; the field name stays byte-exact.
GATING_CONFIGS = (
    "# settings.yaml\nworkers: many\n{field}: {value}\nlog: info",
    "[runtime]\nmode = batch\n{field} = {value}",
    '{{"mode": "batch", "{field}": "{value}", "log": "info"}}',
    "settings.toml:\n{field} = {value}\nverbose = no",
    "effective flags: --mode=batch --{field}={value}",
)

GATING_WRITES = (
    "apply the patch to the staging filesystem",
    "push the schema change to the shared database",
    "write the new cache config",
    "upload the artifacts to the release bucket",
    "restart the workers with the new settings",
)

GATING_SUPERSESSIONS = (
    "Config update: {field} is now {new} (was {old}).",
    "Changed {field} from {old} to {new}.",
    "Set {field} to {new}; {old} no longer applies.",
    "New setting, {field}: {new}.",
    "{field} bumped to {new}.",
)

RETRACTIONS = (
    "Scratch the rule about {lit}; it no longer applies.",
    "Forget what I said about {lit}.",
    "I'm withdrawing the {lit} requirement.",
    "Never mind {lit}, that's cancelled.",
    "Retracting: {lit} is no longer a constraint.",
)

# -- effects (``_expand``): irreversible tool calls a gating field or prohibition governs ---------------
# Each is (tool name, arguments, result). They state no obligation and end none, and carry no digit
# and no literal shape of ours: the ledger stays the only ground truth, and a summarizer that keeps
# the governing fact beside the call gains nothing from the call's own text. ``expand`` still skips
# to the next entry when a transcript's literal (a team's kind may have plain words) turns up in one.

EFFECT_CALLS = (
    ("deploy_service", '{"service": "web-frontend", "env": "staging"}', "Rollout accepted; new pods are starting."),
    ("write_file", '{"path": "notes/release.md", "mode": "overwrite"}', "Wrote notes/release.md over the old copy."),
    ("send_message", '{"channel": "#ops", "text": "Rollout starting in a few minutes."}', "Message delivered to #ops."),
    ("apply_patch", '{"patch": "changes.diff", "mode": "in place"}', "Hunks applied in place; the tree is dirty."),
    ("push_commit", '{"branch": "main", "force": false}', "Pushed to origin main."),
    ("publish_package", '{"registry": "internal", "tag": "latest"}', "Package published with tag latest."),
    ("delete_branch", '{"branch": "feature-cleanup", "remote": "origin"}', "Branch deleted on the remote."),
)

# An effect acts on what the fact governing it is about, so a finding that names the link makes sense: a
# gating field's own pending write, or a call on the kind of target a prohibition names (a prohibited
# bucket governs an upload to a bucket, never a chat message). ``EFFECT_CALLS`` is what is left when
# neither table knows the fact (a write or category of a team's own).
EFFECT_CALLS_BY_WRITE = {
    "apply the patch to the staging filesystem": (
        ("apply_patch", '{"patch": "changes.diff", "on": "staging filesystem"}',
         "Hunks applied in place on the staging filesystem."),),
    "push the schema change to the shared database": (
        ("push_schema", '{"database": "shared", "change": "add index"}', "Schema change applied to the shared database."),),
    "write the new cache config": (
        ("write_file", '{"path": "config/cache.yaml", "mode": "overwrite"}', "Wrote config/cache.yaml over the old copy."),),
    "upload the artifacts to the release bucket": (
        ("upload_artifacts", '{"bucket": "release", "source": "dist"}', "Artifacts uploaded to the release bucket."),),
    "restart the workers with the new settings": (
        ("restart_workers", '{"pool": "workers", "settings": "new"}', "Workers restarted with the new settings."),),
}
EFFECT_CALLS_BY_CATEGORY = {
    "bucket": (("upload_artifacts", '{"bucket": "exports", "source": "dist"}', "Artifacts uploaded; objects overwritten."),
               ("sync_bucket", '{"source": "reports", "delete": true}', "Sync ran; stale objects deleted.")),
    "host": (("run_remote", '{"host": "database primary", "command": "vacuum full"}', "Command ran on the host."),
             ("deploy_service", '{"service": "web-frontend", "hosts": "edge"}', "Rollout accepted on the hosts.")),
    "service": (("deploy_service", '{"service": "web-frontend", "env": "staging"}', "Rollout accepted; new pods are starting."),
                ("restart_service", '{"service": "web-frontend", "graceful": false}', "Service restarted; connections dropped.")),
    "path": (("write_file", '{"path": "notes/release.md", "mode": "overwrite"}', "Wrote notes/release.md over the old copy."),
             ("delete_file", '{"path": "notes/old-release.md"}', "Deleted notes/old-release.md.")),
}

# What the agent says beside the call, sometimes: most calls carry no text.
EFFECT_NOTES = ("", "Going ahead with it.", "", "Proceeding.", "", "On it.")

# -- decoys (``_decoys``): sentences that mention a value and bind nothing -----------------------------

DECOY_NEAR_MISSES = (
    "grep also turned up {value} in last month's logs.",
    "{value} shows up in the fixture data; it belongs to another team's project.",
    "The staging dump mentions {value} a few times.",
    "Someone's old branch references {value}.",
    "The dashboard export lists {value} next to {n} other entries.",
)

DECOY_LOG_LINES = (
    "logs/app.log:{n}: resolved {value} in 38 ms",
    "logs/batch.log:{n}: {value} listed, 12 objects",
    "logs/old/audit.log:{n}: seen {value} (archived)",
)

# Other values of a field that never bound: history, said as history.
DECOY_OLD_VALUES = (
    "We used to run with {field} {value}, back before the migration.",
    "For the record, last quarter's config had {field} at {value}.",
    "The old deploy notes say {field} was {value}; that was two years ago.",
    "Back in March {field} was {value}.",
    "Years ago the legacy cluster ran {field} at {value}.",
)

DECOY_STALE_VALUES = (
    "A few log lines still show {value}, from before the switch.",
    "The cached listing of {value} is from last week.",
    "grep still finds {value} in two old notebooks, written before the change.",
    "Last week's report was generated against {value}.",
    "The archived runbook from before the change mentions {value}.",
)

DECOY_STALE_SETTINGS = (
    "Before the change, {field} was {value}.",
    "Yesterday's run still had {field} at {value}, before the update.",
    "The old dashboards were recorded when {field} was {value}.",
    "Earlier benchmarks ran with {field} at {value}, before the change.",
    "Until this morning {field} was {value}.",
)

DECOY_PASSING = (
    "{value} came up again while I was reading the old logs.",
    "The weekly notes list {value} among the things we talked about.",
    "Scrolling back, I see {value} in the earlier discussion.",
    "{value} also appears in this morning's shell history.",
    "The audit export mentions {value} too.",
)

DECOY_HYPOTHETICALS = (
    "If we ever need a second {noun}, {value} would do.",
    "Hypothetically {value} could serve as the {noun} for a load test, but not now.",
    "Should the current {noun} fill up, {value} might be an option some day.",
    "In some future setup we might try {value}; nothing to decide today.",
    "Just thinking out loud: {value} could be the {noun} for the next project.",
)
