"""Caches for retrieval results and LLM calls: in-process by default, Redis when configured.

Keys are content hashes that include the knowledge base's instance id and generation, so any ingest, update
or delete moves every key of that knowledge base, and so does deleting it and creating it again under the same
name: a stale entry can never be served, it simply stops being asked for and ages out (LRU in process, TTL in
Redis).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from agentrag.errors import ConfigError

log = logging.getLogger(__name__)


class Cache(Protocol):
    hits: int
    misses: int

    def get(self, key: str) -> bytes | None: ...

    def set(self, key: str, value: bytes) -> None: ...

    @property
    def name(self) -> str: ...


def cache_key(namespace: str, *parts: Any) -> str:
    """A stable key from JSON-serialisable parts (sorted keys, so dict order never matters)."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return f"agentrag:{namespace}:{hashlib.sha256(payload.encode('utf-8')).hexdigest()}"


class MemoryCache:
    """A bounded LRU with a time to live; thread-safe."""

    def __init__(self, max_entries: int = 4096, ttl_s: float = 3600.0) -> None:
        self._data: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._max = max_entries
        self._ttl = ttl_s
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return "memory"

    def get(self, key: str) -> bytes | None:
        with self._lock:
            item = self._data.get(key)
            if item is not None and time.monotonic() - item[0] > self._ttl:
                del self._data[key]
                item = None
            if item is None:
                self.misses += 1
                return None
            self.hits += 1
            self._data.move_to_end(key)
            return item[1]

    def set(self, key: str, value: bytes) -> None:
        with self._lock:
            self._data[key] = (time.monotonic(), value)
            self._data.move_to_end(key)
            while len(self._data) > self._max:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


class RedisCache:
    """Shared by every worker of a deployment; entries expire after `ttl_s`.

    An outage (at start or mid-run) costs the cache, never an answer: lookups miss and writes are dropped,
    one warning says so, Redis is tried again at most every `retry_s` seconds, and its return is logged too.
    """

    def __init__(self, url: str, ttl_s: int = 3600, retry_s: float = 5.0) -> None:
        try:
            import redis
        except ImportError as exc:  # pragma: no cover - redis is a dependency of the server extra
            raise ConfigError("AGENTRAG_REDIS_URL is set but the redis package is missing: pip install redis") from exc
        try:
            self._client = redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0)
        except ValueError as exc:
            raise ConfigError(f"redis_url (AGENTRAG_REDIS_URL) {redacted_url(url)!r}: {exc}") from exc
        self._ttl = ttl_s
        self._url = redacted_url(url)
        self._retry_s = retry_s
        self._down_since: float | None = None  # when the outage began; None while Redis answers
        self._next_try = 0.0
        self._lock = threading.Lock()
        self.hits = 0  # this process's lookups (other workers keep their own counts)
        self.misses = 0
        self._call(self._client.ping)

    @property
    def name(self) -> str:
        return f"redis ({self._url})"

    def _call(self, action: Callable[[], Any]) -> tuple[bool, Any]:
        """(True, result) when Redis answered; (False, None) during an outage, which is logged once."""
        import redis

        if self._down_since is not None and time.monotonic() < self._next_try:
            return False, None  # a dead server is not asked on every lookup
        try:
            result = action()
        except redis.RedisError as exc:
            with self._lock:
                first = self._down_since is None
                if first:
                    self._down_since = time.monotonic()
                self._next_try = time.monotonic() + self._retry_s
            if first:
                log.warning(
                    "Redis at %s is unreachable (%s): the shared cache is off until it answers again; "
                    "answers go on without it",
                    self._url,
                    exc,
                )
            return False, None
        if self._down_since is not None:
            with self._lock:
                since, self._down_since = self._down_since, None
            if since is not None:
                log.info(
                    "Redis at %s answers again after %.0f s: the shared cache is back on",
                    self._url,
                    time.monotonic() - since,
                )
        return True, result

    def get(self, key: str) -> bytes | None:
        _, value = self._call(lambda: self._client.get(key))
        if not isinstance(value, bytes):
            self.misses += 1
            return None
        self.hits += 1
        return value

    def set(self, key: str, value: bytes) -> None:
        self._call(lambda: self._client.set(key, value, ex=self._ttl))


def redacted_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + netloc))


def make_cache(redis_url: str | None, max_entries: int = 4096, ttl_s: int = 3600) -> Cache:
    if redis_url:
        return RedisCache(redis_url, ttl_s)
    return MemoryCache(max_entries, ttl_s)
