"""`Store` on Milvus through `pymilvus.MilvusClient`: a server, a cluster, or a Milvus Lite file.

A document's change writes its new chunks under a new document generation, then commits by rewriting the
document's registry row (the one row that says which generation is live), then deletes the old chunks. Readers
keep only chunks of live generations, so they never see half a document, nor old and new chunks together; a
process killed mid-write leaves invisible rows that the next open deletes (see `registry`). Every read is
`Strong`. Fusion, de-duplication and reranking stay in `retrieve/`: this returns per-channel hits only.
"""

from __future__ import annotations

import logging
import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agentrag.errors import EmbedderMismatchError
from agentrag.settings import StoreSettings
from agentrag.store.base import ChannelResult, DocumentPage, DocumentQuery, DocumentState, IndexedChunk, StoreStats
from agentrag.store.milvus import collections as cols
from agentrag.store.milvus.collections import lit
from agentrag.store.milvus.registry import Entry, Registry
from agentrag.store.milvus.rows import FIELDS as _FIELDS
from agentrag.store.milvus.rows import allowed_documents, chunk_from_row, chunk_row
from agentrag.store.milvus.terms import query_terms
from agentrag.store.sqlite.listing import fold
from agentrag.types import Chunk, Document, SearchFilter, chunk_id_for
from agentrag.vocab import MilvusIndex

log = logging.getLogger(__name__)
_SLACK = 16  # extra hits asked for, in case some belong to a generation not (or no longer) live
_BATCH = 500


class MilvusStore:
    """`Store` whose documents, chunks, vectors, BM25 index, registry and generation all live in Milvus."""

    def __init__(self, directory: Path, settings: StoreSettings | None = None) -> None:
        self._settings = settings or StoreSettings(backend="milvus")
        self.uri = cols.resolve_uri(self._settings, directory)
        self._client = cols.connect(self._settings, directory)
        self._names = cols.collection_names(self._settings.collection_prefix, directory.name)
        self._index = MilvusIndex(self._settings.dense_index)
        cols.ensure_bookkeeping(self._client, self._names)
        self._registry = Registry(self._client, self._names)
        self._dim: int | None = None
        dim = self._registry.meta("dim")
        if dim is not None:
            self._open_chunks(int(dim))
            self._recover()

    def _open_chunks(self, dim: int) -> None:
        cols.ensure_chunks(self._client, self._names.chunks, dim, self._index)
        self._dim = dim

    def _recover(self) -> None:
        """Delete what writes killed half-way left behind: chunks of generations their document does not name."""
        for key, doc_ids in self._registry.pending().items():
            for doc_id in doc_ids:
                self._drop_stale(doc_id)
            self._registry.end(key)
            log.warning("%s: cleaned up a write interrupted before it finished (%s)", self.uri, ", ".join(doc_ids))

    def _drop_stale(self, doc_id: str, live: int | bool | None = True) -> None:
        """Delete the chunks of `doc_id` not under generation `live` (None: all of them; True: ask the registry)."""
        if live is True:
            entry = self._registry.get(doc_id)
            live = None if entry is None else entry.gen
        expr = f"doc_id == {lit(doc_id)}" + ("" if live is None else f" and doc_gen != {live}")
        self._client.delete(self._names.chunks, filter=expr)

    # ------------------------------------------------------------------ meta

    def bind_embedder(self, name: str, dim: int) -> None:
        have_name, have_dim = self._registry.meta("embedder"), self._registry.meta("dim")
        if have_name is None:
            self._registry.set_meta({"embedder": name, "dim": str(dim)})
        elif have_name != name or int(have_dim or 0) != dim:
            raise EmbedderMismatchError(
                f"knowledge base {self._names.chunks!r} at {self.uri} was built with embedder {have_name} "
                f"({have_dim}-d), but {name} ({dim}-d) is configured. Configure the same embedder, or ingest into a "
                f"new knowledge base (--kb NAME)."
            )
        if self._dim is None:
            self._open_chunks(dim)
            self._recover()

    @property
    def generation(self) -> int:
        return self._registry.generation

    def searching(self) -> AbstractContextManager[int]:
        return nullcontext(self.generation)

    def _count_chunks(self) -> int:
        if self._dim is None:
            return 0
        rows = self._client.query(
            self._names.chunks, filter="", output_fields=["count(*)"], consistency_level=cols.STRONG
        )
        return int(rows[0]["count(*)"])

    def stats(self) -> StoreStats:
        generation, entries = self._registry.entries()
        path = Path(self.uri)
        return StoreStats(
            documents=len(entries),
            chunks=self._count_chunks(),
            generation=generation,
            embedder=self._registry.meta("embedder"),
            dim=self._dim,
            dense_index="exact" if self._index is MilvusIndex.FLAT else "ann",
            bytes=path.stat().st_size if path.is_file() else 0,  # a server's disk use is the server's to report
        )

    # ------------------------------------------------------------------ documents

    def document_state(self, doc_id: str) -> DocumentState | None:
        entry = self._registry.get(doc_id)
        if entry is None:
            return None
        return DocumentState(entry.document.content_hash, entry.pipeline, entry.document.tags)

    def document_states(self, doc_ids: list[str]) -> dict[str, DocumentState]:
        states = {doc_id: self.document_state(doc_id) for doc_id in doc_ids}
        return {doc_id: state for doc_id, state in states.items() if state is not None}

    def get_document(self, doc_id: str) -> Document | None:
        entry = self._registry.get(doc_id)
        return None if entry is None else entry.document

    def _documents(self) -> list[Document]:
        return [e.document for e in self._registry.entries()[1].values()]

    def list_documents(self, limit: int | None = None, offset: int = 0) -> list[Document]:
        docs = sorted(self._documents(), key=lambda d: (d.source, d.doc_id))
        return docs[offset:] if limit is None else docs[offset : offset + limit]

    def find_documents(self, query: DocumentQuery) -> DocumentPage:
        text = fold(query.text.strip())
        docs = [
            d
            for d in self._documents()
            if (not text or text in fold(d.title) or text in fold(d.source))
            and all(d.tags.get(k) == v for k, v in query.tags.items())
        ]
        docs.sort(key=lambda d: (-d.ingested_at, d.title, d.doc_id))
        page = docs[query.offset :] if query.limit is None else docs[query.offset : query.offset + query.limit]
        return DocumentPage(page, len(docs))

    def documents_with_hash(self, content_hash: str, pipeline: str) -> list[Document]:
        # Asked for every new file ingest meets: a filtered read, not the whole registry after each write.
        return sorted((e.document for e in self._registry.with_content(content_hash, pipeline)), key=lambda d: d.doc_id)

    def _insert(self, rows: list[dict[str, Any]]) -> None:
        for i in range(0, len(rows), _BATCH):
            self._client.insert(self._names.chunks, rows[i : i + _BATCH])

    def _write(self, live: dict[str, bool], rows: list[dict[str, Any]], commit: Any) -> None:
        """Insert `rows` (under a new generation), call `commit` (the registry rows), record the change, then
        delete the documents' chunks that are no longer live (`live[doc_id]`: whether the document lives on under
        the new generation). A failure before the commit removes what it inserted and leaves the previous state."""
        if self._dim is None and rows:
            raise RuntimeError("bind_embedder before writing chunks")
        gen = time.time_ns()
        for row in rows:
            row["doc_gen"] = gen
        intent = self._registry.begin(list(live), gen)
        try:
            self._insert(rows)
            commit(gen)
        except BaseException:
            if self._dim is not None:
                self._client.delete(self._names.chunks, filter=f"doc_gen == {gen}")
            self._registry.end(intent)
            raise
        self._registry.changed()
        if self._dim is not None:
            for doc_id, lives in live.items():
                self._drop_stale(doc_id, gen if lives else None)
        self._registry.end(intent)

    def batch(self) -> AbstractContextManager[None]:
        """Each document already commits at its own point (its registry row); a batch only groups the writes, so
        a batch that raises keeps the documents written before it, each whole."""
        return nullcontext()

    def upsert_document(self, document: Document, pipeline: str, chunks: list[IndexedChunk]) -> None:
        doc = document.model_copy(update={"n_chunks": len(chunks), "ingested_at": document.ingested_at or time.time()})
        rows = [chunk_row(document.doc_id, item, self._dim) for item in chunks]
        self._write({doc.doc_id: True}, rows, lambda gen: self._registry.put(doc, gen, pipeline))

    def update_tags(self, doc_id: str, tags: dict[str, str]) -> None:
        entry = self._registry.get(doc_id)
        if entry is None:
            return
        self._registry.put(entry.document.model_copy(update={"tags": dict(tags)}), entry.gen, entry.pipeline)
        self._registry.changed()

    def move_document(self, old_id: str, document: Document) -> None:
        new_id = document.doc_id
        if new_id == old_id:
            raise ValueError(f"move_document: {old_id!r} onto itself")
        entry = self._registry.get(old_id)
        if entry is None:
            raise KeyError(old_id)
        rows = self._live_rows(old_id, entry.gen, [*_FIELDS, "terms", "vec"])
        for row in rows:
            row.pop("key")
            row["doc_id"], row["chunk_id"] = new_id, chunk_id_for(new_id, int(row["position"]))

        def commit(gen: int) -> None:
            # Two registry writes: between them a reader may see the document under both ids (never half of it).
            self._registry.put(document, gen, entry.pipeline)
            self._registry.remove(old_id)

        self._write({new_id: True, old_id: False}, rows, commit)

    def delete_document(self, doc_id: str) -> bool:
        if self._registry.get(doc_id) is None:
            return False
        self._write({doc_id: False}, [], lambda gen: self._registry.remove(doc_id))
        return True

    # ------------------------------------------------------------------ search

    def _search(self, data: Any, field: str, params: dict[str, Any], k: int, flt: SearchFilter | None) -> ChannelResult:
        if self._dim is None or k <= 0:
            return []
        generation, entries = self._registry.entries()
        for _ in range(3):
            hits, stale = self._search_live(data, field, params, k, allowed_documents(entries, flt), entries)
            if not stale:
                break
            # A chunk newer than our registry snapshot: a change committed meanwhile. Search again as of it, so a
            # replaced document is found in its new version rather than missing.
            moved, entries = self._registry.entries()
            if moved == generation:
                break
            generation = moved
        return hits

    def _search_live(
        self, data: Any, field: str, params: dict[str, Any], k: int, allowed: list[str] | None,
        entries: dict[str, Entry],
    ) -> tuple[ChannelResult, bool]:  # fmt: skip
        """The k best chunks of live generations, and whether a newer generation's chunk was left out."""
        if allowed is not None and not allowed:
            return [], False
        expr = "" if allowed is None else f"doc_id in {lit(allowed)}"
        limit = k + _SLACK
        while True:
            hits = self._client.search(
                self._names.chunks, data=[data], anns_field=field, limit=limit, filter=expr,
                output_fields=["doc_id", "doc_gen"], search_params=params,
                consistency_level=cols.STRONG,
            )[0]  # fmt: skip
            live, stale = [], False
            for h in hits:
                entry = entries.get(h["entity"]["doc_id"])
                if entry is not None and entry.gen == h["entity"]["doc_gen"]:
                    live.append((int(h["id"]), float(h["distance"])))
                else:
                    stale = stale or entry is None or h["entity"]["doc_gen"] > entry.gen
            if len(live) >= k or len(hits) < limit or limit >= 16384:
                return live[:k], stale
            limit = min(limit * 4, 16384)

    def search_bm25(
        self, tokens: list[str], k: int, flt: SearchFilter | None = None, title_weight: float = 2.0
    ) -> ChannelResult:
        text = query_terms(tokens, title_weight)
        if not text:
            return []
        return self._search(text, "sparse", {"metric_type": "BM25"}, k, flt)

    def search_dense(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        flt: SearchFilter | None = None,
        ef: int | None = None,
        near: npt.NDArray[np.float32] | None = None,
    ) -> ChannelResult:
        # `ef` is an HNSW breadth; the index types this backend builds (FLAT, IVF_FLAT, AUTOINDEX) take none. `near`
        # narrows a local scan; Milvus searches on its own.
        data = np.asarray(vector, dtype=np.float32).tolist()
        return self._search(data, "vec", cols.dense_search_params(self._index), k, flt)

    def optimize(self) -> None:
        """Milvus compacts and indexes on its own; nothing is derived here."""

    # ------------------------------------------------------------------ chunk lookups

    def _rows(self, expr: str, fields: list[str]) -> list[dict[str, Any]]:
        if self._dim is None:
            return []
        return list(
            self._client.query(
                self._names.chunks, filter=expr, output_fields=fields,
                consistency_level=cols.STRONG,
            )
        )  # fmt: skip

    def _live_rows(self, doc_id: str, gen: int, fields: list[str]) -> list[dict[str, Any]]:
        rows = self._rows(f"doc_id == {lit(doc_id)} and doc_gen == {gen}", fields)
        return sorted(rows, key=lambda r: int(r["position"]))

    def _by_key(self, keys: list[int], fields: list[str]) -> dict[int, tuple[dict[str, Any], Document]]:
        """Rows of the keys that belong to a live generation, with their document."""
        if not keys:
            return {}
        _, entries = self._registry.entries()
        out = {}
        for i in range(0, len(keys), 1000):
            for row in self._rows(f"key in {keys[i : i + 1000]}", [*fields, "doc_id", "doc_gen"]):
                entry = entries.get(row["doc_id"])
                if entry is not None and entry.gen == row["doc_gen"]:
                    out[int(row["key"])] = (row, entry.document)
        return out

    def get_chunks_by_key(self, keys: list[int]) -> dict[int, Chunk]:
        return {k: chunk_from_row(row, doc) for k, (row, doc) in self._by_key(keys, _FIELDS).items()}

    def get_chunks(self, keys: list[int]) -> list[Chunk]:
        by_key = self.get_chunks_by_key(keys)
        return [by_key[k] for k in keys if k in by_key]

    def get_document_chunks(self, doc_id: str) -> list[Chunk]:
        entry = self._registry.get(doc_id)
        if entry is None:
            return []
        return [chunk_from_row(r, entry.document) for r in self._live_rows(doc_id, entry.gen, _FIELDS)]

    def get_chunk_by_id(self, chunk_id: str) -> tuple[int, Chunk] | None:
        rows = self._rows(f"chunk_id == {lit(chunk_id)}", ["key"])
        found = self._by_key([int(r["key"]) for r in rows], _FIELDS)
        for key, (row, doc) in found.items():
            return key, chunk_from_row(row, doc)
        return None

    def get_vectors(self, keys: list[int]) -> npt.NDArray[np.float32]:
        found = self._by_key(keys, ["key", "vec"])
        rows = [found[k][0]["vec"] for k in keys if k in found]
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return np.asarray(rows, dtype=np.float32)

    def close(self) -> None:
        self._client.close()
