"""Search, answers (JSON or a server-sent-event stream) and the trace of every answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fastapi import HTTPException
from fastapi.responses import StreamingResponse

from agentrag.kb import KnowledgeBase
from agentrag.server import sse
from agentrag.server.deps import Key, ServiceDep, visible_kb
from agentrag.server.json_body import api_router
from agentrag.server.keys import ApiKey
from agentrag.server.limits import check_length
from agentrag.server.schemas import IN_KB, STREAMING, WITH_BODY, AskBody, SearchBody, error_responses
from agentrag.session import Sessions
from agentrag.trace import TraceEvent, read_trace
from agentrag.types import Answer

router = api_router(prefix="/v1/kb/{kb}", tags=["answers"])


@router.post("/search", responses=error_responses(*IN_KB, *WITH_BODY))
def search(kb: str, body: SearchBody, key: Key, service: ServiceDep) -> dict[str, Any]:
    knowledge_base = visible_kb(service, kb, key)
    flt = body.filter.to_filter() if body.filter else None
    hits = knowledge_base.search(body.query, body.k, body.channel, flt)
    return {"query": body.query, "hits": [h.contract() for h in hits]}


def _ask(
    sessions: Sessions,
    knowledge_base: KnowledgeBase,
    body: AskBody,
    key: ApiKey,
    on_event: Callable[[TraceEvent], None] | None = None,
    on_token: Callable[[str], None] | None = None,
) -> Answer:
    """Ask with the key's conversation and long-term memory; conversations are saved after each turn."""
    return sessions.ask(
        knowledge_base,
        body.question,
        owner=key.key_id,
        conversation_id=body.conversation_id,
        mode=body.mode,
        preset=body.preset,
        budget=body.budget,
        on_event=on_event,
        on_token=on_token,
    )


@router.post("/ask", response_model=None, responses={**STREAMING, **error_responses(*IN_KB, *WITH_BODY)})
def ask(kb: str, body: AskBody, key: Key, service: ServiceDep) -> dict[str, Any] | StreamingResponse:
    knowledge_base = visible_kb(service, kb, key)
    check_length("question", body.question, service.settings.server.max_question_chars)
    if not body.stream:
        return _ask(service.sessions, knowledge_base, body, key).contract()
    return sse.response(_stream(service.sessions, knowledge_base, body, key), {"X-Accel-Buffering": "no"})


def _stream(sessions: Sessions, knowledge_base: KnowledgeBase, body: AskBody, key: ApiKey) -> Iterator[str]:
    """progress and token events as they happen, then the citations, then one `done` with the answer."""

    def work(emit: sse.Emit) -> dict[str, Any]:
        def on_event(event: TraceEvent) -> None:
            if event.message:
                emit("progress", {"step": event.step, "round": event.round, "message": event.message})

        answer = _ask(
            sessions, knowledge_base, body, key, on_event=on_event, on_token=lambda t: emit("token", {"text": t})
        )
        for citation in answer.citations:
            emit("citation", citation.model_dump())
        return answer.contract()

    for kind, value in sse.run_streaming(work, "agentrag-ask"):
        yield sse.event(kind, {"detail": str(value)} if kind == sse.ERROR else value)


@router.get("/traces/{trace_id}", responses=error_responses(*IN_KB))
def trace(kb: str, trace_id: str, key: Key, service: ServiceDep) -> dict[str, Any]:
    visible_kb(service, kb, key)
    if not trace_id.isalnum():
        raise HTTPException(404, "no such trace")
    events = read_trace(service.layout.traces(kb), trace_id)
    if not events:
        raise HTTPException(404, "no such trace")
    return {"trace_id": trace_id, "events": [e.model_dump() for e in events]}
