"""The web page's answers on the bundled sample: a conversation whose follow-up resolves a reference, the
"not found" state, short answer / confidence / conflicts / tables, one numbered list of sources, a Chinese
knowledge-base name, the Chinese interface and the phone width."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from tests.server.conftest import Running, serving
from tests.server.test_browser import CHROMIUM, EVIL, _no_csp_violation, _open, chromium, screenshot

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
ANSWERED = 60_000  # ms: an answer on a slow, shared machine


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """One server for the module, the sample ingested once as knowledge base `sample`."""
    settings = load_settings(tmp_path_factory.mktemp("sample") / "home", server={"requests_per_minute": 600})
    with KnowledgeBase.open("sample", settings=settings) as kb:
        kb.ingest([Path(str(files("agentrag") / "sample" / "docs"))])
    with serving(settings) as service:
        yield service


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def _ask(page: Any, question: str) -> Any:
    """Ask in the page; the new turn once its answer is in."""
    from playwright.sync_api import expect

    before = page.locator(".turn").count()
    page.fill("#question", question)
    page.click("#ask")
    turn = page.locator(".turn").nth(before)
    expect(turn.locator(".meta")).to_be_visible(timeout=ANSWERED)
    return turn


def _sample_page(browser: Any, sample: Running, **options: Any) -> tuple[Any, list[str]]:
    from playwright.sync_api import expect

    page, console = _open(browser, sample, **options)
    expect(page.locator("#kb option[value=sample]")).to_have_count(1)
    page.select_option("#kb", "sample")
    return page, console


def test_a_follow_up_resolves_its_reference_until_a_new_conversation(browser: Any, sample: Running) -> None:
    from playwright.sync_api import expect

    page, console = _sample_page(browser, sample)
    first = _ask(page, "What does error E1042 mean?")
    expect(first.locator(".short-answer")).to_contain_text("too complex")
    second = _ask(page, "How do I avoid it?")
    # "it" is E1042: the follow-up was searched with the conversation, so its sources are about E1042.
    expect(second.locator(".citations")).to_contain_text("E1042")
    expect(page.locator(".turn")).to_have_count(2)
    expect(page.locator(".turn .question")).to_contain_text(["What does error E1042 mean?", "How do I avoid it?"])
    screenshot(page, "conversation")
    screenshot(page, "conversation-answers", "#qa")
    page.click("#new-conversation")
    expect(page.locator(".turn")).to_have_count(0)
    alone = _ask(page, "How do I avoid it?")
    expect(alone.locator(".citations")).not_to_contain_text("E1042")
    _no_csp_violation(page, console)
    page.close()


def test_an_unanswerable_question_is_shown_as_not_found(browser: Any, sample: Running) -> None:
    from playwright.sync_api import expect

    page, console = _sample_page(browser, sample)
    turn = _ask(page, "Kestrel 的可用性 SLA 是多少？")
    expect(turn.locator(".not-found")).to_have_text("Not found: nothing in the knowledge base answers this question.")
    expect(turn.locator(".short-answer")).to_have_count(0)
    expect(turn.locator(".badge")).to_have_text("low confidence")
    # What came closest is folded away under a label that says it is not the answer.
    closest = turn.locator("details.closest")
    expect(closest.locator("summary")).to_have_text("Closest passages (they do not answer it)")
    expect(closest.locator(".answer")).to_be_hidden()
    expect(closest.locator(".answer")).not_to_contain_text("知识库中没有找到")  # the lead is the notice now
    screenshot(page, "not-found")
    closest.locator("summary").click()
    expect(closest.locator(".answer")).to_contain_text("99.95%")
    expect(closest.locator(".citations li").first).to_be_visible()
    _no_csp_violation(page, console)
    page.close()


def _markers_and_sources(turn: Any) -> tuple[list[str], list[str]]:
    markers = turn.locator(".answer .cite").all_text_contents()
    sources = turn.locator(".citations > li > .cite").all_text_contents()
    return markers, sources


def test_short_answer_conflicts_and_table_rows(browser: Any, sample: Running) -> None:
    from playwright.sync_api import expect

    page, console = _sample_page(browser, sample)
    turn = _ask(page, "出差住宿标准是多少？")
    expect(turn.locator(".short-answer")).to_have_text("500 元/晚")
    expect(turn.locator(".badge")).to_have_text("high confidence")
    conflict = turn.locator(".conflicts table")
    expect(conflict.locator("th")).to_have_text(["Value", "Source", "Date", "in force"])
    expect(conflict.locator("tbody tr")).to_have_count(2)
    expect(conflict.locator("tr.current")).to_contain_text("500 元/晚")
    expect(conflict.locator("tr.current")).to_contain_text("expense-policy-2025.md")
    expect(conflict.locator("tr.current")).to_contain_text("2024-12-20")
    expect(conflict.locator(".in-force")).to_have_count(1)
    # "城市类别: 一线城市，员工: 500 元/晚，…" rows of the answer are a table, not a run of colons and commas.
    rows = turn.locator(".answer table.answer-table")
    expect(rows.first.locator("th")).to_contain_text(["城市类别", "员工", "经理及以上"])
    expect(rows.first).to_contain_text("650 元/晚")
    # One numbered list: each source is numbered by its marker, once, and every marker has its source.
    markers, sources = _markers_and_sources(turn)
    assert markers
    assert set(markers) <= set(sources), (markers, sources)
    assert len(sources) == len(set(sources))
    assert turn.locator(".citations").evaluate("e => getComputedStyle(e).listStyleType") == "none"
    assert all(re.fullmatch(r"\[\d+\]", s) for s in sources)
    _no_csp_violation(page, console)
    page.close()


RENDER = """([text, evil]) => {
  const byNumber = new Map([[1, {n: 1, chunk_id: "x#0", source: "a.md", quote: evil}]]);
  const box = document.createElement("div");
  box.id = "rendered";
  box.append(...renderText(text, byNumber));
  document.body.appendChild(box);
  return box.innerHTML.length;
}"""


def test_answer_text_lists_and_pipe_tables_become_elements_never_markup(browser: Any, sample: Running) -> None:
    """An LLM's answer with a pipe table and lists (document text inside it stays text)."""
    from playwright.sync_api import expect

    page, console = _sample_page(browser, sample)
    text = (
        "Limits by plan:\n| Plan | Limit |\n|---|---|\n| Basic | 64 clauses [1] |\n"
        f"| {EVIL} | 128 |\nSteps:\n- simplify the query [1]\n- send expand: false\n1. first\n2. second"
    )
    page.evaluate(RENDER, [text, EVIL])
    box = page.locator("#rendered")
    expect(box.locator("table th")).to_have_text(["Plan", "Limit"])
    expect(box.locator("table tbody tr")).to_have_count(2)
    expect(box.locator("table td").nth(1)).to_contain_text("64 clauses")
    expect(box.locator("table td .cite")).to_have_text("[1]")
    expect(box.locator("table")).to_contain_text("<script>")
    expect(box.locator("ul li")).to_have_text(["simplify the query [1]", "send expand: false"])
    expect(box.locator("ol li")).to_have_text(["first", "second"])
    assert box.locator("script, img").count() == 0
    assert "|" not in box.inner_text().replace(EVIL, "")
    assert page.evaluate("window.__pwned === undefined")
    _no_csp_violation(page, console)
    page.close()


def test_a_sentence_quoting_json_is_not_taken_for_a_table_row(browser: Any, sample: Running) -> None:
    """ "Errors return {"error": {"code": "...", "message": "...", "request_id": "..."}}" (the sample's E1042 answer)
    was drawn as a table headed `Errors return {"error"`, `"message"`, `"request_id"`: its quoted JSON keys were
    taken for a row's "key: value" pairs. A row written out as pairs still becomes a table."""
    from playwright.sync_api import expect

    page, console = _sample_page(browser, sample)
    json_sentence = 'Errors return {"error": {"code": "...", "message": "...", "request_id": "..."}}[1].'
    page.evaluate(RENDER, [f"Code: E1042, HTTP: 400, Meaning: Query too complex[1]. {json_sentence}", EVIL])
    box = page.locator("#rendered")
    expect(box.locator("table")).to_have_count(1)
    expect(box.locator("table th")).to_have_text(["Code", "HTTP", "Meaning", ""])
    expect(box.locator("p")).to_contain_text('Errors return {"error": {"code": "...", "message"')
    _no_csp_violation(page, console)
    page.close()


def test_chinese_interface_and_a_chinese_knowledge_base_name(browser: Any, sample: Running, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page, console = _sample_page(browser, sample, locale="zh-CN")
    expect(page.locator("#ask")).to_have_text("提问")
    expect(page.locator("#library h2")).to_have_text("文档")
    expect(page.locator("#new-conversation")).to_have_text("新对话")
    turn = _ask(page, "出差住宿标准是多少？")
    expect(turn.locator(".badge")).to_have_text("可信度：高")
    page.click("#lang")
    expect(page.locator("#ask")).to_have_text("Ask")
    expect(turn.locator(".badge")).to_have_text("high confidence")  # the answers shown follow the language
    page.click("#lang")
    expect(page.locator("#ask")).to_have_text("提问")
    probe = sample.client(sample.admin).post("/v1/kb", json={"name": "探测"})
    if probe.status_code == 422:
        page.close()
        pytest.skip(f"the service refuses knowledge-base names in Chinese (display names not merged yet): {probe.text}")
    page.click("#new-kb")
    page.fill("#new-kb-name", "网页测试")
    page.click("#new-kb-form button[type=submit]")
    expect(page.locator("#kb option:checked")).to_contain_text("网页测试")
    doc = tmp_path / "笔记.md"
    doc.write_text("# 笔记\n\n鹭岛的潮汐每天两次。\n", encoding="utf-8")
    page.set_input_files("#file", str(doc))
    expect(page.locator("#documents li")).to_have_count(1, timeout=ANSWERED)
    turn = _ask(page, "鹭岛的潮汐每天几次？")
    expect(turn.locator(".answer")).to_contain_text("两次")
    screenshot(page, "chinese-kb")
    _no_csp_violation(page, console)
    page.close()


def test_phone_width_stays_clean(browser: Any, sample: Running) -> None:
    from playwright.sync_api import expect

    page, console = _sample_page(browser, sample, viewport={"width": 390, "height": 844})
    turn = _ask(page, "出差住宿标准是多少？")
    expect(turn.locator(".conflicts")).to_be_visible()
    # Nothing sticks out sideways: no horizontal scrolling of the page.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), page.evaluate(
        "[document.documentElement.scrollWidth, window.innerWidth]"
    )
    library, qa = page.locator("#library").bounding_box(), page.locator("#qa").bounding_box()
    assert library is not None
    assert qa is not None
    assert qa["y"] >= library["y"] + library["height"] - 1  # one column: stacked
    screenshot(page, "phone")
    _no_csp_violation(page, console)
    page.close()
