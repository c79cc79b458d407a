"""The centroid's sum (core.methods.pool.column_sums) adds the rows one after another,
as numpy.add.accumulate does, without holding the running sum of every row."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.methods import pool


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 60), st.integers(1, 5), st.integers(1, 7), st.integers(0, 10**6),
       st.booleans())
def test_the_sum_is_the_accumulated_rows_bit_for_bit(n, d, block, seed, drawn):
    rng = np.random.default_rng(seed)
    if drawn:  # values whose sums round, overflow, cancel and keep signed zeros
        choices = np.array([0.0, -0.0, 1.0, -1.0, 1e-300, 3.5e15, -7.25, 1e308, 0.1])
        rows = rng.choice(choices, size=(n, d))
    else:
        rows = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-8, 9, (n, d))
    saved = pool._ROWS_PER_SUM
    with np.errstate(over="ignore", invalid="ignore"):  # 1e308 + 1e308 overflows alike
        expected = np.add.accumulate(rows, axis=0)[-1]
        try:
            pool._ROWS_PER_SUM = block  # blocks of 1 to 7 rows: every boundary is crossed
            got = pool.column_sums(rows)
        finally:
            pool._ROWS_PER_SUM = saved
        assert got.tobytes() == expected.tobytes()
        assert pool.column_sums(rows).tobytes() == expected.tobytes()


def test_no_rows_sum_to_zeros():
    assert pool.column_sums(np.empty((0, 3))).tolist() == [0.0, 0.0, 0.0]
