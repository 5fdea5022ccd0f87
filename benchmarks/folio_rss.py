"""How much of a mapped file a scattered read counts in the process's memory, by how the file was written.

    python benchmarks/folio_rss.py --dir /tmp --mb 224 --reads 2000

Writes a `.npy` file of --mb megabytes in --dir three ways, then, in this process, maps it read-only with
`MADV_RANDOM` (as agentrag maps its BM25 postings), reads --reads random bytes through the mapping and prints the
mapping's resident size (/proc/self/smaps):

    whole     `np.save`: one large write (the file sits in the page cache as large folios, up to 2 MB on ext4
              from Linux 6.16)
    pieces    agentrag's `store.mapping.save_npy`: the same bytes, 64 KB per write
    read back `np.save`, then the file's pages dropped (`posix_fadvise(DONTNEED)`) and the file read once with
              `read()` (readahead builds large folios too)
    cold      `np.save`, then the file's pages dropped: only what the mapping reads comes in, a page at a time

A fault maps the whole folio of the page it reads, and the cached pages around it (64 KB): this is what decided
the RSS at a million chunks (BENCHMARKS.md, "Memory at a million chunks"). Linux only.
"""

from __future__ import annotations

import argparse
import mmap
import os
import random
from pathlib import Path

import numpy as np

from agentrag.store.mapping import save_npy


def _write(path: Path, how: str, data: np.ndarray) -> None:
    if how == "pieces":
        save_npy(path, data)
        return
    np.save(path, data, allow_pickle=False)
    if how in ("read back", "cold"):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    if how == "read back":
        with path.open("rb") as handle:
            while handle.read(1 << 20):
                pass


def _resident_kb(path: Path) -> int:
    lines = Path("/proc/self/smaps").read_text().splitlines()
    for i, line in enumerate(lines):
        if line.endswith(str(path)):
            return next(int(x.split()[1]) for x in lines[i : i + 10] if x.startswith("Rss:"))
    return 0


def measure(path: Path, reads: int) -> float:
    """MB of the mapping resident after `reads` random bytes read through it."""
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    mapped.madvise(mmap.MADV_RANDOM)
    view = np.frombuffer(mapped, dtype=np.uint8)
    rng = random.Random(0)
    total = 0
    for _ in range(reads):
        total += int(view[rng.randrange(len(view))])
    resident = _resident_kb(path) / 1024
    del view
    mapped.close()
    return resident


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/tmp"), help="where the file is written (then removed)")
    parser.add_argument("--mb", type=int, default=224, help="the file's size")
    parser.add_argument("--reads", type=int, default=2000, help="random bytes read through the mapping")
    args = parser.parse_args()
    data = np.arange(args.mb * (1 << 20) // 4, dtype=np.int32)
    path = (args.dir / f"folio_rss.{os.getpid()}.npy").resolve()
    try:
        for how in ("whole", "pieces", "read back", "cold"):
            _write(path, how, data)
            print(f"{how:10} {measure(path, args.reads):8.1f} MB resident of {path.stat().st_size / 2**20:.0f} MB")
            path.unlink()
    finally:
        path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
