"""The cache shared through a real redis-server (Debian's package; .ci/run installs it)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrag.cache import RedisCache, cache_key
from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from tests.helpers import write
from tests.servers import free_port, wait_for_port

REDIS = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(REDIS is None, reason="redis-server is not installed (.ci/run installs it)")


@pytest.fixture
def redis_proc(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    assert REDIS is not None
    proc = subprocess.Popen(
        [REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        yield f"redis://127.0.0.1:{port}/0", proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def redis_url(redis_proc: tuple[str, subprocess.Popen[bytes]]) -> str:
    return redis_proc[0]


def test_search_results_are_shared_through_redis_and_invalidated_by_updates(
    redis_url: str, tmp_path: Path, embedder: Embedder
) -> None:
    import redis

    doc = write(tmp_path / "docs" / "aurora.md", "# Aurora\n\nError E1042 means the query has over 128 clauses.\n")
    settings = load_settings(tmp_path / "home", redis_url=redis_url)
    client = redis.Redis.from_url(redis_url)
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        kb.ingest([doc])
        first = kb.search("E1042 clauses", k=2)
        keys = client.keys("agentrag:search:*")
        assert len(keys) == 1
        assert kb.search("E1042 clauses", k=2)[0].chunk.text == first[0].chunk.text
        assert len(client.keys("agentrag:search:*")) == 1, "the second search was served from Redis"
        write(doc, "# Aurora\n\nError E1042 means the query has over 256 clauses.\n")
        kb.ingest([doc])
        updated = kb.search("E1042 clauses", k=2)
        assert "256" in updated[0].chunk.text
        assert len(client.keys("agentrag:search:*")) == 2, "the update moved the key: the old entry is never read"


def test_a_redis_outage_costs_the_cache_not_the_answer(redis_proc: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, proc = redis_proc
    cache = RedisCache(url, ttl_s=60)
    cache.set(cache_key("x", 1), b"value")
    assert cache.get(cache_key("x", 1)) == b"value"
    proc.terminate()
    proc.wait(timeout=10)
    assert cache.get(cache_key("x", 1)) is None
    cache.set(cache_key("x", 2), b"ignored")


def test_a_recreated_knowledge_base_is_not_served_the_old_ones_rankings_from_another_process(
    redis_url: str, tmp_path: Path, embedder: Embedder
) -> None:
    import json
    import os
    import sys

    old, new = tmp_path / "old", tmp_path / "new"
    write(old / "a-aurora.md", "# Aurora\n\nError E1042 means the query has over 128 clauses.\n")
    write(old / "b-lunch.md", "# Lunch\n\nThe canteen opens at noon and closes at two.\n")
    write(new / "a-lunch.md", "# Lunch\n\nThe canteen opens at noon and closes at two.\n")
    write(new / "b-aurora.md", "# Aurora\n\nError E1042 means the index is being rebuilt; retry later.\n")
    home = tmp_path / "home"
    settings = load_settings(home, redis_url=redis_url)
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        kb.ingest(sorted(old.iterdir()))
        assert "128 clauses" in kb.search("E1042", k=2)[0].chunk.text
        kb.destroy()

    # Another process creates the knowledge base again, with as many writes (the same generation).
    env = {**os.environ, "AGENTRAG_REDIS_URL": redis_url}

    def cli(*args: str) -> str:
        command = [sys.executable, "-m", "agentrag.cli", *args, "--home", str(home), "--kb", "kb", "--json"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=True)
        return done.stdout

    cli("ingest", str(new / "a-lunch.md"), str(new / "b-aurora.md"))
    hits = json.loads(cli("search", "E1042", "-k", "2"))["hits"]
    assert "being rebuilt" in hits[0]["text"]
    assert hits[0]["source"].endswith("b-aurora.md")


def test_a_redis_that_dies_mid_run_is_logged_once_and_its_return_too(
    redis_proc: tuple[str, subprocess.Popen[bytes]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    caplog.set_level(logging.INFO, logger="agentrag")
    url, proc = redis_proc
    cache = RedisCache(url, ttl_s=60, retry_s=0)
    cache.set(cache_key("x", 1), b"value")
    assert cache.get(cache_key("x", 1)) == b"value"
    assert not caplog.records
    proc.terminate()
    proc.wait(timeout=10)
    for n in range(5):
        assert cache.get(cache_key("x", n)) is None
        cache.set(cache_key("x", n), b"ignored")
    down = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(down) == 1, [r.getMessage() for r in caplog.records]
    assert url.rsplit("/", 1)[0].removeprefix("redis://") in down[0].getMessage()
    port = url.rsplit(":", 1)[1].split("/")[0]
    assert REDIS is not None
    again = subprocess.Popen(
        [REDIS, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(int(port))
        cache.set(cache_key("x", 9), b"back")
        assert cache.get(cache_key("x", 9)) == b"back"
        assert any("again" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)
        assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    finally:
        again.terminate()
        again.wait(timeout=10)
