"""Streaming: text deltas as the model writes them, within the call's deadline.

The SDK's stream iterator blocks for as long as the server is silent, so the stream is read by its own thread,
which pumps the deltas into a queue; the consumer waits on the queue no longer than the deadline, and a stalled
server cannot hold it past it. The deadline covers the whole stream, including the time the consumer spends
between deltas. A timeout or a broken connection raises `LLMTimeout` or `LLMUnavailable` after the deltas
already yielded.

Usage is recorded once, at the end: the server's final usage chunk (`stream_options.include_usage`), else an
estimate; when the stream breaks, an estimate of what arrived.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import openai

from agentrag.errors import LLMError, LLMUnavailable
from agentrag.llm.tokens import TokenMeter, estimate_message_tokens, estimate_tokens
from agentrag.llm.transport import Call
from agentrag.llm.types import ChatMessage

# What the pumping thread sends: ("delta", text), ("error", LLMError) or ("done", (prompt, completion) | None).
_Event = tuple[str, Any]


def stream_deltas(
    open_stream: Callable[[], Any],
    call: Call,
    messages: Sequence[ChatMessage],
    meter: TokenMeter | None,
    keep: Callable[[str], None],
) -> Iterator[str]:
    """Deltas of the stream `open_stream()` starts, waiting no longer than the deadline for each; the text of a
    stream that finished goes to `keep` (the cache)."""
    events: queue.Queue[_Event] = queue.Queue()
    stop = threading.Event()
    pump = threading.Thread(
        target=_pump, args=(open_stream, call, events, stop), name="agentrag-llm-stream", daemon=True
    )
    pump.start()
    pieces: list[str] = []
    recorded = False
    failure = ""  # the error's type, when the stream failed
    started = time.monotonic()
    try:
        while True:
            remaining = call.remaining()
            if remaining <= 0:
                raise call.timed_out()
            try:
                kind, value = events.get(timeout=remaining)
            except queue.Empty:
                raise call.timed_out() from None
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
                    meter.add(*usage, call.described(*usage, started, stream=True))
                recorded = True
                keep("".join(pieces))
                return
    except LLMError as exc:
        failure = type(exc).__name__
        raise
    finally:
        stop.set()
        if not recorded and pieces and meter is not None:
            usage = (estimate_message_tokens(messages), estimate_tokens("".join(pieces)))
            meter.add(*usage, call.described(*usage, started, finish_reason="error", stream=True, error=failure))
        elif not recorded and failure and meter is not None:
            meter.failed(call.described(0, 0, started, stream=True, error=failure))


def _pump(open_stream: Callable[[], Any], call: Call, events: queue.Queue[_Event], stop: threading.Event) -> None:
    """Reads the SSE stream in its own thread, so a stalled server cannot hold the consumer past the deadline."""
    try:
        stream = open_stream()
    except LLMError as exc:
        events.put(("error", exc))
        return
    finish: str | None = None
    usage: tuple[int, int] | None = None
    try:
        for chunk in stream:
            if stop.is_set() or time.monotonic() > call.deadline:
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
        events.put(("error", call.timed_out()))
        return
    except Exception as exc:  # anything else must still reach the consumer, or it would wait for the deadline
        events.put(("error", _broken(call, f"broke off: {exc.__cause__ or exc}")))
        return
    finally:
        stream.close()
    if finish is None:
        events.put(("error", _broken(call, "ended before the model finished")))
        return
    events.put(("done", usage))


def _broken(call: Call, what: str) -> LLMUnavailable:
    return LLMUnavailable(
        f"stream from model '{call.model}' at {call.endpoint} {what}", model=call.model, endpoint=call.endpoint
    )
