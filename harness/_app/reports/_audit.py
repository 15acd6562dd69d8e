"""The ``audit`` command's report: each obligation of one real compaction kept, or what was found."""

from __future__ import annotations

from typing import Any

from harness._base._model import FactKind
from harness._app._outcome import exit_code
from harness._app.judging._audit import Audit
from harness._app.reports._text import clip, printable

__all__ = ["audit_report"]


def audit_report(result: Audit, *, before: str, after: str, obligations: str,
                 unclear: str = "review") -> tuple[str, dict[str, Any]]:
    """The text and JSON report of one audited compaction: each obligation kept, or what was found."""
    case, verdict = result.case, result.verdict
    by_fact: dict[str | None, list] = {}
    for finding in verdict.findings:
        by_fact.setdefault(finding.fact_id, []).append(finding)
    events = sum(1 for f in case.transcript.facts if f.kind in (FactKind.RETRACTION, FactKind.SUPERSESSION))
    given = len(case.transcript.facts) - events
    lines = [f"audit of {printable(after)} against {given} obligations"
             + (f" (and the {events} event(s) that ended some)" if events else "")
             + f" ({printable(before)}: {len(case.transcript.turns)} messages; {printable(obligations)})"]
    for fact in case.transcript.facts:
        found = by_fact.get(fact.id, [])
        status = "live" if fact in case.live else f"ended ({fact.fate.status.value})"
        head = f"{fact.id} {fact.kind} {' | '.join(fact.literals)} [{status}]"
        if not found and fact.id in result.unjudged:
            lines.append(f"  ? {printable(head)}: not judged (none of the selected oracles judges it)")
            continue
        if not found:
            lines.append(f"  ✓ {printable(head)}")
            continue
        mark = "✗" if any(f.severity.value == "violate" for f in found) else (
            "?" if any(f.severity.value == "unclear" for f in found) else "~")
        lines.append(f"  {mark} {printable(head)}")
        for f in found:
            word = f", {f.outcome}" if f.outcome and f.severity.value != "unclear" else ""
            lines.append(f"      {f.invariant} ({f.severity.value}{word}): {printable(clip(f.detail, 200))}")
            if f.found:
                lines.append(f"        found: {printable(clip(f.found, 200))}")
    for f in by_fact.get(None, []):
        lines.append(f"  ✗ {f.invariant} ({f.severity.value}): {printable(clip(f.detail, 200))}")
    # As for a run: violations first (unclear readings too, when told to fail on them); otherwise an
    # obligation nobody judged makes the audit incomplete.
    code = exit_code(violated=bool(verdict.violations or (verdict.unclear and unclear == "fail")),
                     summarizer_failed=False, incomplete=bool(result.unjudged))
    lines.append(f"{len(verdict.violations)} violations, {len(verdict.unclear)} unclear (for review"
                 + ("; they fail this audit" if unclear == "fail" and verdict.unclear else "")
                 + f"), {len(verdict.degradations)} degradations, loss ratio {verdict.loss_ratio:.2f}"
                 + (f"; {len(result.unjudged)} obligation(s) not judged by the selected oracles" if result.unjudged else ""))
    document = {
        "schema_version": 1,
        "before": before, "after": after, "obligations": obligations,
        "kept": [f.id for f in case.transcript.facts if f.id not in by_fact and f.id not in result.unjudged],
        "unjudged": list(result.unjudged),
        "findings": [{"invariant": f.invariant, "severity": f.severity.value, "fact_id": f.fact_id,
                      "fact_kind": f.fact_kind, "detail": f.detail, "expected": f.expected, "found": f.found,
                      "evidence": f.evidence and str(f.evidence), "outcome": f.outcome and str(f.outcome)}
                     for f in verdict.findings],
        "violations": len(verdict.violations),
        "unclear": len(verdict.unclear),
        "degradations": len(verdict.degradations),
        "loss_ratio": verdict.loss_ratio,
        "exit_code": code,
    }
    return "\n".join(lines), document

