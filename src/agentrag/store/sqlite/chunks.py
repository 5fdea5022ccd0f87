"""A chunk as the store reads it: one SQL statement for chunks with their documents' fields, and the `Chunk`
built from its row (on the hot path of every search: the returned hits).

`ChunkReader` reads a search's chunks without the JOIN: their rows by key, and their documents' fields from a
memory of them kept while the generation stands (a JOIN on the documents' text ids was half of fetching ten
chunks, and more of sixty). Every change of a document's fields (a write, new tags, a move) bumps the
generation, so the memory is emptied then; the generation, the rows and any fields missing from the memory are
read in one read transaction, so they are one state of the database, whichever process wrote it last.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
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
_PARAMS = 900  # under SQLite's bound-parameter limit


def chunk_from_row(row: tuple[Any, ...]) -> Chunk:
    """The chunk of a `CHUNK_SQL` row. Rows come from our own schema, validated on the way in: no validation
    again, and no JSON parser for the empty heading path and tags most chunks have (written as `[]` and `{}`)."""
    return _chunk(row, row[10:14], row[14])


def _chunk(row: tuple[Any, ...], document: tuple[Any, ...], breaks: str | None) -> Chunk:
    """The chunk of a row whose first ten columns are CHUNK_SQL's, with its document's title, source, date, tags."""
    heading = row[5]
    title, source, date, tags = document
    return trusted(
        Chunk,
        {
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
        },
    )


class ChunkReader:
    """Chunks by key through the store's connection; callers hold the store's lock."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self._con = con
        self._documents: dict[str, tuple[Any, ...]] = {}  # doc_id -> (title, source, date, tags)
        self._generation = -1

    def by_key(self, keys: list[int]) -> dict[int, Chunk]:
        con = self._con
        own = not con.in_transaction  # inside the store's own write, that transaction is the snapshot
        if own:
            con.execute("BEGIN")
        try:
            generation = read_generation(con)
            if generation != self._generation or len(self._documents) > _MAX_DOCUMENTS:
                self._documents.clear()
                self._generation = generation
            rows: list[tuple[Any, ...]] = []
            for start in range(0, len(keys), _PARAMS):
                part = keys[start : start + _PARAMS]
                rows.extend(con.execute(f"{_ROWS_SQL}({','.join('?' * len(part))})", part).fetchall())
            documents = self._documents
            missing = list({row[2] for row in rows if row[2] not in documents})
            for start in range(0, len(missing), _PARAMS):
                part = missing[start : start + _PARAMS]
                for doc_id, *fields in con.execute(f"{_DOCS_SQL}({','.join('?' * len(part))})", part):
                    documents[doc_id] = tuple(fields)
        finally:
            if own:
                con.execute("COMMIT")  # a read transaction: nothing to write, the snapshot is released
        # A chunk whose document row is missing is skipped, as the JOIN skipped it.
        return {int(row[0]): _chunk(row, documents[row[2]], row[10]) for row in rows if row[2] in documents}
