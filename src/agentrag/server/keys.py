"""API keys: created once, shown once, stored only as hashes, each limited to its knowledge bases.

A key is `ar_` + 32 random bytes (URL-safe base64). Only its SHA-256 is stored: the keys are long and
random, so a fast hash is enough, and a stolen database reveals no usable key. An admin key sees every
knowledge base and creates any; any other key sees and creates only the ones it was issued for.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from agentrag.kb import resolve_kb
from agentrag.layout import Layout

KEY_PREFIX = "ar_"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys(
    key_id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    kbs TEXT NOT NULL DEFAULT '[]',
    admin INTEGER NOT NULL DEFAULT 0,
    label TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class ApiKey:
    key_id: str
    kbs: frozenset[str] = field(default_factory=frozenset)
    admin: bool = False
    label: str = ""

    def can_use(self, kb: str) -> bool:
        return self.admin or kb in self.kbs


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class KeyStore:
    """Keys in the data directory's key database (`Layout.keys_db`); safe to share between the server's threads.

    Usable as a context manager, which closes it.
    """

    def __init__(self, home: Path) -> None:
        path = Layout(home).keys_db
        path.parent.mkdir(parents=True, exist_ok=True)
        self._con = sqlite3.connect(path, timeout=30.0, check_same_thread=False, isolation_level=None)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute(_SCHEMA)
        self._lock = threading.Lock()
        self._home = home

    def create(self, kbs: list[str] | None = None, admin: bool = False, label: str = "") -> tuple[ApiKey, str]:
        """A new key; the secret is returned here and never again. `kbs` are ids or display names, kept as the
        ids they stand for (the id a display name will get, for a knowledge base not created yet)."""
        names = sorted({resolve_kb(self._home, k) for k in kbs or []})
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        key = ApiKey(key_id=secrets.token_hex(6), kbs=frozenset(names), admin=admin, label=label)
        with self._lock:
            self._con.execute(
                "INSERT INTO api_keys VALUES(?,?,?,?,?,?)",
                (key.key_id, _hash(secret), json.dumps(names), int(admin), label, time.time()),
            )
        return key, secret

    def authenticate(self, secret: str) -> ApiKey | None:
        if not secret.startswith(KEY_PREFIX):
            return None
        with self._lock:
            row = self._con.execute(
                "SELECT key_id, kbs, admin, label FROM api_keys WHERE key_hash=?", (_hash(secret),)
            ).fetchone()
        if row is None:
            return None
        return ApiKey(key_id=row[0], kbs=frozenset(json.loads(row[1])), admin=bool(row[2]), label=row[3])

    def revoke_kb(self, kb: str) -> None:
        """Forget a deleted knowledge base in every key, so a new one of the same name starts private."""
        with self._lock:
            # One write transaction: another process revoking another knowledge base at the same moment
            # must not write back a list read before this change (and so give the deleted one back).
            self._con.execute("BEGIN IMMEDIATE")
            try:
                for key_id, raw in self._con.execute("SELECT key_id, kbs FROM api_keys").fetchall():
                    kbs = [k for k in json.loads(raw) if k != kb]
                    self._con.execute("UPDATE api_keys SET kbs=? WHERE key_id=?", (json.dumps(kbs), key_id))
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
            self._con.execute("COMMIT")

    def list(self) -> list[tuple[ApiKey, float]]:
        """Every key (never its secret) with its creation time, oldest first."""
        with self._lock:
            rows = self._con.execute(
                "SELECT key_id, kbs, admin, label, created_at FROM api_keys ORDER BY created_at"
            ).fetchall()
        return [
            (ApiKey(key_id=r[0], kbs=frozenset(json.loads(r[1])), admin=bool(r[2]), label=r[3]), float(r[4]))
            for r in rows
        ]

    def revoke(self, key_id: str) -> bool:
        """Delete a key; requests made with it get 401 from then on. False if there was no such key."""
        with self._lock:
            cur = self._con.execute("DELETE FROM api_keys WHERE key_id=?", (key_id,))
        return cur.rowcount > 0

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> KeyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
