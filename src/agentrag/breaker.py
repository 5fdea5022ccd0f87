"""A circuit breaker for one remote endpoint: after a connection failure, calls fail at once for a while.

An endpoint that is down costs every question its retries and backoff (5-12 s) before the fallback; the
breaker remembers the failure for `cooldown_s` seconds and lets callers raise the same error straight
away, saying so. A connection that succeeds, or the cool-down running out, closes it again. Only failures
to connect open it: a server that answers, even with an error, is up.
"""

from __future__ import annotations

import threading
import time


class Breaker:
    """The failure state of one endpoint; safe to share between threads."""

    def __init__(self, cooldown_s: float) -> None:
        self.cooldown_s = cooldown_s
        self._lock = threading.Lock()
        self._open_until = 0.0
        self._failed_at = 0.0
        self._error = ""

    def refusal(self) -> str | None:
        """While the endpoint is known to be down: the error it failed with and how long ago; else None."""
        with self._lock:
            now = time.monotonic()
            if now >= self._open_until:
                return None
            return (
                f"{self._error} [not retried: unreachable {now - self._failed_at:.1f}s ago, "
                f"trying again {self._open_until - now:.1f}s from now]"
            )

    def trip(self, error: str) -> None:
        """A connection failure: refuse calls for `cooldown_s` seconds (never, when it is 0)."""
        if self.cooldown_s <= 0:
            return
        with self._lock:
            self._failed_at = time.monotonic()
            self._open_until = self._failed_at + self.cooldown_s
            self._error = error

    def reset(self) -> None:
        with self._lock:
            self._open_until = 0.0
