"""Connections to the database file, the write lock taken with bounded retries, and SQLite's errors on opening
turned into errors that say what to do."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentrag.errors import StoreBusyError, StoreError
from agentrag.settings import StoreSettings
from agentrag.store.sqlite import listing


def connect(path: Path, settings: StoreSettings, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection shared by the threads of one process (the store serialises them with its locks)."""
    con = sqlite3.connect(path, timeout=settings.busy_timeout_s, isolation_level=None, check_same_thread=False)
    try:
        listing.register(con)
        con.execute(f"PRAGMA busy_timeout={int(settings.busy_timeout_s * 1000)}")
        if read_only:
            con.execute("PRAGMA query_only=1")
        else:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.execute("PRAGMA foreign_keys=ON")
    except BaseException:
        con.close()
        raise
    return con


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY / SQLITE_LOCKED: another connection holds the lock; anything else is not worth a retry."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def begin_immediate(con: sqlite3.Connection, settings: StoreSettings, path: Path) -> None:
    """Take the write lock. Each attempt waits `busy_timeout_s` (SQLite's own busy handler); a lock still held
    is retried with a doubling pause, then reported as `StoreBusyError` rather than SQLite's bare error."""
    attempts = settings.lock_retries + 1
    started = time.monotonic()
    for attempt in range(attempts):
        try:
            con.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            if attempt + 1 < attempts:
                time.sleep(settings.lock_backoff_s * 2**attempt)
    raise StoreBusyError(
        f"{path}: the database is locked by another process (gave up after {attempts} attempts over "
        f"{time.monotonic() - started:.1f} s); try again when it has finished"
    )


def unreadable(exc: sqlite3.DatabaseError, path: Path) -> StoreError:
    """What opening the file failed on, as one line saying what to do."""
    if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
        return StoreBusyError(f"{path}: the database is locked by another process ({exc}); try again")
    if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
        return StoreError(f"{path}: cannot open the knowledge base's database ({exc}): check its permissions")
    return StoreError(
        f"{path}: the knowledge base's database is damaged ({exc}). Restore it from a backup, or delete the "
        f"folder {path.parent} and ingest again to re-create the knowledge base."
    )


class Writer:
    """The store's write transactions. Alone, each write is one transaction; inside `batch()` the whole batch is
    one transaction and each write a savepoint in it, so a failed document rolls back alone while the others
    share one COMMIT (a commit per document was a fifth of an ingest's time with a fast embedder).

    `defer` queues statements to run just before the transaction commits, in the order queued, consecutive ones
    of the same SQL as one `executemany`; a savepoint rolled back drops what it queued. FTS5 writes go this way:
    FTS5 flushes its pending terms to a new segment at every savepoint of a transaction it is in (and merges
    segments as they pile up), so its rows written at the end of a batch cost one flush, not one per document."""

    def __init__(self, con: sqlite3.Connection, lock: threading.RLock, settings: StoreSettings, path: Path) -> None:
        self._con = con
        self._lock = lock
        self._settings = settings
        self._path = path
        self._in_batch = False
        self._deferred: list[tuple[str, list[tuple[Any, ...]]]] | None = None

    def defer(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """Run `sql` over `rows` before the current transaction commits (the caller is inside `write()`)."""
        assert self._deferred is not None, "defer() outside a write transaction"
        if rows:
            self._deferred.append((sql, rows))

    def _run_deferred(self, deferred: list[tuple[str, list[tuple[Any, ...]]]]) -> None:
        i = 0
        while i < len(deferred):
            sql, rows = deferred[i][0], list(deferred[i][1])
            i += 1
            while i < len(deferred) and deferred[i][0] == sql:
                rows.extend(deferred[i][1])
                i += 1
            self._con.executemany(sql, rows)

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            outer = self._deferred
            mine: list[tuple[str, list[tuple[Any, ...]]]] = []
            self._deferred = mine
            try:
                if self._in_batch:  # only this thread can be here: it holds the lock for the whole batch
                    with self._savepoint():
                        yield self._con
                    assert outer is not None
                    outer.extend(mine)  # the savepoint is released: its statements go with the batch
                    return
                begin_immediate(self._con, self._settings, self._path)
                try:
                    yield self._con
                    self._run_deferred(mine)
                except BaseException:
                    self._con.execute("ROLLBACK")
                    raise
                self._con.execute("COMMIT")
            finally:
                self._deferred = outer

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        self._con.execute("SAVEPOINT write")
        try:
            yield
        except BaseException:
            self._con.execute("ROLLBACK TO write")
            self._con.execute("RELEASE write")
            raise
        self._con.execute("RELEASE write")

    @contextmanager
    def batch(self) -> Iterator[None]:
        with self._lock:
            if self._in_batch:
                yield
                return
            with self.write():
                self._in_batch = True
                try:
                    yield
                finally:
                    self._in_batch = False
