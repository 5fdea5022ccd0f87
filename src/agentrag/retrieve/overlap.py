"""When the BM25 channel runs in a worker thread beside the vector scan: only while a core is free, this process runs
no other search, and both channels take long enough for the overlap to pay for the hand-off."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

# Runs the BM25 channel beside the dense one. Shared by every retriever of the process; BM25 calls are
# short (milliseconds), so a few workers keep up with many concurrent searches.
POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="agentrag-bm25")
# BM25 runs beside the vector scan only when both take at least this long (moving averages of each one's own CPU
# time, so a busy machine, where no core is idle to overlap on, does not make them look long): the overlap saves
# at most the shorter of the two, and the hand-off (a worker thread, then the two threads taking the GIL in turn
# between numpy calls) costs 0.3-0.4 ms of CPU. Measured on 2 idle cores (BENCHMARKS.md, "BM25 beside the vector
# scan"), hybrid wall p50 with the overlap against without: 10k chunks (BM25 0.26 ms, int8 scan 0.49) 1.50 against
# 1.38 ms; 30k (BM25 0.34, HNSW 0.74) 1.68 against 1.74, for 0.4 ms more CPU; 100k (BM25 0.84, HNSW 1.4) 2.54
# against 3.40.
MIN_MS = 0.5
# A sample counts for at most this many ms in the moving averages: the decision only compares them with MIN_MS, and a
# first search that builds an index (seconds at 100k chunks) would otherwise hold the averages high for hundreds of
# searches, now that they are sampled (`hybrid._TIMED_EVERY`).
SAMPLE_MAX_MS = 4 * MIN_MS


class _InFlight:
    """Counts the searches running in this process: overlapping channels only helps when cores are idle,
    so under concurrent load (the service) every search runs its channels one after the other."""

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with self._lock:
            self._count += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._count -= 1

    def alone(self) -> bool:
        return self._count <= 1


searching = _InFlight()


class _Cores:
    """Whether a core is free to overlap on: the one-minute load average at most the core count less one, read
    at most once a second. On a busy machine the hand-off only waits for a core (measured at load 10 on 2 cores:
    0.5 ms more CPU and 7.4 against 1.9 ms wall per hybrid search at 10k chunks)."""

    def __init__(self) -> None:
        self._checked = -1.0
        self._idle = False

    def idle(self) -> bool:
        now = time.monotonic()
        if self._checked < 0 or now - self._checked > 1.0:
            self._checked = now
            try:
                load = os.getloadavg()[0]
            except (AttributeError, OSError):  # no load average here (Windows): assume a free core
                load = 0.0
            self._idle = load <= (os.cpu_count() or 1) - 1
        return self._idle


_cores = _Cores()


def averaged(average_ms: float, sample_ms: float) -> float:
    """A channel's moving average of CPU ms, one more sample in."""
    return 0.8 * average_ms + 0.2 * min(sample_ms, SAMPLE_MAX_MS)


def worth_it(dense_ms: float, bm25_ms: float) -> bool:
    """Whether a search whose channels take these CPU ms (moving averages) runs BM25 beside the scan now: both
    long enough, no other search in this process, a core free. The caller holds `searching`."""
    return min(dense_ms, bm25_ms) >= MIN_MS and searching.alone() and _cores.idle()
