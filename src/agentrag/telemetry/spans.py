"""A question's trace as OpenTelemetry spans, following the GenAI semantic conventions (`SEMCONV_VERSION`).

    invoke_agent agentrag            the question: mode, stop reason, token totals, the knowledge base
      retrieval <kb>                 a search (TraceStep.SEARCH): hits, round
      execute_tool <tool>            a tool the agent model called (TraceStep.TOOL)
      agentrag.<step>                any other step that took time (synthesize, grade, agent...)
        chat <model>                 a model call (TraceStep.LLM): provider, models, input/output tokens

Spans are written when the question is done, with the times the events recorded (an event is emitted when
its step ends, `ms` after it began). A span's parent is the innermost step that began before it and ended
after it (emitted later); steps that took no time are events on the question's span. Texts of the question,
queries and passages are left out unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from agentrag.telemetry import SEMCONV_VERSION
from agentrag.trace import TraceEvent
from agentrag.vocab import StopReason, TraceStep

AGENT_NAME = "agentrag"
_EPSILON_S = 0.0005  # the events' ms are rounded; a step begun this much later still contains a span
# `gen_ai.provider.name` by the endpoint's host; any other OpenAI-compatible server is `_OTHER`.
_PROVIDERS = {
    "api.openai.com": "openai",
    "openai.azure.com": "azure.ai.openai",
    "api.deepseek.com": "deepseek",
    "api.groq.com": "groq",
    "api.mistral.ai": "mistral_ai",
    "api.x.ai": "x_ai",
    "api.perplexity.ai": "perplexity",
    "generativelanguage.googleapis.com": "gcp.gemini",
}


def provider_name(endpoint: str) -> str:
    host = (urlsplit(endpoint).hostname or "").lower()
    return next(
        (name for suffix, name in _PROVIDERS.items() if host == suffix or host.endswith("." + suffix)), "_OTHER"
    )


def _capture_content() -> bool:
    return os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() == "true"


@dataclass
class _Step:
    event: TraceEvent
    start_s: float = field(init=False)

    def __post_init__(self) -> None:
        self.start_s = self.event.ts - self.event.ms / 1000

    def contains(self, other: _Step) -> bool:
        return other.event.seq < self.event.seq and self.start_s <= other.start_s + _EPSILON_S


def _version() -> str:
    try:
        return version("agentrag")
    except PackageNotFoundError:  # run from a source tree without an install
        return "0+unknown"


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)


class SpanWriter:
    def __init__(self, tracer_provider: Any) -> None:
        self.tracer = trace.get_tracer(
            "agentrag", _version(), tracer_provider, schema_url=f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
        )

    def write(self, events: Sequence[TraceEvent], knowledge_base: str) -> None:
        if not events:
            return
        done = next((e for e in reversed(events) if e.step == TraceStep.DONE), events[-1])
        calls = [e for e in events if e.step == TraceStep.LLM]
        start_s = min(done.ts - done.ms / 1000, *(e.ts - e.ms / 1000 for e in events))
        root = self.tracer.start_span(
            f"invoke_agent {AGENT_NAME}",
            kind=SpanKind.INTERNAL,
            attributes=_agent_attributes(done, calls, knowledge_base),
            start_time=_ns(start_s),
        )
        timed = [_Step(e) for e in events if e.step != TraceStep.DONE and (e.ms > 0 or e.step == TraceStep.LLM)]
        spans: dict[int, Span] = {}
        for step in sorted(timed, key=lambda s: s.event.seq, reverse=True):  # containers (emitted later) first
            parent = _parent(step, timed)
            context = trace.set_span_in_context(spans[parent.event.seq] if parent else root)
            name, kind, attributes = _describe(step.event, knowledge_base)
            span = self.tracer.start_span(name, context, kind, attributes, start_time=_ns(step.start_s))
            _set_status(span, step.event)
            spans[step.event.seq] = span
        for event in events:
            if event.ms <= 0 and event.step not in (TraceStep.LLM, TraceStep.DONE):
                root.add_event(f"agentrag.{event.step}", _step_attributes(event), timestamp=_ns(event.ts))
        ends = {e.seq: e.ts for e in events}
        for seq in sorted(spans):  # children end before their parents
            spans[seq].end(end_time=_ns(ends[seq]))
        _set_status(root, done, errors=[e for e in events if e.step == TraceStep.ERROR])
        root.end(end_time=_ns(max(done.ts, *(e.ts for e in events))))


def _parent(step: _Step, timed: list[_Step]) -> _Step | None:
    """The innermost step (not a model call) that began before `step` and ended after it."""
    containers = [s for s in timed if s.event.step != TraceStep.LLM and s.contains(step)]
    return min(containers, key=lambda s: s.event.seq, default=None)


def _agent_attributes(done: TraceEvent, calls: list[TraceEvent], knowledge_base: str) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": AGENT_NAME,
        "gen_ai.data_source.id": knowledge_base,
        "agentrag.trace_id": done.trace_id,
        "agentrag.mode": str(done.args.get("mode", "")),
        "agentrag.stop_reason": done.decision,
        "agentrag.citations": int(done.args.get("citations", 0)),
    }
    if calls:
        first = calls[0].args
        attributes["gen_ai.provider.name"] = provider_name(str(first.get("endpoint", "")))
        attributes["gen_ai.request.model"] = str(first.get("model", ""))
        attributes["gen_ai.usage.input_tokens"] = sum(int(c.args.get("prompt_tokens", 0)) for c in calls)
        attributes["gen_ai.usage.output_tokens"] = sum(int(c.args.get("completion_tokens", 0)) for c in calls)
    return attributes


def _describe(event: TraceEvent, knowledge_base: str) -> tuple[str, SpanKind, dict[str, Any]]:
    """A timed step's span: its name, kind and attributes."""
    if event.step == TraceStep.LLM:
        return _chat(event)
    attributes = _step_attributes(event)
    if event.step == TraceStep.SEARCH:
        attributes |= {"gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": knowledge_base}
        attributes["agentrag.hits"] = int(event.args.get("hits", 0))
        if _capture_content():
            attributes["gen_ai.retrieval.query.text"] = str(event.args.get("query", ""))
        return f"retrieval {knowledge_base}", SpanKind.INTERNAL, attributes
    if event.step == TraceStep.TOOL:
        tool = str(event.args.get("tool") or event.decision.split(":")[0])
        attributes |= {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function",
        }
        if event.args.get("call_id"):
            attributes["gen_ai.tool.call.id"] = str(event.args["call_id"])
        if _capture_content():
            attributes["gen_ai.tool.call.result"] = event.preview
        return f"execute_tool {tool}", SpanKind.INTERNAL, attributes
    return f"agentrag.{event.step}", SpanKind.INTERNAL, attributes


def _chat(event: TraceEvent) -> tuple[str, SpanKind, dict[str, Any]]:
    args = event.args
    model = str(args.get("model", ""))
    endpoint = urlsplit(str(args.get("endpoint", "")))
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider_name(str(args.get("endpoint", ""))),
        "gen_ai.request.model": model,
        "gen_ai.usage.input_tokens": int(args.get("prompt_tokens", 0)),
        "gen_ai.usage.output_tokens": int(args.get("completion_tokens", 0)),
        "gen_ai.request.stream": bool(args.get("stream", False)),
        "agentrag.llm_role": event.decision,
    }
    if args.get("response_model"):
        attributes["gen_ai.response.model"] = str(args["response_model"])
    if event.reason:
        attributes["gen_ai.response.finish_reasons"] = [event.reason]
    if endpoint.hostname:
        attributes["server.address"] = endpoint.hostname
        attributes["server.port"] = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    return f"chat {model}", SpanKind.CLIENT, attributes


def _step_attributes(event: TraceEvent) -> dict[str, Any]:
    attributes: dict[str, Any] = {"agentrag.step": str(event.step), "agentrag.decision": event.decision}
    if event.round:
        attributes["agentrag.round"] = event.round
    if event.step != TraceStep.AGENT:  # the agent step's reason is the model's own words
        attributes["agentrag.reason"] = event.reason
    return attributes


def _set_status(span: Span, event: TraceEvent, errors: Sequence[TraceEvent] = ()) -> None:
    if event.step == TraceStep.LLM:
        if event.args.get("error") or event.reason == "error":
            kind = str(event.args.get("error") or "error")
            span.set_attribute("error.type", kind)
            span.set_status(Status(StatusCode.ERROR, kind))
        return
    failed = (event.step == TraceStep.TOOL and event.decision.endswith(": error")) or (
        event.step == TraceStep.DONE and event.decision == StopReason.ERROR
    )
    if not failed:
        return
    why = errors[-1].reason if errors else event.reason
    span.set_attribute("error.type", why.split(":")[0] or "error")
    span.set_status(Status(StatusCode.ERROR, why))
