"""Dense indexes derived from the vectors in the database: exact (numpy) while small, ANN (usearch) when large.

Both are caches of the database, never the truth: each knows the database generation it reflects and
is brought up to date from the chunk change log, or rebuilt from the vectors table.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from agentrag.store.mapping import advise, map_file
from agentrag.store.select import largest_positions

EF_SEARCH = 128  # `StoreSettings.ann_ef_search`: recall@10 0.991 at depth 50 on hotpotqa's e5 vectors (BENCHMARKS)
# Up to this many scores a stable sort of them all is cheaper than a partition with its tie check.
_SORT_ALL = 2048
Keys = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]


def top_k(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the k best scores, best first (ties by position, so results are reproducible)."""
    n = len(scores)
    if n == 0 or k <= 0:
        return np.zeros(0, dtype=np.intp)
    k = min(k, n)
    if n <= _SORT_ALL:  # a few hundred rows (the int8 codes' picks, a delta): one stable sort, the same order
        return (-scores).argsort(kind="stable")[:k]
    if k < n:
        idx = largest_positions(scores, k)
        # argpartition picks any of the rows tied with the k-th score: take the first ones, so a scan over
        # a subset of the rows (dense_codes) keeps the same ones as a scan over all of them.
        kth = scores[idx].min()
        if np.count_nonzero(scores == kth) > np.count_nonzero(scores[idx] == kth):
            above = np.flatnonzero(scores > kth)
            idx = np.concatenate([above, np.flatnonzero(scores == kth)[: k - len(above)]])
    else:
        idx = np.arange(n)
    return idx[np.lexsort((idx, -scores[idx]))]


class DenseIndex(Protocol):
    kind: str

    def add(self, keys: Keys, vectors: Matrix) -> None: ...

    def remove(self, keys: Keys) -> None: ...

    def search(
        self, query: Matrix, k: int, allowed: Keys | None = None, ef: int | None = None, near: Matrix | None = None
    ) -> tuple[Keys, npt.NDArray[np.float32]]:
        """The k best; `ef`: an HNSW search's breadth (None: the index's own; exact ones ignore it); `near`: a
        vector this thread searched just before, of which `query` is a variant (an index may narrow its scan to
        what `near` scored best, or ignore it)."""
        ...

    def vectors(self, keys: list[int]) -> Matrix | None:
        """Rows for the keys if this index holds them exactly in memory, else None (ask the database)."""
        ...

    def __len__(self) -> int: ...


class ExactIndex:
    """Brute-force inner product over a contiguous matrix; deletions are masked, then compacted."""

    kind = "exact"

    def __init__(self, dim: int) -> None:
        self._dim = dim
        self._keys: Keys = np.zeros(0, dtype=np.int64)
        self._matrix: Matrix = np.zeros((0, dim), dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)
        self._row: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def all_vectors(self) -> tuple[Keys, Matrix]:
        rows = np.flatnonzero(self._alive)
        return self._keys[rows], self._matrix[rows]

    def add(self, keys: Keys, vectors: Matrix) -> None:
        if len(keys) == 0:
            return
        self.remove(keys)
        start = len(self._keys)
        self._keys = np.concatenate([self._keys, keys.astype(np.int64)])
        self._matrix = np.ascontiguousarray(np.vstack([self._matrix, vectors.astype(np.float32)]))
        self._alive = np.concatenate([self._alive, np.ones(len(keys), dtype=bool)])
        for i, key in enumerate(keys.tolist()):
            self._row[key] = start + i

    def remove(self, keys: Keys) -> None:
        for key in keys.tolist():
            row = self._row.pop(key, None)
            if row is not None:
                self._alive[row] = False
        if len(self._alive) > 1000 and len(self._row) < 0.7 * len(self._alive):
            self._compact()

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive)
        self._keys = self._keys[keep]
        self._matrix = np.ascontiguousarray(self._matrix[keep])
        self._alive = np.ones(len(keep), dtype=bool)
        self._row = {key: i for i, key in enumerate(self._keys.tolist())}

    def vectors(self, keys: list[int]) -> Matrix | None:
        rows = [self._row[key] for key in keys if key in self._row]
        return self._matrix[rows]

    def search(
        self, query: Matrix, k: int, allowed: Keys | None = None, ef: int | None = None, near: Matrix | None = None
    ) -> tuple[Keys, npt.NDArray[np.float32]]:
        if allowed is not None:
            rows = np.asarray([self._row[key] for key in allowed.tolist() if key in self._row], dtype=np.intp)
            scores = self._matrix[rows] @ query
            best = top_k(scores, k)
            return self._keys[rows[best]], scores[best]
        scores = self._matrix @ query
        if len(self._row) < len(self._alive):
            scores = np.where(self._alive, scores, -np.inf).astype(np.float32)
        best = top_k(scores, k)
        best = best[np.isfinite(scores[best])]
        return self._keys[best], scores[best]


# A viewed file whose vectors take more than this is read as it is searched, page by page; a smaller one is read
# whole at open. Measured cold on the benchmark machine (BENCHMARKS.md, "First search after open and memory"): at
# a million vectors (768 MB) page by page made the first search 0.35 s faster but the 200 searches after it 4.7x
# slower (167,537 page reads); at 250k the first search alone was slower. Past a few GB, reading a file whole at
# each open would hold more memory than the searches need: not measured.
_READ_WHOLE_MAX = 4 << 30


def _view(path: Path, meta: dict[str, Any], ef_search: int) -> Any:
    """A usearch index viewing `path` through a mapping of ours, told how it will be read.

    Opening a view walks every node of the graph (the end of the file), so that part is asked for in one large
    read; a search then visits vectors all over the first part of the file, a few thousand of them, which
    are read page by page when the file is large (`mapping`: no 8 MB of readahead around each one, and only
    what was read counted in the process's memory) and read whole at open when it is small."""
    from usearch.index import Index

    mapped = map_file(path, advice=None)
    rows, width = struct.unpack_from("<II", mapped, 0) if len(mapped) >= 8 else (0, 0)
    vectors_end = 8 + rows * width
    if not meta.get("matrix_uses_64_bit_dimensions") and 8 < vectors_end < len(mapped):
        advise(mapped, "MADV_WILLNEED", vectors_end)  # the graph first: the view's walk waits for it
        if vectors_end - 8 > _READ_WHOLE_MAX:
            advise(mapped, "MADV_RANDOM", 0, vectors_end)
        else:
            advise(mapped, "MADV_WILLNEED", 0, vectors_end)
    index = Index(
        ndim=meta["dimensions"], dtype=meta["kind_scalar"], metric=meta["kind_metric"], expansion_search=ef_search
    )
    buffer = memoryview(mapped)
    index.view(buffer)
    # usearch keeps a pointer into the mapping, not a reference: the mapping lives exactly as long as the index
    # (an attribute set after `_compiled`, so released after it).
    vars(index)["agentrag_mapping"] = buffer
    return index


class UsearchIndex:
    """HNSW (usearch, cosine, f16 storage) for large knowledge bases; saved beside the database.

    Opened from its file as a view (memory-mapped, read-only: 44 ms for 100k vectors where a load took 330);
    chunks removed since it was saved are then hidden from its results instead of removed from the graph."""

    kind = "ann"

    def __init__(self, dim: int, ef_search: int = EF_SEARCH, index: Any = None) -> None:
        from usearch.index import Index

        self._dim = dim
        self._ef = ef_search
        self._index = index or Index(
            ndim=dim, metric="cos", dtype="f16", connectivity=16, expansion_add=128, expansion_search=ef_search
        )
        self._view = index is not None
        self._hidden: set[int] = set()

    @classmethod
    def open(cls, path: Path, dim: int, ef_search: int = EF_SEARCH, view: bool = True) -> UsearchIndex:
        """The saved index at `path`; raises ValueError on a file that is not a usearch index of `dim`."""
        from usearch.index import Index

        meta = Index.metadata(str(path))
        if not meta or meta.get("dimensions") != dim:
            raise ValueError(f"not a {dim}-dimensional usearch index")
        if view:
            index = _view(path, meta, ef_search)
        else:
            index = Index.restore(str(path), view=False, expansion_search=ef_search)
        if index is None:
            raise ValueError("unreadable usearch index")
        opened = cls(dim, ef_search, index)
        opened._view = view
        return opened

    def __len__(self) -> int:
        return len(self._index) - len(self._hidden)

    @property
    def hidden(self) -> int:
        return len(self._hidden)

    def add(self, keys: Keys, vectors: Matrix) -> None:
        if len(keys) == 0:
            return
        if self._view:
            raise RuntimeError("a usearch view is read-only; add to the index layered over it")
        self.remove(keys)
        self._index.add(keys.astype(np.uint64), vectors.astype(np.float32))

    def _present(self, keys: Keys) -> list[int]:
        return [key for key in keys.tolist() if key not in self._hidden and self._index.contains(key)]

    def remove(self, keys: Keys) -> None:
        present = self._present(keys)
        if not present:
            return
        if self._view:
            self._hidden.update(present)
        else:
            self._index.remove(np.asarray(present, dtype=np.uint64))

    def vectors(self, keys: list[int]) -> Matrix | None:
        return None  # f16 copies; the database holds the exact float32 vectors

    def hidden_keys(self) -> Keys:
        return np.fromiter(self._hidden, dtype=np.int64, count=len(self._hidden))

    def search(
        self, query: Matrix, k: int, allowed: Keys | None = None, ef: int | None = None, near: Matrix | None = None
    ) -> tuple[Keys, npt.NDArray[np.float32]]:
        if allowed is not None:
            # A selective filter: score exactly the allowed vectors (their count is small by definition of
            # selective; the store only passes `allowed` then).
            present = np.asarray(self._present(allowed), dtype=np.uint64)
            if len(present) == 0:
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
            vectors = np.asarray(self._index.get(present), dtype=np.float32)
            scores = (vectors @ query).astype(np.float32)
            best = top_k(scores, k)
            return present[best].astype(np.int64), scores[best]
        deep = min(k + len(self._hidden), len(self._index))
        if deep <= 0 or len(self) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        # The breadth is the graph's setting, not a search argument: set for this search (the store searches its
        # index under its lock, one search at a time). usearch defines the setter; mypy reads the property as read-only.
        self._index.expansion_search = ef or self._ef  # type: ignore[misc]
        matches = self._index.search(query, deep)
        keys = np.asarray(matches.keys, dtype=np.int64)
        scores = (1.0 - np.asarray(matches.distances)).astype(np.float32)
        if self._hidden:
            keep = ~np.isin(keys, self.hidden_keys())
            keys, scores = keys[keep], scores[keep]
        return keys[:k], scores[:k]

    def save(self, path: Path) -> None:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # two processes may save the same generation
        self._index.save(str(tmp))
        tmp.replace(path)
