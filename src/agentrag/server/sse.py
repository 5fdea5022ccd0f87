"""Server-sent events from work that runs in a thread: what it emits is streamed as it happens.

The answering code calls back (`on_event`, `on_token`) from a worker thread; a response generator drains
those calls in order. The stream always ends: with the work's result, or with the error it raised.

Not sse-starlette (weighed in issue 12): the framing here is two one-line functions, while the work is the
bridge from a worker thread, which it does not provide; and its defaults (CRLF line ends, a `: ping` comment
every 15 s) would change the bytes the tests and the page read.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from fastapi.responses import StreamingResponse

Emit = Callable[[str, Any], None]
DONE = "done"
ERROR = "error"


def run_streaming(work: Callable[[Emit], Any], name: str) -> Iterator[tuple[str, Any]]:
    """Start `work(emit)` in a daemon thread now; yield each `(kind, value)` it emits, then `("done", result)`
    or `("error", exception)`, and stop."""
    items: queue.Queue[tuple[str, Any]] = queue.Queue()

    def worker() -> None:
        try:
            items.put((DONE, work(lambda kind, value: items.put((kind, value)))))
        except Exception as exc:  # the stream must end with an event, whatever happened
            items.put((ERROR, exc))

    threading.Thread(target=worker, daemon=True, name=name).start()

    def drain() -> Iterator[tuple[str, Any]]:
        while True:
            kind, value = items.get()
            yield kind, value
            if kind in (DONE, ERROR):
                return

    return drain()


def event(name: str, data: Any) -> str:
    """One named server-sent event with a JSON payload."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def data(payload: Any) -> str:
    """One unnamed server-sent event (the OpenAI streaming format); a str payload is sent as it is."""
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {text}\n\n"


def response(body: Iterator[str], headers: dict[str, str] | None = None) -> StreamingResponse:
    return StreamingResponse(
        body, media_type="text/event-stream", headers={"Cache-Control": "no-cache", **(headers or {})}
    )
