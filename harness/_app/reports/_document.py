"""The JSON report: the one document every other report is drawn from (``--report-json``, the HTML page,
JUnit, ``compaction-harness report``), written and checked here."""

from __future__ import annotations

import statistics

from pathlib import Path
from typing import Any

from harness._base._codec import transcript_from_dict, transcript_to_dict
from harness._base._errors import SchemaError
from harness._base._files import DEFAULT_MAX_FILE_MB, read_json_file
from harness._base._schema import Reader
from harness._app.fuzzing._fuzz import FuzzResult
from harness._app.judging._survival import Survival, survival_from_dict
from harness._app.reports._reproduce import reproduce_command
from harness._app.running._results import Degradation, Failure, RunResult, Unclear
from harness.oracles import select

__all__ = ["REPORT_VERSION", "report_dict", "sessions_dict", "finding_row", "fuzz_report_dict", "unclear_dict",
           "degradation_dict", "read_report", "check_report", "report_survival"]


#: The JSON report's layout version: 2 added ``report_version``, ``oracles``, ``unjudged``, ``budget`` and
#: ``survival``; 3 added ``unclear`` (readings for review), ``unclear_mode``, each violation's ``evidence``,
#: and root causes: ``findings`` (each with its transcript and context) and each violation's ``invariants``,
#: ``also``, ``also_seen`` and ``cause`` (``"dropped"`` when the compactor dropped the obligation's own turns).
#: A key added beside the others (``degraded``, each degradation) is no new version: readers take it missing.
REPORT_VERSION = 3


def report_dict(result: RunResult) -> dict[str, Any]:
    """The JSON report (``--report-json``), from which the HTML and JUnit reports are also drawn."""
    violations = [
        {
            "invariant": f.invariant,
            "invariants": list(f.invariants),
            "also": [{"invariant": invariant, "detail": detail} for invariant, detail in f.also],
            "also_seen": list(f.also_seen),
            "also_kinds": list(f.also_kinds),
            "cause": f.cause,
            "severity": f.severity,
            "fact_kind": f.fact_kind,
            "fact_id": f.fact_id,
            "minimal_turns": len(f.transcript.turns),
            "kept_window": f.kept_window,  # the compactor kept this many messages verbatim: the floor it sets
            "budget": f.budget,
            "elided": [{"turn": index, "merged_turns": merged, "tokens": tokens}
                       for index, merged, tokens in f.elided],
            "original_turns": f.original_turns,
            "shrink_checks": f.shrink_checks,
            "shrink_summarizer_calls": f.shrink_calls,
            "shrink_allowance": f.shrink_allowance,  # the calls it was allowed: --shrink-calls, or chosen by speed
            "spent_tokens": f.spent_tokens,
            "shrink_stopped": f.shrink_stopped,
            "trials": None if f.trials is None else {"failed": f.trials[0], "of": f.trials[1]},
            "rate": f.rate,
            "sightings": {"sessions": f.sightings, "of": result.examples_run},
            "round": f.round,
            "boundary": f.boundary,
            "boundaries": list(f.boundaries),
            "forced": f.forced,  # the failing round was forced by a planned cut (else the trigger fired it)
            "transcript": transcript_to_dict(f.transcript),
            "context": f.context,
            "detail": f.detail,
            "evidence": f.evidence,
            "outcome": f.outcome,
            "expected": f.expected,
            "found": f.found,
            "reproduce": _reproduce(result, f),
            **_corpus(result, f),
        }
        for f in result.failures
    ]
    return {
        "report_version": REPORT_VERSION,
        "summarizer": result.config.calling.summarizer,
        "protocol": result.protocol,
        "dialect": result.config.judging.dialect,
        "may_vary": result.may_vary,  # the summarizer may answer differently: nights compare rates (``_trend``)
        "seed": result.seed,
        "shard": None if result.config.generation.shard is None else dict(zip(("index", "of"), result.config.generation.shard)),
        "examples": result.config.generation.examples,
        "examples_run": result.examples_run,
        "replayed": result.replayed,
        "budget": result.config.judging.budget,
        "oracles": [o.id for o in select(only=result.config.judging.only, skip=result.config.judging.skip)],
        "unjudged": [{"oracle": oracle, "reason": reason} for oracle, reason in result.unjudged],
        "summarizer_calls": result.summarizer_calls,
        "first_failure_calls": result.first_failure_calls,
        "cache_hits": result.cache_hits,
        "calls": {
            "calls": result.stats.calls, "asked_again": result.stats.asked_again, "cache_hits": result.cache_hits,
            "retries": result.stats.retries, "usage_known": result.stats.usage_known,
            "handed_tokens": result.stats.handed_tokens,
            "prompt_tokens": result.stats.prompt_tokens, "completion_tokens": result.stats.completion_tokens,
            "latency_p50_s": result.stats.latency(0.5), "latency_p95_s": result.stats.latency(0.95),
        },
        "nondeterministic": {"detected": result.nondeterministic, "reasked": result.stats.reasked,
                             "answered_differently": result.stats.answered_differently},
        "cap_reached": result.cap_reached,
        "unclear_mode": result.config.judging.unclear,
        "unclear": [unclear_dict(u) for u in result.unclear],
        "violations": violations,
        # One row per root cause, in the order of ``violations``.
        "findings": [finding_row(v, n) for n, v in enumerate(violations)],
        "degradations": result.degradations,
        "degraded": [degradation_dict(g) for g in result.degraded],
        "infra_errors": [{"kind": e.kind, "message": e.message, "example": e.example, "output": e.output}
                         for e in result.infra_errors],
        "incomplete": result.incomplete,
        "incomplete_reason": None if result.incomplete is None else result.incomplete.reason.value,
        "cache_discarded": list(result.cache_discarded),
        "warnings": list(result.warnings),
        "exit_code": result.exit_code,
        "survival": result.survival.to_dict(),
        "sessions": sessions_dict(result),
        "background": result.background,
    }


def sessions_dict(result: RunResult) -> dict[str, Any]:
    """How big the judged sessions were and what made them compact (``RunResult.sessions``)."""
    s, judging = result.sessions, result.config.judging
    return {"budget": judging.budget, "trigger": judging.trigger, "planned_cuts": judging.planned_cuts,
            "tighten": judging.tighten, "max_windows": result.config.generation.max_windows,
            "max_turns": result.config.generation.max_turns, "tokens": list(s.tokens),
            "compactions": list(s.rounds), "by_trigger": s.by_trigger, "forced_by_planned_cuts": s.planned,
            "tightened_sessions": s.tightened,
            "request_tokens_median": statistics.median(s.requests) if s.requests else None,
            "request_tokens_total": sum(s.requests)}


def finding_row(v: dict[str, Any], n: int) -> dict[str, Any]:
    """The ``findings`` row of violation ``v`` (the ``n``-th): what a person reads first, drawn from the record."""
    return {"invariants": v.get("invariants") or [v.get("invariant")], "also_seen": v.get("also_seen", []),
            "fact_kind": v.get("fact_kind"), "also_kinds": v.get("also_kinds", []), "cause": v.get("cause"),
            "fact_id": v.get("fact_id"), "round": v.get("round"), "minimal_turns": v.get("minimal_turns"),
            "evidence": v.get("evidence"), "outcome": v.get("outcome"), "transcript": v.get("transcript"), "context": v.get("context"),
            "reproduce": v.get("reproduce"), "corpus_file": v.get("corpus_file"),
            "corpus_new": v.get("corpus_new", False), "violation": n}


def fuzz_report_dict(fuzz: FuzzResult) -> dict[str, Any]:
    """``report_dict`` of the shrunk result, with the fuzzing counters under ``fuzz``."""
    s = fuzz.stats
    document = report_dict(fuzz.run)
    document["fuzz"] = {"executions": s.executions, "examples": s.examples, "calls": s.calls,
                        "seconds": round(s.seconds, 3), "executions_per_second": round(s.per_second, 1),
                        "coverage": s.coverage, "features": s.features, "inputs": s.inputs,
                        "first_failure_calls": s.first_failure_calls,
                        "first_failure_executions": s.first_failure_executions, "restarts": s.restarts,
                        "directory": s.directory}
    return document


def _corpus(result: RunResult, f: Failure) -> dict[str, Any]:
    """The corpus entry saved for ``f`` (``corpus_file``), and whether this run added it (``corpus_new``)."""
    path, added = result.corpus_files.get(f.signature, (None, False))
    return {"corpus_file": path, "corpus_new": added}


def _reproduce(result: RunResult, f: Failure) -> str:
    return reproduce_command(result, only=",".join(f.invariants), transcript_file=result.reproduce_files.get(f.signature))


def unclear_dict(u: Unclear) -> dict[str, Any]:
    """One unclear reading as the JSON report holds it."""
    return {"invariant": u.invariant, "fact_kind": u.fact_kind, "fact_id": u.fact_id, "why": u.why,
            "detail": u.detail, "obligation": u.obligation, "sentence": u.sentence, "example": u.example,
            "round": u.round, "boundary": u.boundary, "count": u.count}


def degradation_dict(g: Degradation) -> dict[str, Any]:
    """One degrade finding as the JSON report lists it."""
    return {"invariant": g.invariant, "fact_kind": g.fact_kind, "fact_id": g.fact_id, "detail": g.detail,
            "expected": g.expected, "found": g.found, "evidence": g.evidence, "outcome": g.outcome,
            "example": g.example, "round": g.round, "boundary": g.boundary}


def read_report(path: str | Path, *, max_mb: float = DEFAULT_MAX_FILE_MB) -> dict[str, Any]:
    """A JSON report written by ``--report-json`` (run, shrink, fuzz) or ``compare --report-json``, checked
    field by field for what the page reads; every error names the file and the field."""
    data = read_json_file(path, max_mb=max_mb)
    source = str(path)
    if isinstance(data, dict) and "comparison_version" in data:
        _check_comparison(data, source)
        return data
    check_report(data, source)
    return data


#: The ``compare --report-json`` layouts read here: 2 only added what a varying summarizer's rates need.
_COMPARISON_VERSIONS = (1, 2)


def _check_comparison(data: dict[str, Any], source: str) -> None:
    """Every field of a ``compare --report-json`` document the page reads, named when it is wrong."""
    r = Reader(data, source=source)
    if r.int("comparison_version") not in _COMPARISON_VERSIONS:
        r.fail("comparison_version", "1 or 2 (a compare report this harness reads)", data["comparison_version"])
    r.str("baseline")
    r.str("verdict")
    r.int("exit_code")
    r.optional_int("seed")
    r.str_list("not_run", default=[])
    for n, side in enumerate(r.children("sides")):
        side.str("summarizer")
        side.optional_str("incomplete")
        check_report(data["sides"][n].get("report"), f"{source}: sides[{n}].report")
        if data["sides"][n].get("corpus") is not None:
            for outcome in side.children("corpus"):
                for key in ("entry", "invariant", "status", "detail"):
                    outcome.str(key)
    for against in r.children("against_baseline"):
        against.str("summarizer")
        for key in ("new", "fixed"):
            for item in against.children(key):
                where = item.str("where")
                item.str("detail")
                names = {"run": ("invariant", "fact_kind"), "corpus": ("entry", "invariant"),
                         "summarizer": ("infra_kind",)}
                if where not in names:
                    item.fail("where", "one of run, corpus, summarizer", where)
                for name in names[where]:
                    item.str(name)
    for row in r.children("matrix"):
        row.str("failure")
        row.str_list("marks")
    for row in r.children("kept_per_kind"):
        row.str("kind")
        row.str_list("kept")


def check_report(data: Any, source: str) -> None:
    """Raise ``SchemaError`` naming the field when ``data`` is not a run's JSON report the page can draw."""
    if not isinstance(data, dict):
        raise SchemaError("(top level)", "a JSON report object written by --report-json", data, source=source)
    r = Reader(data, source=source)
    version = r.int("report_version", default=1)
    if not 1 <= version <= REPORT_VERSION:
        r.fail("report_version", f"1 to {REPORT_VERSION} (written by a newer compaction-harness?)", version)
    r.str("summarizer")
    r.int("exit_code")
    for n, v in enumerate(r.children("violations")):
        v.str("invariant")
        for key in ("fact_kind", "fact_id", "detail", "expected", "found", "reproduce", "severity", "rate",
                    "shrink_stopped", "cause"):
            v.optional_str(key)
        v.str_list("invariants", default=[])
        v.str_list("also_seen", default=[])
        v.str_list("also_kinds", default=[])
        v.optional_str("corpus_file")
        for also in v.children("also", default=[]):
            also.str("invariant")
            also.str("detail")
        for key in ("round", "boundary", "budget", "original_turns", "shrink_checks", "shrink_summarizer_calls"):
            v.optional_int(key)
        for e in v.children("elided", default=[]):
            e.int("turn")
            e.int("merged_turns")
            e.int("tokens")
        transcript_from_dict(data["violations"][n].get("transcript"), source=f"{source}: violations[{n}].transcript")
        context = v.child("context", optional=True)
        if context is not None:
            for m in context.children("messages"):
                m.optional_str("content")
    for u in r.children("unclear", default=[]):
        u.str("invariant")
        for key in ("fact_kind", "fact_id", "why", "detail", "obligation", "sentence"):
            u.optional_str(key)
        for key in ("example", "round", "boundary", "count"):
            u.optional_int(key)
    calls = r.child("calls", optional=True)
    if calls is not None:
        for key in ("calls", "prompt_tokens", "completion_tokens"):
            calls.int(key, default=0)
    for e in r.children("infra_errors", default=[]):
        e.str("kind")
        e.str("message")
    r.str_list("warnings", default=[])
    degradations = r._get("degradations", {})
    if not isinstance(degradations, dict) or not all(isinstance(n, int) for n in degradations.values()):
        r.fail("degradations", "an object mapping oracle ids to counts", degradations)
    for g in r.children("degraded", default=[]):
        g.str("invariant")
        for key in ("fact_kind", "fact_id", "detail", "expected", "found", "evidence", "outcome"):
            g.optional_str(key)
        for key in ("example", "round", "boundary"):
            g.optional_int(key)
    if "survival" in data:
        survival_from_dict(data["survival"], source=source)


def report_survival(document: dict[str, Any], source: str) -> Survival | None:
    """The report's survival counts, or None for a report written before they existed."""
    return survival_from_dict(document["survival"], source=source) if "survival" in document else None

