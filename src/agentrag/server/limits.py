"""What bounds a request: a token bucket per API key, refilled continuously; a body size counted as the
bytes arrive; the length of a question or a message."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class RateLimiter:
    def __init__(self, per_minute: int) -> None:
        self.capacity = float(max(1, per_minute))
        self.rate = self.capacity / 60.0  # tokens per second
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last refill)
        self._lock = threading.Lock()

    def check(self, key: str) -> float:
        """0 if the request may go ahead (and is counted), else the seconds until it may."""
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate


class BodyTooLarge(Exception):
    """Raised inside the app's `receive` once a body passes its limit; `BodyLimit` answers 413."""


class BodyLimit:
    """ASGI middleware: 413 for a body over its limit, judged on the bytes received, so a chunked body (no
    Content-Length) or one that lies about its length is stopped too. A declared length over the limit is
    refused before anything is read."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[Scope], tuple[int, str]]) -> None:
        self.app = app
        self.limit_for = limit_for  # scope -> (bytes, the setting that says so)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, setting = self.limit_for(scope)
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await _too_large(send, limit, setting)
            return
        received = 0
        over = False
        started = False

        async def counted() -> Message:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    over = True
                    raise BodyTooLarge
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if over:
                return  # whatever the app says about a cut-off body, the answer is 413
            started = started or message["type"] == "http.response.start"
            await send(message)

        with contextlib.suppress(BodyTooLarge):
            await self.app(scope, counted, guarded)
        if over and not started:
            await _too_large(send, limit, setting)


async def _too_large(send: Send, limit: int, setting: str) -> None:
    body = json.dumps({"detail": f"request too large: over the limit of {_size(limit)} ({setting})"}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": [*headers, (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n // 1024} KB"


def check_length(field: str, text: str, limit: int) -> None:
    """422 for text over `limit` characters (`server.max_question_chars`), saying how long it was."""
    if len(text) > limit:
        raise HTTPException(
            422, f"{field}: {len(text)} characters, over the limit of {limit} (server.max_question_chars)"
        )
