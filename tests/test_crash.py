"""A process killed in the middle of an ingest leaves a knowledge base that opens, answers, and holds every
document committed before the kill."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from tests.helpers import write

TOPICS = ["rivers", "mountains", "compilers", "databases", "violins", "glaciers", "satellites", "orchards"]


def test_kill_during_ingest_keeps_every_committed_document(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for i in range(80):
        topic = TOPICS[i % len(TOPICS)]
        write(
            docs / f"note-{i:03d}.md", f"# Note {i} on {topic}\n\nThis note number {i} discusses {topic} in depth. " * 3
        )
    home = tmp_path / "home"
    env = {**os.environ, "AGENTRAG_INGEST__EMBED_BATCH_SIZE": "2"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentrag.cli", "ingest", str(docs), "--home", str(home), "-v"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    committed: list[str] = []
    deadline = time.monotonic() + 120
    while len(committed) < 6 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("added"):
            committed.append(line.split()[1])
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert len(committed) >= 6, proc.stderr.read() if proc.stderr else ""

    db = home / "kbs" / "default" / "store.sqlite"
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    n_docs, n_chunks, n_vectors, n_fts = (
        con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("documents", "chunks", "vectors", "chunks_fts")
    )
    con.close()
    assert n_docs < 80, "the kill landed after the ingest finished; the test proves nothing"
    assert n_chunks == n_vectors == n_fts, "no half-written document"

    kb = KnowledgeBase.open("default", settings=load_settings(home), create=False)
    stored = {d.source for d in kb.documents()}
    assert {str(Path(p).resolve()) for p in committed} <= stored
    for doc in kb.documents():
        assert len(kb.document(doc.doc_id)[1]) == doc.n_chunks
    assert kb.search("glaciers", k=3)
    report = kb.ingest([docs])
    assert report.added + report.unchanged == 80
    assert report.unchanged == len(stored)
    kb.close()
