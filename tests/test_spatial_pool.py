"""SpatialPool gives RecordPool's answers exactly, under removals in any order.

Positions differ (record numbers against buffer offsets), so answers are compared as
record numbers through each pool's ``records_at``. The t-closeness methods built on it
give the reference's labels, swaps and merges.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.compiled import COMPILED
from core.methods import tcloseness, tfirst
from core.methods.pool import RecordPool, squared_distances
from core.methods.spatial_pool import SpatialPool
from core.privacy.attributes import TCloseAttribute

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")


def matrix(n, d, seed, kind):
    rng = np.random.default_rng(seed)
    if kind == "grid":  # many exact ties and duplicates
        return rng.integers(0, 3, size=(n, d)).astype(float)
    if kind == "few rows":
        return rng.normal(size=(3, d))[rng.integers(0, 3, n)]
    if kind == "signed zeros":
        return rng.choice([-0.0, 0.0, 1.0], size=(n, d))
    if kind == "indicators":  # a nominal attribute's block, as the embedding makes it
        X = np.eye(d + 1)[rng.integers(0, d + 1, n)][:, :d] * 0.7  # some rows of none
        return np.column_stack([X, rng.integers(0, 3, n) * 0.7])
    return rng.normal(size=(n, d))


def same_answers(X, seed, steps, leaf_size=None, records=None):
    """Drive both pools with the same random questions and removals; compare every answer
    (``leaf_size``: the spatial pool's, its own by default; ``records``: the spatial pool
    built on those alone, the reference with the others removed)."""
    rng = np.random.default_rng(seed)
    reference = RecordPool(X)
    pool = SpatialPool(X, leaf_size=leaf_size, records=records)
    if records is not None:
        reference.remove(np.setdiff1d(np.arange(len(X)), records))
    for _ in range(steps):
        if not reference.count:
            break
        live = reference.remaining()
        np.testing.assert_array_equal(pool.remaining(), live)
        assert reference.count == pool.count
        centroid = reference.centroid()
        np.testing.assert_array_equal(pool.centroid(), centroid)  # bit for bit
        assert reference.records_at(reference.farthest(centroid)) == pool.farthest(centroid)
        point = X[rng.choice(live)] if rng.random() < 0.7 else rng.normal(size=X.shape[1])
        assert reference.records_at(reference.farthest(point)) == pool.farthest(point)
        seed_record = int(rng.choice(live)) if rng.random() < 0.7 else None
        others = live[live != seed_record]
        excluded = np.sort(rng.choice(others, size=min(len(others), rng.integers(0, 4)),
                                      replace=False)) if rng.random() < 0.4 else None
        include_ref = None if seed_record is None else int(
            reference.positions_of([seed_record])[0])
        exclude_ref = None if excluded is None else reference.positions_of(excluded)
        m = int(rng.integers(1, reference.count + 1))
        expected = reference.records_at(reference.nearest(point, m, include=include_ref,
                                                          exclude=exclude_ref))
        got = pool.nearest(point, m, include=seed_record, exclude=excluded)
        np.testing.assert_array_equal(got, expected)
        n_excluded = 0 if excluded is None else len(excluded)
        if m < reference.count - n_excluded:
            order, distances = reference.nearest_sorted(point, m, include=include_ref,
                                                        exclude=exclude_ref)
            got_order, got_distances = pool.nearest_sorted(point, m, include=seed_record,
                                                           exclude=excluded)
            np.testing.assert_array_equal(got_order, reference.records_at(order))
            np.testing.assert_array_equal(got_distances, distances)
        same_stream(reference, pool, X, point, seed_record, rng)
        # remove arbitrary live records (not only the first of equal rows), any order
        size = int(rng.integers(1, min(len(live), 8) + 1))
        gone = rng.choice(live, size=size, replace=False)
        removed = reference.remove(reference.positions_of(np.sort(gone))[
            np.argsort(np.argsort(gone))])
        np.testing.assert_array_equal(pool.remove(gone), removed)
        np.testing.assert_array_equal(removed, gone)


def same_stream(reference, pool, X, point, include, rng):
    """A stream taken in random pieces gives every live record in the reference's order:
    exact distance (columns summed in order), then record number, ``include`` first."""
    live = reference.remaining()  # record numbers
    d2 = squared_distances(X[live], point)
    expected = live[np.lexsort((live, d2))]
    if include is not None:
        expected = np.concatenate(([include], expected[expected != include]))
    stream = pool.nearest_stream(point, include=include,
                                 expect=int(rng.integers(0, 2 * len(live) + 2)))
    pieces = []
    while True:
        piece = stream.take(int(rng.choice([1, 2, 5, rng.integers(1, len(live) + 2)])))
        if not piece.size:
            break
        pieces.append(piece)
    np.testing.assert_array_equal(np.concatenate(pieces), expected)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 90), d=st.integers(1, 4), seed=st.integers(0, 10**6),
       kind=st.sampled_from(["normal", "grid", "few rows", "signed zeros",
                             "indicators"]))
def test_same_answers_as_record_pool(n, d, seed, kind):
    same_answers(matrix(n, d, seed, kind), seed, steps=60)


@pytest.mark.parametrize("kind", ["normal", "grid", "few rows"])
def test_same_answers_on_a_deep_tree(kind):
    same_answers(matrix(1500, 3, 7, kind), 7, steps=120)


@pytest.mark.parametrize("leaf_size", [2, 128])
def test_a_pool_on_leaves_of_its_callers_size_answers_the_same(leaf_size):
    """tc-tfirst's and tc-bucket's pools take MDAV's leaves
    (:func:`core.methods.tfirst_loop.build_indexes`): the leaves hold about that many
    rows (halves of halves, so one more at most), and every answer is the record
    pool's."""
    X = matrix(1500, 5, 11, "normal")
    pool = SpatialPool(X, leaf_size=leaf_size)
    widths = pool._stop[pool._first_leaf:] - pool._start[pool._first_leaf:]
    assert leaf_size // 2 < widths.max() <= leaf_size + 1
    same_answers(X, 11, steps=80, leaf_size=leaf_size)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 200), d=st.integers(1, 4), seed=st.integers(0, 10**6),
       kind=st.sampled_from(["normal", "grid", "few rows", "signed zeros", "indicators"]),
       share=st.floats(0.01, 0.5), leaf_size=st.sampled_from([None, 2, 128]))
def test_a_pool_built_on_the_records_left_answers_as_the_pool_they_were_left_in(
        n, d, seed, kind, share, leaf_size):
    """tc-tfirst and tc-bucket build their pool again on the records left as they halve
    (:func:`core.methods.tfirst_loop.pool_on_live`): a pool on some records (at most half,
    so the reference's sum is taken afresh too) answers every question, its centroid
    included, as the reference with the others removed, removals after it as well."""
    X = matrix(n, d, seed, kind)
    rng = np.random.default_rng(seed)
    records = np.sort(rng.choice(n, size=max(1, int(share * n)), replace=False))
    same_answers(X, seed, steps=40, leaf_size=leaf_size, records=records)


def test_a_stream_is_only_read_while_the_pool_stays_as_it_was():
    pool = SpatialPool(np.arange(10.0).reshape(-1, 1))
    stream = pool.nearest_stream(np.array([3.2]), include=0)
    assert stream.take(3).tolist() == [0, 3, 4]
    pool.remove(np.array([9]))
    with pytest.raises(RuntimeError, match="pool changed"):
        stream.take(1)
    stream = pool.nearest_stream(np.array([3.2]))
    pool.nearest_stream(np.array([0.0]))  # a second stream takes the shared buffers
    with pytest.raises(RuntimeError, match="pool changed"):
        stream.take(1)


def test_distances_that_overflow_to_inf_come_last_in_record_order():
    X = np.array([[0.0], [1.0], [1e200], [2.0], [-1e200], [3.0]])
    reference, pool = RecordPool(X), SpatialPool(X)
    point = np.array([0.0])
    with np.errstate(over="ignore"):  # the squares of ±1e200 overflow, as they should
        expected, _ = reference.nearest_sorted(point, 5, include=0)
    assert expected.tolist() == [0, 1, 3, 5, 2]
    assert pool.nearest_sorted(point, 5, include=0)[0].tolist() == [0, 1, 3, 5, 2]
    stream = pool.nearest_stream(point, include=0)
    pieces = [stream.take(2) for _ in range(4)]
    assert [p.tolist() for p in pieces] == [[0, 1], [3, 5], [2, 4], []]


def test_buckets_follow_the_distance_even_when_the_scale_overflows():
    """A distance far past the table's range goes to the last bucket, not through an
    overflowing cast to some other one."""
    from core.methods import spatial_pool_kernels as kernels

    D = np.array([0.0, 2.0 ** -999, 3 * 2.0 ** -999, 1.0, 1e10, 7.0])  # cells 0, 2, 6, ...
    slots, solo = np.arange(6), np.arange(6)
    table = np.array([0, 0, 1, 1, 2, 2, 2, 3], dtype=np.int64)
    spill_d2, spill, spill_b = np.zeros(6), np.zeros((6, 2), dtype=np.int64), np.zeros(
        6, dtype=np.int64)
    rows_d2, rows, bounds = np.zeros(6), np.zeros((6, 2), dtype=np.int64), np.zeros(
        5, dtype=np.int64)
    listed = kernels.bucket_rows(-np.inf, np.inf, 0.0, 2.0 ** 1000, table, D, slots, 6,
                                 solo, spill_d2, spill, spill_b, rows_d2, rows, bounds)
    assert listed == 6 and bounds.tolist() == [0, 1, 2, 3, 6]
    assert rows_d2[3:].tolist() == [1.0, 1e10, 7.0]  # the last bucket, in scan order


def test_positions_are_record_numbers_and_stay_valid():
    X = np.array([[0.0], [1.0], [1.0], [1.0], [5.0]])
    pool = SpatialPool(X)
    assert pool.remove(np.array([2])).tolist() == [2]  # a later duplicate leaves first
    assert pool.nearest(np.array([1.0]), 2).tolist() == [1, 3]
    assert pool.nearest_sorted(np.array([1.0]), 2, include=4)[0].tolist() == [4, 1]
    assert pool.nearest_sorted(np.array([1.0]), 2, include=4)[1].tolist() == [0.0, 0.0]
    assert pool.records_at(np.array([3, 0])).tolist() == [3, 0]
    assert pool.positions_of(np.array([4])).tolist() == [4]
    assert pool.live_positions().tolist() == [0, 1, 3, 4]


def attributes(X, seed, distinct_values):
    rng = np.random.default_rng(seed)
    values = X[:, 0] + rng.normal(size=len(X))
    if distinct_values:
        values = rng.integers(0, distinct_values, len(X)).astype(float)
    return [TCloseAttribute.from_values(values)]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 400), seed=st.integers(0, 10**6), k=st.integers(2, 6),
       t=st.sampled_from([0.02, 0.1, 0.3]), distinct_rows=st.sampled_from([None, 3, 30]),
       distinct_values=st.sampled_from([None, 2, 5]))
def test_tfirst_on_spatial_pools_equals_reference(n, seed, k, t, distinct_rows,
                                                  distinct_values):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if distinct_rows:
        X = X[rng.integers(0, min(distinct_rows, n), n)]
    confidential = attributes(X, seed, distinct_values)
    saved = (tcloseness.COMPILED, tfirst._SMALL_POOL)
    try:
        tfirst._SMALL_POOL = 1  # every subset on the spatial index
        compiled = tfirst.tc_tfirst(X, confidential, k=min(k, n), t=t)
        tcloseness.COMPILED = False
        reference = tfirst.tc_tfirst(X, confidential, k=min(k, n), t=t)
    finally:
        tcloseness.COMPILED, tfirst._SMALL_POOL = saved
    np.testing.assert_array_equal(compiled.labels, reference.labels)
    assert (compiled.merges, compiled.max_emd) == (reference.merges, reference.max_emd)


@pytest.mark.parametrize("distinct_rows", [None, 25])
def test_kfirst_on_the_spatial_pool_equals_reference(distinct_rows, monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1200, 4))
    if distinct_rows:
        X = X[rng.integers(0, distinct_rows, len(X))]
    confidential = attributes(X, 3, None if distinct_rows is None else 4)
    compiled = tcloseness.tc_kfirst(X, confidential, k=4, t=0.1)
    monkeypatch.setattr(tcloseness, "COMPILED", False)
    reference = tcloseness.tc_kfirst(X, confidential, k=4, t=0.1)
    np.testing.assert_array_equal(compiled.labels, reference.labels)
    assert (compiled.swaps, compiled.merges) == (reference.swaps, reference.merges)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 400), d=st.integers(1, 4), seed=st.integers(0, 10**6),
       kind=st.sampled_from(["normal", "grid", "few rows", "signed zeros",
                             "indicators"]))
def test_removals_leave_the_nodes_as_a_full_refresh_would(n, d, seed, kind):
    """After every removal, every count, live box and largest ρ² is what recomputing
    every node gives (a box left too wide would only slow the searches, so answers alone
    would not tell)."""
    from core.methods import spatial_index, spatial_pool

    rng = np.random.default_rng(seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spatial_pool, "_LEAF_SIZE", 2)  # many levels above the leaves
        pool = SpatialPool(matrix(n, d, seed, kind))
    for gone in np.array_split(rng.permutation(n), max(1, n // 3)):
        pool.remove(gone)
        lo, hi, cnt, top = pool._lo.copy(), pool._hi.copy(), pool._cnt.copy(), pool._top.copy()
        spatial_index._refresh_all(pool._first_leaf, pool._start, pool._stop, pool._head,
                                   pool._end, pool._P, pool._rho2, lo, hi, cnt, top)
        live = cnt > 0
        np.testing.assert_array_equal(pool._cnt, cnt)
        np.testing.assert_array_equal(pool._lo[live], lo[live])
        np.testing.assert_array_equal(pool._hi[live], hi[live])
        np.testing.assert_array_equal(pool._top[live], top[live])
