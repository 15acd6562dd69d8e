"""Regenerate docs/report.png: the HTML report of the bundled example summarizer, as the README shows it.

    python docs/make_screenshot.py

Runs ``compaction-harness run`` (the README's first command, with a fixed seed) writing
docs/example-report.html, then photographs its top (the summary, the survival curves and the first
failures) in Debian's Chromium (``python tests/assets/fetch_assets.py`` installs it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from harness._app.cli._main import main

DOCS = Path(__file__).resolve().parent
CHROMIUM = os.environ.get("COMPACTION_HARNESS_CHROMIUM", "/usr/bin/chromium")
SEED = "3"


def make() -> None:
    html = DOCS / "example-report.html"
    code = main(["run", "--seed", SEED, "--quiet", "--report-html", str(html)])
    if code != 1:  # the bundled example breaks invariants on purpose
        sys.exit(f"make_screenshot: expected the example run to exit 1, got {code}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                    "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1100, "height": 1900}, device_scale_factor=1)
        page.goto(html.as_uri())
        page.screenshot(path=str(DOCS / "report.png"))
        browser.close()
    print(f"wrote {DOCS / 'report.png'} and {html}")


if __name__ == "__main__":
    make()
