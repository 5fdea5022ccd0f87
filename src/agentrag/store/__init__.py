"""Storage backends behind the `Store` protocol: the embedded SQLite store (default) and Milvus, built by
`make_store`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrag.store.base import Store, make_store

if TYPE_CHECKING:
    from agentrag.store.milvus import MilvusStore
    from agentrag.store.sqlite import SQLiteStore

__all__ = ["MilvusStore", "SQLiteStore", "Store", "make_store"]


def __getattr__(name: str) -> object:
    # A backend loads when it is used (`make_store`, or `from agentrag.store import SQLiteStore`), not with the package.
    if name == "SQLiteStore":
        from agentrag.store.sqlite import SQLiteStore

        return SQLiteStore
    if name == "MilvusStore":
        from agentrag.store.milvus import MilvusStore

        return MilvusStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
