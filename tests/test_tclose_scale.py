"""Compiled t-closeness paths give exactly the reference's results (labels, swaps, merges).

The references are the numpy implementations kept in core.methods.tcloseness and
core.privacy.attributes; the compiled ones are core.methods.tclose_emd,
tclose_kfirst and tclose_merge. Equality is exact (==), not approximate.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.compiled import COMPILED
from core.errors import Cancelled
from core.methods import tcloseness
from core.methods.tcloseness import kfirst_labels_reference, tc_kfirst, tc_merge
from core.privacy.attributes import TCloseAttribute
from core.progress import TaskState

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")

if COMPILED:
    from core.methods.tclose_emd import cluster_emd, pack_attributes
    from core.methods.tclose_kfirst import kfirst_labels, swap_scan
    from core.methods.tclose_merge import merge_until_close


def data(n, seed, *, distinct_rows=None, distinct_values=None, d=3, nominal=False):
    """QIs (optionally only a few distinct rows) and 1–2 confidential attributes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if distinct_rows:
        X = X[rng.integers(0, min(distinct_rows, n), n)]
    values = X[:, 0] + rng.normal(size=n)
    if distinct_values:
        values = rng.integers(0, distinct_values, n) + (X[:, 0] > 0) * distinct_values
    attributes = [TCloseAttribute.from_values(values)]
    if nominal:
        attributes.append(TCloseAttribute.from_values(
            rng.choice(["a", "b", "c", "d"], size=n, p=(0.55, 0.25, 0.15, 0.05))))
    return X, attributes


def merges_equal_to_reference(X, attributes, base, t) -> int:
    """Run the compiled merging and the numpy reference; assert the same labels and
    merge count; return the count."""
    expected, expected_merges = tcloseness._merge_until_close(X, attributes, base, t,
                                                              TaskState())
    labels, merges = merge_until_close(X, attributes, base, t, TaskState(),
                                       tcloseness._compact)
    np.testing.assert_array_equal(labels, expected)
    assert merges == expected_merges
    return merges


cases = st.fixed_dictionaries({
    "n": st.integers(1, 70), "seed": st.integers(0, 10**6), "k": st.integers(1, 6),
    "t": st.sampled_from([0.0, 0.02, 0.05, 0.1, 0.2, 0.4, 1.0]),
    "distinct_rows": st.sampled_from([None, 1, 2, 5]),
    "distinct_values": st.sampled_from([None, 1, 2, 4]),
    "nominal": st.booleans()})


@settings(max_examples=40, deadline=None)
@given(cases)
def test_kfirst_compiled_equals_reference(case):
    k = min(case.pop("k"), case["n"])
    t = case.pop("t")
    X, attributes = data(**case)
    expected, expected_swaps = kfirst_labels_reference(X, attributes, k, t, TaskState())
    labels, swaps = kfirst_labels(X, attributes, k, t, TaskState())
    np.testing.assert_array_equal(labels, expected)
    assert swaps == expected_swaps


@settings(max_examples=60, deadline=None)
@given(cases, st.integers(1, 8))
def test_merge_compiled_equals_reference(case, base_size):
    case.pop("k")
    t = case.pop("t")
    X, attributes = data(**case)
    base = np.random.default_rng(case["seed"]).permutation(case["n"]) // base_size
    merges_equal_to_reference(X, attributes, base, t)


@pytest.mark.parametrize("distinct_rows", [1, 2])
def test_merge_with_many_tied_centroids_equals_reference(distinct_rows):
    """Clusters of one or two distinct rows tie by the dozen for the nearest centroid:
    the compiled loop must hand them back in ascending order however many there are."""
    X, attributes = data(400, 3, distinct_rows=distinct_rows)
    base = np.random.default_rng(3).permutation(400) // 2
    assert merges_equal_to_reference(X, attributes, base, 0.05) > 100


@pytest.mark.parametrize("nominal", [False, True])
@pytest.mark.parametrize("distinct_rows,distinct_values", [(None, None), (40, 3)])
def test_whole_methods_equal_reference_at_a_few_hundred(nominal, distinct_rows,
                                                        distinct_values, monkeypatch):
    X, attributes = data(250, 5, d=4, nominal=nominal, distinct_rows=distinct_rows,
                         distinct_values=distinct_values)
    for t in (0.08,):
        compiled = tc_kfirst(X, attributes, k=5, t=t)
        merged = tc_merge(X, attributes, k=5, t=t)
        monkeypatch.setattr(tcloseness, "COMPILED", False)
        reference = tc_kfirst(X, attributes, k=5, t=t)
        reference_merged = tc_merge(X, attributes, k=5, t=t)
        monkeypatch.setattr(tcloseness, "COMPILED", True)
        np.testing.assert_array_equal(compiled.labels, reference.labels)
        assert (compiled.swaps, compiled.merges, compiled.max_emd) \
            == (reference.swaps, reference.merges, reference.max_emd)
        np.testing.assert_array_equal(merged.labels, reference_merged.labels)
        assert merged.merges == reference_merged.merges


@pytest.mark.parametrize("scale,offset", [(1.0, 0.0), (1e-150, 0.0), (1e-6, 1e6),
                                          (1e17, 0.0), (1.0, 3e7)])
def test_merge_screen_keeps_the_reference_at_any_scale(scale, offset):
    """The float32 screen of the centroids is exact at any magnitude: tiny values (near
    float32's subnormals), a large offset with a small spread (the screen is centred),
    and values whose squares overflow float32 (every centroid then gets its exact sum)."""
    X, attributes = data(300, 11, d=4, distinct_rows=120)
    X = X * scale + offset
    base = np.random.default_rng(11).permutation(300) // 3
    assert merges_equal_to_reference(X, attributes, base, 0.05) > 50


@pytest.mark.parametrize("nominal", [False, True])
def test_merge_moving_its_sorted_runs_equals_reference(nominal, monkeypatch):
    """With room for only twice the records, the merged clusters' sorted runs are moved
    to the front again and again (t = 0 merges everything into one cluster)."""
    from core.methods import tclose_merge

    monkeypatch.setattr(tclose_merge, "_RUN_ROOM", 2)
    X, attributes = data(400, 8, d=3, distinct_values=5, nominal=nominal)
    base = np.random.default_rng(8).permutation(400) // 2
    for t in (0.0, 0.05):
        assert merges_equal_to_reference(X, attributes, base, t) > 100


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 70), st.integers(1, 12), st.integers(0, 2**31), st.booleans(),
       st.integers(0, 5))
def test_emd_of_sorted_runs_is_cluster_emd(size, distinct, seed, nominal, offset):
    """The EMD read from a cluster's sorted runs (each step's crossing from the inverse
    of G) is the very float of the gather-and-sort EMD, for every kind of attribute."""
    from core.methods.tclose_emd import inverse_cumulative, run_emd

    rng = np.random.default_rng(seed)
    n = size + int(rng.integers(0, 40))
    values = rng.integers(0, distinct, n)
    attributes = [TCloseAttribute.from_values(values)]
    if nominal:
        attributes.append(TCloseAttribute.from_values(rng.choice(list("abc"), size=n)))
    packed = pack_attributes(attributes)
    members = rng.choice(n, size, replace=False).astype(np.int64)
    runs = np.zeros((len(attributes), offset + size + 3), dtype=np.int64)
    runs[:, offset:offset + size] = np.sort(packed.codes[:, members], axis=1)
    expected = cluster_emd(packed.codes, members, size, packed.kinds, packed.ms,
                           packed.cumulative, packed.prefix, packed.counts, packed.n)
    got = run_emd(runs, offset, size, packed.kinds, packed.ms, inverse_cumulative(packed),
                  packed.prefix, packed.counts, packed.n)
    assert got == expected


def _ties_by_full_pass(C, here, live):
    """The places within 8·(d+1)·eps of the nearest to place ``here``: every centroid's
    squared distance summed attribute by attribute, as the compiled search sums."""
    d = C.shape[0]
    distance = np.zeros(live)
    for j in range(d):
        distance += (C[j, :live] - C[j, here]) ** 2
    distance[here] = np.inf
    bound = distance.min() * (1.0 + 8.0 * (d + 1) * np.finfo(float).eps) + 1e-300
    return np.flatnonzero(distance <= bound)


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 60), st.integers(1, 5), st.integers(0, 2**31),
       st.sampled_from([1.0, 1e-30, 1e12, 1e20]), st.sampled_from(["clumps", "nudged", "shell"]))
def test_screened_search_finds_every_tie_of_a_full_pass(live, d, seed, scale, layout):
    """The float32 screen never drops a centroid the full float64 pass counts as tied
    for nearest, and never adds one: duplicates, centroids one ulp apart, and centroids
    on a shell around the asking one whose distances differ far below float32's
    resolution (so the float32 order is not the exact order)."""
    from core.methods import tclose_merge
    from core.methods.tclose_screen import new_share

    rng = np.random.default_rng(seed)
    here = int(rng.integers(0, live))
    C = rng.integers(0, 4, size=(d, live)) * scale + rng.normal(size=(d, live)) * scale
    C[:, rng.integers(0, live, live // 2)] = C[:, rng.integers(0, live, live // 2)]
    if layout == "nudged":  # near ties: a coordinate one ulp away
        C[0, ::3] = np.nextafter(C[0, ::3], np.inf)
    elif layout == "shell":
        direction = rng.normal(size=(d, live))
        direction /= np.linalg.norm(direction, axis=0)
        radius = scale * (1.0 + 1e-10 * rng.integers(0, 3, live))
        C = C[:, [here]] + direction * radius
        C[:, here] -= direction[:, here] * radius[here]
    C = np.ascontiguousarray(C)
    lanes = tclose_merge._LANES
    places = -(-live // lanes) * lanes
    center = C.mean(axis=1)
    offsets = C - center[:, None]
    screen = np.full((d, places), np.inf, dtype=np.float32)
    screen[:, :live] = offsets
    spread = float((offsets ** 2).sum(axis=0).max())
    ties = np.empty(live, dtype=np.int64)
    count = tclose_merge._nearest_ties(
        here, live, C, screen, center, spread, np.empty(d), np.empty(d, dtype=np.float32),
        new_share(places), np.empty(live), ties)
    np.testing.assert_array_equal(np.sort(ties[:count]), _ties_by_full_pass(C, here, live))


def test_merge_resolves_equal_centroids_as_the_reference():
    """Duplicated records give clusters with the same centroid: ties go to the first."""
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0]]), 12, axis=0)
    values = np.arange(24)
    attributes = [TCloseAttribute.from_values(values)]
    base = np.arange(24) // 2  # six clusters at each point
    assert merges_equal_to_reference(X, attributes, base, 0.1) > 0


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 70), st.integers(1, 12), st.integers(0, 2**31), st.booleans())
def test_cluster_emd_is_the_reference_float(size, distinct, seed, nominal):
    rng = np.random.default_rng(seed)
    n = size + int(rng.integers(0, 30))
    values = rng.integers(0, distinct, n)
    attribute = TCloseAttribute.from_values(values, kind="nominal" if nominal else None)
    packed = pack_attributes([attribute])
    members = rng.permutation(n)[:size].astype(np.int64)
    assert cluster_emd(packed.codes, members, size, packed.kinds, packed.ms,
                       packed.cumulative, packed.prefix, packed.counts, packed.n) \
        == attribute.emd(members)


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 80), st.integers(1, 12), st.integers(0, 2**31), st.booleans())
def test_swap_scan_prices_a_swap_as_swap_emds(n, distinct, seed, nominal):
    """One candidate: the swap made (or not) and the EMD reached are the reference's."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, distinct, n)
    attribute = TCloseAttribute.from_values(values, kind="nominal" if nominal else None)
    packed = pack_attributes([attribute])
    order = rng.permutation(n)
    size = int(rng.integers(1, n))
    members, candidate = np.sort(order[:size]), order[size:size + 1]
    emd = attribute.emd(members)
    grid = attribute.swap_emds(members, candidate)[0]
    result = np.zeros(3)
    positions = members.astype(np.int64).copy()
    swap_scan(positions, packed.codes[:, members].copy(), candidate.astype(np.int64),
              packed.codes[:, candidate].copy(), packed.kinds, packed.ms, packed.cumulative,
              packed.prefix, packed.counts, packed.n, emd, -1.0, 1e-12, result)
    best = int(np.argmin(grid))
    if grid[best] < emd - 1e-12:
        assert result[0] == grid[best] and result[1] == 1
        expected = members.copy()
        expected[best] = candidate[0]
        np.testing.assert_array_equal(positions, np.sort(expected))
    else:
        assert result[0] == emd and result[1] == 0
        np.testing.assert_array_equal(positions, members)


def cancel_after(first_fraction):
    seen = []

    def callback(fraction, message):
        seen.append(message)
        if fraction >= first_fraction:
            state.cancel()

    state = TaskState(callback)
    return state, seen


def test_cancelling_a_large_run_stops_it_quickly():
    X, attributes = data(30_000, 1, d=10)
    state, seen = cancel_after(0.0)
    with pytest.raises(Cancelled):
        tc_kfirst(X, attributes, k=5, t=0.1, state=state)
    assert len(seen) == 1  # the next cluster's step raised
    base = np.arange(30_000) // 5
    state, seen = cancel_after(0.51)  # inside the merging, after MDAV
    with pytest.raises(Cancelled):
        tc_merge(X, attributes, k=5, t=0.0, base_labels=base, state=state)
    assert any("merged" in m for m in seen)


def _close_equals_the_merging(X, attributes, base, t, compiled):
    """``close_partition``'s labels, merge count and ``max_emd`` are the merging's."""
    from core.privacy.attributes import class_emds

    if compiled:
        expected, merges = merge_until_close(X, attributes, base, t, TaskState(),
                                             tcloseness._compact)
    else:
        expected, merges = tcloseness._merge_until_close(X, attributes, base, t, TaskState())
    got = tcloseness.close_partition(X, attributes, base, 2, t, TaskState())
    np.testing.assert_array_equal(got.labels, expected)
    assert got.merges == merges
    assert got.max_emd == tuple(float(class_emds(a, expected).max()) for a in attributes)


@settings(max_examples=60, deadline=None)
@given(cases, st.integers(1, 8), st.booleans())
def test_close_partition_without_a_merge_to_make_equals_the_merging(case, base_size,
                                                                    compiled):
    """``close_partition`` measures the clusters first and, when none exceeds t, skips
    the merging's structures: the same result as either merging path, whether t leaves
    something to merge or (t = 1) nothing."""
    from unittest import mock

    case.pop("k")
    t = case.pop("t")
    X, attributes = data(**case)
    base = np.random.default_rng(case["seed"]).permutation(case["n"]) // base_size
    base = base[::-1].copy() * 3  # numbered neither by first record nor from 0 up
    with mock.patch.object(tcloseness, "COMPILED", compiled):
        for bound in (t, 1.0):
            _close_equals_the_merging(X, attributes, base, bound, compiled)


def test_close_partition_builds_no_merging_when_every_cluster_is_within_t(monkeypatch):
    """Nothing to merge: neither merging path is entered."""
    from core.methods import tclose_merge

    def forbidden(*args, **kwargs):
        raise AssertionError("the merging ran with no cluster beyond t")

    X, attributes = data(300, 4, d=3)
    base = np.random.default_rng(4).permutation(300) // 5
    monkeypatch.setattr(tclose_merge, "merge_until_close", forbidden)
    monkeypatch.setattr(tcloseness, "_merge_until_close", forbidden)
    got = tcloseness.close_partition(X, attributes, base, 5, 1.0, TaskState())
    assert got.merges == 0 and np.bincount(got.labels).tolist() == [5] * 60
    with pytest.raises(AssertionError, match="the merging ran"):
        tcloseness.close_partition(X, attributes, base, 5, 0.01, TaskState())
