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

from agentrag.store.dense import DenseIndex, ExactIndex, UsearchIndex
from agentrag.store.sqlite.schema import read_generation, read_meta

log = logging.getLogger(__name__)
WriteTransaction = Callable[[], AbstractContextManager[sqlite3.Connection]]


class DerivedIndexes:
    """The derived indexes of one store. It reads through the store's connection and writes through the
    store's write transactions; callers hold the store's lock."""

    def __init__(self, con: sqlite3.Connection, directory: Path, ann_threshold: int, write: WriteTransaction) -> None:
        self._con = con
        self._directory = directory
        self._ann_threshold = ann_threshold
        self._write = write
        self.dim: int | None = None  # the bound embedder's; until it is bound, the database's
        self._dense: DenseIndex | None = None
        self._dense_generation = -1
        self._text_changes = 0  # FTS5 rows written since the last `optimize`

    def text_written(self, rows: int) -> None:
        """Count FTS5 rows added or deleted, so `optimize` knows how much compaction is due."""
        self._text_changes += rows

    # ------------------------------------------------------------------ dense index

    def _ann_path(self, generation: int) -> Path:
        return self._directory / f"dense-g{generation}.usearch"

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
        """The in-memory dense index, brought up to the database's generation."""
        generation = read_generation(self._con)
        if self._dense is not None and self._dense_generation == generation:
            return self._dense
        dim = self.dim or int(read_meta(self._con, "dim") or 384)
        n_chunks = self._con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        want_ann = n_chunks > self._ann_threshold
        if self._dense is not None and (self._dense.kind == "ann") == want_ann:
            self._catch_up(self._dense, self._dense_generation)
        elif want_ann:
            self._dense = self._open_ann(dim)
        else:
            exact = ExactIndex(dim)
            keys, matrix = self.load_vectors()
            exact.add(keys, matrix)
            self._dense = exact
        self._dense_generation = generation
        return self._dense

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

    def _open_ann(self, dim: int) -> UsearchIndex:
        """Load the newest saved ANN file that is not ahead of the database, catch up, save; else rebuild."""
        generation = read_generation(self._con)
        index = UsearchIndex(dim)
        saved = sorted(
            (int(p.stem.split("-g")[1]), p) for p in self._directory.glob("dense-g*.usearch") if p.stem[7:].isdigit()
        )
        usable = [(g, p) for g, p in saved if g <= generation]
        loaded = False
        if usable:
            g, path = usable[-1]
            try:
                index.load(path)
                self._catch_up(index, g)
                loaded = True
            except Exception as exc:  # a damaged cache file is rebuilt from the database, never trusted
                # Said once, here: the rebuilt file replaces the damaged one, so the next open is quiet.
                log.warning("%s: damaged ANN index file (%s); rebuilding it from the database", path, exc)
                index = UsearchIndex(dim)
        if not loaded:
            keys, matrix = self.load_vectors()
            index.add(keys, matrix)
        index.save(self._ann_path(generation))
        for _, path in saved:
            if path != self._ann_path(generation):
                path.unlink(missing_ok=True)
        return index

    # ------------------------------------------------------------------ after writes

    def optimize(self) -> None:
        """After an ingest or delete: compact the BM25 index and persist the ANN index at the current
        generation, so searches and the next open stay fast."""
        self._compact_text_index()
        index = self.dense()
        if isinstance(index, UsearchIndex):
            path = self._ann_path(self._dense_generation)
            if not path.exists():
                index.save(path)
                for old in self._directory.glob("dense-g*.usearch"):
                    if old != path:
                        old.unlink(missing_ok=True)

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
