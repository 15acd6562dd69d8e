"""Judging one session: stream a transcript through a summarizer, check every round and the whole.

The one session judge: the CLI's runner, replay, the pytest plugin and
``assert_compaction_holds`` all call ``judge_session``, so a team's ``@given``
test and the nightly run reach the same verdict on the same transcript.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness._base._dialects import DEFAULT_DIALECT
from harness._base._errors import InfraError
from harness._base._model import Transcript, Turn
from harness._base._protocol import CompactionRequest, CompactionResult
from harness._base._result_codec import result_to_dict
from harness._base._tokens import TokenCounter, count_tokens
from harness._app.judging._session import SessionConfig, run_session
from harness._app.judging._survival import RoundTally, session_survival
from harness.oracles import DEFAULT_RULES, Case, Finding, Oracle, ProseRules, SessionCase, Severity, check, check_session, select

__all__ = ["StopJudging", "Violation", "Degraded", "Evaluation", "judge_session", "evidence_of"]


class StopJudging(BaseException):
    """Raised by a summarize wrapper to end a session early (a spent budget, an interrupt).

    A ``BaseException``, so it passes through Hypothesis and summarizer code untouched.
    """


#: One violation as first seen: the finding, the round index, the boundary and the context returned.
Violation = tuple[Finding, int | None, int | None, dict[str, Any] | None]

#: One degrade finding (honest but coarser) as seen: the finding, the round index and the boundary (both None
#: for a session finding tied to no round). Reported one by one, never shrunk.
Degraded = tuple[Finding, int | None, int | None]


@dataclass
class Evaluation:
    """What one transcript's session showed: the first violation per (invariant, fact kind), and where.

    Rounds judged before the summarizer failed keep their findings: a later
    error never hides an earlier violation.
    """

    violations: dict[tuple[str, str | None], Violation] = field(default_factory=dict)
    # Later violations of an (invariant, fact kind) already seen, on another fact with other evidence: another
    # root cause the first would hide (a compactor that drops old turns and rewrites identifiers in those it
    # keeps), the first per (invariant, fact kind, evidence). Not kept when judging stops at ``until``.
    more: dict[tuple[str, str | None, str | None], Violation] = field(default_factory=dict)
    degraded: list[Degraded] = field(default_factory=list)
    # Readings the oracles could not settle, the first per (invariant, fact kind, why), with how often each
    # showed: for a person to review, never a violation (shrinking does not chase them).
    unclear: dict[tuple[str, str | None, str | None], Violation] = field(default_factory=dict)
    unclear_counts: dict[tuple[str, str | None, str | None], int] = field(default_factory=dict)
    infra: InfraError | None = None
    boundaries: tuple[int, ...] = ()
    # Per round: whether a planned cut forced it (else the trigger fired it), the context's tokens then, and
    # the budget it was given (lower after a tightening).
    planned: tuple[bool, ...] = ()
    sizes: tuple[int, ...] = ()
    budgets: tuple[int, ...] = ()
    stopped: bool = False  # StopJudging ended the session before its end
    # Per violation, the messages the round that showed it was given (its carried context and new turns),
    # those the round before it was given (a session finding may need both rounds), and the last round
    # whose request still held the turn stating the failing fact, with that request (a loss may show
    # rounds after the compaction that dropped it: an effect runs later).
    contexts: dict[tuple[str, str | None], tuple[Turn, ...]] = field(default_factory=dict)
    prior: dict[tuple[str, str | None], tuple[Turn, ...]] = field(default_factory=dict)
    holding: dict[tuple[str, str | None], tuple[int, tuple[Turn, ...]]] = field(default_factory=dict)
    # What the last round judged returned: where a window ended when no violation showed (shrinking
    # steers its budget search by which of the failure's turns it still held).
    last_messages: tuple[Turn, ...] = ()
    # Per round, per fact kind: live obligations kept, bent, lost (``harness._app.judging._survival``); not computed
    # when judging stops at a given violation (``until``).
    survival: tuple[RoundTally, ...] = ()

    @property
    def degradations(self) -> list[str]:
        """The invariant of each degrade finding, as a run counts them."""
        return [finding.invariant for finding, _, _ in self.degraded]

    def shown(self, key: tuple[str, str | None], evidence: str | None = None) -> Violation | None:
        """The violation of ``key`` (with ``evidence``, when given: the first one resting on it)."""
        held = self.violations.get(key)
        if held is None or evidence is None or evidence_of(held[0]) == evidence:
            return held
        return self.more.get((*key, evidence))

    def describe(self) -> list[str]:
        """One readable line per violation."""
        lines = []
        for (invariant, kind), (finding, rnd, boundary, _) in self.violations.items():
            where = f"compaction {rnd + 1} (after turn {boundary})" if rnd is not None else "session"
            lines.append(f"{where}: {invariant} [{kind or 'structure'}{', ' + str(finding.outcome) if finding.outcome else ''}] "
                         f"{finding.detail}"
                         + (f"; expected {finding.expected!r}" if finding.expected else "")
                         + (f"; context had {finding.found!r}" if finding.found else ""))
        return lines


def evidence_of(finding: Finding) -> str | None:
    """What a finding rests on, as text (None for a finding without evidence)."""
    return None if finding.evidence is None else str(finding.evidence)


#: Asks a session's requests again (the cache bypassed, in a restarted worker): one result per request
#: (None: not asked), or ``InfraError`` when the summarizer failed to answer.
AskAgain = Callable[[Sequence[CompactionRequest]], Sequence[CompactionResult | None]]


def judge_session(transcript: Transcript, summarize: Callable[[CompactionRequest], CompactionResult], *,
                  budget: int, trigger: float = 0.8, count_tokens: TokenCounter = count_tokens,
                  rules: ProseRules = DEFAULT_RULES, oracles: Iterable[Oracle] | None = None,
                  until: tuple[str, str | None] | None = None, ask_again: AskAgain | None = None,
                  may_vary: bool = False, dialect: str = DEFAULT_DIALECT, planned_cuts: bool = True,
                  tighten: bool = True, until_evidence: str | None = None) -> Evaluation:
    """Run one session and judge every round it completed, plus the session as a whole.

    ``summarize`` may raise ``InfraError`` (recorded in ``infra``; earlier rounds
    are still judged) or ``StopJudging`` (recorded in ``stopped``). With ``until``
    (an (invariant, fact kind) key, as shrinking asks "does it still fail?"), each
    round is judged as it completes and the session stops at the first that shows
    that violation (resting on ``until_evidence``, when given: a root cause another of
    the same key would hide): the rounds after it cost calls and judging and cannot undo it.
    With ``ask_again`` (and the ``deterministic`` oracle selected), every round's
    request is asked a second time once the session is over; ``may_vary`` makes
    a different answer a note instead of a violation. ``planned_cuts`` and ``tighten`` off run the
    session as a team's runtime runs it (``SessionConfig``). ``consumer-requirements``
    judges what the per-result oracles verified, so when it is selected every
    registered per-result oracle judges each round; only the selected ones' own
    findings are reported.
    """
    chosen = tuple(select() if oracles is None else oracles)
    ev = Evaluation()
    session = SessionConfig(budget=budget, trigger=trigger, count_tokens=count_tokens, dialect=dialect,
                            use_compaction_points=planned_cuts, tighten=tighten)
    session_scope = {o.id for o in chosen if o.scope == "session"}
    reported = {o.id for o in chosen}
    verifiers = chosen
    if "consumer-requirements" in session_scope:
        verifiers = chosen + tuple(o for o in select() if o.scope == "compaction" and o.id not in reported)
    compaction_scope = frozenset(o.id for o in verifiers if o.scope == "compaction")
    early = until is not None and until[0] not in session_scope
    rounds = []
    verified: dict[int, frozenset[str]] = {}
    marks: dict[int, dict[str, str]] = {}  # round -> fact id -> "lost" | "bent", for the survival counts

    def mark(index: int, finding: Finding) -> None:
        if finding.fact_id is not None:
            held = marks.setdefault(index, {})
            held[finding.fact_id] = _worse(held.get(finding.fact_id), _MARKS[finding.severity])

    def note_unclear(finding: Finding, rnd) -> None:
        key = (finding.invariant, finding.fact_kind, finding.evidence and str(finding.evidence))
        ev.unclear_counts[key] = ev.unclear_counts.get(key, 0) + 1
        if key not in ev.unclear:
            ev.unclear[key] = (finding, None, None, None) if rnd is None else (
                finding, rnd.index, rnd.boundary, result_to_dict(rnd.result))

    def judge(rnd) -> bool:
        verdict = check(Case(transcript, rnd.boundary, rnd.request.budget, rnd.result, rules=rules,
                             count_tokens=count_tokens, request=rnd.request), verifiers)
        # Verified means the oracle found nothing at all: a degrade says the class does not fully hold.
        verified[rnd.index] = compaction_scope - {f.invariant for f in verdict.findings}
        for finding in verdict.findings:
            if finding.invariant not in reported:
                continue
            mark(rnd.index, finding)
            if finding.severity is Severity.DEGRADE:
                ev.degraded.append((finding, rnd.index, rnd.boundary))
                continue
            if finding.severity is Severity.UNCLEAR:
                if not early:
                    note_unclear(finding, rnd)
                continue
            key = (finding.invariant, finding.fact_kind)
            if key not in ev.violations:
                ev.violations[key] = (finding, rnd.index, rnd.boundary, result_to_dict(rnd.result))
                _remember_requests(ev, key, rounds, rnd.index, transcript, finding)
            elif not early or until_evidence is not None:
                _another_cause(ev, key, (finding, rnd.index, rnd.boundary, result_to_dict(rnd.result)))
        return early and ev.shown(until, until_evidence) is not None

    def on_round(rnd) -> bool:
        rounds.append(rnd)
        return judge(rnd) if early else False

    try:
        run_session(transcript, summarize, session, on_round=on_round)
    except InfraError as exc:
        ev.infra = exc
    except StopJudging:
        ev.stopped = True
    ev.boundaries = tuple(r.boundary for r in rounds)
    ev.planned = tuple(r.planned for r in rounds)
    ev.sizes = tuple(r.tokens for r in rounds)
    ev.budgets = tuple(r.request.budget for r in rounds)
    ev.last_messages = rounds[-1].result.messages if rounds else ()
    if early:
        return ev
    for rnd in rounds:
        judge(rnd)
    again: tuple[CompactionResult | None, ...] = ()
    if ask_again is not None and "deterministic" in session_scope and rounds and not ev.stopped:
        try:
            again = tuple(ask_again([r.request for r in rounds]))
        except StopJudging:
            ev.stopped = True
        except InfraError as exc:  # a second answer that failed, or a second instance that did not start: reported
            ev.infra = ev.infra or exc
    session_case = SessionCase(transcript, budget, tuple((r.boundary, r.result) for r in rounds), count_tokens,
                               requests=tuple(r.request for r in rounds), checked=compaction_scope,
                               verified=tuple(verified[r.index] for r in rounds), again=again, may_vary=may_vary,
                               rules=rules)
    for finding in check_session(session_case, chosen):
        if finding.round is not None and 0 <= finding.round < len(rounds):
            mark(finding.round, finding)
        rnd = rounds[finding.round] if finding.round is not None and 0 <= finding.round < len(rounds) else None
        if finding.severity is Severity.DEGRADE:
            ev.degraded.append((finding, None, None) if rnd is None else (finding, rnd.index, rnd.boundary))
            continue
        if finding.severity is Severity.UNCLEAR:
            note_unclear(finding, rnd)
            continue
        key = (finding.invariant, finding.fact_kind)
        if key in ev.violations:
            _another_cause(ev, key, (finding, None, None, None) if rnd is None else
                           (finding, rnd.index, rnd.boundary, result_to_dict(rnd.result)))
            continue
        if rnd is None:
            ev.violations[key] = (finding, None, None, None)
        else:
            ev.violations[key] = (finding, rnd.index, rnd.boundary, result_to_dict(rnd.result))
            _remember_requests(ev, key, rounds, rnd.index, transcript, finding)
    ev.survival = session_survival(transcript, ev.boundaries, marks, frozenset(o.id for o in chosen if o.retention))
    return ev


def _another_cause(ev: Evaluation, key: tuple[str, str | None], violation: Violation) -> None:
    """Keep a later violation of ``key`` that is about another fact and rests on other evidence than the first:
    it may be another root cause (``Evaluation.more``)."""
    first, finding = ev.violations[key][0], violation[0]
    evidence = evidence_of(finding)
    if evidence is not None and evidence != evidence_of(first) and finding.fact_id != first.fact_id:
        ev.more.setdefault((*key, evidence), violation)


# What a finding makes of its obligation in the survival counts; a worse one wins over a milder one.
_MARKS = {Severity.VIOLATE: "lost", Severity.UNCLEAR: "unclear", Severity.DEGRADE: "bent"}
_ORDER = ("bent", "unclear", "lost")


def _worse(held: str | None, new: str) -> str:
    return new if held is None or _ORDER.index(new) > _ORDER.index(held) else held


def _remember_requests(ev: Evaluation, key: tuple[str, str | None], rounds: list, index: int,
                       transcript: Transcript, finding: Finding) -> None:
    """The messages the failing round was given, those the round before it was given, and the last
    request that held the turn stating the failing fact."""
    ev.contexts[key] = rounds[index].request.turns
    if index > 0:
        ev.prior[key] = rounds[index - 1].request.turns
    fact = next((f for f in transcript.facts if f.id == finding.fact_id), None)
    if fact is not None:
        stated = transcript.turns[fact.origin_turn]
        held = next((k for k in range(index, -1, -1) if stated in rounds[k].request.turns), None)
        if held is not None:
            ev.holding[key] = (held, rounds[held].request.turns)
