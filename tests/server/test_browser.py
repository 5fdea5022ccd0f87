"""The web page in headless Chromium (Debian's chromium, driven by Playwright): upload, ask, watch progress,
open a citation, read the passage. Saves a screenshot."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.server.conftest import Running

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")

SCREENSHOTS = Path(__file__).resolve().parents[2] / "bench-out" / "screenshots"
EVIL = '<script>window.__pwned = true</script><img src=x onerror="window.__pwned = true">'


def test_upload_ask_and_open_a_citation(running: Running, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    doc = tmp_path / "aurora.md"
    doc.write_text(
        "# Aurora\n\n## Errors\n\nError E1042 means the query is too complex: more than 128 clauses. "
        f"Raw text such as `{EVIL}` stays text.\n",
        encoding="utf-8",
    )
    running.client(running.admin).post("/v1/kb", json={"name": "web"})
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page()
        page.goto(running.url)
        page.fill("#key", running.admin)
        page.dispatch_event("#key", "change")
        expect(page.locator("#kb")).to_have_value("web")
        page.set_input_files("#file", str(doc))
        page.click("#upload-form button")
        expect(page.locator("#documents li")).to_have_count(1)
        page.fill("#question", "What does error E1042 mean?")
        page.click("#ask")
        expect(page.locator("#progress")).to_contain_text("searching")
        expect(page.locator("#meta")).to_contain_text("answered", timeout=60_000)
        expect(page.locator("#answer")).to_contain_text("too complex")
        page.locator("#answer .cite").first.click()
        expect(page.locator("#passage")).to_be_visible()
        expect(page.locator("#passage-title")).to_have_text("Aurora")
        expect(page.locator("#passage-where")).to_contain_text("Aurora > Errors")
        expect(page.locator("#passage-text mark")).to_contain_text("E1042")
        expect(page.locator("#passage-text")).to_contain_text("<script>")
        assert page.evaluate("window.__pwned === undefined")
        page.screenshot(path=str(SCREENSHOTS / "ask-and-cite.png"), full_page=True)
        browser.close()
