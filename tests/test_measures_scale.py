"""The census-scale measures and verifier give the figures of the code they replace.

The previous implementations are kept below as plain functions (``old_*``): record
linkage by a scipy KD-tree over the distinct rows, real anonymity and the classes by
``numpy.unique(axis=0)``, interval disclosure by unsorted ``searchsorted``, class sizes
by ``groupby``. Each new path is compared with them on random, tie-heavy (few distinct
rows, duplicates) and noisy data, and the compiled record-linkage search with its
numpy/scipy reference.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial import cKDTree

import core.measures.linkage as linkage
from core.errors import Cancelled
from core.measures.disclosure import interval_disclosure, real_anonymity, record_linkage
from core.measures.measure import measure
from core.data.roles import RoleSpec
from core.verify.kanonymity import class_sizes, verify_k_anonymity
from core.verify.rows import distinct_rows, frame_classes
from tests.conftest import cancelled_at_step


# ----------------------------------------------------------------- the old code
def old_record_linkage(Z_original, Z_masked):
    Z_original = np.ascontiguousarray(Z_original, dtype=np.float64)
    Z_masked = np.ascontiguousarray(Z_masked, dtype=np.float64)
    n = len(Z_original)
    points, own_point, multiplicity = _old_distinct(Z_original)
    queries, query_of_record, _ = _old_distinct(Z_masked)
    tree = cKDTree(points)
    nearest, _ = tree.query(queries, k=1)
    radius = np.asarray(nearest, dtype=np.float64).reshape(-1) * (1.0 + 1e-12)
    own = points[own_point] - queries[query_of_record]
    own_distance = np.sqrt(np.einsum("ij,ij->i", own, own))
    candidate = own_distance <= radius[query_of_record]
    tied_total = np.ones(len(queries))
    linked = np.unique(query_of_record[candidate])
    if linked.size:
        balls = tree.query_ball_point(queries[linked], r=radius[linked])
        lengths = np.fromiter((len(b) for b in balls), dtype=np.int64, count=len(balls))
        members = np.fromiter(itertools.chain.from_iterable(balls), dtype=np.int64,
                              count=int(lengths.sum()))
        tied_total[linked] = np.add.reduceat(multiplicity[members],
                                             np.r_[0, np.cumsum(lengths)[:-1]])
    credit = np.where(candidate, 1.0 / tied_total[query_of_record], 0.0)
    return float(100.0 * credit.sum() / n)


def _old_distinct(Z):
    points, inverse, counts = np.unique(Z, axis=0, return_inverse=True, return_counts=True)
    return points, inverse.reshape(-1), counts


def old_real_anonymity(masked_values):
    masked_values = np.asarray(masked_values, dtype=np.float64)
    return len(masked_values) / len(np.unique(masked_values, axis=0))


def old_interval_disclosure(raw, raw_masked, *, interval=1.0):
    n = len(raw)
    w = math.ceil(interval / 100.0 * n - 1e-9)
    inside = np.empty(raw.shape, dtype=bool)
    for j in range(raw.shape[1]):
        ordered = np.sort(raw[:, j])
        rho = np.minimum(np.searchsorted(ordered, raw_masked[:, j], side="left"), n - 1)
        low = ordered[np.maximum(rho - w, 0)]
        high = ordered[np.minimum(rho + w, n - 1)]
        inside[:, j] = (raw[:, j] >= low) & (raw[:, j] <= high)
    return float(100.0 * inside.mean())


def old_class_sizes(masked, columns):
    return masked.groupby(list(columns), dropna=False, sort=False).size().to_numpy()


# ----------------------------------------------------------------- data
def _pair(rng, kind, n, d):
    """An (original, masked) pair of one of the kinds the measures meet."""
    if kind == "noise":
        Z = rng.standard_normal((n, d))
        return Z, Z + rng.normal(scale=rng.choice([0.05, 0.3, 1.0]), size=(n, d))
    if kind == "same":
        Z = rng.integers(0, 3, (n, d)).astype(float)
        return Z, Z.copy()
    if kind == "groups":  # microaggregation: group means of tie-heavy records
        Z = rng.integers(0, 3, (n, d)).astype(float)
        groups = rng.integers(0, max(1, n // 3), n)
        M = np.zeros_like(Z)
        for g in np.unique(groups):
            M[groups == g] = Z[groups == g].mean(axis=0)
        return Z, M
    Z = rng.integers(0, 2, (n, d)).astype(float)  # few distinct rows on both sides
    return Z, rng.integers(0, 2, (n, d)).astype(float)


KINDS = ("noise", "same", "groups", "binary")


def _both_paths(Z, M):
    """Record linkage by the compiled search and by the numpy/scipy reference."""
    fast = record_linkage(Z, M)
    saved = linkage._search_compiled
    linkage._search_compiled = None
    try:
        reference = record_linkage(Z, M)
    finally:
        linkage._search_compiled = saved
    return fast, reference


# ----------------------------------------------------------------- record linkage
@pytest.mark.parametrize("kind", KINDS)
def test_record_linkage_equals_the_old_code(kind):
    rng = np.random.default_rng(len(kind))
    for _ in range(40):
        n, d = int(rng.integers(1, 70)), int(rng.integers(1, 5))
        Z, M = _pair(rng, kind, n, d)
        fast, reference = _both_paths(Z, M)
        assert fast == reference == old_record_linkage(Z, M)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(KINDS), st.integers(1, 120),
       st.integers(1, 6))
def test_record_linkage_property(seed, kind, n, d):
    Z, M = _pair(np.random.default_rng(seed), kind, n, d)
    fast, reference = _both_paths(Z, M)
    assert fast == reference == old_record_linkage(Z, M)


def test_record_linkage_many_exact_ties_grow_the_shell():
    # every masked record is the centre of a cube of 2**6 originals: 64 tied points
    corners = np.array(list(itertools.product((0.0, 1.0), repeat=6)))
    Z = np.vstack([corners + 3.0 * i for i in range(5)])
    M = np.repeat(np.array([[0.5] * 6]) + 3.0 * np.arange(5)[:, None], 64, axis=0)
    fast, reference = _both_paths(Z, M)
    assert fast == reference == old_record_linkage(Z, M) == pytest.approx(100 / 64)


def test_record_linkage_at_a_thousand_records_with_noise():
    rng = np.random.default_rng(7)
    Z = rng.standard_normal((3000, 10))
    for scale in (0.0, 0.2, 1.0):
        M = Z + rng.normal(scale=scale, size=Z.shape)
        fast, reference = _both_paths(Z, M)
        assert fast == reference == old_record_linkage(Z, M)


def test_record_linkage_reports_progress_and_cancels_at_once():
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((60_000, 10))
    M = Z + rng.normal(scale=0.3, size=Z.shape)
    state, steps = cancelled_at_step(1)
    with pytest.raises(Cancelled):
        record_linkage(Z, M, state=state)
    assert len(steps) == 1  # the search stopped at its first return to Python


# ----------------------------------------------------------------- rows and k′
@pytest.mark.parametrize("kind", KINDS)
def test_distinct_rows_number_classes_as_numpy_unique(kind):
    rng = np.random.default_rng(11)
    for _ in range(30):
        _, M = _pair(rng, kind, int(rng.integers(1, 60)), int(rng.integers(1, 4)))
        M[rng.random(M.shape) < 0.1] = -0.0  # −0.0 is 0.0, as numpy.unique has it
        found = distinct_rows(M)
        _, first, inverse, counts = np.unique(M, axis=0, return_index=True,
                                              return_inverse=True, return_counts=True)
        assert found.inverse.tolist() == inverse.reshape(-1).tolist()
        assert found.counts.tolist() == counts.tolist()
        assert found.first.tolist() == first.tolist()
        assert real_anonymity(M) == old_real_anonymity(M)


def test_distinct_rows_with_nan_keep_numpy_unique_apart():
    M = np.array([[np.nan, 1.0], [np.nan, 1.0], [0.0, 1.0], [-0.0, 1.0]])
    assert distinct_rows(M).counts.tolist() == [2, 1, 1]
    assert real_anonymity(M) == old_real_anonymity(M)


def test_a_hash_collision_takes_the_exact_path(monkeypatch):
    """The numpy path (without the compiled grouping, which compares rows itself)."""
    import core.verify.rows as rows
    monkeypatch.setattr(rows, "_group_rows_compiled", None)
    monkeypatch.setattr(rows, "_row_hash", lambda words: np.zeros(len(words), np.uint64))
    M = np.array([[2.0, 1.0], [1.0, 5.0], [2.0, 1.0], [0.0, 0.0]])
    found = rows.distinct_rows(M)
    _, inverse = np.unique(M, axis=0, return_inverse=True)
    assert found.inverse.tolist() == inverse.reshape(-1).tolist()
    t = pd.DataFrame(M, columns=["a", "b"])
    assert rows.frame_classes(t, ["a", "b"]).counts.tolist() == [2, 1, 1]


def test_frame_classes_are_groupby_classes():
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(1, 80))
        t = pd.DataFrame({"a": rng.integers(0, 3, n).astype(float),
                          "b": rng.choice(["x", "y", None], n),
                          "c": rng.integers(0, 2, n)})
        t.loc[rng.random(n) < 0.2, "a"] = np.nan
        t.loc[rng.random(n) < 0.2, "a"] = -0.0
        ids = t.groupby(["a", "b", "c"], dropna=False, sort=False).ngroup().to_numpy()
        assert frame_classes(t, ["a", "b", "c"]).inverse.tolist() == ids.tolist()
        assert class_sizes(t, ["a", "b"]).tolist() == old_class_sizes(t, ["a", "b"]).tolist()


# ----------------------------------------------------------------- interval disclosure
@pytest.mark.parametrize("kind", KINDS)
def test_interval_disclosure_equals_the_old_code(kind):
    rng = np.random.default_rng(13)
    for _ in range(30):
        Z, M = _pair(rng, kind, int(rng.integers(1, 90)), int(rng.integers(1, 4)))
        for interval in (0.5, 1.0, 10.0, 100.0):
            assert (interval_disclosure(Z, M, interval=interval)
                    == old_interval_disclosure(Z, M, interval=interval))


# ----------------------------------------------------------------- measure, verify
def test_measure_keeps_its_figures_and_class_numbers():
    rng = np.random.default_rng(17)
    n = 400
    X = rng.integers(0, 4, (n, 3)).astype(float)
    groups = rng.integers(0, 90, n)
    M = X.copy()
    for g in np.unique(groups):
        M[groups == g] = X[groups == g].mean(axis=0)
    original = pd.DataFrame(X, columns=["a", "b", "c"])
    masked = pd.DataFrame(M, columns=["a", "b", "c"])
    m = measure(original, masked, RoleSpec(quasi_identifiers=("a", "b", "c")),
                scenarios="every")
    _, classes = np.unique(M, axis=0, return_inverse=True)
    assert m.classes.tolist() == classes.reshape(-1).tolist()
    assert m.k_prime == old_real_anonymity(M)
    std = X.std(axis=0)
    for figure in m.scenarios:
        columns = [("a", "b", "c").index(c) for c in figure.known]
        Z = (X[:, columns] - X[:, columns].mean(axis=0)) / std[columns]
        Zm = (M[:, columns] - X[:, columns].mean(axis=0)) / std[columns]
        assert figure.dld == old_record_linkage(Z, Zm)
        assert figure.id == old_interval_disclosure(X[:, columns], M[:, columns])
        assert figure.k_prime == old_real_anonymity(M[:, columns])


def test_verifier_counts_classes_as_groupby_did():
    rng = np.random.default_rng(19)
    n = 300
    t = pd.DataFrame({"a": rng.integers(0, 5, n).astype(float),
                      "b": rng.integers(0, 5, n).astype(float),
                      "s": rng.choice(["north", "south"], n)})
    roles = RoleSpec(quasi_identifiers=("a", "b"), strata=("s",))
    v = verify_k_anonymity(t, t, roles, 3, blocks=[("a",), ("b",)])
    assert v.smallest_by_block == (int(old_class_sizes(t, ["a", "s"]).min()),
                                   int(old_class_sizes(t, ["b", "s"]).min()))
    whole = old_class_sizes(t, ["a", "b", "s"])
    assert (v.n_classes, v.smallest_whole_table) == (whole.size, int(whole.min()))


def test_compiled_row_distances_equal_the_numpy_sums():
    rng = np.random.default_rng(23)
    A, B = rng.standard_normal((3000, 7)), rng.standard_normal((3000, 7))
    diff = A - B
    expected = np.zeros(len(A))
    for j in range(A.shape[1]):
        expected += diff[:, j] * diff[:, j]
    assert np.array_equal(linkage.squared_distances(A, B), expected)
