"""Audit one real compaction: the messages before, the context after, and the obligations they carried.

Teams run it on compactions from their production logs; the labelled phrasing
benchmark runs every row through it. The obligations file is small JSON a
person writes (or a runtime exports)::

    {"schema_version": 1,
     "obligations": [
       {"kind": "prohibition", "literals": ["s3://billing-exports-12/"], "polarity": "forbid"},
       {"kind": "threshold", "literals": ["max_retries", "3"], "details": {"operator": "<="}},
       {"kind": "literal_binding", "literals": ["6.24.1"], "origin_turn": 2,
        "fate": {"status": "superseded", "turn": 5, "replacement": "6.25.0"}}]}

``id`` defaults to ``O1``, ``O2``...; ``origin_turn`` to 0; ``polarity`` to the
kind's own; a threshold's or gating field's ``field``/``value`` details to its
literals. An obligation that ended (retracted, superseded) brings the event
fact that ended it, as the generated ledgers do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._base._errors import InvalidArgument, MalformedResult, SchemaError
from harness._base._files import DEFAULT_MAX_FILE_MB, read_json_file
from harness._base._kinds import THRESHOLD_OPERATORS, ending_event, kind_def, read_kind
from harness._base._model import Fact, FactKind, Fate, Polarity, Role, Status, Transcript, Turn
from harness._base._protocol import CompactionResult
from harness._base._result_codec import result_from_dict, result_from_return
from harness._base._schema import Reader
from harness._base._tokens import TokenCounter, count_tokens
from harness.oracles import DEFAULT_RULES, Case, Oracle, ProseRules, Verdict, check, select

__all__ = ["AUDIT_VERSION", "UNLIMITED_BUDGET", "Audit", "obligations_from_dict", "turns_from_messages",
           "context_from_json", "audit", "audit_files"]

AUDIT_VERSION = 1
# Without --budget the budget oracles have nothing to hold the context to: they never fire.
UNLIMITED_BUDGET = 10**12


@dataclass(frozen=True)
class Audit:
    """What was judged, the verdict, and the obligations no selected oracle judges (``unjudged``)."""

    case: Case
    verdict: Verdict
    unjudged: tuple[str, ...] = ()


_OBLIGATION_FIELDS = ("id", "kind", "literals", "polarity", "details", "origin_turn", "fate")
_FATE_FIELDS = ("status", "turn", "replacement")


def _obligation(r: Reader, index: int, turns: int) -> list[Fact]:
    r.only(*_OBLIGATION_FIELDS)
    kind = read_kind(r)
    definition = kind_def(kind)
    literals = r.str_list("literals", nonempty_items=True)
    if len(literals) != definition.literal_count:
        r.fail("literals", f"{definition.literal_count} literal(s) for a {definition.name}", list(literals))
    polarity = definition.polarity
    if r.optional_str("polarity") is not None:
        polarity = r.enum("polarity", Polarity)
    details = r.str_map("details")
    if kind == FactKind.THRESHOLD and details.get("operator") not in THRESHOLD_OPERATORS:
        r.fail("details.operator", f"one of {', '.join(THRESHOLD_OPERATORS)} (a threshold needs its operator)",
               details.get("operator", "nothing"))
    if len(literals) == 2 and definition.literal_count == 2:  # a field and its value
        details.setdefault("field", literals[0])
        details.setdefault("value", literals[1])
    origin = r.int("origin_turn", default=0, minimum=0)
    if origin >= turns:
        r.fail("origin_turn", f"a turn of the 'before' messages (0..{turns - 1})", origin)
    fate, replacement = Fate(), None
    fate_r = r.child("fate", optional=True)
    if fate_r is not None:
        fate_r.only(*_FATE_FIELDS)
        status = fate_r.enum("status", Status)
        if status is not Status.OPEN:
            turn = fate_r.int("turn", minimum=origin)
            if turn >= turns:
                fate_r.fail("turn", f"a turn of the 'before' messages ({origin}..{turns - 1})", turn)
            if status not in definition.fates:
                fate_r.fail("status", f"a fate a {definition.name} can have ({', '.join(definition.fates)})",
                            status.value)
            if status is Status.SUPERSEDED:
                replacement = fate_r.str("replacement", nonempty=True)
            fate = Fate(status, turn)
    fact = r.wrap(Fact, r.str("id", default=f"O{index + 1}", nonempty=True), kind, literals, origin, polarity, fate,
                  tuple(sorted(details.items())))
    event = ending_event(fact, replacement)
    return [fact] + ([event] if event is not None else [])


def _consistent(r: Reader, fact: Fact, said: str, answers: dict[str, int]) -> None:
    """The obligation agrees with the messages: its literal is in them, and an open call has no result."""
    if fact.literals[0] not in said:
        r.fail("literals", "a literal that appears in the 'before' messages", fact.literals[0])
    if fact.kind == FactKind.IN_FLIGHT_CALL and fact.fate.status is Status.OPEN:
        answer = answers.get(fact.literals[0])
        if answer is not None:
            r.fail("fate", f"status 'resolved' with turn {answer} (message {answer} is the result of "
                           f"{fact.literals[0]})", "an open call")


def obligations_from_dict(data: Any, *, turns: tuple[Turn, ...], source: str = "<obligations>"
                          ) -> tuple[Fact, ...]:
    """The facts an obligations document describes; ``SchemaError`` naming the file and field otherwise.

    Each obligation is also checked against the ``turns`` it came from: a literal they never
    mention, or a call "in flight" whose result is among them, would make every verdict wrong.
    """
    r = Reader(data, source=source)
    r.only("schema_version", "obligations")
    version = r.int("schema_version", default=AUDIT_VERSION)
    if version != AUDIT_VERSION:
        r.fail("schema_version", f"{AUDIT_VERSION}", version)
    readers = r.children("obligations")
    if not readers:
        r.fail("obligations", "at least one obligation", [])
    # read once: a file of thousands of obligations stays linear
    said = "\n".join(t.text + "".join(f"\n{c.id} {c.name} {c.arguments}" for c in t.tool_calls) for t in turns)
    answers = {t.tool_call_id: i for i, t in reversed(list(enumerate(turns))) if t.tool_call_id}
    facts = []
    for i, o in enumerate(readers):
        judged = _obligation(o, i, len(turns))
        _consistent(o, judged[0], said, answers)
        facts.extend(judged)
    seen: set[str] = set()
    duplicate = next((f.id for f in facts if f.id in seen or seen.add(f.id)), None)
    if duplicate is not None:
        raise SchemaError("obligations", "unique ids", duplicate, source=source)
    return tuple(facts)


def turns_from_messages(data: Any, *, source: str) -> tuple[Turn, ...]:
    """Chat messages (``role``/``content``/``tool_calls``/``tool_call_id``) as turns."""
    if isinstance(data, dict) and "messages" in data:
        data = data["messages"]
    if not isinstance(data, list) or not data:
        raise SchemaError("<root>", "a non-empty list of chat messages (or {\"messages\": [...]})", data, source=source)
    try:
        return result_from_return(data).messages
    except MalformedResult as exc:
        raise SchemaError.from_malformed(exc, source=source) from None


def context_from_json(data: Any, *, source: str) -> CompactionResult:
    """The context after: a string, a list of messages, or ``{"messages": [...], "ledger": [...]}``.

    Any other JSON object is the summary itself, as a compactor that answers in JSON writes it.
    """
    if isinstance(data, dict) and "messages" not in data:
        return CompactionResult((Turn(Role.SYSTEM, json.dumps(data, indent=2, ensure_ascii=False)),))
    if not isinstance(data, dict | str | list):
        raise SchemaError("<root>", 'a context: a string, a list of chat messages, or {"messages": [...], '
                          '"ledger": [...]}', data, source=source)
    try:
        if isinstance(data, dict):
            return result_from_dict(data)
        if isinstance(data, str):
            return result_from_return(data)
        return result_from_return(turns_from_messages(data, source=source))
    except MalformedResult as exc:
        raise SchemaError.from_malformed(exc, source=source) from None


def audit(before: tuple[Turn, ...], after: CompactionResult, facts: Iterable[Fact], *,
          budget: int = UNLIMITED_BUDGET, rules: ProseRules = DEFAULT_RULES,
          counter: TokenCounter = count_tokens, oracles: Iterable[Oracle] | None = None) -> Audit:
    """Judge one compaction of ``before`` into ``after`` against ``facts``, with the compaction oracles."""
    if budget < 1:
        raise InvalidArgument(f"budget={budget!r}: expected a positive number of tokens")
    transcript = Transcript(tuple(before), tuple(facts), (len(before),))
    case = Case(transcript, len(before), budget, after, rules=rules, count_tokens=counter)
    chosen = tuple(select() if oracles is None else oracles)
    return Audit(case, check(case, chosen), _unjudged(case, {o.id for o in chosen}))


def _unjudged(case: Case, selected: set[str]) -> tuple[str, ...]:
    """The obligations given (not the events derived from them) that none of ``selected`` judges.

    A live one is judged by its kind's oracles (``KindDef.judges``); one that ended before the
    compaction by ``dead-obligation``, or ``supersession`` when it was replaced.
    """
    out = []
    for fact in case.transcript.facts:
        if fact.kind in (FactKind.RETRACTION, FactKind.SUPERSESSION):
            continue
        if fact in case.live:
            judges = kind_def(fact.kind).judges
        else:
            judges = {"supersession"} if fact.fate.status is Status.SUPERSEDED else {"dead-obligation"}
        if not judges & selected:
            out.append(fact.id)
    return tuple(out)


def audit_files(before: str | Path, after: str | Path, obligations: str | Path, *,
                max_file_mb: float = DEFAULT_MAX_FILE_MB, **options: Any) -> Audit:
    """``audit`` on three JSON files; every error names the file and the field."""
    turns = turns_from_messages(read_json_file(before, max_mb=max_file_mb), source=str(before))
    context = context_from_json(read_json_file(after, max_mb=max_file_mb), source=str(after))
    facts = obligations_from_dict(read_json_file(obligations, max_mb=max_file_mb), turns=turns,
                                  source=str(obligations))
    return audit(turns, context, facts, **options)
