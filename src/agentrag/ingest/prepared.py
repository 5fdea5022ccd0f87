"""A document on its way to the store: where it goes (`Target`, decided against the store), then its
document record and chunks (`Prepared`, built from its `Analysis`), waiting for vectors."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentrag.ingest.analyse import Analysis
from agentrag.store.base import DocumentState
from agentrag.types import Chunk, Document, chunk_id_for


@dataclass
class Prepared:
    """A document loaded and split, waiting for its vectors."""

    document: Document
    chunks: list[Chunk]
    texts: list[str]
    title_tokens: list[list[str]]
    body_tokens: list[list[str]]
    status: Literal["added", "updated"]
    path: str
    unreadable_pages: tuple[int, ...]
    pipeline: str = ""  # the pipeline id it is stored under (the loader's format included)


@dataclass
class Target:
    """Where a document goes, decided in this process before its analysis (the store is read only here)."""

    doc_id: str
    source: str
    content_hash: str
    mtime: float
    state: DocumentState | None  # what is stored under `doc_id` now
    pipeline: str
    tags: dict[str, str] = field(default_factory=dict)
    renamed: Document | None = None  # the stored entry of the same content under another path


@dataclass
class Job:
    """The documents of one analysis job: records of a corpus file, or a whole file (its documents share its
    one target)."""

    path: Path
    targets: list[Target]
    whole_file: bool = False


def prepare(target: Target, analysis: Analysis) -> Prepared:
    """The document and its chunks, from where it goes and what its analysis found."""
    doc_id, title = target.doc_id, analysis.title
    date = analysis.date or dt.date.fromtimestamp(target.mtime)
    document = Document(
        doc_id=doc_id,
        source=target.source,
        title=title,
        content_hash=target.content_hash,
        mtime=target.mtime,
        date=date,
        tags=dict(target.tags),
        meta=analysis.meta,
        n_chunks=len(analysis.drafts),
        chars=analysis.chars,
        ingested_at=time.time(),
    )
    chunks = [
        Chunk(
            chunk_id=chunk_id_for(doc_id, position),
            doc_id=doc_id,
            position=position,
            text=draft.text,
            title=title,
            source=target.source,
            heading_path=draft.heading_path,
            page=draft.page,
            page_breaks=draft.page_breaks,
            char_start=draft.char_start,
            char_end=draft.char_end,
            date=date,
            tags=document.tags,
            fingerprint=fp,
        )
        for position, (draft, fp) in enumerate(zip(analysis.drafts, analysis.fingerprints, strict=True))
    ]
    status: Literal["added", "updated"] = "updated" if target.state is not None else "added"
    return Prepared(
        document,
        chunks,
        analysis.texts,
        analysis.title_tokens,
        analysis.body_tokens,
        status,
        target.source,
        analysis.unreadable_pages,
        target.pipeline,
    )
