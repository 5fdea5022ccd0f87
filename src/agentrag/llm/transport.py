"""Sending one chat completion request within a deadline, and turning what goes wrong into `LLMError`s.

Every call runs against a deadline: the `timeout_s` the caller passes (the per-call limit, already capped by
the question's remaining wall time) or `llm.timeout_s`. The SDK's own retry loop does not know about such a
deadline (it retries a timed-out request with the full timeout again and sleeps up to two minutes on a
`Retry-After`), so the SDK client is built with `max_retries=0` and the short loop in `Transport.request`
retries 408, 409, 429, 5xx and connection errors `llm.max_retries` times with exponential backoff or the
server's `Retry-After`, never starting an attempt or a sleep it cannot finish before the deadline.

An endpoint that could not be reached is remembered for `llm.unreachable_cooldown_s` (`agentrag.breaker`):
meanwhile every call raises the same `LLMUnavailable` at once instead of paying the retries again.

A 400/422 is not retried here: it is raised as `Rejected`, so the client can drop the parameter the server
objected to (see `agentrag.llm.quirks`).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import openai

from agentrag.breaker import Breaker
from agentrag.errors import LLMError, LLMTimeout, LLMUnavailable
from agentrag.llm.tokens import ModelCall
from agentrag.settings import LLMSettings

logger = logging.getLogger(__name__)

_BACKOFF_FIRST_S = 0.5
_BACKOFF_MAX_S = 8.0
_RETRY_STATUSES = frozenset({408, 409, 429})
_REJECTED_STATUSES = frozenset({400, 422})


@dataclass(frozen=True)
class Call:
    """One model call: what its errors name, and the deadline it runs against."""

    model: str
    endpoint: str
    limit: float  # the seconds it was given, as its errors state them
    deadline: float  # the `time.monotonic()` by which it must end
    role: str = ""  # the LLM role it is made for, as the trace names it

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def described(
        self,
        prompt: int,
        completion: int,
        started: float,
        *,
        response_model: str = "",
        finish_reason: str | None = None,
        stream: bool = False,
        error: str = "",
    ) -> ModelCall:
        """This call, once done, for the question's trace; `started` is its `time.monotonic()` start."""
        return ModelCall(
            role=self.role,
            model=self.model,
            endpoint=self.endpoint,
            prompt_tokens=prompt,
            completion_tokens=completion,
            ms=(time.monotonic() - started) * 1000,
            response_model=response_model,
            finish_reason=finish_reason,
            stream=stream,
            error=error,
        )

    def timed_out(self) -> LLMTimeout:
        return LLMTimeout(
            f"model '{self.model}' at {self.endpoint} timed out after {self.limit:g}s",
            model=self.model,
            endpoint=self.endpoint,
        )


class Rejected(Exception):
    """A 400/422: the request itself was refused, possibly for a parameter this server does not support."""

    def __init__(self, error: LLMError, server_message: str) -> None:
        super().__init__(str(error))
        self.error = error
        self.server_message = server_message


class _Retry(NamedTuple):
    """A failure worth another attempt: how to describe it, how long to wait first, and its status."""

    problem: str
    wait: float
    status: int | None


class Transport:
    """The SDK client for one endpoint, with the deadline-aware retry loop around it."""

    def __init__(self, endpoint: str, settings: LLMSettings) -> None:
        self.endpoint = endpoint
        self._settings = settings  # read on every call: `max_retries` as it is then
        self._breaker = Breaker(settings.unreachable_cooldown_s)
        self._client = openai.OpenAI(
            base_url=endpoint,
            api_key=settings.api_key or "not-needed",  # local servers accept any key; the SDK insists on one
            timeout=settings.timeout_s,
            max_retries=0,  # the loop below retries, within the deadline
        )

    def close(self) -> None:
        self._client.close()

    def request(self, params: dict[str, Any], call: Call) -> Any:
        """One chat completion call with retries inside the deadline; errors become `LLMError`s (or `Rejected`)."""
        refusal = self._breaker.refusal()
        if refusal is not None:
            raise LLMUnavailable(refusal, model=call.model, endpoint=call.endpoint)
        attempt = 0
        while True:
            remaining = call.remaining()
            if remaining <= 0:
                raise call.timed_out()
            try:
                response = self._client.chat.completions.create(**params, timeout=remaining)
                self._breaker.reset()
                return response
            except (openai.APIError, ValueError) as exc:
                cause: Exception = exc
                retry = _retryable(exc, call, attempt)  # raises what is not worth another attempt
            problem = retry.problem
            attempt += 1
            if attempt > self._settings.max_retries:
                if attempt > 1:
                    problem += f" (gave up after {attempt} attempts)"
            elif time.monotonic() + retry.wait >= call.deadline:
                problem += f" (no time left for a retry within {call.limit:g}s)"
            else:
                logger.info("retrying model '%s' at %s in %.2fs: %s", call.model, call.endpoint, retry.wait, problem)
                time.sleep(retry.wait)
                continue
            if retry.status is None:  # could not connect at all: the endpoint is down, not just busy
                self._breaker.trip(problem)
            raise LLMUnavailable(problem, model=call.model, endpoint=call.endpoint, status=retry.status) from cause


def _retryable(exc: openai.APIError | ValueError, call: Call, attempt: int) -> _Retry:
    """What to retry after `exc`; raises the error to report instead when a retry cannot help."""
    model, endpoint = call.model, call.endpoint
    if isinstance(exc, openai.APITimeoutError):  # the whole budget went into this attempt
        raise call.timed_out() from exc
    if isinstance(exc, openai.APIConnectionError):
        return _Retry(f"cannot reach model '{model}' at {endpoint}: {exc.__cause__ or exc}", _backoff(attempt), None)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _server_message(exc)
        if status in _REJECTED_STATUSES:
            rejected = LLMError(
                f"model '{model}' at {endpoint} rejected the request ({status}): {message}",
                model=model,
                endpoint=endpoint,
                status=status,
            )
            raise Rejected(rejected, message) from exc
        if status not in _RETRY_STATUSES and status < 500:
            raise _refused(call, status, message) from exc
        retry_after = _retry_after(exc.response.headers)
        wait = _backoff(attempt) if retry_after is None else retry_after
        return _Retry(f"model '{model}' at {endpoint} answered {status}: {message}", wait, status)
    # Any other APIError, or a ValueError: a 200 whose body is not JSON, or not a chat completion.
    raise LLMError(
        f"model '{model}' at {endpoint} sent an unreadable response: {exc}", model=model, endpoint=endpoint
    ) from exc


def _refused(call: Call, status: int, message: str) -> LLMError:
    """A 4xx that no retry can fix; auth and unknown-model errors say what to check."""
    model, endpoint = call.model, call.endpoint
    if status in (401, 403):
        text = f"model '{model}' at {endpoint} refused the API key ({status}): {message}; check OPENAI_API_KEY"
    elif status == 404:
        text = (
            f"model '{model}' at {endpoint} answered 404: {message}; "
            "check the model name (AGENTRAG_LLM_MODEL) and the base URL (OPENAI_BASE_URL, usually ending in /v1)"
        )
    else:
        return LLMError(
            f"model '{model}' at {endpoint} answered {status}: {message}", model=model, endpoint=endpoint, status=status
        )
    return LLMUnavailable(text, model=model, endpoint=endpoint, status=status)


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
