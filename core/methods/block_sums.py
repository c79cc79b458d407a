"""Exact squared distances over nominal attributes' indicator blocks, read as one column.

A nominal quasi-identifier of m categories is m indicator columns of the embedding, each
0 or the same value s, at most one of them s in a row (:mod:`core.data.encoding`). The
methods that sum ``Σ_j (x_j − q_j)²`` over the columns in order, and must keep that very
floating-point sum (V-MDAV, GSMS: their references compare it bit for bit), can read
such a block as one column, the row's category: between a row and a query that each
hold one category or none, the block's terms are 0.0 except s·s in the column of the
row's category and in the query's, so the sum over the block is the sum entering it
plus s·s, plus s·s again when both hold a category and they differ (adding 0.0 changes
no sum). :func:`block_terms` makes a query's table of those two terms per category,
and a row's are two reads where the embedding has one per category.

Blocks are found in the rows themselves (:func:`core.methods.spatial_screen.screen_layout`:
adjacent columns of 0 and one s each, no row with two of them nonzero), so the identity
holds of every row and of every query taken from the rows, whatever put the columns
there. A table of numbers alone has none and keeps its columns.

Bounds. Over a node of rows whose per-column smallest and largest values are ``lo``
and ``hi``, a query of category c is at least s·s from every row when no row holds c
(``hi`` of c's column below s), and s·s twice when besides every row holds a category
(``whole``, of the table) or every row holds the same one (its column's ``lo`` is s); a
query of none is s·s from the rows when they all hold one category. That is
:func:`block_bound`, added at the block's place in column order; it is never below
the box's column-by-column bound, which adds the same s·s terms where it sees them.
Its terms are each at most a row's, in the same order, so the rounded bound is at most
the rounded distance (rounding is monotone).
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods.spatial_index import _leaf_distances, _min_box2

__all__ = ["block_layout", "block_terms", "block_bound", "box_bound", "leaf_distances",
           "query_tables"]


def block_layout(X: np.ndarray):
    """``(codes, layout, value, whole)``: the columns of the rows ``X`` read this way.

    ``codes`` (columns × n_records) holds an attribute of numbers as it is and a block
    as its category codes (the block's width for a row of none); ``layout[c]`` is
    ``(first column, width, offset of the block's table)``, width 1 for a kept column;
    ``value[c]`` is the block's s, ``whole[c]`` whether every row holds a category.
    """
    from core.methods.spatial_screen import screen_layout

    n, d = X.shape
    if n == 0:
        layout = np.array([(j, 1, 0) for j in range(d)], dtype=np.int64).reshape(d, 3)
        return np.ascontiguousarray(X.T), layout, np.zeros(d), np.zeros(d, dtype=np.bool_)
    screen, value, whole = screen_layout(X, X.min(axis=0), X.max(axis=0))
    layout = np.array(screen, dtype=np.int64).reshape(-1, 3)
    codes = np.empty((len(layout), n))
    at = 0
    for c, (first, width, _) in enumerate(layout):
        if width == 1:
            codes[c] = X[:, first]
            continue
        nonzero = X[:, first:first + width] != 0.0
        codes[c] = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), width)
        layout[c, 2] = at
        at += 2 * (width + 1)
    return codes, layout, np.asarray(value, dtype=np.float64), whole


def query_tables(layout: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(terms, held)`` for :func:`block_terms`: a query's table (two entries per
    category and none) and its category in each block."""
    blocks = layout[:, 1] > 1
    return (np.zeros(max(1, 2 * int((layout[blocks, 1] + 1).sum()))),
            np.zeros(len(layout), dtype=np.int64))


def block_terms(q, layout, value, terms, held):
    """The query's table: for each block and each row category c (the block's width for
    a row of none), the block's two nonzero terms in column order at
    ``terms[offset + 2c]`` and ``terms[offset + 2c + 1]`` (module notes); ``held[c]``,
    the query's own category (the width for none)."""
    for c in range(layout.shape[0]):
        first, width, at = layout[c, 0], layout[c, 1], layout[c, 2]
        if width == 1:
            continue
        mine = width
        for j in range(width):
            if q[first + j] != 0.0:
                mine = j
        held[c] = mine
        s2 = value[c] * value[c]
        for code in range(width + 1):
            one, two = s2, s2
            if code == mine:
                one, two = 0.0, 0.0
            elif code == width or mine == width:
                two = 0.0
            terms[at + 2 * code] = one
            terms[at + 2 * code + 1] = two


def block_bound(acc, mine, first, width, s, whole, lo, hi, node):
    """``acc`` plus a block's least terms over a node's rows for a query of category
    ``mine`` (the width for none; module notes, Bounds)."""
    if mine < width:
        if hi[node, first + mine] == s:
            return acc  # a row may hold the query's category
        acc += s * s
        if whole:
            return acc + s * s
    for c in range(width):  # every row holds category c (not the query's)
        if lo[node, first + c] == s:
            return acc + s * s
    return acc


def box_bound(lo, hi, node, q, layout, value, whole, held):
    """Squared distance from q to a k-d tree node's box (never above a row's own): a
    kept column's gap, a block's least terms (:func:`block_bound`, ``held`` the query's
    categories from :func:`block_terms`), in column order."""
    if layout.shape[0] == q.shape[0]:  # no block: a numeric table's box
        return _min_box2(lo, hi, node, q)
    acc = 0.0
    for c in range(layout.shape[0]):
        j, width = layout[c, 0], layout[c, 1]
        if width == 1:
            diff = max(lo[node, j] - q[j], q[j] - hi[node, j], 0.0)
            acc += diff * diff
        else:
            acc = block_bound(acc, held[c], j, width, value[c], whole[c], lo, hi, node)
    return acc


def leaf_distances(Q, leaf, length, q, layout, terms, buffer):
    """The squared distances from q to the first ``length`` rows of leaf block
    ``Q[leaf]`` (columns as :func:`block_layout` gives them) into ``buffer``, summed in
    column order (a block's two terms from q's table ``terms``)."""
    if Q.shape[1] == q.shape[0]:  # no block: a numeric table's leaf screen
        _leaf_distances(Q, leaf, length, q, buffer)
        return
    for i in range(length):
        buffer[i] = 0.0
    for c in range(Q.shape[1]):
        if layout[c, 1] == 1:
            qj = q[layout[c, 0]]
            for i in range(length):
                diff = Q[leaf, c, i] - qj
                buffer[i] += diff * diff
        else:
            at = layout[c, 2]
            for i in range(length):
                code = at + 2 * np.int64(Q[leaf, c, i])
                buffer[i] += terms[code]
                buffer[i] += terms[code + 1]


# None allocates, returns or keeps an array (core.compiled's notes): they are called
# per search, per node and per leaf.
for _name in ("block_terms", "block_bound", "box_bound", "leaf_distances"):
    _compiled = kernel(globals()[_name], refcounts=False)
    if _compiled is not None:
        globals()[_name] = _compiled
