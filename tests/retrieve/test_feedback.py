"""The dense feedback channel (Rocchio): it ranks the first pass's candidates by the moved vector (no second search),
with an exact index's rows or an HNSW graph's float16 copies; a store holding no vectors (tests/store/test_ann_breadth)
is searched instead. And the store's `held_vectors`, which gives those rows."""

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


def test_over_an_hnsw_graph_the_feedback_ranks_the_first_pass_with_the_graph_s_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _filled(tmp_path / "kb" / "store.sqlite", StoreSettings(ann_threshold=10, ann_ef_search=40))
    store.optimize()
    assert store.stats().dense_index == "ann"
    retriever = Retriever(store, embedder=None, settings=RetrievalSettings(candidates=8))  # type: ignore[arg-type]
    searches = _dense_searches(store, monkeypatch)
    channels = retriever.channels("policy", Channel.HYBRID, 8, query_vector=unit(2100))
    assert searches == [None]  # the query's own search only
    feedback = channels[Ranking.FEEDBACK]
    assert len(feedback) == int(8 * FEEDBACK_KEPT)
    assert {key for key, _ in feedback} <= {key for name in (Ranking.BM25, Ranking.DENSE) for key, _ in channels[name]}


def _held_after_changes(store: SQLiteStore) -> tuple[list[int], np.ndarray]:
    """Saves the store's dense index, adds a chunk and removes one over it, and asks for held vectors in a mixed order
    (a removed key, an unknown one among them): the keys that come back, in the order asked, and their rows."""
    store.optimize()  # saved (a mapped matrix, or a viewed graph); a removal then hides a key, an addition lies beside
    put(store, "late", ["added after the save"], seed=77)
    d5 = _key(store, "d5")
    store.delete_document("d5")
    late, d3, d9 = _key(store, "late"), _key(store, "d3"), _key(store, "d9")
    held = store.held_vectors([d9, d5, late, 10_000, d3])
    assert held is not None
    assert held[0] == [d9, late, d3]
    return held


def test_an_hnsw_graph_holds_float16_copies_and_the_database_the_exact_vectors(tmp_path: Path) -> None:
    store = _filled(tmp_path / "kb" / "store.sqlite", StoreSettings(ann_threshold=10))
    wanted, rows = _held_after_changes(store)
    exact = np.stack([unit(900), unit(7700), unit(300)])
    assert rows == pytest.approx(exact, abs=2e-3)  # float16, as the graph scores them
    assert not np.array_equal(rows[[0, 2]], exact[[0, 2]])
    assert store.get_vectors(wanted) == pytest.approx(exact, abs=1e-6)  # the stored float32 vectors
    store.close()


def test_held_vectors_keep_the_order_asked_and_skip_what_is_gone(tmp_path: Path) -> None:
    store = _filled(tmp_path / "kb" / "store.sqlite")
    wanted, rows = _held_after_changes(store)
    assert rows == pytest.approx(np.stack([unit(900), unit(7700), unit(300)]), abs=1e-6)
    assert rows == pytest.approx(store.get_vectors(wanted), abs=0)
    store.close()
