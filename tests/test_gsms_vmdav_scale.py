"""Compiled V-MDAV against its numpy reference: the same labels on every input.

The compiled path (core.methods.vmdav_kernel) must take exactly the reference's
decisions: random data, clustered data (where groups extend), tie-heavy grids with many
duplicates, and small edge cases. It must also report progress and honour Cancel.
"""

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from core.compiled import COMPILED
from core.errors import Cancelled
from core.methods.vmdav import _assign_leftovers, vmdav, vmdav_reference
from core.methods.vmdav_kernel import fits_compiled, squared_distances, vmdav_compiled
from core.progress import TaskState

compiled_only = pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")


def compiled_labels(X, k, gamma, state=None):
    """The compiled path itself (the dispatcher could fall back to the reference)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    state = state or TaskState()
    labels, group = vmdav_compiled(X, k=k, gamma=float(gamma), state=state)
    return _assign_leftovers(X, labels, group, state)


def assert_same(X, k, gamma):
    expected = vmdav_reference(X, k=k, gamma=gamma)
    np.testing.assert_array_equal(compiled_labels(X, k, gamma), expected)
    np.testing.assert_array_equal(vmdav(X, k=k, gamma=gamma), expected)


@compiled_only
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("gamma", [0.0, 0.2, 1.1, 10.0])
def test_random_and_clustered_data(seed, gamma):
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(30, 400)), int(rng.integers(1, 6)), int(rng.integers(1, 8))
    if seed % 2:
        X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + rng.normal(size=d) * 10
    else:
        centres = rng.normal(size=(6, d)) * 8
        X = centres[rng.integers(0, 6, size=n)] + rng.normal(size=(n, d)) * 0.3
    assert_same(X, k, gamma)


grids = st.integers(1, 6).flatmap(lambda k: st.tuples(
    st.just(k),
    hnp.arrays(np.float64, st.tuples(st.integers(k, 120), st.integers(1, 4)),
               elements=st.integers(-2, 2).map(float)),  # few distinct rows, duplicates
    st.sampled_from([0.0, 0.2, 0.5, 1.1, 10.0])))


@compiled_only
@settings(max_examples=150, deadline=None)
@given(grids)
def test_tie_heavy_grids(case):
    k, X, gamma = case
    assert_same(X, k, gamma)


@compiled_only
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(0, 3), st.integers(1, 3), st.integers(0, 2 ** 32 - 1))
def test_duplicated_random_rows(k, extra, d, seed):
    """Random distinct rows, each repeated, shuffled: exact ties between far records."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(int(rng.integers(2, 25)), d))
    X = base[rng.integers(0, len(base), size=len(base) * 3 + extra)]
    if len(X) >= k:
        assert_same(X, k, float(rng.choice([0.0, 0.3, 2.0])))


@compiled_only
@pytest.mark.parametrize("X, k", [
    (np.zeros((1, 1)), 1),
    (np.zeros((7, 2)), 3),                                   # every record equal
    (np.arange(5.0)[:, None], 5),                            # n = k
    (np.arange(9.0)[:, None], 5),                            # n < 2k: one group + leftovers
    (np.array([[0.0], [1.0], [1.0], [2.0], [2.0], [3.0]]), 2),
    (np.array([[1e-100, 0.0], [0.0, 1e-100], [1e100, 0.0], [0.0, 0.0]]), 2),
])
@pytest.mark.parametrize("gamma", [0.0, 0.2, 10.0])
def test_edge_cases(X, k, gamma):
    assert_same(X, k, gamma)


def test_values_outside_the_compiled_range_take_the_reference():
    assert fits_compiled(np.array([[1.0, 0.0], [1e-100, -1e100]]))
    assert not fits_compiled(np.array([[1.0], [1e-200]]))
    assert not fits_compiled(np.array([[1.0], [1e200]]))
    X = np.array([[0.0], [1e-200], [3e-200], [1.0], [1.0 + 1e-15], [7.0]])
    np.testing.assert_array_equal(vmdav(X, k=2, gamma=1.1),
                                  vmdav_reference(X, k=2, gamma=1.1))


def test_fixed_distance_form():
    rng = np.random.default_rng(0)
    rows, point = rng.normal(size=(50, 7)), rng.normal(size=7)
    expected = np.zeros(50)
    for j in range(7):
        expected = expected + (rows[:, j] - point[j]) ** 2
    np.testing.assert_array_equal(squared_distances(rows, point), expected)


@compiled_only
def test_progress_steps_are_the_reference_steps():
    X = np.random.default_rng(4).normal(size=(203, 3))
    steps = {}
    for name, run in (("reference", vmdav_reference), ("compiled", vmdav)):
        seen = []
        run(X, k=4, gamma=0.5, state=TaskState(lambda f, m, seen=seen: seen.append((f, m))))
        steps[name] = seen
    assert steps["compiled"] == steps["reference"]
    assert steps["compiled"][-1][0] == 1.0


@compiled_only
def test_a_large_run_is_cancelled_quickly():
    X = np.random.default_rng(0).normal(size=(150_000, 10))
    state = TaskState()
    outcome = {}

    def work():
        try:
            vmdav(X, k=5, gamma=0.2, state=state)
        except Cancelled:
            outcome["cancelled"] = time.perf_counter()

    thread = threading.Thread(target=work)
    thread.start()
    time.sleep(0.5)
    asked = time.perf_counter()
    state.cancel()
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert outcome["cancelled"] - asked < 2.0  # within a second, on a loaded machine


# GSMS: the faster path (pruned selection, holder lists, listed neighbours when compiled)
# against the first implementation, kept as gsms_reference.

from core.methods.gsms import _Selection, gsms, gsms_reference  # noqa: E402
from core.methods.gsms_neighbours import ListedNeighbours, TreeNeighbours  # noqa: E402
from core.methods.gsms_select import FarthestCandidate  # noqa: E402


def assert_gsms_same(X, k):
    X = np.ascontiguousarray(X, dtype=np.float64)
    expected = gsms_reference(X, k=k)
    np.testing.assert_array_equal(gsms(X, k=k), expected)
    numpy_path = _Selection(X, k, TaskState(), compiled=False).run()
    np.testing.assert_array_equal(numpy_path, expected)


@pytest.mark.parametrize("seed", range(8))
def test_gsms_random_data(seed):
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(30, 600)), int(rng.integers(1, 13)), int(rng.integers(1, 8))
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + rng.normal(size=d) * 10
    assert_gsms_same(X, k)


@pytest.mark.parametrize("seed", range(4))
def test_gsms_far_from_the_origin_and_clustered(seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(5, 9)) * 6 + 1e4
    X = centres[rng.integers(0, 5, size=400)] + rng.normal(size=(400, 9)) * 0.2
    assert_gsms_same(X, int(rng.integers(2, 6)))


gsms_grids = st.integers(1, 6).flatmap(lambda k: st.tuples(
    st.just(k),
    hnp.arrays(np.float64, st.tuples(st.integers(k, 90), st.integers(1, 10)),
               elements=st.integers(-2, 2).map(float))))  # exact ties everywhere


@settings(max_examples=120, deadline=None)
@given(gsms_grids)
def test_gsms_tie_heavy_grids(case):
    k, X = case
    assert_gsms_same(X, k)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(0, 4), st.integers(1, 10), st.integers(0, 2 ** 32 - 1))
def test_gsms_duplicated_random_rows(k, extra, d, seed):
    """Few distinct rows, each repeated: equal distances between distinct records."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(int(rng.integers(2, 20)), d))
    X = base[rng.integers(0, len(base), size=len(base) * 4 + extra)]
    if len(X) >= k:
        assert_gsms_same(X, k)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2 ** 32 - 1), st.sampled_from([1, 2, 4, 8, 10]))
def test_gsms_property_fast_equals_reference(k, seed, d):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(k, 250))
    scale = 10.0 ** rng.uniform(-3, 3)
    X = np.round(rng.normal(size=(n, d)) * scale, int(rng.integers(0, 4)))  # some ties
    assert_gsms_same(X, k)


@pytest.mark.parametrize("X, k", [
    (np.zeros((1, 1)), 1),
    (np.zeros((9, 2)), 3),                          # every record equal
    (np.arange(5.0)[:, None], 5),                   # n = k
    (np.arange(9.0)[:, None], 5),                   # n < 2k
    (np.arange(40.0).reshape(20, 2), 1),            # k = 1: singletons
    (np.array([[0.0], [1.0], [1.0], [2.0], [2.0], [3.0]]), 2),
])
def test_gsms_edge_cases(X, k):
    assert_gsms_same(X, k)


def test_selection_equals_a_full_scan_with_ties():
    rng = np.random.default_rng(5)
    n, d, k = 300, 3, 4
    sums = rng.integers(-3, 4, size=(n, d)).astype(float)  # many equal candidate means
    alive = np.ones(n, dtype=bool)
    select = FarthestCandidate(sums, alive, k, slack=np.float64(1e-12))
    total = sums.sum(axis=0) / k
    for _ in range(60):
        m = int(alive.sum())
        owners = np.flatnonzero(alive)
        score = select.scores(owners, total, m)
        best = score.max()
        expected = owners[np.argmax(score >= best - (2 * np.sqrt(best) * 1e-12 + 1e-24))]
        assert select.best(total, m) == expected
        alive[expected] = False
        changed = rng.choice(np.flatnonzero(alive), size=5, replace=False)
        sums[changed] = rng.integers(-3, 4, size=(5, d))
        select.changed(changed)
        total = total - rng.normal(size=d) * 0.1


@pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")
@pytest.mark.parametrize("grid", [False, True])
def test_listed_neighbours_equal_the_reference_queries(grid):
    rng = np.random.default_rng(1)
    X = (rng.integers(-2, 3, size=(600, 9)).astype(float) if grid
         else rng.normal(size=(600, 9)))
    alive = np.ones(len(X), dtype=bool)
    listed = ListedNeighbours(X, alive, 4, TaskState())
    reference = TreeNeighbours(X, alive, TaskState())
    for _ in range(40):
        gone = rng.choice(np.flatnonzero(alive), size=12, replace=False)
        alive[gone] = False
        listed.remove(gone)
        reference.remove(gone)
        rows = rng.choice(np.flatnonzero(alive), size=20, replace=False)
        np.testing.assert_array_equal(np.sort(listed.nearest(rows, 4), axis=1),
                                      np.sort(reference.nearest(rows, 4), axis=1))


def test_gsms_progress_and_cancel_while_listing():
    X = np.random.default_rng(0).normal(size=(3000, 4))
    seen = []
    gsms(X, k=5, state=TaskState(lambda fraction, message: seen.append(fraction)))
    assert len(seen) >= 64 and seen == sorted(seen) and seen[-1] == 1.0
    state = TaskState(lambda fraction, message: state.cancel())
    with pytest.raises(Cancelled):
        gsms(X, k=5, state=state)
