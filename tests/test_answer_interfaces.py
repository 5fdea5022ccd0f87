"""Short answers, confidence and conflicting sources where a person meets them: the command line (JSON and
text) and the LLM synthesizer's prompt. The HTTP service, the chat facade and the web page are in
tests/server/test_answer_fields.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentrag.cli import app
from agentrag.embed.base import Embedder
from tests.agent.test_agent_llm import by_role, cite, open_kb
from tests.helpers import ASK_KEYS, HOTEL, KESTREL_SLA, Corpus, assert_hotel_conflict
from tests.llm_server import Reply, ScriptedLLM, prompt_text, text

runner = CliRunner()


def cli(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def ingested(tmp_path: Path, corpus: Corpus) -> str:
    home = str(tmp_path / "home")
    cli("ingest", str(corpus.write(tmp_path / "docs")), "--home", home)
    return home


def test_ask_json_reports_the_conflict_newest_first_and_answers_with_the_policy_in_force(tmp_path: Path) -> None:
    home = ingested(tmp_path, HOTEL)
    answer = json.loads(cli("ask", HOTEL.question, "--home", home, "--json"))
    assert set(answer) == ASK_KEYS
    assert_hotel_conflict(answer)
    assert answer["stop_reason"] == "answered"
    assert answer["confidence"] == "high"
    text = answer["answer"]
    assert text.index("500") < text.index("450"), "the value in force leads, the older one follows"
    assert "2025-01-01" in text
    assert "2024-03-01" in text


def test_ask_text_leads_with_the_short_answer_and_ends_with_confidence_and_the_sources_that_disagree(
    tmp_path: Path,
) -> None:
    home = ingested(tmp_path, HOTEL)
    lines = [line.rstrip() for line in cli("ask", HOTEL.question, "--home", home).splitlines() if line.strip()]
    assert lines[0] == "Answer: 500 元/晚"
    at = {name: next(i for i, line in enumerate(lines) if line.startswith(name)) for name in ("Sources", "Confidence")}
    assert 0 < at["Sources"] < at["Confidence"], "the answer, then its sources, then how sure it is"
    assert lines[at["Confidence"]] == "Confidence: high"
    disagree = next(i for i, line in enumerate(lines) if line.startswith("Sources disagree"))
    newer, older = lines[disagree + 1], lines[disagree + 2]
    assert re.fullmatch(r"\s*500 元/晚\s+travel-2025\.md, 2025-01-01 \[\d+\]\s+in force", newer), newer
    assert re.fullmatch(r"\s*450 元/晚\s+travel-2024\.md, 2024-03-01 \[\d+\]", older), older


def test_ask_text_warns_when_the_passages_may_not_answer(tmp_path: Path) -> None:
    home = ingested(tmp_path, KESTREL_SLA)
    output = cli("ask", KESTREL_SLA.question, "--home", home)
    assert "Answer:" not in output, "no short answer when nothing answers the question"
    assert "Confidence: low (the passages may not answer this)" in output
    assert "Sources disagree" not in output


def test_the_llm_synthesizer_is_told_which_sources_disagree(tmp_path: Path, embedder: Embedder) -> None:
    def synthesizer(body: dict[str, Any]) -> Reply:
        new, old = cite(body, "500 元/晚"), cite(body, "450 元/晚")
        return text(f"自 2025 年起一线城市住宿标准为 500 元/晚 [{new}]；2024 版为 450 元/晚 [{old}]。")

    with ScriptedLLM(by_role(synthesizer=synthesizer)) as llm:
        kb = open_kb(tmp_path, embedder, llm)
        try:
            kb.ingest([HOTEL.write(tmp_path / "docs")])
            answer = kb.ask(HOTEL.question, mode="single")
        finally:
            kb.close()
    prompt = prompt_text(next(r for r in llm.requests if r["model"] == "m-synthesizer"))
    notes = prompt[prompt.index("Sources that disagree") :].splitlines()
    assert notes[1] == "<<<", "what the documents say about the conflict is quoted, as data"
    assert "500 元/晚 (2025-01-01)" in notes[2]
    assert "450 元/晚 (2024-03-01)" in notes[2]
    assert "in force: 500 元/晚" in notes[2]
    assert notes[3] == ">>>"
    assert answer.usage.llm_calls >= 1
    assert answer.unsupported == []
    assert_hotel_conflict(answer.contract())
