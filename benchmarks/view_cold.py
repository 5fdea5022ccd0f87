"""Cold open of a saved HNSW file as a view, and its first search: usearch's own view against the store's (issue 14).

    python benchmarks/view_cold.py --path /tmp/u50k.usearch --rounds 12     (built there first if missing: --build N)

Before each run the file's pages are dropped from the OS page cache (`posix_fadvise(DONTNEED)` on that one
file: no global cache drop, which needs root), then a fresh `Index.restore(view=True)` and one search of k=50
are timed: "plain" as usearch opens it (`Index.restore(path, view=True)`), "store" as the store does
(`store.dense._view`: a mapping of its own, the graph read ahead, the vectors of a large file read page by page;
before that, a WILLNEED hint on the whole file). Alternating, medians and every round printed, with the major
page faults of each run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
from pathlib import Path

import numpy as np


def _evict(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _build(path: Path, n: int) -> None:
    from usearch.index import Index

    vectors = np.random.default_rng(0).standard_normal((n, 384)).astype(np.float32)
    index = Index(ndim=384, metric="cos", dtype="f16", connectivity=16, expansion_add=128)
    index.add(np.arange(n, dtype=np.uint64), vectors)
    index.save(str(path))
    fd = os.open(path, os.O_RDWR)
    os.fsync(fd)  # dirty pages cannot be dropped from the cache
    os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", type=Path, required=True)
    parser.add_argument("--build", type=int, default=50_000, help="vectors, if the file does not exist")
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    from usearch.index import Index

    from agentrag.store.dense import _view

    if not args.path.exists():
        _build(args.path, args.build)
    query = np.random.default_rng(1).standard_normal(384).astype(np.float32)

    def plain() -> None:
        Index.restore(str(args.path), view=True).search(query, 50)

    def store() -> None:
        _view(args.path, Index.metadata(str(args.path)), 128).search(query, 50)

    seconds: dict[str, list[float]] = {"plain": [], "store": []}
    faults: dict[str, list[int]] = {"plain": [], "store": []}
    for _ in range(args.rounds):
        for name, run in (("plain", plain), ("store", store)):
            _evict(args.path)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
            started = time.perf_counter()
            run()
            seconds[name].append(round(time.perf_counter() - started, 4))
            faults[name].append(resource.getrusage(resource.RUSAGE_SELF).ru_majflt - before)
    out = {
        "file_mb": round(args.path.stat().st_size / 2**20, 1),
        "median_s": {k: statistics.median(v) for k, v in seconds.items()},
        "seconds": seconds,
        "major_faults": faults,
        "load_average": os.getloadavg(),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
