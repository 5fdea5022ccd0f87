"""`agentrag serve --workers N`: N uvicorn worker processes, each building its app through the factory.

Each worker is its own process with its own memory, so whatever must be one thing for the whole service goes
through Redis (`redis_url`): the cache (`cache.RedisCache`), the per-key rate limits (`limits.RateLimiter`) and
the conversation locks (`locks.RedisLocks`). Keys, conversations and memory are files and SQLite databases
under --home, written safely by several processes (transactions, atomic renames). Hence: more than one worker
without Redis is refused, naming the setting, rather than run with N rate limits and N caches.
"""

from __future__ import annotations

import os

from agentrag.cache import redacted_url
from agentrag.errors import ConfigError
from agentrag.settings import Settings

# The factory the workers import: its settings come from the environment (AGENTRAG_HOME, AGENTRAG_...).
FACTORY = "agentrag.server.app:create_app_from_environment"


def check_workers(settings: Settings, workers: int) -> None:
    """ConfigError unless `workers` processes can share what must be shared (a Redis that answers)."""
    if workers <= 1:
        return
    if not settings.redis_url:
        raise ConfigError(
            f"--workers {workers} needs Redis, which the workers share for the cache, the rate limits and the "
            "conversation locks: set redis_url in agentrag.toml or AGENTRAG_REDIS_URL (e.g. redis://127.0.0.1:6379/0)"
        )
    import redis

    url = redacted_url(settings.redis_url)
    try:
        redis.Redis.from_url(settings.redis_url, socket_connect_timeout=3.0, socket_timeout=3.0).ping()
    except ValueError as exc:
        raise ConfigError(f"redis_url (AGENTRAG_REDIS_URL) {url!r}: {exc}") from exc
    except redis.RedisError as exc:
        raise ConfigError(
            f"--workers {workers}: Redis at redis_url (AGENTRAG_REDIS_URL) {url} does not answer: {exc}"
        ) from exc


def run(settings: Settings, host: str, port: int, workers: int) -> None:
    """Serve until stopped: in this process for one worker, else `workers` processes on one socket."""
    import uvicorn

    from agentrag.server.app import create_app

    check_workers(settings, workers)
    if workers == 1:
        uvicorn.run(create_app(settings), host=host, port=port, log_level="info")
        return
    # The workers are spawned: they read their settings as this process did, from --home and the environment.
    os.environ["AGENTRAG_HOME"] = str(settings.home)
    uvicorn.run(FACTORY, factory=True, workers=workers, host=host, port=port, log_level="info")
