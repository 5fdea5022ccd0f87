"""Each question's trace reaches OpenTelemetry as GenAI spans: the SDK's in-memory exporter receives one ask,
model-free and through the scripted LLM server (chat spans with token usage), with names, attributes and
parents as the conventions name them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentrag import telemetry
from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from tests.agent.test_agent_llm import QUESTION, by_role, docs, good_answer, open_kb, plan
from tests.llm_server import ScriptedLLM, error, text, tool_calls


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.enable(provider)
    yield exporter
    telemetry.reset()


def named(spans: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def root_of(spans: tuple[ReadableSpan, ...]) -> ReadableSpan:
    roots = [s for s in spans if s.parent is None]
    assert [s.name for s in roots] == ["invoke_agent agentrag"]
    return roots[0]


def parent_of(span: ReadableSpan, spans: tuple[ReadableSpan, ...]) -> ReadableSpan:
    assert span.parent is not None, span.name
    return next(s for s in spans if s.context.span_id == span.parent.span_id)


def assert_inside(child: ReadableSpan, parent: ReadableSpan) -> None:
    assert child.context.trace_id == parent.context.trace_id
    times = (parent.start_time, child.start_time, child.end_time, parent.end_time)
    assert None not in times
    assert sorted(times) == list(times)  # type: ignore[type-var]


def test_a_model_free_ask_is_an_agent_span_with_retrieval_spans(
    kb: KnowledgeBase, tmp_path: Path, exported: InMemorySpanExporter
) -> None:
    kb.ingest([docs(tmp_path / "docs")])
    answer = kb.ask("What caused INC-2291?", mode="single")
    spans = exported.get_finished_spans()
    root = root_of(spans)
    attributes = dict(root.attributes or {})
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.agent.name"] == "agentrag"
    assert attributes["gen_ai.data_source.id"] == "test"
    assert attributes["agentrag.trace_id"] == answer.trace_id
    assert attributes["agentrag.stop_reason"] == answer.stop_reason
    assert attributes["agentrag.mode"] == "single"
    assert "gen_ai.usage.input_tokens" not in attributes  # no model was called
    assert root.kind.name == "INTERNAL"
    assert root.instrumentation_scope is not None
    assert root.instrumentation_scope.schema_url == f"https://opentelemetry.io/schemas/{telemetry.SEMCONV_VERSION}"
    searches = named(spans, "retrieval ")
    assert [s.name for s in searches] == ["retrieval test"] * answer.usage.retrieval_calls
    search = dict(searches[0].attributes or {})
    assert search["gen_ai.operation.name"] == "retrieval"
    assert search["gen_ai.data_source.id"] == "test"
    assert int(search["agentrag.hits"]) >= 1  # type: ignore[call-overload]
    assert "gen_ai.retrieval.query.text" not in search  # content only when asked for
    for span in spans:
        if span is not root:
            assert_inside(span, root)
    assert not named(spans, "chat ")
    # Steps that took no time are events on the question's span.
    assert "agentrag.cite" in [e.name for e in root.events]


def test_query_text_is_captured_only_when_asked(
    kb: KnowledgeBase, tmp_path: Path, exported: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb.ingest([docs(tmp_path / "docs")])
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    kb.ask("What caused INC-2291?", mode="single")
    search = named(exported.get_finished_spans(), "retrieval ")[0]
    assert "INC-2291" in str((search.attributes or {})["gen_ai.retrieval.query.text"])


def test_an_agent_ask_with_a_model_has_chat_and_tool_spans_with_token_usage(
    tmp_path: Path, embedder: Embedder, exported: InMemorySpanExporter
) -> None:
    turns = iter(
        [
            tool_calls(
                [("semantic_search", {"query": "which team owns Kestrel"})], prompt_tokens=321, completion_tokens=12
            ),
            text("DONE", prompt_tokens=400, completion_tokens=3),
        ]
    )
    script = by_role(planner=plan("INC-2291 root cause service"), agent=lambda b: next(turns), synthesizer=good_answer)
    with ScriptedLLM(script) as llm:
        kb = open_kb(tmp_path, embedder, llm)
        kb.ingest([docs(tmp_path / "docs")])
        answer = kb.ask(QUESTION, mode="agent")
        kb.close()
    assert answer.stop_reason == "answered"
    spans = exported.get_finished_spans()
    root = root_of(spans)
    chats = named(spans, "chat ")
    assert len(chats) == len(llm.requests) == answer.usage.llm_calls
    assert sorted(s.name for s in chats) == sorted(f"chat {r['model']}" for r in llm.requests)
    port = int(llm.base_url.rsplit(":", 1)[1].split("/")[0])
    for chat in chats:
        attributes = dict(chat.attributes or {})
        assert chat.kind.name == "CLIENT"
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == "_OTHER"  # an OpenAI-compatible server on 127.0.0.1
        assert attributes["gen_ai.request.model"] == chat.name.removeprefix("chat ")
        assert attributes["server.address"] == "127.0.0.1"
        assert attributes["server.port"] == port
        assert_inside(chat, root)
    agent_calls = [dict(s.attributes or {}) for s in chats if s.name == "chat m-agent"]
    assert sorted((a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) for a in agent_calls) == [
        (321, 12),
        (400, 3),
    ]
    assert sorted(a["gen_ai.response.finish_reasons"] for a in agent_calls) == [("stop",), ("tool_calls",)]
    root_attributes = dict(root.attributes or {})
    assert root_attributes["gen_ai.usage.input_tokens"] == answer.usage.prompt_tokens
    assert root_attributes["gen_ai.usage.output_tokens"] == answer.usage.completion_tokens
    assert sum(int(dict(s.attributes or {})["gen_ai.usage.input_tokens"]) for s in chats) == answer.usage.prompt_tokens
    assert root_attributes["gen_ai.provider.name"] == "_OTHER"
    # A model call sits inside the step that made it.
    synthesizer = next(s for s in chats if s.name == "chat m-synthesizer")
    assert (synthesizer.attributes or {})["gen_ai.request.stream"] is True
    assert parent_of(synthesizer, spans).name == "agentrag.synthesize"
    for agent_call in (s for s in chats if s.name == "chat m-agent"):
        assert parent_of(agent_call, spans).name == "agentrag.agent"
        assert_inside(agent_call, parent_of(agent_call, spans))
    tool = named(spans, "execute_tool ")
    assert [s.name for s in tool] == ["execute_tool semantic_search"]
    tool_attributes = dict(tool[0].attributes or {})
    assert tool_attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_attributes["gen_ai.tool.name"] == "semantic_search"
    assert tool_attributes["gen_ai.tool.call.id"]
    assert parent_of(tool[0], spans) is root


def test_the_trace_file_records_every_model_call(
    tmp_path: Path, embedder: Embedder, exported: InMemorySpanExporter
) -> None:
    script = by_role(planner=plan("INC-2291 root cause service"), synthesizer=good_answer)
    with ScriptedLLM(script) as llm:
        kb = open_kb(tmp_path, embedder, llm)
        kb.ingest([docs(tmp_path / "docs")])
        answer = kb.ask(QUESTION, mode="single")
        kb.close()
    path = tmp_path / "home" / "traces" / "kb" / f"{answer.trace_id}.jsonl"
    events: list[dict[str, Any]] = [json.loads(line) for line in path.read_text().splitlines()]
    calls = [e for e in events if e["step"] == "llm"]
    assert len(calls) == answer.usage.llm_calls == len(llm.requests)
    assert sum(e["args"]["prompt_tokens"] for e in calls) == answer.usage.prompt_tokens
    assert {e["decision"] for e in calls} == {r["model"].removeprefix("m-") for r in llm.requests}
    assert all(e["message"] == "" for e in calls)  # no progress line for a model call


def test_an_ask_through_the_service_is_exported_too(
    tmp_path: Path, embedder: Embedder, exported: InMemorySpanExporter
) -> None:
    from agentrag.settings import load_settings
    from tests.server.conftest import serving

    settings = load_settings(tmp_path / "home", server={"requests_per_minute": 600})
    with KnowledgeBase.open("support", settings=settings, embedder=embedder) as kb:
        kb.ingest([docs(tmp_path / "docs")])
    with serving(settings) as service, service.client(service.key("support")) as client:
        reply = client.post("/v1/kb/support/ask", json={"question": "What caused INC-2291?", "mode": "single"})
    assert reply.status_code == 200, reply.text
    root = root_of(exported.get_finished_spans())
    assert (root.attributes or {})["agentrag.trace_id"] == reply.json()["trace_id"]
    assert (root.attributes or {})["gen_ai.data_source.id"] == "support"
    assert named(exported.get_finished_spans(), "retrieval support")


def test_a_failed_model_call_is_a_chat_span_with_its_error(
    tmp_path: Path, embedder: Embedder, exported: InMemorySpanExporter
) -> None:
    script = by_role(
        planner=lambda b: error(500, "planner overloaded"),
        agent=lambda b: text("DONE"),
        synthesizer=lambda b: error(503, "synthesizer overloaded"),
    )
    with ScriptedLLM(script) as llm:
        kb = open_kb(tmp_path, embedder, llm)
        kb.ingest([docs(tmp_path / "docs")])
        answer = kb.ask(QUESTION, mode="agent")
        kb.close()
    assert answer.stop_reason == "fallback"
    spans = exported.get_finished_spans()
    chats = {s.name: s for s in named(spans, "chat ")}
    for failed in ("chat m-planner", "chat m-synthesizer"):
        span = chats[failed]
        assert span.status.status_code.name == "ERROR"
        assert str((span.attributes or {})["error.type"]).startswith("LLM")
        assert (span.attributes or {})["gen_ai.usage.input_tokens"] == 0
    assert chats["chat m-agent"].status.status_code.name == "UNSET"
    # Failed calls are traced, not counted: the usage is what was spent.
    assert answer.usage.llm_calls == len(chats) - 2
