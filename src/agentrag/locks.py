"""Locks that hold across processes: one question at a time per conversation whichever worker answers it, one
upload at a time per file name, one knowledge base created at a time (display names stay unique).

With Redis configured the lock is a Redis lock (redis-py's `Lock`: a key with a lease, released by a token
only its holder knows), so workers on several hosts take turns. Without Redis it is a file lock under
`Layout.locks` (the `filelock` package: `flock` on POSIX, `msvcrt` on Windows), which holds between the
processes and threads of one host; the OS releases it when a holder dies. A Redis outage falls back to the
file lock, with one warning, rather than failing the question.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

from filelock import FileLock, Timeout

from agentrag.cache import redacted_url
from agentrag.errors import Busy, ConfigError

log = logging.getLogger(__name__)


class Locks(Protocol):
    def hold(self, name: str) -> AbstractContextManager[None]:
        """Held for the `with` block; Busy after waiting too long."""
        ...

    @property
    def name(self) -> str: ...


class FileLocks:
    """One lock file per name (hashed: names may hold any character) in `directory`."""

    def __init__(self, directory: Path, wait_s: float) -> None:
        self.directory = directory
        self.wait_s = wait_s

    @property
    def name(self) -> str:
        return f"file locks ({self.directory})"

    @contextmanager
    def hold(self, name: str) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{hashlib.sha256(name.encode('utf-8')).hexdigest()[:32]}.lock"
        # A fresh, non-singleton lock each time: its own file descriptor, so two threads of one process
        # exclude each other exactly as two processes do.
        lock = FileLock(path, timeout=self.wait_s, thread_local=False, is_singleton=False)
        try:
            lock.acquire()
        except Timeout as exc:
            raise Busy(f"{name}: busy with another request for over {self.wait_s:g} s") from exc
        try:
            yield
        finally:
            lock.release()


class RedisLocks:
    """Redis locks with a lease (a worker that dies holding one frees it when the lease ends). The lease, 15
    minutes, outlasts any preset's time budget (thorough: 180 s); a question given a longer budget may lose its
    lock to the next one when it runs out, which the release then logs."""

    def __init__(self, url: str, fallback: FileLocks, lease_s: float = 900.0) -> None:
        import redis

        try:
            self._client = redis.Redis.from_url(url, socket_timeout=5.0, socket_connect_timeout=2.0)
        except ValueError as exc:
            raise ConfigError(f"redis_url (AGENTRAG_REDIS_URL) {redacted_url(url)!r}: {exc}") from exc
        self._url = redacted_url(url)
        self._fallback = fallback
        self._lease_s = max(lease_s, fallback.wait_s)
        self._warned = False

    @property
    def name(self) -> str:
        return f"redis locks ({self._url})"

    @contextmanager
    def hold(self, name: str) -> Iterator[None]:
        import redis

        lock = self._client.lock(f"agentrag:lock:{name}", timeout=self._lease_s, blocking_timeout=self._fallback.wait_s)
        try:
            acquired: bool | None = lock.acquire()
            self._warned = False
        except redis.RedisError as exc:
            if not self._warned:
                self._warned = True
                log.warning("Redis at %s is unreachable (%s): conversation locks are this host's", self._url, exc)
            acquired = None
        if acquired is None:
            with self._fallback.hold(name):
                yield
            return
        if not acquired:
            raise Busy(f"{name}: busy with another request for over {self._fallback.wait_s:g} s")
        try:
            yield
        finally:
            try:
                lock.release()
            except redis.RedisError as exc:  # the lease ran out (or Redis went away): nothing left to free
                log.warning("conversation lock %s was not released cleanly: %s", name, exc)


def make_locks(redis_url: str | None, directory: Path, wait_s: float) -> Locks:
    files = FileLocks(directory, wait_s)
    return RedisLocks(redis_url, files) if redis_url else files
