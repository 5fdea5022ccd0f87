"""A chunk as the store reads it: one SQL statement for chunks with their documents' fields, and the `Chunk`
built from its row (on the hot path of every search: the returned hits).

`ChunkReader` reads a search's chunks without the JOIN: their rows by key, and their documents' fields, both
from a memory of them kept while the generation stands (a JOIN on the documents' text ids was half of fetching
ten chunks, and more of sixty; the rows' read transaction, four statements, was a repeated hybrid search's
every statement but its generation read). A chunk is remembered as its fields, parsed once: building sixty
chunks from their rows (JSON, dates) was most of fetching them. Every change of a chunk or a document's fields (a
write, new tags, a move) bumps the generation, so the memory is emptied then; the generation, the rows and any
fields missing from the memory are read in one read transaction, so they are one state of the database, whichever
process wrote it last. What a write reads inside its own transaction is not remembered: it may roll back.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Callable
from typing import Any

from agentrag.store.sqlite.schema import read_generation
from agentrag.types import Chunk, trusted

CHUNK_SQL = (
    "SELECT c.key, c.chunk_id, c.doc_id, c.position, c.text, c.heading, c.page, c.char_start, c.char_end, "
    "c.fingerprint, d.title, d.source, d.date, d.tags, c.page_breaks "
    "FROM chunks c JOIN documents d ON d.doc_id=c.doc_id"
)
# The chunk's own columns of CHUNK_SQL, in its order (the document's four come from `ChunkReader`'s memory).
_ROWS_SQL = (
    "SELECT key, chunk_id, doc_id, position, text, heading, page, char_start, char_end, fingerprint, page_breaks "
    "FROM chunks WHERE key IN "
)
_DOCS_SQL = "SELECT doc_id, title, source, date, tags FROM documents WHERE doc_id IN "
_MAX_DOCUMENTS = 100_000  # remembered documents; past it the memory starts again empty
_MAX_ROWS = 20_000  # remembered chunk rows (chunks of 500 characters by default: some 20 MB); past it, likewise
_PARAMS = 900  # under SQLite's bound-parameter limit


def chunk_from_row(row: tuple[Any, ...]) -> Chunk:
    """The chunk of a `CHUNK_SQL` row. Rows come from our own schema, validated on the way in: no validation
    again, and no JSON parser for the empty heading path and tags most chunks have (written as `[]` and `{}`)."""
    return trusted(Chunk, _fields(row, row[10:14], row[14]))


def _fields(row: tuple[Any, ...], document: tuple[Any, ...], breaks: str | None) -> dict[str, Any]:
    """The fields of the chunk of a row whose first ten columns are CHUNK_SQL's, with its document's title, source,
    date, tags: every field of `Chunk`, valid (what `trusted` takes)."""
    heading = row[5]
    title, source, date, tags = document
    return {
        "chunk_id": row[1],
        "doc_id": row[2],
        "position": row[3],
        "text": row[4],
        "title": title,
        "source": source,
        "heading_path": () if heading == "[]" else tuple(json.loads(heading)),
        "page": row[6],
        "page_breaks": tuple((int(a), int(b)) for a, b in json.loads(breaks)) if breaks else (),
        "char_start": row[7],
        "char_end": row[8],
        "date": dt.date.fromisoformat(date) if date else None,
        "tags": {} if tags == "{}" else json.loads(tags),
        "fingerprint": row[9],
    }


class ChunkReader:
    """Chunks by key through the store's connection; callers hold the store's lock.

    The chunks read are remembered, as their fields (parsed once), with the generation they were read at (and the
    keys found missing, as None): a search whose chunks are all remembered at the generation it holds
    (`generation`: the store's pins) runs no statement for them, so a repeated search runs one in all, its
    generation read, and builds each chunk from a copy of its fields."""

    def __init__(
        self, con: sqlite3.Connection, generation: Callable[[sqlite3.Connection, int], int] | None = None
    ) -> None:
        self._con = con
        self._generation_of = generation or (lambda con, have: read_generation(con))  # see `SQLiteStore._generation`
        self._documents: dict[str, tuple[Any, ...]] = {}  # doc_id -> (title, source, date, tags)
        self._rows: dict[int, dict[str, Any] | None] = {}  # key -> its chunk's fields, None: no such chunk
        self._generation = -1

    def by_key(self, keys: list[int]) -> dict[int, Chunk]:
        con, rows, documents = self._con, self._rows, self._documents
        own = not con.in_transaction  # inside the store's own write, that transaction is the snapshot
        if own and self._generation_of(con, self._generation) == self._generation and all(map(rows.__contains__, keys)):
            return _chunks(keys, rows)
        if own:
            con.execute("BEGIN")
        try:
            if own and len(keys) <= _MAX_ROWS:
                generation = read_generation(con)
                if (
                    generation != self._generation
                    or len(rows) + len(keys) > _MAX_ROWS
                    or len(documents) > _MAX_DOCUMENTS
                ):
                    rows.clear()
                    documents.clear()
                    self._generation = generation
                self._read([key for key in keys if key not in rows], rows, documents)
            else:  # a write's own state (it may roll back) or more rows than the memory holds: not remembered
                rows, documents = {}, {}
                self._read(keys, rows, documents)
        finally:
            if own:
                con.execute("COMMIT")  # a read transaction: nothing to write, the snapshot is released
        return _chunks(keys, rows)

    def _read(
        self, keys: list[int], rows: dict[int, dict[str, Any] | None], documents: dict[str, tuple[Any, ...]]
    ) -> None:
        """The fields of the chunks of `keys` into `rows` (None for a key with no chunk, or whose document row is
        missing, as the JOIN skipped it), reading their documents' fields that `documents` lacks."""
        con = self._con
        found: list[tuple[Any, ...]] = []
        for start in range(0, len(keys), _PARAMS):
            part = keys[start : start + _PARAMS]
            found.extend(con.execute(f"{_ROWS_SQL}({','.join('?' * len(part))})", part).fetchall())
        missing = list({row[2] for row in found if row[2] not in documents})
        for start in range(0, len(missing), _PARAMS):
            part = missing[start : start + _PARAMS]
            for doc_id, *fields in con.execute(f"{_DOCS_SQL}({','.join('?' * len(part))})", part):
                documents[doc_id] = tuple(fields)
        rows.update(dict.fromkeys(keys))
        rows.update((int(row[0]), _fields(row, documents[row[2]], row[10])) for row in found if row[2] in documents)


def _chunks(keys: list[int], rows: dict[int, dict[str, Any] | None]) -> dict[int, Chunk]:
    """The chunks of the keys found, each built anew from a copy of its fields, with tags of its own (a caller may
    change its chunk); the other fields' values are immutable."""
    out: dict[int, Chunk] = {}
    for key in keys:
        fields = rows.get(key)
        if fields is not None:
            values = fields.copy()
            tags = values["tags"]
            values["tags"] = dict(tags) if tags else {}
            out[key] = trusted(Chunk, values)
    return out
