"""The spatial index as the searches of :mod:`core.methods.spatial_search` read it: the
k-d tree over the distinct rows, the float32 screen of its leaves and its cells' splits
(what each is for is in that module's notes; the structure in
:mod:`core.methods.spatial_index`).
"""

from __future__ import annotations

import numpy as np

from core.methods import spatial_index as index
from core.methods.spatial_screen import block_columns, screen_layout, screen_rows

__all__ = ["row_tree", "reindex", "screen_blocks", "cell_splits"]


_STRETCH = 65_536  # rows shifted at a time by screen_blocks


def screen_blocks(P: np.ndarray, start: np.ndarray, stop: np.ndarray, levels: int,
                  lo: np.ndarray, hi: np.ndarray):
    """``(Q32, norm2, center, axis, left_hi, right_lo, slot, place, fill, layout,
    value, block_of, whole)``: what the searches read besides the live boxes (module
    notes of :mod:`core.methods.spatial_search`).

    ``Q32`` is :func:`~core.methods.spatial_index.leaf_blocks` of the rows' screen
    columns in float32 (:func:`~core.methods.spatial_screen.screen_rows` of ``P − center``,
    ``center`` the mean row, with each block of indicator columns kept as one column;
    ``layout`` and ``value`` are :func:`~core.methods.spatial_screen.screen_layout`'s),
    ``norm2[leaf]`` the largest |x − center|² of the
    leaf's rows; it is infinite for every leaf when a row lies beyond 1e15 of the
    centre, where float32 could overflow, and then every row gets its exact distance.
    Both are made a stretch of rows at a time, without a shifted copy of ``P`` or
    float64 blocks (which leaves of unequal sizes pad to up to twice ``P``). The next
    three are the cells' splits (:func:`cell_splits` of the boxes ``lo``/``hi``), fixed
    when the tree is built. The next three say where each row's float32 values lie in
    its leaf's block, which an index that empties rows keeps compact
    (``spatial_search._vacate``): the leaf starting at row s holds row ``slot[s + i]``
    at place i, ``place[t]`` is row t's place, and only the first ``fill[leaf]`` places
    can hold a live row. As built, every row is at its own place and every place is
    filled. The last two are for the block bounds:
    :func:`~core.methods.spatial_screen.block_columns` and ``screen_layout``'s ``whole``.
    """
    center = P.mean(axis=0) if len(P) else np.zeros(P.shape[1])
    first_leaf = (1 << levels) - 1
    sizes = stop[first_leaf:] - start[first_leaf:]
    leaf, place = index.leaf_places(start, stop, levels)
    layout, value, whole = screen_layout(P, lo[0], hi[0])
    # P − center a stretch of rows at a time (never a whole copy of P): its squared
    # norms and the float32 blocks of its screen columns.
    Q32 = np.zeros((len(sizes), len(layout), int(sizes.max())), dtype=np.float32)
    row_norm2 = np.empty(len(P))
    for first in range(0, len(P), _STRETCH):
        rows = P[first:first + _STRETCH]
        shifted = rows - center
        row_norm2[first:first + _STRETCH] = np.einsum("ij,ij->i", shifted, shifted)
        if len(layout) < P.shape[1]:
            shifted = screen_rows(rows, shifted, layout)
        with np.errstate(over="ignore", invalid="ignore"):
            Q32[leaf[first:first + _STRETCH], :, place[first:first + _STRETCH]] = shifted
    firsts = np.minimum(start[first_leaf:], max(len(P) - 1, 0))
    norm2 = np.maximum.reduceat(row_norm2, firsts) if len(P) else np.zeros(len(sizes))
    norm2 = np.where(sizes > 0, norm2, 0.0)
    if not (np.isfinite(norm2).all() and norm2.max(initial=0.0) <= 1e30):
        norm2 = np.full(len(sizes), np.inf)
    slot = np.arange(len(P), dtype=np.int64)
    return (Q32, norm2, center) + cell_splits(lo, hi) + (
        slot, place, sizes.copy(), layout, value, block_columns(layout, P.shape[1]), whole)


def cell_splits(lo: np.ndarray, hi: np.ndarray):
    """``(axis, left_hi, right_lo)`` of every internal node: its widest attribute, the
    largest value there among its left child's rows and the smallest among its right
    child's (module notes).

    ``lo``/``hi`` are the nodes' boxes as :func:`~core.methods.spatial_index._refresh_all`
    leaves them when the tree is built: of every row that can still be taken, since rows
    only ever leave. The tree splits each node at the median of its widest attribute, so
    the two values are the two sides of that split. The bounds hold for any attribute;
    the widest is the one that separates the children. A child with no live row is never
    searched, so its stale box does not matter.
    """
    nodes = np.arange(len(lo) // 2)
    axis = np.argmax(hi[nodes] - lo[nodes], axis=1).astype(np.int64)
    return axis, hi[2 * nodes + 1, axis].copy(), lo[2 * nodes + 2, axis].copy()


def row_tree(X: np.ndarray, anchor: np.ndarray | None, check=None):
    """The records of ``X`` on the spatial index, as the searches take it; returns
    ``(tree, levels, order)``.

    ``tree`` is ``(P, screen, head, end, members, row_of, leaf_of, start, stop,
    first_leaf, lo, hi, cnt, top, rho2)``: identical records stored once as a row
    holding its records in input order (``members[head[t]:end[t]]``, the live ones),
    rows in k-d tree order, the leaves' boxes, counts and largest ρ² (squared distance
    to ``anchor``) set, and the float32 screen with the cells' splits. ``order`` is the
    rows sorted by ρ², largest first (the shell of the farthest-from-centroid search).
    ``anchor`` None: a tree only searched for nearest records (ρ² all 0, so a record's
    removal never looks for its leaf's largest ρ² again; no shell, ``order`` empty).
    ``check`` is called between the steps (Cancel).
    """
    check = check or (lambda: None)
    members, starts, row_of = index.distinct_rows(X)
    check()
    return _index_rows(_Rows(X[members[starts[:-1]]]), starts[:-1], starts[1:], members,
                       row_of, anchor, check)


def reindex(tree, anchor: np.ndarray | None, check=None):
    """The live rows of ``tree`` on a tree of their own, as :func:`row_tree` builds it:
    ``(tree, levels, order)``.

    An index whose records leave group by group keeps the k-d tree built for all of
    them: its leaves empty and its cells stay as wide as they were, so a search
    meets more leaves, each holding fewer live rows, than on a tree of the rows left.
    Building the tree again when half of the rows have emptied costs one build in all
    (the sizes halve) and keeps the leaves full. The rows keep their queues
    (``members`` is shared, ``head``/``end`` carried over), so every search answers
    exactly as before; the tests compare runs with and without it.
    """
    check = check or (lambda: None)
    P, head, end, members, row_of = tree[0], tree[2], tree[3], tree[4], tree[5]
    live = np.flatnonzero(head < end)
    new_row = np.full(len(P) + 1, -1, dtype=np.int64)  # the last for records of no row
    new_row[live] = np.arange(len(live))
    return _index_rows(_Rows(P[live]), head[live], end[live], members, new_row[row_of],
                       anchor, check)


class _Rows:
    """Rows handed over to :func:`_index_rows`, which lets go of them once it has them in
    tree order (an argument would be held by the caller's frame to the end: one more
    copy of the records beside the index while its screen is made)."""

    def __init__(self, rows: np.ndarray):
        self.rows = rows

    def take(self) -> np.ndarray:
        rows, self.rows = self.rows, None
        return rows


def _index_rows(rows: _Rows, head, end, members, row_of, anchor, check):
    """:func:`row_tree` from the distinct rows with their queues (``row_of[r]`` is the
    row of record r, or −1 for a record in no row)."""
    P = rows.take()
    d = P.shape[1]
    perm, start, stop, levels = index.build_tree(P, index.LEAF_SIZE, check)
    check()
    P = np.ascontiguousarray(P[perm])
    head, end = head[perm].copy(), end[perm].copy()
    inverse = np.full(len(perm) + 1, -1, dtype=np.int64)  # inverse[−1] stays −1
    inverse[perm] = np.arange(len(perm))
    row_of = inverse[row_of]
    first_leaf = (1 << levels) - 1
    leaf_of = np.empty(len(P), dtype=np.int64)
    for node in range(first_leaf, 2 * first_leaf + 1):
        leaf_of[start[node]:stop[node]] = node
    n_nodes = len(start)
    lo, hi = np.zeros((n_nodes, d)), np.zeros((n_nodes, d))
    cnt, top, rho2 = np.zeros(n_nodes, dtype=np.int64), np.zeros(n_nodes), np.zeros(len(P))
    if anchor is None:
        order = np.zeros(0, dtype=np.int64)
    else:
        order = index._anchor_at(anchor, P, head, end, rho2)
    index._refresh_all(first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top)
    check()
    screen = screen_blocks(P, start, stop, levels, lo, hi)
    tree = (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi,
            cnt, top, rho2)
    return tree, levels, order
