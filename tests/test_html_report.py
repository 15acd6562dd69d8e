"""The HTML report in a real browser: Debian's Chromium, driven by Playwright's client.

A report produced by a real run against a bundled mutant is opened from disk as a person would open a
CI artifact; the tests check what that person sees (the failing obligation highlighted where it was
stated, once its folded transcript is opened; one small survival chart per fact kind with the threshold
marked; a copy button that copies the reproduce command; a link into a folded section opening it) and
that the page asks the network for nothing. A screenshot is left in ``artifacts/`` (or
``$COMPACTION_HARNESS_ARTIFACTS``) for CI to keep.

Chromium comes from ``python tests/assets/fetch_assets.py`` (``.ci/run`` runs it); without it these
tests skip locally and fail on CI. The tests after them read the page's HTML without a browser: the
index of findings and its links, the folded transcripts, corpus links and the chart's sparse rounds.
"""

from __future__ import annotations

import importlib.util
import json
import os
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness._app.cli._main import main
from harness._app.judging._survival import Survival, Tally
from harness._app.reports._chart import chart_columns
from harness._app.reports._html import render_html
from tests.test_trend import LITERAL, SUPERSESSION, THRESHOLD, night, violation

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
        assert not stated.is_visible()  # the transcript is folded until asked for
        failure.locator("details.transcript > summary").click()
        assert stated.is_visible() and stated.inner_text() == literal
        assert "stated here" in failure.locator("li.stated").first.inner_text()
        # What came back is shown, once opened, with the oracle's evidence marked.
        evidence = failure.locator(".context mark.evidence").first
        assert not evidence.is_visible()
        failure.locator("details.returned > summary").click()
        assert evidence.is_visible() and evidence.inner_text() == violation["found"]
    finally:
        page.close()


def test_the_chart_has_one_small_chart_per_fact_kind_each_with_the_threshold(browser, mutant_report):
    document, html = mutant_report
    kinds = sorted(document["survival"]["kinds"])
    page = _Page(browser, html)
    try:
        figures = page.page.locator("figure.kind-chart")
        assert sorted(figures.nth(i).get_attribute("data-kind") for i in range(figures.count())) == kinds
        for i in range(figures.count()):  # one curve, its own kind's, and the threshold line in each
            figure = figures.nth(i)
            assert figure.locator("svg.survival").is_visible()
            assert [figure.locator("path.curve").nth(j).get_attribute("data-kind")
                    for j in range(figure.locator("path.curve").count())] == [figure.get_attribute("data-kind")]
            assert figure.locator("line.threshold").count() == 1
        # The mutant softens every prohibition from the first compaction: its ring sits at round 1.
        cliff = page.page.locator('svg.survival circle.cliff[data-kind="prohibition"]')
        assert cliff.count() == 1 and cliff.get_attribute("data-round") == "1"
        assert page.page.locator("svg.survival circle.cliff").count() == 1  # nothing else falls below the threshold
        caption = page.page.locator('figure.kind-chart[data-kind="prohibition"] figcaption').inner_text()
        assert "below 90% from round 1" in caption
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
        page.page.locator("details.returned > summary").first.click()
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


def test_a_link_into_a_folded_earlier_report_opens_it(browser, tmp_path):
    files = []
    for name, document in (("mon", night(LITERAL, SUPERSESSION)), ("tue", night(LITERAL, THRESHOLD))):
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(document))
    out = tmp_path / "nightly.html"
    assert main(["report", *map(str, files), "-o", str(out)]) == 0
    page = _Page(browser, out)
    try:
        fixed = page.page.locator("#run1-failure2")  # Monday's supersession, fixed on Tuesday
        assert not fixed.is_visible()
        page.page.locator('table[data-trend="fixed"] a').click()
        assert fixed.is_visible() and fixed.get_attribute("data-invariant") == "supersession"
        assert page.page.evaluate("document.querySelector('#run1 details.run').open")
        assert page.page.evaluate("(() => { const r = document.getElementById('run1-failure2')"
                                  ".getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; })()")
        assert page.external() == []
        # Chromium opens a folded block a fragment points into by itself; the page's script does it for browsers
        # that do not: folded again, the script's reveal opens it.
        page.page.evaluate("document.querySelector('#run1 details.run').open = false")
        assert not fixed.is_visible()
        page.page.evaluate("reveal('run1-failure2')")
        assert fixed.is_visible()
    finally:
        page.close()
    page = _Page(browser, out)  # an address with the block's #id opens it too
    try:
        page.page.goto(page.url + "#run1-failure1")
        assert page.page.locator("#run1-failure1").is_visible()
    finally:
        page.close()
    page = _Page(browser, out, width=390, height=844)  # long file names in the headings still fit a phone
    try:
        overflow = page.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"the page is {overflow}px wider than a phone's screen"
    finally:
        page.close()


# -- the page's HTML, read without a browser ---------------------------------------------------------------------------

_VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "embed", "source", "track", "wbr"}


class _Node:
    def __init__(self, tag: str, attrs: dict, parent: _Node | None):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, attrs, parent, [], []
        if parent is not None:
            parent.children.append(self)

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def all(self, tag: str | None = None, cls: str | None = None) -> list[_Node]:
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and (cls is None or cls in child.classes):
                found.append(child)
            found += child.all(tag, cls)
        return found

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def inner_text(self) -> str:
        return "".join(self.text) + "".join(c.inner_text() for c in self.children)


class _Tree(HTMLParser):
    """The page as a tree of elements (enough of one for these tests)."""

    def __init__(self, html: str):
        super().__init__()
        self.root = self._at = _Node("#root", {}, None)
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        node = _Node(tag, dict(attrs), self._at)
        if tag not in _VOID:
            self._at = node

    def handle_startendtag(self, tag, attrs):
        _Node(tag, dict(attrs), self._at)

    def handle_endtag(self, tag):
        node = self._at
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self._at = node.parent

    def handle_data(self, data):
        self._at.text.append(data)

    def ids(self) -> dict[str, _Node]:
        return {n.attrs["id"]: n for n in self.root.all() if n.attrs.get("id")}


def _folded(node: _Node) -> bool:
    """Inside a closed <details>, and not its <summary>."""
    return any(a.tag == "details" and "open" not in a.attrs for a in node.ancestors()) and \
        not any(a.tag == "summary" for a in node.ancestors())


def test_the_index_has_one_link_per_finding_each_to_its_block_and_back(mutant_report):
    for document in (night(LITERAL, SUPERSESSION, THRESHOLD), mutant_report[0],
                     {k: v for k, v in night(LITERAL, THRESHOLD).items() if k != "findings"}):  # before version 3
        tree = _Tree(render_html([("this run", document)]))
        ids = tree.ids()
        (index,) = tree.root.all("table", "index")
        rows = index.all("tr")[1:]
        assert len(rows) == len(document.get("findings") or document["violations"])
        hrefs = []
        for row in rows:
            (link,) = [a for a in row.all("a") if a.attrs["href"].startswith("#")]
            hrefs.append(link.attrs["href"])
        assert len(set(hrefs)) == len(hrefs)
        for n, href in enumerate(hrefs):
            block = ids[href[1:]]  # resolves, to the block of the finding's violation
            assert block.tag == "article" and "failure" in block.classes
            assert block.attrs["data-invariant"] == document["violations"][n]["invariant"]
            (back,) = [a for a in block.all("a") if "back" in a.inner_text()]
            assert back.attrs["href"][1:] in ids and ids[back.attrs["href"][1:]].inner_text().startswith("Findings")
        assert len(tree.root.all("article", "failure")) == len(document["violations"])


def test_the_index_links_the_findings_row_to_the_violation_it_names():
    document = night(LITERAL, SUPERSESSION)
    document["findings"].reverse()  # rows in another order than the violations: each still finds its own block
    tree = _Tree(render_html([("this run", document)]))
    (index,) = tree.root.all("table", "index")
    links = [a for a in index.all("a")]
    assert [a.attrs["href"] for a in links] == ["#run1-failure2", "#run1-failure1"]
    assert [a.inner_text() for a in links] == ["supersession", "literal-verbatim"]


def test_the_index_tells_two_findings_of_one_invariant_apart_by_evidence_and_lists_the_other_kinds():
    dropped = violation("literal-verbatim", "literal_binding", also_kinds=("prohibition",))
    near = violation("literal-verbatim", "literal_binding", "near-miss")
    (index,) = _Tree(render_html([("this run", night(dropped, near))])).root.all("table", "index")
    rows = [[cell.inner_text() for cell in row.all("td")] for row in index.all("tr")[1:]]
    assert [row[2:4] for row in rows] == [["literal_binding (+ prohibition)", "absent"],
                                          ["literal_binding", "near-miss"]]


def test_each_transcript_and_returned_context_is_inside_a_closed_details_saying_what_is_in_it(mutant_report):
    for document in (night(LITERAL, SUPERSESSION), mutant_report[0]):
        tree = _Tree(render_html([("this run", document)]))
        articles = tree.root.all("article", "failure")
        assert len(articles) == len(document["violations"])
        for article, v in zip(articles, document["violations"]):
            (turns,) = article.all("ol", "turns")
            (context,) = article.all("div", "context")
            assert _folded(turns) and _folded(context)
            assert turns.parent.tag == "details" and "open" not in turns.parent.attrs
            summaries = [s.inner_text() for s in article.all("summary")]
            assert summaries[0].startswith(f"minimal transcript: {len(v['transcript']['turns'])} turns")
            assert summaries[1].startswith("what the summarizer returned: ")
            # What the finding is stays in view: its heading, its detail and its reproduce command.
            assert not any(_folded(n) for n in article.all("h3") + article.all("pre"))


def test_a_corpus_file_is_linked_relative_to_the_page_and_shown(tmp_path):
    entry = tmp_path / "corpus" / "5cf0916.json"
    entry.parent.mkdir()
    entry.write_text("{}")
    document = night(violation("literal-verbatim", corpus_file=str(entry)), SUPERSESSION)
    tree = _Tree(render_html([("this run", document)], html_path=str(tmp_path / "pages" / "report.html")))
    links = tree.root.all("a", "corpus-link")
    assert len(links) == 2  # in the index and in the block; the finding without an entry has none
    assert {a.attrs["href"] for a in links} == {"../corpus/5cf0916.json"}
    assert {a.inner_text() for a in links} == {str(entry)}
    article = tree.ids()["run1-failure1"]
    assert article.all("a", "corpus-link") and not tree.ids()["run1-failure2"].all("a", "corpus-link")
    # With no place for the page known, an absolute path is linked as a file: address.
    (unplaced,) = {a.attrs["href"] for a in _Tree(render_html([("this run", document)])).root.all("a", "corpus-link")}
    assert unplaced == entry.as_uri()
    # A path is only ever a path: never a script address, whatever the file says.
    hostile = night(violation("literal-verbatim", corpus_file="javascript:alert(1)"))
    for html_path in (None, str(tmp_path / "r.html")):
        (href,) = {a.attrs["href"] for a in _Tree(render_html([("this run", hostile)], html_path=html_path))
                   .root.all("a", "corpus-link")}
        assert ":" not in href


def test_report_links_a_relative_corpus_file_from_where_the_page_is_written(tmp_path, monkeypatch):
    night_dir, pages = tmp_path / "nights" / "mon", tmp_path / "site"
    (night_dir / "corpus").mkdir(parents=True)
    (night_dir / "corpus" / "e1.json").write_text("{}")
    (night_dir / "r.json").write_text(json.dumps(night(violation("literal-verbatim", corpus_file="corpus/e1.json"))))
    monkeypatch.chdir(night_dir)  # the run's directory: its corpus path is relative to it
    assert main(["report", "r.json", "-o", str(pages / "r.html")]) == 0
    (href,) = {a.attrs["href"] for a in _Tree((pages / "r.html").read_text()).root.all("a", "corpus-link")}
    assert (pages / href).resolve() == (night_dir / "corpus" / "e1.json").resolve()
    monkeypatch.chdir(tmp_path)  # rendered from elsewhere: the path is found beside the report it came from
    assert main(["report", str(night_dir / "r.json"), "-o", str(pages / "r2.html")]) == 0
    (href,) = {a.attrs["href"] for a in _Tree((pages / "r2.html").read_text()).root.all("a", "corpus-link")}
    assert (pages / href).resolve() == (night_dir / "corpus" / "e1.json").resolve()


def _survival(*sessions: tuple[int, int, int]) -> Survival:
    """(how many sessions, rounds each reached, the round from which they lose their literal) -> survival."""
    kept, lost = (("literal_binding", Tally(2, 2, 0)),), (("literal_binding", Tally(2, 0, 0)),)
    survival = Survival()
    for count, rounds, losing_from in sessions:
        for _ in range(count):
            survival = survival.add(tuple(kept if r < losing_from else lost for r in range(rounds)))
    return survival


def _chart_points(survival: Survival) -> tuple[_Tree, dict[str, str]]:
    document = {"summarizer": "x", "violations": [], "exit_code": 0, "survival": survival.to_dict()}
    tree = _Tree(render_html([("this run", document)]))
    (figure,) = tree.root.all("figure", "kind-chart")
    points = {c.attrs["data-round"]: c.inner_text() for c in figure.all("circle", "point")}
    return tree, points


def test_a_round_one_session_of_50_reached_is_left_out_and_the_caption_says_so():
    survival = _survival((49, 3, 99), (1, 4, 3))  # the one long session loses its literal at round 4
    assert survival.sessions == (50, 50, 50, 1)
    tree, points = _chart_points(survival)
    assert sorted(points) == ["1", "2", "3"]  # round 4 is not drawn; the well-populated rounds are
    assert points["1"].endswith("100 of 100 kept (50 sessions)")
    (curve,) = tree.root.all("path", "curve")
    assert curve.attrs["d"].count("L") == 2  # one line through the three rounds
    page = tree.root.inner_text()
    assert "Round 4 was reached by fewer than 5 sessions (of 50) and is left out of the charts" in page
    assert "below 90% from round 4, reached by 1 session(s): past the chart" in page
    assert not tree.root.all("circle", "cliff")  # its ring would sit off the chart
    (numbers,) = tree.root.all("table", "numbers")  # the numbers keep every round
    assert numbers.all("tr")[0].inner_text().endswith("1234")


def test_late_rounds_are_pooled_in_bins_with_their_shares_summed():
    # 40 sessions reach 30 rounds and lose their literal from round 11: bin 9-12 keeps 2 rounds of 4.
    survival = _survival((40, 30, 10))
    chart = chart_columns(survival)
    assert [c.label for c in chart.columns] == [*map(str, range(1, 9)), "9–12", "13–16", "17–24", "25–30"]
    assert chart.columns[8].share("literal_binding") == 0.5 and chart.charted == 30
    tree, points = _chart_points(survival)
    assert list(points) == [c.label for c in chart.columns] and "10" not in points
    assert points["9–12"].endswith("160 of 320 kept (40 sessions)")
    assert "Rounds 9 to 30 are pooled in bins (9–12, 13–16, 17–24, 25–30, shaded)" in tree.root.inner_text()
    (cliff,) = tree.root.all("circle", "cliff")
    assert cliff.attrs["data-round"] == "11"  # the first round below, in the bin that holds it
    # A short chart is not pooled.
    assert [c.label for c in chart_columns(_survival((40, 12, 99))).columns] == [*map(str, range(1, 13))]


def test_a_small_run_charts_every_round_its_sessions_reached():
    chart = chart_columns(_survival((2, 5, 99)))  # two sessions: fewer than 3, yet all there is
    assert chart.cutoff == 2 and chart.charted == 5
