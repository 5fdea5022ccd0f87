"""What a failure that is not the LLM's does to an answer: the evidence already found is answered from, the
stop reason says `fallback`, and the trace names the cause. Failures come from a real embeddings endpoint
on 127.0.0.1 (tests/embeddings_server.py) that crashes or stalls on some queries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrag.kb import KnowledgeBase
from agentrag.trace import TraceEvent
from tests.agent.test_agent_llm import ROLES, by_role, cause_answer, docs, plan
from tests.embeddings_server import EmbeddingsEndpoint
from tests.helpers import write
from tests.llm_server import ScriptedLLM, text, tool_calls

QUESTION = "Which is older, the Falcon bridge or the Osprey tunnel?"


def crossings(root: Path) -> Path:
    write(root / "falcon.md", "# Falcon bridge\n\nThe Falcon bridge was built in 1931 over the Tamar river.\n")
    write(root / "osprey.md", "# Osprey tunnel\n\nThe Osprey tunnel opened in 1978 under the harbour.\n")
    return root


def open_kb(endpoint: EmbeddingsEndpoint, home: Path, corpus: Path, **settings: Any) -> KnowledgeBase:
    kb = KnowledgeBase.open("kb", settings=endpoint.settings(home, **settings), search_cache=False)
    kb.ingest([corpus])
    kb.search("bridge")  # loads what a first search loads, so a tight tool timeout measures only the endpoint
    return kb


def fallback_reasons(events: list[TraceEvent]) -> list[str]:
    return [e.reason for e in events if e.step == "fallback"]


def test_an_embedder_failing_mid_question_leaves_an_answer_from_what_was_found(tmp_path: Path) -> None:
    with EmbeddingsEndpoint(fail=lambda query: "Osprey" in query) as endpoint:
        kb = open_kb(endpoint, tmp_path / "home", crossings(tmp_path / "docs"))
        events: list[TraceEvent] = []
        answer = kb.ask(QUESTION, mode="agent", on_event=events.append)
        kb.close()
    assert any("Falcon" in q for q in endpoint.queries)
    assert any("Osprey" in q for q in endpoint.queries)
    assert answer.stop_reason == "fallback"
    assert "1931" in answer.answer, "the Falcon search had succeeded: its passage answers"
    assert "falcon.md" in {Path(c.source).name for c in answer.citations}
    assert answer.evidence
    assert all("Falcon" in e.found_by for e in answer.evidence)
    reasons = fallback_reasons(events)
    assert reasons
    assert "answered 500" in reasons[0]
    assert "embedding model crashed" in reasons[0]
    assert endpoint.url in reasons[0]
    assert (events[-1].step, events[-1].decision) == ("done", "fallback")


def test_a_stalled_query_embedding_is_cut_by_the_tool_timeout(tmp_path: Path) -> None:
    with EmbeddingsEndpoint(hold=lambda query: 8.0 if "Osprey" in query else 0.0) as endpoint:
        kb = open_kb(endpoint, tmp_path / "home", crossings(tmp_path / "docs"))
        events: list[TraceEvent] = []
        budget = {"tool_timeout_s": 1.5, "max_seconds": 6.0}
        answer = kb.ask(QUESTION, mode="agent", budget=budget, on_event=events.append)
        kb.close()
    assert answer.stop_reason == "fallback"
    assert "1931" in answer.answer
    assert "timed out after 1.5s" in fallback_reasons(events)[0]
    assert answer.usage.ms < (1.5 + 3.0) * 1000, "the stalled embedding did not hold the question"


@pytest.fixture
def llm_corpus(tmp_path: Path) -> Path:
    return docs(tmp_path / "incident-docs")


def llm_settings(llm: ScriptedLLM) -> dict[str, Any]:
    return {
        "base_url": llm.base_url,
        "api_key": "test-key",
        "model": "m-default",
        "role_models": {r: f"m-{r}" for r in ROLES},
        "max_retries": 0,
    }


def test_a_tool_search_that_breaks_falls_back_to_the_fixed_pipeline_with_the_plans_evidence(
    tmp_path: Path, llm_corpus: Path
) -> None:
    from tests.agent.test_agent_llm import QUESTION as INCIDENT

    agent = tool_calls([("semantic_search", {"query": "who leads the storage team"})])
    script = by_role(planner=plan("INC-2291 root cause service"), agent=lambda b: agent, synthesizer=cause_answer)
    with (
        EmbeddingsEndpoint(fail=lambda query: "storage team" in query) as endpoint,
        ScriptedLLM(script) as llm,
    ):
        kb = open_kb(endpoint, tmp_path / "home", llm_corpus, llm=llm_settings(llm))
        events: list[TraceEvent] = []
        answer = kb.ask(INCIDENT, mode="agent", on_event=events.append)
        kb.close()
    assert answer.stop_reason == "fallback"
    assert "caused by Kestrel" in answer.answer
    assert {Path(c.source).name for c in answer.citations} == {"postmortem.md"}
    assert "embedding model crashed" in fallback_reasons(events)[0]
    assert answer.usage.llm_calls == len(llm.requests)


def test_a_tool_search_whose_embedding_stalls_is_a_timeout_the_model_is_told(tmp_path: Path, llm_corpus: Path) -> None:
    from tests.agent.test_agent_llm import QUESTION as INCIDENT

    turns = iter([tool_calls([("semantic_search", {"query": "who leads the storage team"})]), text("DONE")])
    script = by_role(planner=plan("INC-2291 root cause service"), agent=lambda b: next(turns), synthesizer=cause_answer)
    with (
        EmbeddingsEndpoint(hold=lambda query: 8.0 if "storage team" in query else 0.0) as endpoint,
        ScriptedLLM(script) as llm,
    ):
        kb = open_kb(endpoint, tmp_path / "home", llm_corpus, llm=llm_settings(llm))
        answer = kb.ask(INCIDENT, mode="agent", budget={"tool_timeout_s": 1.5})
        kb.close()
    tool_messages = [m["content"] for r in llm.requests for m in r["messages"] if m.get("role") == "tool"]
    assert any("timed out" in m for m in tool_messages)
    assert "caused by Kestrel" in answer.answer
    assert answer.usage.ms < (1.5 + 3.0) * 1000


def test_a_definition_lookup_that_fails_leaves_the_answer_from_what_was_found(tmp_path: Path) -> None:
    """Nothing found defines E7421, so the answer searches for the code alone; that search's embedding crashes. The
    answer still comes, from the first search's evidence, and says it fell back, naming the cause."""
    with EmbeddingsEndpoint(fail=lambda query: query.strip() == "E7421") as endpoint:
        kb = open_kb(endpoint, tmp_path / "home", crossings(tmp_path / "docs"))
        events: list[TraceEvent] = []
        answer = kb.ask("What is E7421?", mode="single", on_event=events.append)
        kb.close()
    assert any(q.strip() == "E7421" for q in endpoint.queries), "the lookup searched for the code alone"
    assert answer.stop_reason == "fallback"
    assert answer.evidence, "the first search's passages are kept"
    reasons = fallback_reasons(events)
    assert reasons
    assert "definition lookup failed" in reasons[0]
    assert "embedding model crashed" in reasons[0]
