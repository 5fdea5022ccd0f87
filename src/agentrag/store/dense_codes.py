"""An 8-bit copy of an exact dense file, to find the rows worth scoring exactly.

A full float32 scan reads every vector (15 MB at 10k chunks of 384 dimensions, and it is read twice per hybrid
search); the 8-bit codes are a quarter of that and are scanned with SIMD integer dot products (simsimd). Each
row keeps the length of its code's error, and a row is scored in float32 only if its code's score is within
twice the error bound of the k-th best code score: a row further below could only be in the true top k if
its rounding errors landed beyond the bound.

The bound is statistical, not the worst case (issue 14 allows the same rankings within measurement): a code's
error and the query's rounding error are sums over the dimensions of independent roundings, so their inner
product with a vector of length L is spread like L * |error| / sqrt(dim), and the bound is five such spreads
(with the largest error of any row). The worst case (the Cauchy-Schwarz bound, L * |error|) is sqrt(dim) / 5 =
3.9 times wider at 384 dimensions and had 130-200 rows of 10k scored in float32; this bound has 60-90. Both kept
every query's and every feedback vector's top 50 of a full float32 scan on the dev sets and the scale corpus
(BENCHMARKS.md, issue 14, branch hG); the scores of the rows kept differ from a full scan's only in float32
rounding (a product over fewer rows: at most 3e-7). A variant of the query searched next (the hybrid search's
feedback vector) may score only the rows the query's codes scored best, all of them exactly: `candidates`' `near`
(an approximation: its top k is that of those rows).

The codes are int8 values c in [-127, 127], stored shifted as unsigned bytes c + 128, and the int8 query q is
shifted alike: simsimd has no int8-by-uint8 dot, and its uint8 one scanned 10k codes of 384 dimensions in 117-122
against its int8 one's 139-141 microseconds on the benchmark machine (an AMD EPYC with AVX-512 VNNI). The shift is
undone exactly: (q + 128) . (c + 128) = q . c + 128 * (sum(q) + sum(c + 128)), every term an integer that a
float64 holds exactly, with each row's sum(c + 128) saved beside its code; so the code scores are those of the
int8 codes bit for bit, and so are the rows picked. A scan of every row instead multiplies the query by a copy of
the int8 codes packed in memory for numkong's matrix kernel (made at the first scan), which returns q . c itself as
an int32: 130 against 177 microseconds for the code scores of 9,400 rows on an Intel Xeon with AVX-512 VNNI
(BENCHMARKS.md, issue 14, "Another host"), the same integers, so the same scores bit for bit.

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

import numkong
import numpy as np
import numpy.typing as npt
import simsimd

from agentrag.store.select import kth_largest, largest_positions

log = logging.getLogger(__name__)

_MAGIC = b"AGRI8C02"  # 01: int8 codes and no sums (rebuilt, as a damaged file is)
_HEADER = struct.Struct("<8sqqI")  # magic, rows, dim, crc32 of the keys (ties the codes to their .exact file)
# Below this many rows a float32 scan is cheaper than the codes' fixed costs (quantising the query, the bounds,
# the gather): on hotpotqa's e5 vectors 0.11 against 0.14 ms at 3,000 rows, even at 4,000, 0.24 against 0.19 at
# 5,000 (benchmarks/dense_codes.py, in benchmarks/scale.md).
MIN_ROWS = 4096
SUFFIX = ".i8"
# Float32 rounding in the bounds and in the exact rescoring is far below this; it keeps every row whose exact
# score could tie the k-th inside the candidates.
_MARGIN = 1e-5
# How many spreads of a rounding error's inner product (|error| * |vector| / sqrt(dim)) the bound allows; a normal
# variable passes five of its standard deviations about once in 1.7 million draws.
_SPREADS = 5.0
# The rows within the bound of the k-th best are looked for among the best this many times k first.
_AHEAD = 3
# The share of the rows a variant of the last query scores (`candidates`' `near`): the best of that query's code
# order, every one in float32, with no code scan. The codes' own pass over such a shortlist (a gather of its codes,
# which the full scan does not bring into the cache: it reads numkong's packed copy, then a scan and the bound)
# cost more than it spared at k = 60: the twentieth scored exactly was 0.017 ms faster than through its codes, with
# the same rows kept. 3% of the rows, side by side: hotpotqa's hybrid search (k = 60) 1.025 -> 0.945 ms CPU, the 10k
# scale corpus's (k = 10) 0.879 -> 0.825; hotpotqa's retrieval figures unchanged to four decimals, hybrid top-10
# agreement with the twentieth's codes 0.9987 there and 0.9950 at 10k (BENCHMARKS.md, issue 14, "Feedback rows
# scored exactly"). Earlier: a tenth, then a twentieth, through the codes.
_NEAR_SHARE = 0.03
# ... and at least this many times k rows: what the share gives on hotpotqa at k = 60 (282 rows, 4.7 k). The share of a
# smaller corpus would be fewer, and fewer rows keep less of the feedback channel: of its top 10 against a scan of
# every row, on hotpotqa, 94.7% of the queries keep it whole from 3 k rows, 96.5% from 4 k, 97.3% from 4.7 k, 99.2%
# from 7.8 k.
_NEAR_AT_LEAST = 5
_SLICE = 65536
# Up to this many rows a full scan packs the codes in memory for numkong (a copy of 50 MB at 384 dimensions); past
# it (an exact index forced far beyond the ANN switch) simsimd scans the mapped file.
_PACK_MAX_ROWS = 1 << 17

Matrix = npt.NDArray[np.float32]
Sums = npt.NDArray[np.int32]


def codes_path(exact_path: Path) -> Path:
    return exact_path.with_suffix(SUFFIX)


def _keys_crc(keys: npt.NDArray[np.int64]) -> int:
    return zlib.crc32(np.ascontiguousarray(keys, dtype="<i8").tobytes())


Codes = npt.NDArray[np.uint8]
_SHIFT = 128  # a stored code is its int8 value plus this


class Int8Codes:
    """Per-row int8 codes of the centred vectors (stored shifted to uint8), with each row's scale and error bounds."""

    def __init__(self, mean: Matrix, scale: Matrix, error: Matrix, norm: Matrix, codes: Codes, sums: Sums) -> None:
        self.mean = mean  # (dim,) the centre: e5 vectors share a large common direction that int8 would waste
        self.scale = scale  # (rows,) row i's code times scale[i] approximates vector i minus the mean
        self.error = error  # (rows,) an upper bound of |vector - mean - scale * code|
        self.norm = norm  # (rows,) |scale * code|
        self.codes = codes  # (rows, dim) the int8 codes plus 128
        self.sums = sums  # (rows,) the sum of each row's stored (shifted) codes
        self._shifted = _SHIFT * sums.astype(np.float64)  # what the shift adds to a row's dot, less 128 * sum(q)
        # The largest error and code length of any row: one bound for every row (per-row bounds cost more passes
        # over the rows than the few extra rows they spare the float32 scoring).
        self._error = float(error.max()) if len(error) else 0.0
        self._norm = float(norm.max()) if len(norm) else 0.0
        self._last = threading.local()  # per thread: the last full scan's query and code scores (`near`)
        self._packed: numkong.PackedMatrix | None = None  # the int8 codes for numkong's kernel: `_packed_codes`

    def __len__(self) -> int:
        return len(self.scale)

    @classmethod
    def build(cls, matrix: Matrix) -> Int8Codes:
        rows, dim = matrix.shape
        mean = matrix.mean(axis=0, dtype=np.float64).astype(np.float32) if rows else np.zeros(dim, np.float32)
        parts = [_quantise(np.asarray(matrix[i : i + _SLICE]), mean) for i in range(0, rows, _SLICE)]
        if not parts:
            empty = np.zeros(0, dtype=np.float32)
            return cls(mean, empty, empty, empty, np.zeros((0, dim), dtype=np.uint8), np.zeros(0, dtype=np.int32))
        scale, error, norm, codes = (np.concatenate(column) for column in zip(*parts, strict=True))
        return cls(mean, scale, error, norm, codes, codes.sum(axis=1, dtype=np.int64).astype(np.int32))

    def write(self, path: Path, keys: npt.NDArray[np.int64]) -> None:
        """Written whole under a temporary name and renamed, like the `.exact` file beside it."""
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as out:
                out.write(_HEADER.pack(_MAGIC, len(self), len(self.mean), _keys_crc(keys)))
                for array in (self.mean, self.scale, self.error, self.norm):
                    out.write(np.ascontiguousarray(array, dtype="<f4").tobytes())
                out.write(np.ascontiguousarray(self.sums, dtype="<i4").tobytes())
                out.write(np.ascontiguousarray(self.codes, dtype=np.uint8).tobytes())
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
        size = _HEADER.size + 4 * (dim + 4 * rows) + rows * dim
        if magic == b"AGRI8C01":
            raise ValueError("the int8 codes of an older format")
        if magic != _MAGIC or (have_rows, have_dim) != (rows, dim) or path.stat().st_size != size:
            raise ValueError(f"not a whole int8 code file of {rows} {dim}-dimensional vectors")
        if crc != _keys_crc(keys):
            raise ValueError("codes of other keys than the dense file beside them")
        floats = np.fromfile(path, dtype="<f4", count=dim + 3 * rows, offset=_HEADER.size).astype(np.float32)
        mean, scale, error, norm = np.split(floats, [dim, dim + rows, dim + 2 * rows])
        offset = _HEADER.size + 4 * (dim + 3 * rows)
        sums = np.fromfile(path, dtype="<i4", count=rows, offset=offset).astype(np.int32)
        codes = np.memmap(path, dtype=np.uint8, mode="r", offset=offset + 4 * rows, shape=(rows, dim))
        return cls(mean, scale, error, norm, codes.view(np.ndarray), sums)

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

    def candidates(
        self,
        query: Matrix,
        k: int,
        alive: npt.NDArray[np.bool_] | None = None,
        near: Matrix | None = None,
    ) -> npt.NDArray[np.intp]:
        """Ascending rows whose code scores are close enough to the k-th best to hold the exact top k of
        `matrix @ query` (dead rows excluded): within twice the statistical bound of the module's docstring.

        `near`: a vector this thread searched just before, of which `query` is a variant (the hybrid search's
        feedback vector: the query moved toward its best hits). The rows returned then are the 3% that `near`'s
        codes scored best, at least 5 k of them (`_keep`), to be scored exactly, with no code scan: the feedback
        vector's top 10 of a full scan lies in hotpotqa's 3% for 97.3% of its queries."""
        shortlist = self._shortlist(near, k)
        if shortlist is not None:
            return shortlist if alive is None else shortlist[alive[shortlist]]
        top = float(np.abs(query).max()) if len(query) else 0.0
        if top == 0.0:  # a zero query scores every row 0: all rows tie, the exact scan decides
            rows = np.arange(len(self), dtype=np.intp)
            return rows if alive is None else rows[alive]
        step = top / 127
        # |query / step| is at most top / step, 127 to within an ulp, so rint stays in [-127, 127]: no clip.
        q8 = np.rint(query / step).astype(np.int8)
        residual = query - q8.astype(np.float32) * step
        rest = float(np.sqrt(residual.dot(residual)))
        # q . (x - mean) - step * scale * (q8 . code) = q . error + (q - step * q8) . (scale * code); <q, mean> is
        # common to all rows. Scores in units of `step` (a common factor): dot * scale.
        spread = (float(np.sqrt(query.dot(query))) * self._error + rest * self._norm) / np.sqrt(len(self.mean))
        band = 2 * (_SPREADS * spread + _MARGIN) / step
        keep = self._keep(k)
        picked, approx, best = self._pick(q8, k, band, alive, keep)
        self._last.scanned = (query.tobytes(), approx, keep, best)  # for a variant of this query searched next
        return picked

    def _pick(
        self,
        q8: npt.NDArray[np.int8],
        k: int,
        band: float,
        alive: npt.NDArray[np.bool_] | None,
        keep: int = 0,
    ) -> tuple[npt.NDArray[np.intp], Matrix, npt.NDArray[np.intp] | None]:
        """The rows near the k-th best code score, ascending, the code scores (dead rows at -inf) and, with `keep`,
        the `keep` best rows, unordered: one partition for both the pick and the shortlist of a variant of this
        query searched next (`_shortlist`)."""
        approx = self._code_scores(q8)
        if alive is not None:
            approx[~alive] = -np.inf
        n = len(approx)
        best = largest_positions(approx, keep) if 0 < keep < n else None
        if alive is not None and int(alive.sum()) <= k:
            return np.flatnonzero(alive), approx, best
        if k >= n:
            return np.flatnonzero(approx > -np.inf), approx, best
        return _near_the_kth(approx, k, band, best), approx, best

    def _code_scores(self, q8: npt.NDArray[np.int8]) -> Matrix:
        """`(q8 . code) * scale` of each row: the int8 codes' scores (from the packed copy, or the shifted codes)."""
        packed = self._packed_codes()
        if packed is not None:
            # int32 products, exact (|q8 . code| <= 127 * 127 * dim); to float32 as the float64 ones below are
            scores: Matrix = np.asarray(numkong.dots_packed(q8[None, :], packed))[0].astype(np.float32)
            scores *= self.scale
            return scores
        shifted_query = q8.view(np.uint8) ^ np.uint8(_SHIFT)  # q8 + 128: in [1, 255], as |q8| <= 127
        # float64 out: a shifted dot reaches 255 * 255 * dim, past float32's exact integers (2**24) at 258 dims.
        # (Not cdist's `out=`: simsimd 6.5 then returns None without a reference, which crashes the interpreter.)
        dots = simsimd.cdist(shifted_query[None, :], self.codes, metric="dot", threads=1, out_dtype="float64")
        exact: npt.NDArray[np.float64] = np.asarray(dots)[0]
        exact -= self._shifted
        exact -= _SHIFT * int(q8.sum(dtype=np.int64))  # now q8 . code, the integer the int8 kernel returned
        approx = exact.astype(np.float32)
        approx *= self.scale
        return approx

    def _packed_codes(self) -> numkong.PackedMatrix | None:
        """The int8 codes packed for numkong's kernel, made at the first full scan (3 ms at 9,400 rows); None past
        `_PACK_MAX_ROWS`. Two threads making it at once each make the same one."""
        packed = self._packed
        if packed is None and 0 < len(self) <= _PACK_MAX_ROWS:
            packed = self._packed = numkong.dots_pack((self.codes ^ np.uint8(_SHIFT)).view(np.int8))
        return packed

    def _shortlist(self, near: Matrix | None, k: int) -> npt.NDArray[np.intp] | None:
        """The rows `near`'s scan in this thread scored best, ascending; None when that scan is not remembered
        (another thread's, another vector's) or the shortlist would be most of the rows."""
        scanned = getattr(self._last, "scanned", None)
        if near is None or scanned is None or scanned[0] != near.tobytes():
            return None
        approx, scanned_keep, best = scanned[1:]
        keep = self._keep(k)
        if not keep:
            return None
        if keep != scanned_keep or best is None:  # another depth than the scan's: its own partition
            best = largest_positions(approx, keep)
        shortlist: npt.NDArray[np.intp] = best.copy()  # the remembered partition stays as it is
        shortlist.sort()
        return shortlist

    def _keep(self, k: int) -> int:
        """How many of a full scan's best rows a variant of its query scores (`_NEAR_SHARE`, at least
        `_NEAR_AT_LEAST * k`); 0 when that would be most of the rows (the variant scans them all, through their
        codes)."""
        keep = max(int(len(self) * _NEAR_SHARE), _NEAR_AT_LEAST * k)
        return 0 if keep >= len(self) // 2 else keep


def _near_the_kth(
    approx: Matrix, k: int, band: float, best: npt.NDArray[np.intp] | None = None
) -> npt.NDArray[np.intp]:
    """Ascending rows whose score is at least the k-th best less `band` (k < len(approx)). The best `_AHEAD * k`
    rows (or `best`, the positions of the best m >= k rows, when the caller has partitioned already) usually hold
    all of them (60-90 rows for a top 50 on e5 vectors); when the worst of those still passes, every row is
    compared."""
    n = len(approx)
    if best is None or len(best) < k:
        ahead = min(n, _AHEAD * k)
        best = largest_positions(approx, ahead)
    scores = approx[best]
    kth = kth_largest(scores, k)
    if len(best) < n and float(scores.min()) >= kth - band:
        return (approx >= kth - band).nonzero()[0]
    picked = best[scores >= kth - band]
    picked.sort()
    return picked


def _quantise(part: Matrix, mean: Matrix) -> tuple[Matrix, Matrix, Matrix, Codes]:
    """Each row's scale, error and code length, and its int8 codes shifted to uint8."""
    centred = part.astype(np.float64) - mean
    scale = np.abs(centred).max(axis=1) / 127
    safe = np.where(scale > 0, scale, 1.0)
    codes = np.clip(np.rint(centred / safe[:, None]), -127, 127)
    restored = codes * scale[:, None]
    # Rounded up, so the stored float32 bound is never below the float64 error it stands for.
    error = np.nextafter(np.linalg.norm(centred - restored, axis=1).astype(np.float32), np.float32(np.inf))
    norm = np.nextafter(np.linalg.norm(restored, axis=1).astype(np.float32), np.float32(np.inf))
    return scale.astype(np.float32), error, norm, (codes + _SHIFT).astype(np.uint8)
