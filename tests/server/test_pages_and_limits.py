"""PDF pages and parsing limits through the HTTP service: the answer's citation page is the quoted sentence's
page (JSON and the web page), and an upload that would take too much work is refused naming the limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrag.settings import Settings, load_settings
from tests.ingest.test_limits import docx_bomb
from tests.ingest.test_pages import two_page_pdf
from tests.server.conftest import Running
from tests.server.test_api import make_kb, upload
from tests.server.test_browser import ARGS, CHROMIUM, _open

QUESTION = "How often is sprocket replacement scheduled?"


def test_ask_cites_the_page_of_the_quoted_sentence(running: Running, tmp_path: Path) -> None:
    client = make_kb(running, "kb")
    assert upload(client, "kb", "handbook.pdf", two_page_pdf(tmp_path / "h.pdf").read_bytes()).status_code == 201
    answer = client.post("/v1/kb/kb/ask", json={"question": QUESTION}).json()
    (citation,) = [c for c in answer["citations"] if "Sprocket" in c["quote"]]
    assert citation["page"] == 2


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_the_web_page_shows_the_quoted_sentences_page(running: Running, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    pdf = two_page_pdf(tmp_path / "handbook.pdf")
    running.client(running.admin).post("/v1/kb", json={"name": "web"})
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, _ = _open(browser, running)
        expect(page.locator("#kb")).to_have_value("web")
        page.set_input_files("#file", str(pdf))  # choosing files uploads them
        expect(page.locator("#documents li")).to_have_count(1)
        page.fill("#question", QUESTION)
        page.click("#ask")
        expect(page.locator(".turn .meta")).to_contain_text("answered", timeout=60_000)
        expect(page.locator(".turn .citations")).to_contain_text("handbook.pdf · p.2")
        expect(page.locator(".turn .citations")).not_to_contain_text("p.1")
        page.locator(".turn .answer .cite").first.click()
        expect(page.locator("#passage-text mark")).to_contain_text("Sprocket")
        expect(page.locator("#passage-where")).to_contain_text("p.2")
        browser.close()


@pytest.fixture
def server_settings(tmp_path: Path) -> Settings:
    return load_settings(
        tmp_path / "home", server={"requests_per_minute": 600}, ingest={"limits": {"max_paragraphs": 1000}}
    )


def test_an_upload_over_a_parsing_limit_is_413_naming_it(running: Running, tmp_path: Path) -> None:
    client = make_kb(running, "kb")
    assert upload(client, "kb", "pumps.md", "# Pumps\n\nPump 7 is serviced every March.\n").status_code == 201
    response = upload(client, "kb", "bomb.docx", docx_bomb(tmp_path / "bomb.docx", 5000).read_bytes())
    assert response.status_code == 413
    assert "too many paragraphs: over 1,000 (setting ingest.limits.max_paragraphs)" in response.json()["detail"]
    assert [d["title"] for d in client.get("/v1/kb/kb/documents").json()["documents"]] == ["Pumps"]
