"""The dense index's life beside the database: saved once, opened mapped (exact) or as a view (HNSW) without
reading the vectors table, small changes replayed from the change log instead of rewriting the file, and the
chunk count kept in the metadata instead of counted."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from agentrag.settings import StoreSettings
from agentrag.store.dense_files import MappedExact
from agentrag.store.sqlite import SQLiteStore, derived
from tests.store.test_sqlite import DIM, put, unit


def open_store(path: Path, threshold: int) -> SQLiteStore:
    store = SQLiteStore(path, StoreSettings(ann_threshold=threshold))
    store.bind_embedder("test-model", DIM)
    return store


@contextmanager
def statements(store: SQLiteStore) -> Iterator[list[str]]:
    seen: list[str] = []
    store._con.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        store._con.set_trace_callback(None)


def files(path: Path) -> dict[str, int]:
    """The dense files beside the database and their inode (a rewrite is a new file)."""
    return {p.name: p.stat().st_ino for p in path.parent.glob("dense-g*") if not p.name.endswith(".tmp")}


def docs_for(store: SQLiteStore, vector: np.ndarray, k: int = 50) -> list[str]:
    return [c.doc_id for c in store.get_chunks([key for key, _ in store.search_dense(vector, k)])]


@pytest.mark.parametrize(("threshold", "suffix"), [(1000, ".exact"), (5, ".usearch")])
def test_a_saved_index_opens_without_reading_the_vectors_table(tmp_path: Path, threshold: int, suffix: str) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, threshold)
    for i in range(40):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.optimize()
    expected = docs_for(store, unit(1200), 5)
    store.close()
    (saved,) = files(path)
    assert saved.endswith(suffix)
    reopened = open_store(path, threshold)
    with statements(reopened) as seen:
        assert docs_for(reopened, unit(1200), 5) == expected
        assert reopened.get_vectors([1, 2]).shape == (2, DIM)
    assert not [s for s in seen if "FROM vectors" in s and "WHERE key IN" not in s], seen
    assert not [s for s in seen if "COUNT(*)" in s.upper()], "the chunk count comes from the metadata"
    assert files(path) == {saved: (path.parent / saved).stat().st_ino}, "opening wrote nothing"


@pytest.mark.parametrize("threshold", [1000, 5])
def test_small_changes_are_replayed_from_the_log_not_rewritten(tmp_path: Path, threshold: int) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, threshold)
    for i in range(30):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.optimize()
    before = files(path)
    # Another process changes a little: one document removed, one added, one replaced.
    other = open_store(path, threshold)
    other.delete_document("d12")
    put(other, "new", ["fresh"], seed=55)
    put(other, "d3", ["replaced"], seed=77)
    other.optimize()
    other.close()
    assert files(path) == before, "a small change does not rewrite the saved index"
    store.close()
    reopened = open_store(path, threshold)
    assert "d12" not in docs_for(reopened, unit(1200))
    assert docs_for(reopened, unit(5500), 1) == ["new"]
    assert docs_for(reopened, unit(7700), 1) == ["d3"]
    assert "d3" in docs_for(reopened, unit(300), 50)
    assert docs_for(reopened, unit(300), 1) != ["d3"]
    assert len(reopened.search_dense(unit(1), 100)) == 30
    assert np.allclose(reopened.get_vectors([reopened.search_dense(unit(5500), 1)[0][0]])[0], unit(5500))
    assert files(path) == before, "nor does reading it"


@pytest.mark.parametrize(("threshold", "suffix"), [(1000, ".exact"), (5, ".usearch")])
def test_many_changes_rewrite_the_file_at_the_new_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threshold: int, suffix: str
) -> None:
    monkeypatch.setattr(derived, "_REPLAY_MIN", 5)
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, threshold)
    for i in range(20):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.optimize()
    (first,) = files(path)
    for i in range(20, 40):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.delete_document("d7")
    store.optimize()
    (second,) = files(path)
    assert second != first
    assert second == f"dense-g{store.generation}{suffix}"
    store.close()
    reopened = open_store(path, threshold)
    assert docs_for(reopened, unit(3500), 1) == ["d35"]
    assert "d7" not in docs_for(reopened, unit(700), 40)
    assert len(reopened.search_dense(unit(1), 100)) == 39


def test_the_chunk_count_is_kept_in_the_metadata(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, 1000)

    def counted() -> tuple[int, int]:
        con = sqlite3.connect(path)
        try:
            meta = int(con.execute("SELECT value FROM meta WHERE key='chunks'").fetchone()[0])
            return meta, int(con.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        finally:
            con.close()

    put(store, "a", ["one", "two", "three"])
    put(store, "b", ["four"], seed=1)
    put(store, "a", ["five"], seed=2)
    assert counted() == (2, 2)
    store.delete_document("b")
    assert counted() == (1, 1)
    store.close()
    # A file written before the count existed: counted once, on its first write.
    con = sqlite3.connect(path)
    con.execute("DELETE FROM meta WHERE key='chunks'")
    con.commit()
    con.close()
    old = open_store(path, 1000)
    assert old.stats().chunks == 1
    put(old, "c", ["six", "seven"], seed=3)
    assert counted() == (3, 3)
    assert old.stats().chunks == 3


def test_a_damaged_exact_file_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, 1000)
    for i in range(12):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.optimize()
    store.close()
    (saved,) = path.parent.glob("dense-g*.exact")
    saved.write_bytes(saved.read_bytes()[:-10])  # cut short
    reopened = open_store(path, 1000)
    assert docs_for(reopened, unit(300), 1) == ["d3"]
    (rebuilt,) = path.parent.glob("dense-g*.exact")
    assert len(MappedExact.open(rebuilt, DIM)) == 12
