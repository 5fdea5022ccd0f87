"""The OpenAI-compatible facade: `POST /v1/chat/completions`, where `model` names the knowledge base and
the earlier messages become the conversation. Works with the `openai` SDK, streaming included."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import HTTPException
from fastapi.responses import StreamingResponse

from agentrag.agent.memory import Conversation, Turn
from agentrag.kb import KnowledgeBase
from agentrag.server import sse
from agentrag.server.answer_text import answer_body, sources_block
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


def _sources_tail(answer: Answer) -> str:
    """What follows the answer: its Sources block (cited passages, confidence, any sources that disagree)."""
    block = sources_block(answer)
    return "\n\n" + "\n".join(block) if block else ""


def _usage(answer: Answer) -> dict[str, int]:
    """The tokens this answer's LLM calls spent, as the endpoint counted them (0 model-free, or from the cache)."""
    prompt, completion = answer.usage.prompt_tokens, answer.usage.completion_tokens
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _with_sources(answer: Answer) -> str:
    return answer_body(answer) + _sources_tail(answer)


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
        usage_chunk = bool(body.stream_options and body.stream_options.include_usage)
        return sse.response(_stream(knowledge_base, question, conversation, completion, body.budget, usage_chunk))
    answer = knowledge_base.ask(question, conversation=conversation, budget=body.budget)
    return {
        **completion.head("chat.completion"),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": _with_sources(answer)}, "finish_reason": "stop"}
        ],
        "usage": _usage(answer),
        "citations": [c.model_dump() for c in answer.citations],
        "agentrag": answer.contract(),
    }


def _stream(
    knowledge_base: KnowledgeBase,
    question: str,
    conversation: Conversation | None,
    completion: _Completion,
    budget: dict[str, Any] | None = None,
    usage_chunk: bool = False,
) -> Iterator[str]:
    """Tokens as the answer is written; then the sources, a note if the citation check changed anything,
    and a final chunk carrying the checked citations and the usage (and, with `stream_options.include_usage`,
    the usage chunk without choices that the OpenAI API sends last)."""
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
            if usage_chunk:
                yield sse.data({**completion.head("chat.completion.chunk"), "choices": [], "usage": _usage(value)})
    yield sse.data("[DONE]")


def _final_chunks(answer: Answer, completion: _Completion, streamed: bool) -> Iterator[str]:
    tail = _sources_tail(answer)
    if answer.unsupported:
        note = f"{len(answer.unsupported)} sentence(s) above are not supported by the cited passages."
        tail = f"\n\n(Citation check: {note})" + tail
    if not streamed:  # nothing went out yet: the answer as `answer_body` writes it, like the JSON response
        tail = answer_body(answer) + tail
    yield completion.chunk({"content": tail})
    citations = [c.model_dump() for c in answer.citations]
    yield completion.chunk({}, "stop", citations=citations, agentrag=answer.contract(), usage=_usage(answer))
