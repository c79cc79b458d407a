"""V-MDAV's buffer and GSMS's k-d tree keep a nominal attribute's block of indicator
columns as one column of category codes (:mod:`core.methods.block_sums`): every distance
they give must be the sum over every column in order, bit for bit, a node's bound never
above the distance of a row in it, and the labels the references', on tables of nominal
attributes with rows of no category, numeric columns between the blocks, categories no
row holds, and duplicated rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core.compiled import COMPILED
from core.methods import gsms_neighbours as neighbours
from core.methods import vmdav_kernel as kernel
from core.methods.block_sums import block_layout, block_terms, box_bound, query_tables
from core.methods.gsms import gsms, gsms_reference
from core.methods.vmdav import _assign_leftovers, vmdav_reference
from core.progress import TaskState

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba is switched off")


def _table(rng: np.random.Generator, n: int, none_share: float, numeric: int) -> np.ndarray:
    """Rounded numeric columns (ties) before, between and after blocks of 2, 5 and 9
    indicator columns (each its own s; categories drawn unevenly, the block of 5 with a
    category no row holds), a share of rows holding none of the block of 9."""
    parts = [np.round(rng.normal(size=(n, numeric)), 1)]
    for width in (2, 5, 9):
        weights = rng.dirichlet(np.ones(width) * 0.7)
        if width == 5:
            weights[3] = 0.0
            weights /= weights.sum()
        block = np.eye(width)[rng.choice(width, n, p=weights)] * rng.uniform(0.3, 2.0)
        if width == 9:
            block[rng.random(n) < none_share] = 0.0
        parts += [block, np.round(rng.normal(size=(n, numeric)) * 3.0, 2)]
    return np.ascontiguousarray(np.column_stack(parts))


def _pass(X: np.ndarray, query: int) -> np.ndarray:
    codes, layout, value, _ = block_layout(X)
    terms, held = query_tables(layout)
    block_terms(X[query], layout, value, terms, held)
    out = np.empty(len(X))
    kernel._pass(np.ascontiguousarray(codes), layout, X[query], terms, out, len(X))
    below = [kernel._distance_below(np.ascontiguousarray(codes), layout, X[query], terms,
                                    i, np.inf) for i in range(len(X))]
    return out, np.array(below)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), none_share=st.sampled_from([0.0, 0.3]),
       numeric=st.integers(0, 2))
def test_a_pass_is_the_sum_over_every_column_in_order(seed, none_share, numeric):
    rng = np.random.default_rng(seed)
    X = _table(rng, 200, none_share, numeric)
    _, layout, _, _ = block_layout(X)
    assert (layout[:, 1] > 1).any()  # (which columns join a block depends on the rows)
    for query in rng.choice(len(X), 5, replace=False):
        out, below = _pass(X, query)
        expected = kernel.squared_distances(X, X[query])
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(below, expected)


def test_a_table_of_numbers_keeps_its_columns():
    X = np.random.default_rng(1).normal(size=(50, 4))
    codes, layout, _, _ = block_layout(X)
    assert layout[:, 1].tolist() == [1, 1, 1, 1]
    np.testing.assert_array_equal(codes, X.T)


def test_a_partial_sum_stops_above_the_ceiling_only():
    X = _table(np.random.default_rng(2), 40, 0.3, 1)
    codes, layout, value, _ = block_layout(X)
    terms, held = query_tables(layout)
    block_terms(X[0], layout, value, terms, held)
    exact = kernel.squared_distances(X, X[0])
    for i in range(len(X)):
        for ceiling in (exact[i], exact[i] * 0.5, 0.0):
            got = kernel._distance_below(codes, layout, X[0], terms, i, ceiling)
            assert got == exact[i] if exact[i] <= ceiling else got > ceiling


def _compiled(X, k, gamma):
    labels, group = kernel.vmdav_compiled(X, k=k, gamma=gamma, state=TaskState())
    return _assign_leftovers(X, labels, group, TaskState())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), none_share=st.sampled_from([0.0, 0.3]),
       numeric=st.integers(0, 2), k=st.integers(2, 6),
       gamma=st.sampled_from([0.0, 0.2, 1.1, 10.0]), repeat=st.booleans())
def test_labels_on_nominal_tables_are_the_references(seed, none_share, numeric, k, gamma,
                                                     repeat):
    rng = np.random.default_rng(seed)
    X = _table(rng, int(rng.integers(3 * k, 160)), none_share, numeric)
    if repeat:  # duplicated records: exact ties everywhere
        X = np.ascontiguousarray(X[rng.integers(0, len(X) // 3, size=len(X))])
    np.testing.assert_array_equal(_compiled(X, k, gamma), vmdav_reference(X, k=k, gamma=gamma))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), none_share=st.sampled_from([0.0, 0.3]),
       numeric=st.integers(0, 2), k=st.integers(2, 6), repeat=st.booleans())
def test_gsms_on_nominal_tables_is_the_reference(seed, none_share, numeric, k, repeat):
    rng = np.random.default_rng(seed)
    X = _table(rng, int(rng.integers(3 * k, 200)), none_share, numeric)
    if repeat:
        X = np.ascontiguousarray(X[rng.integers(0, len(X) // 3, size=len(X))])
    np.testing.assert_array_equal(gsms(X, k=k), gsms_reference(X, k=k))


def _node_bounds(X, rng):
    """``(bound, nearest row's distance, the box's column-by-column bound)`` of every
    node of GSMS's tree for 25 queries taken from the table."""
    tree = neighbours.ListedNeighbours(X, np.ones(len(X), bool), 3, TaskState()).tree
    out = []
    terms, held = query_tables(tree.layout)
    for query in rng.choice(len(X), 25, replace=False):
        q = X[query]
        block_terms(q, tree.layout, tree.value, terms, held)
        exact = kernel.squared_distances(X, q)[tree.record]  # in tree order
        for node in range(len(tree.start)):
            bound = box_bound(tree.lo, tree.hi, node, q, tree.layout, tree.value,
                              tree.whole, held)
            gap = np.maximum(np.maximum(tree.lo[node] - q, q - tree.hi[node]), 0.0)
            by_column = 0.0
            for term in gap * gap:  # in column order, as the search sums
                by_column += term
            out.append((bound, exact[tree.start[node]:tree.stop[node]].min(), by_column))
    return np.array(out)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), none_share=st.sampled_from([0.0, 0.3]),
       numeric=st.integers(0, 2))
def test_a_gsms_node_is_never_bounded_above_a_row_in_it(seed, none_share, numeric):
    """Node by node, the bound against the exact distance of the nearest row under the
    node, rounded as the search rounds it."""
    rng = np.random.default_rng(seed)
    bounds = _node_bounds(_table(rng, 1500, none_share, numeric), rng)
    assert (bounds[:, 0] <= bounds[:, 1]).all()
    assert (bounds[:, 0] >= bounds[:, 2]).all()  # never below the box's own


def test_a_gsms_node_without_the_querys_category_is_bounded_by_the_whole_mismatch():
    """Splits on the indicator columns shut categories out of nodes: there a whole
    block's bound is 2s², where the box's columns saw s²."""
    rng = np.random.default_rng(7)
    bounds = _node_bounds(_table(rng, 4000, 0.0, 0), rng)
    assert (bounds[:, 0] <= bounds[:, 1]).all()
    assert (bounds[:, 0] >= bounds[:, 2]).all()
    assert (bounds[:, 0] > bounds[:, 2] * (1 + 1e-12)).sum() > 50


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), none_share=st.sampled_from([0.0, 0.3]),
       gone=st.sampled_from([0.0, 0.6]))
def test_gsms_searches_after_removals_equal_a_full_scan(seed, none_share, gone):
    rng = np.random.default_rng(seed)
    X = _table(rng, 1200, none_share, 1)
    alive = np.ones(len(X), bool)
    listed = neighbours.ListedNeighbours(X, alive, 4, TaskState())
    removed = np.flatnonzero(rng.random(len(X)) < gone)
    alive[removed] = False
    listed.remove(removed)
    rows = rng.choice(np.flatnonzero(alive), 30, replace=False)
    for row, members in zip(rows, listed.nearest(rows, 4)):
        d2 = kernel.squared_distances(X, X[row])
        d2[~alive] = np.inf
        d2[row] = np.inf
        expected = np.lexsort((np.arange(len(X)), d2))[:4]
        assert sorted(d2[members]) == sorted(d2[expected])
