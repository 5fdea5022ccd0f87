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
from agentrag.types import SearchFilter
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


def _note(i: int) -> str:
    """A note of a few chunks, each carrying the note's own marker word, so every chunk can be looked up."""
    topic = TOPICS[i % len(TOPICS)]
    paragraphs = [
        f"Marker zq{i}x, part {j}: this paragraph of note {i} is about {topic}, and it goes on for a while "
        f"so that the note splits into several chunks; {topic} are discussed from angle {j} of many. "
        for j in range(5)
    ]
    return f"# Note {i} on {topic}\n\n" + "\n\n".join(paragraphs)


def _assert_whole(home: Path) -> int:
    """The knowledge base opens, its tables agree, and every stored document is whole and searchable."""
    db = home / "kbs" / "default" / "store.sqlite"
    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    if con.execute("SELECT 1 FROM sqlite_master WHERE name='chunks'").fetchone() is None:
        # Killed while the new file's schema was being made (it commits as one transaction): nothing was stored,
        # and the next open makes the schema.
        con.close()
        with KnowledgeBase.open("default", settings=load_settings(home), create=False) as kb:
            assert kb.documents() == []
        return 0
    counts = [con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("chunks", "vectors", "chunks_fts")]
    con.close()
    assert len(set(counts)) == 1, f"chunks, vectors and BM25 rows disagree: {counts}"
    with KnowledgeBase.open("default", settings=load_settings(home), create=False) as kb:
        documents = kb.documents()
        for doc in documents:
            marker = f"zq{Path(doc.source).stem.removeprefix('note-').lstrip('0') or '0'}x"
            hits = kb.search(marker, k=50, channel="bm25", flt=SearchFilter(doc_ids=[doc.doc_id]))
            assert doc.n_chunks > 1
            assert len(hits) == doc.n_chunks == len(kb.document(doc.doc_id)[1]), doc.source
        return len(documents)


def test_kill_at_several_moments_leaves_whole_documents_and_a_rerun_completes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    n_docs = 16
    for i in range(n_docs):
        write(docs / f"note-{i:03d}.md", _note(i))
    home = tmp_path / "home"
    env = {**os.environ, "AGENTRAG_INGEST__EMBED_BATCH_SIZE": "3"}
    command = [sys.executable, "-m", "agentrag.cli", "ingest", str(docs), "--home", str(home), "-v", "--sync"]
    stored = 0
    # Kill before anything is stored (while starting up), then after a few more documents each time.
    for round_number, stored_lines in enumerate((0, 2, 5)):
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        assert proc.stdout is not None
        seen = 0
        deadline = time.monotonic() + 60
        while seen < stored_lines and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen += line.startswith("added")
        if stored_lines == 0:
            time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        now = _assert_whole(home)
        assert now >= stored, f"round {round_number}: committed documents were lost"
        stored = now
    assert stored < n_docs, "every round finished before its kill; the test proves nothing"

    with KnowledgeBase.open("default", settings=load_settings(home), create=False) as kb:
        report = kb.ingest([docs], sync=True)
        assert (report.added + report.unchanged, report.unchanged, report.failed) == (n_docs, stored, 0)
        assert report.deleted == 0
    assert _assert_whole(home) == n_docs


def test_a_store_killed_while_its_schema_was_made_opens_empty_and_takes_an_ingest(tmp_path: Path) -> None:
    """A kill on the first ingest, after SQLite made the file and switched it to WAL but before the schema's
    transaction committed, leaves a file with no tables: it opens as an empty knowledge base, and an ingest fills it."""
    home = tmp_path / "home"
    db = home / "kbs" / "default" / "store.sqlite"
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.close()
    write(tmp_path / "docs" / "note-007.md", _note(7))
    with KnowledgeBase.open("default", settings=load_settings(home), create=False) as kb:
        assert kb.documents() == []
        report = kb.ingest([tmp_path / "docs"])
        assert (report.added, report.failed) == (1, 0)
    assert _assert_whole(home) == 1
