"""MkDocs hook: the reference pages that must never drift from the code are written at build time.

A page asks for a generated section with a marker line, ``<!-- generated: NAME -->``; the hook replaces it
with the Markdown that ``SECTIONS[NAME]`` returns, drawn from the code itself:

- ``cli``: every command of ``compaction-harness`` and every option of each, from the argparse parsers;
- ``exit-codes``: the exit codes, from ``ExitCode`` and the comment beside each member;
- ``oracles``: the oracle catalogue, from the registry (id, scope, severity, reference, docstring, and the
  bundled mutant built to break each);
- ``kinds``: every built-in fact kind, from its ``KindDef`` (literals, polarity, fates, the detail keys a
  generated fact carries, the ones a correct ledger keeps, and the sentence the correct compactors write).

A marker that names no section fails the build, and so does a page that keeps a marker unreplaced. The
functions are plain (no MkDocs import), so the tests call them too.
"""

from __future__ import annotations

import argparse
import inspect
import io
import re
import tokenize
from collections.abc import Callable

_MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    # Braces escaped too: attr_list would read a trailing {...} (an option's JSON example) as attributes.
    return " ".join(str(text).split()).replace("|", "\\|").replace("{", "\\{").replace("}", "\\}")


# -- the command line ---------------------------------------------------------------------------

def _commands(parser: argparse.ArgumentParser, prefix: str) -> list[tuple[str, argparse.ArgumentParser, str]]:
    """(full command, parser, one-line help) for every command and nested action, depth first."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((f"{prefix} {name}", sub, helps.get(name) or ""))
                found.extend(_commands(sub, f"{prefix} {name}"))
    return found


def _option_rows(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)):
            continue
        invocation = formatter._format_action_invocation(action)
        meaning = formatter._expand_help(action) if action.help else ""
        if action.required and action.option_strings:
            meaning = f"required. {meaning}"
        if action.option_strings and isinstance(action, argparse._AppendAction):
            meaning = f"{meaning} (may be given more than once)" if "repeatable" not in meaning else meaning
        rows.append((invocation, meaning))
    return rows


def cli_reference() -> str:
    """Every command, its usage and a table of its arguments and options, from the parsers."""
    from harness._app.cli._parser import build_parser

    root = build_parser()
    out = []
    for command, parser, summary in [("compaction-harness", root, root.description or ""),
                                     *_commands(root, "compaction-harness")]:
        out.append(f"### `{command}`\n")
        if summary:
            sentence = summary[0].upper() + summary[1:]
            out.append(sentence + ("" if sentence.endswith(("?", ".")) else ".") + "\n")
        usage = parser.format_usage().strip()
        out.append(f"```text\n{usage}\n```\n")
        rows = _option_rows(parser)
        if rows:
            out.append("| argument or option | meaning |\n| --- | --- |")
            out.extend(f"| `{_cell(inv)}` | {_cell(meaning)} |" for inv, meaning in rows)
            out.append("")
    return "\n".join(out)


def exit_codes() -> str:
    """The exit code table, from ``ExitCode`` and the comment that explains each member."""
    from harness._app import _outcome

    comments: dict[str, str] = {}
    source = inspect.getsource(_outcome.ExitCode)
    name = None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.start[1] == 4 and name is None:
            name = tok.string
        elif tok.type == tokenize.COMMENT and name:
            comments[name] = tok.string.lstrip("# ")
        elif tok.type == tokenize.NEWLINE:
            name = None
    lines = ["| code | when |", "| --- | --- |"]
    for code in _outcome.ExitCode:
        lines.append(f"| **{int(code)}** ({code.name.lower()}) | {_cell(comments.get(code.name, ''))} |")
    return "\n".join(lines) + "\n"


# -- the oracle catalogue -----------------------------------------------------------------------

def oracle_catalogue() -> str:
    """One section per registered oracle: what it checks (its docstring), its scope, severity and
    reference, whether it is a retention oracle, and the mutant built to break it."""
    from harness import oracles
    from harness.summarizers import mutants

    breakers = {**mutants.MUTANTS, **mutants.SESSION_MUTANTS}
    registered = oracles.registered()
    out = ["| id | scope | severity | reference | checks |", "| --- | --- | --- | --- | --- |"]
    for o in registered:
        out.append(f"| [`{o.id}`](#{o.id}) | {o.scope} | {o.severity.value} | {_cell(o.reference)} | {_cell(o.summary)} |")
    out.append("")
    for o in registered:
        out.append(f"## `{o.id}` {{#{o.id}}}\n")
        doc = inspect.getdoc(o.check) or o.summary
        out.append(doc + "\n")
        facts = [f"scope: **{o.scope}**", f"severity: **{o.severity.value}**", f"reference: {o.reference}"]
        if o.retention:
            facts.append("a retention oracle (every lost obligation of its kinds is reported)")
        mutant = breakers.get(o.id)
        if mutant is not None:
            facts.append(f"broken by `harness.summarizers.mutants:{mutant.__name__}`")
        out.extend(f"- {fact}" for fact in facts)
        out.append("")
    return "\n".join(out)


# -- the fact kinds -----------------------------------------------------------------------------

def kind_reference() -> str:
    """A table of the built-in kinds and one section per kind, from the kind registry."""
    from harness import FactKind, kind_def
    from harness._base._model import Fact

    out = ["| kind | literals | polarity | fates | detail keys | a ledger keeps | judged by |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    sections = []
    for kind in FactKind:
        d = kind_def(kind.value)
        details = tuple(_KIND_DETAILS.get(kind.value, dict.fromkeys(d.params)))
        judges = ", ".join(f"`{j}`" for j in sorted(d.judges)) or "(see the kind it ends)"
        count = "1 or 2" if kind is FactKind.SUPERSESSION else str(d.literal_count)
        out.append(f"| `{d.name}` | {count} | {d.polarity.value if d.polarity else '–'} | "
                   f"{', '.join(s.value for s in d.fates)} | {', '.join(f'`{k}`' for k in details) or '–'} | "
                   f"{', '.join(f'`{k}`' for k in d.ledger_details) or '–'} | {judges} |")
        sample = _SAMPLE_FACTS.get(kind.value)
        if sample is not None:
            literals, extra = sample
            fact = Fact(f"{kind.value}-1", kind, literals, 0, d.polarity, details=tuple(sorted(extra.items())))
            keys = "".join(f"| `{k}` | {meaning} |\n" for k, meaning in _KIND_DETAILS.get(kind.value, {}).items())
            sections.append(f"### `{d.name}`\n\n| detail | holds |\n| --- | --- |\n{keys}\n"
                            f"The sentence the bundled correct compactors write for one:\n\n"
                            f"```text\n{d.statement(fact)}\n```\n")
    return "\n".join(out) + "\n\n" + "\n".join(sections)


#: The detail keys a generated fact of each built-in kind carries (``Fact.details``), and what each holds.
#: tests/test_docs.py checks this table against the facts the strategies really generate, so it cannot drift.
_KIND_DETAILS: dict[str, dict[str, str]] = {
    "prohibition": {"category": "what the forbidden literal names: a bucket, a host, a branch, a table..."},
    "literal_binding": {"category": "what the bound literal names: a release, a bucket, a region..."},
    "threshold": {"field": "the limited field (the first literal)", "value": "the limit (the second literal)",
                  "operator": "one of `<=`, `>=`, `<`, `>`, `==`"},
    "commitment": {"action": "the pending verb (`merge`, `rotate`)", "noun": "what it acts on (`pull request`)",
                   "object": "the literal it acts on", "past": "the verb's past tense, as a false completion would "
                   "state it", "trigger": "when it is due (`CI is green`)"},
    "in_flight_call": {"name": "the tool's name", "arguments": "the call's arguments, a JSON string, byte-exact",
                       "mode": "`trailing` (the call is the last message when compaction fires; its result comes "
                               "right after, and the literal is the call id) or `background` (the call was answered "
                               "at once with a job handle, the literal; the outcome comes later)",
                       "call_id": "a background job's own tool-call id (the placeholder result answers it)",
                       "outcome": "how a background job's outcome arrives: `notification` (a user message) or "
                                  "`poll` (the result of a poll call)"},
    "unresolved_error": {"name": "the tool or command that failed", "exception": "the error's class"},
    "negative_fact": {"disposition": "`rejected`, `failed` or `superseded`"},
    "artifact_reference": {"what": "what the artifact is: a script, a report, a migration..."},
    "gating_field": {"field": "the config field (the first literal)", "value": "the value it must hold (the second "
                     "literal)", "write": "the pending write it gates (`deploy`, `send the invoices`)"},
    "retraction": {"target": "the id of the fact it withdrew", "target_kind": "that fact's kind"},
    "supersession": {"target": "the id of the fact it replaced", "target_kind": "that fact's kind",
                     "old": "the value before the change", "value": "the new value (a field-and-value kind)",
                     "field": "the field that changed (a field-and-value kind)",
                     "operator": "the threshold's operator, unchanged", "category": "the binding's category, unchanged"},
}

#: One illustrative fact per kind, for its sentence (literals, details).
_SAMPLE_FACTS = {
    "prohibition": (("s3://billing-exports-12/",), {"category": "bucket"}),
    "literal_binding": (("6.24.1",), {"category": "release"}),
    "threshold": (("max_parallel_uploads", "4"), {"field": "max_parallel_uploads", "operator": "<=", "value": "4"}),
    "commitment": (("PR-2291",), {"action": "merge", "noun": "pull request", "object": "PR-2291", "past": "merged",
                                  "trigger": "CI is green"}),
    "in_flight_call": (("call_7f3a",), {"name": "run_migrations", "arguments": "{}"}),
    "unresolved_error": (("E1042",), {"name": "pytest", "exception": "TimeoutError"}),
    "negative_fact": (("retry-with-backoff",), {"disposition": "rejected"}),
    "artifact_reference": (("reports/q3_summary.parquet",), {"what": "report"}),
    "gating_field": (("max_retries", "0"), {"field": "max_retries", "value": "0", "write": "deploy"}),
    "retraction": (("s3://billing-exports-12/",), {"target": "prohibition-1", "target_kind": "prohibition"}),
    "supersession": (("max_parallel_uploads", "8"), {"field": "max_parallel_uploads", "old": "4", "value": "8",
                                                     "operator": "<=", "target": "threshold-1",
                                                     "target_kind": "threshold"}),
}

# -- the prose rules ----------------------------------------------------------------------------

_FIELD = re.compile(r"^    (\w+): ")


def prose_rules() -> str:
    """One row per ``ProseRules`` setting, in the order the class declares them: its name, its default (a
    cue list shown by its first entries and its size) and the comment above it in the source, which says
    what the reading does with it (a setting without a comment of its own shares the one above it)."""
    from harness.oracles._rules import DEFAULT_RULES, ProseRules

    said: dict[str, str] = {}
    comment: list[str] = []
    shared = ""  # the description of the setting before: one comment often governs a group of settings
    for line in inspect.getsource(ProseRules).splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            comment.append(stripped.lstrip("# "))
        elif field := _FIELD.match(line):
            shared = " ".join(comment) or shared
            said[field.group(1)] = shared
            comment = []
    rows = ["| setting | default | what the reading does with it |", "| --- | --- | --- |"]
    for name in ProseRules.__dataclass_fields__:
        rows.append(f"| `{name}` | {_cell(_default(getattr(DEFAULT_RULES, name)))} | {_cell(said.get(name, ''))} |")
    return "\n".join(rows) + "\n"


def _default(value) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        shown = ", ".join(f"{a!r}: {b!r}" if isinstance(b, str) else f"{a}: {len(b)} phrases" for a, b in value[:4])
        return f"{len(value)} pairs: {shown}" + (", ..." if len(value) > 4 else "")
    if isinstance(value, tuple):
        shown = ", ".join(repr(v) for v in value[:5])
        return f"{len(value)}: {shown}" + (", ..." if len(value) > 5 else "")
    return repr(value)


SECTIONS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "exit-codes": exit_codes,
    "oracles": oracle_catalogue,
    "kinds": kind_reference,
    "prose-rules": prose_rules,
}


def render_markers(markdown: str, where: str = "<page>") -> str:
    """The page with each marker replaced by its generated section; an unknown marker is an error."""
    def replace(match: re.Match) -> str:
        name = match.group(1)
        if name not in SECTIONS:
            raise ValueError(f"{where}: unknown generated section {name!r}; known: {', '.join(sorted(SECTIONS))}")
        return SECTIONS[name]()
    return _MARKER.sub(replace, markdown)


def on_page_markdown(markdown, page, config, files, **kwargs):  # MkDocs's hook
    return render_markers(markdown, page.file.src_path)
