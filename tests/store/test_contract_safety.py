"""The store contract under failure and concurrency, for every backend: a process killed mid-ingest, a reader
searching while a writer replaces a document."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from agentrag.store.base import Store
from agentrag.text.tokenize import tokenize
from tests.milvus_engine import REPO
from tests.store.conftest import DIM, Opener
from tests.store.test_sqlite import put


def _writer(open_store: Opener, tmp_path: Path, die_in: str = "") -> subprocess.Popen[str]:
    store = open_store()  # settles the settings (prefix, URI) this test's knowledge base uses
    settings = store._settings  # type: ignore[attr-defined]
    store.close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store.crash_writer", str(tmp_path / "kb"), settings.model_dump_json()]
        + (["--die-in", die_in] if die_in else []),
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def _check_complete(store: Store, committed: list[str]) -> None:
    docs = {d.doc_id for d in store.list_documents()}
    assert set(committed) <= docs, "every document committed before the kill is there"
    for doc_id in docs:
        assert [c.position for c in store.get_document_chunks(doc_id)] == [0, 1, 2], f"{doc_id} is whole"
    assert store.stats().chunks == 3 * len(docs), "no chunk of an unfinished write is left"
    hits = store.search_bm25(tokenize("crash test"), 1000)
    assert {c.doc_id for c in store.get_chunks([k for k, _ in hits])} == docs


def test_a_process_killed_mid_ingest_leaves_every_committed_document(open_store: Opener, tmp_path: Path) -> None:
    proc = _writer(open_store, tmp_path)
    assert proc.stdout is not None
    committed = [proc.stdout.readline().strip() for _ in range(5)]
    proc.send_signal(signal.SIGKILL)  # somewhere inside the sixth document's write, or just after it
    proc.wait()
    committed += [line.strip() for line in proc.stdout if line.strip()]
    reopened = open_store()
    reopened.bind_embedder("test-model", DIM)
    _check_complete(reopened, committed)
    put(reopened, "after", ["crash test again"])  # type: ignore[arg-type]
    assert reopened.get_document("after") is not None


def test_a_kill_between_the_chunks_and_the_commit_point_is_cleaned_up(open_store: Opener, tmp_path: Path) -> None:
    """Milvus: the chunks of d3 are written, the process dies before d3's registry row. SQLite: one transaction,
    the hook is not reached and the writer runs on; the reopened store is checked the same way."""
    if open_store.backend == "sqlite":  # type: ignore[attr-defined]
        return  # one transaction per document: nothing between the chunks and the commit to kill in
    proc = _writer(open_store, tmp_path, die_in="d3")
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    committed = out.split()
    assert committed == ["d0", "d1", "d2"]
    reopened = open_store()
    reopened.bind_embedder("test-model", DIM)
    assert reopened.get_document("d3") is None
    _check_complete(reopened, committed)


def test_a_reader_never_sees_half_a_replaced_document(open_store: Opener) -> None:
    writer, reader = open_store(), open_store()
    writer.bind_embedder("test-model", DIM)
    reader.bind_embedder("test-model", DIM)
    versions = {
        "old": ["marker old one", "marker old two", "marker old three"],
        "new": ["marker new a", "marker new b"],
    }
    put(writer, "a", versions["old"])  # type: ignore[arg-type]
    put(writer, "other", ["unrelated text"], seed=9)  # type: ignore[arg-type]
    stop = threading.Event()
    seen: list[tuple[str, ...]] = []

    def write() -> None:
        # At least 12 replaces, and on until the reader has looked often enough (a busy machine schedules it less).
        i = 0
        while i < 12 or (len([s for s in seen if s]) <= 3 and i < 400):
            put(writer, "a", versions["new" if i % 2 == 0 else "old"], seed=i)  # type: ignore[arg-type]
            i += 1
        stop.set()

    thread = threading.Thread(target=write)
    thread.start()
    while not stop.is_set():
        hits = reader.search_bm25(["marker"], 10)
        texts = tuple(sorted(c.text for c in reader.get_chunks([k for k, _ in hits])))
        seen.append(texts)
        # () when the writer replaced the document between the search and the lookup (its keys are gone).
        assert texts in {(), *(tuple(sorted(v)) for v in versions.values())}, f"a mixed or partial document: {texts}"
    thread.join()
    assert len([s for s in seen if s]) > 3
