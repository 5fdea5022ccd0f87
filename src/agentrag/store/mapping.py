"""Read-only file mappings for the derived indexes, with the access pattern told to the OS.

A page fault on a mapped file normally reads ahead around the faulting page: the device's readahead window,
which is 8 MB on the machine these benchmarks ran on (`/sys/block/*/queue/read_ahead_kb`). For a file read
in small scattered pieces (the postings of a few query terms, the vectors an HNSW search visits) that reads
and maps most of the file on the first search after open: seconds of reading at a million chunks, and all of
it counted in the process's resident memory. `MADV_RANDOM` reads only the page asked for; a range about to be
read whole is asked for with `MADV_WILLNEED` (one large read, in the background). Where the OS has neither
advice the mapping is used as it is.

How a file was written matters too. A page fault maps every page already cached around it (64 KB), and the
whole folio the page is in: a file written in one large `write` sits in the page cache as folios of up to
2 MB (ext4 on Linux 6.16 and later), so each scattered read of it then counts up to 2 MB in the process's
memory. The files read that way are written `WRITE_PIECE` at a time (`write_pieces`, `save_npy`): on the
1M scale index, 200 searches left 387 MB of postings resident from files written whole, 150 MB from files
written in pieces (BENCHMARKS.md, issue 14).
"""

from __future__ import annotations

import contextlib
import mmap
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

WRITE_PIECE = 64 << 10  # the page fault's own window: no larger folio than a fault maps anyway


def write_pieces(out: BinaryIO, data: Any) -> None:
    """Write a bytes-like object (a contiguous array too) `WRITE_PIECE` bytes at a time."""
    raw = memoryview(data).cast("B")
    for start in range(0, len(raw), WRITE_PIECE):
        out.write(raw[start : start + WRITE_PIECE])


def save_npy(path: Path, array: npt.NDArray[Any]) -> None:
    """The file `np.save` writes (format 1.0, no pickles), written in pieces for scattered mapped reads."""
    array = np.ascontiguousarray(array)
    if array.dtype.hasobject:
        raise ValueError(f"{path.name}: an array of objects")
    with path.open("wb") as out:
        np.lib.format.write_array_header_1_0(out, np.lib.format.header_data_from_array_1_0(array))
        write_pieces(out, array.reshape(-1).view(np.uint8))


def advise(mapped: mmap.mmap, advice: str, start: int = 0, length: int | None = None) -> None:
    """`madvise` a range of the mapping (widened to whole pages); a no-op where unsupported."""
    flag = getattr(mmap, advice, None)
    if flag is None or not hasattr(mapped, "madvise"):
        return
    page = mmap.PAGESIZE
    first = start // page * page
    end = len(mapped) if length is None else min(len(mapped), start + length)
    if end <= first:
        return
    with contextlib.suppress(OSError):
        mapped.madvise(flag, first, end - first)


def map_file(path: Path, advice: str | None = "MADV_RANDOM") -> mmap.mmap:
    """The whole file mapped read-only (it must not be empty)."""
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if advice is not None:
        advise(mapped, advice)
    return mapped


def map_npy(path: Path, advice: str = "MADV_RANDOM") -> npt.NDArray[Any]:
    """A `.npy` file's array, read-only over a mapping read page by page (what `np.load(mmap_mode="r")` gives,
    without the readahead around each fault), or with another `advice` (MADV_WILLNEED: an array about to be read
    whole, in one read). ValueError on a file that is not a whole, plain `.npy`."""
    with path.open("rb") as handle:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
        else:
            raise ValueError(f"{path.name}: .npy version {version}")
        offset = handle.tell()
    if dtype.hasobject or fortran:
        raise ValueError(f"{path.name}: not a plain array")
    count = int(np.prod(shape, dtype=np.int64))
    if path.stat().st_size < offset + count * dtype.itemsize:
        raise ValueError(f"{path.name}: truncated")
    if count == 0:
        return np.zeros(shape, dtype=dtype)
    array = np.frombuffer(map_file(path, advice), dtype=dtype, count=count, offset=offset)
    return array.reshape(shape)


Origin = tuple[mmap.mmap, int]  # a mapping and the byte offset in it of an array's first element


def origin(array: npt.NDArray[Any]) -> Origin | None:
    """Where a 1-d array made by `map_npy` lies in its mapping (None for any other array)."""
    base: Any = array
    while base is not None and not isinstance(base, mmap.mmap):
        base = base.obj if isinstance(base, memoryview) else getattr(base, "base", None)
    if base is None or array.ndim != 1:
        return None
    start = int(np.frombuffer(base, dtype=np.uint8, count=1).ctypes.data) if len(base) else 0
    return base, int(array.ctypes.data) - start


def will_read(where: Origin | None, first: int, end: int, itemsize: int) -> None:
    """Ask for elements [first, end) of a mapped array in one read, in the background (`MADV_WILLNEED`): a
    long run read page by page would wait for each page in turn."""
    if where is not None and end > first:
        mapped, offset = where
        advise(mapped, "MADV_WILLNEED", offset + first * itemsize, (end - first) * itemsize)
