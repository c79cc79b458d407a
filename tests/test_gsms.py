"""GSMS: invariants, a naive reference, and Khomnotai et al. (2018) Table 3 on Census."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from core.errors import Cancelled, MicroaggError
from core.methods.gsms import gsms
from core.measures.partition import sse
from core.data.prepare import standardize
from core.progress import TaskState
from tests.conftest import CENSUS_COLUMNS

# Khomnotai et al. (2018), Table 3, row GSMS-NN (IL %, 3 decimals).
PUBLISHED = {3: 5.564, 4: 7.254, 5: 8.686, 10: 13.549, 20: 18.792, 30: 22.432}


def _sse(points: np.ndarray) -> float:
    return float(((points - points.mean(axis=0)) ** 2).sum()) if len(points) else 0.0


def naive_gsms_groups(X: np.ndarray, k: int) -> list[list[int]]:
    """The groups GSMS selects, in order, by brute force (O(n²) per selection).

    Every record of T owns the candidate {record} ∪ its k−1 nearest others in T (ties to
    the lower index); the candidate minimizing SSE(p) + SSE(T \\ p), both computed from
    the points, is selected (ties to the lower owner index). Leftovers are not returned.
    """
    remaining = list(range(len(X)))
    groups = []
    while len(remaining) >= k:
        best, best_cost = None, np.inf
        for owner in remaining:
            others = [r for r in remaining if r != owner]
            d2 = [float(((X[r] - X[owner]) ** 2).sum()) for r in others]
            order = sorted(range(len(others)), key=lambda i: (d2[i], others[i]))
            nearest = [others[i] for i in order]
            candidate = sorted([owner] + nearest[: k - 1])
            rest = [r for r in remaining if r not in candidate]
            cost = _sse(X[candidate]) + _sse(X[rest])
            if cost < best_cost:
                best, best_cost = candidate, cost
        groups.append(best)
        remaining = [r for r in remaining if r not in best]
    return groups


def groups_in_order(labels: np.ndarray) -> list[list[int]]:
    return [sorted(np.flatnonzero(labels == g).tolist()) for g in range(labels.max() + 1)]


@pytest.mark.parametrize("seed", range(12))
def test_each_selection_equals_the_naive_reference(seed):
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(8, 40)), int(rng.integers(1, 5)), int(rng.integers(1, 6))
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d) + rng.normal(size=d) * 10
    labels = gsms(X, k=k)
    expected = naive_gsms_groups(X, k)
    selected = groups_in_order(labels)
    # Leftovers (n mod k records) join selected groups afterwards.
    assert len(selected) == len(expected)
    for s, e in zip(selected, expected):
        assert set(e) <= set(s)
    assert sum(len(s) - len(e) for s, e in zip(selected, expected)) == n % k


def test_leftovers_join_the_nearest_centroid():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(23, 3))
    k = 5
    labels = gsms(X, k=k)
    expected = naive_gsms_groups(X, k)
    chosen = {r for g in expected for r in g}
    centroids = np.array([X[g].mean(axis=0) for g in expected])
    for record in sorted(set(range(len(X))) - chosen):
        assert labels[record] == np.argmin(((centroids - X[record]) ** 2).sum(axis=1))


def test_hand_example():
    X = np.array([[0.0], [0.1], [4.0], [4.1], [4.2], [10.0], [10.1]])
    # T's mean is 4.64: the candidate {10.0, 10.1} has the farthest mean and goes first;
    # then {0.0, 0.1}; then {4.0, 4.1} and the leftover 4.2 joins it.
    assert gsms(X, k=2).tolist() == [1, 1, 2, 2, 2, 0, 0]


def test_selection_criterion_matches_sse_of_both_parts():
    """The first group minimizes SSE(p) + SSE(T \\ p) over all candidates (brute force)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    first = np.flatnonzero(gsms(X, k=3) == 0)
    cost = _sse(X[first]) + _sse(np.delete(X, first, axis=0))
    for owner in range(len(X)):
        d2 = ((X - X[owner]) ** 2).sum(axis=1)
        d2[owner] = -1
        p = np.argsort(d2, kind="stable")[:3]
        assert cost <= _sse(X[p]) + _sse(np.delete(X, p, axis=0)) + 1e-12


datasets = st.integers(1, 6).flatmap(lambda k: st.tuples(
    st.just(k),
    hnp.arrays(np.float64, st.tuples(st.integers(k, 45), st.integers(1, 3)),
               elements=st.integers(-3, 3).map(float))))  # small grid: many duplicates


@settings(max_examples=80, deadline=None)
@given(datasets)
def test_every_record_in_a_group_of_k_to_2k_minus_1(case):
    k, X = case
    before = X.copy()
    labels = gsms(X, k=k)
    np.testing.assert_array_equal(X, before)
    assert labels.shape == (len(X),) and labels.dtype == np.int64
    sizes = np.bincount(labels)
    assert len(sizes) == len(X) // k  # ids 0..G−1, no empty group
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    np.testing.assert_array_equal(gsms(X, k=k), labels)  # deterministic


@settings(max_examples=25, deadline=None)
@given(datasets)
def test_duplicates_do_not_break_the_reference_agreement(case):
    k, X = case
    # Random jitter breaks exact ties (which the naive reference would resolve by
    # rounding noise) but keeps near-duplicates.
    X = X + np.random.default_rng(len(X)).uniform(0, 1e-3, size=X.shape)
    selected = groups_in_order(gsms(X, k=k))
    for s, e in zip(selected, naive_gsms_groups(X, k), strict=True):
        assert set(e) <= set(s)


def test_fewer_than_2k_records_form_one_group():
    X = np.arange(7.0)[:, None]
    assert gsms(X, k=4).tolist() == [0] * 7


def test_k_larger_than_n_is_rejected():
    with pytest.raises(MicroaggError, match="k = 5"):
        gsms(np.zeros((3, 2)), k=5)


def test_progress_once_per_group_and_cancel():
    X = np.random.default_rng(0).normal(size=(60, 3))
    seen = []
    gsms(X, k=3, state=TaskState(lambda fraction, message: seen.append(fraction)))
    assert len(seen) >= 20 and seen == sorted(seen) and seen[-1] == 1.0
    state = TaskState()
    state.cancel()
    with pytest.raises(Cancelled):
        gsms(X, k=3, state=state)


@pytest.mark.parametrize("k", sorted(PUBLISHED))
def test_census_reproduces_published_gsms_nn(census, k):
    X = standardize(census, CENSUS_COLUMNS).X
    labels = gsms(X, k=k)
    il = 100 * sse(X, labels) / X.size  # SST = n·d after z-scoring with ddof=0
    assert round(il, 3) == PUBLISHED[k]
    assert np.bincount(labels).min() == np.bincount(labels).max() == k  # 1080 = k·(1080/k)
