import datetime as dt
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from agentrag.errors import EmbedderMismatchError
from agentrag.settings import StoreSettings
from agentrag.store.base import IndexedChunk
from agentrag.store.sqlite import SQLiteStore
from agentrag.text.fingerprint import fingerprint
from agentrag.text.tokenize import tokenize
from agentrag.types import Chunk, Document, SearchFilter

DIM = 8


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def make_doc(
    doc_id: str,
    texts: list[str],
    seed: int = 0,
    tags: dict[str, str] | None = None,
    date: dt.date | None = None,
    source: str | None = None,
) -> tuple[Document, list[IndexedChunk]]:
    doc = Document(
        doc_id=doc_id,
        source=source or f"/docs/{doc_id}.md",
        title=f"Title {doc_id}",
        content_hash=f"h-{doc_id}-{len(texts)}-{seed}",
        tags=tags or {},
        date=date,
    )
    chunks = [
        IndexedChunk(
            chunk=Chunk(chunk_id=f"{doc_id}#{i}", doc_id=doc_id, position=i, text=t, fingerprint=fingerprint(t)),
            vector=unit(seed * 100 + i),
            title_tokens=tokenize(doc.title),
            body_tokens=tokenize(t),
        )
        for i, t in enumerate(texts)
    ]
    return doc, chunks


def put(store: SQLiteStore, doc_id: str, texts: list[str], **kw: object) -> None:
    doc, chunks = make_doc(doc_id, texts, **kw)  # type: ignore[arg-type]
    store.upsert_document(doc, "p", chunks)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path / "kb" / "store.sqlite")
    s.bind_embedder("test-model", DIM)
    return s


def counts(store: SQLiteStore) -> tuple[int, int, int, int]:
    con = sqlite3.connect(store.path)
    return tuple(
        con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # type: ignore[return-value]
        for t in ("documents", "chunks", "vectors", "chunks_fts")
    )


def test_upsert_replaces_all_chunks_atomically(store: SQLiteStore) -> None:
    put(store, "a", ["alpha one", "alpha two", "alpha three"])
    assert counts(store) == (1, 3, 3, 3)
    put(store, "a", ["alpha new"], seed=1)
    assert counts(store) == (1, 1, 1, 1)
    assert [c.text for c in store.get_document_chunks("a")] == ["alpha new"]
    assert store.search_bm25(["three"], 10) == []


def test_failed_write_leaves_the_previous_version(store: SQLiteStore) -> None:
    doc, chunks = make_doc("a", ["kept text"])
    store.upsert_document(doc, "p", chunks)
    bad_doc, bad_chunks = make_doc("a", ["x", "y"], seed=2)
    # Two chunks with the same id violate a constraint half way through the transaction.
    bad_chunks[1] = IndexedChunk(bad_chunks[0].chunk, bad_chunks[1].vector, [], [])
    with pytest.raises(sqlite3.IntegrityError):
        store.upsert_document(bad_doc, "p", bad_chunks)
    assert [c.text for c in store.get_document_chunks("a")] == ["kept text"]
    assert counts(store) == (1, 1, 1, 1)


def test_delete_removes_everything_indexed(store: SQLiteStore) -> None:
    put(store, "a", ["apples and pears"])
    put(store, "b", ["bananas"], seed=1)
    assert store.delete_document("a") is True
    assert store.delete_document("a") is False
    assert counts(store) == (1, 1, 1, 1)
    assert store.search_bm25(tokenize("apples"), 5) == []
    assert all(store.get_chunks([k])[0].doc_id == "b" for k, _ in store.search_dense(unit(0), 5))


def test_generation_moves_with_every_write(store: SQLiteStore) -> None:
    g0 = store.generation
    put(store, "a", ["x"])
    store.update_tags("a", {"k": "v"})
    store.delete_document("a")
    assert store.generation == g0 + 3


def test_bm25_ranks_the_matching_chunk_first_in_chinese(store: SQLiteStore) -> None:
    put(store, "zh", ["员工出差住宿标准为每晚五百元", "报销单需在三十天内提交"])
    put(store, "en", ["hotel allowance is five hundred"], seed=1)
    hits = store.search_bm25(tokenize("住宿标准"), 5)
    assert hits
    assert store.get_chunks([hits[0][0]])[0].chunk_id == "zh#0"
    assert hits[0][1] > 0


def test_dense_search_returns_the_nearest_vector(store: SQLiteStore) -> None:
    for i in range(20):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    key, score = store.search_dense(unit(700), 1)[0]
    assert store.get_chunks([key])[0].doc_id == "d7"
    assert score == pytest.approx(1.0, abs=1e-5)


def test_dense_index_follows_writes_from_another_connection(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    reader = SQLiteStore(path)
    reader.bind_embedder("test-model", DIM)
    writer = SQLiteStore(path)
    put(writer, "a", ["one"], seed=1)
    assert reader.get_chunks([reader.search_dense(unit(100), 1)[0][0]])[0].doc_id == "a"
    put(writer, "b", ["two"], seed=2)
    writer.delete_document("a")
    keys = [k for k, _ in reader.search_dense(unit(100), 5)]
    assert [c.doc_id for c in reader.get_chunks(keys)] == ["b"]


def test_ann_index_is_used_past_the_threshold_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = SQLiteStore(path, StoreSettings(ann_threshold=10))
    store.bind_embedder("test-model", DIM)
    for i in range(30):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    assert store.stats().dense_index == "ann"
    key, _ = store.search_dense(unit(1200), 1)[0]
    assert store.get_chunks([key])[0].doc_id == "d12"
    store.optimize()
    saved = list(path.parent.glob("dense-g*.usearch"))
    assert len(saved) == 1
    store.close()
    # Another process writes after the index was saved: the reopened store must catch up, not trust the file.
    other = SQLiteStore(path, StoreSettings(ann_threshold=10))
    other.delete_document("d12")
    put(other, "new", ["fresh"], seed=55)
    other.close()
    reopened = SQLiteStore(path, StoreSettings(ann_threshold=10))
    reopened.bind_embedder("test-model", DIM)
    docs = [c.doc_id for c in reopened.get_chunks([k for k, _ in reopened.search_dense(unit(1200), 30)])]
    assert "d12" not in docs
    assert reopened.get_chunks([reopened.search_dense(unit(5500), 1)[0][0]])[0].doc_id == "new"


def test_a_damaged_ann_file_is_rebuilt_from_the_database(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = SQLiteStore(path, StoreSettings(ann_threshold=5))
    store.bind_embedder("test-model", DIM)
    for i in range(12):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.optimize()
    store.close()
    for f in path.parent.glob("dense-g*.usearch"):
        f.write_bytes(b"garbage")
    reopened = SQLiteStore(path, StoreSettings(ann_threshold=5))
    reopened.bind_embedder("test-model", DIM)
    assert reopened.get_chunks([reopened.search_dense(unit(300), 1)[0][0]])[0].doc_id == "d3"


def test_filters_by_tag_source_date_and_doc(store: SQLiteStore) -> None:
    put(store, "a", ["policy text"], tags={"team": "hr"}, date=dt.date(2024, 1, 5), source="/docs/hr/policy.md")
    put(
        store,
        "b",
        ["policy text too"],
        seed=1,
        tags={"team": "eng"},
        date=dt.date(2025, 6, 1),
        source="/docs/eng/guide.pdf",
    )
    tokens = tokenize("policy")

    def docs(flt: SearchFilter) -> set[str]:
        bm = {c.doc_id for c in store.get_chunks([k for k, _ in store.search_bm25(tokens, 10, flt)])}
        de = {c.doc_id for c in store.get_chunks([k for k, _ in store.search_dense(unit(0), 10, flt)])}
        assert bm == de, "both channels apply the same filter"
        return bm

    assert docs(SearchFilter(tags={"team": "hr"})) == {"a"}
    assert docs(SearchFilter(sources=["*.pdf"])) == {"b"}
    assert docs(SearchFilter(date_from=dt.date(2025, 1, 1))) == {"b"}
    assert docs(SearchFilter(date_to=dt.date(2024, 12, 31))) == {"a"}
    assert docs(SearchFilter(doc_ids=["a", "b"])) == {"a", "b"}
    assert docs(SearchFilter(tags={"team": "sales"})) == set()


def test_opening_with_another_embedder_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    SQLiteStore(path).bind_embedder("model-a", 384)
    with pytest.raises(EmbedderMismatchError, match=r"model-a.*model-b"):
        SQLiteStore(path).bind_embedder("model-b", 1024)


def test_fts_query_syntax_in_user_text_is_harmless(store: SQLiteStore) -> None:
    """FTS5 operators in what a user types are searched as words: the document holding them is found, an
    unrelated one is not, and nothing is an error (a bare `NOT`, `x*`, a quote, a column filter)."""
    put(store, "a", ['he said "near" OR not AND x*'])
    put(store, "b", ["refunds are processed within fourteen days"], seed=1)
    put(store, "c", ["the weather is sunny and warm"], seed=2)

    def found(tokens: list[str]) -> list[str]:
        return [store.get_chunks([k])[0].doc_id for k, _ in store.search_bm25(tokens, 5)]

    assert found(['"near"', "or", "NOT", "x*"]) == ["a"]
    assert found(['"near"']) == ["a"]
    assert found(["NEAR(", "refund", ")"]) == ["a", "b"]  # 'near' and 'refund' as words, each in one document
    assert found(["-col:title", "^refund", "{process}", "AND"]) == ["b"]
    assert found(["weather*", "NOT", "sunni"]) == ["c"]
    assert found(tokenize('refunds OR NOT -body:x* ^processed "unclosed')) == ["b", "a"]


def test_the_bm25_index_is_compacted_after_writes_and_stays_correct(store: SQLiteStore) -> None:
    def segments() -> int:
        # FTS5 keeps one `_idx` row per segment and term-prefix page; fewer rows, fewer places to look.
        return int(store._con.execute("SELECT count(DISTINCT segid) FROM chunks_fts_idx").fetchone()[0])

    for i in range(30):
        put(store, f"d{i}", [f"document number {i} talks about glaciers", f"and river {i} flows south"])
    assert segments() > 1
    store.optimize()  # a bulk load: everything merged into one segment
    assert segments() == 1
    put(store, "d3", ["document three now talks about volcanoes"])
    store.optimize()  # a small change: incremental merging only
    store._con.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
    hits = store.search_bm25(tokenize("volcanoes"), 5)
    assert [store.get_chunks([k])[0].doc_id for k, _ in hits] == ["d3"]
    rivers = store.search_bm25(tokenize("river"), 60)
    assert len(rivers) == 29
    assert "d3" not in {store.get_chunks([k])[0].doc_id for k, _ in rivers}, "no stale chunk after the merge"
