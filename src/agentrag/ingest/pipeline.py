"""From paths to stored chunks: discover, hash, load, split, tokenize, embed, commit.

Each batch is one transaction and each document a savepoint in it (all or nothing alone). Unchanged
content (same hash, same index-shaping settings, same tags) is skipped before it is even parsed; changed
content replaces the old chunks atomically; a file that cannot be read is reported with its reason; the batch goes on.

Embedding is the slow step, and the C embedder releases the GIL, so it runs in a worker thread while
this thread loads and splits the next documents: the pipeline then costs little more than the
embedder alone.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from agentrag.embed.base import Embedder, Vectors
from agentrag.errors import AgentragError
from agentrag.ingest.files import (
    NotRegularFile,
    discover,
    display,
    document_id_for_path,
    failure_reason,
    read_bounded,
    regular_file,
    unsupported_type,
)
from agentrag.ingest.loaders import LOADER_FORMATS, LimitError, load_path, stream_jsonl
from agentrag.ingest.progress import ChunkCounter, ChunkProgress, ChunkProgressCallback
from agentrag.ingest.splitter import Splitter
from agentrag.ingest.sync import SourcePaths, delete_gone, moved_from, same_index
from agentrag.settings import Settings
from agentrag.store.base import IndexedChunk, Store
from agentrag.text.dates import find_date
from agentrag.text.fingerprint import fingerprint, sha256_bytes
from agentrag.text.tokenize import TOKENIZER_VERSION, tokenize
from agentrag.types import Chunk, Document, IngestReport, IngestStatus, LoadedDocument, chunk_id_for

__all__ = [
    "ChunkProgress",
    "ChunkProgressCallback",
    "IngestPipeline",
    "ProgressCallback",
    "discover",
    "document_id_for_path",
    "embedding_text",
]


ProgressCallback = Callable[[IngestStatus], None]


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
    pipeline: str = ""  # the pipeline id it is stored under (the loader's format included)


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
        self._paths = SourcePaths(None, set())
        self._chunks = ChunkCounter()

    # ------------------------------------------------------------------ public

    def ingest(
        self,
        paths: list[Path],
        tags: dict[str, str] | None = None,
        progress: ProgressCallback | None = None,
        source_root: Path | None = None,
        sync: bool = False,
        on_chunks: ChunkProgressCallback | None = None,
    ) -> IngestReport:
        """Ingest files and folders; every file ends as added, updated, unchanged, skipped or failed.

        `source_root`: record sources relative to this folder (the service stores uploads under its data
        directory and shows users the file name, not the server's paths); absolute paths otherwise.
        `sync`: then delete the documents of files gone from each folder in `paths` (see `ingest.sync`).
        `progress` hears of every file (and every file of a folder that is not ingested: skipped, with its
        type); `on_chunks` of the chunks embedded, after each embedding call."""
        started = time.perf_counter()
        self._chunks = ChunkCounter(on_chunks)
        report = IngestReport()
        tags = dict(tags or {})

        def emit(item: IngestStatus) -> None:
            report.record(item)
            if progress is not None:
                progress(item)

        self._source_root = source_root.resolve() if source_root is not None else None
        unsupported: list[Path] = []
        files = discover(paths, unsupported)
        for path in unsupported:
            emit(IngestStatus(path=display(path), status="skipped", error=unsupported_type(path)))
        present = {document_id_for_path(p) for p in files if p.suffix.lower() != ".jsonl"}  # records add theirs
        self._paths = SourcePaths(self._source_root, present)
        self._run(self._prepare(files, tags, emit), emit)
        if sync:
            delete_gone(self.store, [p for p in paths if p.is_dir()], self._paths, emit, failure_reason)
        report.seconds = time.perf_counter() - started
        return report

    # ------------------------------------------------------------------ stages

    def _source(self, path: Path) -> str:
        resolved = path.resolve()
        if self._source_root is not None and resolved.is_relative_to(self._source_root):
            return display(resolved.relative_to(self._source_root).as_posix())
        return display(resolved)

    def _prepare(self, files: list[Path], tags: dict[str, str], emit: ProgressCallback) -> Iterator[_Prepared]:
        for path in files:
            try:
                yield from self._prepare_file(path, tags, emit)
            except NotRegularFile as exc:  # a device or a FIFO is never read: it could stream forever or block
                emit(IngestStatus(path=display(path), status="skipped", error=exc.reason))
            except Exception as exc:  # one bad document is one failure line, whatever raised
                limit = exc.limit if isinstance(exc, LimitError) else None
                emit(IngestStatus(path=display(path), status="failed", error=failure_reason(exc), limit=limit))

    def _prepare_file(self, path: Path, tags: dict[str, str], emit: ProgressCallback) -> Iterator[_Prepared]:
        stat = regular_file(path)
        if path.suffix.lower() == ".jsonl":
            # A corpus file: every record is a document with its own id and hash; streamed, of any size.
            for loaded in stream_jsonl(path, self.limits):
                raw = json.dumps([loaded.title, loaded.text, loaded.meta], ensure_ascii=False).encode("utf-8")
                doc_id = loaded.doc_id or document_id_for_path(path)
                self._paths.present.add(doc_id)
                source = loaded.source or str(path)
                content_hash = sha256_bytes(raw)
                if not self._unchanged(doc_id, content_hash, tags, source, emit):
                    merged = self._tags_for(doc_id, tags)
                    yield from self._prepare_document(loaded, doc_id, source, content_hash, stat.st_mtime, merged, emit)
            return
        if stat.st_size > self.max_bytes:
            load_path(path, self.max_bytes)  # raises the loader's "file too large" error before any reading
        data, stat = read_bounded(path, self.max_bytes)
        content_hash = sha256_bytes(data)
        doc_id = document_id_for_path(path)
        source = self._source(path)
        pipeline = self._pipeline_for(path)
        if self._unchanged(doc_id, content_hash, tags, source, emit, pipeline):
            return
        renamed = moved_from(self.store, content_hash, pipeline, doc_id, self._paths)
        merged = self._tags_for(doc_id, tags, renamed)
        for loaded in load_path(path, self.max_bytes, self.limits):
            for item in self._prepare_document(loaded, doc_id, source, content_hash, stat.st_mtime, merged, emit):
                item.pipeline = pipeline
                if renamed is None or not self._move(renamed, item, emit):
                    yield item

    def _tags_for(self, doc_id: str, given: dict[str, str], renamed: Document | None = None) -> dict[str, str]:
        """Tags given once stay until changed: a key given now replaces its value, the others are kept (a renamed
        file keeps those of its old entry)."""
        state = self.store.document_state(doc_id)
        kept = state.tags if state is not None else renamed.tags if renamed is not None else {}
        return {**kept, **given}

    def _move(self, renamed: Document, item: _Prepared, emit: ProgressCallback) -> bool:
        """Move the stored entry of a renamed file to its new path when its chunks are what would be indexed
        now: nothing is embedded again. False when they differ (the file is then indexed as usual)."""
        document = item.document
        if not same_index(self.store.get_document_chunks(renamed.doc_id), document.title, item.chunks):
            return False
        self.store.move_document(renamed.doc_id, document)
        emit(IngestStatus(path=item.path, doc_id=document.doc_id, status="updated", chunks=len(item.chunks)))
        return True

    def _pipeline_for(self, path: Path) -> str:
        """The pipeline id of a file: a loader whose output changed shape re-indexes only its own files."""
        loader_format = LOADER_FORMATS.get(path.suffix.lower())
        return f"{self.pipeline_id}/{loader_format}" if loader_format else self.pipeline_id

    def _unchanged(
        self,
        doc_id: str,
        content_hash: str,
        tags: dict[str, str],
        source: str,
        emit: ProgressCallback,
        pipeline: str | None = None,
    ) -> bool:
        """True (and reported) when the stored document needs no re-indexing; new tags are applied here."""
        state = self.store.document_state(doc_id)
        if state is None or state.content_hash != content_hash or state.pipeline != (pipeline or self.pipeline_id):
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
        title = display(loaded.title)  # a title taken from a file name that is not UTF-8
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
            in_flight: tuple[list[_Prepared], list[Future[Vectors]]] | None = None
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
        in_flight: tuple[list[_Prepared], list[Future[Vectors]]] | None,
        batch: list[_Prepared],
        emit: ProgressCallback,
    ) -> tuple[list[_Prepared], list[Future[Vectors]]]:
        texts = [t for item in batch for t in item.texts]
        # Calls of about embed_batch_size chunks, in order on the one worker: progress after each.
        calls = -(-len(texts) // self.settings.ingest.embed_batch_size)
        step = -(-len(texts) // calls)
        futures = [pool.submit(self.embedder.embed_passages, texts[i : i + step]) for i in range(0, len(texts), step)]
        if in_flight is not None:
            self._commit(*in_flight, emit)
        return batch, futures

    def _vectors(self, batch: list[_Prepared], futures: list[Future[Vectors]]) -> Vectors:
        """The batch's vectors, reporting each embedding call's chunks as it finishes (to `on_chunks`)."""
        parts: list[Vectors] = []
        done = 0
        try:
            for future in futures:
                parts.append(future.result())
                self._chunks.embedded_range([(i.path, len(i.texts)) for i in batch], done, done + len(parts[-1]))
                done += len(parts[-1])
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _commit(self, batch: list[_Prepared], futures: list[Future[Vectors]], emit: ProgressCallback) -> None:
        try:
            vectors = self._vectors(batch, futures)
        except Exception as exc:
            if isinstance(exc, AgentragError) or len(batch) == 1:  # the backend failed: every document did
                for item in batch:
                    self._fail(item, exc, emit)
                return
            # An error that is not ours may come from one document's text: embed each alone to find it.
            ready: list[tuple[_Prepared, Vectors]] = []
            for item in batch:
                try:
                    ready.append((item, self.embedder.embed_passages(item.texts)))
                except Exception as item_exc:
                    self._fail(item, item_exc, emit)
            self._store(ready, emit)
            return
        offsets = np.cumsum([0, *(len(item.texts) for item in batch)])
        self._store([(item, vectors[a:b]) for item, a, b in zip(batch, offsets, offsets[1:], strict=False)], emit)

    def _store(self, ready: list[tuple[_Prepared, Vectors]], emit: ProgressCallback) -> None:
        """Commit the batch's documents in one transaction, each all or nothing in its savepoint; a document
        that fails (or the whole batch, on a database locked past its retries) is its own failure line. Lines
        are emitted once the batch is committed: "added" always means stored."""
        done: list[IngestStatus] = []
        try:
            with self.store.batch():
                for item, vectors in ready:
                    done.append(self._store_one(item, vectors))
        except Exception as exc:
            for item, _ in ready:
                self._fail(item, exc, emit)
            return
        for status in done:
            emit(status)

    def _store_one(self, item: _Prepared, vectors: Vectors) -> IngestStatus:
        indexed = [
            IndexedChunk(chunk=c, vector=np.asarray(v, dtype=np.float32), title_tokens=tt, body_tokens=bt)
            for c, v, tt, bt in zip(item.chunks, vectors, item.title_tokens, item.body_tokens, strict=True)
        ]
        try:
            self.store.upsert_document(item.document, item.pipeline or self.pipeline_id, indexed)
        except Exception as exc:
            return IngestStatus(path=item.path, doc_id=item.document.doc_id, status="failed", error=failure_reason(exc))
        return IngestStatus(
            path=item.path,
            doc_id=item.document.doc_id,
            status=item.status,
            chunks=len(indexed),
            unreadable_pages=item.unreadable_pages,
        )

    @staticmethod
    def _fail(item: _Prepared, exc: BaseException, emit: ProgressCallback) -> None:
        emit(IngestStatus(path=item.path, doc_id=item.document.doc_id, status="failed", error=failure_reason(exc)))
