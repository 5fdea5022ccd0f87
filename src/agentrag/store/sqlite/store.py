"""The embedded store: one SQLite file (WAL) with documents, chunks, vectors and an FTS5 BM25 index.

Every write is one transaction that also bumps the generation and appends to the chunk change log.
The dense index in memory (and the usearch file on disk, for large knowledge bases) is derived from
the vectors table: it records the generation it reflects and catches up from the change log, or is
rebuilt, whenever the database has moved on (see `derived`). A crash can therefore never leave a dense
index that points at chunks the database does not have: the database is the only truth.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agentrag.errors import EmbedderMismatchError
from agentrag.settings import StoreSettings
from agentrag.store.base import ChannelResult, DocumentPage, DocumentQuery, DocumentState, IndexedChunk, StoreStats
from agentrag.store.sqlite.chunks import CHUNK_SQL, ChunkReader, chunk_from_row
from agentrag.store.sqlite.connection import Writer, connect, unreadable
from agentrag.store.sqlite.derived import DerivedIndexes
from agentrag.store.sqlite.filters import allowed_keys
from agentrag.store.sqlite.listing import DOC_COLUMNS, document_from_row, document_query_sql
from agentrag.store.sqlite.pins import SearchGeneration
from agentrag.store.sqlite.schema import (
    count_chunks,
    needs_prepare,
    prepare,
    read_chunk_count,
    read_generation,
    read_meta,
)
from agentrag.store.sqlite.text_index import TextIndex, query_terms, search_fts5
from agentrag.threads import one_blas_thread
from agentrag.types import Chunk, Document, SearchFilter, chunk_id_for

Vector = npt.NDArray[np.float32]


class SQLiteStore:
    """`Store` backed by one SQLite database file; safe to share between threads of one process."""

    def __init__(self, path: Path, settings: StoreSettings | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._settings = settings or StoreSettings()
        one_blas_thread()  # dense scans are small products: see agentrag.threads
        self._lock = threading.RLock()
        self._pins = SearchGeneration(lambda: self.generation)
        self._generation = self._pins.current
        try:
            self._con = connect(self.path, self._settings)
        except sqlite3.DatabaseError as exc:
            raise unreadable(exc, self.path) from exc
        self._writer = Writer(self._con, self._lock, self._settings, self.path)
        self._write = self._writer.write
        try:
            if needs_prepare(self._con, self.path):  # a store in use opens without taking the write lock
                with self._write() as con:
                    prepare(con, self.path)
        except BaseException as exc:
            self._con.close()
            if isinstance(exc, sqlite3.DatabaseError):
                raise unreadable(exc, self.path) from exc
            raise
        self._derived = DerivedIndexes(
            self._con,
            self.path.parent,
            self._settings.ann_threshold,
            self._write,
            self._settings.ann_ef_search,
            self._generation,
        )
        # BM25 reads on a connection of their own, so FTS5 ranking can run in one thread while another scans
        # the dense index under `_lock`; in WAL mode it reads the last committed state, never a half-written
        # document.
        self._read_con = connect(self.path, self._settings, read_only=True)
        self._read_lock = threading.Lock()
        self._text_index = TextIndex(self.path.parent) if self._settings.bm25_index else None
        self._chunks = ChunkReader(self._con, self._generation)

    # ------------------------------------------------------------------ transactions and meta

    def batch(self) -> AbstractContextManager[None]:
        return self._writer.batch()

    def _meta(self, key: str) -> str | None:
        return read_meta(self._con, key)

    def _bump(self, con: sqlite3.Connection) -> int:
        # One statement: the value column has TEXT affinity, so the sum is stored as text, as it always was.
        row = con.execute(
            "UPDATE meta SET value=CAST(value AS INTEGER) + 1 WHERE key='generation' RETURNING value"
        ).fetchone()
        return int(row[0])

    @property
    def generation(self) -> int:
        with self._lock:
            return read_generation(self._con)

    def searching(self) -> AbstractContextManager[int]:
        """One search's steps in this thread take the generation read once at its start: see `pins`."""
        return self._pins.searching()

    def bind_embedder(self, name: str, dim: int) -> None:
        with self._lock:
            have_name, have_dim = self._meta("embedder"), self._meta("dim")
            if have_name is None:
                with self._write() as con:
                    con.execute("INSERT OR REPLACE INTO meta VALUES('embedder', ?)", (name,))
                    con.execute("INSERT OR REPLACE INTO meta VALUES('dim', ?)", (str(dim),))
            elif have_name != name or int(have_dim or 0) != dim:
                raise EmbedderMismatchError(
                    f"knowledge base {self.path.parent.name!r} was built with embedder {have_name} ({have_dim}-d), "
                    f"but {name} ({dim}-d) is configured. Configure the same embedder, or ingest into a new "
                    f"knowledge base (--kb NAME)."
                )
            self._derived.dim = dim

    def stats(self) -> StoreStats:
        with self._lock:
            docs = self._con.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
            chunks = read_chunk_count(self._con)
            dim = self._meta("dim")
            size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
            return StoreStats(
                documents=int(docs),
                chunks=int(chunks),
                generation=self.generation,
                embedder=self._meta("embedder"),
                dim=int(dim) if dim else None,
                dense_index="ann" if chunks > self._settings.ann_threshold else "exact",
                bytes=size,
            )

    # ------------------------------------------------------------------ documents

    def document_state(self, doc_id: str) -> DocumentState | None:
        return self.document_states([doc_id]).get(doc_id)

    def document_states(self, doc_ids: list[str]) -> dict[str, DocumentState]:
        rows: list[tuple[str, str, str, str]] = []
        with self._lock:
            for i in range(0, len(doc_ids), 900):  # under SQLite's bound-parameter limit
                part = doc_ids[i : i + 900]
                rows.extend(
                    self._con.execute(
                        f"SELECT doc_id, content_hash, pipeline, tags FROM documents WHERE doc_id IN "
                        f"({','.join('?' * len(part))})",
                        part,
                    )
                )
        return {r[0]: DocumentState(content_hash=r[1], pipeline=r[2], tags=json.loads(r[3])) for r in rows}

    _document = staticmethod(document_from_row)
    _DOC_COLUMNS = DOC_COLUMNS

    def get_document(self, doc_id: str) -> Document | None:
        with self._lock:
            row = self._con.execute(f"SELECT {self._DOC_COLUMNS} FROM documents WHERE doc_id=?", (doc_id,)).fetchone()
        return None if row is None else self._document(row)

    def list_documents(self, limit: int | None = None, offset: int = 0) -> list[Document]:
        with self._lock:
            rows = self._con.execute(
                f"SELECT {self._DOC_COLUMNS} FROM documents ORDER BY source, doc_id LIMIT ? OFFSET ?",
                (-1 if limit is None else limit, offset),
            ).fetchall()
        return [self._document(r) for r in rows]

    def find_documents(self, query: DocumentQuery) -> DocumentPage:
        page, count, page_args, count_args = document_query_sql(query, self._DOC_COLUMNS)
        with self._lock:
            rows = self._con.execute(page, page_args).fetchall()
            total = self._con.execute(count, count_args).fetchone()[0]
        return DocumentPage([self._document(r) for r in rows], int(total))

    def _delete_chunks(self, con: sqlite3.Connection, doc_id: str, generation: int) -> None:
        keys = [r[0] for r in con.execute("SELECT key FROM chunks WHERE doc_id=?", (doc_id,))]
        if not keys:
            return
        self._writer.defer("DELETE FROM chunks_fts WHERE rowid=?", [(k,) for k in keys])  # at COMMIT: see Writer
        self._derived.text_written(len(keys))
        con.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))  # vectors go by cascade
        count_chunks(con, -len(keys))
        con.executemany(
            "INSERT INTO chunk_log(generation, key, added) VALUES(?, ?, 0)", [(generation, k) for k in keys]
        )

    def upsert_document(self, document: Document, pipeline: str, chunks: list[IndexedChunk]) -> None:
        with self._write() as con:
            generation = self._bump(con)
            self._delete_chunks(con, document.doc_id, generation)
            con.execute("DELETE FROM documents WHERE doc_id=?", (document.doc_id,))
            self._insert_document(con, document, pipeline, len(chunks))
            # One statement per table for the whole document (executemany), not four per chunk.
            con.executemany(
                "INSERT INTO chunks(chunk_id, doc_id, position, text, heading, page, page_breaks, char_start, "
                "char_end, fingerprint) VALUES(?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        c.chunk_id,
                        document.doc_id,
                        c.position,
                        c.text,
                        json.dumps(list(c.heading_path), ensure_ascii=False),
                        c.page,
                        json.dumps(c.page_breaks) if c.page_breaks else None,
                        c.char_start,
                        c.char_end,
                        c.fingerprint,
                    )
                    for c in (item.chunk for item in chunks)
                ],
            )
            # Keys are given in insertion order, one more than the largest ever given (AUTOINCREMENT), and this
            # connection holds the write lock: the document's keys are the run ending at the last one inserted.
            last = int(con.execute("SELECT last_insert_rowid()").fetchone()[0])
            keys = list(range(last - len(chunks) + 1, last + 1))
            con.executemany(
                "INSERT INTO vectors VALUES(?, ?)",
                [(k, np.asarray(i.vector, dtype=np.float32).tobytes()) for k, i in zip(keys, chunks, strict=True)],
            )
            self._writer.defer(
                "INSERT INTO chunks_fts(rowid, title, body) VALUES(?,?,?)",
                [(k, " ".join(i.title_tokens), " ".join(i.body_tokens)) for k, i in zip(keys, chunks, strict=True)],
            )
            con.executemany(
                "INSERT INTO chunk_log(generation, key, added) VALUES(?, ?, 1)", [(generation, k) for k in keys]
            )
            count_chunks(con, len(chunks))
            self._derived.text_written(len(chunks))

    def _insert_document(self, con: sqlite3.Connection, document: Document, pipeline: str, n_chunks: int) -> None:
        con.execute(
            f"INSERT INTO documents({self._DOC_COLUMNS}, pipeline) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                document.doc_id,
                document.source,
                document.title,
                document.content_hash,
                document.mtime,
                document.date.isoformat() if document.date else None,
                json.dumps(document.tags, ensure_ascii=False, sort_keys=True),
                json.dumps(document.meta, ensure_ascii=False, sort_keys=True),
                n_chunks,
                document.chars,
                document.ingested_at or time.time(),
                pipeline,
            ),
        )
        if document.tags:
            con.executemany(
                "INSERT INTO doc_tags VALUES(?,?,?)", [(document.doc_id, k, v) for k, v in document.tags.items()]
            )

    def update_tags(self, doc_id: str, tags: dict[str, str]) -> None:
        with self._write() as con:
            self._bump(con)
            con.execute(
                "UPDATE documents SET tags=? WHERE doc_id=?",
                (json.dumps(tags, ensure_ascii=False, sort_keys=True), doc_id),
            )
            con.execute("DELETE FROM doc_tags WHERE doc_id=?", (doc_id,))
            con.executemany("INSERT INTO doc_tags VALUES(?,?,?)", [(doc_id, k, v) for k, v in tags.items()])

    def documents_with_hash(self, content_hash: str, pipeline: str) -> list[Document]:
        with self._lock:
            rows = self._con.execute(
                f"SELECT {self._DOC_COLUMNS} FROM documents WHERE content_hash=? AND pipeline=? ORDER BY doc_id",
                (content_hash, pipeline),
            ).fetchall()
        return [self._document(r) for r in rows]

    def move_document(self, old_id: str, document: Document) -> None:
        new_id = document.doc_id
        if new_id == old_id:
            raise ValueError(f"move_document: {old_id!r} onto itself")
        with self._write() as con:
            row = con.execute("SELECT pipeline FROM documents WHERE doc_id=?", (old_id,)).fetchone()
            if row is None:
                raise KeyError(old_id)
            generation = self._bump(con)
            self._delete_chunks(con, new_id, generation)
            con.execute("DELETE FROM documents WHERE doc_id=?", (new_id,))
            self._insert_document(con, document, row[0], document.n_chunks)
            # The chunks keep their keys, so their vectors, BM25 rows and the dense index stay as they are.
            positions = con.execute("SELECT key, position FROM chunks WHERE doc_id=?", (old_id,)).fetchall()
            con.executemany(
                "UPDATE chunks SET doc_id=?, chunk_id=? WHERE key=?",
                [(new_id, chunk_id_for(new_id, position), key) for key, position in positions],
            )
            con.execute("DELETE FROM documents WHERE doc_id=?", (old_id,))  # no chunk refers to it any more

    def delete_document(self, doc_id: str) -> bool:
        with self._write() as con:
            if con.execute("SELECT 1 FROM documents WHERE doc_id=?", (doc_id,)).fetchone() is None:
                return False
            generation = self._bump(con)
            self._delete_chunks(con, doc_id, generation)
            con.execute("DELETE FROM documents WHERE doc_id=?", (doc_id,))
            return True

    # ------------------------------------------------------------------ search

    def search_bm25(
        self, tokens: list[str], k: int, flt: SearchFilter | None = None, title_weight: float = 2.0
    ) -> ChannelResult:
        if not tokens:
            return []
        terms = query_terms(tokens) if self._text_index is not None else None
        if terms is not None and self._text_index is not None:
            with self._read_lock:
                index = self._text_index.index(self._read_con, self._generation)
                allowed = allowed_keys(self._read_con, flt)
            if allowed is not None and len(allowed) == 0:
                return []
            return index.search(terms, k, title_weight, allowed)
        with self._read_lock:
            return search_fts5(self._read_con, tokens, k, flt, title_weight)

    def search_dense(
        self, vector: Vector, k: int, flt: SearchFilter | None = None, ef: int | None = None, near: Vector | None = None
    ) -> ChannelResult:
        with self._lock:
            allowed = allowed_keys(self._con, flt)
            if allowed is not None and len(allowed) == 0:
                return []
            keys, scores = self._derived.search(vector, k, allowed, near, ef)
        return list(zip(keys.tolist(), scores.tolist(), strict=True))  # Python ints and floats already

    # ------------------------------------------------------------------ derived indexes

    def optimize(self) -> None:
        """After an ingest or delete: compact the BM25 index and persist the ANN index at the current
        generation, so searches and the next open stay fast."""
        with self._lock:
            self._derived.optimize()
        if self._text_index is not None:
            with self._read_lock:
                self._text_index.index(self._read_con)
                self._text_index.persist()

    # ------------------------------------------------------------------ chunk lookups

    _CHUNK_SQL = CHUNK_SQL
    _chunk = staticmethod(chunk_from_row)

    def get_chunks_by_key(self, keys: list[int]) -> dict[int, Chunk]:
        if not keys:
            return {}
        with self._lock:
            return self._chunks.by_key(keys)

    def get_chunks(self, keys: list[int]) -> list[Chunk]:
        by_key = self.get_chunks_by_key(keys)
        return [by_key[k] for k in keys if k in by_key]

    def get_chunk_by_id(self, chunk_id: str) -> tuple[int, Chunk] | None:
        with self._lock:
            row = self._con.execute(f"{self._CHUNK_SQL} WHERE c.chunk_id=?", (chunk_id,)).fetchone()
        return None if row is None else (int(row[0]), self._chunk(row))

    def get_document_chunks(self, doc_id: str) -> list[Chunk]:
        with self._lock:
            rows = self._con.execute(f"{self._CHUNK_SQL} WHERE c.doc_id=? ORDER BY c.position", (doc_id,)).fetchall()
        return [self._chunk(r) for r in rows]

    def get_vectors(self, keys: list[int]) -> npt.NDArray[np.float32]:
        with self._lock:
            cached = self._derived.dense().vectors(keys)
            if cached is not None:
                return cached
            found, matrix = self._derived.load_vectors(keys)
        row = {int(k): i for i, k in enumerate(found.tolist())}
        return matrix[[row[k] for k in keys if k in row]]

    def close(self) -> None:
        with self._read_lock:
            self._read_con.close()
        with self._lock:
            self._con.close()
