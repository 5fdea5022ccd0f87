"""A batch of writes is one transaction; each write in it is a savepoint, so a bad document rolls back alone."""

import sqlite3
from pathlib import Path

import pytest

from agentrag.store.base import IndexedChunk
from agentrag.store.sqlite import SQLiteStore
from tests.store.test_sqlite import DIM, counts, make_doc, put


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path / "kb" / "store.sqlite")
    s.bind_embedder("test-model", DIM)
    return s


def committed_docs(store: SQLiteStore) -> int:
    """What another connection sees: only committed rows."""
    con = sqlite3.connect(store.path)
    try:
        return int(con.execute("SELECT COUNT(*) FROM documents").fetchone()[0])
    finally:
        con.close()


def test_a_batch_commits_once_at_its_end(store: SQLiteStore) -> None:
    with store.batch():
        put(store, "a", ["alpha"])
        put(store, "b", ["beta"], seed=1)
        assert committed_docs(store) == 0, "nothing is committed before the batch ends"
    assert committed_docs(store) == 2
    assert counts(store) == (2, 2, 2, 2)
    assert store.search_bm25(["beta"], 5)


def test_a_bad_document_in_a_batch_rolls_back_alone(store: SQLiteStore) -> None:
    put(store, "b", ["kept beta"], seed=3)
    bad_doc, bad_chunks = make_doc("b", ["x", "y"], seed=2)
    bad_chunks[1] = IndexedChunk(bad_chunks[0].chunk, bad_chunks[1].vector, [], [])  # duplicate chunk id
    with store.batch():
        put(store, "a", ["alpha"])
        with pytest.raises(sqlite3.IntegrityError):
            store.upsert_document(bad_doc, "p", bad_chunks)
        put(store, "c", ["gamma"], seed=1)
    assert sorted(d.doc_id for d in store.list_documents()) == ["a", "b", "c"]
    assert [c.text for c in store.get_document_chunks("b")] == ["kept beta"]
    assert counts(store) == (3, 3, 3, 3)
    # The dense index follows the committed state (the failed write's chunks are not in it).
    hits = store.search_dense(make_doc("a", ["alpha"])[1][0].vector, 10)
    assert len(hits) == 3


def test_a_batch_that_raises_commits_nothing(store: SQLiteStore) -> None:
    put(store, "kept", ["kept"])

    def interrupted() -> None:
        with store.batch():
            put(store, "a", ["alpha"])
            raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        interrupted()
    assert [d.doc_id for d in store.list_documents()] == ["kept"]
    assert counts(store) == (1, 1, 1, 1)
    put(store, "b", ["beta"])  # the store still writes
    assert committed_docs(store) == 2


def test_a_batch_writes_its_text_index_once_not_a_segment_per_document(store: SQLiteStore) -> None:
    """FTS5 flushes its pending rows into a new segment at every savepoint it takes part in; the rows of a
    batch are written at its end, so a batch of 40 documents leaves one segment, not forty."""
    with store.batch():
        for d in range(40):
            put(store, f"d{d}", [f"word{d} shared text"], seed=d)
    con = sqlite3.connect(store.path)
    segments = con.execute("SELECT COUNT(DISTINCT segid) FROM chunks_fts_idx").fetchone()[0]
    con.close()
    assert counts(store) == (40, 40, 40, 40)
    assert store.search_bm25(["word7"], 5)
    assert segments == 1  # a flush per document left 10 segments here (FTS5 merges some as they pile up)


def test_the_text_rows_of_a_document_rolled_back_late_are_dropped_with_it(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document that fails after its text-index rows were queued leaves none of them behind."""
    import agentrag.store.sqlite.store as store_module

    real = store_module.count_chunks

    def failing(con: sqlite3.Connection, delta: int) -> None:
        if con.execute("SELECT 1 FROM documents WHERE doc_id='bad'").fetchone():
            raise sqlite3.OperationalError("disk I/O error")
        real(con, delta)

    monkeypatch.setattr(store_module, "count_chunks", failing)
    with store.batch():
        put(store, "a", ["alpha"])
        with pytest.raises(sqlite3.OperationalError):
            put(store, "bad", ["zebra unique"], seed=2)
        put(store, "c", ["gamma"], seed=1)
    assert counts(store) == (2, 2, 2, 2)
    assert store.search_bm25(["zebra"], 5) == []
    assert store.search_bm25(["gamma"], 5)
