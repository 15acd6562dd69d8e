"""A gate's failures where a code review sees them: SARIF 2.1.0 for GitHub code scanning, and GitHub workflow
commands (``::error file=...,line=...::``) that annotate the pull request.

Both point at the summarizer's own source: the file a ``module:function`` or ``path/to/file.py:function``
spec names, at the line that defines the function, found by reading the file (``ast``), never by running it
here. Other summarizers (``openai:``, ``http://``, ``cmd:``) have no such file: ``gate --source`` names one
(a prompt file, the service's code), else results carry no location and annotations no file.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.util
import os
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import __version__
from harness._base._errors import PathError
from harness._app.calling._loading import framework_spec
from harness._app.reports._gate import EntryChange, Gate, short_transcript, violation_of
from harness._app.reports._text import printable
from harness._app.reports._trend import Finding
from harness.oracles import registered

__all__ = ["Source", "summarizer_source", "parse_source", "sarif_document", "annotations", "failures_now"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: Workflow commands GitHub shows per step and kind; more are listed in the step summary.
ANNOTATION_LIMIT = 10
_LEVELS = {"new": "error", "still": "warning", "unsure": "note"}
_WORDS = {"new": "new failure", "still": "known failure, still failing", "unsure": "unsure (chance may explain it)"}
_SPEC_PREFIXES = ("openai:", "http://", "https://", "cmd:")


@dataclass(frozen=True, slots=True)
class Source:
    """Where findings point: ``path`` relative to the repository root (``relative``), else absolute, and a line."""

    path: str
    line: int
    relative: bool


@dataclass(frozen=True, slots=True)
class Failing:
    """One failure present now, as SARIF and annotations report it: a run finding or a corpus entry."""

    change: str  # new, still or unsure
    rule: str
    title: str
    text: str
    fingerprint: str


def parse_source(text: str, *, root: Path) -> Source:
    """``PATH`` or ``PATH:LINE`` (``gate --source``), relative to ``root`` when under it."""
    path, sep, line = text.rpartition(":")
    if not (sep and line.isdigit() and int(line) > 0):
        path, line = text, "1"
    if not Path(path).is_file():
        raise PathError(f"--source {text!r}: no such file {path!r} (expected PATH or PATH:LINE of a file in your "
                        f"repository)")
    return _located(Path(path), int(line), root)


def summarizer_source(spec: str, *, root: Path) -> Source | None:
    """The file and the defining line of the function a Python spec names; None for other specs, or when
    the file cannot be found without running the module itself."""
    _, spec = framework_spec(spec)
    target, sep, name = spec.rpartition(":")
    if spec.startswith(_SPEC_PREFIXES) or not sep or not target or not name:
        return None
    if target.endswith(".py") or "/" in target or os.sep in target:
        path: Path | None = Path(target)
    else:
        path = _module_file(target, root)
    if path is None or not path.is_file():
        return None
    return _located(path, _definition_line(path, name), root)


def _module_file(module: str, root: Path) -> Path | None:
    """The source file of ``module`` (imported already, or found from ``root`` and the path as ``python -m``
    would: its parent packages are imported, never the module itself)."""
    loaded = sys.modules.get(module)
    if getattr(loaded, "__file__", None):
        return Path(loaded.__file__)
    with _on_path(str(root)):
        try:
            found = importlib.util.find_spec(module)
        except Exception:  # noqa: BLE001 - a parent package that raises on import: no location, not a crash
            return None
    origin = getattr(found, "origin", None)
    return Path(origin) if origin and origin.endswith(".py") else None


@contextlib.contextmanager
def _on_path(folder: str) -> Iterator[None]:
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)


def _definition_line(path: Path, name: str) -> int:
    """The line defining ``name`` at the module's top level (a def, a class, an assignment), else 1."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return 1
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return node.lineno
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node.lineno
    return 1


def _located(path: Path, line: int, root: Path) -> Source:
    resolved = path.resolve() if path.is_absolute() else (Path.cwd() / path).resolve()
    try:
        return Source(resolved.relative_to(root.resolve()).as_posix(), line, True)
    except ValueError:
        return Source(resolved.as_posix(), line, False)


def failures_now(gate: Gate, current: dict[str, Any]) -> list[Failing]:
    """Every failure present in this run, new ones first: the run's findings, then the corpus entries."""
    spec = str(current.get("summarizer"))
    found: list[tuple[str, Finding]] = [("new", f) for f in gate.trend.new]
    found += [("still", m.new) for m in gate.trend.still] + [("unsure", f) for f in gate.trend.unsure_new]
    out = [_finding(change, f, violation_of(current, f), spec) for change, f in found]
    out += [_entry(e, spec, gate.corpus or "CORPUS") for e in gate.entries if e.change in _LEVELS]
    return sorted(out, key=lambda item: list(_LEVELS).index(item.change))


def _finding(change: str, f: Finding, violation: dict[str, Any], spec: str) -> Failing:
    turns = f.minimal_turns if f.minimal_turns is not None else "?"
    lines = [f"{_WORDS[change]}: {f.invariant} ({f.fact_kind}, {f.happened}): {f.detail}",
             f"minimal transcript, {turns} turn(s):", *(f"  {line}" for line in short_transcript(violation))]
    if violation.get("reproduce"):
        lines.append(f"reproduce: {violation['reproduce']}")
    if f.corpus_file:
        lines.append(f"corpus entry: {f.corpus_file}")
    key = "/".join((spec, *f.key))
    return Failing(change, f.invariant, f"{f.invariant} ({f.fact_kind}): {_WORDS[change]}",
                   printable("\n".join(lines)), hashlib.sha256(key.encode()).hexdigest()[:32])


def _entry(e: EntryChange, spec: str, corpus: str) -> Failing:
    lines = [f"{_WORDS[e.change]}: corpus entry {e.entry}, {e.invariant} ({e.fact_kind}): {e.detail}"]
    if e.change == "new":
        lines.append("it passed in the baseline's replay of the corpus")
    if e.rates:
        lines.append(e.rates)
    lines.append(f"replay it: compaction-harness replay {shlex.quote(corpus)} --summarizer {shlex.quote(spec)}")
    return Failing(e.change, e.invariant, f"{e.invariant} ({e.fact_kind}): corpus entry {e.entry}, {_WORDS[e.change]}",
                   printable("\n".join(lines)), hashlib.sha256(f"{spec}/corpus/{e.entry}".encode()).hexdigest()[:32])


def sarif_document(gate: Gate, current: dict[str, Any], source: Source | None) -> dict[str, Any]:
    """SARIF 2.1.0 of every failure present now: new ones at level ``error``, known ones ``warning``, unsure
    ones ``note``; each at ``source`` (relative to the checkout, ``%SRCROOT%``), when there is one."""
    failing = failures_now(gate, current)
    catalogue = {o.id: o for o in registered()}
    rule_ids = sorted({f.rule for f in failing})
    rules = []
    for rule in rule_ids:
        oracle = catalogue.get(rule)
        text = oracle.summary if oracle is not None else f"the invariant {rule}"
        rules.append({"id": rule, "name": rule, "shortDescription": {"text": text},
                      "properties": {"tags": ["compaction"], **({"reference": oracle.reference} if oracle else {})}})
    results = []
    for f in failing:
        result: dict[str, Any] = {"ruleId": f.rule, "ruleIndex": rule_ids.index(f.rule), "level": _LEVELS[f.change],
                                  "message": {"text": f.text}, "partialFingerprints": {"compactionHarness/v1": f.fingerprint},
                                  "properties": {"change": f.change}}
        if source is not None:
            location = {"uri": source.path, "uriBaseId": "%SRCROOT%"} if source.relative else \
                {"uri": Path(source.path).as_uri()}
            result["locations"] = [{"physicalLocation": {"artifactLocation": location,
                                                         "region": {"startLine": source.line}}}]
        results.append(result)
    run = {"tool": {"driver": {"name": "compaction-harness", "version": __version__, "rules": rules}},
           "automationDetails": {"id": f"compaction-harness/{gate.mode}/"},
           "invocations": [{"executionSuccessful": True, "exitCode": int(gate.exit_code)}],
           "results": results}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def annotations(gate: Gate, current: dict[str, Any], source: Source | None) -> list[str]:
    """GitHub workflow commands: an ``error`` per new failure, a ``warning`` per known one, a ``notice`` per
    unsure one (at most ``ANNOTATION_LIMIT`` of each), on the summarizer's file and line when known."""
    kinds = {"new": "error", "still": "warning", "unsure": "notice"}
    out, shown = [], {kind: 0 for kind in kinds}
    for f in failures_now(gate, current):  # new ones first
        if shown[f.change] == ANNOTATION_LIMIT:
            continue
        shown[f.change] += 1
        where = f"file={_property(source.path)},line={source.line}," if source is not None else ""
        out.append(f"::{kinds[f.change]} {where}title={_property('compaction-harness: ' + f.title)}::{_data(f.text)}")
    every = failures_now(gate, current)
    hidden = {change: sum(f.change == change for f in every) - n for change, n in shown.items()}
    words = {"new": "new", "still": "known", "unsure": "unsure"}
    if any(hidden.values()):
        out.append("::notice title=compaction-harness::" + _data(", ".join(
            f"{n} more {words[change]} failure(s)" for change, n in hidden.items() if n) + " are in the step summary"))
    return out


def _data(text: str) -> str:
    """A workflow command's message: ``%``, carriage returns and newlines escaped, as GitHub's toolkit does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A workflow command's property value: also ``:`` and ``,`` escaped."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")
