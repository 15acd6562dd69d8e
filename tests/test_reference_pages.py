"""The generated reference sections are committed, so GitHub shows them, and current: on every page under docs/,
what lies between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->`` is what
docs/_hooks/generate.py produces from the code now. A change to the parsers, the oracles or the kinds without
``python docs/_hooks/generate.py --write`` fails here, naming the page, the section and that command.
"""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _load_generator():
    spec = importlib.util.spec_from_file_location("_reference_generate", DOCS / "_hooks" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_generator()
PAGES = gen.pages()
COMMAND = "python docs/_hooks/generate.py --write"


def _page(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_command_named_is_the_generator_s():
    assert gen.REGENERATE == COMMAND
    assert (ROOT / COMMAND.split()[1]).is_file()


def test_every_page_with_a_marker_is_found():
    """The pages are found by their markers, as ``grep '<!-- generated:'`` would, and the known ones are there."""
    grepped = sorted(p for p in DOCS.rglob("*.md") if "<!-- generated:" in p.read_text(encoding="utf-8"))
    assert PAGES == grepped
    assert {_page(p) for p in PAGES} >= {"docs/reference/cli.md", "docs/reference/kinds.md",
                                         "docs/reference/oracles.md", "docs/reference/prose-rules.md"}


@pytest.mark.parametrize("path", PAGES, ids=_page)
def test_the_committed_sections_are_what_the_code_generates_now(path):
    stale = gen.stale_sections([path])
    assert not stale, "\n\n".join(found.message() for found in stale)


def test_no_page_under_docs_is_a_stub():
    """Every marker has its section committed after it, and every page says something besides its title."""
    problems = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        for region in gen.regions(text, _page(path)):
            if not region.closed:
                problems.append(f"{_page(path)}: the marker of {region.name!r} has no section after it")
            elif not region.body.strip():
                problems.append(f"{_page(path)}: the section {region.name!r} is empty")
        said = [line for line in text.splitlines()
                if line.strip() and not line.startswith("#") and not re.match(r"^<!-- (end )?generated: ", line)]
        if not said:
            problems.append(f"{_page(path)}: nothing but a title and markers")
    assert not problems, problems


# -- a change to the code makes the committed page stale ----------------------------------------------

def test_a_changed_oracle_docstring_makes_the_catalogue_stale(monkeypatch):
    from harness import oracles

    checked = next(o for o in oracles.registered() if o.id == "threshold-exact").check
    monkeypatch.setattr(checked, "__doc__", "A docstring the test wrote.")
    stale = gen.stale_sections()
    assert [(found.page, found.section) for found in stale] == [("docs/reference/oracles.md", "oracles")]
    message = stale[0].message()
    assert message.startswith("docs/reference/oracles.md: the generated section 'oracles' is stale")
    assert f"run `{COMMAND}`" in message
    assert "+A docstring the test wrote." in message.splitlines()


def test_a_changed_option_help_makes_the_cli_section_stale(monkeypatch):
    import harness._app.cli._parser as parser_module

    original = parser_module.build_parser

    def with_other_help():
        parser = original()
        seed = next(a for a in parser.commands["run"]._actions if "--seed" in a.option_strings)
        seed.help = "a help text the test wrote"
        return parser

    monkeypatch.setattr(parser_module, "build_parser", with_other_help)
    stale = gen.stale_sections()
    assert [(found.page, found.section) for found in stale] == [("docs/reference/cli.md", "cli")]
    assert "+| `--seed S` | a help text the test wrote |" in stale[0].message().splitlines()


def test_a_marker_standing_alone_is_stale_and_the_command_writes_it(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Exit codes\n\nThe codes:\n\n<!-- generated: exit-codes -->\n\nAfter.\n", encoding="utf-8")
    [found] = gen.stale_sections([page])
    assert (found.section, found.why) == ("exit-codes", "it was never written")
    page.write_text(gen.write_sections(page.read_text(encoding="utf-8")), encoding="utf-8")
    assert gen.stale_sections([page]) == []


# -- regenerating ---------------------------------------------------------------------------------

def test_regenerating_replaces_only_what_lies_between_the_markers():
    before = "# T\n\nIntro.\n\n<!-- generated: exit-codes -->\nold text\n<!-- end generated: exit-codes -->\n\nAfter.\n"
    after = gen.write_sections(before)
    assert after.startswith("# T\n\nIntro.\n\n<!-- generated: exit-codes -->\n\n| code | when |\n")
    assert after.endswith("|\n\n<!-- end generated: exit-codes -->\n\nAfter.\n")
    assert "old text" not in after
    assert gen.write_sections(after) == after


def test_the_command_rewrites_a_stale_page_and_then_finds_none(tmp_path, monkeypatch, capsys):
    """``--check`` names the stale page and the command; ``--write`` makes it the committed page again."""
    committed = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    page = tmp_path / "docs" / "reference" / "cli.md"
    page.parent.mkdir(parents=True)
    page.write_text(committed.replace("| `--seed S` |", "| `--seed S` | an old meaning |", 1), encoding="utf-8")
    monkeypatch.setattr(gen, "_ROOT", tmp_path)
    monkeypatch.setattr(gen, "_DOCS", tmp_path / "docs")

    assert gen.main(["--check"]) == 1
    said = capsys.readouterr().err
    assert "docs/reference/cli.md: the generated section 'cli' is stale" in said and COMMAND in said
    assert gen.main(["--write"]) == 0
    assert page.read_text(encoding="utf-8") == committed
    assert gen.main(["--check"]) == 0


def test_a_malformed_pair_of_markers_is_an_error():
    with pytest.raises(ValueError, match=r"page.md:3: <!-- end generated: kinds --> closes no open section "
                                         r"\(the open one is 'cli'\)"):
        gen.regions("x\n<!-- generated: cli -->\n<!-- end generated: kinds -->\n", "page.md")
    with pytest.raises(ValueError, match="closes no open section$"):
        gen.regions("<!-- end generated: cli -->\n", "page.md")
    with pytest.raises(ValueError, match="page.md:1: unknown generated section 'nope'"):
        gen.regions("<!-- generated: nope -->\n", "page.md")


def test_the_site_shows_the_sections_without_their_markers():
    text = gen.render_markers((DOCS / "reference" / "cli.md").read_text(encoding="utf-8"), "cli.md")
    assert "<!-- generated:" not in text and "<!-- end generated:" not in text
    assert text.count("### `compaction-harness run`") == 1
    assert "| **0** (ok) |" in text


# -- deterministic output ---------------------------------------------------------------------------

def test_the_cli_section_does_not_follow_the_terminal_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    wide = gen.cli_reference()
    monkeypatch.setenv("COLUMNS", "30")
    assert gen.cli_reference() == wide
    usage_lines = [line for block in re.findall(r"```text\n(.*?)```", wide, re.S) for line in block.splitlines()]
    assert usage_lines and max(len(line) for line in usage_lines) <= 90


def test_the_command_checks_the_pages_from_a_fresh_process():
    """Run as its docstring says, in another process with another hash seed and terminal width: still current."""
    done = subprocess.run([sys.executable, "docs/_hooks/generate.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "37", "PYTHONHASHSEED": "12345"})
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip() == f"0 stale section(s) in {len(PAGES)} page(s)"
