"""Ingest on worker processes (`[ingest] workers`): the same knowledge base as in-process, row for row; one bad
file still fails alone; an interrupted ingest stops its workers and leaves the store consistent; a small
ingest starts no process."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentrag.errors import ConfigError
from agentrag.ingest.analyse import Analysis, Failure
from agentrag.ingest.files import document_id_for_path
from agentrag.ingest.workers import Analyser
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from agentrag.types import IngestStatus
from tests.helpers import write
from tests.ingest.test_limits import docx_bomb

EN = (
    "The Kestrel queue was moved to the storage team on March 3, 2024. It restarts nightly at two. "
    "Operators page the on-call engineer when the backlog passes ten thousand messages. "
)
ZH = (
    "值班记录：2025年3月14日，存储组负责 Kestrel 的重启。超过一万条消息时需要通知值班工程师。"
    "中华人民共和国的节假日除外。"
)


class HashEmbedder:
    """A vector per text from a hash of it: the stored vectors depend on the texts alone, so two ingests of the
    same files can be compared byte for byte (the model is the edge here, not what is tested)."""

    name, dim = "test/hash-32", 32

    def embed_passages(self, texts: list[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        out = np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(32) for t in texts])
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)

    embed_queries = embed_passages


def corpus(root: Path) -> Path:
    """Markdown with headings in both languages, a GBK text file, HTML, a corpus file of 150 records (several
    jobs, some records long enough for several chunks), a PDF that is not one, and a Word file over a limit."""
    write(root / "policy.md", "# 报销制度\n\n## 差旅标准\n\n" + ZH * 3 + "\n\n## 餐费\n\n" + ZH + "\n")
    write(root / "aurora.md", "# Aurora API\n\n## Errors\n\n" + EN * 8 + "\n\n### Quotas\n\n" + EN + "\n")
    write(root / "notes.txt", ZH * 2, encoding="gbk")
    write(
        root / "page.html", f"<html><head><title>Runbook</title></head><body><h1>Runbook</h1><p>{EN}</p></body></html>"
    )
    records = [
        {"_id": f"r{i}", "title": f"Record {i} 记录", "text": (EN if i % 2 else ZH) * (1 + i % 7) + f" Number {i}."}
        for i in range(150)
    ]
    write(root / "corpus.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n")
    write(root / "broken.pdf", "%PDF-1.4 this is not really a PDF\n")
    docx_bomb(root / "bomb.docx", 3000)
    return root


def open_kb(home: Path, **ingest: Any) -> KnowledgeBase:
    settings = load_settings(home, ingest={"limits": {"max_paragraphs": 1000}, **ingest})
    return KnowledgeBase.open("w", settings=settings, embedder=HashEmbedder())


def dump(kb: KnowledgeBase) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored row that ingest writes, in key order (ingest times aside)."""
    con = sqlite3.connect(kb.store.path)
    columns = [r[1] for r in con.execute("PRAGMA table_info(documents)") if r[1] != "ingested_at"]
    tables = {
        "documents": f"SELECT {', '.join(columns)} FROM documents ORDER BY doc_id",
        "chunks": "SELECT * FROM chunks ORDER BY key",
        "vectors": "SELECT * FROM vectors ORDER BY key",
        "fts": "SELECT rowid, title, body FROM chunks_fts ORDER BY rowid",
        "tags": "SELECT * FROM doc_tags ORDER BY doc_id, key",
    }
    out = {name: con.execute(sql).fetchall() for name, sql in tables.items()}
    con.close()
    return out


def lines(statuses: list[IngestStatus]) -> list[tuple[Any, ...]]:
    return sorted((s.path, s.doc_id or "", s.status, s.error or "", s.limit or "", s.chunks) for s in statuses)


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_a_pooled_ingest_stores_what_an_in_process_one_does_row_for_row(tmp_path: Path, start: str) -> None:
    docs = corpus(tmp_path / "docs")
    results = {}
    pooled_settings = {"workers": 2, "parallel_min_kb": 0, "worker_start": start}
    for name, ingest in {"inline": {"workers": 1}, "pooled": pooled_settings}.items():
        seen: list[IngestStatus] = []
        children: list[int] = []

        def progress(item: IngestStatus, seen: list[IngestStatus] = seen, children: list[int] = children) -> None:
            seen.append(item)
            children.append(len(multiprocessing.active_children()))

        with open_kb(tmp_path / name, **ingest) as kb:
            report = kb.ingest([docs], tags={"team": "ops"}, progress=progress)
            results[name] = (dump(kb), lines(seen), report.added, report.failed, report.chunks, max(children))
    inline, pooled = results["inline"], results["pooled"]
    assert inline[5] == 0
    assert pooled[5] == 2  # the pooled ingest did run on two worker processes
    assert pooled[:5] == inline[:5]
    rows, statuses, added, failed, chunks = pooled[:5]
    assert (added, failed) == (154, 2)
    assert len(rows["chunks"]) == len(rows["vectors"]) == len(rows["fts"]) == chunks > 154
    assert any("中华人民共和国" in body.replace(" ", "") or "共和国" in body for _, _, body in rows["fts"])
    failures = {Path(s[0]).name: (s[3], s[4]) for s in statuses if s[2] == "failed"}
    assert failures["bomb.docx"] == (
        "too many paragraphs: over 1,000 (setting ingest.limits.max_paragraphs)",
        "ingest.limits.max_paragraphs",
    )
    assert failures["broken.pdf"][0]
    assert not multiprocessing.active_children()  # the workers are gone with the ingest


def test_a_file_that_fails_on_worker_processes_keeps_what_was_stored(tmp_path: Path) -> None:
    docs = corpus(tmp_path / "docs")
    with open_kb(tmp_path / "home", workers=2, parallel_min_kb=0) as kb:
        kb.ingest([docs])
        before = kb.store.get_document_chunks(document_id_for_path(docs / "aurora.md"))
        docx_bomb(docs / "aurora.docx", 10)  # a new good file beside a now-broken old one
        (docs / "aurora.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)  # not text now
        report = kb.ingest([docs])
        after = kb.store.get_document_chunks(document_id_for_path(docs / "aurora.md"))
    failed = {Path(s.path).name for s in report.items if s.status == "failed"}
    assert "aurora.md" in failed
    assert report.added == 1
    assert before
    assert [c.text for c in after] == [c.text for c in before]


def test_ctrl_c_during_a_pooled_ingest_stops_the_workers_and_leaves_the_store_consistent(tmp_path: Path) -> None:
    docs = corpus(tmp_path / "docs")
    calls = 0

    def interrupt(item: IngestStatus) -> None:
        nonlocal calls
        calls += 1
        if calls == 40:
            raise KeyboardInterrupt

    with open_kb(tmp_path / "home", workers=2, parallel_min_kb=0) as kb:
        with pytest.raises(KeyboardInterrupt):
            kb.ingest([docs], progress=interrupt)
        assert not multiprocessing.active_children()
        rows = dump(kb)
        stored = {r[0]: r for r in rows["documents"]}
        assert 0 < len(stored) < 154
        chunk_docs = [r[2] for r in rows["chunks"]]
        assert len(rows["chunks"]) == len(rows["vectors"]) == len(rows["fts"])
        assert set(chunk_docs) == set(stored)  # no chunk without its document, no document without chunks
        report = kb.ingest([docs])  # the next run stores the rest
        assert (report.added + report.unchanged, report.failed) == (154, 2)
        assert len(dump(kb)["documents"]) == 154


def test_a_small_ingest_starts_no_worker_process(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "a.md", "# A\n\n" + EN)
    children: list[int] = []
    with open_kb(tmp_path / "home", workers=4) as kb:  # parallel_min_kb: the default, far above this
        report = kb.ingest(
            [tmp_path / "docs"], progress=lambda _: children.append(len(multiprocessing.active_children()))
        )
    assert report.added == 1
    assert children == [0]


def _record_job(value: int, parent: int) -> list[Analysis | Failure]:
    if value == 3 and os.getpid() != parent:
        os._exit(1)  # a worker killed mid-job (out of memory, a parser's crash)
    return [Failure(f"job {value} in {'a worker' if os.getpid() != parent else 'the parent'}")]


def test_when_a_worker_dies_the_queued_jobs_are_done_here_in_order() -> None:
    analyser: Analyser[int] = Analyser(2)
    try:
        for value in range(8):
            analyser.submit(value, _record_job, value, os.getpid())
        done = list(analyser.drain())
    finally:
        analyser.close()
    assert [context for context, _ in done] == list(range(8))
    reasons = [result[0].reason for _, result in done if isinstance(result[0], Failure)]
    assert reasons[3] == "job 3 in the parent"
    assert all(r.startswith(f"job {i} ") for i, r in enumerate(reasons))


def _stubborn_job(marker: str) -> list[Analysis | Failure]:
    """A job in a worker that does not act on SIGTERM at once (stands in for one that a busy machine has not
    scheduled yet) and would run for a minute."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    Path(marker, str(os.getpid())).touch()
    time.sleep(60)
    return [Failure("finished")]


def test_closing_an_interrupted_analyser_leaves_no_worker_alive_even_one_that_ignores_sigterm(
    tmp_path: Path,
) -> None:
    analyser: Analyser[int] = Analyser(2)
    for value in range(6):
        analyser.submit(value, _stubborn_job, str(tmp_path))
    deadline = time.monotonic() + 30
    while len(list(tmp_path.iterdir())) < 2 and time.monotonic() < deadline:  # both workers are in the job
        time.sleep(0.05)
    analyser.close()
    assert not multiprocessing.active_children()


def test_an_analyser_interrupted_again_and_again_never_leaves_a_worker_behind() -> None:
    for round_ in range(40):
        analyser: Analyser[int] = Analyser(2)
        for value in range(round_ % 10 + 1):  # interrupted with 1 to 10 jobs queued, some started, some not
            analyser.submit(value, _record_job, -1, os.getpid())
        analyser.close()
        assert not multiprocessing.active_children(), f"round {round_}"


def test_ingest_workers_settings_are_checked() -> None:
    with pytest.raises((ConfigError, ValueError), match="workers"):
        load_settings(None, ingest={"workers": -1})
    with pytest.raises((ConfigError, ValueError), match="worker_start"):
        load_settings(None, ingest={"worker_start": "clone"})


def test_by_default_a_busy_machine_ingests_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = corpus(tmp_path / "docs")
    cores = os.cpu_count() or 1
    for load, expected in ((float(cores), 0), (0.0, cores if cores > 1 else 0)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        children: list[int] = []
        with open_kb(tmp_path / f"home-{load}", parallel_min_kb=0) as kb:  # workers: the default
            kb.ingest(
                [docs], progress=lambda _, children=children: children.append(len(multiprocessing.active_children()))
            )
        assert max(children) == expected
