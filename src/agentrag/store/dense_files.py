"""The dense index's files beside the database, and the index layered over a saved one.

`dense-g{G}.exact` holds keys and float32 vectors (memory-mapped: opening reads a header, the OS pages the
vectors in as a scan reads them) and `dense-g{G}.usearch` the HNSW graph (opened as a view); G is the database
generation the file reflects. Files are written whole under a temporary name and renamed, never changed in
place, so a process still mapping an older file keeps reading it. What changed since a file was saved is
replayed from the chunk change log into a `Layered` index, not written back, until it is worth a rewrite.
A large `.exact` file gets `dense-g{G}.i8` beside it on its first open (int8 codes that pick the rows a scan
must score: `dense_codes`), and loses it with itself.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agentrag.store import dense_codes
from agentrag.store.dense import ExactIndex, Keys, Matrix, UsearchIndex, top_k
from agentrag.store.dense_codes import Int8Codes, codes_path
from agentrag.store.mapping import write_pieces

_MAGIC = b"AGRDNS01"
_HEADER = struct.Struct("<8sqq")  # magic, rows, dim
SUFFIXES = {"exact": ".exact", "ann": ".usearch", "codes": dense_codes.SUFFIX}


def file_for(directory: Path, generation: int, kind: str) -> Path:
    return directory / f"dense-g{generation}{SUFFIXES[kind]}"


def saved_files(directory: Path, kind: str | None = None) -> list[tuple[int, Path]]:
    """(generation, path) of the saved dense files (of one kind), oldest first."""
    found = []
    for path in directory.glob("dense-g*"):
        number, dot, suffix = path.name[len("dense-g") :].partition(".")
        wanted = SUFFIXES.values() if kind is None else (SUFFIXES[kind],)
        if dot and number.isdigit() and f".{suffix}" in wanted:
            found.append((int(number), path))
    return sorted(found)


def remove_others(directory: Path, keep: Path) -> None:
    """Every saved dense file but `keep` and the int8 codes that go with it."""
    kept = {keep, codes_path(keep)}
    for _, path in saved_files(directory):
        if path not in kept:
            path.unlink(missing_ok=True)


def _temporary(path: Path) -> Path:
    return path.with_name(f"{path.name}.{os.getpid()}.tmp")  # two processes may save the same generation


def write_exact(path: Path, keys: Keys, matrix: Matrix) -> None:
    order = np.argsort(keys, kind="stable")
    keys = np.ascontiguousarray(keys[order], dtype="<i8")
    tmp = _temporary(path)
    try:
        with tmp.open("wb") as out:
            out.write(_HEADER.pack(_MAGIC, len(keys), matrix.shape[1] if matrix.ndim == 2 else 0))
            out.write(keys.tobytes())
            for start in range(0, len(order), 65536):  # rows in key order, a slice at a time
                # in pieces (`mapping`): a search reads the rows of its candidates, scattered over the file
                write_pieces(out, np.ascontiguousarray(matrix[order[start : start + 65536]], dtype="<f4"))
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class MappedExact:
    """Exact inner product over a read-only matrix mapped from a `.exact` file; removals are masked."""

    kind = "exact"

    def __init__(self, keys: Keys, matrix: Matrix, codes: Int8Codes | None = None) -> None:
        self._keys = keys  # ascending
        self._matrix = matrix
        self._alive = np.ones(len(keys), dtype=bool)
        self._count = len(keys)
        self._codes = codes  # the rows worth scoring exactly (large files only): see dense_codes

    @classmethod
    def open(cls, path: Path, dim: int) -> MappedExact:
        """The file's index; ValueError if it is not a whole `.exact` file of `dim`-dimensional vectors."""
        size = path.stat().st_size
        with path.open("rb") as handle:
            header = handle.read(_HEADER.size)
        if len(header) < _HEADER.size:
            raise ValueError("truncated header")
        magic, rows, width = _HEADER.unpack(header)
        if magic != _MAGIC or width != dim or size != _HEADER.size + rows * 8 + rows * dim * 4:
            raise ValueError(f"not a whole dense file of {dim}-dimensional vectors")
        if rows == 0:
            return cls(np.zeros(0, dtype=np.int64), np.zeros((0, dim), dtype=np.float32))
        keys = np.fromfile(path, dtype="<i8", count=rows, offset=_HEADER.size).astype(np.int64)
        mapped = np.memmap(path, dtype="<f4", mode="r", offset=_HEADER.size + rows * 8, shape=(rows, dim))
        matrix = mapped.view(np.ndarray)
        codes = Int8Codes.beside(path, keys, matrix) if rows >= dense_codes.MIN_ROWS else None
        return cls(keys, matrix, codes)

    def __len__(self) -> int:
        return self._count

    def _rows(self, keys: Keys) -> npt.NDArray[np.intp]:
        """Rows of the keys held, in the order given (keys not held left out)."""
        if len(self._keys) == 0 or len(keys) == 0:
            return np.zeros(0, dtype=np.intp)
        pos: npt.NDArray[np.intp] = np.minimum(self._keys.searchsorted(keys), len(self._keys) - 1)
        found: npt.NDArray[np.intp] = pos[(self._keys[pos] == keys) & self._alive[pos]]
        return found

    def remove(self, keys: Keys) -> None:
        rows = np.unique(self._rows(np.asarray(keys, dtype=np.int64)))
        self._alive[rows] = False
        self._count -= len(rows)

    def held(self, keys: list[int]) -> tuple[Keys, Matrix]:
        rows = self._rows(np.asarray(keys, dtype=np.int64))
        return self._keys[rows], np.asarray(self._matrix[rows])

    def all_vectors(self) -> tuple[Keys, Matrix]:
        rows = np.flatnonzero(self._alive)
        return self._keys[rows], np.asarray(self._matrix[rows])

    def search(
        self, query: Matrix, k: int, allowed: Keys | None = None, ef: int | None = None, near: Matrix | None = None
    ) -> tuple[Keys, npt.NDArray[np.float32]]:
        """The k best rows for `query`; `near`: a vector this thread searched just before, of which `query` is
        a variant (see `Int8Codes.candidates`)."""
        if allowed is not None:
            rows = self._rows(np.asarray(allowed, dtype=np.int64))
            scores = self._matrix[rows] @ query
            best = top_k(scores, k)
            return self._keys[rows[best]], scores[best]
        if self._codes is not None:
            # Only the rows whose int8 codes score near the k-th best are read in float32.
            alive = self._alive if self._count < len(self._keys) else None
            rows = self._codes.candidates(query, k, alive, near)
            scores = self._matrix[rows] @ query
            best = top_k(scores, k)
            return self._keys[rows[best]], scores[best]
        scores = self._matrix @ query
        if self._count < len(self._keys):
            scores = np.where(self._alive, scores, -np.inf).astype(np.float32)
        best = top_k(scores, k)
        best = best[np.isfinite(scores[best])]
        return self._keys[best], scores[best]


class Layered:
    """A saved index (a mapped matrix or a usearch view, both read-only) and the changes since it was saved:
    removals hidden in it, additions in a small in-memory exact index searched beside it."""

    def __init__(self, base: MappedExact | UsearchIndex, generation: int, dim: int) -> None:
        self.base = base
        self.generation = generation  # of the file under it
        self.kind = base.kind
        self.delta = ExactIndex(dim)
        self.replayed = 0  # changes applied over the file: the measure of when a rewrite is due

    def __len__(self) -> int:
        return len(self.base) + len(self.delta)

    def add(self, keys: Keys, vectors: Matrix) -> None:
        self.remove(keys)
        self.delta.add(keys, vectors)
        self.replayed += len(keys)

    def remove(self, keys: Keys) -> None:
        before = len(self.base) + len(self.delta)
        self.base.remove(keys)
        self.delta.remove(keys)
        self.replayed += before - len(self.base) - len(self.delta)

    def vectors(self, keys: list[int]) -> Matrix | None:
        if not isinstance(self.base, MappedExact):
            return None
        base_keys, base_rows = self.base.held(keys)
        if len(self.delta) == 0:  # nothing added since the file was saved: its rows, in the order asked
            return base_rows
        found = {int(k): row for k, row in zip(base_keys.tolist(), base_rows, strict=True)}
        extra = self.delta.vectors([k for k in keys if k not in found])
        if extra is not None:
            found.update(zip([k for k in keys if k not in found and k in self.delta], extra, strict=True))
        rows = [found[k] for k in keys if k in found]
        return np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)

    def search(
        self, query: Matrix, k: int, allowed: Keys | None = None, ef: int | None = None, near: Matrix | None = None
    ) -> tuple[Keys, npt.NDArray[np.float32]]:
        """`near` (a vector searched just before, of which `query` is a variant) may narrow the saved index's scan;
        the additions since it was saved are always searched whole."""
        keys, scores = self.base.search(query, k, allowed, ef, near)
        if len(self.delta) == 0:
            return keys, scores
        more_keys, more_scores = self.delta.search(query, k, allowed)
        keys, scores = np.concatenate([keys, more_keys]), np.concatenate([scores, more_scores])
        best = top_k(scores.astype(np.float32), k)
        return keys[best], scores[best]

    def all_vectors(self) -> tuple[Keys, Matrix]:
        """Every vector held exactly (over a mapped matrix only: an HNSW graph keeps f16 copies)."""
        if not isinstance(self.base, MappedExact):
            raise TypeError("an HNSW index is rewritten from its own file, not from its vectors")
        keys, matrix = self.base.all_vectors()
        more_keys, more = self.delta.all_vectors()
        return np.concatenate([keys, more_keys]), np.vstack([matrix, more]).astype(np.float32)
