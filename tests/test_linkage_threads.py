"""Record linkage on two threads: the same figures as one thread and as the reference,
whichever thread links which query; a cancel or an error in either leaves no thread."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import core.measures.linkage as linkage
import core.measures.linkage_tree as linkage_tree
from core import Cancelled
from core.measures.disclosure import record_linkage
from tests.conftest import cancelled_at_step
from tests.test_measures_scale import KINDS, _pair, old_record_linkage

pytestmark = pytest.mark.skipif(linkage._search_compiled is None,
                                reason="the two-thread search is the compiled path's")


def _two_threads(monkeypatch) -> list[str]:
    """Two threads from the first query on, in stretches of one or two queries; returns
    the record of which thread linked each stretch."""
    monkeypatch.delenv("MICROAGG_SEARCH_THREADS", raising=False)
    monkeypatch.setattr("core.threads.os.cpu_count", lambda: 2)
    monkeypatch.setattr(linkage, "_TWO_THREADS_FROM", 1)
    monkeypatch.setattr(linkage, "_FIRST_STRETCH", 1)
    monkeypatch.setattr(linkage, "_SMALLEST_STRETCH", 2)
    monkeypatch.setattr(linkage, "_CHUNK_SECONDS", 0.0)
    real = linkage._search_compiled
    names = []

    def recorded(*args):
        names.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(linkage, "_search_compiled", recorded)
    return names


@pytest.fixture
def two_threads(monkeypatch):
    return _two_threads(monkeypatch)


def _one_thread(Z, M, monkeypatch):
    with monkeypatch.context() as m:
        m.setenv("MICROAGG_SEARCH_THREADS", "1")
        return record_linkage(Z, M)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(KINDS), st.integers(1, 300),
       st.integers(1, 6))
def test_two_threads_give_the_figures_of_one(seed, kind, n, d):
    Z, M = _pair(np.random.default_rng(seed), kind, n, d)
    with pytest.MonkeyPatch.context() as monkeypatch:
        names = _two_threads(monkeypatch)
        two = record_linkage(Z, M)
        one = _one_thread(Z, M, monkeypatch)
    assert two == one == old_record_linkage(Z, M)
    assert names and set(names) <= {"MainThread", "microagg-linkage"}


def test_both_threads_link_and_the_shell_grows_on_either(two_threads, monkeypatch):
    # every masked record is the centre of a cube of 2**6 originals: 64 tied points,
    # more than a shell holds at first, on whichever thread
    corners = np.array(list(itertools.product((0.0, 1.0), repeat=6)))
    Z = np.vstack([corners + 3.0 * i for i in range(40)])
    M = np.repeat(np.array([[0.5] * 6]) + 3.0 * np.arange(40)[:, None], 64, axis=0)
    rng = np.random.default_rng(5)
    Y = rng.standard_normal((4000, 5))
    N = Y + rng.normal(scale=0.3, size=Y.shape)
    for A, B in ((Z, M), (Y, N)):
        two_threads.clear()
        assert record_linkage(A, B) == _one_thread(A, B, monkeypatch) == \
            old_record_linkage(A, B)
        assert {"MainThread", "microagg-linkage"} <= set(two_threads)


def test_a_cancel_stops_both_threads(two_threads):
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((20_000, 6))
    M = Z + rng.normal(scale=0.3, size=Z.shape)
    state, _ = cancelled_at_step(3)
    with pytest.raises(Cancelled):
        record_linkage(Z, M, state=state)
    assert not [t for t in threading.enumerate() if t.name == "microagg-linkage"]
    # Stopped long before the 20,000 queries: a tenth of them at most (534 stretches
    # were linked before the helper saw the cancel on a machine busy with other work).
    assert len(two_threads) < 2_000


def test_an_error_on_the_helper_reaches_the_caller(two_threads, monkeypatch):
    real = linkage._search_compiled

    def failing(*args):
        if threading.current_thread().name == "microagg-linkage":
            raise MemoryError("helper out of memory")
        return real(*args)

    monkeypatch.setattr(linkage, "_search_compiled", failing)
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((3000, 4))
    with pytest.raises(MemoryError, match="helper out of memory"):
        record_linkage(Z, Z + 0.1)
    assert not [t for t in threading.enumerate() if t.name == "microagg-linkage"]


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(20, 400), st.integers(1, 5),
       st.sampled_from([0.5, 3.0, 20.0]), st.sampled_from([16384, 64, 4, 1]))
def test_the_pruned_search_is_the_reference_for_queries_anywhere(seed, n, d, spread, part):
    """Queries inside and far outside the points, each bounded by its distance to a
    random point (so some point is within reach): the compiled search, which prunes a
    node by a lower bound of its box distance before reading the box, gives the
    reference's minimum and ties, whatever the parts the queries are put in order by
    (the default leaves these few points one part)."""
    rng = np.random.default_rng(seed)
    points = np.unique(np.round(rng.standard_normal((n, d)) * 4) / 4, axis=0)  # a grid
    n = len(points)
    queries = rng.standard_normal((max(n // 2, 1), d)) * spread
    targets = rng.integers(0, n, len(queries))
    bound = ((queries - points[targets]) ** 2).sum(axis=1)
    multiplicity = np.ones(n)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(linkage, "_PART_POINTS", part)
        fast = linkage.link_queries(points, multiplicity, queries, bound, targets)
    reference = linkage.link_reference(points, multiplicity, queries, bound)
    np.testing.assert_array_equal(fast[0], reference[0])
    np.testing.assert_array_equal(fast[1], reference[1])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 500), st.integers(1, 4),
       st.sampled_from([1, 3, 40, 16384]), st.booleans())
def test_queries_are_searched_part_by_part_then_by_their_anchors(seed, n, d, part, grid):
    """The search order is a permutation of the queries that puts them by the node of
    about ``_PART_POINTS`` points each reaches down the splits (ties at a split go
    right), and within a node by their anchors' positions in the tree."""
    rng = np.random.default_rng(seed)
    points = rng.standard_normal((n, d))
    queries = rng.standard_normal((n // 2 + 1, d)) * 2
    if grid:  # queries on the splits
        points, queries = np.round(points), np.round(queries)
    tree = linkage.build_tree(points)
    index, _, start, _, left, right, split_dim, split_value = tree[:8]
    anchor_position = rng.integers(0, n, len(queries))
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(linkage, "_PART_POINTS", part)
        order = linkage.search_order(queries, tree, anchor_position)
    assert sorted(order.tolist()) == list(range(len(queries)))
    depth = int(np.log2(max(n / part, 1.0)))
    reached = []
    for q in queries:
        node = 0
        for _ in range(depth):
            if left[node] < 0:
                break
            node = left[node] if q[split_dim[node]] < split_value[node] else right[node]
        reached.append(start[node])
    keys = [(reached[q], anchor_position[q]) for q in order]
    assert keys == sorted(keys)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 600), st.integers(1, 6),
       st.sampled_from([16, 2, 1]), st.booleans())
def test_the_tree_holds_its_rows_in_tight_boxes_split_inside_them(seed, n, d, leaf, grid):
    """Every node's box is the smallest holding its rows (a leaf's from its rows, the
    others from their children's), a split value is a row of its node, the left child's
    rows are at most it and the right child's at least it, leaves hold at most
    ``leaf`` rows unless they are copies of one row, and the rows are the points,
    permuted with their index."""
    rng = np.random.default_rng(seed)
    points = rng.standard_normal((n, d))
    if grid:  # many ties in every attribute, and repeated rows
        points = np.round(points)
    index, work, start, stop, left, right, split_dim, split_value, low, high, nodes, *_ = \
        linkage_tree._build(points, (), leaf)
    np.testing.assert_array_equal(work, points[index])
    assert sorted(index.tolist()) == list(range(n))
    leaves = 0
    for node in range(nodes):
        rows = work[start[node]:stop[node]]
        np.testing.assert_array_equal(low[node], rows.min(axis=0))
        np.testing.assert_array_equal(high[node], rows.max(axis=0))
        if left[node] < 0:
            leaves += stop[node] - start[node]
            assert len(rows) <= leaf or (rows == rows[0]).all()
            continue
        a, b, j = left[node], right[node], split_dim[node]
        assert (start[a], stop[a], start[b], stop[b]) == (start[node], start[b], stop[a],
                                                          stop[node])
        assert split_value[node] in rows[:, j]
        assert work[start[a]:stop[a], j].max() <= split_value[node]
        assert work[start[b]:stop[b], j].min() >= split_value[node]
    assert leaves == n
