"""The Store protocol: everything the retriever and the ingest pipeline need from a backend.

It is deliberately narrow. A backend keeps documents, their chunks, one vector per chunk and a
BM25 index over the tokens it is given; it answers the two channel searches with integer chunk keys
and scores (higher is better), and it resolves keys to chunks. Fusion, de-duplication, reranking and
everything above live outside, so the embedded SQLite store and the Milvus backend are swappable.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from agentrag.errors import ConfigError
from agentrag.layout import STORE_FILE
from agentrag.settings import StoreSettings
from agentrag.types import Chunk, Document, SearchFilter


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    """A chunk ready to store: its metadata, its vector, and its BM25 tokens per field."""

    chunk: Chunk
    vector: npt.NDArray[np.float32]
    title_tokens: list[str]
    body_tokens: list[str]


@dataclass(frozen=True, slots=True)
class DocumentState:
    """What decides whether a re-ingest can be skipped."""

    content_hash: str
    pipeline: str
    tags: dict[str, str]


@dataclass(frozen=True, slots=True)
class StoreStats:
    documents: int
    chunks: int
    generation: int
    embedder: str | None
    dim: int | None
    dense_index: str  # "exact" or "ann"
    bytes: int


@dataclass(frozen=True, slots=True)
class DocumentQuery:
    """Which documents to list: those whose title or source contains `text` (case-insensitive, any script) and
    that carry every tag in `tags`, newest ingest first (then by title), `limit` of them from `offset`."""

    text: str = ""
    tags: dict[str, str] = field(default_factory=dict)
    offset: int = 0
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class DocumentPage:
    documents: list[Document]
    total: int  # every document the query matches, not only this page's


# Keys and scores of one channel, best first.
ChannelResult = list[tuple[int, float]]


class Store(Protocol):
    def bind_embedder(self, name: str, dim: int) -> None:
        """Record the embedding model on first use; refuse a different one afterwards."""
        ...

    @property
    def generation(self) -> int:
        """Increases with every committed change; caches and derived indexes key on it."""
        ...

    def searching(self) -> AbstractContextManager[int]:
        """Around one search's steps in one thread: the generation, read once, which the steps may reuse instead
        of reading it again each (a backend with nothing to save just yields `generation`)."""
        ...

    def stats(self) -> StoreStats: ...

    def document_state(self, doc_id: str) -> DocumentState | None: ...

    def document_states(self, doc_ids: list[str]) -> dict[str, DocumentState]:
        """`document_state` of many documents at once (those not stored are left out)."""
        ...

    def get_document(self, doc_id: str) -> Document | None: ...

    def list_documents(self, limit: int | None = None, offset: int = 0) -> list[Document]: ...

    def find_documents(self, query: DocumentQuery) -> DocumentPage:
        """One page of the documents `query` matches, and how many it matches in all."""
        ...

    def upsert_document(self, document: Document, pipeline: str, chunks: list[IndexedChunk]) -> None:
        """Replace the document and all its chunks atomically (all or nothing)."""
        ...

    def batch(self) -> AbstractContextManager[None]:
        """Writes made inside are committed together when it ends (each still all or nothing on its own: one
        that raises is undone alone); nothing is committed if the batch itself raises. A backend whose every
        document has its own commit point (Milvus) commits each as it is written: a batch that raises keeps
        those written before, each whole."""
        ...

    def update_tags(self, doc_id: str, tags: dict[str, str]) -> None: ...

    def documents_with_hash(self, content_hash: str, pipeline: str) -> list[Document]:
        """The documents indexed from this content by this pipeline (a renamed file's old entry, say)."""
        ...

    def move_document(self, old_id: str, document: Document) -> None:
        """Give the document `old_id` the id, source and metadata of `document`, keeping its chunks' text, vectors
        and BM25 entries (chunk ids follow the new id); whatever `document.doc_id` held is replaced. Atomic."""
        ...

    def delete_document(self, doc_id: str) -> bool:
        """Remove the document and everything indexed from it; False if it was not there."""
        ...

    def search_bm25(
        self, tokens: list[str], k: int, flt: SearchFilter | None = None, title_weight: float = 2.0
    ) -> ChannelResult:
        """BM25 over title (and heading) and body fields; `title_weight` scales title term frequency."""
        ...

    def search_dense(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        flt: SearchFilter | None = None,
        ef: int | None = None,
        near: npt.NDArray[np.float32] | None = None,
    ) -> ChannelResult:
        """The k nearest chunks by inner product; `ef`: the breadth of this search when the index is an HNSW graph
        (None: the store's `ann_ef_search`; an exact index, or one without such a breadth, ignores it); `near`: a
        vector this thread searched just before, of which `vector` is a variant (the hybrid search's feedback
        vector), which a store may use to narrow its scan, or ignore."""
        ...

    def get_chunks(self, keys: list[int]) -> list[Chunk]:
        """Chunks for the keys, in the order given; keys that no longer exist are skipped."""
        ...

    def get_chunks_by_key(self, keys: list[int]) -> dict[int, Chunk]:
        """The chunks that still exist, by key (a concurrent delete may have removed some)."""
        ...

    def get_document_chunks(self, doc_id: str) -> list[Chunk]: ...

    def get_chunk_by_id(self, chunk_id: str) -> tuple[int, Chunk] | None:
        """The key and chunk for a chunk id, or None."""
        ...

    def get_vectors(self, keys: list[int]) -> npt.NDArray[np.float32]:
        """The stored vectors of the keys, one row each, in the order given (missing keys are skipped)."""
        ...

    def optimize(self) -> None:
        """After a batch of writes: compact and persist whatever the backend derives from its data; cheap when
        nothing changed."""
        ...

    def close(self) -> None: ...


def make_store(settings: StoreSettings, directory: Path) -> Store:
    """The store of one knowledge base, keeping its files in `directory` (`Layout(home).kb_dir(name)`)."""
    if settings.backend == "sqlite":
        from agentrag.store.sqlite import SQLiteStore

        return SQLiteStore(directory / STORE_FILE, settings)
    if settings.backend == "milvus":
        from agentrag.store.milvus import MilvusStore

        return MilvusStore(directory, settings)
    raise ConfigError(f"store.backend: unknown backend {settings.backend!r}")
