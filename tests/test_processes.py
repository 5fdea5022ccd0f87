"""Several processes on one data directory: conversation locks, conversations, memory, keys and rate limits
stay right when workers (or the service and `agentrag chat`) write at the same time."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from agentrag.agent.facts import FactStore
from agentrag.agent.memory import ConversationStore
from agentrag.embed.base import Embedder
from agentrag.errors import Busy, ConfigError
from agentrag.locks import FileLocks, Locks, make_locks
from agentrag.server.keys import KeyStore
from agentrag.server.limits import RateLimiter
from tests.server.test_redis_cache import REDIS, redis_proc, redis_url  # noqa: F401 - the Redis fixtures
from tests.servers import free_port

needs_redis = pytest.mark.skipif(REDIS is None, reason="redis-server is not installed (.ci/run installs it)")
ROOT = Path(__file__).resolve().parent.parent

# A child process: hold the lock, say so, keep it for a while.
HOLDER = """
import sys, time
from pathlib import Path
from agentrag.locks import make_locks
with make_locks(sys.argv[1] or None, Path(sys.argv[2]), 5.0).hold("conversation k/c1"):
    print("held", flush=True)
    time.sleep(float(sys.argv[3]))
"""

# A child process: add turns to one conversation, each a load, an append and a save under the lock.
WRITER = """
import sys
from pathlib import Path
from agentrag.agent.memory import ConversationStore, Turn
from agentrag.locks import make_locks
locks, store = make_locks(sys.argv[1] or None, Path(sys.argv[2]), 60.0), ConversationStore(Path(sys.argv[3]))
for i in range(int(sys.argv[5])):
    with locks.hold("conversation k/c1"):
        conversation = store.load("c1")
        conversation.turns.append(Turn(question=f"{sys.argv[4]}-{i}", answer="."))
        store.save(conversation)
"""


def _python(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )


@pytest.fixture(params=["file", pytest.param("redis", marks=needs_redis)])
def lock_url(request: pytest.FixtureRequest) -> str:
    """'' for the file locks of one host, a Redis URL for the shared ones."""
    return "" if request.param == "file" else str(request.getfixturevalue("redis_url"))


def test_a_conversation_lock_held_by_another_process_makes_a_question_wait_then_go(
    lock_url: str, tmp_path: Path
) -> None:
    holder = _python(HOLDER, lock_url, str(tmp_path / "locks"), "2.5")
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    impatient: Locks = make_locks(lock_url or None, tmp_path / "locks", wait_s=0.5)
    busy = r"conversation k/c1: busy with another request for over 0\.5 s"
    with pytest.raises(Busy, match=busy), impatient.hold("conversation k/c1"):
        pass
    with impatient.hold("conversation k/c2"):  # another conversation does not wait
        pass
    patient = make_locks(lock_url or None, tmp_path / "locks", wait_s=30.0)
    started = time.monotonic()
    with patient.hold("conversation k/c1"):
        waited = time.monotonic() - started
    assert holder.wait(timeout=30) == 0
    assert 0.5 < waited < 25, "it went ahead once the other process let go"


def test_two_processes_adding_turns_to_one_conversation_lose_none(lock_url: str, tmp_path: Path) -> None:
    args = (lock_url, str(tmp_path / "locks"), str(tmp_path / "conversations"))
    writers = [_python(WRITER, *args, name, "40") for name in ("a", "b")]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    turns = [t.question for t in ConversationStore(tmp_path / "conversations").load("c1").turns]
    assert len(turns) == 80
    assert sorted(turns) == sorted(f"{name}-{i}" for name in "ab" for i in range(40))
    assert not list((tmp_path / "conversations").glob("*.tmp")), "no temporary file is left behind"


def test_a_lock_is_freed_when_the_process_holding_it_dies(tmp_path: Path) -> None:
    holder = _python(HOLDER, "", str(tmp_path / "locks"), "60")
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    holder.kill()
    holder.wait(timeout=10)
    with FileLocks(tmp_path / "locks", wait_s=5.0).hold("conversation k/c1"):
        pass


def test_two_memory_databases_open_at_once_store_a_fact_said_twice_once(tmp_path: Path, embedder: Embedder) -> None:
    stores = [FactStore(tmp_path / "home", embedder) for _ in range(2)]  # two connections, as two processes have
    message = "I work on the Enterprise plan billing."
    gate = threading.Barrier(2)

    def remember(store: FactStore) -> None:
        gate.wait()
        store.remember("k1", message)

    threads = [threading.Thread(target=remember, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [f.text for f in stores[0].for_owner("k1")] == [message]
    for store in stores:
        store.close()


def test_knowledge_bases_revoked_by_two_processes_at_once_all_leave_the_key(tmp_path: Path) -> None:
    names = [f"kb{i}" for i in range(40)]
    with KeyStore(tmp_path) as keys:
        key, _ = keys.create(names)
    stores = [KeyStore(tmp_path) for _ in range(2)]  # two connections, as two workers have

    def revoke(store: KeyStore, mine: list[str]) -> None:
        for name in mine:
            store.revoke_kb(name)

    threads = [threading.Thread(target=revoke, args=(s, names[i::2])) for i, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [k.kbs for k, _ in stores[0].list() if k.key_id == key.key_id] == [frozenset()]
    for store in stores:
        store.close()


def test_a_rate_limit_in_memory_is_a_moving_window_per_key() -> None:
    limiter = RateLimiter(3)
    assert [limiter.check("k1") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.check("k1")
    assert 58 < wait <= 60, "the oldest of the three requests leaves the window a minute after it came"
    assert limiter.check("k2") == 0.0, "another key has its own window"


@needs_redis
def test_workers_limiters_on_one_redis_count_one_window(redis_url: str) -> None:  # noqa: F811
    workers = [RateLimiter(5, redis_url) for _ in range(2)]
    allowed = [workers[i % 2].check("k1") == 0.0 for i in range(8)]
    assert allowed == [True] * 5 + [False] * 3
    assert RateLimiter(5, redis_url).check("k2") == 0.0


def test_a_rate_limit_store_that_is_down_lets_requests_through_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    limiter = RateLimiter(1, f"redis://127.0.0.1:{free_port()}/0")
    with caplog.at_level(logging.WARNING, logger="agentrag.server.limits"):
        assert [limiter.check("k1") for _ in range(3)] == [0.0, 0.0, 0.0]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "rate limits are off" in warnings[0]


def test_a_malformed_redis_url_is_an_error_naming_the_setting() -> None:
    with pytest.raises(ConfigError, match="redis_url"):
        RateLimiter(5, "http://nowhere")
    with pytest.raises(ConfigError, match="redis_url"):
        make_locks("http://nowhere", Path("."), 1.0)
