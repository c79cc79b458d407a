"""Optimal partition of an order (Hansen–Mukherjee) and optimal univariate microaggregation."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.errors import Cancelled, MicroaggError
from core.methods.mdav import mdav
from core.measures.partition import sse
from core.progress import TaskState
from core.methods.univariate import optimal_partition_of_order, optimal_univariate

FINITE = st.floats(-100, 100, allow_nan=False, allow_infinity=False)
# Integer-valued data produce many exactly tied partitions; floats produce few.
VALUES = st.one_of(FINITE, st.integers(-5, 5).map(float))


@lru_cache(maxsize=None)
def run_partitions(n: int, k: int) -> tuple[tuple[int, ...], ...]:
    """Every way to cut n ordered records into runs of k..2k−1, as tuples of run sizes."""
    if n == 0:
        return ((),)
    return tuple((size, *rest) for size in range(k, min(2 * k - 1, n) + 1)
                 for rest in run_partitions(n - size, k))


def labels_of_runs(sizes: tuple[int, ...]) -> np.ndarray:
    return np.repeat(np.arange(len(sizes)), sizes)


def best_run_sse(X: np.ndarray, k: int) -> float:
    return min(sse(X, labels_of_runs(sizes)) for sizes in run_partitions(len(X), k))


def assert_runs_of_order(labels: np.ndarray, order: np.ndarray, k: int) -> None:
    """Every record labelled; along ``order`` the ids are 0, 0, .., 1, .. in runs of k..2k−1."""
    along = labels[order]
    assert labels.dtype == np.int64
    assert np.all(np.diff(along) >= 0) and along[0] == 0
    assert np.all(np.diff(along) <= 1)
    sizes = np.bincount(labels)
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


# --- optimal_partition_of_order ------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.data())
def test_partition_of_order_matches_brute_force(data):
    k = data.draw(st.integers(2, 4), label="k")
    n = data.draw(st.integers(k, 14), label="n")
    d = data.draw(st.integers(1, 3), label="d")
    X = data.draw(arrays(np.float64, (n, d), elements=VALUES), label="X")
    labels = optimal_partition_of_order(X, k=k)
    assert_runs_of_order(labels, np.arange(n), k)
    assert close(sse(X, labels), best_run_sse(X, k))


def test_hand_example_two_groups():
    X = np.array([1.0, 2, 3, 10, 11, 12, 13])[:, None]
    assert optimal_partition_of_order(X, k=3).tolist() == [0, 0, 0, 1, 1, 1, 1]


def test_ties_give_the_smallest_group_at_the_end():
    # 0..6 with k=3: sizes (3, 4) and (4, 3) both cost 2 + 5 = 7 exactly.
    X = np.arange(7.0)[:, None]
    assert optimal_partition_of_order(X, k=3).tolist() == [0, 0, 0, 0, 1, 1, 1]
    # 0..9 with k=2: every cut into pairs and triples of unit-spaced values; pairs cost
    # 0.5 and triples 2, so five pairs (2.5) is the unique optimum.
    assert np.bincount(optimal_partition_of_order(np.arange(10.0)[:, None], k=2)).tolist() \
        == [2, 2, 2, 2, 2]


@pytest.mark.parametrize("n, k", [(2, 2), (3, 2), (3, 3), (5, 3), (7, 4)])
def test_fewer_than_two_k_records_form_one_group(n, k):
    assert optimal_partition_of_order(np.arange(float(n))[:, None], k=k).tolist() == [0] * n


def test_multivariate_edge_cost_uses_every_column():
    # In the first column alone the best cut is after record 2; the second column moves it.
    X = np.array([[0.0, 0], [0.1, 0], [0.2, 9], [5.0, 9], [5.1, 9]])
    assert optimal_partition_of_order(X[:, :1], k=2).tolist() == [0, 0, 0, 1, 1]
    assert optimal_partition_of_order(X, k=2).tolist() == [0, 0, 1, 1, 1]


def test_long_input_with_large_offset_is_exact():
    # 3000 groups of three equal integers around 1e7: the optimum (SSE 0) is found although
    # uncentred prefix sums of squares would reach 9e17, where float64 steps by 128.
    values = np.repeat(1e7 + np.arange(3000.0), 3)
    labels = optimal_partition_of_order(values[:, None], k=3)
    assert sse(values[:, None], labels) < 1e-6
    assert np.all(np.bincount(labels) == 3)


def test_does_not_mutate_and_rejects_bad_input():
    X = np.array([[3.0], [1.0], [2.0], [7.0]])
    before = X.copy()
    optimal_partition_of_order(X, k=2)
    assert np.array_equal(X, before)
    with pytest.raises(MicroaggError, match=r"4 record\(s\), fewer than k = 5"):
        optimal_partition_of_order(X, k=5)
    for bad_k in (1, 0, 2.5, True, "3"):
        with pytest.raises(MicroaggError, match="'k'"):
            optimal_partition_of_order(X, k=bad_k)
    with pytest.raises(MicroaggError, match="row 2"):
        optimal_partition_of_order(np.array([[1.0], [np.nan], [2.0]]), k=2)
    with pytest.raises(MicroaggError, match="2-D"):
        optimal_partition_of_order(np.arange(4.0), k=2)


def test_progress_and_cancellation():
    reports = []
    state = TaskState(lambda fraction, message: reports.append(fraction))
    optimal_partition_of_order(np.random.default_rng(0).normal(size=(20_000, 2)), k=4,
                               state=state)
    assert len(reports) >= 100 and reports[-1] == 1.0
    assert np.all(np.diff(reports) >= 0)
    assert np.max(np.diff([0.0, *reports])) <= 0.01
    state = TaskState()
    state.cancel()
    with pytest.raises(Cancelled):
        optimal_partition_of_order(np.arange(100.0)[:, None], k=3, state=state)


# --- optimal_univariate ----------------------------------------------------------------

def test_hand_example_univariate():
    values = np.array([1.0, 2, 3, 10, 11, 12, 13])
    labels = optimal_univariate(values, k=3)
    assert labels.tolist() == [0, 0, 0, 1, 1, 1, 1]
    shuffled = values[[4, 0, 6, 2, 5, 1, 3]]
    groups = {frozenset(shuffled[optimal_univariate(shuffled, k=3) == g]) for g in (0, 1)}
    assert groups == {frozenset({1.0, 2.0, 3.0}), frozenset({10.0, 11.0, 12.0, 13.0})}


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_univariate_is_optimal_among_runs_and_beats_mdav(data):
    k = data.draw(st.integers(2, 4), label="k")
    n = data.draw(st.integers(k, 14), label="n")
    values = data.draw(arrays(np.float64, n, elements=VALUES), label="values")
    before = values.copy()
    labels = optimal_univariate(values, k=k)
    assert np.array_equal(values, before)
    order = np.argsort(values, kind="stable")
    assert_runs_of_order(labels, order, k)
    found = sse(values[:, None], labels)
    assert close(found, best_run_sse(values[order][:, None], k))
    assert found <= sse(values[:, None], mdav(values[:, None], k=k)) + 1e-9 * max(1.0, found)


def set_partitions(n: int, k: int):
    """Every partition of range(n) into groups of at least k (restricted growth strings)."""
    labels = [0] * n

    def grow(i: int, n_groups: int):
        if i == n:
            sizes = np.bincount(labels)
            if sizes.min() >= k:
                yield np.array(labels)
            return
        for g in range(n_groups + 1):
            labels[i] = g
            yield from grow(i + 1, max(n_groups, g + 1))

    yield from grow(1, 1)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_univariate_is_optimal_among_all_partitions(data):
    # Hansen & Mukherjee's claim itself: no partition of the values into groups of at
    # least k (contiguous or not, any sizes) has a smaller SSE.
    k = data.draw(st.integers(2, 3), label="k")
    n = data.draw(st.integers(k, 8), label="n")
    values = data.draw(arrays(np.float64, n, elements=VALUES), label="values")
    column = values[:, None]
    found = sse(column, optimal_univariate(values, k=k))
    best = min(sse(column, labels) for labels in set_partitions(n, k))
    assert close(found, best)


def test_univariate_keeps_equal_values_in_input_order_and_rejects_bad_input():
    values = np.array([5.0, 1, 5, 1, 5, 1])
    assert optimal_univariate(values, k=3).tolist() == [1, 0, 1, 0, 1, 0]
    with pytest.raises(MicroaggError, match="1-D"):
        optimal_univariate(values[:, None], k=3)
    with pytest.raises(MicroaggError, match=r"6 record\(s\), fewer than k = 7"):
        optimal_univariate(values, k=7)
    with pytest.raises(MicroaggError, match="row 3"):
        optimal_univariate(np.array([1.0, 2, np.inf, 4]), k=2)


@pytest.mark.parametrize("elements", [1, 7, 40])
def test_small_scratch_chunks_give_the_same_partition(monkeypatch, elements):
    # With a small scratch budget fewer than k nodes are settled per step.
    import core.methods.univariate as univariate_module

    from core.progress import TaskState

    X = np.random.default_rng(4).normal(size=(300, 2))
    expected = optimal_partition_of_order(X, k=6)
    monkeypatch.setattr(univariate_module, "_CHUNK_ELEMENTS", elements)
    # The numpy reference is the path whose scratch budget is chunked.
    reference = univariate_module._partition_of_order(X, 6, TaskState(), compiled=False)
    assert np.array_equal(reference, expected)
