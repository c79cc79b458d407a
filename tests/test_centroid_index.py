"""The centroid index of Algorithm 1's merging gives the ties of a full float64 pass.

core.methods.centroid_index keeps the live centroids in float64 and in a float32
screen, in one leaf or in a k-d tree whose boxes widen as centroids move; its search
must return exactly the clusters a full pass over the live centroids counts as tied for
nearest (squared distances summed attribute by attribute, within 8·(d+1)·eps).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.compiled import COMPILED
from core.methods import centroid_index, tcloseness

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")


def _ties_by_full_pass(points, alive, asking):
    """Clusters within 8·(d+1)·eps of the nearest to ``asking``, by a full pass."""
    d = points.shape[1]
    distance = np.zeros(len(points))
    for j in range(d):
        distance += (points[:, j] - points[asking, j]) ** 2
    distance[~alive] = np.inf
    distance[asking] = np.inf
    bound = distance.min() * (1.0 + 8.0 * (d + 1) * np.finfo(float).eps) + 1e-300
    return np.flatnonzero(distance <= bound)


def _centroids(rng, groups, d, scale, layout):
    points = (rng.integers(0, 4, size=(groups, d)) + rng.normal(size=(groups, d))) * scale
    points[rng.integers(0, groups, groups // 2)] = points[rng.integers(0, groups, groups // 2)]
    if layout == "nudged":  # near ties: a coordinate one ulp away
        points[::3, 0] = np.nextafter(points[::3, 0], np.inf)
    elif layout == "shell":  # distances to cluster 0 far closer than float32 resolves
        direction = rng.normal(size=(groups, d))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        radius = scale * (1.0 + 1e-10 * rng.integers(0, 3, groups))
        points = points[0] + direction * radius[:, None]
        points[0] -= direction[0] * radius[0]
    return points


@settings(max_examples=300, deadline=None)
@given(groups=st.integers(2, 90), d=st.integers(1, 5), seed=st.integers(0, 2**31),
       scale=st.sampled_from([1.0, 1e-30, 1e12, 1e20]),
       layout=st.sampled_from(["clumps", "nudged", "shell"]),
       leaf_size=st.sampled_from([0, 1, 2, 4, 8]), merges=st.integers(0, 40))
def test_search_finds_every_tie_of_a_full_pass(groups, d, seed, scale, layout, leaf_size,
                                               merges):
    """After merges (a centroid removed, another moved between the two), the search
    returns exactly a full pass's ties, in one leaf (leaf_size 0) or in trees with
    leaves of 1 to 8 (boxes widened by the moves): duplicates, one-ulp nudges, shells
    of near-equal radii, tiny values and squares beyond float32's range."""
    with pytest.MonkeyPatch.context() as patch:
        if leaf_size:
            patch.setattr(centroid_index, "TREE_FROM", 1)
            patch.setattr(centroid_index, "LEAF_SIZE", leaf_size)
        _search_after_merges(groups, d, seed, scale, layout, leaf_size, merges)


def _search_after_merges(groups, d, seed, scale, layout, leaf_size, merges):
    rng = np.random.default_rng(seed)
    points = _centroids(rng, groups, d, scale, layout)
    center = points.mean(axis=0)
    spread = np.array([float(((points - center) ** 2).sum(axis=1).max())])
    index = centroid_index.build(points, np.arange(groups), groups, center)
    assert (index[7] > 0) == (leaf_size > 0 and groups > leaf_size)
    scratch = centroid_index.scratch_for(index, groups)
    T, S, ident, place, leaf_of, start, fill, first_leaf, lo, hi, cnt = index
    alive = np.ones(groups, dtype=bool)
    ties = np.empty(groups, dtype=np.int64)
    for _ in range(min(merges, groups - 2)):
        keep, gone = rng.choice(np.flatnonzero(alive), 2, replace=False)
        centroid_index.remove(gone, T, S, ident, place, leaf_of, start, fill, first_leaf,
                              cnt)
        alive[gone] = False
        share = rng.random()
        points[keep] = share * points[keep] + (1 - share) * points[gone]
        centroid_index.move(keep, points[keep].copy(), center, T, S, place, leaf_of, lo,
                            hi, spread)
    for asking in rng.choice(np.flatnonzero(alive), min(5, alive.sum()), replace=False):
        count = centroid_index.near_ties(asking, T, S, ident, place, start, fill,
                                         first_leaf, lo, hi, cnt, center, spread, scratch,
                                         ties)
        np.testing.assert_array_equal(np.sort(ties[:count]),
                                      _ties_by_full_pass(points, alive, asking))


@pytest.mark.parametrize("leaf_size", [1, 4])
def test_merges_through_the_tree_and_its_rebuilds_equal_reference(leaf_size, monkeypatch):
    """Whole merges with the centroids in a k-d tree from the start, built again as half
    of its clusters go, down to one leaf (TREE_FROM), equal the numpy reference."""
    from core.methods.tclose_merge import merge_until_close
    from core.privacy.attributes import TCloseAttribute
    from core.progress import TaskState

    monkeypatch.setattr(centroid_index, "TREE_FROM", 8)
    monkeypatch.setattr(centroid_index, "LEAF_SIZE", leaf_size)
    builds = []
    original = centroid_index.build
    monkeypatch.setattr(centroid_index, "build",
                        lambda *a: builds.append(len(a[1])) or original(*a))
    rng = np.random.default_rng(leaf_size)
    X = rng.normal(size=(600, 3))
    X = X[rng.integers(0, 400, 600)]  # duplicated records: tied centroids
    attributes = [TCloseAttribute.from_values(X[:, 0] + rng.normal(size=600))]
    base = rng.permutation(600) // 2
    expected, expected_merges = tcloseness._merge_until_close(X, attributes, base, 0.03,
                                                              TaskState())
    labels, merges = merge_until_close(X, attributes, base, 0.03, TaskState(),
                                       tcloseness._compact)
    np.testing.assert_array_equal(labels, expected)
    assert merges == expected_merges > 250
    assert len(builds) >= 4 and min(builds) < 8 <= max(builds)
