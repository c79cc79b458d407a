"""SubsetIndex (one spatial index per subset) takes from every subset what a RecordPool
of that subset alone gives: ``want[g]`` successive nearest records, ties to the first in
the input, under any sequence of points."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.compiled import COMPILED
from core.methods.pool import RecordPool
from tests.test_spatial_pool import matrix

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 300), d=st.integers(1, 3), seed=st.integers(0, 10**6),
       groups=st.integers(1, 7),
       kind=st.sampled_from(["normal", "grid", "few rows", "signed zeros"]))
def test_take_equals_one_record_pool_per_subset(n, d, seed, groups, kind):
    from core.methods.spatial_subsets import SubsetIndex

    rng = np.random.default_rng(seed)
    X = matrix(n, d, seed, kind)
    group_of = rng.integers(0, groups, n)
    subsets = [np.flatnonzero(group_of == g) for g in range(groups)]
    alone = [RecordPool(X[m]) for m in subsets]
    index = SubsetIndex(X, subsets)
    while any(p.count for p in alone):
        point = X[rng.integers(0, n)] + rng.choice([0.0, 0.5, -3.0])
        want = np.array([min(int(rng.integers(0, 3)), p.count) for p in alone])
        expected = [int(m[p.remove(p.nearest(point, 1))[0]])
                    for p, m, w in zip(alone, subsets, want) for _ in range(w)]
        assert index.take(point, want).tolist() == sorted(expected)


def test_a_subset_far_from_the_point_still_gives_its_nearest():
    """The subset at the other end of the data answers exactly, however many records of
    the near subsets lie in between (the case the per-subset indexes are for)."""
    from core.methods.spatial_subsets import SubsetIndex

    rng = np.random.default_rng(7)
    X = rng.normal(size=(4000, 4))
    X[:2000, 0] += 6.0
    subsets = [np.arange(2000), np.arange(2000, 4000)]
    index = SubsetIndex(X, subsets)
    point = X[int(np.argmax(X[:, 0]))]
    got = index.take(point, np.array([2, 3]))
    far = subsets[1][np.argsort(((X[subsets[1]] - point) ** 2).sum(axis=1), kind="stable")[:3]]
    near = subsets[0][np.argsort(((X[subsets[0]] - point) ** 2).sum(axis=1), kind="stable")[:2]]
    assert got.tolist() == sorted(far.tolist() + near.tolist())
