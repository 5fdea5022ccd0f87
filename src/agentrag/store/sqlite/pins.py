"""The generation one search holds: read once at its start (`SearchGeneration.searching`), then reused by its
steps (the dense and BM25 indexes, the chunks), where each step read it again before (a SQLite round trip
each, five per hybrid search).

A write committed meanwhile, here or in another process, is seen by the next search, as one committed just after
this search would be. A step whose index is not at the held generation reads the database's, so a search never
takes an index back to the older generation it started at when another thread has moved it on.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from agentrag.store.sqlite.schema import read_generation


class SearchGeneration:
    """Per thread: the generation of the search running in it, if any."""

    def __init__(self, read: Callable[[], int]) -> None:
        self._read = read  # the database's generation (the store's `generation`)
        self._held = threading.local()

    @contextmanager
    def searching(self) -> Iterator[int]:
        held = getattr(self._held, "generation", None)
        if held is not None:  # nested: the outer search's
            yield held
            return
        generation = self._read()
        self._held.generation = generation
        try:
            yield generation
        finally:
            self._held.generation = None

    def current(self, con: sqlite3.Connection, have: int) -> int:
        """The generation for an index (or memory) at `have` to be brought to: `have` itself when this thread's
        search holds that one (no round trip), else the database's, read on `con`."""
        held = getattr(self._held, "generation", None)
        return have if held is not None and held == have else read_generation(con)
