"""What bounds a request: a moving window of requests per API key (the `limits` package: in Redis when
`redis_url` is set, so every worker counts against the same window; in memory for one process); a body
size counted as the bytes arrive; the length of a question or a message."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable

from fastapi import HTTPException
from limits import RateLimitItemPerMinute
from limits.errors import StorageError
from limits.storage import MemoryStorage, RedisStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentrag.cache import redacted_url
from agentrag.errors import ConfigError

log = logging.getLogger(__name__)


class RateLimiter:
    """At most `per_minute` requests per key in any 60 seconds."""

    def __init__(self, per_minute: int, redis_url: str | None = None) -> None:
        self.item = RateLimitItemPerMinute(max(1, per_minute))
        if redis_url:
            try:
                storage: MemoryStorage | RedisStorage = RedisStorage(
                    redis_url,
                    key_prefix="agentrag:limits",
                    wrap_exceptions=True,
                    socket_timeout=2.0,
                    socket_connect_timeout=2.0,
                )
            except ValueError as exc:
                raise ConfigError(f"redis_url (AGENTRAG_REDIS_URL) {redacted_url(redis_url)!r}: {exc}") from exc
        else:
            storage = MemoryStorage()
        self.storage_name = f"redis ({redacted_url(redis_url)})" if redis_url else "memory"
        self._limiter = MovingWindowRateLimiter(storage)
        self._down = False

    def check(self, key: str) -> float:
        """0 if the request may go ahead (and is counted), else the seconds until it may.

        While Redis is unreachable requests go ahead uncounted (one warning says so): an outage of the shared
        store costs the limit, not the service, as it costs the cache."""
        try:
            if self._limiter.hit(self.item, key):
                self._recovered()
                return 0.0
            reset, _ = self._limiter.get_window_stats(self.item, key)
        except StorageError as exc:  # raised by the Redis storage only (wrap_exceptions)
            if not self._down:
                self._down = True
                log.warning("rate limits are off: their store %s is unreachable (%s)", self.storage_name, exc)
            return 0.0
        self._recovered()
        return max(reset - time.time(), 0.001)

    def _recovered(self) -> None:
        if self._down:
            self._down = False
            log.info("rate limits are back on: %s answers again", self.storage_name)


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
