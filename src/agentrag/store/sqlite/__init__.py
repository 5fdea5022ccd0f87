"""The embedded SQLite backend: `store` (the `Store` itself), `schema` (tables, version, migrations),
`filters` (`SearchFilter` as SQL) and `derived` (the dense and ANN indexes and FTS5 compaction)."""

from agentrag.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
