"""The OpenAI-compatible facade: `POST /v1/chat/completions`, where `model` names the knowledge base and
the earlier messages become the conversation. Works with the `openai` SDK, streaming included."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import HTTPException
from fastapi.responses import StreamingResponse

from agentrag.agent.memory import Conversation, Turn
from agentrag.kb import KnowledgeBase
from agentrag.server import sse
from agentrag.server.answer_text import assessment_lines
from agentrag.server.deps import Key, ServiceDep, visible_kb
from agentrag.server.json_body import api_router
from agentrag.server.limits import check_length
from agentrag.server.schemas import IN_KB, STREAMING, WITH_BODY, ChatCompletionBody, ChatMessage, error_responses
from agentrag.types import Answer

router = api_router(tags=["OpenAI-compatible"])


@dataclass
class _Completion:
    """One completion's identity, shared by the whole response or by every chunk of the stream."""

    model: str
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex[:24]}")
    created: int = field(default_factory=lambda: int(time.time()))

    def head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse.data({**self.head("chat.completion.chunk"), "choices": [choice], **extra})


def _conversation(messages: list[ChatMessage], last_question: ChatMessage) -> Conversation | None:
    """Earlier user/assistant pairs as the conversation; None when there are none."""
    conversation = Conversation(conversation_id="openai")
    history = [m for m in messages[: messages.index(last_question)] if m.role in ("user", "assistant")]
    for q, a in zip(history[::2], history[1::2], strict=False):
        if q.role == "user" and a.role == "assistant":
            conversation.turns.append(Turn(question=q.text(), answer=a.text()))
    return conversation if conversation.turns else None


def _with_sources(answer: Answer) -> str:
    """The answer, then its Sources block: the cited passages, the confidence and any sources that disagree."""
    lines = [
        f"[{c.n}] {c.title or Path(c.source).name}" + (f" — {c.heading}" if c.heading else "") for c in answer.citations
    ]
    block = (["Sources:", *lines] if lines else []) + assessment_lines(answer)
    return answer.answer + ("\n\n" + "\n".join(block) if block else "")


@router.post(
    "/v1/chat/completions",
    response_model=None,
    responses={**STREAMING, **error_responses(*IN_KB, *WITH_BODY)},  # 404: `model` names no knowledge base
)
def chat_completions(body: ChatCompletionBody, key: Key, service: ServiceDep) -> dict[str, Any] | StreamingResponse:
    """`model` names the knowledge base; earlier messages become the conversation."""
    knowledge_base = visible_kb(service, body.model, key)
    for i, message in enumerate(body.messages):  # every message goes to the rewriter or the embedder
        check_length(f"messages[{i}]", message.text(), service.settings.server.max_question_chars)
    user_turns = [m for m in body.messages if m.role == "user"]
    if not user_turns:
        raise HTTPException(422, "messages: at least one user message is required")
    question = user_turns[-1].text()
    conversation = _conversation(body.messages, user_turns[-1])
    completion = _Completion(model=body.model)
    if body.stream:
        return sse.response(_stream(knowledge_base, question, conversation, completion, body.budget))
    answer = knowledge_base.ask(question, conversation=conversation, budget=body.budget)
    return {
        **completion.head("chat.completion"),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": _with_sources(answer)}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": answer.usage.prompt_tokens,
            "completion_tokens": answer.usage.completion_tokens,
            "total_tokens": answer.usage.prompt_tokens + answer.usage.completion_tokens,
        },
        "citations": [c.model_dump() for c in answer.citations],
        "agentrag": answer.contract(),
    }


def _stream(
    knowledge_base: KnowledgeBase,
    question: str,
    conversation: Conversation | None,
    completion: _Completion,
    budget: dict[str, Any] | None = None,
) -> Iterator[str]:
    """Tokens as the answer is written; then the sources, a note if the citation check changed anything,
    and a final chunk carrying the checked citations."""
    events = sse.run_streaming(
        lambda emit: knowledge_base.ask(
            question, conversation=conversation, budget=budget, on_token=lambda t: emit("token", t)
        ),
        "agentrag-chat",
    )
    yield completion.chunk({"role": "assistant", "content": ""})
    streamed: list[str] = []
    for kind, value in events:
        if kind == "token":
            streamed.append(value)
            yield completion.chunk({"content": value})
        elif kind == sse.ERROR:
            yield completion.chunk({"content": f"Sorry, the answer failed: {value}"}, "stop")
        else:
            yield from _final_chunks(value, completion, streamed=bool(streamed))
    yield sse.data("[DONE]")


def _final_chunks(answer: Answer, completion: _Completion, streamed: bool) -> Iterator[str]:
    tail = _with_sources(answer)[len(answer.answer) :]
    if answer.unsupported:
        note = f"{len(answer.unsupported)} sentence(s) above are not supported by the cited passages."
        tail = f"\n\n(Citation check: {note})" + tail
    if not streamed:
        tail = answer.answer + tail
    yield completion.chunk({"content": tail})
    yield completion.chunk({}, "stop", citations=[c.model_dump() for c in answer.citations], agentrag=answer.contract())
