"""The shards of one night put back together: their JSON reports merged into the one report of the whole run.

``run --shard K/N`` judges the K-th of N disjoint parts of a seed's examples, one part per machine. The
reports of the shards of one run (the same summarizer, seed, examples and N) are one night: ``report``
merges them before it draws the page or compares nights, so a night is one entry whatever N was. A root
cause two shards both found (the same identity as the trend matches findings by, ``_trend.Finding.key``)
is one finding, with the smaller minimal transcript; counts add up; the exit code is the worst.
"""

from __future__ import annotations

from typing import Any

from harness._app._outcome import ExitCode, exit_code
from harness._app.judging._survival import Survival, survival_from_dict
from harness._app.reports._document import finding_row
from harness._app.reports._trend import findings_of

__all__ = ["merged_nights", "merge_shards", "shard_of"]

_COUNTS = ("examples_run", "replayed", "summarizer_calls", "cache_hits")


def shard_of(document: dict[str, Any]) -> tuple[int, int] | None:
    """``(K, N)`` of a shard's report, else None."""
    shard = document.get("shard")
    if isinstance(shard, dict) and isinstance(shard.get("index"), int) and isinstance(shard.get("of"), int):
        return shard["index"], shard["of"]
    return None


def _run_of(document: dict[str, Any]) -> tuple:
    """What the shards of one run share."""
    shard = shard_of(document)
    return (document.get("summarizer"), document.get("seed"), document.get("examples"), shard and shard[1])


def merged_nights(reports: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """``reports`` (oldest first) with the shard reports of each run merged into one, where its first shard
    stood, named ``FIRST (+ N-1 shards)``; other reports are left as they are."""
    out: list[tuple[str, dict[str, Any]]] = []
    where: dict[tuple, int] = {}  # a run's shards -> the index of their merged report in ``out``
    for source, document in reports:
        if shard_of(document) is None:
            out.append((source, document))
        elif _run_of(document) in where:
            n = where[_run_of(document)]
            out[n] = (out[n][0], merge_shards([out[n][1], document]))
        else:
            where[_run_of(document)] = len(out)
            out.append((source, document))
    return [(f"{source} (+ {len(_shards(d)) - 1} shards)" if len(_shards(d)) > 1 else source, d) for source, d in out]


def _shards(document: dict[str, Any]) -> list[dict[str, Any]]:
    shards = document.get("shards")
    if isinstance(shards, list):
        return shards
    shard = shard_of(document)
    return [{"index": shard[0], "of": shard[1]}] if shard else []


def _with_sightings(violation: dict[str, Any], sessions: int | None, examples: int) -> dict[str, Any]:
    """The violation with its cause's sightings over every shard (left as it is where a shard did not record them)."""
    if sessions is None:
        return violation
    return {**violation, "sightings": {"sessions": sessions, "of": examples}}


def merge_shards(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """One report of the shards' reports: findings deduplicated by root cause, counts added."""
    base = dict(documents[0])
    shards = sorted({(s["index"], s["of"]) for d in documents for s in _shards(d)})
    base["shard"] = None
    base["may_vary"] = any(d.get("may_vary") for d in documents)
    base["shards"] = [{"index": k, "of": n} for k, n in shards]
    for key in _COUNTS:
        base[key] = sum(d.get(key) or 0 for d in documents)
    calls = [d.get("calls") for d in documents if isinstance(d.get("calls"), dict)]
    if calls:
        base["calls"] = {k: sum(c.get(k) or 0 for c in calls) for k in calls[0] if k not in ("latency_p50_s", "latency_p95_s")}
    best: dict[tuple, dict[str, Any]] = {}
    sightings: dict[tuple, int | None] = {}  # the examples of every shard that showed the cause
    order: list[tuple] = []
    for d in documents:
        violations = d.get("violations") or []
        for finding in findings_of(d):
            if finding.violation is None:
                continue
            v = violations[finding.violation]
            key = finding.key
            if key not in best:
                order.append(key)
                best[key] = v
                sightings[key] = finding.sightings
            else:
                held = sightings[key]
                sightings[key] = None if held is None or finding.sightings is None else held + finding.sightings
                if (v.get("minimal_turns") or 0) < (best[key].get("minimal_turns") or 0):
                    best[key] = v
    base["violations"] = [_with_sightings(best[key], sightings[key], base["examples_run"]) for key in order]
    base["findings"] = [finding_row(v, n) for n, v in enumerate(base["violations"])]
    base["infra_errors"] = [e for d in documents for e in d.get("infra_errors") or []]
    base["unclear"] = [u for d in documents for u in d.get("unclear") or []]
    base["warnings"] = list(dict.fromkeys(w for d in documents for w in d.get("warnings") or []))
    degradations: dict[str, int] = {}
    for d in documents:
        for oracle, count in (d.get("degradations") or {}).items():
            degradations[oracle] = degradations.get(oracle, 0) + count
    base["degradations"] = degradations
    base["degraded"] = [g for d in documents for g in d.get("degraded") or []]
    stops = [d["incomplete"] for d in documents if d.get("incomplete")]
    base["incomplete"] = "; ".join(dict.fromkeys(stops)) or None
    if all("survival" in d for d in documents):
        survival = Survival()
        for d in documents:
            survival = survival.merged(survival_from_dict(d["survival"], source="<shard report>"))
        base["survival"] = survival.to_dict()
    base["exit_code"] = int(exit_code(violated=any(d.get("exit_code") == ExitCode.VIOLATIONS for d in documents),
                                      summarizer_failed=bool(base["infra_errors"]),
                                      incomplete=base["incomplete"] is not None))
    return base
