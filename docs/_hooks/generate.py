"""The reference sections that must never drift from the code, written into the pages by one command.

A page holds each generated section between two marker lines, so GitHub shows it too and it can be rewritten:

    <!-- generated: NAME -->

    ...the Markdown that ``SECTIONS[NAME]`` returns...

    <!-- end generated: NAME -->

``python docs/_hooks/generate.py --write`` rewrites what lies between the markers of every page under docs/ (the
hand-written text around them stays); ``--check`` only says which sections are stale. To add a section, write
the start marker alone and run ``--write``. tests/test_reference_pages.py fails while a committed section differs
from what the code generates now, and names the command. The sections, drawn from the code itself:

- ``cli``: every command of ``compaction-harness`` and every option of each, from the argparse parsers;
- ``exit-codes``: the exit codes, from ``ExitCode`` and the comment beside each member;
- ``oracles``: the built-in oracle catalogue, from the registry (id, scope, severity, reference, docstring, and
  the bundled mutant built to break each);
- ``kinds``: every built-in fact kind, from its ``KindDef`` (literals, polarity, fates, the detail keys a
  generated fact carries, the ones a correct ledger keeps, and the sentence the correct compactors write);
- ``prose-rules``: every ``ProseRules`` setting, its default and the comment that explains it.

The output depends on nothing but the code: no widths from the terminal (the CLI section formats the parsers
itself, not with argparse's formatter, whose wrapping follows ``COLUMNS`` and whose layout changes between
Python versions), no paths, no dates. As an MkDocs hook the same functions render each section afresh at build
time, markers dropped, so the site always matches the code; a marker naming no section fails the build, and
so does a malformed pair. The functions are plain (no MkDocs import), so the tests call them too.
"""

# No ``from __future__ import annotations``: the tests load this file by path without registering it in
# sys.modules, and dataclasses cannot resolve string annotations of a module that is not there.
import argparse
import difflib
import inspect
import io
import re
import sys
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: The command that rewrites the generated sections; every staleness message names it.
REGENERATE = "python docs/_hooks/generate.py --write"

_DOCS = Path(__file__).resolve().parent.parent
_ROOT = _DOCS.parent
_START = re.compile(r"^<!-- generated: ([a-z-]+) -->$")
_END = re.compile(r"^<!-- end generated: ([a-z-]+) -->$")
_USAGE_WIDTH = 90  # fixed, so the usage lines wrap the same on every machine


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


def _shown(action: argparse.Action) -> bool:
    return action.help is not argparse.SUPPRESS and action.help != argparse.SUPPRESS


def _metavar(action: argparse.Action) -> str | tuple[str, ...]:
    """What argparse would call the action's value: its metavar, its choices, or its dest."""
    if action.metavar is not None:
        return action.metavar
    if action.choices is not None:
        choices = sorted(action.choices) if isinstance(action.choices, (set, frozenset)) else action.choices
        return "{" + ",".join(str(c) for c in choices) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _value(action: argparse.Action) -> str:
    """The action's value as usage shows it (``X``, ``[X]``, ``X [X ...]``, ``COMMAND ...``), by its nargs."""
    metavar = _metavar(action)
    names = list(metavar) if isinstance(metavar, tuple) else [metavar]
    name = names[0]
    nargs = action.nargs
    if nargs is None:
        return name
    if nargs == argparse.OPTIONAL:
        return f"[{name}]"
    if nargs == argparse.ZERO_OR_MORE:
        return f"[{name} ...]"
    if nargs == argparse.ONE_OR_MORE:
        return f"{name} [{names[-1]} ...]"
    if nargs == argparse.PARSER:
        return f"{name} ..."
    if nargs == argparse.REMAINDER:
        return "..."
    if isinstance(nargs, int):
        return " ".join(names[i] if len(names) == nargs else name for i in range(nargs))
    return name


def _invocation(action: argparse.Action) -> str:
    """How the table names an argument: ``FILE``, ``--inline``, ``-o, --output FILE``."""
    if not action.option_strings:
        metavar = _metavar(action)
        return " ".join(metavar) if isinstance(metavar, tuple) else metavar
    options = ", ".join(action.option_strings)
    return options if action.nargs == 0 else f"{options} {_value(action)}"


def _usage(command: str, parser: argparse.ArgumentParser) -> str:
    """The usage line, wrapped at a fixed width under the command, optionals first as argparse puts them."""
    parts = []
    for action in parser._actions:
        if action.option_strings and _shown(action):
            part = action.option_strings[0] + ("" if action.nargs == 0 else f" {_value(action)}")
            parts.append(part if action.required else f"[{part}]")
    parts.extend(_value(action) for action in parser._actions if not action.option_strings and _shown(action))
    prefix = f"usage: {command}"
    lines, line, empty = [], prefix, True
    for part in parts:
        if not empty and len(line) + 1 + len(part) > _USAGE_WIDTH:
            lines.append(line)
            line, empty = " " * len(prefix), True
        line, empty = f"{line} {part}", False
    lines.append(line)
    return "\n".join(lines)


def _meaning(action: argparse.Action, prog: str) -> str:
    """The help text, its ``%(default)s``-style fields filled in as argparse fills them."""
    text = action.help or ""
    if "%" in text:
        params = {name: value for name, value in vars(action).items() if value is not argparse.SUPPRESS}
        params = {name: getattr(value, "__name__", value) for name, value in params.items()}
        if params.get("choices") is not None:
            params["choices"] = ", ".join(str(c) for c in params["choices"])
        text = text % {**params, "prog": prog}
    if action.required and action.option_strings:
        text = f"required. {text}"
    if action.option_strings and isinstance(action, argparse._AppendAction) and "repeatable" not in text:
        text = f"{text} (may be given more than once)"
    return text


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
        out.append(f"```text\n{_usage(command, parser)}\n```\n")
        rows = [(_invocation(action), _meaning(action, command)) for action in parser._actions
                if _shown(action) and not isinstance(action, (argparse._SubParsersAction, argparse._HelpAction))]
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
    # The built-in ones only: a test or a team that registered its own in this process does not change the page.
    registered = [o for o in oracles.registered() if o.check.__module__.startswith("harness.")]
    out = ["| id | scope | severity | reference | checks |", "| --- | --- | --- | --- | --- |"]
    for o in registered:
        out.append(f"| [`{o.id}`](#{o.id}) | {o.scope} | {o.severity.value} | {_cell(o.reference)} | {_cell(o.summary)} |")
    out.append("")
    for o in registered:
        out.append(f"## `{o.id}`\n")  # its anchor, #ID, is the same on GitHub and in the site
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


# -- the pages ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Region:
    """One generated section of a page: from the start of its start marker line to the end of its end marker
    line (``closed``), or the start marker alone, a section not generated yet."""

    name: str
    start: int
    end: int
    body: str  # what lies between the marker lines, as committed
    closed: bool


@dataclass(frozen=True)
class Stale:
    """A committed section that differs from what the code generates now."""

    page: str
    section: str
    why: str
    diff: str  # the first lines of a unified diff, committed to generated

    def message(self) -> str:
        return (f"{self.page}: the generated section {self.section!r} is stale ({self.why}); run `{REGENERATE}` "
                f"and commit the page\n{self.diff}")


def regions(markdown: str, where: str = "<page>") -> list[Region]:
    """The generated sections of a page, in order. A start marker followed by another start marker (or by the
    end of the page) stands alone; an end marker that closes no section, or closes another one, is an error,
    and so is a section whose name ``SECTIONS`` does not know."""
    found: list[Region] = []
    open_name, open_at, body_at = None, 0, 0
    offset = 0
    for number, line in enumerate(markdown.splitlines(keepends=True), 1):
        text = line.rstrip("\r\n")
        if start := _START.match(text):
            if start.group(1) not in SECTIONS:
                raise ValueError(f"{where}:{number}: unknown generated section {start.group(1)!r}; known: "
                                 f"{', '.join(sorted(SECTIONS))}")
            if open_name is not None:
                found.append(Region(open_name, open_at, body_at, "", False))
            open_name, open_at, body_at = start.group(1), offset, offset + len(line)
        elif end := _END.match(text):
            if end.group(1) != open_name:
                raise ValueError(f"{where}:{number}: {text} closes no open section"
                                 + (f" (the open one is {open_name!r})" if open_name else ""))
            found.append(Region(open_name, open_at, offset + len(line), markdown[body_at:offset], True))
            open_name = None
        offset += len(line)
    if open_name is not None:
        found.append(Region(open_name, open_at, body_at, "", False))
    return found


def generated(name: str) -> str:
    """The section as a page holds it between its markers: a blank line, the Markdown, a blank line."""
    lines = [line.rstrip() for line in SECTIONS[name]().strip("\n").splitlines()]
    return "\n" + "\n".join(lines) + "\n\n"


def _replace(markdown: str, where: str, block: Callable[[str], str]) -> str:
    out, at = [], 0
    for region in regions(markdown, where):
        out.append(markdown[at:region.start])
        out.append(block(region.name))
        at = region.end
    out.append(markdown[at:])
    return "".join(out)


def write_sections(markdown: str, where: str = "<page>") -> str:
    """The page with every section (a lone start marker too) regenerated between its markers."""
    return _replace(markdown, where,
                    lambda name: f"<!-- generated: {name} -->\n{generated(name)}<!-- end generated: {name} -->\n")


def render_markers(markdown: str, where: str = "<page>") -> str:
    """The page as the site shows it: every section generated afresh, its marker lines dropped."""
    return _replace(markdown, where, generated)


def pages() -> list[Path]:
    """Every Markdown page under docs/ that holds a generated section, sorted."""
    return sorted(path for path in _DOCS.rglob("*.md") if any(_START.match(line) for line in
                                                             path.read_text(encoding="utf-8").splitlines()))


def stale_sections(paths: list[Path] | None = None) -> list[Stale]:
    """The sections whose committed text is not what the code generates now (a lone start marker included)."""
    stale = []
    for path in pages() if paths is None else paths:
        page = path.relative_to(_ROOT).as_posix() if path.is_relative_to(_ROOT) else str(path)
        for region in regions(path.read_text(encoding="utf-8"), page):
            fresh = generated(region.name)
            if not region.closed or region.body != fresh:
                committed = region.body if region.closed else "(nothing: the start marker stands alone)\n"
                diff = list(difflib.unified_diff(committed.splitlines(), fresh.splitlines(), "committed",
                                                 "generated now", n=1, lineterm=""))
                why = "the code changed since it was written" if region.closed else "it was never written"
                stale.append(Stale(page, region.name, why, "\n".join(diff[:40] + (["..."] if len(diff) > 40 else []))))
    return stale


def main(argv: list[str] | None = None) -> int:
    """``--write`` rewrites the stale sections of the pages; ``--check`` lists them and exits 1 if any."""
    parser = argparse.ArgumentParser(prog="python docs/_hooks/generate.py",
                                     description="Write the generated reference sections into the pages under docs/.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate every section between its markers")
    mode.add_argument("--check", action="store_true", help="only list the stale sections (exit 1 if any)")
    args = parser.parse_args(argv)
    stale = stale_sections()
    if args.check:
        for found in stale:
            print(found.message(), file=sys.stderr)
        print(f"{len(stale)} stale section(s) in {len(pages())} page(s)")
        return 1 if stale else 0
    for page in sorted({found.page for found in stale}):
        path = _ROOT / page
        path.write_text(write_sections(path.read_text(encoding="utf-8"), page), encoding="utf-8")
        print(f"wrote {page} ({', '.join(found.section for found in stale if found.page == page)})")
    if not stale:
        print(f"every generated section of {len(pages())} page(s) is current")
    return 0


def on_page_markdown(markdown, page, config, files, **kwargs):  # MkDocs's hook
    return render_markers(markdown, page.file.src_path)


if __name__ == "__main__":
    sys.exit(main())
