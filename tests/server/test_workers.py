"""Several workers against one real redis-server: `agentrag serve` processes, as deployed.

Two kinds of deployment are started. The deterministic one: two `agentrag serve` processes on two ports over
one --home and one Redis (what a load balancer in front of several processes or hosts sees), so each request
goes to the worker the test chose. Then `agentrag serve --workers 2` on one port, where the kernel picks the
worker for each connection: only what holds whichever worker answers is asserted there (one rate-limit
window for the key, two worker processes).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from agentrag.server.keys import KeyStore
from tests.server.test_redis_cache import REDIS, redis_proc, redis_url  # noqa: F401 - the Redis fixtures
from tests.servers import free_port

pytestmark = pytest.mark.skipif(REDIS is None, reason="redis-server is not installed (.ci/run installs it)")

PER_MINUTE = 40
PLANS = (
    "# Plans\n\n## Enterprise\n\nThe Enterprise plan costs 25,000 yuan a month. "
    "It allows 3,000 requests per minute.\n\n## Team\n\nThe Team plan costs 900 yuan a month. "
    "It allows 300 requests per minute.\n"
)


FAQ = "# FAQ\n\nSupport answers within one business day on every plan.\n"


def _environment(redis: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTRAG_", "OPENAI_"))}  # model-free
    return {**env, "AGENTRAG_REDIS_URL": redis, "AGENTRAG_SERVER__REQUESTS_PER_MINUTE": str(PER_MINUTE)}


@contextmanager
def serve(home: Path, redis: str, *extra: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`agentrag serve` in its own process until the block ends; yields its URL and the process."""
    port = free_port()
    log = home.parent / f"serve-{port}.log"  # a file, not a pipe: a full pipe would stall the server
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentrag.cli", "serve", "--home", str(home), "--port", str(port), *extra],
            env=_environment(redis),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"serve exited: {log.read_text()}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"serve {' '.join(extra)} did not start on {url}")
            time.sleep(0.2)
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _key(home: Path) -> str:
    with KeyStore(home) as keys:
        return keys.create(admin=True)[1]


def _health_cache(client: httpx.Client) -> dict[str, int]:
    cache: dict[str, int] = client.get("/health").json()["cache"]
    return cache


def test_two_workers_share_rate_limits_cache_documents_and_conversations(redis_url: str, tmp_path: Path) -> None:  # noqa: F811
    import redis

    home = tmp_path / "home"
    key, limited = _key(home), _key(home)
    with ExitStack() as stack:
        (url_a, _), (url_b, _) = (stack.enter_context(serve(home, redis_url)) for _ in range(2))
        a = stack.enter_context(httpx.Client(base_url=url_a, headers={"Authorization": f"Bearer {key}"}, timeout=60))
        b = stack.enter_context(httpx.Client(base_url=url_b, headers={"Authorization": f"Bearer {key}"}, timeout=60))

        # An ingest through A is seen by a search through B, which had the knowledge base open already.
        assert a.post("/v1/kb", json={"name": "kb"}).status_code == 201
        assert b.post("/v1/kb/kb/search", json={"query": "Enterprise plan", "k": 3}).json()["hits"] == []
        uploaded = a.post("/v1/kb/kb/documents", files={"file": ("plans.md", PLANS.encode())})
        assert uploaded.status_code == 201, uploaded.text
        hits = b.post("/v1/kb/kb/search", json={"query": "Enterprise plan cost", "k": 3}).json()["hits"]
        assert hits
        assert "25,000 yuan" in hits[0]["text"]

        # The same file sent to both workers at once: they take turns, so one adds it and the other finds it so.
        with ThreadPoolExecutor(2) as pool:
            sent = pool.map(lambda c: c.post("/v1/kb/kb/documents", files={"file": ("faq.md", FAQ.encode())}), (a, b))
            statuses = sorted(r.json()["status"] for r in sent)
        assert statuses == ["added", "unchanged"]

        # A cache entry written by A is read by B: B's first search of the query is a hit, and no entry is added.
        shared = redis.Redis.from_url(redis_url)
        query = {"query": "how many requests per minute for the Team plan", "k": 3}
        first = a.post("/v1/kb/kb/search", json=query).json()
        entries = len(shared.keys("agentrag:search:*"))
        hits_before = _health_cache(b)["hits"]
        assert b.post("/v1/kb/kb/search", json=query).json() == first
        assert _health_cache(b)["hits"] > hits_before, "worker B was served the entry worker A wrote"
        assert len(shared.keys("agentrag:search:*")) == entries

        # A follow-up asked on B resolves "it" from the question asked on A (the conversation is shared).
        ask = {"conversation_id": "c1", "mode": "single"}
        first_turn = a.post("/v1/kb/kb/ask", json={"question": "How much does the Enterprise plan cost?", **ask})
        assert "25,000" in first_turn.json()["answer"]
        follow_up = "and how many requests per minute does it allow?"
        follow = b.post("/v1/kb/kb/ask", json={"question": follow_up, **ask})
        assert follow.status_code == 200, follow.text
        assert "3,000 requests per minute" in follow.json()["answer"]
        assert "Enterprise" in _standalone(b, follow.json()["trace_id"]), "read with the turn asked on A"
        alone = b.post("/v1/kb/kb/ask", json={**ask, "question": follow_up, "conversation_id": "c2"}).json()
        assert "Enterprise" not in _standalone(b, alone["trace_id"]), "without that turn nothing says which plan"

        # Deleted and created again through A: B serves the new knowledge base, not the copy it had open.
        assert a.delete("/v1/kb/kb").status_code == 204
        assert a.post("/v1/kb", json={"name": "kb"}).status_code == 201
        assert a.post("/v1/kb/kb/documents", files={"file": ("faq.md", FAQ.encode())}).status_code == 201
        texts = [
            h["text"] for h in b.post("/v1/kb/kb/search", json={"query": "Enterprise plan", "k": 5}).json()["hits"]
        ]
        assert texts
        assert not any("Enterprise" in t for t in texts), "nothing of the deleted knowledge base is served"

        # One window for the key across both workers: PER_MINUTE requests in all pass, not PER_MINUTE each.
        codes = []
        for i in range(PER_MINUTE + 10):
            with httpx.Client(base_url=(url_a, url_b)[i % 2], headers={"Authorization": f"Bearer {limited}"}) as c:
                codes.append(c.get("/v1/kb").status_code)
        assert codes == [200] * PER_MINUTE + [429] * 10


def _standalone(client: httpx.Client, trace_id: str) -> str:
    """The query a follow-up was rewritten to (empty when it was not one)."""
    events = client.get(f"/v1/kb/kb/traces/{trace_id}").json()["events"]
    return " ".join(e["args"]["query"] for e in events if e["step"] == "rewrite" and e["decision"] == "standalone")


def _children(pid: int) -> list[int]:
    tasks = Path(f"/proc/{pid}/task")
    return [int(c) for t in tasks.iterdir() for c in (t / "children").read_text().split()]


def test_serve_workers_2_on_one_port_shares_one_rate_limit(redis_url: str, tmp_path: Path) -> None:  # noqa: F811
    home = tmp_path / "home"
    key = _key(home)
    with serve(home, redis_url, "--workers", "2") as (url, proc):
        if Path("/proc").is_dir():
            workers = [c for c in _children(proc.pid) if "spawn_main" in Path(f"/proc/{c}/cmdline").read_text()]
            assert len(workers) == 2, "two worker processes serve the port"
        codes = []
        for _ in range(PER_MINUTE + 5):  # a new connection each time: the kernel spreads them over the workers
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as client:
                codes.append(client.get("/v1/kb").status_code)
    assert codes == [200] * PER_MINUTE + [429] * 5


def test_workers_without_redis_are_refused_naming_the_setting(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRAG_")}
    command = [sys.executable, "-m", "agentrag.cli", "serve", "--home", str(tmp_path / "home"), "--workers", "2"]
    missing = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2
    assert "needs Redis" in missing.stderr
    assert "redis_url" in missing.stderr
    assert "AGENTRAG_REDIS_URL" in missing.stderr
    from_settings = subprocess.run(
        command[:-2], env={**env, "AGENTRAG_SERVER__WORKERS": "2"}, capture_output=True, text=True, timeout=60
    )
    assert from_settings.returncode == 2, "server.workers = 2 in the settings needs Redis as --workers 2 does"
    assert "needs Redis" in from_settings.stderr
    dead = f"redis://127.0.0.1:{free_port()}/0"
    unreachable = subprocess.run(
        command, env={**env, "AGENTRAG_REDIS_URL": dead}, capture_output=True, text=True, timeout=60
    )
    assert unreachable.returncode == 2
    assert "does not answer" in unreachable.stderr
    assert dead in unreachable.stderr.replace("\n", "")
