"""An OpenAI-compatible `/v1/embeddings` endpoint on 127.0.0.1 whose vectors come from the real embedder, and
whose failures are scripted: the edge where the agent meets an embeddings service that breaks mid-question.

    with EmbeddingsEndpoint(fail=lambda q: "Osprey" in q) as endpoint:
        kb = KnowledgeBase.open("kb", settings=endpoint.settings(home), search_cache=False)

Queries and passages are told apart by the prefixes `settings()` configures. `fail(query)` true: a 500;
`hold(query)` returns seconds to wait before answering. `max_in_flight` is the most query requests the
endpoint was serving at once; `barrier(n)` makes the next `n` query requests wait (up to a few seconds) until
all are in flight together, so overlap is shown by their meeting, not by a clock.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from agentrag.embed.base import Embedder
from agentrag.kb import shared_embedder
from agentrag.settings import EmbedderSettings, Settings, load_settings
from tests.servers import json_server

QUERY, PASSAGE = "query: ", "passage: "


class EmbeddingsEndpoint:
    def __init__(
        self,
        *,
        fail: Callable[[str], bool] = lambda query: False,
        hold: Callable[[str], float] = lambda query: 0.0,
    ) -> None:
        # The bundled model on one thread: its OpenMP team of several threads stalls for seconds at a time
        # on a busy machine, which would read as the endpoint stalling.
        self.embedder: Embedder = shared_embedder(EmbedderSettings(threads=1))
        self.fail = fail
        self.hold = hold
        self.queries: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._barrier: threading.Barrier | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._stack = ExitStack()
        self.url = ""

    def barrier(self, parties: int) -> None:
        """The next `parties` query requests wait for each other (3 s at most), once."""
        self._barrier = threading.Barrier(parties, timeout=3.0, action=self._disarm)

    def _disarm(self) -> None:
        self._barrier = None

    def settings(self, home: Path, **overrides: Any) -> Settings:
        embedder = {
            "provider": "openai",
            "base_url": self.url,
            "model": "e5-scripted",
            "dimension": self.embedder.dim,
            "query_prefix": QUERY,
            "passage_prefix": PASSAGE,
            "max_retries": 0,
            "timeout_s": 10.0,
        }
        return load_settings(home, embedder=embedder, **overrides)

    def __enter__(self) -> EmbeddingsEndpoint:
        self.url, _ = self._stack.enter_context(json_server(self._handle))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._barrier is not None:
            self._barrier.abort()
        self._stack.close()

    def _handle(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        texts: list[str] = body["input"]
        queries = [t.removeprefix(QUERY) for t in texts if t.startswith(QUERY)]
        if not queries:
            passages = [t.removeprefix(PASSAGE) for t in texts]
            return 200, _payload(self.embedder.embed_passages(passages).tolist())
        with self._lock:
            self.queries.extend(queries)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            barrier = self._barrier
            if barrier is not None:
                with contextlib.suppress(threading.BrokenBarrierError):  # the others never came: not concurrent
                    barrier.wait()
                self._barrier = None
            wait = max(self.hold(q) for q in queries)
            if wait and self._stop.wait(wait):
                return 503, {"error": {"message": "shutting down"}}
            if any(self.fail(q) for q in queries):
                return 500, {"error": {"message": "embedding model crashed"}}
            return 200, _payload(self.embedder.embed_queries(queries).tolist())
        finally:
            with self._lock:
                self.in_flight -= 1


def _payload(vectors: list[list[float]]) -> dict[str, Any]:
    return {"object": "list", "data": [{"index": i, "embedding": v} for i, v in enumerate(vectors)]}
