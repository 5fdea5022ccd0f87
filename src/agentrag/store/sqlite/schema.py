"""The database's tables, the schema version it records, and the migrations that bring an older file up to it.

Opening a store runs `prepare` inside its first write transaction: a new file gets the tables and the current
version; a file at the current version goes on unchanged; an older one is migrated step by step (version N to
N+1, each step registered in `MIGRATIONS`) in that same transaction, so a failed migration leaves the file as
it was; a file written by a newer agentrag is refused, never half-understood.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from agentrag.errors import StoreError

SCHEMA_VERSION = 2


def _add_page_breaks(con: sqlite3.Connection) -> None:
    """Version 2: where each later page begins inside a chunk (JSON), so a quote is cited with its own page.
    Chunks stored before have none and are cited with their first page until their file is ingested again."""
    con.execute("ALTER TABLE chunks ADD COLUMN page_breaks TEXT")


# MIGRATIONS[n] turns a version-n database into a version-(n+1) one.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _add_page_breaks}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents(
    doc_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    title TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    pipeline TEXT NOT NULL,
    mtime REAL,
    date TEXT,
    tags TEXT NOT NULL DEFAULT '{}',
    meta TEXT NOT NULL DEFAULT '{}',
    n_chunks INTEGER NOT NULL,
    chars INTEGER NOT NULL,
    ingested_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_source ON documents(source);
CREATE INDEX IF NOT EXISTS documents_date ON documents(date);
CREATE TABLE IF NOT EXISTS doc_tags(
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (doc_id, key)
);
CREATE INDEX IF NOT EXISTS doc_tags_kv ON doc_tags(key, value);
CREATE TABLE IF NOT EXISTS chunks(
    key INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    text TEXT NOT NULL,
    heading TEXT NOT NULL,
    page INTEGER,
    page_breaks TEXT,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    fingerprint TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS vectors(
    key INTEGER PRIMARY KEY REFERENCES chunks(key) ON DELETE CASCADE,
    vector BLOB NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(title, body, tokenize='ascii');
CREATE TABLE IF NOT EXISTS chunk_log(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    generation INTEGER NOT NULL,
    key INTEGER NOT NULL,
    added INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunk_log_generation ON chunk_log(generation);
"""


def read_meta(con: sqlite3.Connection, key: str) -> str | None:
    row = con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def read_generation(con: sqlite3.Connection) -> int:
    return int(read_meta(con, "generation") or 0)


def count_chunks(con: sqlite3.Connection, delta: int) -> None:
    """Keep `meta.chunks` in step with the chunks table, inside the caller's write (after its rows changed), so
    nothing runs COUNT(*) when the generation moves. A file from before the count gets it on its first write."""
    if (
        delta
        and con.execute("UPDATE meta SET value=CAST(value AS INTEGER) + ? WHERE key='chunks'", (delta,)).rowcount == 0
    ):
        con.execute("INSERT INTO meta VALUES('chunks', (SELECT COUNT(*) FROM chunks))")


def read_chunk_count(con: sqlite3.Connection) -> int:
    value = read_meta(con, "chunks")
    if value is None:  # not written since the count was introduced
        return int(con.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
    return int(value)


def needs_prepare(con: sqlite3.Connection, path: Path) -> bool:
    """False for a file already at this version: opening it then needs no write (and no write lock)."""
    return _stored_version(con, path) != SCHEMA_VERSION


def prepare(con: sqlite3.Connection, path: Path) -> None:
    """Create, check or migrate the schema; the caller holds a write transaction on `con`."""
    stored = _stored_version(con, path)
    if stored is not None and stored > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: this knowledge base was written by a newer agentrag (schema version {stored}; this one "
            f"knows up to {SCHEMA_VERSION}). Upgrade agentrag to open it."
        )
    if stored is not None and stored < SCHEMA_VERSION:
        _migrate(con, path, stored)
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            con.execute(statement)
    con.execute("INSERT OR IGNORE INTO meta VALUES('schema_version', ?)", (str(SCHEMA_VERSION),))
    con.execute("INSERT OR IGNORE INTO meta VALUES('generation', '0')")
    con.execute("INSERT OR IGNORE INTO meta VALUES('chunks', (SELECT COUNT(*) FROM chunks))")
    con.execute("INSERT OR IGNORE INTO meta VALUES('created_at', ?)", (str(time.time()),))


def _stored_version(con: sqlite3.Connection, path: Path) -> int | None:
    """The version recorded in the file, or None for a new one."""
    if con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone() is None:
        return None
    value = read_meta(con, "schema_version")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise StoreError(f"{path}: unreadable schema version {value!r}; the file is damaged") from None


def _migrate(con: sqlite3.Connection, path: Path, stored: int) -> None:
    for version in range(stored, SCHEMA_VERSION):
        step = MIGRATIONS.get(version)
        if step is None:
            raise StoreError(
                f"{path}: schema version {stored} cannot be upgraded to {SCHEMA_VERSION} "
                f"(no migration from version {version})"
            )
        step(con)
    con.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
