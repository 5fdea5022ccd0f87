"""From paths to stored chunks: discover, hash, load, split, tokenize, embed, commit.

Each document is one transaction. Unchanged content (same hash, same index-shaping settings, same
tags) is skipped before it is even parsed; changed content replaces the old chunks atomically; a
file that cannot be read is reported with its reason and the batch goes on.

Embedding is the slow step, and the C embedder releases the GIL, so it runs in a worker thread while
this thread loads and splits the next documents: the pipeline then costs little more than the
embedder alone.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from agentrag.embed.base import Embedder, Vectors
from agentrag.errors import AgentragError, LoadError
from agentrag.ingest.loaders import SUPPORTED_SUFFIXES, LimitError, load_path
from agentrag.ingest.splitter import Splitter
from agentrag.settings import Settings
from agentrag.store.base import IndexedChunk, Store
from agentrag.text.dates import find_date
from agentrag.text.fingerprint import fingerprint, sha256_bytes
from agentrag.text.tokenize import TOKENIZER_VERSION, tokenize
from agentrag.types import Chunk, Document, IngestReport, IngestStatus, LoadedDocument, chunk_id_for

ProgressCallback = Callable[[IngestStatus], None]


def document_id_for_path(path: Path) -> str:
    """Stable id for a file: derived from its absolute path, so re-ingesting it replaces it."""
    return hashlib.sha1(str(path.resolve()).encode("utf-8")).hexdigest()[:16]


def discover(paths: list[Path]) -> list[Path]:
    """Files to ingest, in a stable order; folders are walked, hidden entries and unknown types skipped."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    candidate = Path(root) / name
                    if not name.startswith(".") and candidate.suffix.lower() in SUPPORTED_SUFFIXES:
                        found.append(candidate)
        else:
            found.append(path)  # named explicitly: an unsupported type is reported, not skipped
    return list(dict.fromkeys(found))


def embedding_text(title: str, heading_path: tuple[str, ...], text: str) -> str:
    """What the dense channel sees: the chunk under its title and heading path (context for short chunks)."""
    header = " > ".join([title, *[h for h in heading_path if h != title]] if title else heading_path)
    return f"{header}\n{text}" if header else text


@dataclass
class _Prepared:
    """A document loaded and split, waiting for its vectors."""

    document: Document
    chunks: list[Chunk]
    texts: list[str]
    title_tokens: list[list[str]]
    body_tokens: list[list[str]]
    status: Literal["added", "updated"]
    path: str
    unreadable_pages: tuple[int, ...]


class IngestPipeline:
    def __init__(self, store: Store, embedder: Embedder, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.splitter = Splitter(settings.ingest.chunking)
        self.pipeline_id = f"{settings.index_fingerprint()}/{TOKENIZER_VERSION}"
        self.max_bytes = int(settings.ingest.max_file_mb * 1024 * 1024)
        self.limits = settings.ingest.limits
        self._source_root: Path | None = None

    # ------------------------------------------------------------------ public

    def ingest(
        self,
        paths: list[Path],
        tags: dict[str, str] | None = None,
        progress: ProgressCallback | None = None,
        source_root: Path | None = None,
    ) -> IngestReport:
        """Ingest files and folders; every file ends as added, updated, unchanged or failed.

        `source_root`: record sources relative to this folder (the service stores uploads under its data
        directory and shows users the file name, not the server's paths); absolute paths otherwise."""
        started = time.perf_counter()
        report = IngestReport()
        tags = dict(tags or {})

        def emit(item: IngestStatus) -> None:
            report.record(item)
            if progress is not None:
                progress(item)

        self._source_root = source_root.resolve() if source_root is not None else None
        self._run(self._prepare(discover(paths), tags, emit), emit)
        report.seconds = time.perf_counter() - started
        return report

    # ------------------------------------------------------------------ stages

    def _source(self, path: Path) -> str:
        resolved = path.resolve()
        if self._source_root is not None and resolved.is_relative_to(self._source_root):
            return resolved.relative_to(self._source_root).as_posix()
        return str(resolved)

    def _prepare(self, files: list[Path], tags: dict[str, str], emit: ProgressCallback) -> Iterator[_Prepared]:
        for path in files:
            try:
                yield from self._prepare_file(path, tags, emit)
            except LoadError as exc:
                limit = exc.limit if isinstance(exc, LimitError) else None
                emit(IngestStatus(path=str(path), status="failed", error=exc.reason, limit=limit))
            except AgentragError as exc:
                emit(IngestStatus(path=str(path), status="failed", error=str(exc)))
            except OSError as exc:
                emit(IngestStatus(path=str(path), status="failed", error=exc.strerror or str(exc)))

    def _prepare_file(self, path: Path, tags: dict[str, str], emit: ProgressCallback) -> Iterator[_Prepared]:
        if not path.exists():
            raise LoadError(str(path), "no such file or folder")
        stat = path.stat()
        if path.suffix.lower() == ".jsonl":
            # A corpus file: every record is a document with its own id and hash.
            for loaded in load_path(path, self.max_bytes, self.limits):
                raw = json.dumps([loaded.title, loaded.text, loaded.meta], ensure_ascii=False).encode("utf-8")
                doc_id = loaded.doc_id or document_id_for_path(path)
                source = loaded.source or str(path)
                content_hash = sha256_bytes(raw)
                if not self._unchanged(doc_id, content_hash, tags, source, emit):
                    yield from self._prepare_document(loaded, doc_id, source, content_hash, stat.st_mtime, tags, emit)
            return
        if stat.st_size > self.max_bytes:
            load_path(path, self.max_bytes)  # raises the loader's "file too large" error before any reading
        content_hash = sha256_bytes(path.read_bytes())
        doc_id = document_id_for_path(path)
        source = self._source(path)
        if self._unchanged(doc_id, content_hash, tags, source, emit):
            return
        for loaded in load_path(path, self.max_bytes, self.limits):
            yield from self._prepare_document(loaded, doc_id, source, content_hash, stat.st_mtime, tags, emit)

    def _unchanged(
        self, doc_id: str, content_hash: str, tags: dict[str, str], source: str, emit: ProgressCallback
    ) -> bool:
        """True (and reported) when the stored document needs no re-indexing; new tags are applied here."""
        state = self.store.document_state(doc_id)
        if state is None or state.content_hash != content_hash or state.pipeline != self.pipeline_id:
            return False
        merged = {**state.tags, **tags}
        if merged != state.tags:
            self.store.update_tags(doc_id, merged)
            emit(IngestStatus(path=source, doc_id=doc_id, status="updated"))
        else:
            emit(IngestStatus(path=source, doc_id=doc_id, status="unchanged"))
        return True

    def _prepare_document(
        self,
        loaded: LoadedDocument,
        doc_id: str,
        source: str,
        content_hash: str,
        mtime: float,
        tags: dict[str, str],
        emit: ProgressCallback,
    ) -> Iterator[_Prepared]:
        drafts = self.splitter.split(loaded.blocks)
        if not drafts:
            emit(IngestStatus(path=source, doc_id=doc_id, status="failed", error="no text could be extracted"))
            return
        existed = self.store.document_state(doc_id) is not None
        title = loaded.title
        date = loaded.date or find_date(loaded.text[:2000]) or dt.date.fromtimestamp(mtime)
        document = Document(
            doc_id=doc_id,
            source=source,
            title=title,
            content_hash=content_hash,
            mtime=mtime,
            date=date,
            tags=dict(tags),
            meta=loaded.meta,
            n_chunks=len(drafts),
            chars=sum(len(b.text) for b in loaded.blocks),
            ingested_at=time.time(),
        )
        status: Literal["added", "updated"] = "updated" if existed else "added"
        item = _Prepared(document, [], [], [], [], status, source, loaded.unreadable_pages)
        for position, draft in enumerate(drafts):
            item.chunks.append(
                Chunk(
                    chunk_id=chunk_id_for(doc_id, position),
                    doc_id=doc_id,
                    position=position,
                    text=draft.text,
                    title=title,
                    source=source,
                    heading_path=draft.heading_path,
                    page=draft.page,
                    page_breaks=draft.page_breaks,
                    char_start=draft.char_start,
                    char_end=draft.char_end,
                    date=date,
                    tags=document.tags,
                    fingerprint=fingerprint(draft.text),
                )
            )
            item.texts.append(embedding_text(title, draft.heading_path, draft.text))
            item.title_tokens.append(tokenize(" ".join([title, *draft.heading_path])))
            item.body_tokens.append(tokenize(draft.text))
        yield item

    def _run(self, prepared: Iterator[_Prepared], emit: ProgressCallback) -> None:
        """Embed in a worker thread, one batch ahead of the commits."""
        batch_size = self.settings.ingest.embed_batch_size
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentrag-embed") as pool:
            in_flight: tuple[list[_Prepared], Future[Vectors]] | None = None
            batch: list[_Prepared] = []
            size = 0
            for item in prepared:
                batch.append(item)
                size += len(item.texts)
                if size >= batch_size:
                    in_flight = self._rotate(pool, in_flight, batch, emit)
                    batch, size = [], 0
            if batch:
                in_flight = self._rotate(pool, in_flight, batch, emit)
            if in_flight is not None:
                self._commit(*in_flight, emit)

    def _rotate(
        self,
        pool: ThreadPoolExecutor,
        in_flight: tuple[list[_Prepared], Future[Vectors]] | None,
        batch: list[_Prepared],
        emit: ProgressCallback,
    ) -> tuple[list[_Prepared], Future[Vectors]]:
        texts = [t for item in batch for t in item.texts]
        future = pool.submit(self.embedder.embed_passages, texts)
        if in_flight is not None:
            self._commit(*in_flight, emit)
        return batch, future

    def _commit(self, batch: list[_Prepared], future: Future[Vectors], emit: ProgressCallback) -> None:
        try:
            vectors = future.result()
        except AgentragError as exc:
            for item in batch:
                emit(IngestStatus(path=item.path, doc_id=item.document.doc_id, status="failed", error=str(exc)))
            return
        offset = 0
        for item in batch:
            own = vectors[offset : offset + len(item.texts)]
            offset += len(item.texts)
            indexed = [
                IndexedChunk(chunk=c, vector=np.asarray(v, dtype=np.float32), title_tokens=tt, body_tokens=bt)
                for c, v, tt, bt in zip(item.chunks, own, item.title_tokens, item.body_tokens, strict=True)
            ]
            self.store.upsert_document(item.document, self.pipeline_id, indexed)
            emit(
                IngestStatus(
                    path=item.path,
                    doc_id=item.document.doc_id,
                    status=item.status,
                    chunks=len(indexed),
                    unreadable_pages=item.unreadable_pages,
                )
            )
