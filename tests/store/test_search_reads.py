"""What one search reads from the database: the generation once (`Store.searching`), and the chunks' rows and
document fields from memory while the generation stands (a repeated search runs that one statement); and every
write, by this store or another process's, is still seen by the next search."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from agentrag.retrieve.hybrid import Retriever
from agentrag.settings import RetrievalSettings
from agentrag.store.sqlite import SQLiteStore
from agentrag.store.sqlite import chunks as chunk_rows
from agentrag.types import Document
from agentrag.vocab import Channel
from tests.store.test_dense_files import open_store
from tests.store.test_sqlite import make_doc, put, unit


@contextmanager
def both_connections(store: SQLiteStore) -> Iterator[list[str]]:
    """Every statement the store runs, on its connection and on the one BM25 reads through."""
    seen: list[str] = []
    for con in (store._con, store._read_con):
        con.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        for con in (store._con, store._read_con):
            con.set_trace_callback(None)


def generation_reads(seen: list[str]) -> int:
    return sum("key='generation'" in s and s.lstrip().upper().startswith("SELECT") for s in seen)


class _Vectors:
    """An embedder the retriever never calls: every search is given its query vector."""

    name = "test-model"

    def embed_queries(self, texts: list[str]) -> list[np.ndarray]:
        raise AssertionError("query vectors are given")


def test_a_hybrid_search_reads_the_generation_once_and_sees_another_process_write(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, 1000)
    put(store, "a", ["alpha beta", "gamma delta"])
    put(store, "b", ["epsilon zeta"], seed=1)
    retriever = Retriever(store, _Vectors(), RetrievalSettings())  # type: ignore[arg-type]
    retriever.search("alpha gamma", 5, Channel.HYBRID, query_vector=unit(0))  # brings the indexes up
    with both_connections(store) as seen:
        hits = retriever.search("alpha gamma", 5, Channel.HYBRID, query_vector=unit(0))
    assert {h.chunk.doc_id for h in hits} == {"a", "b"}
    # One statement in all: the generation, read once for the search's steps (both channels, feedback,
    # fingerprints, the hits' chunks, remembered at that generation); each step read it again before (five reads
    # and more), and the chunks then took a read transaction of their own (four more).
    assert seen == ["SELECT value FROM meta WHERE key='generation'"], seen
    assert generation_reads(seen) == 1
    other = open_store(path, 1000)  # as another process would
    put(other, "c", ["alpha alpha gamma"], seed=2)
    other.close()
    hits = retriever.search("alpha gamma", 5, Channel.HYBRID, query_vector=unit(200))
    assert "c" in {h.chunk.doc_id for h in hits}
    assert "c" in {store.get_chunks([k])[0].doc_id for k, _ in store.search_bm25(["alpha"], 5)}


def test_a_search_never_takes_an_index_back_to_the_generation_it_started_at(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, 1000)
    put(store, "a", ["alpha"])
    store.search_dense(unit(0), 5)
    with store.searching() as started:
        other = open_store(path, 1000)
        put(other, "b", ["beta"], seed=1)
        other.close()
        # Another thread of this process, not inside a search, brings the dense index to the new generation.
        done = threading.Thread(target=store.search_dense, args=(unit(100), 5))
        done.start()
        done.join()
        moved = store._derived._dense_generation
        assert moved > started
        keys = [key for key, _ in store.search_dense(unit(100), 5)]
        assert store._derived._dense_generation == moved, "the older generation held here did not win"
        assert "b" in {c.doc_id for c in store.get_chunks(keys)}
    assert store.generation == moved


def test_chunks_remember_their_documents_until_the_generation_moves(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, 1000)
    put(store, "a", ["one", "two"], tags={"team": "red"})
    put(store, "b", ["three"], seed=1)
    keys = [key for key, _ in store.search_dense(unit(0), 10)]
    first = store.get_chunks_by_key(keys)
    assert {c.doc_id: c.tags for c in first.values()} == {"a": {"team": "red"}, "b": {}}
    with both_connections(store) as seen:
        assert store.get_chunks_by_key(keys) == first
    assert seen == ["SELECT value FROM meta WHERE key='generation'"], "a second fetch reads no chunk or document row"
    # Another process retags one document and moves the other: the next fetch has exactly the database's fields.
    other = open_store(path, 1000)
    other.update_tags("a", {"team": "blue"})
    moved = Document(doc_id="b2", source="/docs/b2.md", title="Moved", content_hash="h-b-1-1")
    other.move_document("b", moved)
    other.close()
    now = store.get_chunks_by_key(keys)
    assert {(c.doc_id, c.title, c.source) for c in now.values()} == {
        ("a", "Title a", "/docs/a.md"),
        ("b2", "Moved", "/docs/b2.md"),
    }
    assert {c.doc_id: c.tags for c in now.values()} == {"a": {"team": "blue"}, "b2": {}}
    assert [c.chunk_id for c in store.get_chunks(keys) if c.doc_id == "b2"] == ["b2#0"]
    store.delete_document("a")
    assert {c.doc_id for c in store.get_chunks_by_key(keys).values()} == {"b2"}


def test_remembered_chunks_are_built_anew_and_the_memory_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunk_rows, "_MAX_ROWS", 5)
    store = open_store(tmp_path / "kb" / "store.sqlite", 1000)
    for i in range(4):
        put(store, f"d{i}", [f"one {i}", f"two {i}", f"three {i}"], seed=i)
    keys = [key for key, _ in store.search_dense(unit(0), 12)]
    first = store.get_chunks_by_key(keys[:3])
    first[keys[0]].tags["mine"] = "changed by a caller"
    again = store.get_chunks_by_key(keys[:3])
    assert again[keys[0]].tags == {}
    assert again == store.get_chunks_by_key(keys[:3])
    for start in range(0, 12, 3):
        store.get_chunks_by_key(keys[start : start + 3])
        assert len(store._chunks._rows) <= 5
    assert len(store.get_chunks_by_key(keys)) == 12, "more keys than the memory holds: read, not remembered"
    assert len(store._chunks._rows) <= 5
    assert store.get_chunks_by_key([max(keys) + 50]) == {}  # no such chunk: remembered as none
    with both_connections(store) as seen:
        assert store.get_chunks_by_key([max(keys) + 50]) == {}
    assert len(seen) == 1


def test_a_remembered_chunk_with_tags_gives_each_caller_its_own(tmp_path: Path) -> None:
    store = open_store(tmp_path / "kb" / "store.sqlite", 1000)
    put(store, "a", ["alpha", "beta"], tags={"team": "red"})
    keys = [key for key, _ in store.search_dense(unit(0), 5)]
    first = store.get_chunks_by_key(keys)
    for chunk in first.values():
        chunk.tags["team"] = "changed by a caller"
        chunk.title = "changed too"
    again = store.get_chunks_by_key(keys)
    assert {(c.title, c.tags["team"]) for c in again.values()} == {("Title a", "red")}
    assert again == {key: store.get_chunk_by_id(c.chunk_id)[1] for key, c in again.items()}  # type: ignore[index]


def test_a_write_that_rolls_back_leaves_no_chunk_in_the_memory(tmp_path: Path) -> None:
    store = open_store(tmp_path / "kb" / "store.sqlite", 1000)
    put(store, "a", ["alpha"])
    (key,) = [key for key, _ in store.search_dense(unit(0), 5)]
    assert store.get_chunks_by_key([key])[key].title == "Title a"
    inside: list[dict[str, str]] = []

    def failing_batch() -> None:
        with store.batch():
            store.update_tags("a", {"team": "red"})
            inside.append(store.get_chunks_by_key([key])[key].tags)  # the write's own state
            raise RuntimeError("the batch fails")

    with pytest.raises(RuntimeError):
        failing_batch()
    assert inside == [{"team": "red"}]
    assert store.get_chunks_by_key([key])[key].tags == {}
    doc, chunks = make_doc("a", ["alpha, again"], seed=3)
    store.upsert_document(doc, "p", chunks)
    assert [c.text for c in store.get_chunks_by_key([key, key + 1]).values()] == ["alpha, again"]
