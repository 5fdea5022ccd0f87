"""Long-term memory: facts a user states about themselves ("I work on product B", "我负责 Kestrel").

Kept per owner (an API key) in a store of their own, apart from every knowledge base: they are never
retrieved as evidence and never cited. When a question is asked, the owner's facts closest to it are
handed to the synthesizer as context about the user, and the trace shows which were used. A user can
list and delete them.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from agentrag.embed.base import Embedder
from agentrag.layout import Layout

# Statements about oneself, in English and Chinese. The whole sentence is kept as the fact.
_SELF_STATEMENT = re.compile(
    r"\b(i work (on|at|in|for)|i'm working on|i am working on|i'm on the|i am on the|i lead|i manage|i own|"
    r"i'm responsible for|i am responsible for|my team (is|owns|works)|i'm a|i am a|i use|we use)\b|"
    r"我(在|负责|管理|属于|是|用|们用|们团队|的团队)",
    re.I,
)
_QUESTIONISH = re.compile(r"[?？]\s*$|^\s*(what|which|who|how|why|when|where|is|are|do|does|can)\b", re.I)


class Fact(BaseModel):
    fact_id: str
    text: str
    created_at: float


def extract_facts(message: str) -> list[str]:
    """Sentences of a message that state something about the user (questions excluded)."""
    from agentrag.text.sentences import split_sentences

    return [
        s.strip()
        for s in split_sentences(message)
        if _SELF_STATEMENT.search(s) and not _QUESTIONISH.search(s) and 6 <= len(s) <= 300
    ]


class FactStore:
    """Facts with their vectors in the data directory's memory database (`Layout.memory_db`)."""

    def __init__(self, home: Path, embedder: Embedder) -> None:
        path = Layout(home).memory_db
        path.parent.mkdir(parents=True, exist_ok=True)
        self._con = sqlite3.connect(path, timeout=30.0, check_same_thread=False, isolation_level=None)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS facts(fact_id TEXT PRIMARY KEY, owner TEXT NOT NULL, text TEXT NOT NULL, "
            "vector BLOB NOT NULL, created_at REAL NOT NULL)"
        )
        self._con.execute("CREATE INDEX IF NOT EXISTS facts_owner ON facts(owner)")
        self._embedder = embedder
        self._lock = threading.Lock()

    def remember(self, owner: str, message: str) -> list[Fact]:
        """Store the self-statements of a message (a fact already known is not stored twice)."""
        known = {f.text for f in self.for_owner(owner)}
        added: list[Fact] = []
        for text in extract_facts(message):
            if text in known:
                continue
            vector = self._embedder.embed_passages([text])[0].astype(np.float32)
            fact = Fact(fact_id=secrets.token_hex(6), text=text, created_at=time.time())
            if self._insert_new(owner, fact, vector):
                added.append(fact)
        return added

    def _insert_new(self, owner: str, fact: Fact, vector: np.ndarray) -> bool:
        """Insert unless the owner has the fact already, checked inside one write transaction: another
        process remembering the same words at the same moment stores them once, not twice."""
        with self._lock:
            self._con.execute("BEGIN IMMEDIATE")
            try:
                known = self._con.execute(
                    "SELECT 1 FROM facts WHERE owner=? AND text=? LIMIT 1", (owner, fact.text)
                ).fetchone()
                if known is None:
                    self._con.execute(
                        "INSERT INTO facts VALUES(?,?,?,?,?)",
                        (fact.fact_id, owner, fact.text, vector.tobytes(), fact.created_at),
                    )
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
            self._con.execute("COMMIT")
        return known is None

    def for_owner(self, owner: str) -> list[Fact]:
        with self._lock:
            rows = self._con.execute(
                "SELECT fact_id, text, created_at FROM facts WHERE owner=? ORDER BY created_at", (owner,)
            ).fetchall()
        return [Fact(fact_id=r[0], text=r[1], created_at=r[2]) for r in rows]

    def has_facts(self, owner: str) -> bool:
        """Cheap check before embedding a question to look for relevant facts."""
        with self._lock:
            return self._con.execute("SELECT 1 FROM facts WHERE owner=? LIMIT 1", (owner,)).fetchone() is not None

    def delete(self, owner: str, fact_id: str) -> bool:
        with self._lock:
            cur = self._con.execute("DELETE FROM facts WHERE owner=? AND fact_id=?", (owner, fact_id))
        return cur.rowcount > 0

    def relevant(self, owner: str, query_vector: np.ndarray, k: int = 3, min_cosine: float = 0.8) -> list[Fact]:
        """The owner's facts closest to the question, above a similarity floor."""
        with self._lock:
            rows = self._con.execute(
                "SELECT fact_id, text, created_at, vector FROM facts WHERE owner=?", (owner,)
            ).fetchall()
        if not rows:
            return []
        matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        scores = matrix @ query_vector
        order = np.argsort(-scores)[:k]
        return [
            Fact(fact_id=rows[i][0], text=rows[i][1], created_at=rows[i][2])
            for i in order
            if float(scores[i]) >= min_cosine
        ]

    def close(self) -> None:
        self._con.close()
