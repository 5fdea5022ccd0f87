"""Conversations and long-term memory (`agentrag.session.Sessions`), as `agentrag chat` and the service use them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentrag.agent.memory import Conversation, Turn
from agentrag.cli import app
from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.layout import Layout
from agentrag.session import LOCAL_OWNER, Sessions
from agentrag.settings import load_settings
from agentrag.trace import read_trace
from tests.helpers import write

runner = CliRunner()
PLANS = (
    "# Plans\n\n## Enterprise\n\nThe Enterprise plan costs 25,000 yuan a month. It allows 3,000 requests per minute.\n"
)
FACT = "I work on the Enterprise plan billing."


def ingested_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    write(tmp_path / "d" / "plans.md", PLANS)
    result = runner.invoke(app, ["ingest", str(tmp_path / "d"), "--home", str(home)])
    assert result.exit_code == 0, result.output
    return home


def chat(home: Path, *lines: str, conversation: str | None = None) -> list[dict]:
    args = ["chat", "--home", str(home), "--json", "--mode", "single"]
    result = runner.invoke(
        app, [*args, *(["--conversation", conversation] if conversation else [])], input="\n".join(lines) + "\n"
    )
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]


def memory_facts(home: Path, trace_id: str) -> list[list[str]]:
    events = read_trace(Layout(home).traces("default"), trace_id)
    return [e.args["facts"] for e in events if e.step == "memory"]


def test_a_fact_stated_in_chat_reaches_a_later_answer_as_through_the_service(tmp_path: Path) -> None:
    home = ingested_home(tmp_path)
    _first, later = chat(home, f"{FACT} What does it cost?", "What does the Enterprise plan billing cost?")
    assert memory_facts(home, later["trace_id"]) == [[FACT]], "the trace shows the remembered fact that was used"
    # a later chat session remembers it too: long-term memory outlives the conversation
    (again,) = chat(home, "What does the Enterprise plan billing cost?")
    assert memory_facts(home, again["trace_id"]) == [[FACT]]
    with Sessions(load_settings(home)) as sessions:
        assert [f.text for f in sessions.facts(LOCAL_OWNER)] == [FACT]
        assert sessions.facts("3f9a1c2b7d4e") == [], "an API key never sees the local user's facts"
        assert sessions.forget(LOCAL_OWNER, sessions.facts(LOCAL_OWNER)[0].fact_id)
        assert sessions.facts(LOCAL_OWNER) == []


def test_chat_resumes_a_conversation_saved_by_an_earlier_version(tmp_path: Path) -> None:
    home = ingested_home(tmp_path)
    saved = Conversation(conversation_id="c1")
    saved.turns.append(
        Turn(
            question="How much does the Enterprise plan cost?", answer="The Enterprise plan costs 25,000 yuan a month."
        )
    )
    path = Layout(home).conversations / "c1.json"  # where `chat --conversation c1` has always kept it
    write(path, json.dumps(saved.model_dump(), ensure_ascii=False))
    (follow,) = chat(home, "and how many requests per minute does it allow?", conversation="c1")
    assert "Enterprise" in follow["search_query"]
    assert "3,000 requests per minute" in follow["answer"]
    stored = Conversation.model_validate_json(path.read_text(encoding="utf-8"))
    assert [t.question for t in stored.turns] == [saved.turns[0].question, follow["question"]]


def test_new_starts_a_named_conversation_over(tmp_path: Path) -> None:
    home = ingested_home(tmp_path)
    chat(home, "How much does the Enterprise plan cost?", conversation="c2")
    chat(home, "/new", "What is the Enterprise plan?", conversation="c2")
    stored = Conversation.model_validate_json((Layout(home).conversations / "c2.json").read_text(encoding="utf-8"))
    assert [t.question for t in stored.turns] == ["What is the Enterprise plan?"]


def test_each_key_has_its_own_conversations_beside_the_local_ones(tmp_path: Path, embedder: Embedder) -> None:
    home = ingested_home(tmp_path)
    settings = load_settings(home)
    with Sessions(settings, embedder) as sessions, KnowledgeBase.open(settings=settings, embedder=embedder) as kb:
        sessions.ask(kb, "How much does the Enterprise plan cost?", owner="3f9a1c2b7d4e", conversation_id="c1")
        local = sessions.ask(kb, "and how many requests per minute?", owner=LOCAL_OWNER, conversation_id="c1")
        follow = sessions.ask(kb, "and how many requests per minute?", owner="3f9a1c2b7d4e", conversation_id="c1")
        assert "Enterprise" in follow.search_query, "the key's conversation has its first question"
        assert "Enterprise" not in local.search_query, "the local conversation of the same name does not"
        assert len(sessions.conversation("3f9a1c2b7d4e", "c1").turns) == 2
    names = sorted(p.name for p in Layout(home).conversations.iterdir())
    assert names == ["3f9a1c2b7d4e-c1.json", "c1.json"], "the service's file names are unchanged"
