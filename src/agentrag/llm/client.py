"""One client for any OpenAI-compatible chat endpoint (OpenAI, DeepSeek, Qwen, vLLM, Ollama, llama.cpp server).

`LLMClient` puts together the parts, each in its own module:

- `transport`: the SDK call, retried within the call's deadline, and its errors as `LLMError`s;
- `quirks`: what this endpoint accepts, learned from the parameters it rejects (each lesson logged once, here);
- `caching`: completions and finished streams answered from the cache;
- `streaming`: deltas read by a thread, so a stalled server cannot hold the consumer past the deadline;
- `structured`: replies validated against a pydantic schema, with one repair turn;
- `types`: the chat messages, tool specs and `ChatResponse` it exchanges with callers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from agentrag.cache import Cache
from agentrag.errors import ConfigError, LLMError, LLMTimeout
from agentrag.llm.caching import STREAM, LLMCache
from agentrag.llm.notice import model_free_notice
from agentrag.llm.quirks import EndpointQuirks, LearnedQuirks, Lesson, adapt
from agentrag.llm.streaming import stream_deltas
from agentrag.llm.structured import extract_json, response_format, validated_reply, with_schema_instructions
from agentrag.llm.tokens import TokenMeter, estimate_message_tokens, estimate_tokens
from agentrag.llm.transport import Call, Rejected, Transport
from agentrag.llm.types import ChatMessage, ChatResponse, ToolCall, ToolSpec
from agentrag.settings import LLMSettings
from agentrag.vocab import JsonMode, LLMRole

__all__ = ["OPENAI_BASE_URL", "ChatResponse", "LLMClient", "ToolCall", "extract_json", "make_llm", "model_free_notice"]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

OPENAI_BASE_URL = "https://api.openai.com/v1"


class LLMClient:
    """Chat, tool calls, streaming and validated structured output against one OpenAI-compatible endpoint."""

    def __init__(
        self, settings: LLMSettings, cache: Cache | None = None, cache_scope: Callable[[], str] | None = None
    ) -> None:
        """`cache`: completions are kept under a hash of the whole request plus `cache_scope()` (the knowledge
        base and its generation), so an identical call is answered without the model and an update to the
        knowledge base can never bring back an answer written from the old content."""
        if not settings.configured:
            raise ConfigError("no LLM configured: set OPENAI_BASE_URL or OPENAI_API_KEY (or llm.* in agentrag.toml)")
        for role in LLMRole:
            settings.model_for(role)  # a missing model is a configuration error now, not at the first question
        self.settings = settings
        self.endpoint = (settings.base_url or OPENAI_BASE_URL).rstrip("/")
        self._transport = Transport(self.endpoint, settings)
        self._cache = LLMCache(cache, self.endpoint, cache_scope)
        self._quirks = LearnedQuirks(EndpointQuirks(json_mode=settings.json_mode))

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._transport.close()

    def model_for(self, role: LLMRole) -> str:
        return self.settings.model_for(role)

    @property
    def json_mode(self) -> JsonMode:
        """How structured output is requested now: the setting, or what the server turned out to accept."""
        return self._quirks.current.json_mode

    # ----------------------------------------------------------------------------------------------- calls

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: LLMRole,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
        meter: TokenMeter | None = None,
    ) -> ChatResponse:
        """One completion, with tool calls when `tools` are given."""
        call = self._call(self.model_for(role), timeout_s, role)
        params = self._params(self._quirks.current, call.model, messages, max_tokens)
        if tools:
            params["tools"] = tools
            if tool_choice is not None:
                params["tool_choice"] = tool_choice
        return self._completion(params, call, messages, tools, meter)

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: LLMRole,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
        meter: TokenMeter | None = None,
    ) -> Iterator[str]:
        """Text deltas as the model writes them. The deadline starts now and covers the whole stream, including
        the time the consumer spends between deltas; a timeout or a broken connection raises `LLMTimeout` or
        `LLMUnavailable` after the deltas already yielded. Usage is recorded at the end (the server's final
        usage chunk, else an estimate; an estimate of what arrived when the stream breaks)."""
        call = self._call(self.model_for(role), timeout_s, role)
        quirks = self._quirks.current
        params = self._params(quirks, call.model, messages, max_tokens)
        key = self._cache.key(STREAM, params)
        cached = self._cache.stream_text(key)
        if cached is not None:
            return iter([cached])
        params["stream"] = True
        if quirks.stream_usage:
            params["stream_options"] = {"include_usage": True}
        return stream_deltas(
            lambda: self._complete(params, call), call, messages, meter, lambda text: self._cache.keep_stream(key, text)
        )

    def structured(
        self,
        messages: Sequence[ChatMessage],
        schema: type[T],
        *,
        role: LLMRole,
        timeout_s: float | None = None,
        meter: TokenMeter | None = None,
        examples: str | None = None,
    ) -> T:
        """A reply parsed into `schema`. The schema is always stated in the prompt and, by `llm.json_mode`, also
        requested through `response_format`. An invalid reply gets one repair turn naming the exact error; a
        second invalid reply raises `LLMOutputError`, and the caller uses its model-free role."""
        call = self._call(self.model_for(role), timeout_s, role)
        json_schema = schema.model_json_schema()

        def ask(conversation: list[ChatMessage]) -> ChatResponse:
            quirks = self._quirks.current  # read for each turn: the first may have taught the repair something
            params = self._params(quirks, call.model, conversation, None)
            fmt = response_format(quirks.json_mode, schema, json_schema)
            if fmt is not None:
                params["response_format"] = fmt
            return self._completion(params, call, conversation, None, meter)

        conversation = with_schema_instructions(messages, json_schema, examples)
        return validated_reply(ask, conversation, schema, model=call.model, endpoint=self.endpoint)

    # ------------------------------------------------------------------------------------------- internals

    def _call(self, model: str, timeout_s: float | None, role: LLMRole) -> Call:
        limit = self.settings.timeout_s if timeout_s is None else timeout_s
        if limit <= 0:
            raise LLMTimeout(
                f"no time left to call model '{model}' at {self.endpoint}", model=model, endpoint=self.endpoint
            )
        return Call(model, self.endpoint, limit, time.monotonic() + limit, str(role))

    def _params(
        self, quirks: EndpointQuirks, model: str, messages: Sequence[ChatMessage], max_tokens: int | None
    ) -> dict[str, Any]:
        return quirks.params(model, messages, max_tokens or self.settings.max_output_tokens, self.settings.temperature)

    def _completion(
        self,
        params: dict[str, Any],
        call: Call,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None,
        meter: TokenMeter | None,
    ) -> ChatResponse:
        """A completion from the cache (no tokens spent) or from the model (then cached)."""

        def ask_model() -> ChatResponse:
            started = time.monotonic()
            try:
                response = _read_completion(self._complete(params, call), call, messages, tools)
            except LLMError as exc:
                if meter is not None:
                    meter.failed(call.described(0, 0, started, error=type(exc).__name__))
                raise
            if meter is not None:
                prompt, produced = response.prompt_tokens, response.completion_tokens
                described = call.described(
                    prompt, produced, started, response_model=response.model, finish_reason=response.finish_reason
                )
                meter.add(prompt, produced, described)
            return response

        return self._cache.completion(params, ask_model)

    def _complete(self, params: dict[str, Any], call: Call) -> Any:
        """`Transport.request`, adapting to parameters the server rejects; what worked is remembered once it
        worked (of several lessons about one field, the last)."""
        lessons: dict[str, Lesson] = {}
        while True:
            try:
                result = self._transport.request(params, call)
            except Rejected as rejected:
                adapted = adapt(params, rejected.server_message)
                if adapted is None:
                    raise rejected.error from rejected.__cause__
                params, lesson = adapted
                lessons[lesson.field] = lesson
                logger.debug("model endpoint %s rejected a parameter; retrying: %s", self.endpoint, lesson.note)
                continue
            for lesson in lessons.values():
                if self._quirks.learn(lesson):
                    logger.warning("model endpoint %s: %s", self.endpoint, lesson.note)
            return result


def _read_completion(
    completion: Any, call: Call, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec] | None
) -> ChatResponse:
    """The SDK's completion as a `ChatResponse`, with the reported usage or, when there is none, an estimate."""
    choices = getattr(completion, "choices", None)
    if not choices:
        raise LLMError(
            f"model '{call.model}' at {call.endpoint} answered without any choice",
            model=call.model,
            endpoint=call.endpoint,
        )
    message = choices[0].message
    calls: list[ToolCall] = []
    for i, tool_call in enumerate(message.tool_calls or ()):
        function = getattr(tool_call, "function", None)
        if function is None:  # a non-function ("custom") tool call: not something agentrag offers
            continue
        calls.append(
            ToolCall(id=tool_call.id or f"call_{i}", name=function.name or "", arguments=function.arguments or "")
        )
    content = message.content or ""
    usage = completion.usage
    if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
        prompt, produced = int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)
    else:
        prompt = estimate_message_tokens(messages, tools)
        produced = estimate_tokens(content) + sum(estimate_tokens(c.name + c.arguments) for c in calls)
    return ChatResponse(
        content=content,
        tool_calls=calls,
        finish_reason=choices[0].finish_reason,
        prompt_tokens=prompt,
        completion_tokens=produced,
        model=completion.model or call.model,
    )


def make_llm(
    settings: LLMSettings, cache: Cache | None = None, cache_scope: Callable[[], str] | None = None
) -> LLMClient | None:
    """The client for the configured endpoint, or None for model-free mode."""
    return LLMClient(settings, cache, cache_scope) if settings.configured else None
