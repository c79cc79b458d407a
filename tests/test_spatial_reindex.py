"""The spatial index as records leave: compact leaves and a tree built again on the rows left.

MDAV, CBFS and TFRP empty the index's rows group by group. Each leaf keeps its live
rows' float32 values in front (``spatial_search._vacate``), and the run builds the tree
again on the rows left whenever half have emptied (``spatial_tree.reindex``). Neither may
change an answer: the searches are compared with full scans after both, and whole runs
that rebuild at every halving with the reference's labels.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core.compiled import COMPILED
from core.methods import spatial_heuristics
from core.methods import spatial_index as index
from core.methods import spatial_parallel as parallel
from core.methods import spatial_search as search
from core.methods import spatial_tree
from core.methods.spatial_screen import query_buffer
from core.methods.heuristics import FIRST_RECORD, GROWTH, fixed_size, fixed_size_reference
from tests.spatial_helpers import KINDS, leaves_of, nearest, table

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba is switched off")


def _table(rng, n, d):
    """Normal values rounded to 0–2 decimals: ties between rows and identical rows."""
    return np.round(rng.normal(size=(n, d)), int(rng.integers(0, 3)))


def _take_rows(tree, rows):
    """Empty each row of ``rows`` as a group takes its records: queue, boxes, leaf."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    for t in rows:
        if head[t] < end[t]:  # the boxes hear of a row once, as it empties
            head[t] = end[t]
            index._emptied(t, leaf_of[t], first_leaf, start, stop, head, end, P, rho2, lo, hi,
                           cnt, top)
        search._vacate(t, leaf_of[t] - first_leaf, start[leaf_of[t]], screen)


def _live(tree, n):
    P, head, end, members = tree[0], tree[2], tree[3], tree[4]
    alive = np.zeros(n, dtype=bool)
    for t in range(len(P)):
        alive[members[head[t]:end[t]]] = True
    return alive


def _searches_equal_a_full_scan(tree, levels, anchor, X, alive, rng):
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    d = X.shape[1]
    buffer32 = np.zeros(int((stop - start).max()) + 1, dtype=np.float32)
    records = np.flatnonzero(alive)
    for _ in range(15):
        q = X[rng.integers(len(X))] + rng.normal(size=d) * rng.choice([0.0, 0.1, 10.0])
        d2 = ((X[records] - q) ** 2).sum(axis=1)
        m = int(rng.integers(1, 8))
        assert nearest(tree, levels, q, m) == records[np.lexsort((records, d2))][:m].tolist()
        _, record, _ = search._farthest_from(q, anchor, first_leaf, start, head, end,
                                             members, P, screen, lo, hi, cnt, top,
                                             np.zeros(len(start)),
                                             np.zeros(len(start), dtype=np.int64), buffer32,
                                             query_buffer(d),
                                             np.zeros(4, dtype=np.int64))
        assert record == records[np.lexsort((records, -d2))][0]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.2, 0.6, 0.95]))
def test_vacated_leaves_hold_their_live_rows_in_front(seed, emptied):
    """After rows empty in any order, each leaf's first ``fill`` places hold exactly its
    live rows, ``slot`` and ``place`` are inverse, the float32 block follows its rows, and
    both searches still give a full scan's answer."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(800, 3000)), int(rng.integers(1, 5))
    X = _table(rng, n, d)
    anchor = X.mean(axis=0)
    with leaves_of(int(rng.choice([8, 32]))):
        tree, levels, _ = spatial_tree.row_tree(X, anchor)
    P, screen, head, end, start, stop, first_leaf = (tree[0], tree[1], tree[2], tree[3],
                                                     tree[7], tree[8], tree[9])
    rows = rng.permutation(len(P))[:int(emptied * len(P))]
    _take_rows(tree, rows)
    _take_rows(tree, rows[:3])  # a row vacated twice stays where it went
    Q32, center, slot, place, fill = screen[0], screen[2], screen[6], screen[7], screen[8]
    for leaf in range(first_leaf + 1):
        s, e = start[first_leaf + leaf], stop[first_leaf + leaf]
        held = slot[s:e]
        assert sorted(held) == list(range(s, e))
        assert (place[held] == np.arange(e - s)).all()
        live = {t for t in range(s, e) if head[t] < end[t]}
        assert set(held[:fill[leaf]]) == live
        expected = (P[held] - center).astype(np.float32).T
        assert np.array_equal(Q32[leaf][:, :e - s], expected)
    _searches_equal_a_full_scan(tree, levels, anchor, X, _live(tree, n), rng)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.5, 0.9]))
def test_a_reindexed_tree_holds_the_live_records_and_answers_as_a_full_scan(seed, emptied):
    """The tree built again on the rows left (twice over) holds every live record once,
    in its row's queue in input order, and no other; both searches equal full scans."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(800, 3000)), int(rng.integers(1, 5))
    X = _table(rng, n, d)
    anchor = X.mean(axis=0)
    small = leaves_of(int(rng.choice([8, 32])))
    with small:
        tree, levels, _ = spatial_tree.row_tree(X, anchor)
    for _ in range(2):
        rows = rng.permutation(len(tree[0]))[:int(emptied * len(tree[0]))]
        _take_rows(tree, rows)
        # part of a row taken as well: its queue's head moves
        for t in rng.permutation(len(tree[0]))[:5]:
            if tree[3][t] - tree[2][t] > 1:
                tree[2][t] += 1
        alive = _live(tree, n)
        with small:
            tree, levels, order = spatial_tree.reindex(tree, anchor)
        P, head, end, members, row_of, cnt = (tree[0], tree[2], tree[3], tree[4], tree[5],
                                              tree[12])
        assert (head < end).all() and cnt[0] == len(P)
        assert np.array_equal(_live(tree, n), alive)
        for record in np.flatnonzero(alive):
            t = row_of[record]
            queue = members[head[t]:end[t]]
            assert record in queue and (np.diff(queue) > 0).all()
            assert np.array_equal(P[t], X[record])
        assert sorted(order) == list(range(len(P)))
        _searches_equal_a_full_scan(tree, levels, anchor, X, alive, rng)


@pytest.fixture
def reindex_at_every_halving(monkeypatch):
    """Runs build the tree again whenever half of its rows have emptied, however few,
    and with leaves of 16 rows at most (trees as deep as a large table's)."""
    monkeypatch.setattr(spatial_heuristics, "_REINDEX_FROM", 1)
    monkeypatch.setattr(index, "LEAF_SIZE", 16)


@pytest.mark.parametrize("data", KINDS)
@pytest.mark.parametrize("threads", ["one thread", "two threads"])
def test_runs_that_reindex_equal_the_reference(reindex_at_every_halving, monkeypatch, data,
                                               threads):
    if threads == "two threads":
        monkeypatch.setattr(parallel, "_MIN_LEVELS", 1)
        monkeypatch.setattr(parallel, "_SUBTREE_LEVELS", 2)
        monkeypatch.delenv("MICROAGG_SEARCH_THREADS", raising=False)
    else:
        monkeypatch.setenv("MICROAGG_SEARCH_THREADS", "1")
    X = table(data, np.random.default_rng(len(data)), 2500)
    for first in FIRST_RECORD:
        for growth in GROWTH:
            fast = fixed_size(X, k=4, first=first, growth=growth)
            assert np.array_equal(fast, fixed_size_reference(X, k=4, first=first,
                                                             growth=growth)), (first, growth)
            if data != "few distinct rows":
                assert spatial_heuristics.fixed_size_indexed.indexed >= 3, (first, growth)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.sampled_from(FIRST_RECORD),
       st.sampled_from(GROWTH))
def test_any_tie_heavy_table_that_reindexes_equals_the_reference(seed, k, first, growth):
    rng = np.random.default_rng(seed)
    X = _table(rng, int(rng.integers(50, 600)), int(rng.integers(1, 4)))
    saved = spatial_heuristics._REINDEX_FROM
    spatial_heuristics._REINDEX_FROM = 1
    try:
        with leaves_of(int(rng.choice([1, 4, 16]))):
            fast = fixed_size(X, k=k, first=first, growth=growth)
    finally:
        spatial_heuristics._REINDEX_FROM = saved
    assert np.array_equal(fast, fixed_size_reference(X, k=k, first=first, growth=growth))
