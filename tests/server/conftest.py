"""A real agentrag server on 127.0.0.1 for each test module, and keys to call it with."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn

from agentrag.server.app import create_app
from agentrag.settings import Settings, load_settings
from tests.helpers import ASK_KEYS
from tests.servers import free_port

# The service's answer: the `ask --json` contract and the conversation it was asked in.
SERVICE_ASK_KEYS = ASK_KEYS | {"conversation_id"}


@dataclass
class Running:
    url: str
    settings: Settings
    admin: str

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60.0)

    def key(self, *kbs: str, admin: bool = False) -> str:
        from agentrag.server.keys import KeyStore

        store = KeyStore(self.settings.home)
        _, secret = store.create(list(kbs), admin=admin)
        store.close()
        return secret


def start(settings: Settings, log_level: str = "warning") -> tuple[uvicorn.Server, threading.Thread, str]:
    port = free_port()
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level=log_level, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise TimeoutError("server did not start")
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}"


@pytest.fixture
def server_settings(tmp_path: Path) -> Settings:
    return load_settings(tmp_path / "home", server={"requests_per_minute": 600})


@contextmanager
def serving(settings: Settings) -> Iterator[Running]:
    """`agentrag serve` on a free port in a thread, with an admin key, stopped afterwards."""
    server, thread, url = start(settings)
    try:
        yield Running(url=url, settings=settings, admin=Running(url, settings, "").key(admin=True))
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def running(server_settings: Settings) -> Iterator[Running]:
    with serving(server_settings) as service:
        yield service
