"""The HTML report in a real browser: Debian's Chromium, driven by Playwright's client.

A report produced by a real run against a bundled mutant is opened from disk as a person would open a
CI artifact; the tests check what that person sees (the failing obligation highlighted where it was
stated, one survival curve per fact kind with the threshold marked, a copy button that copies the
reproduce command) and that the page asks the network for nothing. A screenshot is left in
``artifacts/`` (or ``$COMPACTION_HARNESS_ARTIFACTS``) for CI to keep.

Chromium comes from ``python tests/assets/fetch_assets.py`` (``.ci/run`` runs it); without it these
tests skip locally and fail on CI.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from harness._app.cli._main import main
from harness._app.reports._html import render_html

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("COMPACTION_HARNESS_CHROMIUM", "/usr/bin/chromium"))
MUTANT = "harness.summarizers.mutants:softens_prohibition"
# What this machine's closed network needs (the flags Debian's Chromium is started with in the env notes).
_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
          "--disable-component-update", "--disable-sync"]


def _require_browser():
    why = None
    if importlib.util.find_spec("playwright") is None:
        why = "playwright is not installed (pip install -e '.[dev]')"
    if why is None and not CHROMIUM.exists():
        why = f"{CHROMIUM} is missing (python tests/assets/fetch_assets.py installs Debian's chromium)"
    if why is not None:
        if os.environ.get("CI") or os.environ.get("COMPACTION_HARNESS_REQUIRE_ASSETS"):
            pytest.fail(f"CI must run the browser tests: {why}")
        pytest.skip(why)


@pytest.fixture(scope="module")
def browser():
    _require_browser()
    from playwright.sync_api import sync_playwright  # lazy: only these tests need it
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=_FLAGS)
        yield chromium
        chromium.close()


class _Page:
    """A page opened from a file, recording every request it makes besides loading that file."""

    def __init__(self, browser, path: Path, *, width: int = 1200, height: int = 900):
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.context.grant_permissions(["clipboard-read", "clipboard-write"])
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.page = self.context.new_page()
        self.page.goto(self.url)
        self.page.wait_for_load_state("load")

    def external(self) -> list[str]:
        return [url for url in self.requests if url != self.url]

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def mutant_report(tmp_path_factory):
    """A real run of a bundled mutant, with its JSON and HTML reports."""
    out = tmp_path_factory.mktemp("report")
    code = main(["run", "--summarizer", MUTANT, "--examples", "15", "--seed", "11", "--quiet", "--inline",
                 "--report-json", str(out / "run.json"), "--report-html", str(out / "run.html")])
    assert code == 1
    return json.loads((out / "run.json").read_text()), out / "run.html"


def test_the_failing_obligation_is_highlighted_where_it_was_stated(browser, mutant_report):
    document, html = mutant_report
    violation = document["violations"][0]
    literal = next(f for f in violation["transcript"]["facts"] if f["id"] == violation["fact_id"])["literals"][0]
    page = _Page(browser, html)
    try:
        failure = page.page.locator("article.failure").first
        assert failure.locator("h3").inner_text().startswith("✗ negation-polarity")
        stated = failure.locator("li.stated mark.obligation").first
        assert stated.is_visible() and stated.inner_text() == literal
        assert "stated here" in failure.locator("li.stated").first.inner_text()
        # What came back is shown with the oracle's evidence marked.
        evidence = failure.locator(".context mark.evidence").first
        assert evidence.is_visible() and evidence.inner_text() == violation["found"]
    finally:
        page.close()


def test_the_chart_has_one_curve_per_fact_kind_and_the_threshold(browser, mutant_report):
    document, html = mutant_report
    kinds = sorted(document["survival"]["kinds"])
    page = _Page(browser, html)
    try:
        chart = page.page.locator("svg.survival")
        assert chart.is_visible()
        curves = chart.locator("path.curve")
        assert sorted(curves.nth(i).get_attribute("data-kind") for i in range(curves.count())) == kinds
        assert chart.locator("line.threshold").count() == 1
        # The mutant softens every prohibition from the first compaction: its ring sits at round 1.
        cliff = chart.locator('circle.cliff[data-kind="prohibition"]')
        assert cliff.count() == 1 and cliff.get_attribute("data-round") == "1"
        assert chart.locator("circle.cliff").count() == 1  # nothing else falls below the threshold
        legend = page.page.locator('.legend li[data-kind="prohibition"]').inner_text()
        assert "below 90% from round 1" in legend
    finally:
        page.close()


def test_the_copy_button_copies_the_reproduce_command(browser, mutant_report):
    document, html = mutant_report
    page = _Page(browser, html)
    try:
        button = page.page.locator("article.failure button.copy").first
        assert button.is_visible()
        button.click()
        page.page.wait_for_function("document.querySelector('article.failure button.copy').textContent == 'Copied'")
        assert page.page.evaluate("navigator.clipboard.readText()") == document["violations"][0]["reproduce"]
    finally:
        page.close()


def test_the_page_loads_nothing_but_itself_and_fits_a_phone(browser, mutant_report):
    _, html = mutant_report
    page = _Page(browser, html, width=390, height=844)
    try:
        assert page.external() == []
        overflow = page.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"the page is {overflow}px wider than a phone's screen"
    finally:
        page.close()
    page = _Page(browser, html)
    try:
        assert page.external() == []
        artifacts = Path(os.environ.get("COMPACTION_HARNESS_ARTIFACTS", ROOT / "artifacts"))
        artifacts.mkdir(parents=True, exist_ok=True)
        shot = artifacts / "html-report.png"
        page.page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        page.close()


def test_what_the_summarizer_wrote_is_shown_never_run_and_never_fetched(browser, tmp_path):
    hostile = ('<script>window.pwned = 1</script><img src="http://127.0.0.1:9/x.png">'
               '<link rel="stylesheet" href="http://127.0.0.1:9/s.css">')
    document = {"summarizer": hostile, "seed": 1, "examples_run": 1, "exit_code": 1, "violations": [{
        "invariant": "literal-verbatim", "severity": "violate", "fact_kind": "literal_binding", "fact_id": "F1",
        "detail": hostile, "expected": hostile, "found": hostile, "round": 0, "boundary": 1, "minimal_turns": 1,
        "transcript": {"facts": [{"id": "F1", "kind": "literal_binding", "literals": [hostile], "origin_turn": 0}],
                       "turns": [{"role": "user", "text": hostile}]},
        "context": {"messages": [{"role": "system", "content": hostile}]}, "reproduce": hostile}]}
    path = tmp_path / "hostile.html"
    path.write_text(render_html([("this run", document)]))
    page = _Page(browser, path)
    try:
        assert page.page.evaluate("window.pwned") is None
        assert page.external() == []
        assert page.page.locator("main img, main link, main script").count() == 0
        assert hostile in page.page.locator(".context").first.inner_text()
    finally:
        page.close()


def test_the_request_recorder_sees_a_page_that_does_fetch(browser, tmp_path):
    """The control for the two tests above: an external image is seen, so an empty list means something."""
    path = tmp_path / "fetches.html"
    path.write_text('<!doctype html><img src="http://127.0.0.1:9/x.png">')
    page = _Page(browser, path)
    try:
        assert page.external() == ["http://127.0.0.1:9/x.png"]
    finally:
        page.close()
