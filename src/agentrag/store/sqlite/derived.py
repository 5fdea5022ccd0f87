"""What the store derives from its tables, and keeps in step with them: the dense index in memory, the usearch
file saved beside the database for large knowledge bases, and the FTS5 index's segments.

The dense index records the generation it reflects and catches up from the chunk change log, or is rebuilt
from the vectors table, whenever the database has moved on (here or in another process). A saved ANN file
is only a head start: it is loaded if it is not ahead of the database, then caught up; a damaged one is
rebuilt. So a crash can never leave a dense index that points at chunks the database does not have.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agentrag.store.dense import EF_SEARCH, DenseIndex, ExactIndex, Keys, Matrix, UsearchIndex
from agentrag.store.dense_files import Layered, MappedExact, file_for, remove_others, saved_files, write_exact
from agentrag.store.sqlite.filters import SELECTIVE
from agentrag.store.sqlite.schema import read_chunk_count, read_generation, read_meta

log = logging.getLogger(__name__)
_NAMES = {"exact": "dense", "ann": "ANN"}
_REPLAY_MIN = 2000  # changes replayed at each open before the saved file is rewritten
_HIDDEN_MAX = 500  # chunks removed from a viewed HNSW graph: each search reads this much deeper
WriteTransaction = Callable[[], AbstractContextManager[sqlite3.Connection]]
# (connection, the generation a derived index is at) -> the generation to bring it to: see `SQLiteStore._generation`
Generation = Callable[[sqlite3.Connection, int], int]


class DerivedIndexes:
    """The derived indexes of one store. It reads through the store's connection and writes through the
    store's write transactions; callers hold the store's lock."""

    def __init__(
        self,
        con: sqlite3.Connection,
        directory: Path,
        ann_threshold: int,
        write: WriteTransaction,
        ef_search: int = EF_SEARCH,
        generation: Generation = lambda con, have: read_generation(con),
    ) -> None:
        self._con = con
        self._generation = generation  # the store's: the generation its current search holds, else the database's
        self._directory = directory
        self._ann_threshold = ann_threshold
        self._ef = ef_search
        self._write = write
        self.dim: int | None = None  # the bound embedder's; until it is bound, the database's
        self._dense: DenseIndex | None = None
        self._dense_generation = -1
        self._text_changes = 0  # FTS5 rows written since the last `optimize`

    def text_written(self, rows: int) -> None:
        """Count FTS5 rows added or deleted, so `optimize` knows how much compaction is due."""
        self._text_changes += rows

    # ------------------------------------------------------------------ dense index

    def load_vectors(self, keys: list[int] | None = None) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Keys and vectors from the vectors table (all of them, or those of `keys`), in key order."""
        dim = self.dim or int(read_meta(self._con, "dim") or 0)
        if keys is None:
            rows = self._con.execute("SELECT key, vector FROM vectors ORDER BY key").fetchall()
        else:
            rows = []
            for i in range(0, len(keys), 900):
                part = keys[i : i + 900]
                rows.extend(
                    self._con.execute(
                        f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))}) ORDER BY key",
                        part,
                    ).fetchall()
                )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, dim), dtype=np.float32)
        found = np.asarray([r[0] for r in rows], dtype=np.int64)
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        return found, matrix

    def dense(self) -> DenseIndex:
        """The dense index, brought up to the database's generation: the in-memory one caught up from the change
        log, else the newest saved file opened (mapped) and caught up, else one built from the vectors table."""
        generation = self._generation(self._con, self._dense_generation)
        if self._dense is not None and self._dense_generation == generation:
            return self._dense
        dim = self.dim or int(read_meta(self._con, "dim") or 384)
        kind = "ann" if read_chunk_count(self._con) > self._ann_threshold else "exact"
        if self._dense is not None and self._dense.kind == kind:
            self._catch_up(self._dense, self._dense_generation)
        else:
            self._dense = self._open(kind, dim, generation)
        self._dense_generation = generation
        if isinstance(self._dense, Layered) and self._rewrite_due(self._dense):
            self._dense = self._save(self._dense, generation, dim)
        return self._dense

    def search(
        self, vector: Matrix, k: int, allowed: Keys | None, near: Matrix | None, ef: int | None = None
    ) -> tuple[Keys, Matrix]:
        """The dense index's k best for `vector` among the allowed keys (all when None); `near`: a vector this
        thread searched just before, of which `vector` is a variant (the hybrid search's feedback vector); `ef`:
        an HNSW search's breadth (None: the store's)."""
        index = self.dense()
        if allowed is not None and len(allowed) > SELECTIVE and index.kind == "ann":
            # Broad filter on an ANN index: search deeper, then keep the allowed keys.
            keys, scores = index.search(vector, k * 8, ef=ef)
            mask = np.isin(keys, allowed)
            return keys[mask][:k], scores[mask][:k]
        return index.search(vector, k, allowed, ef, near)

    def _catch_up(self, index: DenseIndex, since: int) -> None:
        rows = self._con.execute(
            "SELECT key, added FROM chunk_log WHERE generation > ? ORDER BY seq", (since,)
        ).fetchall()
        final: dict[int, int] = {}
        for key, added in rows:
            final[key] = added
        removed = np.asarray([k for k, a in final.items() if not a], dtype=np.int64)
        index.remove(removed)
        keys, matrix = self.load_vectors([k for k, a in final.items() if a])
        index.add(keys, matrix)

    def _open(self, kind: str, dim: int, generation: int) -> DenseIndex:
        """The newest saved file of `kind` not ahead of the database, caught up; a damaged one is rebuilt."""
        usable = [(g, p) for g, p in saved_files(self._directory, kind) if g <= generation]
        if usable:
            g, path = usable[-1]
            try:
                base = MappedExact.open(path, dim) if kind == "exact" else UsearchIndex.open(path, dim, self._ef)
            except Exception as exc:  # a damaged cache file is rebuilt from the database, never trusted
                # Said once, here: the rebuilt file replaces the damaged one, so the next open is quiet.
                log.warning("%s: damaged %s index file (%s); rebuilding it from the database", path, _NAMES[kind], exc)
            else:
                layered = Layered(base, g, dim)
                self._catch_up(layered, g)
                return layered
        keys, matrix = self.load_vectors()
        built: ExactIndex | UsearchIndex = ExactIndex(dim) if kind == "exact" else UsearchIndex(dim, self._ef)
        built.add(keys, matrix)
        return self._save(built, generation, dim)

    def _rewrite_due(self, index: Layered) -> bool:
        """Replaying a few changes at each open is cheaper than rewriting the file (0.7-1.0 s for 100k HNSW
        vectors); past a tenth of the index, or too many removed chunks that every ANN search must skip, it is not."""
        hidden = index.base.hidden if isinstance(index.base, UsearchIndex) else 0
        return hidden > _HIDDEN_MAX or index.replayed > max(_REPLAY_MIN, len(index) // 10)

    def _save(self, index: DenseIndex, generation: int, dim: int) -> DenseIndex:
        """Write `index` at `generation` and return it opened from its file (mapped, or as a view); if the
        folder cannot be written, the index in memory serves (and the next open rebuilds it)."""
        path = file_for(self._directory, generation, index.kind)
        try:
            if isinstance(index, UsearchIndex):
                index.save(path)
            elif isinstance(index, Layered) and isinstance(index.base, UsearchIndex):
                index = self._mutable_ann(index, dim)
                index.save(path)
            else:
                keys, matrix = index.all_vectors()  # type: ignore[attr-defined]
                write_exact(path, keys, matrix)
            remove_others(self._directory, path)
            base = MappedExact.open(path, dim) if index.kind == "exact" else UsearchIndex.open(path, dim, self._ef)
        except (OSError, RuntimeError) as exc:  # a folder that cannot be written, a full disk
            log.debug("%s: dense index not saved (%s)", path, exc)
            return index
        return Layered(base, generation, dim)

    def _mutable_ann(self, index: Layered, dim: int) -> UsearchIndex:
        """The saved graph loaded whole (not viewed), with the changes over it applied."""
        assert isinstance(index.base, UsearchIndex)
        mutable = UsearchIndex.open(file_for(self._directory, index.generation, "ann"), dim, self._ef, view=False)
        mutable.remove(index.base.hidden_keys())
        more_keys, more = index.delta.all_vectors()
        mutable.add(more_keys, more)
        return mutable

    # ------------------------------------------------------------------ after writes

    def optimize(self) -> None:
        """After an ingest or delete: compact the BM25 index, and save the dense index if none is saved yet or
        enough has changed since it was (otherwise the next open replays the change log)."""
        self._compact_text_index()
        index = self.dense()
        if not isinstance(index, Layered):  # the last save failed: try again
            self._dense = self._save(index, self._dense_generation, self.dim or int(read_meta(self._con, "dim") or 384))

    def _compact_text_index(self) -> None:
        """Every FTS5 write adds index segments, and a query reads all of them. After a bulk load (10% of the
        index or more) merge everything into one b-tree ('optimize': about 0.05 s for 10k chunks, and BM25
        queries 15-20% faster); after a small change do a bounded amount of incremental merging."""
        changes, self._text_changes = self._text_changes, 0
        if changes == 0:
            return
        total = int(self._con.execute("SELECT count(*) FROM chunks").fetchone()[0])
        with self._write() as con:
            if changes * 10 >= total:
                con.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')")
            else:
                con.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('merge', 64)")
