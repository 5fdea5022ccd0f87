"""Where `ingest.analyse` runs: in the pipeline's thread, or on worker processes when an ingest is big enough.

Loading, splitting and tokenizing are pure Python and hold the GIL, so threads would not help; processes do.
Results come back in submission order whatever finishes first, so documents are stored in the order they were
found, as in-process; at most a few jobs per worker are in flight (memory does not grow with the corpus).
The pool starts at the first job (an ingest of unchanged files forks nothing) and is shut down with the ingest.

Workers are forked where the OS allows it (Linux): they inherit the loaded modules and jieba's dictionary,
which a spawned interpreter would spend about a second loading. They run only the pure functions of
`ingest.analyse`; locks they use are re-created after the fork (see `text.tokenize`). Ctrl-C goes to the
pipeline's process (workers ignore it), which cancels what is queued: nothing a worker does is stored.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Generic, TypeVar

from agentrag.ingest.analyse import Analysis, Failure
from agentrag.vocab import WorkerStart

log = logging.getLogger(__name__)

C = TypeVar("C")
Result = list[Analysis | Failure]
JobFn = Callable[..., Result]
JOBS_PER_WORKER = 4  # in flight per worker: enough to keep it busy while the pipeline stores, little memory


def worker_count(setting: int | None) -> int:
    """`[ingest] workers`: 0 and 1 both mean in the pipeline's own process; None means one per core while the
    machine has a core to spare. Like `make --load-average`: with the 1-minute load average within half a core
    of the core count, workers would only take turns with the pipeline for the same cores (measured on a
    shared 2-core machine: not reliably faster, 9-15% more CPU), so the pipeline works alone."""
    if setting is not None:
        return max(1, setting)
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average (Windows)
        load = 0.0
    return cores if load < cores - 0.5 else 1


def start_method(setting: WorkerStart | None) -> str:
    if setting is not None:
        return setting.value
    return WorkerStart.FORK.value if sys.platform.startswith("linux") else multiprocessing.get_start_method()


def _init_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops the pool


class Analyser(Generic[C]):
    """Jobs in, (context, result) out in the same order; in-process when `workers` is 1."""

    def __init__(self, workers: int, start: WorkerStart | None = None) -> None:
        self.workers = workers
        self._start = start
        self._pool: ProcessPoolExecutor | None = None
        self._pending: deque[tuple[C, JobFn, tuple[Any, ...], Future[Result]]] = deque()

    @property
    def pooled(self) -> bool:
        return self._pool is not None

    def submit(self, context: C, job: JobFn, *args: Any) -> None:
        future: Future[Result] = Future()
        if self.workers <= 1:
            future.set_result(job(*args))
        else:
            if self._pool is None:
                context_ = multiprocessing.get_context(start_method(self._start))
                self._pool = ProcessPoolExecutor(self.workers, mp_context=context_, initializer=_init_worker)
            with warnings.catch_warnings():
                # Python 3.12+ warns of fork in a threaded process; the children touch no lock of those threads.
                warnings.simplefilter("ignore", DeprecationWarning)
                future = self._pool.submit(job, *args)
        self._pending.append((context, job, args, future))

    def ready(self) -> Iterator[tuple[C, Result]]:
        """The finished jobs at the head of the queue, waiting for the head while the queue is full."""
        while self._pending and (len(self._pending) >= self.workers * JOBS_PER_WORKER or self._pending[0][3].done()):
            yield self._pop()

    def drain(self) -> Iterator[tuple[C, Result]]:
        while self._pending:
            yield self._pop()

    def _pop(self) -> tuple[C, Result]:
        context, job, args, future = self._pending.popleft()
        try:
            return context, future.result()
        except BrokenProcessPool as exc:
            # A worker died (killed, out of memory): what is queued is analysed here instead, in order.
            log.warning("ingest: a worker process died (%s); going on in this process", exc)
            self._fall_back()
            return context, job(*args)

    def _fall_back(self) -> None:
        rest = list(self._pending)
        self._pending.clear()
        self.close()
        self.workers = 1
        for context, job, args, _ in rest:
            self.submit(context, job, *args)

    def close(self) -> None:
        """Stop the workers. Jobs still queued (an interrupted or failed ingest) are dropped and the workers
        stopped at once rather than waited for: a parse may take up to `max_parse_seconds`."""
        pool, self._pool = self._pool, None
        interrupted = bool(self._pending)
        self._pending.clear()
        if pool is None:
            return
        if not interrupted:
            pool.shutdown(wait=True)
            return
        # The pool's internals (no public way before Python 3.14). Its manager thread reaps the workers once they
        # die; waiting on them here as well races it (two waitpid calls: one of them sees no exit status, and that
        # worker then looks alive for ever), so the workers are signalled here and the thread is waited for.
        processes: dict[int, Any] = getattr(pool, "_processes", None) or {}
        manager: threading.Thread | None = getattr(pool, "_executor_manager_thread", None)
        pool.shutdown(wait=False, cancel_futures=True)
        for process in list(processes.values()):
            process.terminate()
        if manager is None:
            return
        manager.join(timeout=5)
        if manager.is_alive():  # a worker did not act on SIGTERM in time (a busy machine): no worker outlives close
            for process in list(processes.values()):
                process.kill()
            manager.join(timeout=30)
