"""One client for any OpenAI-compatible chat endpoint (OpenAI, DeepSeek, Qwen, vLLM, Ollama, llama.cpp server).

Every call runs against a deadline: the `timeout_s` the caller passes (the per-call limit, already capped by
the question's remaining wall time) or `llm.timeout_s`. The SDK's own retry loop does not know about such a
deadline (it retries a timed-out request with the full timeout again and sleeps up to two minutes on a
`Retry-After`), so the SDK client is built with `max_retries=0` and the short loop in `_request` retries 408,
409, 429, 5xx and connection errors `llm.max_retries` times with exponential backoff or the server's
`Retry-After`, never starting an attempt or a sleep it cannot finish before the deadline.

Servers differ in what they accept. A parameter a server rejects with 400/422 (`response_format`,
`stream_options`, `max_tokens` where `max_completion_tokens` is wanted, `temperature`) is dropped or replaced,
the call is repeated once, and the client remembers it for later calls (logged once).
"""

from __future__ import annotations

import json
import logging
import queue
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentrag.cache import Cache, cache_key
from agentrag.errors import ConfigError, LLMError, LLMOutputError, LLMTimeout, LLMUnavailable
from agentrag.llm.tokens import TokenMeter, estimate_message_tokens, estimate_tokens
from agentrag.settings import LLMSettings
from agentrag.vocab import LLMRole

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

OPENAI_BASE_URL = "https://api.openai.com/v1"
_BACKOFF_FIRST_S = 0.5
_BACKOFF_MAX_S = 8.0
_RETRY_STATUSES = frozenset({408, 409, 429})
_REJECTED_STATUSES = frozenset({400, 422})
_JSON_STARTS = re.compile(r"[\[{]")
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S)
# Bounds the tolerant JSON search on long prose replies.
_MAX_JSON_STARTS = 50


class ToolCall(BaseModel):
    """A function call the model asked for; `arguments` is the raw JSON text, validated by the tool."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str


class ChatResponse(BaseModel):
    """One completion: text, tool calls, why it stopped, and its tokens (reported, or estimated if not)."""

    model_config = ConfigDict(frozen=True)

    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str
    cached: bool = False  # served from the cache: no tokens were spent

    def as_message(self) -> dict[str, Any]:
        """The assistant turn to append to the conversation before sending the tool results back."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


class _Rejected(Exception):
    """A 400/422: the request itself was refused, possibly for a parameter this server does not support."""

    def __init__(self, error: LLMError, server_message: str) -> None:
        super().__init__(str(error))
        self.error = error
        self.server_message = server_message


class _BadOutput(Exception):
    """A structured reply that is not valid JSON for the schema; the message is sent back in the repair turn."""


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
        self._client = openai.OpenAI(
            base_url=self.endpoint,
            api_key=settings.api_key or "not-needed",  # local servers accept any key; the SDK insists on one
            timeout=settings.timeout_s,
            max_retries=0,
        )
        self._lock = threading.Lock()
        self._cache = cache
        self._cache_scope = cache_scope
        # What this endpoint accepts, learned from its 400s (see the module docstring).
        self._json_mode: str = settings.json_mode
        self._stream_usage = True
        self._max_tokens_param = "max_tokens"
        self._send_temperature = True

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def model_for(self, role: LLMRole) -> str:
        return self.settings.model_for(role)

    @property
    def json_mode(self) -> str:
        """How structured output is requested now: the setting, or what the server turned out to accept."""
        return self._json_mode

    # ----------------------------------------------------------------------------------------------- calls

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        role: LLMRole,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
        meter: TokenMeter | None = None,
    ) -> ChatResponse:
        """One completion, with tool calls when `tools` are given."""
        model = self.model_for(role)
        limit, deadline = self._deadline(model, timeout_s)
        params = self._params(model, messages, max_tokens)
        if tools:
            params["tools"] = tools
            if tool_choice is not None:
                params["tool_choice"] = tool_choice
        return self._cached_completion(params, model, limit, deadline, messages, tools, meter)

    def stream(
        self,
        messages: list[dict[str, Any]],
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
        model = self.model_for(role)
        limit, deadline = self._deadline(model, timeout_s)
        params = self._params(model, messages, max_tokens)
        key = self._key("llm-stream", params)
        if key is not None and self._cache is not None:
            cached = self._cache.get(key)
            if cached is not None:
                return iter([cached.decode("utf-8")])
        params["stream"] = True
        if self._stream_usage:
            params["stream_options"] = {"include_usage": True}
        return self._drain(params, model, limit, deadline, messages, meter, key)

    def structured(
        self,
        messages: list[dict[str, Any]],
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
        model = self.model_for(role)
        limit, deadline = self._deadline(model, timeout_s)
        json_schema = schema.model_json_schema()
        conversation = _with_schema_instructions(messages, json_schema, examples)
        first = self._structured_call(conversation, schema, json_schema, model, limit, deadline, meter)
        try:
            return _parse_structured(first.content, schema)
        except _BadOutput as bad:
            reason = str(bad)
        logger.info("model '%s' gave invalid %s output (%s); asking once for a repair", model, schema.__name__, reason)
        repair = [
            *conversation,
            {"role": "assistant", "content": first.content},
            {
                "role": "user",
                "content": f"That reply is not valid: {reason}. Reply with only the corrected JSON, "
                "no explanation and no code fences.",
            },
        ]
        second = self._structured_call(repair, schema, json_schema, model, limit, deadline, meter)
        try:
            return _parse_structured(second.content, schema)
        except _BadOutput as bad:
            raise LLMOutputError(
                f"model '{model}' at {self.endpoint} gave invalid {schema.__name__} output twice: {bad}",
                model=model,
                endpoint=self.endpoint,
            ) from None

    # ------------------------------------------------------------------------------------------- internals

    def _deadline(self, model: str, timeout_s: float | None) -> tuple[float, float]:
        limit = self.settings.timeout_s if timeout_s is None else timeout_s
        if limit <= 0:
            raise LLMTimeout(
                f"no time left to call model '{model}' at {self.endpoint}", model=model, endpoint=self.endpoint
            )
        return limit, time.monotonic() + limit

    def _params(self, model: str, messages: list[dict[str, Any]], max_tokens: int | None) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": model,
            "messages": messages,
            self._max_tokens_param: max_tokens or self.settings.max_output_tokens,
        }
        if self._send_temperature:
            params["temperature"] = self.settings.temperature
        return params

    def _structured_call(
        self,
        messages: list[dict[str, Any]],
        schema: type[BaseModel],
        json_schema: dict[str, Any],
        model: str,
        limit: float,
        deadline: float,
        meter: TokenMeter | None,
    ) -> ChatResponse:
        params = self._params(model, messages, None)
        if self._json_mode == "json_schema":
            name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "output"
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": json_schema, "strict": False},
            }
        elif self._json_mode == "json_object":
            params["response_format"] = {"type": "json_object"}
        return self._cached_completion(params, model, limit, deadline, messages, None, meter)

    def _key(self, namespace: str, params: dict[str, Any]) -> str | None:
        if self._cache is None:
            return None
        scope = self._cache_scope() if self._cache_scope is not None else ""
        return cache_key(namespace, self.endpoint, scope, params)

    def _cached_completion(
        self,
        params: dict[str, Any],
        model: str,
        limit: float,
        deadline: float,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        meter: TokenMeter | None,
    ) -> ChatResponse:
        """A completion from the cache (no tokens spent) or from the model (then cached)."""
        key = self._key("llm", params)
        if key is not None and self._cache is not None:
            cached = self._cache.get(key)
            if cached is not None:
                try:
                    return ChatResponse.model_validate_json(cached).model_copy(
                        update={"prompt_tokens": 0, "completion_tokens": 0, "cached": True}
                    )
                except ValidationError:
                    logger.debug("ignoring an unreadable LLM cache entry")
        completion = self._complete(params, model, limit, deadline)
        response = self._read_completion(completion, model, messages, tools)
        if meter is not None:
            meter.add(response.prompt_tokens, response.completion_tokens)
        if key is not None and self._cache is not None:
            self._cache.set(key, response.model_dump_json().encode("utf-8"))
        return response

    def _complete(self, params: dict[str, Any], model: str, limit: float, deadline: float) -> Any:
        """`_request`, adapting to parameters the server rejects; what worked is remembered once it worked."""
        lessons: dict[str, tuple[Any, str]] = {}  # attribute -> (value, note); the last step per attribute wins
        while True:
            try:
                result = self._request(params, model, limit, deadline)
            except _Rejected as rejected:
                adapted = _adapt(params, rejected.server_message)
                if adapted is None:
                    raise rejected.error from rejected.__cause__
                params, (attribute, value, note) = adapted
                lessons[attribute] = (value, note)
                logger.debug("model endpoint %s rejected a parameter; retrying: %s", self.endpoint, note)
                continue
            for attribute, (value, note) in lessons.items():
                self._learn(attribute, value, note)
            return result

    def _learn(self, attribute: str, value: Any, note: str) -> None:
        with self._lock:
            if getattr(self, attribute) == value:
                return
            setattr(self, attribute, value)
        logger.warning("model endpoint %s: %s", self.endpoint, note)

    def _request(self, params: dict[str, Any], model: str, limit: float, deadline: float) -> Any:
        """One chat completion call with retries inside the deadline; errors become `LLMError`s."""
        attempt = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._timed_out(model, limit)
            status: int | None = None
            try:
                return self._client.chat.completions.create(**params, timeout=remaining)
            except openai.APITimeoutError as exc:
                raise self._timed_out(model, limit) from exc
            except openai.APIConnectionError as exc:
                cause: Exception = exc
                problem = f"cannot reach model '{model}' at {self.endpoint}: {exc.__cause__ or exc}"
                wait = _backoff(attempt)
            except openai.APIStatusError as exc:
                cause = exc
                status = exc.status_code
                message = _server_message(exc)
                if status in _REJECTED_STATUSES:
                    rejected = LLMError(
                        f"model '{model}' at {self.endpoint} rejected the request ({status}): {message}",
                        model=model,
                        endpoint=self.endpoint,
                        status=status,
                    )
                    raise _Rejected(rejected, message) from exc
                if status not in _RETRY_STATUSES and status < 500:
                    raise self._refused(model, status, message) from exc
                problem = f"model '{model}' at {self.endpoint} answered {status}: {message}"
                retry_after = _retry_after(exc.response.headers)
                wait = _backoff(attempt) if retry_after is None else retry_after
            except (openai.APIError, ValueError) as exc:  # a 200 whose body is not JSON, or not a chat completion
                raise LLMError(
                    f"model '{model}' at {self.endpoint} sent an unreadable response: {exc}",
                    model=model,
                    endpoint=self.endpoint,
                ) from exc
            attempt += 1
            if attempt > self.settings.max_retries:
                if attempt > 1:
                    problem += f" (gave up after {attempt} attempts)"
            elif time.monotonic() + wait >= deadline:
                problem += f" (no time left for a retry within {limit:g}s)"
            else:
                logger.info("retrying model '%s' at %s in %.2fs: %s", model, self.endpoint, wait, problem)
                time.sleep(wait)
                continue
            raise LLMUnavailable(problem, model=model, endpoint=self.endpoint, status=status) from cause

    def _timed_out(self, model: str, limit: float) -> LLMTimeout:
        return LLMTimeout(
            f"model '{model}' at {self.endpoint} timed out after {limit:g}s", model=model, endpoint=self.endpoint
        )

    def _refused(self, model: str, status: int, message: str) -> LLMError:
        if status in (401, 403):
            text = f"model '{model}' at {self.endpoint} refused the API key ({status}): {message}; check OPENAI_API_KEY"
        elif status == 404:
            text = (
                f"model '{model}' at {self.endpoint} answered 404: {message}; "
                "check the model name (AGENTRAG_LLM_MODEL) and the base URL (OPENAI_BASE_URL, usually ending in /v1)"
            )
        else:
            return LLMError(
                f"model '{model}' at {self.endpoint} answered {status}: {message}",
                model=model,
                endpoint=self.endpoint,
                status=status,
            )
        return LLMUnavailable(text, model=model, endpoint=self.endpoint, status=status)

    def _read_completion(
        self,
        completion: Any,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
    ) -> ChatResponse:
        choices = getattr(completion, "choices", None)
        if not choices:
            raise LLMError(
                f"model '{model}' at {self.endpoint} answered without any choice", model=model, endpoint=self.endpoint
            )
        message = choices[0].message
        calls: list[ToolCall] = []
        for i, call in enumerate(message.tool_calls or ()):
            function = getattr(call, "function", None)
            if function is None:  # a non-function ("custom") tool call: not something agentrag offers
                continue
            calls.append(
                ToolCall(id=call.id or f"call_{i}", name=function.name or "", arguments=function.arguments or "")
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
            model=completion.model or model,
        )

    def _drain(
        self,
        params: dict[str, Any],
        model: str,
        limit: float,
        deadline: float,
        messages: list[dict[str, Any]],
        meter: TokenMeter | None,
        key: str | None = None,
    ) -> Iterator[str]:
        """Deltas from the pumping thread, waiting no longer than the deadline for each; a stream that
        finished is cached whole under `key`."""
        events: queue.Queue[tuple[str, Any]] = queue.Queue()
        stop = threading.Event()
        pump = threading.Thread(
            target=self._pump,
            args=(params, model, limit, deadline, events, stop),
            name="agentrag-llm-stream",
            daemon=True,
        )
        pump.start()
        pieces: list[str] = []
        recorded = False
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._timed_out(model, limit)
                try:
                    kind, value = events.get(timeout=remaining)
                except queue.Empty:
                    raise self._timed_out(model, limit) from None
                if kind == "delta":
                    pieces.append(value)
                    yield value
                elif kind == "error":
                    raise value
                else:
                    usage: tuple[int, int] | None = value
                    if meter is not None:
                        if usage is None:
                            usage = (estimate_message_tokens(messages), estimate_tokens("".join(pieces)))
                        meter.add(*usage)
                    recorded = True
                    if key is not None and self._cache is not None:
                        self._cache.set(key, "".join(pieces).encode("utf-8"))
                    return
        finally:
            stop.set()
            if not recorded and pieces and meter is not None:
                meter.add(estimate_message_tokens(messages), estimate_tokens("".join(pieces)))

    def _pump(
        self,
        params: dict[str, Any],
        model: str,
        limit: float,
        deadline: float,
        events: queue.Queue[tuple[str, Any]],
        stop: threading.Event,
    ) -> None:
        """Reads the SSE stream in its own thread, so a stalled server cannot hold the consumer past the deadline."""
        try:
            stream = self._complete(params, model, limit, deadline)
        except LLMError as exc:
            events.put(("error", exc))
            return
        finish: str | None = None
        usage: tuple[int, int] | None = None
        try:
            for chunk in stream:
                if stop.is_set() or time.monotonic() > deadline:
                    return  # the consumer has gone or has already raised the timeout
                if chunk.usage is not None and (chunk.usage.prompt_tokens or chunk.usage.completion_tokens):
                    usage = (int(chunk.usage.prompt_tokens or 0), int(chunk.usage.completion_tokens or 0))
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    if choice.delta is not None and choice.delta.content:
                        events.put(("delta", choice.delta.content))
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except openai.APITimeoutError:
            events.put(("error", self._timed_out(model, limit)))
            return
        except Exception as exc:  # anything else must still reach the consumer, or it would wait for the deadline
            events.put(
                (
                    "error",
                    LLMUnavailable(
                        f"stream from model '{model}' at {self.endpoint} broke off: {exc.__cause__ or exc}",
                        model=model,
                        endpoint=self.endpoint,
                    ),
                )
            )
            return
        finally:
            stream.close()
        if finish is None:
            events.put(
                (
                    "error",
                    LLMUnavailable(
                        f"stream from model '{model}' at {self.endpoint} ended before the model finished",
                        model=model,
                        endpoint=self.endpoint,
                    ),
                )
            )
            return
        events.put(("done", usage))


def _adapt(params: dict[str, Any], server_message: str) -> tuple[dict[str, Any], tuple[str, Any, str]] | None:
    """The request without the parameter a 400 most likely objected to, and what to remember if that works."""
    text = server_message.lower()
    adapted = dict(params)
    if "max_tokens" in params and "max_completion_tokens" in text:
        adapted["max_completion_tokens"] = adapted.pop("max_tokens")
        return adapted, ("_max_tokens_param", "max_completion_tokens", "sending max_completion_tokens from now on")
    if "temperature" in params and "temperature" in text:
        del adapted["temperature"]
        return adapted, ("_send_temperature", False, "it rejects temperature; leaving it out from now on")
    if "stream_options" in params:
        del adapted["stream_options"]
        return adapted, ("_stream_usage", False, "it rejects stream_options; estimating streamed usage from now on")
    fmt = params.get("response_format")
    if isinstance(fmt, Mapping):
        if fmt.get("type") == "json_schema":
            adapted["response_format"] = {"type": "json_object"}
            return adapted, (
                "_json_mode",
                "json_object",
                "it rejects json_schema output; using json_object from now on",
            )
        del adapted["response_format"]
        return adapted, (
            "_json_mode",
            "none",
            "it rejects response_format; asking for JSON in the prompt only from now on",
        )
    return None


def _backoff(attempt: int) -> float:
    """Exponential backoff with up to 25% jitter, so concurrent callers do not retry in lockstep."""
    return min(_BACKOFF_FIRST_S * 2.0**attempt, _BACKOFF_MAX_S) * (1 - 0.25 * random.random())


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked to wait (`retry-after-ms` or numeric `retry-after`), if it said."""
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None


def _server_message(exc: openai.APIStatusError) -> str:
    """The server's own words: OpenAI, vLLM, llama.cpp and Ollama put them in different places."""
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            message = error.get("message") or error.get("detail")
            if message:
                return str(message)[:500]
        elif isinstance(error, str) and error:
            return error[:500]
        detail = body.get("detail") or body.get("message")
        if detail:
            return str(detail)[:500]
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return exc.message


def _with_schema_instructions(
    messages: list[dict[str, Any]], json_schema: dict[str, Any], examples: str | None
) -> list[dict[str, Any]]:
    """The conversation with the schema stated in the last user turn (every server and chat template accepts that)."""
    instruction = (
        "Reply with only a JSON value, no explanation and no code fences, that matches this JSON schema:\n"
        + json.dumps(json_schema, ensure_ascii=False)
    )
    if examples:
        instruction += "\nExample:\n" + examples
    out = [dict(m) for m in messages]
    last = out[-1] if out else None
    if last is not None and last.get("role") == "user" and isinstance(last.get("content"), str):
        last["content"] = f"{last['content']}\n\n{instruction}"
    elif last is not None and last.get("role") == "user" and isinstance(last.get("content"), list):
        last["content"] = [*last["content"], {"type": "text", "text": instruction}]
    else:
        out.append({"role": "user", "content": instruction})
    return out


def extract_json(text: str) -> Any:
    """The JSON value in a model reply: tolerant of ```json fences, <think> blocks and prose around the value.

    Raises ValueError naming the problem (the first JSON syntax error, or that there is no JSON at all)."""
    text = _THINK.sub("", text).strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    first_error: json.JSONDecodeError | None = None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if text[:1] in "[{":
            first_error = exc
    decoder = json.JSONDecoder()
    for n, match in enumerate(_JSON_STARTS.finditer(text)):
        if n >= _MAX_JSON_STARTS:
            break
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as exc:
            first_error = first_error or exc
            continue
        return value
    if first_error is not None:
        raise ValueError(f"not valid JSON ({first_error})")
    raise ValueError("no JSON object in the reply")


def _parse_structured(text: str, schema: type[T]) -> T:
    try:
        value = extract_json(text)
    except ValueError as exc:
        raise _BadOutput(str(exc)) from None
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors(include_url=False)[:10]
        ]
        raise _BadOutput("the JSON does not match the schema: " + "; ".join(problems)) from None


def make_llm(
    settings: LLMSettings, cache: Cache | None = None, cache_scope: Callable[[], str] | None = None
) -> LLMClient | None:
    """The client for the configured endpoint, or None for model-free mode."""
    return LLMClient(settings, cache, cache_scope) if settings.configured else None


def model_free_notice(settings: LLMSettings) -> str | None:
    """The one sentence to show (once per process) when no LLM is configured; None when one is."""
    if settings.configured:
        return None
    return (
        "No LLM configured (set OPENAI_BASE_URL or OPENAI_API_KEY, and AGENTRAG_LLM_MODEL): "
        "answering model-free, with extractive answers."
    )
