"""Short answers, confidence and conflicting sources through the HTTP service: the ask endpoint (JSON and the
SSE `done` event), the OpenAI-compatible chat facade, and the web page in headless Chromium."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.helpers import ASK_KEYS, HOTEL, KESTREL_SLA, assert_hotel_conflict
from tests.server.conftest import SERVICE_ASK_KEYS, Running
from tests.server.test_api import make_kb, upload
from tests.server.test_browser import ARGS, CHROMIUM, EVIL, SCREENSHOTS, _open


def kb_with(running: Running, files: dict[str, str]) -> httpx.Client:
    client = make_kb(running, "kb")
    for name, content in files.items():
        assert upload(client, "kb", name, content).status_code == 201
    return client


def sse_events(client: httpx.Client, path: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """(event name, data) of a stream; the OpenAI stream's unnamed events come as ("", data)."""
    events: list[tuple[str, Any]] = []
    with client.stream("POST", path, json=body) as response:
        assert response.status_code == 200
        name = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and line != "data: [DONE]":
                events.append((name, json.loads(line[6:])))
    return events


def test_ask_reports_the_conflict_newest_first_in_json_and_in_the_stream(running: Running) -> None:
    client = kb_with(running, HOTEL.files)
    answer = client.post("/v1/kb/kb/ask", json={"question": HOTEL.question}).json()
    assert set(answer) == SERVICE_ASK_KEYS
    assert_hotel_conflict(answer)
    assert answer["confidence"] == "high"
    assert answer["answer"].index("500") < answer["answer"].index("450"), "the value in force leads"

    events = sse_events(client, "/v1/kb/kb/ask", {"question": HOTEL.question, "stream": True})
    name, done = events[-1]
    assert name == "done"
    assert set(done) == SERVICE_ASK_KEYS
    assert_hotel_conflict(done)
    assert done["confidence"] == "high"


def test_the_chat_facade_shows_confidence_and_the_sources_that_disagree(running: Running) -> None:
    client = kb_with(running, HOTEL.files)
    question = {"model": "kb", "messages": [{"role": "user", "content": HOTEL.question}]}
    completion = client.post("/v1/chat/completions", json=question).json()
    content = completion["choices"][0]["message"]["content"]
    answer, sources = content.split("\n\nSources:\n")
    assert answer == completion["agentrag"]["answer"]
    lines = sources.splitlines()
    assert lines[0].startswith("[1] ")
    assert "Confidence: high" in lines
    disagree = next(i for i, line in enumerate(lines) if line.startswith("Sources disagree"))
    assert lines[disagree + 1].startswith("- 500 元/晚: travel-2025.md, 2025-01-01 [")
    assert lines[disagree + 1].endswith("(in force)")
    assert lines[disagree + 2].startswith("- 450 元/晚: travel-2024.md, 2024-03-01 [")
    assert set(completion["agentrag"]) == ASK_KEYS
    assert_hotel_conflict(completion["agentrag"])
    assert completion["citations"]

    chunks = [data for _, data in sse_events(client, "/v1/chat/completions", {**question, "stream": True})]
    streamed = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert "Confidence: high" in streamed
    assert "(in force)" in streamed
    assert_hotel_conflict(chunks[-1]["agentrag"])


def test_an_unanswerable_question_says_no_evidence_with_low_confidence(running: Running) -> None:
    client = kb_with(running, KESTREL_SLA.files)
    answer = client.post("/v1/kb/kb/ask", json={"question": KESTREL_SLA.question}).json()
    assert answer["stop_reason"] == "no_evidence"
    assert answer["confidence"] == "low"
    assert answer["short_answer"] is None
    assert answer["conflicts"] == []
    chat = {"model": "kb", "messages": [{"role": "user", "content": KESTREL_SLA.question}]}
    content = client.post("/v1/chat/completions", json=chat).json()["choices"][0]["message"]["content"]
    assert content.splitlines()[-1] == "Confidence: low (the passages may not answer this)"


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_the_page_shows_the_short_answer_a_confidence_badge_and_the_conflicts(running: Running) -> None:
    from playwright.sync_api import expect, sync_playwright

    policies = dict(HOTEL.files)  # a title the answer quotes carries markup, which must stay text
    old_title = "title: 差旅费管理办法（2024 版）"
    policies["travel-2024.md"] = policies["travel-2024.md"].replace(old_title, f"{old_title}{EVIL}", 1)
    kb_with(running, policies)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, _ = _open(browser, running)
        expect(page.locator("#kb")).to_have_value("kb")
        page.fill("#question", HOTEL.question)
        page.click("#ask")
        turn = page.locator(".turn").last  # the page is a conversation: each answer is a turn
        expect(turn.locator(".meta")).to_contain_text("answered", timeout=60_000)
        expect(turn.locator(".short-answer")).to_have_text("500 元/晚")
        expect(turn.locator(".badge")).to_have_text("high confidence")
        expect(turn.locator(".badge")).to_have_class("badge high")
        expect(turn.locator(".confidence-note")).to_have_text("the passages answer the question")
        sides = turn.locator(".conflicts tbody tr")  # value · source · date · in force
        expect(sides).to_have_count(2)
        for text in ("500 元/晚", "travel-2025.md", "2025-01-01"):
            expect(sides.nth(0)).to_contain_text(text)
        expect(sides.nth(0).locator(".in-force")).to_have_text("in force")
        for text in ("450 元/晚", "travel-2024.md", "2024-03-01"):
            expect(sides.nth(1)).to_contain_text(text)
        expect(sides.nth(1).locator(".in-force")).to_have_count(0)
        sides.nth(1).locator(".cite").click()
        expect(page.locator("#passage-text mark")).to_contain_text("450 元/晚")
        expect(turn.locator(".answer")).to_contain_text("<script>")
        assert page.evaluate("window.__pwned === undefined")
        page.screenshot(path=str(SCREENSHOTS / "short-answer-and-conflicts.png"), full_page=True)

        page.fill("#question", KESTREL_SLA.question)
        page.click("#ask")
        turn = page.locator(".turn").nth(1)
        expect(turn.locator(".badge")).to_have_text("low confidence", timeout=60_000)
        expect(turn.locator(".confidence-note")).to_have_text("the passages may not answer this")
        expect(turn.locator(".short-answer")).to_be_hidden()
        expect(turn.locator(".conflicts")).to_be_hidden()
        browser.close()
