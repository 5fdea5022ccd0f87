"""The assistant model-free, end to end on real files: every role's rule or extractive implementation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrag.agent.memory import Conversation, ConversationStore
from agentrag.embed.base import Embedder
from agentrag.errors import ConfigError
from agentrag.kb import KnowledgeBase
from agentrag.settings import Settings
from agentrag.trace import read_trace
from tests.helpers import write


@pytest.fixture
def kb(settings: Settings, embedder: Embedder, tmp_path: Path) -> Iterator[KnowledgeBase]:
    root = tmp_path / "docs"
    write(
        root / "plans.md",
        "# Plans\n\n## Standard plan\n\nThe Standard plan costs 3,000 yuan per month and "
        "allows 600 requests per minute.\n\n## Enterprise plan\n\nThe Enterprise plan costs 25,000 yuan per month "
        "and allows 3,000 requests per minute.\n",
    )
    write(
        root / "errors.md",
        "# Error codes\n\nError E1042 means the query is too complex: it has more than 128 "
        "clauses after synonym expansion.\n\nError E1029 means the rate limit was exceeded.\n",
    )
    write(root / "报销.md", "# 报销制度\n\n## 住宿\n\n一线城市员工出差住宿标准为每晚五百元，经理为每晚六百五十元。\n")
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as knowledge_base:
        knowledge_base.ingest([root])
        yield knowledge_base


def test_single_answer_is_extracted_and_cited(kb: KnowledgeBase, settings: Settings) -> None:
    answer = kb.ask("What does error E1042 mean?", mode="single")
    assert answer.stop_reason == "answered"
    assert "too complex" in answer.answer
    assert answer.citations
    assert Path(answer.citations[0].source).name == "errors.md"
    assert "E1042" in answer.citations[0].quote
    assert answer.unsupported == []
    assert answer.usage.llm_calls == 0
    assert answer.usage.retrieval_calls == 1
    steps = [e.step for e in read_trace(settings.home / "traces" / "kb", answer.trace_id)]
    assert steps[0] == "search"
    assert steps[-1] == "done"


def test_chinese_question_gets_a_chinese_cited_answer(kb: KnowledgeBase) -> None:
    answer = kb.ask("出差住宿标准是多少？")
    assert "五百元" in answer.answer
    assert Path(answer.citations[0].source).name == "报销.md"


def test_auto_routes_comparisons_to_the_agent_which_searches_each_side(kb: KnowledgeBase) -> None:
    events = []
    answer = kb.ask("Which costs more, the Standard plan or the Enterprise plan?", on_event=events.append)
    assert answer.mode == "agent"
    plan = next(e for e in events if e.step == "plan")
    assert len(plan.args["subqueries"]) == 2
    assert "3,000 yuan" in answer.answer
    assert "25,000 yuan" in answer.answer
    assert answer.usage.retrieval_calls >= 2


def test_greetings_are_answered_without_searching(kb: KnowledgeBase) -> None:
    answer = kb.ask("你好")
    assert (answer.mode, answer.usage.retrieval_calls, answer.citations) == ("direct", 0, [])
    assert "知识库" in answer.answer


def test_follow_ups_are_searched_as_standalone_questions(kb: KnowledgeBase, settings: Settings) -> None:
    store = ConversationStore(settings.home / "conversations")
    conversation = store.load("c1")
    kb.ask("How much does the Enterprise plan cost?", mode="single", conversation=conversation)
    answer = kb.ask("and how many requests per minute does it allow?", mode="single", conversation=conversation)
    assert "Enterprise" in answer.search_query
    assert "3,000 requests per minute" in answer.answer
    store.save(conversation)
    again = store.load("c1")
    assert [t.question for t in again.turns] == [
        "How much does the Enterprise plan cost?",
        "and how many requests per minute does it allow?",
    ]
    with pytest.raises(ConfigError, match="conversation_id"):
        store.load("../../etc/passwd")


def test_older_turns_are_summarised(kb: KnowledgeBase) -> None:
    conversation = Conversation(conversation_id="c", keep_verbatim=2)
    for q in ["What does E1042 mean?", "What does E1029 mean?", "How much is the Standard plan?"]:
        kb.ask(q, mode="single", conversation=conversation)
    assert len(conversation.turns) == 2
    assert "E1042" in conversation.summary
    assert "E1042" in conversation.history_text()


def test_failed_questions_are_recorded_with_their_trace(kb: KnowledgeBase, settings: Settings) -> None:
    budget = {"max_retrieval_calls": 1, "max_rounds": 1, "max_llm_calls": 0, "max_seconds": 20.0}
    answer = kb.ask("What does error E1042 mean?", mode="agent", budget=budget)
    assert answer.stop_reason == "answered"
    empty = KnowledgeBase.open("empty", settings=settings, embedder=kb.embedder)
    nothing = empty.ask("What does error E1042 mean?", mode="single", budget=budget)
    empty.close()
    assert nothing.stop_reason == "no_evidence"
    assert nothing.citations == []
    for spent in (answer, nothing):  # the budget held, by the run's own account
        assert spent.usage.llm_calls <= budget["max_llm_calls"]
        assert spent.usage.retrieval_calls <= budget["max_retrieval_calls"]
        assert spent.usage.ms <= (budget["max_seconds"] + 2.0) * 1000
    rows = [json.loads(line) for line in (settings.home / "failures.jsonl").read_text().splitlines()]
    assert [(r["kb"], r["stop_reason"], r["trace_id"]) for r in rows] == [("empty", "no_evidence", nothing.trace_id)]


def test_bad_arguments_are_clear_errors(kb: KnowledgeBase) -> None:
    with pytest.raises(ConfigError, match="unknown mode"):
        kb.ask("x", mode="turbo")
    with pytest.raises(ConfigError, match="unknown preset"):
        kb.ask("x", preset="turbo")
    with pytest.raises(ConfigError, match="empty question"):
        kb.ask("   ")


def test_repeat_guard_refuses_paraphrases_but_not_queries_about_other_things(kb: KnowledgeBase) -> None:
    from agentrag.agent.budget import BudgetTracker, load_preset
    from agentrag.agent.tools import ToolBox

    box = ToolBox(kb.retriever, BudgetTracker(load_preset("balanced")), lambda chunk_id: None)
    embed = kb.embedder.embed_queries
    for earlier in ["INC-2291 root cause", "标准版价格", "E1042 meaning"]:
        box.remember(earlier, embed([earlier])[0])
    assert box.repeat_of("INC-2291 root cause service", embed(["INC-2291 root cause service"])[0])
    assert box.repeat_of("the root cause of INC-2291", embed(["the root cause of INC-2291"])[0])
    assert box.repeat_of("企业版价格", embed(["企业版价格"])[0]) is None
    assert box.repeat_of("E1029 meaning", embed(["E1029 meaning"])[0]) is None
    result = box.run("semantic_search", '{"query": "INC-2291 root cause"}')
    assert not result.ok
    assert "repeats an earlier one" in result.content
    # The refusal's own advice: the same code with exact-term search is a new search, not a repeat.
    assert box.run("keyword_search", '{"query": "E1042"}').ok
    assert box.run("keyword_search", '{"query": "INC-2291 root cause"}').ok
    assert not box.run("keyword_search", '{"query": "INC-2291 root cause"}').ok
    box.close()


def test_model_free_agent_follows_a_bridge_entity(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    from tests.agent.test_agent_llm import QUESTION, docs

    with KnowledgeBase.open("bridge", settings=settings, embedder=embedder) as kb:
        kb.ingest([docs(tmp_path / "bridge-docs")])
        events = []
        answer = kb.ask(QUESTION, on_event=events.append)
    assert answer.mode == "agent"
    bridge = next(e for e in events if e.step == "sufficiency")
    assert any(q.startswith("Kestrel") for q in bridge.args["queries"])
    top = [Path(e.chunk.source).name for e in answer.evidence[:3]]
    assert {"postmortem.md", "teams.md"} <= set(top)
    assert "Zhang Wei" in answer.answer
