"""Record linkage's search tree over the original rows (:mod:`core.measures.linkage`).

A KD-tree with tight boxes, split at the median of the widest attribute of each node's
cell, built by a compiled kernel into arrays numpy makes. The searches read only the
tight boxes and the splits.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel

__all__ = ["build_tree"]

_LEAF_SIZE = 16


def _tight_box(rows, s, e, low, high):
    """The smallest box holding ``rows[s:e]`` (s < e) into ``low`` and ``high``."""
    for j in range(rows.shape[1]):
        low[j] = rows[s, j]
        high[j] = rows[s, j]
    for i in range(s + 1, e):
        for j in range(rows.shape[1]):
            v = rows[i, j]
            if v < low[j]:
                low[j] = v
            elif v > high[j]:
                high[j] = v


_tight_box_compiled = kernel(_tight_box)
if _tight_box_compiled is not None:
    _tight_box = _tight_box_compiled


def _build_tree(work, index, leaf_size, start, stop, left, right, split_dim, split_value,
                low, high, stack):
    """A KD-tree with tight boxes, split at the median of the widest attribute of the
    node's cell, into the arrays :func:`_tree_arrays` makes; returns the nodes used.

    A node's cell is its parent's, cut at the parent's split (the root's is the tight
    box of every point), so choosing the split reads no rows; each leaf's tight box is
    found from its rows and every other node's is the union of its children's, in one
    pass over the points instead of one per level (1,000,000 × 10: 0.38 s against
    0.54 s). The searches read only the tight boxes and the splits; the split value is
    a row of the node, so it lies inside the node's tight box. ``work`` (a copy of the
    points, ``index`` their numbers) ends with the rows in tree order, moved with their
    numbers: the scans are sequential.
    """
    m, d = work.shape
    start[0], stop[0] = 0, m
    if m:
        _tight_box(work, 0, m, low[0], high[0])
    n_nodes, top = 1, 1
    stack[0] = 0
    while top > 0:
        top -= 1
        node = stack[top]
        s, e = start[node], stop[node]
        if e - s <= leaf_size:
            continue
        dim, widest = 0, -1.0
        for j in range(d):
            if high[node, j] - low[node, j] > widest:
                dim, widest = j, high[node, j] - low[node, j]
        if widest <= 0.0:  # identical rows (not distinct): keep them in one leaf
            continue
        mid = (s + e) // 2
        lo_i, hi_i = s, e - 1  # Wirth's selection of the median on `dim`
        while hi_i > lo_i:
            pivot = work[mid, dim]
            i, j = lo_i, hi_i
            while True:
                while work[i, dim] < pivot:
                    i += 1
                while pivot < work[j, dim]:
                    j -= 1
                if i <= j:
                    index[i], index[j] = index[j], index[i]
                    for c in range(d):
                        work[i, c], work[j, c] = work[j, c], work[i, c]
                    i += 1
                    j -= 1
                if i > j:
                    break
            if j < mid:
                lo_i = i
            if mid < i:
                hi_i = j
        split = work[mid, dim]
        split_dim[node] = dim
        split_value[node] = split
        a, b = n_nodes, n_nodes + 1
        left[node], right[node] = a, b
        start[a], stop[a] = s, mid
        start[b], stop[b] = mid, e
        for j in range(d):  # the children's cells
            low[a, j], high[a, j] = low[node, j], high[node, j]
            low[b, j], high[b, j] = low[node, j], high[node, j]
        high[a, dim] = split
        low[b, dim] = split
        stack[top], stack[top + 1] = a, b
        top += 2
        n_nodes += 2
    # tight boxes: the leaves' rows, then each node the union of its children's
    for node in range(n_nodes - 1, -1, -1):
        if left[node] >= 0:
            a, b = left[node], right[node]
            for j in range(d):
                low[node, j] = min(low[a, j], low[b, j])
                high[node, j] = max(high[a, j], high[b, j])
            continue
        _tight_box(work, start[node], stop[node], low[node], high[node])
    return n_nodes


_build_compiled = kernel(_build_tree)


def _tree_arrays(m: int, d: int, leaf_size: int) -> tuple:
    """The node arrays of a tree over m points of d attributes, made by numpy: a large
    array numpy makes is backed by large memory pages where the system allows it, so
    filling it costs a small share of the page faults of one made inside a kernel
    (80 MB of rows: 40 against 20,000 at 1,000,000 × 10)."""
    capacity = 2 * (m // max((leaf_size + 1) // 2, 1) + 1) + 1
    return (np.zeros(capacity, dtype=np.int64), np.zeros(capacity, dtype=np.int64),
            np.full(capacity, -1, dtype=np.int64), np.full(capacity, -1, dtype=np.int64),
            np.zeros(capacity, dtype=np.int64), np.zeros(capacity), np.zeros((capacity, d)),
            np.zeros((capacity, d)), np.zeros(capacity, dtype=np.int64))


def _build(points: np.ndarray, leaf_size: int) -> tuple:
    """``(index, rows, start, stop, left, right, split_dim, split_value, low, high,
    n_nodes)`` of :func:`_build_tree` over ``points`` (compiled)."""
    work = np.array(points, dtype=np.float64, order="C")  # a copy, reordered in place
    index = np.arange(len(work), dtype=np.int64)
    arrays = _tree_arrays(*work.shape, leaf_size)
    n_nodes = _build_compiled(work, index, leaf_size, *arrays)
    return (index, work) + arrays[:8] + (int(n_nodes),)


def build_tree(points: np.ndarray):
    """The compiled search's KD-tree over ``points`` (None without the compiled kernels).

    A function of the points alone: it can be built ahead, on another thread, and given
    to :func:`core.measures.linkage.link_queries`.
    """
    if _build_compiled is None:
        return None
    return _build(points, _LEAF_SIZE)
