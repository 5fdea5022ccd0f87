"""An int8 copy of an exact dense file, to find the rows worth scoring exactly.

A full float32 scan reads every vector (15 MB at 10k chunks of 384 dimensions, and it is read twice per hybrid
search); the int8 codes are a quarter of that and are scanned with SIMD integer dot products (simsimd). Each
row keeps a bound on how far its code's score can be from its true inner product, so the rows that could be
in the true top k are known exactly: a row whose upper bound is below the k-th best lower bound cannot be.
Only those rows (about 150-450 of 9,400 on e5 vectors) are scored in float32, so the top k is the full scan's
(the bounds make it exact, not approximate) and its scores differ from the full scan's only in float32 rounding
(a product over fewer rows: at most 3e-7 on the dev sets).

`dense-g{G}.i8` lives beside `dense-g{G}.exact`, holds its rows in the same (key) order, is written with it and
removed with it; one that is missing, damaged or from other keys is rebuilt from the mapped vectors.
"""

from __future__ import annotations

import logging
import os
import struct
import threading
import zlib
from pathlib import Path

import numpy as np
import numpy.typing as npt
import simsimd

log = logging.getLogger(__name__)

_MAGIC = b"AGRI8C01"
_HEADER = struct.Struct("<8sqqI")  # magic, rows, dim, crc32 of the keys (ties the codes to their .exact file)
# Below this many rows a float32 scan is cheaper than the codes' fixed costs (quantising the query, the bounds,
# the gather): on hotpotqa's e5 vectors 0.11 against 0.14 ms at 3,000 rows, even at 4,000, 0.24 against 0.19 at
# 5,000 (benchmarks/dense_codes.py, in benchmarks/scale.md).
MIN_ROWS = 4096
SUFFIX = ".i8"
# Float32 rounding in the bounds and in the exact rescoring is far below this; it keeps every row whose exact
# score could tie the k-th inside the candidates.
_MARGIN = 1e-5
_SLICE = 65536

Matrix = npt.NDArray[np.float32]


def codes_path(exact_path: Path) -> Path:
    return exact_path.with_suffix(SUFFIX)


def _keys_crc(keys: npt.NDArray[np.int64]) -> int:
    return zlib.crc32(np.ascontiguousarray(keys, dtype="<i8").tobytes())


class Int8Codes:
    """Per-row int8 codes of the centred vectors, with each row's scale and error bounds."""

    def __init__(
        self,
        mean: Matrix,
        scale: Matrix,
        error: Matrix,
        norm: Matrix,
        codes: npt.NDArray[np.int8],
    ) -> None:
        self.mean = mean  # (dim,) the centre: e5 vectors share a large common direction that int8 would waste
        self.scale = scale  # (rows,) row i's code times scale[i] approximates vector i minus the mean
        self.error = error  # (rows,) an upper bound of |vector - mean - scale * code|
        self.norm = norm  # (rows,) |scale * code|
        self.codes = codes  # (rows, dim)
        self._work: Matrix | None = None  # (2, rows) float32 buffers of `candidates`, made on its first call
        self._busy = threading.Lock()

    def __len__(self) -> int:
        return len(self.scale)

    @classmethod
    def build(cls, matrix: Matrix) -> Int8Codes:
        rows, dim = matrix.shape
        mean = matrix.mean(axis=0, dtype=np.float64).astype(np.float32) if rows else np.zeros(dim, np.float32)
        parts = [_quantise(np.asarray(matrix[i : i + _SLICE]), mean) for i in range(0, rows, _SLICE)]
        if not parts:
            empty = np.zeros(0, dtype=np.float32)
            return cls(mean, empty, empty, empty, np.zeros((0, dim), dtype=np.int8))
        scale, error, norm, codes = (np.concatenate(column) for column in zip(*parts, strict=True))
        return cls(mean, scale, error, norm, codes)

    def write(self, path: Path, keys: npt.NDArray[np.int64]) -> None:
        """Written whole under a temporary name and renamed, like the `.exact` file beside it."""
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as out:
                out.write(_HEADER.pack(_MAGIC, len(self), len(self.mean), _keys_crc(keys)))
                for array in (self.mean, self.scale, self.error, self.norm):
                    out.write(np.ascontiguousarray(array, dtype="<f4").tobytes())
                out.write(np.ascontiguousarray(self.codes, dtype=np.int8).tobytes())
            tmp.replace(path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    @classmethod
    def open(cls, path: Path, keys: npt.NDArray[np.int64], dim: int) -> Int8Codes:
        """The codes saved at `path` for exactly these keys; ValueError if the file is not that."""
        rows = len(keys)
        with path.open("rb") as handle:
            header = handle.read(_HEADER.size)
        if len(header) < _HEADER.size:
            raise ValueError("truncated header")
        magic, have_rows, have_dim, crc = _HEADER.unpack(header)
        size = _HEADER.size + 4 * (dim + 3 * rows) + rows * dim
        if magic != _MAGIC or (have_rows, have_dim) != (rows, dim) or path.stat().st_size != size:
            raise ValueError(f"not a whole int8 code file of {rows} {dim}-dimensional vectors")
        if crc != _keys_crc(keys):
            raise ValueError("codes of other keys than the dense file beside them")
        floats = np.fromfile(path, dtype="<f4", count=dim + 3 * rows, offset=_HEADER.size).astype(np.float32)
        mean, scale, error, norm = np.split(floats, [dim, dim + rows, dim + 2 * rows])
        offset = _HEADER.size + 4 * (dim + 3 * rows)
        codes = np.memmap(path, dtype=np.int8, mode="r", offset=offset, shape=(rows, dim)).view(np.ndarray)
        return cls(mean, scale, error, norm, codes)

    @classmethod
    def beside(cls, exact_path: Path, keys: npt.NDArray[np.int64], matrix: Matrix) -> Int8Codes:
        """The codes saved beside an exact file, or rebuilt from its vectors (and saved, if the folder allows)."""
        path = codes_path(exact_path)
        try:
            return cls.open(path, keys, matrix.shape[1])
        except FileNotFoundError:
            reason = "missing"
        except (OSError, ValueError) as exc:  # derived data: never trusted when it does not fit, rebuilt
            reason = f"damaged ({exc})"
        log.info("%s: int8 codes %s; rebuilding them from the dense file", path, reason)
        built = cls.build(matrix)
        try:
            built.write(path, keys)
        except OSError as exc:  # a folder that cannot be written: the codes in memory serve
            log.debug("%s: int8 codes not saved (%s)", path, exc)
        return built

    def candidates(self, query: Matrix, k: int, alive: npt.NDArray[np.bool_] | None = None) -> npt.NDArray[np.intp]:
        """Ascending rows that include every row of the exact top k of `matrix @ query` (dead rows excluded)."""
        top = float(np.abs(query).max()) if len(query) else 0.0
        if top == 0.0:  # a zero query scores every row 0: all rows tie, the exact scan decides
            rows = np.arange(len(self), dtype=np.intp)
            return rows if alive is None else rows[alive]
        if self._busy.acquire(blocking=False):  # the buffers of this object, else (another thread in) fresh ones
            try:
                return self._candidates(query, k, alive, top, self._buffers())
            finally:
                self._busy.release()
        return self._candidates(query, k, alive, top, np.empty((2, len(self)), dtype=np.float32))

    def _buffers(self) -> Matrix:
        if self._work is None:
            self._work = np.empty((2, len(self)), dtype=np.float32)
        return self._work

    def _candidates(
        self, query: Matrix, k: int, alive: npt.NDArray[np.bool_] | None, top: float, work: Matrix
    ) -> npt.NDArray[np.intp]:
        """The float32 operations of each row in the same order as ever, into reused buffers: a pass over 10k
        rows costs about as much as allocating its output."""
        step = top / 127
        # |query / step| is at most top / step, 127 to within an ulp, so rint stays in [-127, 127]: no clip.
        q8 = np.rint(query / step).astype(np.int8)
        residual = query - q8.astype(np.float32) * step
        rest = float(np.sqrt(residual.dot(residual)))  # np.linalg.norm of a 1-d float32 array, bit for bit
        bound, low = work[0], work[1]
        # (Not cdist's `out=`: simsimd 6.5 then returns None without a reference, which crashes the interpreter.)
        approx = np.asarray(simsimd.cdist(q8[None, :], self.codes, metric="dot", threads=1, out_dtype="float32"))[0]
        approx *= np.multiply(self.scale, np.float32(step), out=low)  # dot * (scale * step), as before, in place
        # |q . (x - mean) - approx| <= |q| * error + |q - step * q8| * |scale * code|; <q, mean> is common to all rows.
        np.multiply(self.error, np.float32(np.sqrt(query.dot(query))), out=bound)
        bound += np.multiply(self.norm, np.float32(rest), out=low)
        bound += np.float32(_MARGIN)
        np.subtract(approx, bound, out=low)
        high = np.add(approx, bound, out=bound)
        if alive is not None:
            low[~alive] = -np.inf
            high[~alive] = -np.inf
            if int(alive.sum()) <= k:
                return np.flatnonzero(alive)
        if k >= len(low):
            return np.flatnonzero(high > -np.inf)
        low.partition(len(low) - k)  # in place: the k-th best lower bound lands at its sorted position
        return np.flatnonzero(high >= low[len(low) - k])


def _quantise(part: Matrix, mean: Matrix) -> tuple[Matrix, Matrix, Matrix, npt.NDArray[np.int8]]:
    centred = part.astype(np.float64) - mean
    scale = np.abs(centred).max(axis=1) / 127
    safe = np.where(scale > 0, scale, 1.0)
    codes = np.clip(np.rint(centred / safe[:, None]), -127, 127).astype(np.int8)
    restored = codes * scale[:, None]
    # Rounded up, so the stored float32 bound is never below the float64 error it stands for.
    error = np.nextafter(np.linalg.norm(centred - restored, axis=1).astype(np.float32), np.float32(np.inf))
    norm = np.nextafter(np.linalg.norm(restored, axis=1).astype(np.float32), np.float32(np.inf))
    return scale.astype(np.float32), error, norm, codes
