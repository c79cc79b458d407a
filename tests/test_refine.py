"""Refinement (TFRP2, IGD): never raises SSE, keeps every group at k or more, always ends.

The numpy reference's own pieces (its split, its exact centroid index) are tested here
too; tests/test_refine_scale.py compares the compiled passes with it.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.measures.partition import sse
from core.methods.heuristics import fixed_size
from core.methods.pool import squared_distances
from core.methods.refine import refine
from core.methods.refine_reference import _Partition


def _partition(X, labels, k):
    Xc = X - X.mean(axis=0)
    sq = squared_distances(Xc, np.zeros(X.shape[1]))
    return _Partition(Xc, sq, labels, k, 1e-12 * sq.sum())


@st.composite
def partitions(draw):
    k = draw(st.integers(2, 5))
    n = draw(st.integers(2 * k, 12 * k))
    d = draw(st.integers(1, 3))
    X = draw(st.one_of(
        arrays(np.float64, (n, d), elements=st.integers(-3, 3).map(float)),
        arrays(np.float64, (n, d), elements=st.floats(-100, 100, allow_nan=False)),
    ))
    first = draw(st.sampled_from(["mdav", "cbfs", "tfrp"]))
    growth = draw(st.sampled_from(["nn", "nc"]))
    return X, k, fixed_size(X, k=k, first=first, growth=growth)


@settings(max_examples=150, deadline=None)
@given(partitions())
def test_igd_le_tfrp2_le_none_and_groups_stay_k(case):
    X, k, labels = case
    before = labels.copy()
    once = refine(X, labels, k=k, method="tfrp2")
    full = refine(X, labels, k=k, method="igd")
    np.testing.assert_array_equal(labels, before)  # input not modified
    for result in (once, full):
        assert result.shape == labels.shape and (result >= 0).all()
        assert np.bincount(result).min() >= k
    tolerance = 1e-9 * max(1.0, sse(X, labels))
    assert sse(X, full) <= sse(X, once) + tolerance
    assert sse(X, once) <= sse(X, labels) + tolerance


def test_decompose_dissolves_a_group_between_two_clusters():
    # Groups {0,1,2}, {3,4,5} and a middle group {6,7,8} that fits better spread out.
    X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [10.2], [4.9], [5.0], [5.1]])
    labels = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    # Dissolving the middle group does not pay here: every group is tight.
    assert sse(X, refine(X, labels, k=3, method="tfrp2")) == pytest.approx(sse(X, labels))
    # A loose group whose members sit next to other groups is dissolved.
    X2 = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [10.2], [0.3], [10.3], [0.4]])
    refined = refine(X2, labels, k=3, method="tfrp2")
    assert sse(X2, refined) < sse(X2, labels)
    assert len(np.unique(refined)) == 2
    assert np.bincount(refined).min() >= 3


def test_shrink_moves_a_record_to_a_better_group():
    # Group 0 has k+1 records; its outlier belongs next to group 1.
    X = np.array([[0.0], [0.1], [0.2], [0.3], [5.0], [5.1], [5.2], [4.9]])
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 0])
    refined = refine(X, labels, k=3, method="igd")
    assert sse(X, refined) < sse(X, labels)
    assert refined[7] == refined[4]


def test_split_keeps_only_improvements():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    labels = np.repeat(np.arange(4), 10)  # groups of 10 >= 2k for k = 3
    partition = _partition(X, labels, 3)
    before = partition.total_sse()
    partition.split_large_groups()
    assert partition.total_sse() <= before
    assert np.bincount(partition.labels()).min() >= 3


def test_igd_terminates_on_many_duplicates():
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]), 20, axis=0)
    labels = fixed_size(X, k=4)
    refined = refine(X, labels, k=4, method="igd")
    assert np.bincount(refined).min() >= 4
    assert sse(X, refined) == pytest.approx(0.0, abs=1e-9)


def test_centroid_index_agrees_with_brute_force_on_many_groups():
    """Above 256 groups the KD-tree index answers; its answers are the brute-force
    answers in the fixed form, also for records whose listed groups have all changed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    labels = fixed_size(X, k=5)
    partition = _partition(X, labels, 5)
    assert partition.index.tree is not None
    # Move some records so part of the tree is stale, then compare with brute force.
    for g in range(0, 60, 3):
        record = partition.members[g][0]
        partition._remove(g, [record])
        partition._add(g + 1, [record])
    # Touch every group listed for record 0 so that it must be compared with all.
    for g in partition.index.candidates[0]:
        partition.index.touch(int(g))
    assert len(partition.index.touched) <= max(256, partition.index.n_tree // 4)
    records = np.concatenate([[0], rng.choice(np.arange(1, len(X)), size=400, replace=False)])
    got = partition.index.nearest(records, exclude=7)
    live = np.flatnonzero(partition.count > 0)
    live = live[live != 7]
    centroids = partition.sums[live] / partition.count[live, None]
    expected = np.array([live[np.argmin(squared_distances(centroids, partition.X[r]))]
                         for r in records])
    np.testing.assert_array_equal(got, expected)
