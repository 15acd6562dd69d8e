"""Survival of obligations over compaction rounds: per fact kind, how many live ones each round kept.

A session's round ``r`` (0 is the first compaction) counts every obligation
live at its boundary whose kind a selected retention oracle judges (one that
reports a lost obligation, ``Oracle.retention``), and sorts it as
*kept* (no finding about it), *bent* (only a degrade: kept, but coarser),
*unclear* (a reading the oracles could not settle, counted apart: neither kept
nor lost) or *lost* (a violation about it, from that round's result or a
session oracle naming that round). Summed over every session of a run, the share kept per
round is a survival curve: a summarizer that holds up for four compactions
and drops prohibitions from the fifth shows a cliff at round 5.

The x axis is the session's compaction count, not the obligation's age: a
fault that fires on the fifth recompaction then shows as one cliff instead
of being spread over every age.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness._base._errors import SchemaError
from harness._base._kinds import kind_def
from harness._base._model import FactKind, Transcript, live_facts

__all__ = ["Tally", "Survival", "session_survival", "survival_from_dict", "SURVIVAL_VERSION"]

#: The layout of ``Survival.to_dict`` (the JSON report's ``survival``); raised when it changes.
SURVIVAL_VERSION = 1

# A retraction only ends an obligation. A supersession is one too: the value that now holds.
_EVENTS = (FactKind.RETRACTION,)


@dataclass(frozen=True, slots=True)
class Tally:
    """One fact kind in one round: live obligations, and how many were kept, kept but bent, or unclear."""

    live: int = 0
    kept: int = 0
    bent: int = 0
    unclear: int = 0

    @property
    def lost(self) -> int:
        return self.live - self.kept - self.bent - self.unclear

    @property
    def settled(self) -> int:
        """The live obligations the reading settled either way (unclear ones are neither kept nor lost)."""
        return self.live - self.unclear

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.live + other.live, self.kept + other.kept, self.bent + other.bent,
                     self.unclear + other.unclear)


#: One round of one session (or of a whole run): fact kind -> tally, kinds in sorted order.
RoundTally = tuple[tuple[str, Tally], ...]


def session_survival(transcript: Transcript, boundaries: Iterable[int],
                     marks: Mapping[int, Mapping[str, str]], judged: frozenset[str]) -> tuple[RoundTally, ...]:
    """The tallies of one session's rounds.

    ``marks[r][fact_id]`` is ``"lost"``, ``"unclear"`` or ``"bent"`` for the
    obligations round ``r`` broke or could not settle; ``judged`` is the ids of the selected oracles that report a lost
    obligation (``Oracle.retention``): an obligation whose kind none of them judges
    is left out, neither kept nor lost, since no finding about it would not mean
    it was kept.
    """
    out = []
    for r, boundary in enumerate(boundaries):
        counts: dict[str, Tally] = {}
        round_marks = marks.get(r, {})
        for fact in live_facts(transcript, boundary):
            if fact.kind in _EVENTS or not kind_def(fact.kind).judges & judged:
                continue
            mark = round_marks.get(fact.id)
            one = Tally(1, int(mark is None), int(mark == "bent"), int(mark == "unclear"))
            kind = str(fact.kind)
            counts[kind] = counts.get(kind, Tally()) + one
        out.append(tuple(sorted(counts.items())))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Survival:
    """A run's survival counts: ``rounds[r]`` sums round ``r`` over ``sessions[r]`` sessions that reached it."""

    rounds: tuple[RoundTally, ...] = ()
    sessions: tuple[int, ...] = ()

    def add(self, session: tuple[RoundTally, ...]) -> Survival:
        """These counts with one more session's rounds added."""
        rounds, sessions = list(self.rounds), list(self.sessions)
        for r, tally in enumerate(session):
            if r == len(rounds):
                rounds.append(())
                sessions.append(0)
            merged = dict(rounds[r])
            for kind, counts in tally:
                merged[kind] = merged.get(kind, Tally()) + counts
            rounds[r] = tuple(sorted(merged.items()))
            sessions[r] += 1
        return Survival(tuple(rounds), tuple(sessions))

    def merged(self, other: Survival) -> Survival:
        """The counts of both runs' sessions together (the shards of one night)."""
        rounds, sessions = [], []
        for r in range(max(len(self.rounds), len(other.rounds))):
            merged = dict(self.rounds[r]) if r < len(self.rounds) else {}
            for kind, counts in other.rounds[r] if r < len(other.rounds) else ():
                merged[kind] = merged.get(kind, Tally()) + counts
            rounds.append(tuple(sorted(merged.items())))
            sessions.append(sum(s.sessions[r] for s in (self, other) if r < len(s.sessions)))
        return Survival(tuple(rounds), tuple(sessions))

    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted({kind for tally in self.rounds for kind, _ in tally}))

    def tally(self, kind: str, r: int) -> Tally:
        return dict(self.rounds[r]).get(kind, Tally()) if 0 <= r < len(self.rounds) else Tally()

    def share(self, kind: str, r: int) -> float | None:
        """The share of ``kind``'s settled obligations round ``r`` kept (bent ones count as kept; unclear ones
        are left out, neither kept nor lost), or None if none."""
        t = self.tally(kind, r)
        return (t.kept + t.bent) / t.settled if t.settled else None

    def cliff(self, kind: str, threshold: float) -> int | None:
        """The first round (0-based) whose share kept falls below ``threshold``, or None."""
        for r in range(len(self.rounds)):
            share = self.share(kind, r)
            if share is not None and share < threshold:
                return r
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"version": SURVIVAL_VERSION, "sessions_per_round": list(self.sessions),
                "kinds": {kind: [{"live": t.live, "kept": t.kept, "bent": t.bent, "unclear": t.unclear}
                                 for t in (self.tally(kind, r) for r in range(len(self.rounds)))]
                          for kind in self.kinds()}}


def survival_from_dict(data: Any, *, source: str) -> Survival:
    """Read ``Survival.to_dict`` back; every error names ``source`` and the field."""
    if not isinstance(data, dict):
        raise SchemaError("survival", "an object", data, source=source)
    if data.get("version") != SURVIVAL_VERSION:
        raise SchemaError("survival.version", str(SURVIVAL_VERSION), data.get("version"), source=source)
    sessions = data.get("sessions_per_round")
    if not isinstance(sessions, list) or not all(_count(n) for n in sessions):
        raise SchemaError("survival.sessions_per_round", "a list of whole numbers >= 0", sessions, source=source)
    kinds = data.get("kinds")
    if not isinstance(kinds, dict):
        raise SchemaError("survival.kinds", "an object mapping fact kinds to lists of rounds", kinds, source=source)
    rounds: list[dict[str, Tally]] = [{} for _ in sessions]
    for kind, per_round in kinds.items():
        if not isinstance(per_round, list) or len(per_round) != len(sessions):
            raise SchemaError(f"survival.kinds.{kind}", f"a list of {len(sessions)} rounds (one per entry of "
                              f"sessions_per_round)", per_round, source=source)
        for r, item in enumerate(per_round):
            fields = item if isinstance(item, dict) else {}
            values = [fields.get(name, 0 if name == "unclear" else None) for name in ("live", "kept", "bent", "unclear")]
            if not all(_count(v) for v in values) or values[1] + values[2] + values[3] > values[0]:
                raise SchemaError(f"survival.kinds.{kind}[{r}]", "{live, kept, bent, unclear} whole numbers with kept + "
                                  "bent + unclear <= live (unclear may be left out)", item, source=source)
            if values[0]:  # a kind with nothing live in a round is the same as no entry
                rounds[r][kind] = Tally(*values)
    return Survival(tuple(tuple(sorted(r.items())) for r in rounds), tuple(sessions))


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
