"""Selection helpers on the search path: numpy's array methods, without the Python wrappers of its module functions
(a search calls a dozen of them, a microsecond each)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def largest_positions(values: npt.NDArray[np.floating], m: int) -> npt.NDArray[np.intp]:
    """The positions of the m largest of `values` (1 <= m <= len(values)), in no order: `np.argpartition`'s."""
    return values.argpartition(len(values) - m)[len(values) - m :]


def kth_largest(values: npt.NDArray[np.floating], k: int) -> float:
    """The k-th largest of `values` (1 <= k <= len(values)): what `np.partition(values, n - k)[n - k]` gives."""
    at = len(values) - k
    part = values.copy()
    part.partition(at)
    return float(part[at])
