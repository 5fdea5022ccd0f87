"""The HNSW search breadth: the store's setting for a query, a narrower one for the hybrid search's feedback
vector (`retrieval.feedback_ef_search`; chosen on real e5 vectors in BENCHMARKS.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentrag.retrieve.hybrid import Retriever
from agentrag.settings import RetrievalSettings, StoreSettings
from agentrag.store.base import ChannelResult
from agentrag.store.dense import UsearchIndex
from agentrag.store.sqlite import SQLiteStore
from agentrag.types import Chunk, SearchFilter
from agentrag.vocab import Channel
from tests.store.test_sqlite import DIM, put, unit


def _breadths(store: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The usearch breadth in force at each graph search of `store`, recorded as the searches run."""
    index = store._derived.dense()
    base = getattr(index, "base", index)
    assert isinstance(base, UsearchIndex)
    graph = base._index
    seen: list[int] = []
    search = graph.search

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(graph.expansion_search)
        return search(*args, **kwargs)

    monkeypatch.setattr(graph, "search", recording)
    return seen


def test_an_hnsw_search_uses_the_breadth_asked_for_then_the_store_s_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStore(tmp_path / "kb" / "store.sqlite", StoreSettings(ann_threshold=5, ann_ef_search=40))
    store.bind_embedder("test-model", DIM)
    for i in range(12):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.optimize()
    seen = _breadths(store, monkeypatch)
    narrow = store.search_dense(unit(300), 3, ef=9)
    plain = store.search_dense(unit(300), 3)
    assert seen == [9, 40]
    assert [key for key, _ in narrow] == [key for key, _ in plain]  # 12 vectors: the same neighbours either way
    store.close()


class _Store:
    """Two fixed channels, and the breadth each dense search was asked for."""

    def __init__(self) -> None:
        self.breadths: list[int | None] = []

    def search_bm25(self, tokens: list[str], k: int, flt: SearchFilter | None, weight: float) -> ChannelResult:
        return [(key, float(10 - key)) for key in range(5)]

    def search_dense(
        self, vector: Any, k: int, flt: SearchFilter | None = None, ef: int | None = None, near: Any = None
    ) -> ChannelResult:
        self.breadths.append(ef)
        return [(key, 1.0 - key / 100) for key in range(5)]

    def get_vectors(self, keys: list[int]) -> np.ndarray:
        return np.eye(4, dtype=np.float32)[: len(keys)]

    def get_chunks_by_key(self, keys: list[int]) -> dict[int, Chunk]:
        return {
            key: Chunk(chunk_id=f"d{key}#0", doc_id=f"d{key}", position=0, text="t", fingerprint=f"fp{key}")
            for key in keys
        }


@pytest.mark.parametrize(("settings", "feedback_ef"), [({}, 64), ({"feedback_ef_search": 20}, 20)])
def test_the_feedback_search_asks_for_its_own_breadth(settings: dict[str, int], feedback_ef: int) -> None:
    store = _Store()
    retriever = Retriever(store, embedder=None, settings=RetrievalSettings(**settings))  # type: ignore[arg-type]
    hits = retriever.search("a query", 3, Channel.HYBRID, query_vector=np.ones(4, dtype=np.float32))
    assert len(hits) == 3
    assert store.breadths == [None, feedback_ef]  # the query's search: the store's own breadth
