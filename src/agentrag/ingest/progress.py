"""Chunk progress of one ingest: how many chunks are embedded so far, reported after each embedding call, so a
large document shows progress long before it is stored (its `IngestStatus`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from pydantic import BaseModel


class ChunkProgress(BaseModel):
    """Chunks embedded so far, after an embedding call (about `embed_batch_size` chunks)."""

    path: str  # the document these chunks belong to
    done: int  # its chunks embedded so far
    of: int  # its chunks
    chunks: int  # chunks embedded in this ingest so far, every document
    seconds: float  # since this ingest started


ChunkProgressCallback = Callable[[ChunkProgress], None]


class ChunkCounter:
    """Counts the chunks of one ingest as they are embedded and tells `on_chunks` (when given)."""

    def __init__(self, on_chunks: ChunkProgressCallback | None = None) -> None:
        self.on_chunks = on_chunks
        self.embedded = 0
        self.started = time.perf_counter()

    def embedded_range(self, documents: Sequence[tuple[str, int]], start: int, end: int) -> None:
        """Chunks [start, end) of a batch are embedded; `documents`: the batch's (path, chunk count), in order."""
        self.embedded += end - start
        if self.on_chunks is None:
            return
        offset = 0
        for path, count in documents:
            first, last = offset, offset + count
            offset = last
            if last > start and first < end:
                self.on_chunks(
                    ChunkProgress(
                        path=path,
                        done=min(end, last) - first,
                        of=count,
                        chunks=self.embedded,
                        seconds=time.perf_counter() - self.started,
                    )
                )
