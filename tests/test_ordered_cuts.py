"""Compiled ordered cuts (core.methods.ordered_cuts) against the numpy reference.

The two paths must give the same ``cost`` and ``last_size`` arrays bit for bit, hence the
same partition, on random, tie-heavy and edge-case inputs.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import core.methods.univariate as univariate
from core.errors import Cancelled
from core.methods import ordered_cuts
from core.methods.projection import pcp, zscores
from core.progress import TaskState

pytestmark = pytest.mark.skipif(not ordered_cuts.COMPILED, reason="numba switched off")

FINITE = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
TIED = st.integers(-3, 3).map(float)


def both_paths(X, k):
    fast = univariate._shortest_path(X, k, TaskState(), compiled=True)
    reference = univariate._shortest_path(X, k, TaskState(), compiled=False)
    return fast, reference


def assert_same_path(X, k):
    (cost, last), (cost_ref, last_ref) = both_paths(np.asarray(X, dtype=np.float64), k)
    assert np.array_equal(cost, cost_ref)  # bit for bit, +inf on nodes 1 .. k−1 included
    assert np.array_equal(last, last_ref)
    assert last.dtype == last_ref.dtype == np.int64


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_same_costs_and_sizes_as_the_reference(data):
    k = data.draw(st.integers(2, 9), label="k")
    n = data.draw(st.integers(k, 90), label="n")
    d = data.draw(st.integers(1, 5), label="d")
    elements = data.draw(st.sampled_from([FINITE, TIED]), label="elements")
    X = data.draw(arrays(np.float64, (n, d), elements=elements), label="X")
    assert_same_path(X, k)


def random_inputs(rng, n, d):
    yield "normal", rng.normal(size=(n, d))
    yield "few distinct rows", rng.integers(0, 3, size=(n, d)).astype(float)
    yield "duplicated rows", np.repeat(rng.normal(size=(n // 4 + 1, d)), 4, axis=0)[:n]
    yield "constant", np.full((n, d), 7.5)
    yield "large offset", 1e7 + rng.integers(0, 5, size=(n, d)).astype(float)
    yield "sorted heavy tail", np.sort(rng.standard_cauchy(size=(n, d)), axis=0)
    yield "unit steps", np.arange(float(n * d)).reshape(n, d)


@pytest.mark.parametrize("d", [1, 2, 3, 10])
@pytest.mark.parametrize("k", [2, 3, 5, 17])
def test_same_path_on_larger_and_tie_heavy_inputs(d, k):
    rng = np.random.default_rng(100 * d + k)
    for name, X in random_inputs(rng, 1_500, d):
        fast, reference = both_paths(X, k)
        assert np.array_equal(fast[0], reference[0]), name
        assert np.array_equal(fast[1], reference[1]), name


@pytest.mark.parametrize("n, k", [(2, 2), (3, 2), (4, 2), (5, 3), (7, 4), (9, 5), (60, 30)])
def test_edge_sizes(n, k):
    rng = np.random.default_rng(n)
    for X in (rng.normal(size=(n, 1)), np.zeros((n, 3)), np.arange(float(n))[:, None]):
        assert_same_path(X, k)


def test_exact_ties_keep_the_documented_tie_break():
    # 0..6 with k=3: sizes (3, 4) and (4, 3) cost exactly the same; the smallest last group.
    labels = univariate.optimal_partition_of_order(np.arange(7.0)[:, None], k=3)
    assert labels.tolist() == [0, 0, 0, 0, 1, 1, 1]
    # Equal values: every cut costs 0; the smallest group at every node from the end.
    labels = univariate.optimal_partition_of_order(np.zeros((11, 2)), k=3)
    assert np.bincount(labels).tolist() == [5, 3, 3]


def einsum_norms(vectors):
    """The squared norms as numpy's vectorised dot product computes them (before)."""
    return np.einsum("...d,...d->...", vectors, vectors)


@pytest.mark.parametrize("d", [1, 2])
def test_one_or_two_attributes_give_the_dot_product_numbers(monkeypatch, d):
    # With one or two columns the ordered column sum is the dot product's own number, so
    # the partition is the one computed before column sums were introduced.
    rng = np.random.default_rng(d)
    for name, X in random_inputs(rng, 1_500, d):
        fast = univariate._shortest_path(X, 4, TaskState(), compiled=True)
        with monkeypatch.context() as patch:
            patch.setattr(univariate, "_squared_norms", einsum_norms)
            before = univariate._shortest_path(X, 4, TaskState(), compiled=False)
        assert np.array_equal(fast[0], before[0]), name
        assert np.array_equal(fast[1], before[1]), name


@pytest.mark.parametrize("elements", [1, 7, 40])
def test_reference_chunks_agree_with_the_kernel(monkeypatch, elements):
    X = np.random.default_rng(4).integers(0, 4, size=(300, 2)).astype(float)
    fast = univariate._partition_of_order(X, 6, TaskState(), compiled=True)
    monkeypatch.setattr(univariate, "_CHUNK_ELEMENTS", elements)
    assert np.array_equal(univariate._partition_of_order(X, 6, TaskState(), compiled=False),
                          fast)


def test_group_sizes_kernel_matches_the_walk_in_python(monkeypatch):
    X = np.random.default_rng(5).normal(size=(500, 1))
    _, last = univariate._shortest_path(X, 3, TaskState(), compiled=True)
    compiled = ordered_cuts.group_sizes(last)
    monkeypatch.setattr(ordered_cuts, "_group_sizes_compiled", None)
    assert np.array_equal(ordered_cuts.group_sizes(last), compiled)
    assert compiled.sum() == 500 and compiled.min() >= 3 and compiled.max() <= 5


@pytest.mark.parametrize("method", [pcp, zscores, None])
def test_public_methods_take_either_path_alike(monkeypatch, method):
    rng = np.random.default_rng(6)
    X = np.round(rng.normal(size=(3_000, 4)), 1)
    run = (lambda: univariate.optimal_univariate(X[:, 0], k=5)) if method is None \
        else (lambda: method(X, k=5))
    fast = run()
    monkeypatch.setattr(ordered_cuts, "COMPILED", False)
    assert np.array_equal(run(), fast)


def test_progress_is_reported_at_least_every_percent():
    reports = []
    state = TaskState(lambda fraction, message: reports.append(fraction))
    univariate.optimal_partition_of_order(np.random.default_rng(0).normal(size=(30_000, 3)),
                                          k=7, state=state)
    assert len(reports) >= 100 and reports[-1] == 1.0
    assert np.all(np.diff(reports) >= 0) and np.max(np.diff([0.0, *reports])) <= 0.01


def test_work_per_kernel_call_is_bounded(monkeypatch):
    # Large k·d: the number of nodes settled per call shrinks so a call stays short.
    monkeypatch.setattr(ordered_cuts, "_WORK_PER_CALL", 4_000)
    calls = []
    state = TaskState(lambda fraction, message: calls.append(fraction))
    X = np.random.default_rng(1).normal(size=(2_000, 4))
    univariate.optimal_partition_of_order(X, k=50, state=state)
    assert len(calls) >= (2_000 - 50) // (4_000 // (50 * 4))


def test_a_large_run_is_cancelled_within_a_second():
    values = np.random.default_rng(2).normal(size=1_000_000)
    cancelled_at = []

    def cancel_on_first_progress(fraction, message):
        if fraction > 0 and not cancelled_at:
            cancelled_at.append((fraction, time.perf_counter()))
            state.cancel()

    state = TaskState(cancel_on_first_progress)
    with pytest.raises(Cancelled):
        univariate.optimal_univariate(values, k=60, state=state)
    fraction, when = cancelled_at[0]
    assert fraction <= 0.01 and state.fraction <= 0.01
    assert time.perf_counter() - when < 1.0


SORTABLE = st.one_of(FINITE, TIED, st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1e308, -1e308]))


@settings(max_examples=150, deadline=None)
@given(arrays(np.float64, st.integers(0, 60), elements=SORTABLE))
def test_stable_argsort_is_numpys_stable_argsort(values):
    order = ordered_cuts.stable_argsort(values)
    assert order.dtype == np.int64
    assert np.array_equal(order, np.argsort(values, kind="stable"))


@pytest.mark.parametrize("rows_per_call", [7, 1 << 21])
def test_stable_argsort_on_larger_and_tie_heavy_inputs(monkeypatch, rows_per_call):
    monkeypatch.setattr(ordered_cuts, "_ROWS_PER_CALL", rows_per_call)
    rng = np.random.default_rng(7)
    for values in (rng.normal(size=5_000), rng.integers(-2, 3, size=5_000) * 0.0,
                   rng.integers(0, 4, size=5_000) * 1e-300, np.repeat(rng.random(50), 100),
                   -rng.exponential(size=5_000), np.full(3_000, 2.5)):
        before = values.copy()
        assert np.array_equal(ordered_cuts.stable_argsort(values),
                              np.argsort(values, kind="stable"))
        assert np.array_equal(values, before, equal_nan=False)
    state = TaskState()
    state.cancel()
    with pytest.raises(Cancelled):
        ordered_cuts.stable_argsort(rng.normal(size=100), state=state)


def test_mic1d_masks_alike_with_numpys_stable_argsort(monkeypatch):
    import core.methods.mic1d as mic1d_module

    rng = np.random.default_rng(8)
    X = np.column_stack([rng.integers(0, 4, size=400), rng.normal(size=400).round(1)])
    fast = mic1d_module.mic1d_values(X, k=7)
    monkeypatch.setattr(mic1d_module, "stable_argsort",
                        lambda values, state=None: np.argsort(values, kind="stable"))
    assert np.array_equal(mic1d_module.mic1d_values(X, k=7), fast)
