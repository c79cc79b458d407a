"""Record linkage's search tree over the original rows (:mod:`core.measures.linkage`).

A KD-tree with tight boxes, split at the median of the widest attribute of each node's
cell, built by a compiled kernel into arrays numpy makes. The searches read only the
tight boxes and the splits.

Nominal attributes
    A nominal quasi-identifier is embedded as a block of indicator columns
    (:mod:`core.data.encoding`): in every row one of them holds the same value s and
    the others 0. The tree keeps such a block as one column, the row's category (its
    place in the block), with ``pair = s·s`` for it (0 for a kept column): two rows of
    different categories differ by s in two of the block's columns and agree on the
    others, so their squared distance over the block is ``s·s + s·s``, and 0 for the
    same category. Added at the block's place, one term after the other, that is the
    embedding's sum over the columns in order bit for bit (the block's other terms are
    zeros), so the searches' distances are the full-width ones. A box holds the
    smallest and largest category of its rows: a query whose category is outside holds
    none of them, ``2·s·s`` from every row. Which columns form a block is said by the
    caller (the encoding's attributes, :func:`layout_of`) and checked on the rows: a
    block some row does not fit (no or two nonzero columns, another value) stays as its
    columns. A census table of five nominal attributes is 124 columns wide and 7 in the
    tree.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel

__all__ = ["build_tree", "compact_rows", "fits", "layout_of"]

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


def _build_tree(work, pair, index, leaf_size, start, stop, left, right, split_dim,
                split_value, low, high, stack):
    """A KD-tree with tight boxes, split at the median of the widest attribute of the
    node's cell, into the arrays :func:`_tree_arrays` makes; returns the nodes used.

    A node's cell is its parent's, cut at the parent's split (the root's is the tight
    box of every point), so choosing the split reads no rows; each leaf's tight box is
    found from its rows and every other node's is the union of its children's, in one
    pass over the points instead of one per level (1,000,000 × 10: 0.38 s against
    0.54 s). The searches read only the tight boxes and the splits; the split value is
    a row of the node, so it lies inside the node's tight box. ``work`` (a copy of the
    points, ``index`` their numbers) ends with the rows in tree order, moved with their
    numbers: the scans are sequential. A block's column (``pair`` > 0, module notes)
    is as wide as two of its categories are apart, √(2·pair), when its cell holds two.
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
            width = high[node, j] - low[node, j]
            if pair[j] > 0.0 and width > 0.0:
                width = np.sqrt(2.0 * pair[j])
            if width > widest:
                dim, widest = j, width
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


def _build(points: np.ndarray, layout, leaf_size: int) -> tuple:
    """``(index, rows, start, stop, left, right, split_dim, split_value, low, high,
    n_nodes, layout, pair)`` of :func:`_build_tree` over ``points`` kept as ``layout``
    says (compiled)."""
    work, pair = compact_rows(points, layout)  # a new array, reordered in place
    index = np.arange(len(work), dtype=np.int64)
    arrays = _tree_arrays(*work.shape, leaf_size)
    n_nodes = _build_compiled(work, pair, index, leaf_size, *arrays)
    return (index, work) + arrays[:8] + (int(n_nodes), layout, pair)


def build_tree(points: np.ndarray, blocks=()):
    """The compiled search's KD-tree over ``points`` (None without the compiled kernels).

    ``blocks`` are ``(first column, width)`` of the nominal attributes' indicator blocks
    (:func:`layout_of`): each one that every row fits is kept as one column (module
    notes). A function of the points alone: it can be built ahead, on another thread,
    and given to :func:`core.measures.linkage.link_queries`.
    """
    if _build_compiled is None:
        return None
    points = np.ascontiguousarray(points, dtype=np.float64)
    return _build(points, layout_of(points, blocks), _LEAF_SIZE)


def _block_value(rows, first, width):
    """The value s of the block ``rows[:, first:first + width]`` when every row holds s
    in exactly one of its columns and 0 in the others (−1 otherwise, and for no rows)."""
    s = -1.0
    for i in range(rows.shape[0]):
        found = 0
        for j in range(first, first + width):
            x = rows[i, j]
            if x != 0.0:
                if s < 0.0 and x > 0.0:
                    s = x
                if x != s:
                    return -1.0
                found += 1
        if found != 1:
            return -1.0
    return s


def _compact(rows, first, width, out):
    """``rows`` with column c of ``out`` their column ``first[c]`` (``width[c]`` = 1) or
    the place of the nonzero one among the ``width[c]`` columns from ``first[c]``."""
    for i in range(rows.shape[0]):
        for c in range(out.shape[1]):
            b = first[c]
            if width[c] == 1:
                out[i, c] = rows[i, b]
                continue
            code = 0
            for t in range(width[c]):
                if rows[i, b + t] != 0.0:
                    code = t
            out[i, c] = code


_block_value_compiled = kernel(_block_value)
_compact_compiled = kernel(_compact)


def layout_of(rows: np.ndarray, blocks) -> tuple:
    """The blocks of ``blocks`` (``(first column, width)``, width ≥ 2) that every row of
    ``rows`` fits, as ``((first, width, s), ...)`` (module notes)."""
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    kept = []
    for first, width in blocks:
        if width >= 2 and len(rows):
            s = _block_value_of(rows, first, width)
            if s > 0.0:
                kept.append((int(first), int(width), float(s)))
    return tuple(kept)


def fits(rows: np.ndarray, layout) -> bool:
    """Whether every row of ``rows`` fits each block of ``layout`` with its s."""
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    return all(_block_value_of(rows, first, width) == s for first, width, s in layout)


def _block_value_of(rows, first, width) -> float:
    if _block_value_compiled is not None:
        return float(_block_value_compiled(rows, first, width))
    return _block_value_reference(rows, first, width)


def _block_value_reference(rows, first, width):
    block = rows[:, first:first + width]
    nonzero = block != 0.0
    if not (nonzero.sum(axis=1) == 1).all():
        return -1.0
    values = block[nonzero]
    return float(values[0]) if values[0] > 0.0 and (values == values[0]).all() else -1.0


def compact_rows(rows: np.ndarray, layout) -> tuple[np.ndarray, np.ndarray]:
    """``(rows kept as layout says, pair)``: each block of ``layout`` as one column, its
    row's category, and ``pair`` (s·s for such a column, 0 for a kept one)."""
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    if not layout:
        return rows.copy(), np.zeros(rows.shape[1])
    first, width, pair = [], [], []
    starts = {b: (w, s) for b, w, s in layout}
    at = 0
    while at < rows.shape[1]:
        w, s = starts.get(at, (1, 0.0))
        first.append(at), width.append(w), pair.append(s * s)
        at += w
    out = np.empty((len(rows), len(first)))
    first, width = np.array(first, dtype=np.int64), np.array(width, dtype=np.int64)
    if _compact_compiled is not None:
        _compact_compiled(rows, first, width, out)
    else:
        for c, (b, w) in enumerate(zip(first, width)):
            out[:, c] = rows[:, b] if w == 1 else np.argmax(rows[:, b:b + w] != 0.0, axis=1)
    return out, np.array(pair)
