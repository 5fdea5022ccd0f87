"""Moving a knowledge base from one store backend to another (`agentrag kb copy`): documents, chunks and their
stored vectors, so nothing is embedded again. The BM25 tokens are derived again from the chunks' text exactly as
ingest derives them (tokenizing is cheap; the store keeps them in its own form)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from agentrag.errors import ConfigError, KnowledgeBaseNotFound
from agentrag.layout import Layout
from agentrag.settings import Settings
from agentrag.store.base import IndexedChunk, Store, make_store
from agentrag.text.tokenize import tokenize
from agentrag.types import Document
from agentrag.vocab import StoreBackend


@dataclass(frozen=True, slots=True)
class CopyReport:
    documents: int
    chunks: int
    skipped: int  # already in the target with the same content and pipeline


def open_backend(settings: Settings, kb_id: str, backend: StoreBackend) -> Store:
    store_settings = settings.store.model_copy(update={"backend": backend})
    return make_store(store_settings, Layout(settings.home).kb_dir(kb_id))


def copy_store(
    source: Store, target: Store, progress: Callable[[str], None] | None = None, workers: int = 4
) -> CopyReport:
    """Every document of `source` into `target` (replacing a different version there); vectors as stored.
    `workers` documents are written at a time: a remote store spends most of a write waiting on round trips."""
    stats = source.stats()
    if stats.embedder is None or stats.dim is None:
        raise KnowledgeBaseNotFound("the source knowledge base is empty: nothing to copy")
    target.bind_embedder(stats.embedder, stats.dim)

    def copy_one(doc: Document) -> int | None:
        state = source.document_state(doc.doc_id)
        if state is None:
            return None  # deleted meanwhile
        have = target.document_state(doc.doc_id)
        if have is not None and (have.content_hash, have.pipeline) == (state.content_hash, state.pipeline):
            return -1
        items = _indexed(source, doc.doc_id, doc.title)
        target.upsert_document(doc, state.pipeline, items)
        if progress is not None:
            progress(doc.doc_id)
        return len(items)

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="agentrag-copy") as pool:
        done = [n for n in pool.map(copy_one, source.list_documents()) if n is not None]
    target.optimize()
    return CopyReport(sum(1 for n in done if n >= 0), sum(n for n in done if n > 0), sum(1 for n in done if n < 0))


def _indexed(source: Store, doc_id: str, title: str) -> list[IndexedChunk]:
    keyed = [source.get_chunk_by_id(c.chunk_id) for c in source.get_document_chunks(doc_id)]
    found = [k for k in keyed if k is not None]
    vectors = source.get_vectors([key for key, _ in found])
    return [
        IndexedChunk(
            chunk=chunk,
            vector=np.asarray(vector, dtype=np.float32),
            title_tokens=tokenize(" ".join([title, *chunk.heading_path])),
            body_tokens=tokenize(chunk.text),
        )
        for (_, chunk), vector in zip(found, vectors, strict=True)
    ]


def copy_knowledge_base(
    settings: Settings,
    kb_id: str,
    source: StoreBackend,
    target: StoreBackend,
    progress: Callable[[str], None] | None = None,
) -> CopyReport:
    if source == target:
        raise ConfigError(f"--from and --to are both {source.value}: name two different backends")
    if source is StoreBackend.SQLITE and not Layout(settings.home).store_file(kb_id).exists():
        raise KnowledgeBaseNotFound(f"no knowledge base {kb_id!r} in {settings.home}")
    src = open_backend(settings, kb_id, source)
    try:
        dst = open_backend(settings, kb_id, target)
        try:
            return copy_store(src, dst, progress)
        finally:
            dst.close()
    finally:
        src.close()
