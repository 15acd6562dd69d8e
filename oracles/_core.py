"""The compaction case oracles judge, the oracle registry and ``check`` (findings are ``_findings``).

An oracle is a pure function ``(case) -> iterable of Finding``: no I/O, no
randomness, no state. The preservation set always comes from the source
ledger (``case.live``), never from the summary or its self-report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from harness._base._errors import HarnessError, InvalidArgument, SpecError, did_you_mean
from harness._base._model import Fact, Transcript, live_facts
from harness._base._protocol import CompactionRequest, CompactionResult
from harness._base._tokens import TokenCounter, context_tokens, count_tokens
from harness.oracles._context import Context
from harness.oracles._rules import DEFAULT_RULES, ProseRules
from harness.oracles._findings import Evidence, Finding, Outcome, Severity, outcome_of
from harness.oracles._against_source import against_source

__all__ = [
    "Severity",
    "Evidence",
    "Outcome",
    "outcome_of",
    "Finding",
    "Case",
    "Oracle",
    "Verdict",
    "oracle",
    "registered",
    "select",
    "check",
    "unregister",
    "SessionCase",
    "check_session",
]


@dataclass(frozen=True)
class Case:
    """One compaction to judge: the source transcript, the boundary, the budget and the result.

    The summarizer was given turns ``0..boundary-1``; ``live`` is the source
    ledger at that point, computed here, never taken from the result.
    ``request`` is what the summarizer was asked in a session (the previous
    summary plus the turns since, and the round's tier); None for a single
    compaction of the window.
    """

    transcript: Transcript
    boundary: int
    budget: int
    result: CompactionResult
    rules: ProseRules = DEFAULT_RULES
    count_tokens: TokenCounter = count_tokens
    request: CompactionRequest | None = None
    live: tuple[Fact, ...] = field(init=False)
    context: Context = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "live", live_facts(self.transcript, self.boundary))
        literals = frozenset(lit for f in self.transcript.facts for lit in f.literals)
        object.__setattr__(self, "context", Context(self.result, self.rules, literals, self.window))

    @property
    def window(self):
        return self.transcript.turns[: self.boundary]

    @property
    def dialect(self) -> str:
        """The provider shape the context goes to (``--dialect``): the request's, else chat."""
        return self.request.dialect if self.request is not None else "chat"

    @property
    def given(self) -> tuple:
        """The messages the summarizer was given: the request's, or the window of a single compaction."""
        return self.request.turns if self.request is not None else self.window

    def context_tokens(self) -> int:
        """The context's size, counted exactly as the session runner counts it (``harness`` token rules)."""
        return self._counted("context", lambda: context_tokens(self.result.messages, self.result.ledger, self.count_tokens))

    def source_tokens(self) -> int:
        return self._counted("source", lambda: context_tokens(self.window, None, self.count_tokens))

    def _counted(self, what: str, count: Callable[[], int]) -> int:
        # Several oracles and the verdict ask; a long context is counted once per case.
        counts = self.__dict__.setdefault("_counts", {})
        if what not in counts:
            counts[what] = count()
        return counts[what]


_ID = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True, slots=True)
class Oracle:
    """A registered invariant check: stable kebab-case id, what it checks, where it comes from."""

    id: str
    check: Callable[[Case], Iterable[Finding]]
    summary: str
    reference: str
    severity: Severity = Severity.VIOLATE
    scope: str = "compaction"  # or "session": judged once over all of a session's rounds
    # It reports every live obligation of the kinds it judges that a context lost, not only one bent in some
    # way: survival curves count a kind only when such an oracle is selected (no finding then means kept).
    retention: bool = False


# The registry is the one module-level mutable thing: teams add their own oracles to it.
_REGISTRY: dict[str, Oracle] = {}


def oracle(id: str, *, reference: str, severity: Severity = Severity.VIOLATE, replace: bool = False,
           scope: str = "compaction", retention: bool = False):
    """Register a function ``(case) -> iterable of Finding`` as the oracle ``id``.

    With ``scope="session"`` the function takes a ``SessionCase`` instead and is
    judged once per session. ``retention=True`` says it reports every live
    obligation of its kinds that the context lost (not only ones bent in some
    way), so survival curves may count "no finding" as kept. The docstring's
    first line becomes the summary.
    """
    if scope not in ("compaction", "session"):
        raise InvalidArgument(f"scope={scope!r}: expected 'compaction' or 'session'")
    if not isinstance(id, str) or not _ID.match(id):
        raise InvalidArgument(f"oracle id {id!r} must be kebab-case, like 'literal-verbatim'")

    def register(fn: Callable[[Case], Iterable[Finding]]):
        if id in _REGISTRY and not replace:
            raise InvalidArgument(f"an oracle with id {id!r} is already registered; pass replace=True to override it")
        summary = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else id
        _REGISTRY[id] = Oracle(id, fn, summary, reference, severity, scope, retention)
        return fn

    return register


def unregister(id: str) -> None:
    """Remove a registered oracle (for a team's tests that register temporary ones)."""
    _REGISTRY.pop(id, None)


def registered() -> tuple[Oracle, ...]:
    return tuple(_REGISTRY.values())


def select(*, only: Iterable[str] | None = None, skip: Iterable[str] | None = None) -> tuple[Oracle, ...]:
    """The registered oracles filtered by id; unknown ids are an error naming them."""
    only_ids = list(only) if only is not None else None
    skip_ids = list(skip or ())
    unknown = sorted((set(only_ids or ()) | set(skip_ids)) - set(_REGISTRY))
    if unknown:
        near = "".join(did_you_mean(u, _REGISTRY) for u in unknown)
        raise InvalidArgument(f"unknown oracle id(s) {unknown}{near}; known: {sorted(_REGISTRY)} (a team's own oracle "
                              "is registered by the module passed with --extend)")
    chosen = [o for o in _REGISTRY.values() if only_ids is None or o.id in only_ids]
    return tuple(o for o in chosen if o.id not in skip_ids)


@dataclass(frozen=True, slots=True)
class Verdict:
    """All findings for one compaction (violations, degradations, unclear readings), plus how much of the
    source the context dropped."""

    findings: tuple[Finding, ...]
    loss_ratio: float

    @property
    def violations(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is Severity.VIOLATE)

    @property
    def degradations(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is Severity.DEGRADE)

    @property
    def unclear(self) -> tuple[Finding, ...]:
        """Readings the oracles could not settle: shown for review, not violations."""
        return tuple(f for f in self.findings if f.severity is Severity.UNCLEAR)


def check(case: Case, oracles: Iterable[Oracle] | None = None) -> Verdict:
    """Run the compaction-scope oracles (all registered ones by default) on a case."""
    chosen = [o for o in (registered() if oracles is None else oracles) if o.scope == "compaction"]
    findings = against_source(case, [finding for o in chosen for finding in _run_oracle(o, case)])
    source = case.source_tokens()
    loss = 0.0 if source == 0 else max(0.0, 1.0 - case.context_tokens() / source)
    return Verdict(tuple(findings), round(loss, 4))


@dataclass(frozen=True)
class SessionCase:
    """A whole session: the source, the budget, and each round's (boundary, result).

    Per round, where the session judge knows them: ``requests`` (what the
    summarizer was asked), ``verified`` (the ids of the compaction oracles that
    ran on it and found no violation: what the harness verified, never what the
    compactor claims; ``checked`` are those that ran) and ``again`` (the same request asked again, the cache
    bypassed, in a restarted worker; None where it was not asked).
    ``may_vary``: the team marked its summarizer as allowed to answer differently.
    """

    transcript: Transcript
    budget: int
    rounds: tuple[tuple[int, CompactionResult], ...]
    count_tokens: TokenCounter = count_tokens
    requests: tuple[CompactionRequest, ...] = ()
    checked: frozenset[str] = frozenset()  # the compaction oracles that judged each round
    verified: tuple[frozenset[str], ...] = ()
    again: tuple[CompactionResult | None, ...] = ()
    may_vary: bool = False
    rules: ProseRules = DEFAULT_RULES


def check_session(case: SessionCase, oracles: Iterable[Oracle] | None = None) -> tuple[Finding, ...]:
    """Run the session-scope oracles on a session."""
    chosen = [o for o in (registered() if oracles is None else oracles) if o.scope == "session"]
    return tuple(finding for o in chosen for finding in _run_oracle(o, case))


def _run_oracle(o: Oracle, case: Case | SessionCase) -> list[Finding]:
    """An oracle's findings; one that raises or yields something else is a ``SpecError`` naming it."""
    try:
        findings = list(o.check(case) or ())
    except HarnessError:
        raise
    except Exception as exc:  # a team's oracle with a bug: name it, never blame the summarizer
        raise SpecError(f"oracle {o.id!r} raised {type(exc).__name__}: {exc}") from exc
    bad = next((f for f in findings if not isinstance(f, Finding)), None)
    if bad is not None:
        raise SpecError(f"oracle {o.id!r} yielded {bad!r}; expected oracles.Finding objects")
    return findings
