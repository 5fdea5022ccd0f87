"""Document rows as the objects they hold, and listing documents as a person browses them: a search over
titles and sources, tags, one page at a time."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import unicodedata
from typing import Any

from agentrag.store.base import DocumentQuery
from agentrag.types import Document

FOLD = "agentrag_fold"
DOC_COLUMNS = "doc_id, source, title, content_hash, mtime, date, tags, meta, n_chunks, chars, ingested_at"


def document_from_row(row: sqlite3.Row | tuple[Any, ...]) -> Document:
    """A `documents` row, selected as DOC_COLUMNS, as a `Document`."""
    return Document(
        doc_id=row[0],
        source=row[1],
        title=row[2],
        content_hash=row[3],
        mtime=row[4],
        date=dt.date.fromisoformat(row[5]) if row[5] else None,
        tags=json.loads(row[6]),
        meta=json.loads(row[7]),
        n_chunks=row[8],
        chars=row[9],
        ingested_at=row[10],
    )


def fold(text: str | None) -> str:
    """Text as compared: NFC and case-folded (SQLite's own lower() folds ASCII only)."""
    return unicodedata.normalize("NFC", text or "").casefold()


def register(con: sqlite3.Connection) -> None:
    con.create_function(FOLD, 1, fold, deterministic=True)


def document_query_sql(query: DocumentQuery, columns: str) -> tuple[str, str, list[Any], list[Any]]:
    """(page statement, count statement, page arguments, count arguments) for the documents `query` matches."""
    where: list[str] = []
    args: list[Any] = []
    if query.text.strip():
        where.append(f"(instr({FOLD}(title), ?) > 0 OR instr({FOLD}(source), ?) > 0)")
        args.extend([fold(query.text.strip())] * 2)
    for key, value in query.tags.items():
        where.append("EXISTS (SELECT 1 FROM doc_tags t WHERE t.doc_id=documents.doc_id AND t.key=? AND t.value=?)")
        args.extend([key, value])
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    page = f"SELECT {columns} FROM documents{clause} ORDER BY ingested_at DESC, title, doc_id LIMIT ? OFFSET ?"
    limit = -1 if query.limit is None else query.limit
    return page, f"SELECT count(*) FROM documents{clause}", [*args, limit, query.offset], args
