"""Chunks as rows of the chunk collection and back, and a `SearchFilter` as the documents it allows."""

from __future__ import annotations

import datetime as dt
import fnmatch
import json
from typing import Any

import numpy as np

from agentrag.store.base import IndexedChunk
from agentrag.store.milvus.registry import Entry
from agentrag.store.milvus.terms import document_terms
from agentrag.types import Chunk, Document, SearchFilter

FIELDS = [
    "key", "doc_id", "doc_gen", "chunk_id", "position", "text", "heading", "page", "page_breaks",
    "char_start", "char_end", "fingerprint",
]  # fmt: skip


def chunk_row(doc_id: str, item: IndexedChunk, dim: int | None) -> dict[str, Any]:
    """A chunk as a row of the chunk collection (its `doc_gen` is set by the write)."""
    c = item.chunk
    if len(item.vector) != dim:
        raise ValueError(f"chunk {c.chunk_id}: vector has {len(item.vector)} dimensions, the store {dim}")
    return {
        "doc_id": doc_id,
        "chunk_id": c.chunk_id,
        "position": c.position,
        "text": c.text,
        "heading": json.dumps(list(c.heading_path), ensure_ascii=False),
        "page": -1 if c.page is None else c.page,
        "page_breaks": json.dumps([list(p) for p in c.page_breaks]),
        "char_start": c.char_start,
        "char_end": c.char_end,
        "fingerprint": c.fingerprint,
        "terms": document_terms(item.title_tokens, item.body_tokens),
        "vec": np.asarray(item.vector, dtype=np.float32).tolist(),
    }


def chunk_from_row(row: dict[str, Any], doc: Document) -> Chunk:
    return Chunk.model_construct(
        chunk_id=row["chunk_id"],
        doc_id=row["doc_id"],
        position=int(row["position"]),
        text=row["text"],
        heading_path=tuple(json.loads(row["heading"])),
        page=None if row["page"] < 0 else int(row["page"]),
        char_start=int(row["char_start"]),
        char_end=int(row["char_end"]),
        fingerprint=row["fingerprint"],
        title=doc.title,
        source=doc.source,
        date=doc.date if isinstance(doc.date, dt.date) else None,
        tags=dict(doc.tags),
        page_breaks=tuple((int(a), int(b)) for a, b in json.loads(row["page_breaks"])),
    )


def allowed_documents(entries: dict[str, Entry], flt: SearchFilter | None) -> list[str] | None:
    """The documents a filter allows (None: no filter). Globs match as SQLite's GLOB does (case-sensitive)."""
    if flt is None or flt.is_empty():
        return None
    out = []
    for doc_id, entry in entries.items():
        doc = entry.document
        if flt.doc_ids and doc_id not in flt.doc_ids:
            continue
        if flt.sources and not any(fnmatch.fnmatchcase(doc.source, p) for p in flt.sources):
            continue
        if any(doc.tags.get(k) != v for k, v in flt.tags.items()):
            continue
        if flt.date_from and not (doc.date and doc.date >= flt.date_from):
            continue
        if flt.date_to and not (doc.date and doc.date <= flt.date_to):
            continue
        out.append(doc_id)
    return out
