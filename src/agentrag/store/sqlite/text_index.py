"""The BM25 inverted index (`store.bm25`) derived from `chunks_fts`, kept in step with the database the way
the dense index is: FTS5 stays the source of truth, the index records the generation it reflects.

A saved index (`bm25-g<generation>/` beside the database) is loaded if it is not ahead of the database; the
chunks changed since (the chunk change log) are masked out of it and indexed again from `chunks_fts` into a
small second segment, so a search always sees exactly what the database holds, whichever process wrote it.
When that segment grows past a tenth of the saved one, or on `optimize` after an ingest, the two are merged
and saved. A missing or damaged file is rebuilt from `chunks_fts`; one saved in an older format with the same
postings (format 2: its term list as text) is saved again in the current one, without reading `chunks_fts`.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agentrag.store.base import ChannelResult
from agentrag.store.bm25 import FORMAT, Segment, fts5_tokens, merge
from agentrag.store.bm25_search import Bm25Index
from agentrag.store.sqlite.filters import filter_sql
from agentrag.store.sqlite.schema import read_generation
from agentrag.types import SearchFilter

log = logging.getLogger(__name__)
_PREFIX = "bm25-g"
MERGE_ALWAYS_BELOW = 20_000  # rows: an index this small is merged and saved after every change
MERGE_ROWS = 5_000  # changed rows that are worth rewriting a large index


def search_fts5(
    con: sqlite3.Connection, tokens: list[str], k: int, flt: SearchFilter | None, title_weight: float
) -> ChannelResult:
    """FTS5's own ranking: what the inverted index reproduces, and what ranks phrase tokens."""
    sql = "SELECT rowid, bm25(chunks_fts, ?, 1.0) AS s FROM chunks_fts WHERE chunks_fts MATCH ?"
    args: list[Any] = [title_weight, " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)]
    if flt is not None and not flt.is_empty():
        allowed_sql, filter_args = filter_sql(flt)
        sql += f" AND rowid IN ({allowed_sql})"
        args.extend(filter_args)
    sql += " ORDER BY s LIMIT ?"
    args.append(k)
    # FTS5's bm25() is negative (lower is better); flip it so every channel is higher-is-better.
    return [(int(key), -float(score)) for key, score in con.execute(sql, args).fetchall()]


def query_terms(tokens: list[str]) -> list[str] | None:
    """The index terms of agentrag query tokens, or None when a token is not one FTS5 token (a word with an
    underscore is a two-token phrase to FTS5): such a query is left to FTS5, which ranks phrases."""
    out: list[str] = []
    for token in tokens:
        # A token of lower-case letters and digits only is one FTS5 token, itself (most of them: no regex then).
        if token.isalnum() and (token.islower() or token.isdigit()):
            out.append(token)
            continue
        parts = fts5_tokens(token)
        if len(parts) != 1:
            return None
        out.append(parts[0])
    return out


class TextIndex:
    """The BM25 index of one store. Callers serialise calls (the store's read lock) and pass the connection
    the index reads through."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._main: Segment | None = None
        self._main_generation = -1
        self._index: Bm25Index | None = None
        self._generation = -1
        self._recent: Segment | None = None
        self._live: np.ndarray | None = None

    def _path(self, generation: int) -> Path:
        return self._directory / f"{_PREFIX}{generation}"

    def index(
        self, con: sqlite3.Connection, current: Callable[[sqlite3.Connection, int], int] | None = None
    ) -> Bm25Index:
        """The index at the database's current generation (`current`: the store's way to get it, given the one
        this index is at; see `SQLiteStore._generation`)."""
        generation = read_generation(con) if current is None else current(con, self._generation)
        if self._index is not None and self._generation == generation:
            return self._index
        if self._main is None or self._main_generation > generation:
            self._open(con, generation)
        assert self._main is not None
        changed = [
            int(r[0])
            for r in con.execute(
                "SELECT DISTINCT key FROM chunk_log WHERE generation > ? ORDER BY key", (self._main_generation,)
            )
        ]
        self._recent = _read_segment(con, changed)
        self._live = ~np.isin(self._main.keys, changed) if changed else None
        self._index = Bm25Index([self._main, self._recent], [self._live, None])
        self._generation = generation
        if len(changed) * 10 > max(len(self._main), 10_000):
            self.persist()
        return self._index

    def persist(self) -> None:
        """Merge the recent changes into the saved index and write it at the current generation: always for a
        small index (milliseconds), and for a large one once the changes are worth rewriting it (a twentieth of
        its rows, or `MERGE_ROWS`), so deleting one document does not rewrite a million chunks' postings;
        smaller changes are replayed from the change log when a store opens."""
        if self._main is None or self._recent is None or self._main_generation == self._generation:
            return
        changed = len(self._recent) + (0 if self._live is None else int((~self._live).sum()))
        rows = len(self._main)
        if rows >= MERGE_ALWAYS_BELOW and changed * 20 < rows and changed < MERGE_ROWS:
            return
        self._main = merge(self._main, self._live, self._recent)
        self._main_generation = self._generation
        self._recent, self._live = Segment.build([]), None
        self._index = Bm25Index([self._main, self._recent], [None, None])
        self._save()

    def _open(self, con: sqlite3.Connection, generation: int) -> None:
        saved = sorted(
            (int(p.name[len(_PREFIX) :]), p)
            for p in self._directory.glob(f"{_PREFIX}*")
            if p.is_dir() and p.name[len(_PREFIX) :].isdigit()
        )
        for g, path in reversed([(g, p) for g, p in saved if g <= generation]):
            try:
                self._main, self._main_generation = Segment.load(path)
                if self._main_generation != g:
                    raise ValueError(f"records generation {self._main_generation}")
                if Segment.saved_format(path) != FORMAT:  # an older format: the same postings, saved again
                    self._save()
                    self._main, _ = Segment.load(path)
                return
            except (OSError, ValueError, KeyError) as exc:  # a damaged cache is rebuilt, never trusted
                log.warning("%s: damaged BM25 index (%s); rebuilding it from the database", path, exc)
        self._main = _read_segment(con, None)
        self._main_generation = generation
        self._save()

    def _save(self) -> None:
        assert self._main is not None
        path = self._path(self._main_generation)
        try:
            self._main.save(path, self._main_generation)
        except OSError as exc:  # a read-only directory: the index still serves from memory
            log.warning("%s: cannot save the BM25 index (%s)", path, exc)
            return
        for old in self._directory.glob(f"{_PREFIX}*"):
            if old != path and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)


def _read_segment(con: sqlite3.Connection, keys: list[int] | None) -> Segment:
    """A segment of the rows of `chunks_fts` (all of them, or those of `keys` that still exist)."""
    if keys is None:
        return Segment.build(con.execute("SELECT rowid, title, body FROM chunks_fts"))
    rows: list[tuple[int, str, str]] = []
    for i in range(0, len(keys), 900):
        part = keys[i : i + 900]
        rows.extend(
            con.execute(f"SELECT rowid, title, body FROM chunks_fts WHERE rowid IN ({','.join('?' * len(part))})", part)
        )
    return Segment.build(rows)
