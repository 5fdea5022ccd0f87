"""What is particular to the Milvus backend: choosing it by settings, how a write that fails half-way is undone,
and what Milvus cannot make atomic (documented here as behaviour, and in the README)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from agentrag.errors import ConfigError
from agentrag.settings import load_settings
from agentrag.store.base import make_store
from agentrag.store.milvus import MilvusStore
from agentrag.text.tokenize import tokenize
from agentrag.types import Document
from tests.store.conftest import DIM
from tests.store.test_sqlite import make_doc, put


@pytest.fixture
def store(milvus_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MilvusStore:
    monkeypatch.setenv("AGENTRAG_STORE__BACKEND", "milvus")
    monkeypatch.setenv("AGENTRAG_STORE__URI", milvus_uri)
    monkeypatch.setenv("AGENTRAG_STORE__COLLECTION_PREFIX", f"m{uuid.uuid4().hex[:10]}")
    opened = make_store(load_settings(tmp_path / "home").store, tmp_path / "kb")
    assert isinstance(opened, MilvusStore), "the environment chose the backend"
    opened.bind_embedder("test-model", DIM)
    return opened


def test_an_unknown_backend_or_index_is_named_in_the_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTRAG_STORE__BACKEND", "milvas")
    with pytest.raises(ConfigError, match=r"store\.backend"):
        load_settings(tmp_path)
    monkeypatch.setenv("AGENTRAG_STORE__BACKEND", "milvus")
    monkeypatch.setenv("AGENTRAG_STORE__DENSE_INDEX", "HNSW2")
    with pytest.raises(ConfigError, match=r"store\.dense_index"):
        load_settings(tmp_path)


def test_a_write_failing_before_its_commit_point_leaves_the_previous_version(
    store: MilvusStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    put(store, "a", ["kept text"])  # type: ignore[arg-type]

    def fail(*args: Any) -> None:
        raise RuntimeError("registry unreachable")

    monkeypatch.setattr(store._registry, "put", fail)
    doc, chunks = make_doc("a", ["new one", "new two"], seed=2)
    with pytest.raises(RuntimeError, match="unreachable"):
        store.upsert_document(doc, "p", chunks)
    assert [c.text for c in store.get_document_chunks("a")] == ["kept text"]
    assert store.stats().chunks == 1, "the chunks written before the failure were removed"
    assert store._registry.pending() == {}


def test_a_title_weight_the_index_was_not_built_with_is_a_clear_error(store: MilvusStore) -> None:
    put(store, "a", ["text"])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"retrieval\.title_weight"):
        store.search_bm25(["text"], 5, title_weight=3.0)


def test_a_rename_shows_both_ids_for_a_moment(store: MilvusStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Documented limitation: Milvus has no transaction over two rows, so `move_document` commits the new id,
    then removes the old one; a reader in between sees the document under both ids (each whole), never half."""
    put(store, "old", ["moving text", "second"])  # type: ignore[arg-type]
    seen: list[list[str]] = []
    remove = store._registry.remove

    def remove_and_look(doc_id: str) -> None:
        seen.append(sorted(d.doc_id for d in store.list_documents()))
        hits = store.search_bm25(tokenize("moving"), 10)
        seen.append(sorted(c.doc_id for c in store.get_chunks([k for k, _ in hits])))
        remove(doc_id)

    monkeypatch.setattr(store._registry, "remove", remove_and_look)
    store.move_document("old", Document(doc_id="new", source="/n.md", title="N", content_hash="h", n_chunks=2))
    assert seen == [["new", "old"], ["new", "old"]]
    assert [d.doc_id for d in store.list_documents()] == ["new"]
    assert store.stats().chunks == 2
