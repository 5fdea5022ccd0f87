"""The selection helpers give what numpy's module functions give."""

import numpy as np

from agentrag.store.select import kth_largest, largest_positions


def test_the_kth_largest_is_numpys_partition_and_leaves_the_values_as_they_were() -> None:
    rng = np.random.default_rng(5)
    for values in (rng.random(1000), rng.integers(0, 5, 300).astype(np.float64), rng.random(7).astype(np.float32)):
        before = values.copy()
        for k in (1, 2, len(values) // 2, len(values)):
            assert kth_largest(values, k) == np.partition(values, len(values) - k)[len(values) - k]
        assert np.array_equal(values, before)


def test_the_largest_positions_are_numpys_argpartition() -> None:
    rng = np.random.default_rng(6)
    values = rng.random(500)
    for m in (1, 60, 500):
        got = largest_positions(values, m)
        assert np.array_equal(got, np.argpartition(values, 500 - m)[500 - m :])
        assert set(got.tolist()) == set(np.argsort(values)[500 - m :].tolist())
