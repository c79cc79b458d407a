"""tc-bucket's compiled class loop (core.methods.bucket_loop) forms exactly the
reference's classes (core.methods.bucket._form_classes on RecordPools): on normal and
tie-heavy data (duplicate rows, few distinct rows, signed zeros), numerical and nominal
confidential attributes, deep trees and indexes built again; and the plan's counting
checks, made on the two class sizes, decide as the checks on every class did."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.compiled import COMPILED
from core.methods import bucket
from core.methods.bucket import tc_bucket
from core.progress import TaskState
from tests.test_spatial_pool import matrix
from tests.test_tfirst_loop import small_indexes


def confidential(X, seed, kind):
    rng = np.random.default_rng(seed + 1)
    n = len(X)
    if kind == "tied to X":
        return X[:, 0] + rng.normal(size=n)
    if kind == "few values":
        return rng.integers(0, 4, n).astype(float)
    return rng.choice(["a", "b", "c", "d"], size=n, p=(0.5, 0.3, 0.15, 0.05))


def both(X, values, k, t, n_buckets=None):
    """(compiled, reference) partitions of the whole method."""
    compiled = tc_bucket(X, values, k=k, t=t, n_buckets=n_buckets)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bucket, "COMPILED", False)
        reference = tc_bucket(X, values, k=k, t=t, n_buckets=n_buckets)
    return compiled, reference


@pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")
@settings(max_examples=60, deadline=None)
@given(n=st.integers(64, 400), d=st.integers(1, 4), seed=st.integers(0, 10**6),
       k=st.integers(1, 6), t=st.sampled_from([1.05, 1.5, 2.0, 3.0]),
       rows=st.sampled_from(["normal", "grid", "few rows", "signed zeros",
                             "indicators"]),
       values=st.sampled_from(["tied to X", "few values", "nominal"]),
       deep=st.booleans(), reindex=st.booleans())
def test_compiled_classes_equal_the_reference(n, d, seed, k, t, rows, values, deep,
                                              reindex):
    X = matrix(n, d, seed, rows)
    y = confidential(X, seed, values)
    with pytest.MonkeyPatch.context() as patch:
        small_indexes(patch, deep, reindex)
        compiled, reference = both(X, y, k, t)
    np.testing.assert_array_equal(compiled.labels, reference.labels)
    assert compiled.max_distance == reference.max_distance <= t


@pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")
@pytest.mark.parametrize("rows, n_buckets", [("normal", None), ("few rows", None),
                                             ("grid", 5)])
def test_compiled_classes_equal_the_reference_at_a_few_thousand_records(rows, n_buckets):
    """Leaves of full size, indexes built again as records leave, several compositions."""
    X = matrix(4000, 3, 7, rows)
    y = confidential(X, 7, "tied to X")
    compiled, reference = both(X, y, 5, 1.5, n_buckets)
    np.testing.assert_array_equal(compiled.labels, reference.labels)
    assert compiled.n_classes == reference.n_classes > 600


@pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")
def test_the_compiled_loop_reports_progress_and_cancels():
    X = matrix(3000, 3, 2, "normal")
    y = confidential(X, 2, "tied to X")
    seen = []
    tc_bucket(X, y, k=3, t=1.5, state=TaskState(lambda f, m: seen.append((f, m))))
    assert len(seen) >= 64 and seen[-1][0] == 1.0
    assert any(m.startswith("tc-bucket: class ") for _, m in seen)
    state = TaskState(lambda f, m: state.cancel() if f > 0.3 else None)
    with pytest.raises(Exception, match="cancel"):
        tc_bucket(X, y, k=3, t=1.5, state=state)


def _plan_row_by_row(supply, n, k, t):
    """The plan as first written: every class's bounds as a row, the counting checks
    on all of them (the reference for :func:`core.methods.bucket._plan`)."""
    import math

    largest = min(n // k, int(supply.min()))
    for m in range(largest, 0, -1):
        sizes = np.full(m, n // m, dtype=np.int64)
        sizes[: n % m] += 1
        low = np.array([[math.ceil(Fraction(int(e) * int(s), n) / t) for s in supply]
                        for e in sizes], dtype=np.int64)
        high = np.array([[min(int(e), math.floor(Fraction(int(e) * int(s), n) * t))
                          for s in supply] for e in sizes], dtype=np.int64)
        if (low > high).any() or (low.sum(axis=1) > sizes).any() \
                or (high.sum(axis=1) < sizes).any() or (low.sum(axis=0) > supply).any() \
                or (high.sum(axis=0) < supply).any():
            continue
        if bucket._flow(sizes, supply, low, high) is None:
            continue
        return bucket._emphasize(sizes, supply, low, high, n)
    return None


@settings(max_examples=80, deadline=None)
@given(supply=st.lists(st.integers(1, 60), min_size=2, max_size=6),
       k=st.integers(1, 8), t=st.sampled_from(["1.05", "1.2", "1.5", "2", "3.5"]))
def test_plan_decides_as_the_checks_on_every_class(supply, k, t):
    supply = np.array(supply, dtype=np.int64)
    n = int(supply.sum())
    k = min(k, n)
    expected = _plan_row_by_row(supply, n, k, Fraction(t))
    found = bucket._plan(supply, n, k, Fraction(t))
    if expected is None:
        assert found is None
    else:
        np.testing.assert_array_equal(found, expected)
        assert (found.sum(axis=0) == supply).all() and found.sum(axis=1).min() >= k


@pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")
def test_the_seed_stays_first_when_another_record_lies_at_distance_zero():
    """Records 3 and 5 differ, but their squared difference underflows to 0: a search
    from 5, the first seed, finds 3 first (first in input at distance 0), where the
    reference puts the seed first. Each class takes one record of that bucket, so only
    the seed moved to the front gives the reference's classes."""
    n = 80
    X = np.full((n, 1), -5e-156)
    X[3, 0], X[5, 0] = 0.0, 1e-163
    assert (X[3, 0] - X[5, 0]) ** 2 == 0.0
    y = np.arange(n) % 3 * 1.0
    y[3] = y[5] = 0.0
    compiled, reference = both(X, y, 3, 1.5)
    np.testing.assert_array_equal(compiled.labels, reference.labels)
    assert reference.labels[5] == 0 != reference.labels[3]  # the first class took 5


def test_no_quasi_identifier_columns_take_the_reference_path():
    """The spatial indexes need a column; without one every record is at distance 0
    from every other, and the reference forms the classes in input order."""
    y = np.arange(100) % 4 * 1.0
    part = tc_bucket(np.zeros((100, 0)), y, k=4, t=1.5)
    assert part.n_classes == 25 and np.bincount(part.labels).min() == 4
