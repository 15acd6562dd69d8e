"""Oracles of a runtime's own artefacts: edit journals, recovery markers, consumers' requirements.

They judge what rich protocol 2 lets a result carry (``CompactionResult.journal``,
``.marker``, ``.verified``) and what a session declares (``Transcript.consumers``),
always against the source and the oracles' own verdicts, never the compactor's word.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from harness._base._messages import to_messages
from harness._base._model import Turn
from harness.oracles._core import Case, Evidence, Finding, SessionCase, Severity, oracle


def _first_difference(a: Sequence[Turn], b: Sequence[Turn]) -> str:
    """Where two message lists stop being byte-identical, for a person to look at."""
    left, right = to_messages(tuple(a)), to_messages(tuple(b))
    n = next((i for i, (x, y) in enumerate(zip(left, right)) if x != y), min(len(left), len(right)))
    if n == len(left) == len(right):
        return "identical"
    if n >= len(left) or n >= len(right):
        return f"{len(left)} messages against {len(right)}"
    return f"message {n}: {str(left[n])[:160]!r} against {str(right[n])[:160]!r}"


def _same(a: Sequence[Turn], b: Sequence[Turn]) -> bool:
    return to_messages(tuple(a)) == to_messages(tuple(b))


@oracle("journal-reversible", reference="002")
def journal_reversible(case: Case) -> Iterator[Finding]:
    """An edit journal, applied to what the compaction was given and rolled back, restores it byte-exact."""
    journal = case.result.journal
    if journal is None:
        return
    given = tuple(case.given)
    window = list(given)

    def broken(detail: str, expected: str | None = None, found: str | None = None) -> Finding:
        return Finding("journal-reversible", Severity.VIOLATE, detail, expected=expected, found=found, evidence=Evidence.SHAPE)

    for i, entry in enumerate(journal):
        if entry.removed is None:
            kept = f"only the hash {entry.removed_sha256[:16]}…" if entry.removed_sha256 else "nothing"
            yield broken(f"journal entry {i} records {kept} of the {entry.end - entry.start} message(s) it removed: "
                         "rolling back cannot restore them", expected="the removed messages themselves",
                         found=entry.removed_sha256)
            return
        if entry.end > len(window) or not _same(window[entry.start:entry.end], entry.removed):
            yield broken(f"journal entry {i} says it removed messages {entry.start}..{entry.end - 1}, but what it "
                         f"recorded is not what was there ({_first_difference(window[entry.start:entry.end], entry.removed)})")
            return
        window[entry.start:entry.end] = entry.inserted
    if not _same(window, case.result.messages):
        yield broken("applying the journal to what the compaction was given does not give its result "
                     f"({_first_difference(window, case.result.messages)})")
        return
    for entry in reversed(journal):
        window[entry.start:entry.start + len(entry.inserted)] = entry.removed or ()
    if not _same(window, given):
        yield broken(f"rolling the journal back does not restore the window ({_first_difference(window, given)})")


@oracle("marker-depth", reference="001", scope="session")
def marker_depth(case: SessionCase) -> Iterator[Finding]:
    """A recovery marker is at the framing digest's tier; markers below a deeper re-compaction are not re-emitted."""
    written: dict[str, tuple[int, int]] = {}  # node -> (tier it was written at, round)
    for r, (_, result) in enumerate(case.rounds):
        marker = result.marker
        if marker is None or r >= len(case.requests):
            continue
        tier = case.requests[r].tier
        if marker.tier != tier:
            yield Finding("marker-depth", Severity.VIOLATE,
                          f"compaction {r + 1} wrote a tier-{tier} digest but its marker is at tier {marker.tier}: "
                          "a resume from it would see the wrong level of the task", expected=f"tier {tier}",
                          found=f"tier {marker.tier} (node {marker.node})", round=r, evidence=Evidence.SHAPE)
            return
        at, first = written.setdefault(marker.node, (tier, r))
        if at < tier:
            yield Finding("marker-depth", Severity.VIOLATE,
                          f"compaction {r + 1} (tier {tier}) points its marker at node {marker.node}, written by "
                          f"compaction {first + 1} at tier {at}: the re-compaction to tier {tier} invalidated it",
                          expected=f"a node written at tier {tier}", found=marker.node, round=r, evidence=Evidence.SHAPE)
            return


@oracle("consumer-requirements", reference="000", scope="session")
def consumer_requirements(case: SessionCase) -> Iterator[Finding]:
    """Consumers get only results the oracles verified for them; a result claims no class they refuted."""
    for r, (_, result) in enumerate(case.rounds):
        ok = case.verified[r] if r < len(case.verified) else frozenset()
        refuted = sorted(c for c in result.verified or () if c in case.checked and c not in ok)
        if refuted:
            yield Finding("consumer-requirements", Severity.VIOLATE,
                          f"compaction {r + 1} claims it verified {', '.join(refuted)}, which the oracles found "
                          "violated in that same result", expected="claims only what holds",
                          found=", ".join(result.verified or ()), round=r, evidence=Evidence.SHAPE)
            return
        for consumer in case.transcript.consumers:
            missing = [c for c in consumer.requires if c not in ok]
            if not missing:
                continue
            why = "; ".join(f"{c} {'was violated' if c in case.checked else 'was not checked by any selected oracle'}"
                            for c in missing)
            yield Finding("consumer-requirements", Severity.VIOLATE,
                          f"compaction {r + 1}'s result would reach consumer {consumer.name!r}, which requires "
                          f"{', '.join(consumer.requires)}: {why}", expected=", ".join(consumer.requires),
                          found=", ".join(sorted(ok & set(consumer.requires))) or None, round=r, evidence=Evidence.SHAPE)
            return
