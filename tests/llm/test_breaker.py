"""An endpoint that is down is remembered for a while: after a connection failure, calls to it fail at once,
naming the same error, instead of paying the retries again on every question; after the cool-down it is
tried again. The endpoint is a real socket on 127.0.0.1 that accepts each connection and closes it at once."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from agentrag.embed.openai import OpenAIEmbedder
from agentrag.errors import EmbeddingError, LLMUnavailable
from agentrag.llm.client import LLMClient
from agentrag.settings import EmbedderSettings, LLMSettings

USER = [{"role": "user", "content": "hi"}]


class Slammer:
    """Accepts connections and closes them unanswered, counting them: a server that crashed behind its port."""

    def __init__(self) -> None:
        self.connections = 0
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(16)
        self._socket.settimeout(0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            self.connections += 1
            connection.close()


@contextmanager
def slammer() -> Iterator[Slammer]:
    server = Slammer()
    server._thread.start()
    try:
        yield server
    finally:
        server._stop.set()
        server._thread.join()
        server._socket.close()


def test_an_unreachable_chat_endpoint_fails_fast_until_the_cool_down_ends() -> None:
    with slammer() as server:
        client = LLMClient(LLMSettings(base_url=server.url, model="m", max_retries=1, unreachable_cooldown_s=0.5))
        with pytest.raises(LLMUnavailable, match=r"cannot reach model 'm'") as first:
            client.chat(USER, role="agent", timeout_s=5)
        tried = server.connections
        assert tried >= 2, "the first call pays its retry"
        with pytest.raises(LLMUnavailable) as again:
            client.chat(USER, role="agent", timeout_s=5)
        assert server.connections == tried, "no connection while the endpoint is known to be down"
        assert str(first.value) in str(again.value)
        assert "unreachable" in str(again.value)
        assert again.value.endpoint == first.value.endpoint
        time.sleep(0.6)
        with pytest.raises(LLMUnavailable):
            client.chat(USER, role="agent", timeout_s=5)
        assert server.connections > tried, "tried again after the cool-down"


def test_the_breaker_can_be_turned_off() -> None:
    with slammer() as server:
        client = LLMClient(LLMSettings(base_url=server.url, model="m", max_retries=0, unreachable_cooldown_s=0))
        for _ in range(2):
            with pytest.raises(LLMUnavailable):
                client.chat(USER, role="agent", timeout_s=5)
        assert server.connections == 2


def test_an_unreachable_embeddings_endpoint_fails_fast_until_the_cool_down_ends() -> None:
    with slammer() as server:
        settings = EmbedderSettings(
            provider="openai", base_url=server.url, model="m", dimension=3, max_retries=1, unreachable_cooldown_s=0.5
        )
        remote = OpenAIEmbedder(settings)
        with pytest.raises(EmbeddingError, match="cannot reach embeddings endpoint") as first:
            remote.embed_queries(["x"])
        tried = server.connections
        with pytest.raises(EmbeddingError) as again:
            remote.embed_queries(["y"])
        assert server.connections == tried
        assert str(first.value) in str(again.value)
        time.sleep(0.6)
        with pytest.raises(EmbeddingError):
            remote.embed_queries(["z"])
        assert server.connections > tried
