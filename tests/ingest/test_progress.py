"""Ingest progress as the public API reports it: chunks as they are embedded (within a large document too,
not only when it is stored), the current file, and every file a folder holds that is not ingested."""

from __future__ import annotations

from pathlib import Path

from agentrag.embed.base import Embedder
from agentrag.ingest.pipeline import ChunkProgress
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from agentrag.types import IngestStatus
from tests.helpers import write


def folder(root: Path) -> Path:
    long = "\n\n".join(f"## Part {i}\n\nSection {i} of the handbook explains step {i} in detail." for i in range(30))
    write(root / "handbook.md", f"# Handbook\n\n{long}\n")
    write(root / "faq.md", "# FAQ\n\nError E1042 means the quota is exhausted.\n")
    write(root / "books" / "novel.epub", "PK not really a book")
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    write(root / "README", "a suffix-less readme")
    write(root / ".hidden.md", "# hidden\n\nnot ingested and not reported\n")
    return root


def test_chunk_progress_and_skipped_files_through_the_public_api(tmp_path: Path, embedder: Embedder) -> None:
    settings = load_settings(
        tmp_path / "home", ingest={"embed_batch_size": 4, "chunking": {"chunk_size": 120, "chunk_overlap": 0}}
    )
    items: list[IngestStatus] = []
    events: list[tuple[ChunkProgress, int]] = []  # each event with the number of documents stored before it
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        report = kb.ingest(
            [folder(tmp_path / "d")], progress=items.append, on_chunks=lambda e: events.append((e, len(items)))
        )
    assert (report.added, report.failed, report.skipped) == (2, 0, 3)
    skipped = {Path(i.path).name: i.error for i in items if i.status == "skipped"}
    assert skipped == {
        "novel.epub": "unsupported file type (.epub)",
        "photo.png": "unsupported file type (.png)",
        "README": "unsupported file type (no suffix)",
    }
    handbook = next(i for i in items if i.path.endswith("handbook.md"))
    assert handbook.chunks > 8

    # Chunks are counted as they are embedded, in slices of embed_batch_size, up to every chunk stored.
    totals = [e.chunks for e, _ in events]
    assert totals == sorted(totals)
    assert totals[-1] == report.chunks
    assert len(events) >= handbook.chunks // 4
    # Inside the large document: its chunks move before it is stored, and each event names it.
    inside = [e for e, stored in events if Path(e.path).name == "handbook.md" and e.done < e.of]
    assert len(inside) >= 2
    assert all(e.of == handbook.chunks for e in inside)
    assert all(e.seconds >= 0 for e, _ in events)
