"""The web page in headless Chromium (Debian's chromium, driven by Playwright): upload, ask, watch progress,
open a citation, read the passage. Saves a screenshot. The helpers here serve the tests/server/test_page_*.py too."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import Running

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")

SCREENSHOTS = Path(__file__).resolve().parents[2] / "bench-out" / "screenshots"
EVIL = '<script>window.__pwned = true</script><img src=x onerror="window.__pwned = true">'
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Recorded in the page before any of its own code runs: every Content-Security-Policy violation.
WATCH_CSP = (
    "window.__csp = []; document.addEventListener('securitypolicyviolation', "
    "(e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
)


def _open(browser, running: Running, **options):  # type: ignore[no-untyped-def]
    """A page with the key entered, watching for CSP violations (in the page and in the console).
    `options` go to `new_page` (locale, viewport); the interface language is English unless a locale is given."""
    page = browser.new_page(**{"locale": "en-US", **options})
    page.set_default_timeout(15_000)
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    page.add_init_script(WATCH_CSP)
    response = page.goto(running.url)
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    page.fill("#key", running.admin)
    page.dispatch_event("#key", "change")
    return page, console


def _no_csp_violation(page, console: list[str]) -> None:  # type: ignore[no-untyped-def]
    assert page.evaluate("window.__csp") == []
    assert not [m for m in console if "Content Security Policy" in m], console


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
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, console = _open(browser, running)
        expect(page.locator("#kb")).to_have_value("web")
        page.set_input_files("#file", str(doc))  # choosing files uploads them
        expect(page.locator("#documents li")).to_have_count(1)
        page.fill("#question", "What does error E1042 mean?")
        page.click("#ask")
        expect(page.locator(".turn .progress")).to_contain_text("searching")
        expect(page.locator(".turn .meta")).to_contain_text("answered", timeout=60_000)
        expect(page.locator(".turn .answer")).to_contain_text("too complex")
        page.locator(".turn .answer .cite").first.click()
        expect(page.locator("#passage")).to_be_visible()
        expect(page.locator("#passage-title")).to_have_text("Aurora")
        expect(page.locator("#passage-where")).to_contain_text("Aurora > Errors")
        expect(page.locator("#passage-text mark")).to_contain_text("E1042")
        expect(page.locator("#passage-text")).to_contain_text("<script>")
        assert page.evaluate("window.__pwned === undefined")
        _no_csp_violation(page, console)
        page.screenshot(path=str(SCREENSHOTS / "ask-and-cite.png"), full_page=True)
        browser.close()


def test_script_in_titles_bodies_and_file_names_never_runs(running: Running) -> None:
    from playwright.sync_api import expect, sync_playwright

    admin = running.client(running.admin)
    admin.post("/v1/kb", json={"name": "xss"})
    evil_title = "<script>window.__pwned = 1</script>Glacier notes"
    body = f"# {evil_title}\n\n## <img src=x onerror=window.__pwned=2>\n\nGlacier G7 melts {EVIL} at noon.\n"
    for name in ['<img src=x onerror="window.__pwned=3">.md', "<svg onload=window.__pwned=4>.md"]:
        uploaded = admin.post("/v1/kb/xss/documents", files={"file": (name, body.encode())})
        assert uploaded.status_code == 201, uploaded.text
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, console = _open(browser, running)
        expect(page.locator("#kb")).to_have_value("xss")
        expect(page.locator("#documents li")).to_have_count(2)
        expect(page.locator("#documents li").first).to_contain_text("Glacier notes")
        page.fill("#question", "When does glacier G7 melt?")
        page.click("#ask")
        expect(page.locator(".turn .meta")).to_contain_text("answered", timeout=60_000)
        page.locator(".turn .answer .cite").first.click()
        expect(page.locator("#passage-title")).to_contain_text("Glacier notes")
        expect(page.locator("#passage-text")).to_contain_text("Glacier G7 melts")
        assert page.locator("#passage script, #passage img, #documents img, .citations img, svg").count() == 0
        assert page.evaluate("window.__pwned === undefined")
        _no_csp_violation(page, console)
        browser.close()


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium under Playwright, closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, timeout=60_000)
        try:
            yield browser
        finally:
            browser.close()


def screenshot(page: Any, name: str, selector: str | None = None) -> None:
    """bench-out/screenshots/NAME.png (not committed: bench-out/ is ignored): the page, or one element of it."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = str(SCREENSHOTS / f"{name}.png")
    if selector:
        page.locator(selector).screenshot(path=path)
    else:
        page.screenshot(path=path, full_page=True)
