"""The block bounds of the spatial index (:mod:`core.methods.spatial_screen`'s notes,
Block bounds): a nominal attribute's indicator columns bounded as one attribute, by the
categories a node's live rows hold. They must never prune a record the reference would
take (whole runs and single searches equal the reference's, bit for bit, on tables of
nominal attributes with and without rows of no category, after deletions, for queries
that hold one category and for any other point), and they must be the full mismatch,
2s², where a box saw half of it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core.compiled import COMPILED
from core.methods import spatial_index as index
from core.methods import spatial_screen as screen
from core.methods import spatial_search as search
from core.methods import spatial_tree
from core.methods.heuristics import FIRST_RECORD, GROWTH, fixed_size, fixed_size_reference
from core.methods.pool import squared_distances
from tests.spatial_helpers import farthest, leaves_of, nearest

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba is switched off")


def _nominal(rng: np.random.Generator, n: int, none_share: float, numeric: int) -> np.ndarray:
    """``numeric`` rounded numeric columns (ties) beside three nominal attributes of 2, 6
    and 13 categories as the embedding makes them (one column of each block s, the
    others 0; categories drawn unevenly), a share of rows holding none of the last."""
    columns = [np.round(rng.normal(size=(n, numeric)), 1)]
    for width in (2, 6, 13):
        weights = rng.dirichlet(np.ones(width) * 0.7)
        block = np.eye(width)[rng.choice(width, n, p=weights)] * rng.uniform(0.3, 2.0)
        if width == 13:
            block[rng.random(n) < none_share] = 0.0
        columns.append(block)
    return np.column_stack(columns)


def _empty(tree, rows) -> None:
    """Take every record of ``rows`` as a run does (``_emptied``, ``_vacate``)."""
    (P, shown, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    for t in rows:
        head[t] = end[t]
        index._emptied(t, leaf_of[t], first_leaf, start, stop, head, end, P, rho2, lo, hi,
                       cnt, top)
        search._vacate(t, leaf_of[t] - first_leaf, start[leaf_of[t]], shown)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), none_share=st.sampled_from([0.0, 0.2]),
       numeric=st.integers(0, 2), k=st.integers(2, 6))
def test_every_heuristic_on_nominal_tables_equals_the_reference(seed, none_share, numeric, k):
    rng = np.random.default_rng(seed)
    X = _nominal(rng, int(rng.integers(60, 700)), none_share, numeric)
    for first in FIRST_RECORD:
        for growth in GROWTH:
            expected = fixed_size_reference(X, k=k, first=first, growth=growth)
            for leaf_size in (index.LEAF_SIZE, 8):
                with leaves_of(leaf_size):
                    labels = fixed_size(X, k=k, first=first, growth=growth)
                assert np.array_equal(labels, expected), (first, growth, leaf_size)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), none_share=st.sampled_from([0.0, 0.2]),
       numeric=st.integers(0, 2), emptied=st.sampled_from([0.0, 0.5, 0.9]),
       m=st.integers(1, 8))
def test_each_search_after_deletions_equals_a_full_scan(seed, none_share, numeric, emptied, m):
    """Queries that hold a category in every block (records), in some blocks (a record
    with one block changed), in none (centroids of a few records) and anywhere."""
    rng = np.random.default_rng(seed)
    X = _nominal(rng, int(rng.integers(300, 2500)), none_share, numeric)
    with leaves_of(8):
        tree, levels, _ = spatial_tree.row_tree(X, X.mean(axis=0))
    head, end, members = tree[2], tree[3], tree[4]
    _empty(tree, np.flatnonzero(rng.random(len(tree[0])) < emptied))
    live = np.zeros(len(X), dtype=bool)
    for t in range(len(tree[0])):
        live[members[head[t]:end[t]]] = True
    if not live.any():
        return
    records = np.flatnonzero(live)
    for kind in ("record", "mixed", "centroid", "anywhere") * 5:
        q = X[rng.integers(len(X))].copy()
        if kind == "mixed":
            q[numeric:numeric + 2] *= 0.5  # the first block's point holds no category
        elif kind == "centroid":
            q = X[rng.choice(len(X), 4)].mean(axis=0)
        elif kind == "anywhere":
            q = rng.normal(size=X.shape[1])
        d2 = squared_distances(X[records], q)
        assert nearest(tree, levels, q, m) == records[np.lexsort((records, d2))][:m].tolist()
        assert farthest(tree, levels, q, X.mean(axis=0)) == int(
            records[np.lexsort((records, -d2))][0])


@pytest.mark.parametrize("none_share", [0.0, 0.3])
def test_a_leaf_without_the_querys_category_is_bounded_by_the_whole_mismatch(none_share):
    """One nominal attribute alone: for a query holding category c, a node's bound is
    0 where a live row holds c, else 2s² (the least distance of its rows), or s² (a
    row of none) unless every row holds a category; the farthest bound is 2s² unless
    every live row holds c. The box alone gave s² for both."""
    rng = np.random.default_rng(12)
    s, n = 0.9, 2000
    X = np.eye(7)[rng.integers(0, 7, n)] * s
    X[rng.random(n) < none_share] = 0.0
    with leaves_of(1):  # a node for every distinct row, the 7 categories and none
        tree, levels, _ = spatial_tree.row_tree(X, X.mean(axis=0))
    P, shown, head, end, first_leaf, lo, hi, cnt = (tree[0], tree[1], tree[2], tree[3],
                                                    tree[9], tree[10], tree[11], tree[12])
    _empty(tree, [0, 3])
    layout, value, whole = shown[9], shown[10], shown[12]
    assert levels >= 2 and whole.tolist() == [none_share == 0.0]
    for c in range(7):
        q = np.eye(7)[c] * s
        sums, gain, held = np.zeros(1), np.zeros(1), np.zeros(1, dtype=np.int64)
        assert screen._block_query(q, layout, value, whole, sums, gain, held) == 1
        assert held[0] == c and gain[0] == (2 * s * s if whole[0] else 0.0)
        for node in range(len(cnt)):
            if not cnt[node]:
                continue
            rows = [t for t in range(len(P)) if head[t] < end[t] and
                    _covers(node, t, tree)]
            d2 = squared_distances(P[rows], q)
            if (P[rows, c] != 0.0).any():
                least = 0.0
            else:
                least = 2 * s * s if whole[0] else s * s
            assert screen._near_blocks(lo, hi, node, q, layout, value, whole, sums,
                                       held) == least <= d2.min()
            far, _ = screen._far_blocks(node, q, 2 * X.mean(axis=0) - q, layout, value, whole,
                                        sums, sums, held, lo, hi)
            assert far == (2 * s * s if (P[rows, c] == 0.0).any() else 0.0) >= d2.max()


def _covers(node, t, tree) -> bool:
    start, stop = tree[7], tree[8]
    return start[node] <= t < stop[node]


def test_a_block_is_whole_only_when_every_row_holds_a_category():
    rng = np.random.default_rng(3)
    X = _nominal(rng, 500, 0.0, 1)
    layout, _, whole = screen.screen_layout(X, X.min(axis=0), X.max(axis=0))
    assert layout[:, 1].tolist() == [1, 2, 6, 13]
    assert whole.tolist() == [False, True, True, True]  # the numeric column is kept
    X[7, 9:] = 0.0  # row 7 holds none of the last attribute's categories
    layout, _, whole = screen.screen_layout(X, X.min(axis=0), X.max(axis=0))
    assert layout[:, 1].tolist() == [1, 2, 6, 13]
    assert whole.tolist() == [False, True, True, False]
    assert screen.block_columns(layout, 22).tolist() == [-1] + [1] * 2 + [2] * 6 + [3] * 13
