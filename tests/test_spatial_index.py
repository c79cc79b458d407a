"""The compiled spatial index gives MDAV, CBFS and TFRP exactly the reference's labels.

``fixed_size_reference`` (full passes over a RecordPool) is today's implementation and
the reference; ``fixed_size`` uses the spatial index whenever numba is available. The
data here are chosen to break a careless index: exact ties between distinct rows
(integer grids, symmetric points), many duplicates of a few rows, one column constant,
and columns of very different scales.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from core.compiled import COMPILED
from core.errors import Cancelled
from core.methods.heuristics import FIRST_RECORD, GROWTH, fixed_size, fixed_size_reference
from core.methods import spatial_index as index
from core.methods import spatial_search as search
from core.methods import spatial_tree
from core.methods.spatial_index import distinct_rows
from core.methods.spatial_screen import query_buffer
from core.progress import TaskState
from tests.spatial_helpers import leaves_of, nearest

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba is switched off")

HEURISTICS = [(first, growth) for first in FIRST_RECORD for growth in GROWTH]


def _same(X, k):
    """Every heuristic gives the reference's labels, on the index as built for a run and
    on one of small leaves (a deeper tree, as a large table has)."""
    for first, growth in HEURISTICS:
        slow = fixed_size_reference(X, k=k, first=first, growth=growth)
        for leaf_size in (index.LEAF_SIZE, 8):
            with leaves_of(leaf_size):
                fast = fixed_size(X, k=k, first=first, growth=growth)
            assert np.array_equal(fast, slow), (first, growth, leaf_size)


@pytest.mark.parametrize("seed", range(4))
def test_random_data(seed):
    rng = np.random.default_rng(seed)
    n, d = rng.integers(200, 1500), rng.integers(1, 8)
    _same(rng.normal(size=(n, d)) * rng.uniform(0.1, 10, size=d), int(rng.integers(2, 9)))


@pytest.mark.parametrize("seed", range(3))
def test_wide_tables_of_indicator_columns(seed):
    """Nominal attributes as scaled indicator columns, as the embedding makes them,
    beside numeric ones: a wide table whose boxes bound poorly; many rows tie."""
    rng = np.random.default_rng(300 + seed)
    n = 700
    blocks = [np.eye(m)[rng.integers(0, m, size=n)] * rng.uniform(0.3, 2.0)
              for m in (2, 9, 17)]
    X = np.column_stack([rng.normal(size=(n, 2)), *blocks, rng.integers(0, 4, size=n)])
    _same(X, 3 + seed)


@pytest.mark.parametrize("seed", range(3))
def test_integer_grid_ties_between_distinct_rows(seed):
    rng = np.random.default_rng(100 + seed)
    _same(rng.integers(0, 3, size=(900, 3)).astype(float), 3 + seed)


def test_few_distinct_rows_repeated():
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(4, 5))
    _same(rows[rng.integers(0, 4, size=2000)], 5)


def test_two_rows_and_a_constant_column():
    X = np.zeros((1201, 3))
    X[::2, 0] = 1.0
    X[:, 2] = 7.0
    _same(X, 4)


@pytest.mark.parametrize("scale", [1e-40, 1e-7, 3e38, 1e150])
def test_extreme_scales_and_near_ties(scale):
    """Tiny, huge and nearly equal values: the box bounds never prune a record that the
    full scan would choose."""
    rng = np.random.default_rng(int(np.log10(scale)) + 50)
    X = (rng.normal(size=(700, 3)) + 1 / 3) * scale
    X[::7, 1] = X[0, 1] * (1 + 1e-12)  # near-ties closer than a float32 step
    _same(X, 4)


def test_rows_a_few_ulps_apart():
    """Whole leaves within a few float32 steps (about 1e-9 apart): a box bound never
    exceeds a row's own distance, so the index still finds the reference's records."""
    rng = np.random.default_rng(11)
    steps = rng.permutation(3000).astype(float)
    X = np.column_stack([1.0 + steps * 2.0 ** -30, 1.0 + steps[::-1] * 2.0 ** -31])
    _same(X, 3)


@pytest.mark.parametrize("spread, offset", [(1e-6, 1e8), (1e-3, 1e4), (0.05, 1e5), (1.0, 1e14),
                                            (1e-3, 0.0)])
def test_the_float32_screen_never_passes_over_a_nearer_record(spread, offset):
    """Two clusters far apart, each with a spread float32 cannot resolve at that distance
    from the centre (the screen then lets the leaves' rows through to the exact
    distance), and values just inside the range where the screen is used at all."""
    rng = np.random.default_rng(int(np.log10(offset + 1)) + 7)
    X = rng.normal(size=(1600, 4)) * spread
    X[::2] += offset
    X[1::2] -= offset / 3
    X[::9, 2] = X[0, 2] + spread * 1e-9  # near-ties below a float32 step
    _same(X, 3)


def _searches(X):
    """A fresh index over ``X``'s rows (as fixed_size_indexed builds it) and its two
    searches: the m nearest records to q, and the record farthest from q."""
    members, starts, row_of = index.distinct_rows(X)
    P = X[members[starts[:-1]]]
    perm, start, stop, levels = index.build_tree(P, 48)
    P = np.ascontiguousarray(P[perm])
    head, end = starts[:-1][perm].copy(), starts[1:][perm].copy()
    n_nodes, d = len(start), X.shape[1]
    lo, hi = np.zeros((n_nodes, d)), np.zeros((n_nodes, d))
    cnt, top, rho2 = np.zeros(n_nodes, dtype=np.int64), np.zeros(n_nodes), np.zeros(len(P))
    first_leaf = (1 << levels) - 1
    anchor = X.mean(axis=0)
    index._anchor_at(anchor, P, head, end, rho2)
    index._refresh_all(first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top)
    screen = spatial_tree.screen_blocks(P, start, stop, levels, lo, hi)
    buffer32 = np.zeros(int((stop - start).max()) + 1, dtype=np.float32)
    q32, work = query_buffer(d), np.zeros(4, dtype=np.int64)
    taken = np.zeros(len(P), dtype=np.int64)

    def nearest(q, m):
        stack, stack_d2 = np.zeros(2 * levels + 8, dtype=np.int64), np.zeros(2 * levels + 8)
        best_d2, best_id = np.zeros(m), np.zeros(m, dtype=np.int64)
        size = search._nearest(q, m, taken, first_leaf, start, head, end, members, P,
                              screen, lo, hi, cnt, stack, stack_d2, best_d2, best_id,
                              buffer32, q32, work)
        return best_id[:size].tolist()

    def farthest(q):
        keys, nodes = np.zeros(n_nodes), np.zeros(n_nodes, dtype=np.int64)
        return int(search._farthest_from(q, anchor, first_leaf, start, head, end,
                                        members, P, screen, lo, hi, cnt, top, keys, nodes,
                                        buffer32, q32, work)[1])

    return nearest, farthest


@pytest.mark.parametrize("spread, offset, d", [(1e-3, 1e4, 1), (1e-3, 1e4, 3), (1e-4, 3e3, 2),
                                               (1.0, 0.0, 5)])
def test_each_search_equals_a_full_scan_where_float32_cannot_tell_rows_apart(spread, offset,
                                                                              d):
    """Rows a float32 step apart or closer, far from the centre: the searches through the
    float32 screen give exactly what an exact scan gives (distance, then input order)."""
    rng = np.random.default_rng(d)
    X = np.round(rng.normal(size=(3000, d)) * spread, 7)  # exact ties as well
    X[::2] += offset
    order = np.arange(len(X))
    nearest, farthest = _searches(X)
    for row in rng.integers(0, len(X), 60):
        q = X[row] + rng.normal(size=d) * spread * 1e-3
        d2 = ((X - q) ** 2).sum(axis=1)
        assert nearest(q, 7) == np.lexsort((order, d2))[:7].tolist()
        assert farthest(q) == int(np.lexsort((order, -d2))[0])


def test_symmetric_points_around_the_centroid():
    square = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    X = np.concatenate([square * r for r in (1.0, 2.0, 3.0, 4.0, 5.0)] * 6)
    _same(X, 3)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(4, 80), st.integers(1, 4)),
              elements=st.sampled_from([-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0])),
       st.integers(2, 4))
def test_any_small_table(X, k):
    if k > len(X):
        k = len(X)
    _same(X, k)


def test_distinct_rows_keep_input_order_and_merge_signed_zeros():
    X = np.array([[1.0, 0.0], [2.0, 2.0], [1.0, -0.0], [2.0, 2.0], [1.0, 0.0]])
    members, starts, row_of = distinct_rows(X)
    groups = sorted(tuple(members[a:b]) for a, b in zip(starts[:-1], starts[1:]))
    assert groups == [(0, 2, 4), (1, 3)]
    assert row_of[0] == row_of[2] == row_of[4] != row_of[1] == row_of[3]


def test_cancel_stops_a_large_run_within_a_second():
    X = np.random.default_rng(0).normal(size=(200_000, 10))
    state = TaskState()
    timer = threading.Timer(0.5, state.cancel)
    timer.start()
    import time
    began = time.perf_counter()
    with pytest.raises(Cancelled):
        fixed_size(X, k=5, state=state)
    assert time.perf_counter() - began < 0.5 + 1.5  # setup plus at most one chunk


def test_each_node_splits_at_the_median_of_its_first_widest_attribute():
    """The build's spreads, taken a row at a time, pick the attribute numpy's ``ptp``
    and ``argmax`` pick (the first of equal spreads: indicator columns of a nominal
    attribute all spread the same), and the node is cut at that attribute's median."""
    rng = np.random.default_rng(11)
    codes = rng.integers(0, 6, size=2000)
    indicators = np.eye(6)[codes] * 0.7  # six columns of the same spread
    for P in (rng.normal(size=(3000, 5)) * [1.0, 3.0, 0.5, 3.0, 2.0],
              np.column_stack([indicators, rng.integers(0, 3, size=2000) * 0.2])):
        perm, start, stop, levels = index.build_tree(P, 16)
        assert levels >= 5
        for node in range((1 << levels) - 1):
            rows = P[perm[start[node]:stop[node]]]
            j = int(np.argmax(np.ptp(rows, axis=0)))
            left = P[perm[start[2 * node + 1]:stop[2 * node + 1]], j]
            right = P[perm[start[2 * node + 2]:stop[2 * node + 2]], j]
            assert len(left) == len(rows) // 2 and left.max() <= right.min()


def test_cell_splits_bound_every_row_of_each_child():
    """The cells the nearest search descends through: in its split attribute, every row of
    a left child lies at or below ``left_hi`` and every row of a right child at or above
    ``right_lo``, ties at the median included."""
    rng = np.random.default_rng(5)
    for X in (rng.normal(size=(3000, 4)), rng.integers(0, 12, size=(4000, 3)).astype(float)):
        tree, levels, _ = spatial_tree.row_tree(X, X.mean(axis=0))
        P, screen, start, stop, first_leaf = tree[0], tree[1], tree[7], tree[8], tree[9]
        axis, left_hi, right_lo = screen[3:6]
        assert levels >= 3 and len(axis) == first_leaf
        for v in range(first_leaf):
            j, a, b = axis[v], 2 * v + 1, 2 * v + 2
            assert P[start[a]:stop[a], j].max() == left_hi[v]
            assert P[start[b]:stop[b], j].min() == right_lo[v]
            assert left_hi[v] <= right_lo[v]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.3, 0.9]), st.integers(1, 9))
def test_nearest_through_the_cells_equals_a_full_scan_after_deletions(seed, emptied, m):
    """The nearest search prunes by cells that still hold the records taken; after many
    rows have emptied (their leaves' boxes shrunk), it gives exactly a full scan's answer
    (distance, then input order), for queries inside and far outside the data."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1500, 4000)), int(rng.integers(1, 6))
    X = np.round(rng.normal(size=(n, d)), int(rng.integers(0, 3)))  # ties and duplicates
    tree, levels, _ = spatial_tree.row_tree(X, X.mean(axis=0))
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    for t in np.flatnonzero(rng.random(len(P)) < emptied):
        head[t] = end[t]
        index._refresh(leaf_of[t], first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt,
                       top)
    live = np.zeros(n, dtype=bool)
    for t in range(len(P)):
        live[members[head[t]:end[t]]] = True
    if not live.any():
        return
    for _ in range(20):
        q = X[rng.integers(n)] + rng.normal(size=d) * rng.choice([0.0, 0.1, 10.0])
        found = nearest(tree, levels, q, m)
        records = np.flatnonzero(live)
        d2 = ((X[records] - q) ** 2).sum(axis=1)
        assert found == records[np.lexsort((records, d2))][:m].tolist()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["rounded", "indicators", "few rows"]),
       st.sampled_from([0.2, 0.7, 1.0]))
def test_a_row_emptied_leaves_the_boxes_a_recomputation_gives(seed, kind, emptied):
    """``_emptied`` keeps the counts, boxes and largest ρ² of the leaf and its ancestors
    as ``_refresh`` recomputes them from the live rows, every array bit for bit after
    each row, down to every row emptied (ties, indicator columns, few distinct rows)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(300, 2500))
    if kind == "rounded":
        X = np.round(rng.normal(size=(n, int(rng.integers(1, 6)))), int(rng.integers(0, 2)))
    elif kind == "indicators":
        X = np.column_stack([np.eye(w)[rng.integers(0, w, n)] * 0.7 for w in (2, 5, 9)] +
                            [rng.integers(0, 3, n)])
    else:
        X = rng.normal(size=(5, 3))[rng.integers(0, 5, n)]
    with leaves_of(int(rng.choice([4, 16, 128]))):
        tree, _, _ = spatial_tree.row_tree(X, X.mean(axis=0))
    (P, _, head, end, _, _, leaf_of, start, stop, first_leaf, lo, hi, cnt, top, rho2) = tree
    kept = [a.copy() for a in (lo, hi, cnt, top)]
    rows = rng.permutation(len(P))[:max(1, int(emptied * len(P)))]
    for t in rows:
        head[t] = end[t]
        index._emptied(t, leaf_of[t], first_leaf, start, stop, head, end, P, rho2, *kept)
        index._refresh(leaf_of[t], first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt,
                       top)
        for mine, theirs in zip(kept, (lo, hi, cnt, top)):
            assert np.array_equal(mine, theirs)


def _screen_whole(P, start, stop, levels):
    """The screen's blocks and leaf norms as made before the stretches: P − center
    whole, its float64 blocks, then float32 (the reference)."""
    center = P.mean(axis=0)
    shifted = P - center
    first_leaf = (1 << levels) - 1
    sizes = stop[first_leaf:] - start[first_leaf:]
    row_norm2 = np.einsum("ij,ij->i", shifted, shifted)
    norm2 = np.maximum.reduceat(row_norm2, np.minimum(start[first_leaf:], len(P) - 1))
    norm2 = np.where(sizes > 0, norm2, 0.0)
    if not (np.isfinite(norm2).all() and norm2.max(initial=0.0) <= 1e30):
        norm2 = np.full(len(sizes), np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        Q32 = index.leaf_blocks(shifted, start, stop, levels).astype(np.float32)
    return Q32, norm2


@pytest.mark.parametrize("stretch", [1, 7, 64, 65_536])
@pytest.mark.parametrize("scale", [1.0, 1e20, 1e40])
def test_the_screen_made_a_stretch_at_a_time_is_the_whole_one(monkeypatch, stretch, scale):
    """Same float32 blocks and leaf norms bit for bit, whatever the stretch (rows at
    every alignment), with rows beyond float32's range (inf in the blocks) and beyond
    the norms' 1e30 (every leaf's norm infinite)."""
    rng = np.random.default_rng(stretch)
    X = rng.normal(size=(700, 5))
    X[::13] *= scale
    X[5] = 0.0
    perm, start, stop, levels = index.build_tree(X, 24)
    P = np.ascontiguousarray(X[perm])
    monkeypatch.setattr(spatial_tree, "_STRETCH", stretch)
    Q32, norm2 = spatial_tree.screen_blocks(P, start, stop, levels,
                                            np.zeros((len(start), 5)),
                                            np.zeros((len(start), 5)))[:2]
    want_Q32, want_norm2 = _screen_whole(P, start, stop, levels)
    assert Q32.dtype == np.float32 and Q32.shape == want_Q32.shape
    assert Q32.tobytes() == want_Q32.tobytes()
    assert norm2.tobytes() == want_norm2.tobytes()
    if scale > 1e30:
        assert np.isinf(Q32).any()
