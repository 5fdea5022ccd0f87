"""The dense feedback channel (Rocchio): over an exact index it ranks the first pass's candidates by the moved
vector (no second search); over an HNSW graph it searches with its own breadth. And the store's `held_vectors`,
which decides between the two."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentrag.retrieve.hybrid import FEEDBACK_KEPT, Retriever
from agentrag.settings import RetrievalSettings, StoreSettings
from agentrag.store.sqlite import SQLiteStore
from agentrag.vocab import Channel, Ranking
from tests.store.test_sqlite import DIM, put, unit


def _key(store: SQLiteStore, doc_id: str) -> int:
    found = store.get_chunk_by_id(f"{doc_id}#0")
    assert found is not None
    return found[0]


def _filled(path: Path, settings: StoreSettings | None = None) -> SQLiteStore:
    store = SQLiteStore(path, settings or StoreSettings())
    store.bind_embedder("test-model", DIM)
    for i in range(40):  # every fourth one mentions the query's word: BM25 finds ten
        put(store, f"d{i}", [f"{'policy' if i % 4 == 0 else 'note'} number {i}"], seed=i)
    return store


def _dense_searches(store: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The breadth each dense search of `store` is asked for, as the searches run."""
    seen: list[int | None] = []
    search = store.search_dense

    def recording(vector: Any, k: int, flt: Any = None, ef: int | None = None) -> Any:
        seen.append(ef)
        return search(vector, k, flt, ef)

    monkeypatch.setattr(store, "search_dense", recording)
    return seen


def test_over_an_exact_index_the_feedback_ranks_the_first_pass_without_a_second_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _filled(tmp_path / "kb" / "store.sqlite")
    retriever = Retriever(store, embedder=None, settings=RetrievalSettings(candidates=8))  # type: ignore[arg-type]
    searches = _dense_searches(store, monkeypatch)
    query = unit(2100)
    channels = retriever.channels("policy", Channel.HYBRID, 8, query_vector=query)
    assert searches == [None]  # the query's own search only
    first_pass = {name: channels[name] for name in (Ranking.BM25, Ranking.DENSE)}
    candidates = list(dict.fromkeys(key for hits in first_pass.values() for key, _ in hits))
    best = [key for key, _ in retriever.fuse(first_pass, 2)]
    moved = query + store.get_vectors(best).mean(axis=0)
    moved /= np.linalg.norm(moved)
    scores = store.get_vectors(candidates) @ moved
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))[: int(8 * FEEDBACK_KEPT)]
    feedback = channels[Ranking.FEEDBACK]
    assert [key for key, _ in feedback] == [candidates[i] for i in order]
    assert [score for _, score in feedback] == pytest.approx([float(scores[i]) for i in order], abs=1e-6)
    hits = retriever.search("policy", 5, Channel.HYBRID, query_vector=query)
    assert [hit.rank for hit in hits] == [1, 2, 3, 4, 5]
    assert any(Ranking.FEEDBACK in hit.channels for hit in hits)


def test_over_an_hnsw_graph_the_feedback_searches_with_its_own_breadth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _filled(tmp_path / "kb" / "store.sqlite", StoreSettings(ann_threshold=10, ann_ef_search=40))
    store.optimize()
    assert store.stats().dense_index == "ann"
    assert store.held_vectors([_key(store, "d3")]) is None  # f16 copies in the graph: nothing held exactly
    retriever = Retriever(store, embedder=None, settings=RetrievalSettings(candidates=8, feedback_ef_search=20))  # type: ignore[arg-type]
    searches = _dense_searches(store, monkeypatch)
    channels = retriever.channels("policy", Channel.HYBRID, 8, query_vector=unit(2100))
    assert searches == [None, 20]
    assert len(channels[Ranking.FEEDBACK]) == 8


def test_held_vectors_keep_the_order_asked_and_skip_what_is_gone(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = _filled(path)
    store.optimize()  # the vectors saved in a mapped file, then changes layered over it
    put(store, "late", ["added after the save"], seed=77)
    d5 = _key(store, "d5")
    store.delete_document("d5")
    late, d3, d9 = _key(store, "late"), _key(store, "d3"), _key(store, "d9")
    held = store.held_vectors([d9, d5, late, 10_000, d3])
    assert held is not None
    keys, rows = held
    assert keys == [d9, late, d3]
    assert rows == pytest.approx(np.stack([unit(900), unit(7700), unit(300)]), abs=1e-6)
    assert rows == pytest.approx(store.get_vectors([d9, late, d3]), abs=0)
    store.close()
