"""Chunk fingerprints kept in memory between searches: de-duplication asks for those of 50-150 candidates on
every hybrid search, and a round trip for them cost about as much as the BM25 channel (0.3 ms at 10k chunks).

A key's fingerprint never changes while the key exists (keys are never reused; moving a document keeps its
chunks' rows), so the only stale entry is a deleted key's: the memory is emptied whenever the generation moves.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from agentrag.store.sqlite.schema import read_generation

_MAX = 200_000  # entries (about 30 MB); past it the memory starts again empty


class Fingerprints:
    """Callers hold the store's lock (the connection is the store's)."""

    def __init__(
        self, con: sqlite3.Connection, generation: Callable[[sqlite3.Connection, int], int] | None = None
    ) -> None:
        self._con = con
        self._generation_of = generation or (lambda con, have: read_generation(con))  # see `SQLiteStore._generation`
        self._known: dict[int, str] = {}
        self._generation = -1

    def get(self, keys: list[int]) -> dict[int, str]:
        generation = self._generation_of(self._con, self._generation)
        if generation != self._generation:
            self._known.clear()
            self._generation = generation
        known = self._known
        missing = [key for key in keys if key not in known]
        if missing:
            if len(known) + len(missing) > _MAX:
                known.clear()
            for start in range(0, len(missing), 900):  # under SQLite's bound-parameter limit
                part = missing[start : start + 900]
                rows = self._con.execute(
                    f"SELECT key, fingerprint FROM chunks WHERE key IN ({','.join('?' * len(part))})", part
                ).fetchall()
                known.update((int(k), str(f)) for k, f in rows)
        return {key: known[key] for key in keys if key in known}
