"""Caches for retrieval results and LLM calls: in-process by default, Redis when configured.

Keys are content hashes that include the knowledge base's instance id and generation, so any ingest, update
or delete moves every key of that knowledge base, and so does deleting it and creating it again under the same
name: a stale entry can never be served, it simply stops being asked for and ages out (LRU in process, TTL in
Redis).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections import OrderedDict
from typing import Any, Protocol

from agentrag.errors import ConfigError


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
    """Shared by every worker of a deployment; entries expire after `ttl_s`."""

    def __init__(self, url: str, ttl_s: int = 3600) -> None:
        try:
            import redis
        except ImportError as exc:  # pragma: no cover - redis is a dependency of the server extra
            raise ConfigError("AGENTRAG_REDIS_URL is set but the redis package is missing: pip install redis") from exc
        self._client = redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0)
        self._ttl = ttl_s
        self._url = url
        self.hits = 0  # this process's lookups (other workers keep their own counts)
        self.misses = 0
        try:
            self._client.ping()
        except redis.RedisError as exc:
            raise ConfigError(f"cannot reach Redis at {url}: {exc}") from exc

    @property
    def name(self) -> str:
        return f"redis ({self._url})"

    def get(self, key: str) -> bytes | None:
        import redis

        try:
            value = self._client.get(key)
        except redis.RedisError:
            value = None  # a cache outage slows answers down; it must not fail them
        if not isinstance(value, bytes):
            self.misses += 1
            return None
        self.hits += 1
        return value

    def set(self, key: str, value: bytes) -> None:
        import redis

        with contextlib.suppress(redis.RedisError):  # an outage only costs the cache, never the answer
            self._client.set(key, value, ex=self._ttl)


def make_cache(redis_url: str | None, max_entries: int = 4096, ttl_s: int = 3600) -> Cache:
    if redis_url:
        return RedisCache(redis_url, ttl_s)
    return MemoryCache(max_entries, ttl_s)
