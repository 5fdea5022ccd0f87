"""The web page's library: several files uploaded at once, each with its own line (a refusal stays until
dismissed), and a document list with search, paging, file names, dates and tags."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrag.kb import KnowledgeBase
from agentrag.settings import Settings
from tests.server.conftest import Running, serving
from tests.server.test_browser import CHROMIUM, _no_csp_violation, _open, chromium, screenshot

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")

# Counts, as the list changes, how many upload lines show a file in flight at once.
WATCH_UPLOADS = """
window.__inFlight = 0;
new MutationObserver(() => {
  const n = document.querySelectorAll('#uploads li.uploading, #uploads li.indexing').length;
  window.__inFlight = Math.max(window.__inFlight, n);
}).observe(document, { subtree: true, childList: true });
"""


def test_several_files_upload_at_once_and_a_refusal_stays_visible(running: Running, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    running.client(running.admin).post("/v1/kb", json={"name": "uploads"})
    files = []
    for i in range(6):
        path = tmp_path / f"note-{i}.md"
        path.write_text(f"# Note {i}\n\nThe harbour crane H{i} lifts {i + 2} tonnes.\n", encoding="utf-8")
        files.append(str(path))
    refused = tmp_path / "diagram.png"
    refused.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    with chromium() as browser:
        page, console = _open(browser, running)
        page.add_init_script(WATCH_UPLOADS)
        page.reload()
        page.fill("#key", running.admin)
        page.dispatch_event("#key", "change")
        expect(page.locator("#kb")).to_have_value("uploads")
        page.set_input_files("#file", [*files, str(refused)])
        expect(page.locator("#uploads li")).to_have_count(7)
        expect(page.locator("#uploads li.done")).to_have_count(6, timeout=60_000)
        expect(page.locator("#uploads li.done").first).to_contain_text("added, 1 chunk")
        failed = page.locator("#uploads li.failed")
        expect(failed).to_have_count(1)
        expect(failed).to_contain_text("diagram.png")
        expect(failed).to_contain_text("415")
        expect(page.locator("#documents li")).to_have_count(6)
        assert page.evaluate("window.__inFlight") == 3  # bounded: three at a time, not one, not all
        # The list reloads (another upload, a search): the refusal is still there until dismissed.
        page.set_input_files("#file", files[0])
        expect(page.locator("#uploads li.done").last).to_contain_text("unchanged")
        page.fill("#doc-search", "note")
        expect(page.locator("#doc-count")).to_contain_text("of 6")
        expect(failed).to_contain_text("415")
        screenshot(page, "uploads")
        screenshot(page, "uploads-library", "#library")
        failed.locator(".dismiss").click()
        expect(page.locator("#uploads li.failed")).to_have_count(0)
        page.click("#clear-uploads")
        expect(page.locator("#uploads li")).to_have_count(0)
        _no_csp_violation(page, console)


@pytest.fixture
def many_documents(server_settings: Settings, tmp_path: Path) -> Iterator[Running]:
    """A knowledge base of 62 documents (two titled alike, in files of different names) before the server starts."""
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(60):
        (folder / f"report-{i:02d}.md").write_text(
            f"# Report {i:02d}\n\nQuarter {i} revenue was {i * 10} units.\n", encoding="utf-8"
        )
    (folder / "2024-05-01-meeting.md").write_text(
        "---\ndate: 2024-05-01\n---\n# Meeting notes\n\nWe chose the blue logo.\n", encoding="utf-8"
    )
    with KnowledgeBase.open("many", settings=server_settings) as kb:
        kb.ingest([folder])
        kb.ingest([folder / "2024-05-01-meeting.md"], {"team": "design"})
    second = tmp_path / "2025-02-03-meeting.md"
    second.write_text("---\ndate: 2025-02-03\n---\n# Meeting notes\n\nWe chose the green logo.\n", encoding="utf-8")
    with KnowledgeBase.open("many", settings=server_settings) as kb:
        kb.ingest([second], {"team": "ops"})
    with serving(server_settings) as service:
        yield service


def test_document_list_searches_and_pages(many_documents: Running) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page, console = _open(browser, many_documents)
        expect(page.locator("#kb")).to_have_value("many")
        docs = page.locator("#documents li")
        expect(page.locator("#doc-count")).to_have_text("1–50 of 62")
        expect(docs).to_have_count(50)
        expect(page.locator("#prev-page")).to_be_disabled()
        page.click("#next-page")
        expect(page.locator("#doc-count")).to_have_text("51–62 of 62")
        expect(docs).to_have_count(12)
        expect(page.locator("#next-page")).to_be_disabled()
        page.fill("#doc-search", "meeting")
        expect(page.locator("#doc-count")).to_have_text("1–2 of 2")
        expect(docs).to_have_count(2)
        # The same title twice, told apart by file name and date; tags shown.
        expect(docs.locator(".doc-title")).to_have_text(["Meeting notes", "Meeting notes"])
        facts = " ".join(docs.locator(".doc-facts").all_text_contents())
        assert "2024-05-01-meeting.md · 2024-05-01 · 1 chunk" in facts, facts
        assert "2025-02-03-meeting.md · 2025-02-03" in facts, facts
        expect(docs.locator(".tag")).to_have_count(2)
        assert sorted(docs.locator(".tag").all_text_contents()) == ["team=design", "team=ops"]
        screenshot(page, "documents")
        page.fill("#doc-search", "no such thing")
        expect(page.locator("#doc-count")).to_contain_text("No document matches")
        expect(docs).to_have_count(0)
        _no_csp_violation(page, console)
