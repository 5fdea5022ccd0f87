"""Independent searches of one question run side by side, and give exactly what one after another gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.settings import Settings
from agentrag.trace import TraceEvent
from agentrag.types import Answer
from tests.agent.test_agent_llm import QUESTION as BRIDGE_QUESTION
from tests.agent.test_agent_llm import docs
from tests.agent.test_failures import QUESTION, crossings
from tests.embeddings_server import EmbeddingsEndpoint

# Timeouts are not under test here: a busy machine must not turn a slow search into a fallback.
PATIENT = {"tool_timeout_s": 30.0, "max_seconds": 120.0}
PLANS = "Which costs more, the Standard plan or the Enterprise plan?"


def plans(root: Path) -> Path:
    crossings(root)
    docs(root)
    (root / "plans.md").write_text(
        "# Plans\n\n## Standard plan\n\nThe Standard plan costs 3,000 yuan per month.\n\n## Team plan\n\n"
        "The Team plan costs 9,000 yuan per month.\n\n## Enterprise plan\n\nThe Enterprise plan costs 25,000 "
        "yuan per month.\n",
        encoding="utf-8",
    )
    return root


def seen(answer: Answer, events: list[TraceEvent]) -> dict[str, Any]:
    """Everything a user can see of an answer's searching: the evidence in order, the searches, the text."""
    return {
        "evidence": [(e.chunk.chunk_id, e.grade, e.found_by, e.round) for e in answer.evidence],
        "searches": [(e.round, e.args["query"], e.decision, e.reason) for e in events if e.step == "search"],
        "answer": answer.answer,
        "citations": [(c.n, c.chunk_id) for c in answer.citations],
        "retrieval_calls": answer.usage.retrieval_calls,
    }


def test_parallel_searches_give_the_evidence_and_order_of_sequential_ones(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    corpus = plans(tmp_path / "docs")
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder, search_cache=False) as kb:
        kb.ingest([corpus])
        for question in (PLANS, BRIDGE_QUESTION, QUESTION):
            runs = []
            for parallel in (1, 4):
                events: list[TraceEvent] = []
                answer = kb.ask(
                    question, mode="agent", budget={"parallel_searches": parallel, **PATIENT}, on_event=events.append
                )
                runs.append(seen(answer, events))
            assert runs[0] == runs[1], question
            assert runs[0]["retrieval_calls"] >= 2


def test_a_rounds_searches_are_in_flight_together(tmp_path: Path) -> None:
    with EmbeddingsEndpoint() as endpoint:
        kb = KnowledgeBase.open("kb", settings=endpoint.settings(tmp_path / "home"), search_cache=False)
        kb.ingest([plans(tmp_path / "docs")])
        endpoint.barrier(2)
        answer = kb.ask(PLANS, mode="agent", budget=PATIENT)
        kb.close()
    assert endpoint.max_in_flight == 2, "the two planned searches embedded their queries side by side"
    assert answer.stop_reason == "answered"
    assert "3,000 yuan" in answer.answer
    assert "25,000 yuan" in answer.answer


def test_one_parallel_search_means_one_at_a_time(tmp_path: Path) -> None:
    with EmbeddingsEndpoint(hold=lambda query: 0.3) as endpoint:
        kb = KnowledgeBase.open("kb", settings=endpoint.settings(tmp_path / "home"), search_cache=False)
        kb.ingest([plans(tmp_path / "docs")])
        kb.ask(BRIDGE_QUESTION, mode="agent", budget={"parallel_searches": 1, **PATIENT})
        kb.close()
    assert endpoint.max_in_flight == 1
