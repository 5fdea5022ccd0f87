"""Chunk fingerprints are remembered between searches and forgotten as soon as the database moves on."""

from __future__ import annotations

from pathlib import Path

from tests.store.test_dense_files import open_store, statements
from tests.store.test_sqlite import put


def test_fingerprints_are_remembered_until_the_generation_moves(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, 1000)
    put(store, "a", ["one", "two"])
    put(store, "b", ["three"], seed=1)
    keys = [key for key, _ in store.search_dense(store.get_vectors([1])[0], 10)]
    first = store.chunk_fingerprints(keys)
    b_key = next(key for key in keys if store.get_chunks([key])[0].doc_id == "b")
    assert len(first) == 3
    with statements(store) as seen:
        assert store.chunk_fingerprints(keys) == first
    assert not [s for s in seen if "fingerprint" in s], "a second search asks the database nothing"
    # Another process deletes one document and adds another: the next lookup sees exactly the database.
    other = open_store(path, 1000)
    other.delete_document("a")
    put(other, "c", ["one"], seed=2)  # the same text as a deleted chunk, under a new key
    other.close()
    now = store.chunk_fingerprints([*keys, max(keys) + 1])
    assert set(now) == {b_key, max(keys) + 1}
    assert now[max(keys) + 1] == first[min(keys)]
    assert store.chunk_fingerprints([]) == {}
