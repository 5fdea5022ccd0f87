"""From paths to stored chunks: discover, hash, load, split, tokenize, embed, commit.

Each batch is one transaction and each document a savepoint in it (all or nothing alone). Unchanged
content (same hash, same index-shaping settings, same tags) is skipped before it is even parsed; changed
content replaces the old chunks atomically; a file that cannot be read is reported with its reason; the batch goes on.

Embedding is the slow step, and the C embedder releases the GIL, so it runs in a worker thread while
this thread loads and splits the next documents: the pipeline then costs little more than the
embedder alone. With a fast embedder the pure-Python work of loading, splitting and tokenizing is what is
left; for an ingest past `[ingest] parallel_min_kb` it runs on worker processes (`ingest.workers`), while
this process keeps every read and write of the store, in the order the documents were found.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from agentrag.embed.base import Embedder, Vectors
from agentrag.errors import AgentragError
from agentrag.ingest.analyse import Analysis, Failure, analyse_file, analyse_records, embedding_text
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
from agentrag.ingest.prepared import Job, Prepared, Target, prepare
from agentrag.ingest.progress import ChunkCounter, ChunkProgress, ChunkProgressCallback
from agentrag.ingest.sync import SourcePaths, delete_gone, moved_from, same_index
from agentrag.ingest.workers import Analyser, worker_count
from agentrag.settings import Settings
from agentrag.store.base import IndexedChunk, Store
from agentrag.text.fingerprint import sha256_bytes
from agentrag.text.tokenize import TOKENIZER_VERSION
from agentrag.types import Document, IngestReport, IngestStatus

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
RECORDS_PER_JOB = 32  # corpus records per job sent to a worker process


class IngestPipeline:
    def __init__(self, store: Store, embedder: Embedder, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
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
        prepared = self._prepare(files, tags, emit)
        try:
            self._run(prepared, emit)
        finally:
            prepared.close()  # stops the worker processes now, also when interrupted (Ctrl-C) or failing
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

    def _prepare(
        self, files: list[Path], tags: dict[str, str], emit: ProgressCallback
    ) -> Generator[Prepared, None, None]:
        """Documents ready for their vectors, in the order found; analysed by an `Analyser` (worker processes
        for an ingest past `parallel_min_kb`), while the store is read and written only here."""
        analyser: Analyser[Job] = Analyser(self._workers_for(files), self.settings.ingest.worker_start)
        try:
            for path in files:
                try:
                    yield from self._prepare_file(analyser, path, tags, emit)
                except NotRegularFile as exc:  # a device or a FIFO is never read: it could stream forever or block
                    emit(IngestStatus(path=display(path), status="skipped", error=exc.reason))
                except Exception as exc:  # one bad document is one failure line, whatever raised
                    limit = exc.limit if isinstance(exc, LimitError) else None
                    self._failed(display(path), None, Failure(failure_reason(exc), limit), emit)
            for job, result in analyser.drain():
                yield from self._assemble(job, result, emit)
        finally:
            analyser.close()

    def _workers_for(self, files: list[Path]) -> int:
        """Worker processes pay for their start only past `parallel_min_kb` of files; else this process."""
        workers = worker_count(self.settings.ingest.workers)
        if workers > 1:
            total = 0
            for path in files:
                try:
                    total += path.stat().st_size
                except OSError:  # reported when the file is read
                    continue
            if total < self.settings.ingest.parallel_min_kb * 1024:
                return 1
        return workers

    def _prepare_file(
        self, analyser: Analyser[Job], path: Path, tags: dict[str, str], emit: ProgressCallback
    ) -> Iterator[Prepared]:
        stat = regular_file(path)
        chunking = self.settings.ingest.chunking
        if path.suffix.lower() == ".jsonl":
            yield from self._prepare_records(analyser, path, stat.st_mtime, tags, emit)
            return
        if stat.st_size > self.max_bytes:
            load_path(path, self.max_bytes)  # raises the loader's "file too large" error before any reading
        data, stat = read_bounded(path, self.max_bytes)
        doc_id = document_id_for_path(path)
        state = self.store.document_state(doc_id)
        target = Target(doc_id, self._source(path), sha256_bytes(data), stat.st_mtime, state, self._pipeline_for(path))
        if self._unchanged(target, tags, emit):
            return
        target.renamed = moved_from(self.store, target.content_hash, target.pipeline, doc_id, self._paths)
        target.tags = self._tags_for(target, tags)
        analyser.submit(Job(path, [target], whole_file=True), analyse_file, path, self.max_bytes, self.limits, chunking)
        yield from self._ready(analyser, emit)

    def _prepare_records(
        self, analyser: Analyser[Job], path: Path, mtime: float, tags: dict[str, str], emit: ProgressCallback
    ) -> Iterator[Prepared]:
        """A corpus file: every record is a document with its own id and hash; streamed, of any size, and
        analysed in groups (one job per record would cost more in messages than it saves). The stored state of
        a group of records is read in one query."""
        chunking = self.settings.ingest.chunking
        per_job = 1 if analyser.workers <= 1 else RECORDS_PER_JOB
        job, records = Job(path, []), []
        stream = stream_jsonl(path, self.limits)
        while group := list(itertools.islice(stream, RECORDS_PER_JOB)):
            ids = [loaded.doc_id or document_id_for_path(path) for loaded in group]
            states = self.store.document_states(ids)
            for loaded, doc_id in zip(group, ids, strict=True):
                raw = json.dumps([loaded.title, loaded.text, loaded.meta], ensure_ascii=False).encode("utf-8")
                self._paths.present.add(doc_id)
                source = loaded.source or str(path)
                target = Target(doc_id, source, sha256_bytes(raw), mtime, states.get(doc_id), self.pipeline_id)
                if not self._unchanged(target, tags, emit):
                    target.tags = self._tags_for(target, tags)
                    job.targets.append(target)
                    records.append(loaded)
                if len(records) >= per_job:
                    analyser.submit(job, analyse_records, records, chunking)
                    job, records = Job(path, []), []
                    yield from self._ready(analyser, emit)
        if records:
            analyser.submit(job, analyse_records, records, chunking)

    def _ready(self, analyser: Analyser[Job], emit: ProgressCallback) -> Iterator[Prepared]:
        for job, result in analyser.ready():
            yield from self._assemble(job, result, emit)

    def _assemble(self, job: Job, result: list[Analysis | Failure], emit: ProgressCallback) -> Iterator[Prepared]:
        """A job's documents, each built from its analysis (a file's documents share its one target)."""
        failure = next((r for r in result if isinstance(r, Failure)), None) if job.whole_file else None
        if failure is not None:
            self._failed(display(job.path), None, failure, emit)
            return
        targets = job.targets * len(result) if job.whole_file else job.targets
        for target, analysis in zip(targets, result, strict=True):
            if isinstance(analysis, Failure):
                self._failed(target.source, target.doc_id, analysis, emit)
            elif not analysis.drafts:
                self._failed(target.source, target.doc_id, Failure("no text could be extracted"), emit)
            else:
                try:
                    item = prepare(target, analysis)
                    if target.renamed is None or not self._move(target.renamed, item, emit):
                        yield item
                except Exception as exc:  # a store error while checking a rename: this document alone
                    self._failed(target.source, target.doc_id, Failure(failure_reason(exc)), emit)

    @staticmethod
    def _failed(path: str, doc_id: str | None, failure: Failure, emit: ProgressCallback) -> None:
        emit(IngestStatus(path=path, doc_id=doc_id, status="failed", error=failure.reason, limit=failure.limit))

    def _tags_for(self, target: Target, given: dict[str, str]) -> dict[str, str]:
        """Tags given once stay until changed: a key given now replaces its value, the others are kept (a renamed
        file keeps those of its old entry)."""
        state, renamed = target.state, target.renamed
        kept = state.tags if state is not None else renamed.tags if renamed is not None else {}
        return {**kept, **given}

    def _move(self, renamed: Document, item: Prepared, emit: ProgressCallback) -> bool:
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

    def _unchanged(self, target: Target, tags: dict[str, str], emit: ProgressCallback) -> bool:
        """True (and reported) when the stored document needs no re-indexing; new tags are applied here."""
        state = target.state
        if state is None or state.content_hash != target.content_hash or state.pipeline != target.pipeline:
            return False
        merged = {**state.tags, **tags}
        if merged != state.tags:
            self.store.update_tags(target.doc_id, merged)
            emit(IngestStatus(path=target.source, doc_id=target.doc_id, status="updated"))
        else:
            emit(IngestStatus(path=target.source, doc_id=target.doc_id, status="unchanged"))
        return True

    def _run(self, prepared: Iterator[Prepared], emit: ProgressCallback) -> None:
        """Embed in a worker thread, one batch ahead of the commits."""
        batch_size = self.settings.ingest.embed_batch_size
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentrag-embed") as pool:
            in_flight: tuple[list[Prepared], list[Future[Vectors]]] | None = None
            batch: list[Prepared] = []
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
        in_flight: tuple[list[Prepared], list[Future[Vectors]]] | None,
        batch: list[Prepared],
        emit: ProgressCallback,
    ) -> tuple[list[Prepared], list[Future[Vectors]]]:
        texts = [t for item in batch for t in item.texts]
        # Calls of about embed_batch_size chunks, in order on the one worker: progress after each.
        calls = -(-len(texts) // self.settings.ingest.embed_batch_size)
        step = -(-len(texts) // calls)
        futures = [pool.submit(self.embedder.embed_passages, texts[i : i + step]) for i in range(0, len(texts), step)]
        if in_flight is not None:
            self._commit(*in_flight, emit)
        return batch, futures

    def _vectors(self, batch: list[Prepared], futures: list[Future[Vectors]]) -> Vectors:
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

    def _commit(self, batch: list[Prepared], futures: list[Future[Vectors]], emit: ProgressCallback) -> None:
        try:
            vectors = self._vectors(batch, futures)
        except Exception as exc:
            if isinstance(exc, AgentragError) or len(batch) == 1:  # the backend failed: every document did
                for item in batch:
                    self._fail(item, exc, emit)
                return
            # An error that is not ours may come from one document's text: embed each alone to find it.
            ready: list[tuple[Prepared, Vectors]] = []
            for item in batch:
                try:
                    ready.append((item, self.embedder.embed_passages(item.texts)))
                except Exception as item_exc:
                    self._fail(item, item_exc, emit)
            self._store(ready, emit)
            return
        offsets = np.cumsum([0, *(len(item.texts) for item in batch)])
        self._store([(item, vectors[a:b]) for item, a, b in zip(batch, offsets, offsets[1:], strict=False)], emit)

    def _store(self, ready: list[tuple[Prepared, Vectors]], emit: ProgressCallback) -> None:
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

    def _store_one(self, item: Prepared, vectors: Vectors) -> IngestStatus:
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
    def _fail(item: Prepared, exc: BaseException, emit: ProgressCallback) -> None:
        emit(IngestStatus(path=item.path, doc_id=item.document.doc_id, status="failed", error=failure_reason(exc)))
