"""A chunk as the store reads it: one SQL statement for chunks with their documents' fields, and the `Chunk`
built from its row (on the hot path of every search: the returned hits)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from agentrag.types import Chunk, trusted

CHUNK_SQL = (
    "SELECT c.key, c.chunk_id, c.doc_id, c.position, c.text, c.heading, c.page, c.char_start, c.char_end, "
    "c.fingerprint, d.title, d.source, d.date, d.tags, c.page_breaks "
    "FROM chunks c JOIN documents d ON d.doc_id=c.doc_id"
)


def chunk_from_row(row: tuple[Any, ...]) -> Chunk:
    """The chunk of a `CHUNK_SQL` row. Rows come from our own schema, validated on the way in: no validation
    again, and no JSON parser for the empty heading path and tags most chunks have (written as `[]` and `{}`)."""
    heading, tags, breaks = row[5], row[13], row[14]
    return trusted(
        Chunk,
        {
            "chunk_id": row[1],
            "doc_id": row[2],
            "position": row[3],
            "text": row[4],
            "title": row[10],
            "source": row[11],
            "heading_path": () if heading == "[]" else tuple(json.loads(heading)),
            "page": row[6],
            "page_breaks": tuple((int(a), int(b)) for a, b in json.loads(breaks)) if breaks else (),
            "char_start": row[7],
            "char_end": row[8],
            "date": dt.date.fromisoformat(row[12]) if row[12] else None,
            "tags": {} if tags == "{}" else json.loads(tags),
            "fingerprint": row[9],
        },
    )
