"""The compiled refinement (core.methods.refine_passes) against the numpy one.

Same labels on random and tie-heavy data; its exact KD-tree search gives the brute-force
answers; a large run stops promptly when cancelled.
"""

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.compiled import COMPILED
from core.errors import Cancelled
from core.measures.partition import sse
from core.methods.heuristics import fixed_size
from core.methods.refine import refine
from core.methods.refine_passes import refine_compiled
from core.progress import TaskState

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba switched off or missing")


def _all_three(X, labels, k, method):
    numpy_labels = refine(X, labels, k=k, method=method, compiled=False)
    tree = refine(X, labels, k=k, method=method, compiled=True)
    brute = refine_compiled(X, labels, k=k, method=method, max_rounds=1000,
                            state=TaskState(), use_tree=False)
    return numpy_labels, tree, brute


@pytest.mark.parametrize("method", ["tfrp2", "igd"])
@pytest.mark.parametrize("kind", ["normal", "ties", "duplicates"])
def test_compiled_equals_numpy_and_brute_force(method, kind):
    rng = np.random.default_rng(5)
    if kind == "normal":
        X = rng.standard_normal((1500, 4))
    elif kind == "ties":
        X = rng.integers(0, 3, size=(1500, 3)).astype(float)
    else:
        X = np.repeat(rng.standard_normal((40, 2)), 30, axis=0)
    k = 4
    labels = fixed_size(X, k=k, first="cbfs")
    numpy_labels, tree, brute = _all_three(X, labels, k, method)
    np.testing.assert_array_equal(tree, brute)
    assert np.bincount(tree).min() >= k and sse(X, tree) <= sse(X, labels)
    if kind == "normal":
        np.testing.assert_array_equal(tree, numpy_labels)
    else:
        # Exact ties: the numpy path's scipy KD-tree lists equally near groups in its own
        # order (above 256 groups), so it may choose another of them; the SSE stays close.
        assert sse(X, tree) == pytest.approx(sse(X, numpy_labels), rel=0.02)


@st.composite
def partitions(draw):
    k = draw(st.integers(2, 5))
    n = draw(st.integers(2 * k, 15 * k))
    d = draw(st.integers(1, 3))
    X = draw(st.one_of(
        arrays(np.float64, (n, d), elements=st.integers(-2, 2).map(float)),
        arrays(np.float64, (n, d), elements=st.floats(-100, 100, allow_nan=False)),
    ))
    return X, k, fixed_size(X, k=k, first=draw(st.sampled_from(["mdav", "cbfs"])))


@settings(max_examples=80, deadline=None)
@given(partitions())
def test_compiled_tree_equals_brute_force_on_small_cases(case):
    X, k, labels = case
    _, tree, brute = _all_three(X, labels, k, "igd")
    np.testing.assert_array_equal(tree, brute)
    assert np.bincount(tree).min() >= k
    assert sse(X, tree) <= sse(X, labels) + 1e-9 * max(1.0, sse(X, labels))


def test_a_large_compiled_run_stops_within_a_second_of_cancel():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20_000, 10))
    labels = np.repeat(np.arange(4_000), 5)  # a poor partition: much to refine
    refine(X[:50], labels[:50] // 5, k=5, method="igd", compiled=True)  # compiled
    state = TaskState()
    timer = threading.Timer(0.5, state.cancel)
    began = time.perf_counter()
    timer.start()
    with pytest.raises(Cancelled):
        refine(X, labels, k=5, method="igd", state=state, compiled=True)
    assert time.perf_counter() - began < 1.5
