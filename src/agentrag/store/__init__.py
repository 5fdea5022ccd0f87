"""Storage backends behind the `Store` protocol: the embedded SQLite store (default)."""

from agentrag.store.base import Store
from agentrag.store.sqlite import SQLiteStore

__all__ = ["SQLiteStore", "Store"]
