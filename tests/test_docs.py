"""The documentation is tested like code: every sample runs, the site builds, the references are complete.

- Every ```python block of every page (and of the README) is executed, page by page, in order, in one
  namespace, inside a temporary directory that links the repository's ``examples`` and ``docs``. A block
  with a ``title="name.py"`` is first written to that file, so the page's shell commands can use it.
- Every ``compaction-harness`` command of a ```sh block is parsed by the real argument parser; the blocks a
  page marks with ``<!-- test: run -->`` are executed there too, each command expected to exit with the code
  its ``# exit N`` comment says (0 without one).
- ``mkdocs build --strict`` passes, and every option of every command's ``--help`` is in the built site.
- The JSON report and corpus pages name every key a real report and a real entry hold; the fact-kind page's
  detail keys are those the strategies generate; the README stays under 8,000 bytes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness._app.cli._parser import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_hooks" not in p.parts and "examples" not in p.parts)
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^`\n]*)$")
_SNIPPET = re.compile(r'^\s*--8<--\s+"(?P<path>[^"]+)"\s*$')
_RUN_MARK = "<!-- test: run -->"
_EXIT = re.compile(r"#\s*exit\s+(\d+)\s*$")


def _load_generator():
    spec = importlib.util.spec_from_file_location("_docs_generate", DOCS / "_hooks" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    title: str | None
    code: str
    run: bool


def _resolve_snippets(code: str, where: str) -> str:
    out = []
    for line in code.splitlines():
        m = _SNIPPET.match(line)
        if m:
            path = ROOT / m.group("path")
            assert path.is_file(), f"{where}: snippet {m.group('path')!r} is not a file"
            out.append(path.read_text(encoding="utf-8").rstrip("\n"))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def blocks_of(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, snippets included, with their language, title and mark."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        start = i
        body = []
        i += 1
        while i < len(lines) and not (lines[i].strip() == fence and lines[i].startswith(indent)):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1
        language = info.split()[0] if info else ""
        title = re.search(r'title="([^"]+)"', info)
        before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        page = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
        where = f"{page}:{start + 1}"
        found.append(Block(page, start + 1, language, title.group(1) if title else None,
                           _resolve_snippets("\n".join(body), where), before == _RUN_MARK))
    return found


def commands_of(block: Block) -> list[tuple[list[str], int]]:
    """The ``compaction-harness`` commands of a shell block as argument lists, with the exit code each expects."""
    joined, pending = [], ""
    for raw in block.code.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    out = []
    for line in joined:
        stripped = line.strip()
        if not stripped.startswith("compaction-harness"):
            continue
        m = _EXIT.search(stripped)
        expected = int(m.group(1)) if m else 0
        words = shlex.split(stripped, comments=True)
        out.append((words[1:], expected))
    return out


def _page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = set()

    def walk(node):
        if isinstance(node, str):
            listed.add(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(config["nav"])
    pages = {str(p.relative_to(DOCS)) for p in PAGES}
    assert listed == pages, {"not in nav": sorted(pages - listed), "missing": sorted(listed - pages)}


def _has_samples(path: Path) -> bool:
    return any(b.language in ("python", "sh") for b in blocks_of(path))


SAMPLED = [p for p in (ROOT / "README.md", *PAGES) if _has_samples(p)]


def test_the_pages_with_samples_are_found():
    assert ROOT / "README.md" in SAMPLED and DOCS / "tutorial.md" in SAMPLED and DOCS / "reference" / "protocols.md" in SAMPLED


@pytest.mark.parametrize("path", SAMPLED, ids=_page_id)
def test_samples_of_a_page_run(path, tmp_path):
    parser = build_parser()
    plan = []
    for block in blocks_of(path):
        where = f"{block.page}:{block.line}"
        if block.language == "python":
            plan.append({"where": where, "language": "python", "title": block.title, "code": block.code})
        elif block.language == "sh":
            commands = commands_of(block)
            for args, _ in commands:
                if args[:1] == ["fuzz"] and "--" in args:  # what follows "--" is libFuzzer's, as main() reads it
                    args = args[:args.index("--")]
                with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
                    try:
                        parser.parse_args(args)
                    except SystemExit as exc:
                        if exc.code:  # --help and --version exit 0 and are fine
                            raise AssertionError(f"{where}: `compaction-harness {shlex.join(args)}` does not parse: "
                                                 f"{err.getvalue().strip()}") from exc
            if block.run:
                plan.append({"where": where, "language": "sh", "commands": commands})
    work = tmp_path / "page"
    work.mkdir()
    for name in ("examples", "docs"):
        (work / name).symlink_to(ROOT / name)
    (tmp_path / "blocks.json").write_text(json.dumps(plan), encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "_docs_runner.py"), str(tmp_path / "blocks.json")],
                          cwd=work, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-6000:] or done.stdout[-3000:]


def test_the_block_reader_sees_titles_marks_snippets_and_exit_codes(tmp_path):
    page = tmp_path / "page.md"
    page.write_text('Text.\n\n```python title="a.py"\n--8<-- "docs/examples/protocol_rich.py"\n```\n\n'
                    f"{_RUN_MARK}\n```sh\ncompaction-harness run --examples 3 \\\n    --seed 1  # exit 1\n"
                    "pip install x\n```\n\n- item\n\n    ```sh\n    compaction-harness oracles\n    ```\n")
    blocks = blocks_of(page)
    assert [(b.language, b.title, b.run) for b in blocks] == [("python", "a.py", False), ("sh", None, True),
                                                              ("sh", None, False)]
    assert "def summarize" in blocks[0].code
    assert commands_of(blocks[1]) == [(["run", "--examples", "3", "--seed", "1"], 1)]
    assert commands_of(blocks[2]) == [(["oracles"], 0)]


def test_the_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= 8000, f"README.md is {size} bytes; the limit is 8,000 (the rest belongs in docs/)"


# -- the built site ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return out


def _site_text(site: Path) -> str:
    import html

    return "\n".join(html.unescape(p.read_text(encoding="utf-8")) for p in site.rglob("*.html"))


def _every_command(parser, prefix=()):
    import argparse

    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _every_command(sub, (*prefix, name))


def test_every_option_of_every_command_is_in_the_built_site(site):
    text = _site_text(site)
    missing = []
    for command, parser in _every_command(build_parser()):
        printed = parser.format_help()
        for option in sorted(set(re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", printed))):
            if option not in text:
                missing.append(f"compaction-harness {' '.join(command)}: {option}")
        assert f"compaction-harness {' '.join(command)}".strip() in text
    assert not missing, missing


def test_no_generated_marker_is_left_in_the_site(site):
    text = _site_text(site)
    assert "<!-- generated:" not in text and "<!-- end generated:" not in text
    assert "threshold-exact" in (site / "reference" / "oracles" / "index.html").read_text(encoding="utf-8")


def test_an_unknown_generated_section_is_an_error():
    generator = _load_generator()
    with pytest.raises(ValueError, match="unknown generated section 'nope'"):
        generator.render_markers("a\n<!-- generated: nope -->\nb", "page.md")
    with pytest.raises(ValueError, match="unknown generated section 'nope'"):
        generator.write_sections("a\n<!-- generated: nope -->\nb\n<!-- end generated: nope -->\n", "page.md")


def test_the_generated_cli_reference_follows_the_parser(monkeypatch):
    """A new option appears in the reference without anyone writing it down."""
    import harness._app.cli._parser as parser_module

    original = parser_module.build_parser

    def with_extra():
        parser = original()
        parser.commands["run"].add_argument("--brand-new-option", metavar="X", help="added by the test")
        return parser

    monkeypatch.setattr(parser_module, "build_parser", with_extra)
    text = _load_generator().cli_reference()
    assert "`--brand-new-option X` | added by the test |" in text


def test_the_oracle_catalogue_lists_every_registered_oracle():
    from harness import oracles

    text = _load_generator().oracle_catalogue()
    for o in oracles.registered():
        assert f"## `{o.id}`" in text, o.id


def test_the_prose_rules_page_says_what_every_setting_does():
    """Every ``ProseRules`` field has a row whose description is the comment above it in the source."""
    import dataclasses

    from harness.oracles import ProseRules, Outcome

    rows = {line.split("|")[1].strip(" `"): line.split("|")[3].strip()
            for line in _load_generator().prose_rules().splitlines()[2:]}
    assert sorted(rows) == sorted(f.name for f in dataclasses.fields(ProseRules))
    assert [name for name, said in rows.items() if len(said) < 20] == []
    page = (DOCS / "reference" / "prose-rules.md").read_text(encoding="utf-8")
    assert [str(o) for o in Outcome if f"`{o}`" not in page] == []


# -- references that name every key ---------------------------------------------------------------

def _keys(value, into: set[str]) -> set[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            into.add(key)
            _keys(inner, into)
    elif isinstance(value, list):
        for inner in value:
            _keys(inner, into)
    return into


def _undocumented(keys: set[str], page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    return sorted(k for k in keys if f"`{k}`" not in text)


def test_the_json_report_page_names_every_key_of_a_real_report(tmp_path):
    from harness._app.cli._main import main

    report = tmp_path / "r.json"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["run", "--examples", "25", "--seed", "3", "--inline", "--quiet", "--report-json", str(report)])
    assert code == 1
    data = json.loads(report.read_text())
    # The keys of ``degradations`` are oracle ids (the catalogue documents those), not the report's keys.
    keys = _keys({k: v for k, v in data.items() if k not in ("survival", "degradations")}, set()) | set(data)
    survival = data["survival"]
    keys |= set(survival) | {key for rows in survival["kinds"].values() for row in rows for key in row}
    assert not _undocumented(keys, DOCS / "reference" / "json-report.md")


def test_the_corpus_page_names_every_key_of_a_real_entry():
    keys: set[str] = set()
    for entry in (ROOT / "corpora").glob("*.json"):
        data = json.loads(entry.read_text())
        keys |= set(data)
        for name, value in data.items():
            if name not in ("transcript", "skeleton"):  # the transcript schema is its own section
                _keys(value, keys)
    assert keys
    assert not _undocumented(keys, DOCS / "reference" / "corpus.md")


def test_the_kind_page_names_every_detail_key_the_strategies_generate():
    from hypothesis import HealthCheck, given, settings

    from harness.strategies import transcripts

    documented = _load_generator()._KIND_DETAILS
    seen: dict[str, set[str]] = {}

    @settings(max_examples=150, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(transcripts(max_turns=60))
    def collect(transcript):
        for fact in transcript.facts:
            seen.setdefault(str(fact.kind), set()).update(k for k, _ in fact.details)

    collect()
    for kind, keys in seen.items():
        assert keys <= set(documented[kind]), (kind, sorted(keys - set(documented[kind])))
        assert set(documented[kind]) - keys <= {"category", "operator", "field", "value"}, kind  # rare on a supersession
    assert {"retraction", "supersession"} <= set(seen)
