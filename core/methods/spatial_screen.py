"""The float32 screen of the spatial index's leaves (:mod:`core.methods.spatial_search`'s
notes say what it is for): how a leaf's rows are kept for it, and how a query is
measured against them.

Columns of the screen
    A numeric column is kept as its value less the centre's, in float32. A nominal
    quasi-identifier is embedded as a block of indicator columns, each 0 or the same
    value s, at most one of them s in a row (:mod:`core.data.encoding`); such a block
    is kept as one column, the row's category, so a leaf's row is read in a few values
    where the embedding has one per category (a table of sex, region, occupation, age
    and education is 124 columns wide, and five columns in the screen). For a query q
    the block's squared distance to a row of category c is
    ``A + s·(s − 2·q_c)``, with ``A = Σ_j q_j²`` over the block (``A`` for a row of
    none), so the query's tables are made once per search (:func:`_leaf_query`) and a
    row's term is read from them.
Detection
    Blocks are found in the rows themselves (:func:`screen_layout`), not taken from the
    encoding: a run of adjacent columns, each of whose values are 0 and one s > 0 (the
    same s across the run) or 0 alone (a category none of the rows holds, as after a
    tree is built again on the rows left), no row with two of them nonzero. Whatever
    put the columns there, the identity above holds for them, so the screen stays a
    bound on the exact distance; a table of numeric columns alone has none (a z-score
    is never 0 at every row's minimum), and its screen is the one-column-per-attribute
    screen of before, bit for bit.
Block bounds
    The same identity bounds a node of the tree better than its box does. A category
    other than the query's costs 2s² (s² in each of the two columns), but a box of rows
    that do not hold the query's category shows only the query's column, s²: the
    searches pruned at half strength, and five nominal attributes of 124 columns made
    MDAV screen three times the rows of a numeric table. So a block's term of a node is
    also taken as the least (or, for the farthest search, the most) of
    ``A + s·(s − 2·q_c)`` over the categories c its live rows hold (those whose column's
    largest live value is s), and A, a row of none, unless every row holds a category
    (:func:`screen_layout`'s ``whole``); the searches keep the larger (smaller) of the two terms. A
    cell (the nearest search's incremental bound) knows only the splits above it: for a
    query holding one category of a block whose rows all hold one, a split that shuts
    out the query's category, or shuts the cell in one other, leaves every row of the
    cell 2s² away in that block (``gain``, :func:`_block_query`), where the offsets sum
    to s²; any other query keeps the offsets. These bounds are summed block by block,
    not in the exact distance's column order, so they prune with the relative margin
    of the cells (:mod:`core.methods.spatial_search`'s notes), less the rounding of the
    identity below. A table with no block takes the searches' code of before.
Rounding
    The tables are made in float64 and rounded to float32; beside the float32 screen's
    own bound (:func:`_screen_margin`, which bounds a block's rounded term as it does a
    sum of its columns), the float64 arithmetic of ``A + s·(s − 2·q_c)`` is within
    (w + 8)·2⁻⁵²·(A + 2s²) of the block's distance, and that is added to the margin.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods.prefetch import prefetch

__all__ = ["screen_layout", "block_columns", "query_buffer", "screen_rows"]

_PREFETCH_FROM = 1 << 21  # float32 values in the screen (8 MB): leaves are prefetched


def query_buffer(d: int) -> np.ndarray:
    """A query's float32 buffer for rows of ``d`` columns: the screen's columns and
    the blocks' tables need at most ``2·d`` values (a block of w ≥ 2 columns takes one
    column and a table of w + 1 entries)."""
    return np.zeros(2 * d, dtype=np.float32)


def screen_layout(P: np.ndarray, low: np.ndarray, high: np.ndarray):
    """``(layout, value, whole)`` of the screen's columns for the rows ``P`` (module
    notes).

    ``layout[c]`` is ``(first column, width, table offset)``: width 1 for a column kept
    as it is (offset unused), w ≥ 2 for a block of w indicator columns whose table of
    w + 1 entries starts at ``offset`` in the query buffer (after the screen's
    columns). ``value[c]`` is the block's s (0 for a block of zeros), ``whole[c]``
    whether every row holds one of its categories (a row of none, a code the encoding
    did not know, clears it; for the block bounds). ``low``/``high`` are the columns'
    smallest and largest values (the root's box): only a column whose smallest value is
    0 can be in a block. Rows only ever leave an index, so what holds of every row when
    it is built holds of its live rows to the end.
    """
    d = P.shape[1]
    candidate = low == 0.0  # a column of zeros, or of zeros and its largest value
    two, before = np.zeros(d, dtype=np.bool_), np.zeros(d, dtype=np.int64)
    _column_facts(P, high, candidate, two, before)
    found: list[tuple[int, int, float, bool]] = []
    j = 0
    while j < d:
        if not two[j]:
            j += 1
            continue
        s, stop = high[j], j + 1
        while stop < d and two[stop]:
            h = high[stop]  # 0 for a column of zeros, which joins any block
            # before[stop] >= j: a row holds a category in the block and in column stop
            if (h != 0.0 and s != 0.0 and h != s) or before[stop] >= j:
                break
            s = s or h
            stop += 1
        if stop - j >= 2:
            found.append((j, stop - j, s, _every_row_holds(P, j, stop - j)))
        j = stop
    blocks = [(first, width, s) for first, width, s, _ in found]
    flags = iter([w for _, _, _, w in found])
    rows, value, at, b = [], [], 0, 0
    columns = d - sum(w - 1 for _, w, _ in blocks)
    offset = columns
    while at < d:
        if b < len(blocks) and blocks[b][0] == at:
            first, width, s = blocks[b]
            rows.append((first, width, offset))
            value.append(s)
            offset += width + 1
            at, b = at + width, b + 1
        else:
            rows.append((at, 1, 0))
            value.append(0.0)
            at += 1
    return (np.array(rows, dtype=np.int64).reshape(-1, 3), np.array(value, dtype=np.float64),
            np.array([width > 1 and next(flags) for _, width, _ in rows], dtype=np.bool_))


def block_columns(layout: np.ndarray, d: int) -> np.ndarray:
    """``block_of[j]``: the screen column (``layout`` entry) of the block holding column
    j of ``d``, −1 for a kept column (the block bounds, module notes)."""
    block_of = np.full(d, -1, dtype=np.int64)
    for c, (first, width, _) in enumerate(layout):
        if width > 1:
            block_of[first:first + width] = c
    return block_of


def _column_facts(P, high, candidate, two, before):
    """In one pass over the rows as they lie: ``two[j]``, whether every value of a
    ``candidate`` column j is 0 or ``high[j]``; ``before[j]``, the largest column
    k < j in which a row that is nonzero in column j is nonzero too (−1: none)."""
    for j in range(P.shape[1]):
        two[j], before[j] = candidate[j], -1
    for i in range(P.shape[0]):
        last = -1
        for j in range(P.shape[1]):
            v = P[i, j]
            if v != 0.0:
                if two[j] and v != high[j]:
                    two[j] = False
                if last > before[j]:
                    before[j] = last
                last = j


def _every_row_holds(P, first, width):
    """Whether every row is nonzero in one of columns ``first`` to ``first + width − 1``."""
    for i in range(P.shape[0]):
        held = False
        for j in range(first, first + width):
            if P[i, j] != 0.0:
                held = True
                break
        if not held:
            return False
    return True


def screen_rows(rows: np.ndarray, shifted: np.ndarray, layout: np.ndarray) -> np.ndarray:
    """The screen's columns of ``rows`` (float64; module notes): a kept column as in
    ``shifted`` (the rows less the centre), a block as its category's place in the
    query's table (the entry after the last category for a row of none)."""
    out = np.empty((len(rows), len(layout)))
    for c, (first, width, offset) in enumerate(layout):
        if width == 1:
            out[:, c] = shifted[:, first]
            continue
        nonzero = rows[:, first:first + width] != 0.0
        code = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), width)
        out[:, c] = offset + code
    return out


def _leaf_distances32(Q32, leaf, size, q32, layout, buffer32):
    """The float32 screen of a leaf's first ``size`` rows against the query in ``q32``
    (:func:`_leaf_query`) into ``buffer32``: a kept column's squared difference, a
    block's entry of the query's table."""
    for i in range(size):
        buffer32[i] = np.float32(0.0)
    for c in range(Q32.shape[1]):
        if layout[c, 1] == 1:
            qc = q32[c]
            for i in range(size):
                diff = Q32[leaf, c, i] - qc
                buffer32[i] += diff * diff
        else:
            for i in range(size):
                buffer32[i] += q32[np.int64(Q32[leaf, c, i])]


def _screen_query(q, center, q32):
    """Put q − center into ``q32`` (float32); return |q − center|² (float64)."""
    acc = 0.0
    for j in range(q.shape[0]):
        v = q[j] - center[j]
        q32[j] = np.float32(v)
        acc += v * v
    return acc


def _leaf_query(q, center, layout, value, q32):
    """Put the query into ``q32`` as the screen reads it (module notes): a kept
    column's q − center, a block's table. Return ``(|q − center|², error)``: the first
    over every column, for :func:`_screen_margin`; the second bounds the tables'
    float64 rounding (module notes, Rounding)."""
    acc, error = 0.0, 0.0
    for c in range(layout.shape[0]):
        first, width, offset = layout[c, 0], layout[c, 1], layout[c, 2]
        if width == 1:
            v = q[first] - center[first]
            q32[c] = np.float32(v)
            acc += v * v
            continue
        s, total = value[c], 0.0
        for j in range(first, first + width):
            v = q[j] - center[j]
            acc += v * v
            total += q[j] * q[j]
        for j in range(width):
            q32[offset + j] = np.float32(total + s * (s - 2.0 * q[first + j]))
        q32[offset + width] = np.float32(total)
        error += (width + 8.0) * 2.0 ** -52 * (total + 2.0 * s * s)
    return acc, error


def _block_query(q, layout, value, whole, sums, gain, held):
    """The query's part of the block bounds (module notes): ``sums[c]`` = Σ q_j² over
    block c's columns; ``held[c]`` the column of the category q holds in it (one column
    s, the others 0), −1 when q is not such a point; ``gain[c]`` = 2s² when q holds a
    category and every row holds one (``whole``), else 0. Kept columns: 0, −1 and 0.
    Returns the number of blocks."""
    blocks = 0
    for c in range(layout.shape[0]):
        first, width = layout[c, 0], layout[c, 1]
        sums[c], gain[c], held[c] = 0.0, 0.0, -1
        if width == 1:
            continue
        blocks += 1
        s, total, count, at, other = value[c], 0.0, 0, -1, False
        for j in range(first, first + width):
            total += q[j] * q[j]
            if q[j] == s:
                count, at = count + 1, j
            elif q[j] != 0.0:
                other = True
        sums[c] = total
        if s > 0.0 and count == 1 and not other:
            held[c] = at
            if whole[c]:
                gain[c] = 2.0 * s * s
    return blocks


def _block_error(width, total, s):
    """A bound on the float64 rounding of ``total + s·(s − 2·q_c)`` for a block of
    ``width`` columns (module notes, Rounding)."""
    return (width + 8.0) * 2.0 ** -52 * (total + 2.0 * s * s)


def _near_blocks(lo, hi, node, q, layout, value, whole, sums, held):
    """A lower bound on the squared distance from q of the node's live rows: a kept
    column's term of its box, a block's the least over the categories the rows hold
    (module notes, Block bounds). Where q holds one of a block's categories
    (``held``), that is one read: 0 if a live row holds it, else 2s² (s² unless every
    row holds a category). Summed block by block: it prunes with the cells' margin."""
    bound = 0.0
    for c in range(layout.shape[0]):
        first, width = layout[c, 0], layout[c, 1]
        if width == 1:
            diff = max(lo[node, first] - q[first], q[first] - hi[node, first], 0.0)
            bound += diff * diff
            continue
        s = value[c]
        if held[c] >= 0:
            if hi[node, held[c]] == 0.0:
                bound += 2.0 * s * s if whole[c] else s * s
            continue
        total, part = sums[c], 0.0
        least = np.inf if whole[c] else total
        for j in range(first, first + width):
            diff = max(lo[node, j] - q[j], q[j] - hi[node, j], 0.0)
            part += diff * diff
            if hi[node, j] != 0.0:
                least = min(least, total + s * (s - 2.0 * q[j]))
        bound += max(part, least - _block_error(width, total, s))
    return bound


def _box_terms(lo, hi, node, j, q, reflected):
    """Column j's terms of the node's box: the squared distance from q to the box's
    side farther from it, and from ``reflected`` to the box."""
    low, high = lo[node, j], hi[node, j]
    a, b = abs(low - q[j]), abs(high - q[j])
    f = a if a > b else b
    diff = max(low - reflected[j], reflected[j] - high, 0.0)
    return f * f, diff * diff


def _far_blocks(node, q, reflected, layout, value, whole, sums, sums_b, held, lo, hi):
    """``(far, near)``: an upper bound on the squared distance from q of the node's live
    rows, and a lower bound on their squared distance from ``reflected`` (``sums`` and
    ``sums_b`` are :func:`_block_query`'s of the two points): the box's farthest corner
    and nearest point, a block's term the most (least) over the categories they hold
    where that is tighter. Where q holds one of a block's categories (``held``), the
    farthest term is one read, 2s² unless every live row holds q's category (then 0),
    and the block adds nothing to ``near``. Summed block by block: the caller widens
    ``far`` by the relative margin."""
    far, near = 0.0, 0.0
    for c in range(layout.shape[0]):
        first, width = layout[c, 0], layout[c, 1]
        s = value[c]
        if width > 1 and held[c] >= 0:
            if lo[node, held[c]] == 0.0:
                far += 2.0 * s * s
            continue
        part_far, part_near = 0.0, 0.0
        for j in range(first, first + width):
            f2, n2 = _box_terms(lo, hi, node, j, q, reflected)
            part_far += f2
            part_near += n2
        if width > 1:
            most = -np.inf if whole[c] else sums[c]
            least = np.inf if whole[c] else sums_b[c]
            for j in range(first, first + width):
                if hi[node, j] != 0.0:
                    most = max(most, sums[c] + s * (s - 2.0 * q[j]))
                    least = min(least, sums_b[c] + s * (s - 2.0 * reflected[j]))
            part_far = min(part_far, most + _block_error(width, sums[c], s))
            part_near = max(part_near, least - _block_error(width, sums_b[c], s))
        far += part_far
        near += part_near
    return far, near


def _screen_margin(leaf_norm2, query_norm2, d):
    """A bound on |float32 distance − exact distance| for a leaf's rows and a query.

    With u = 2⁻²⁴ and x′, q′ the centred row and query, each coordinate rounds by at most
    u·|x′ⱼ| (the float64 centring adds 2⁻⁵³), the difference, its square and the d-term
    sum by u each, so the float32 distance is within u·(10 + 2d)·(|x′|² + |q′|²) of
    |x − q|²; (16 + 4d) leaves room for the float64 distance's own rounding. The
    absolute term covers float32's subnormal range. Beyond 1e30 (where float32 could
    overflow) the margin is infinite: every row gets its exact distance.
    """
    scale = leaf_norm2 + query_norm2
    if not scale <= 1e30:
        return np.inf
    return (16.0 + 4.0 * d) * 2.0 ** -24 * scale + 1e-30


def _screen_leaf(Q32, norm2, leaf, size, q32, layout, query, d, buffer32):
    """Float32 distances of a leaf's ``size`` rows into ``buffer32``; return the margin
    within which they may differ from the exact ones (:func:`_screen_margin` for rows
    of ``d`` columns, plus the tables' error ``query[1]``; ``query`` is what
    :func:`_leaf_query` returned)."""
    _leaf_distances32(Q32, leaf, size, q32, layout, buffer32)
    return _screen_margin(norm2[leaf], query[0], d) + query[1]


def _prefetch_leaf(Q32, leaf):
    """Ask for every cache line of the leaf's float32 rows when the screen is larger
    than a processor's caches (:mod:`core.methods.spatial_search`'s notes, Prefetch);
    a smaller one is there already, and the hints would only cost time."""
    if Q32.size < _PREFETCH_FROM:
        return
    rows = Q32[leaf].reshape(Q32.shape[1] * Q32.shape[2])  # one block, in order
    for i in range(0, rows.shape[0], 16):  # 16 float32 to a 64-byte line
        prefetch(rows, (i,))
    if rows.shape[0]:
        prefetch(rows, (rows.shape[0] - 1,))


# None of these allocates, returns or keeps an array (core.compiled's notes).
for _name in ("_column_facts", "_every_row_holds", "_leaf_distances32", "_screen_query",
              "_leaf_query", "_block_query", "_block_error", "_near_blocks", "_box_terms",
              "_far_blocks", "_screen_margin", "_screen_leaf", "_prefetch_leaf"):
    _compiled = kernel(globals()[_name], refcounts=False)
    if _compiled is not None:
        globals()[_name] = _compiled
