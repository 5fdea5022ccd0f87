"""A Redis that refuses connections costs the shared cache, not the answers, and says so once in the log."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agentrag.cache import RedisCache, cache_key
from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase, _caches
from agentrag.settings import load_settings
from tests.helpers import write
from tests.servers import free_port

pytest.importorskip("redis")


def warnings_about(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and text in r.getMessage()]


def test_a_redis_that_refuses_connections_is_logged_once_and_answers_go_on(
    caplog: pytest.LogCaptureFixture, tmp_path: Path, embedder: Embedder
) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    caplog.set_level(logging.WARNING, logger="agentrag")
    settings = load_settings(tmp_path / "home", redis_url=url)
    try:
        with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
            kb.ingest([write(tmp_path / "aurora.md", "# Aurora\n\nError E1042 means the quota is exhausted.\n")])
            for _ in range(3):
                assert "quota" in kb.search("E1042", k=1)[0].chunk.text
    finally:
        _caches.pop(url, None)
    (warning,) = warnings_about(caplog, "127.0.0.1")
    assert "shared cache is off" in warning


def test_a_redis_url_with_a_password_is_not_logged_in_full(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentrag")
    cache = RedisCache(f"redis://:s3cret@127.0.0.1:{free_port()}/0", ttl_s=60, retry_s=0)
    assert cache.get(cache_key("x", 1)) is None
    cache.set(cache_key("x", 1), b"ignored")
    assert len(warnings_about(caplog, "127.0.0.1")) == 1
    assert "s3cret" not in caplog.text


def test_a_redis_url_that_is_not_one_is_an_error_naming_the_setting() -> None:
    from agentrag.errors import ConfigError

    with pytest.raises(ConfigError, match="redis_url"):
        RedisCache("http://127.0.0.1:6379", ttl_s=60)
