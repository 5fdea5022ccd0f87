"""The store contract, for every backend (`open_store` is parametrized over SQLite and Milvus): what the
retriever and the ingest pipeline rely on, observed only through the `Store` protocol."""

from __future__ import annotations

import datetime as dt

import pytest

from agentrag.errors import EmbedderMismatchError
from agentrag.store.base import DocumentQuery, Store
from agentrag.text.tokenize import tokenize
from agentrag.types import Document, SearchFilter
from tests.store.conftest import DIM, Opener
from tests.store.test_sqlite import make_doc, put, unit


def sizes(store: Store) -> tuple[int, int]:
    stats = store.stats()
    return stats.documents, stats.chunks


def doc_ids(store: Store, hits: list[tuple[int, float]]) -> list[str]:
    return [c.doc_id for c in store.get_chunks([k for k, _ in hits])]


def test_upsert_replaces_all_chunks(any_store: Store) -> None:
    put(any_store, "a", ["alpha one", "alpha two", "alpha three"])  # type: ignore[arg-type]
    assert sizes(any_store) == (1, 3)
    put(any_store, "a", ["alpha new"], seed=1)  # type: ignore[arg-type]
    assert sizes(any_store) == (1, 1)
    assert [c.text for c in any_store.get_document_chunks("a")] == ["alpha new"]
    assert any_store.search_bm25(["three"], 10) == []
    assert doc_ids(any_store, any_store.search_dense(unit(100), 5)) == ["a"]


def test_delete_removes_everything_indexed(any_store: Store) -> None:
    put(any_store, "a", ["apples and pears"])  # type: ignore[arg-type]
    put(any_store, "b", ["bananas"], seed=1)  # type: ignore[arg-type]
    assert any_store.delete_document("a") is True
    assert any_store.delete_document("a") is False
    assert sizes(any_store) == (1, 1)
    assert any_store.get_document("a") is None
    assert any_store.search_bm25(tokenize("apples"), 5) == []
    assert doc_ids(any_store, any_store.search_dense(unit(0), 5)) == ["b"]


def test_generation_moves_with_every_write(any_store: Store) -> None:
    g0 = any_store.generation
    put(any_store, "a", ["x"])  # type: ignore[arg-type]
    any_store.update_tags("a", {"k": "v"})
    any_store.delete_document("a")
    assert any_store.generation == g0 + 3


def test_bm25_ranks_the_matching_chunk_first_in_chinese(any_store: Store) -> None:
    put(any_store, "zh", ["员工出差住宿标准为每晚五百元", "报销单需在三十天内提交"])  # type: ignore[arg-type]
    put(any_store, "en", ["hotel allowance is five hundred"], seed=1)  # type: ignore[arg-type]
    hits = any_store.search_bm25(tokenize("住宿标准"), 5)
    assert any_store.get_chunks([hits[0][0]])[0].chunk_id == "zh#0"
    assert hits[0][1] > 0
    assert doc_ids(any_store, any_store.search_bm25(tokenize("hotel allowance"), 5)) == ["en"]


def test_dense_search_returns_the_nearest_vector(any_store: Store) -> None:
    for i in range(20):
        put(any_store, f"d{i}", [f"text {i}"], seed=i)  # type: ignore[arg-type]
    key, score = any_store.search_dense(unit(700), 1)[0]
    assert any_store.get_chunks([key])[0].doc_id == "d7"
    assert score == pytest.approx(1.0, abs=1e-5)
    assert any_store.get_vectors([key])[0] == pytest.approx(unit(700), abs=1e-6)


def test_filters_apply_inside_both_channels(any_store: Store) -> None:
    put(any_store, "a", ["policy text"], tags={"team": "hr"}, date=dt.date(2024, 1, 5), source="/docs/hr/policy.md")  # type: ignore[arg-type]
    put(
        any_store,
        "b",
        ["policy text too"],
        seed=1,
        tags={"team": "eng"},
        date=dt.date(2025, 6, 1),
        source="/docs/eng/guide.pdf",
    )  # type: ignore[arg-type]
    tokens = tokenize("policy")

    def docs(flt: SearchFilter) -> set[str]:
        bm = set(doc_ids(any_store, any_store.search_bm25(tokens, 10, flt)))
        assert bm == set(doc_ids(any_store, any_store.search_dense(unit(0), 10, flt))), "same filter in both"
        return bm

    assert docs(SearchFilter(tags={"team": "hr"})) == {"a"}
    assert docs(SearchFilter(sources=["*.pdf"])) == {"b"}
    assert docs(SearchFilter(date_from=dt.date(2025, 1, 1))) == {"b"}
    assert docs(SearchFilter(date_to=dt.date(2024, 12, 31))) == {"a"}
    assert docs(SearchFilter(doc_ids=["a", "b"])) == {"a", "b"}
    assert docs(SearchFilter(tags={"team": "sales"})) == set()
    any_store.update_tags("b", {"team": "hr"})
    assert docs(SearchFilter(tags={"team": "hr"})) == {"a", "b"}
    assert {c.tags["team"] for c in any_store.get_document_chunks("b")} == {"hr"}


def test_query_syntax_in_user_text_is_harmless(any_store: Store) -> None:
    put(any_store, "a", ['he said "near" OR not AND x*'])  # type: ignore[arg-type]
    put(any_store, "b", ["refunds are processed within fourteen days"], seed=1)  # type: ignore[arg-type]
    put(any_store, "c", ["the weather is sunny and warm"], seed=2)  # type: ignore[arg-type]

    def found(tokens: list[str]) -> list[str]:
        return doc_ids(any_store, any_store.search_bm25(tokens, 5))

    assert found(['"near"', "or", "NOT", "x*"]) == ["a"]
    assert found(["-col:title", "^refund", "{process}", "AND"]) == ["b"]
    assert found(tokenize('refunds OR NOT -body:x* ^processed "unclosed')) == ["b", "a"]


def test_documents_are_listed_found_and_moved(any_store: Store) -> None:
    put(any_store, "a", ["first part", "second part"], tags={"team": "hr"}, source="/docs/Alpha.md")  # type: ignore[arg-type]
    put(any_store, "b", ["other"], seed=1, source="/docs/beta.md")  # type: ignore[arg-type]
    assert [d.doc_id for d in any_store.list_documents()] == ["a", "b"]
    page = any_store.find_documents(DocumentQuery(text="alpha"))
    assert [d.doc_id for d in page.documents] == ["a"]
    assert page.total == 1
    assert any_store.find_documents(DocumentQuery(tags={"team": "hr"})).total == 1
    state = any_store.document_state("a")
    assert state is not None
    assert (state.tags, state.pipeline) == ({"team": "hr"}, "p")
    states = any_store.document_states(["b", "missing", "a"])
    assert sorted(states) == ["a", "b"]
    assert states["a"] == state
    old = any_store.get_document("a")
    assert old is not None
    assert any_store.documents_with_hash(old.content_hash, "p") == [old]
    moved = Document(doc_id="z", source="/docs/z.md", title="Z", content_hash=old.content_hash, n_chunks=2)
    any_store.move_document("a", moved)
    assert any_store.get_document("a") is None
    assert [c.chunk_id for c in any_store.get_document_chunks("z")] == ["z#0", "z#1"]
    assert doc_ids(any_store, any_store.search_bm25(["second"], 5)) == ["z"]
    found = any_store.get_chunk_by_id("z#1")
    assert found is not None
    assert found[1].text == "second part"
    assert sizes(any_store) == (2, 3)


def test_opening_with_another_embedder_is_a_clear_error(open_store: Opener) -> None:
    open_store().bind_embedder("model-a", 384)
    with pytest.raises(EmbedderMismatchError, match=r"model-a.*model-b"):
        open_store().bind_embedder("model-b", 1024)


def test_a_second_store_on_the_same_knowledge_base_sees_every_change(open_store: Opener) -> None:
    """Two store objects on one knowledge base (as two processes or hosts have): the registry, the generation
    and the data are the engine's, not one object's."""
    writer, reader = open_store(), open_store()
    writer.bind_embedder("test-model", DIM)
    reader.bind_embedder("test-model", DIM)
    g0 = reader.generation
    put(writer, "a", ["one"], seed=1)  # type: ignore[arg-type]
    assert reader.generation == g0 + 1
    assert doc_ids(reader, reader.search_dense(unit(100), 1)) == ["a"]
    put(writer, "b", ["two"], seed=2)  # type: ignore[arg-type]
    writer.delete_document("a")
    assert doc_ids(reader, reader.search_dense(unit(100), 5)) == ["b"]
    assert [d.doc_id for d in reader.list_documents()] == ["b"]
    assert (
        make_doc("b", ["two"], seed=2)[0].content_hash
        == (reader.get_document("b") or Document(doc_id="", source="", title="", content_hash="")).content_hash
    )
