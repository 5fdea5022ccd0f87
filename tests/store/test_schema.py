"""The schema version a store records is checked on open: the same goes on, an older one is migrated, a newer
one is refused."""

import sqlite3
from pathlib import Path

import pytest

from agentrag.errors import StoreError
from agentrag.store.sqlite import SQLiteStore, schema


def stored_version(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return str(con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
    finally:
        con.close()


def write_version(path: Path, version: int) -> None:
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(version),))
    con.close()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "kb" / "store.sqlite"
    SQLiteStore(path).close()
    return path


def test_a_new_store_records_the_current_version(path: Path) -> None:
    assert stored_version(path) == str(schema.SCHEMA_VERSION)


def test_a_store_written_by_a_newer_agentrag_is_refused(path: Path) -> None:
    write_version(path, schema.SCHEMA_VERSION + 1)
    with pytest.raises(StoreError, match="newer agentrag") as caught:
        SQLiteStore(path)
    assert str(path) in str(caught.value)
    assert stored_version(path) == str(schema.SCHEMA_VERSION + 1), "the refused file is left as it was"


def test_an_older_store_is_migrated_once(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    older = schema.SCHEMA_VERSION - 1
    ran: list[int] = []

    def add_notes(con: sqlite3.Connection) -> None:
        ran.append(older)
        con.execute("CREATE TABLE notes(text TEXT)")

    monkeypatch.setattr(schema, "MIGRATIONS", {older: add_notes})
    write_version(path, older)
    SQLiteStore(path).close()
    assert ran == [older]
    assert stored_version(path) == str(schema.SCHEMA_VERSION)
    con = sqlite3.connect(path)
    assert con.execute("SELECT name FROM sqlite_master WHERE name='notes'").fetchone() is not None
    con.close()
    SQLiteStore(path).close()
    assert ran == [older], "an up-to-date store is not migrated again"


def test_a_failed_migration_leaves_the_store_unchanged(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    older = schema.SCHEMA_VERSION - 1

    def broken(con: sqlite3.Connection) -> None:
        con.execute("CREATE TABLE notes(text TEXT)")
        raise RuntimeError("migration failed")

    monkeypatch.setattr(schema, "MIGRATIONS", {older: broken})
    write_version(path, older)
    with pytest.raises(RuntimeError, match="migration failed"):
        SQLiteStore(path)
    assert stored_version(path) == str(older)
    con = sqlite3.connect(path)
    assert con.execute("SELECT name FROM sqlite_master WHERE name='notes'").fetchone() is None
    con.close()


def test_an_older_store_without_a_migration_is_a_clear_error(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema, "MIGRATIONS", {})
    write_version(path, schema.SCHEMA_VERSION - 1)
    with pytest.raises(StoreError, match="no migration") as caught:
        SQLiteStore(path)
    assert str(path) in str(caught.value)


def test_the_current_version_opens_without_migrating(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[int] = []
    monkeypatch.setattr(schema, "MIGRATIONS", {v: lambda con, v=v: ran.append(v) for v in range(-5, 10)})
    store = SQLiteStore(path)
    assert store.generation == 0
    store.close()
    assert ran == []
    assert stored_version(path) == str(schema.SCHEMA_VERSION)
