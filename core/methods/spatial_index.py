"""A compiled spatial index over the records not yet grouped, with deletions.

Fixed-size heuristics (MDAV, CBFS, TFRP) ask the records still unassigned, group after
group, for the one farthest from a point and for the m nearest to a point.
:class:`~core.methods.pool.RecordPool` answers with a full pass per question, O(n²·d/k)
in all. This index answers the same questions with the same answers in far less work:

Distinct rows
    Identical records are stored once (:mod:`core.methods.distinct_rows`), with the queue
    of their record numbers in input order. Among equally distant records the one first in the input wins, so a row always
    gives away its records from the front of its queue. A file of a few distinct rows
    repeated a million times is then a few points.
k-d tree
    The distinct rows are split at the median of their widest attribute down to leaves
    of ``LEAF_SIZE / 2`` to ``LEAF_SIZE`` rows. Every node keeps the box and the number
    of its live rows; a row whose queue empties shrinks its leaf's box and those above
    it. The m nearest records come from a depth-first search through the tree's cells
    that skips a node whose cell, or a leaf whose box, is farther than the m-th best so
    far (:mod:`core.methods.spatial_search`). In ten dimensions a search weighs hundreds
    of nodes, each a read from memory far from the last, while a leaf's rows are read
    in one stream; so leaves are large (MDAV, 1,000,000 × 10, leaves of 122 rows against
    61: 51.8–52.0 s against 58.3 s; 100,000: 1.80 s with 98 rows, 2.0 s with 49 and
    1.83 s with 195).
Shell of an anchor
    The record farthest from the centroid: the rows are sorted by their distance ρ to
    an anchor a (the centroid when the list was made). Every row satisfies
    |x − c| ≤ ρ(x) + |c − a|, so the scan from the top stops as soon as that bound
    falls below the best distance found. The centroid moves little from group to group;
    when scans grow long the anchor is moved to the current centroid and the list is
    sorted again.
Farthest from a record r
    With b = 2a − r (r reflected through the anchor),
    |x − r|² = 2|x − a|² + 2|a − r|² − |x − b|², so a node whose largest ρ² is M and
    whose box lies at least D from b holds no record farther from r than
    2M + 2|a − r|² − D². The records farthest from r sit near b, and the tree search
    visits little else.

Exactness. Every answer is chosen on exact squared distances in the one floating-point
form the reference uses (:func:`core.methods.pool.squared_distances`: columns summed in
order), and ties go to the record first in the input. A box bound prunes only when it
is strictly worse than the best so far: the rounded box distance is monotone in the
coordinates, so it never passes a record's own rounded distance. The shell and reflection
bounds come from identities that rounding can break by about 1e−15 of the magnitudes
involved, so they prune only with a margin of 1e−10 of those magnitudes. The answers are
therefore the reference's, bit for bit; the tests compare the two on random and
tie-heavy data.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods.distinct_rows import distinct_rows

__all__ = ["LEAF_SIZE", "distinct_rows", "build_tree", "leaf_places", "leaf_blocks"]

LEAF_SIZE = 128  # at most; leaves of 64 to 128 rows (module notes)
_SLACK = 1e-10


def _distance2(P, t, q):
    acc = 0.0
    for j in range(P.shape[1]):
        diff = P[t, j] - q[j]
        acc += diff * diff
    return acc


def _vector_distance2(a, b):
    acc = 0.0
    for j in range(a.shape[0]):
        diff = a[j] - b[j]
        acc += diff * diff
    return acc


def _leaf_distances(Q, leaf, size, q, buffer):
    """Squared distances of a leaf's rows to q (the same sum order as :func:`_distance2`).

    ``Q[leaf, j, i]`` is attribute j of the leaf's row i: one leaf's rows lie together,
    attribute by attribute, so the loop over the rows runs in vector registers while
    every row still adds its attributes in order.
    """
    for i in range(size):
        buffer[i] = 0.0
    for j in range(Q.shape[1]):
        qj = q[j]
        for i in range(size):
            diff = Q[leaf, j, i] - qj
            buffer[i] += diff * diff


def _min_box2(lo, hi, node, q):
    """Squared distance from q to the node's box (branch-free; never above a row's own)."""
    acc = 0.0
    for j in range(q.shape[0]):
        diff = max(lo[node, j] - q[j], q[j] - hi[node, j], 0.0)
        acc += diff * diff
    return acc


def _select(perm, start, stop, nth, P, j):
    lo, hi = start, stop - 1
    while lo < hi:
        a, b, c = P[perm[lo], j], P[perm[(lo + hi) // 2], j], P[perm[hi], j]
        pivot = max(min(a, b), min(max(a, b), c))
        i, k = lo, hi
        while i <= k:
            while P[perm[i], j] < pivot:
                i += 1
            while P[perm[k], j] > pivot:
                k -= 1
            if i <= k:
                perm[i], perm[k] = perm[k], perm[i]
                i += 1
                k -= 1
        if nth <= k:
            hi = k
        elif nth >= i:
            lo = i
        else:
            return


def _split_level(P, perm, start, stop, first, last, low, high):
    """Split nodes ``first .. last−1`` at the median of their widest attribute (the
    first widest, in column order). ``low`` and ``high`` (one slot per attribute) are
    scratch: the spreads are taken a row at a time, each row read once as it lies in
    memory, where a pass per attribute read every row's memory again for each (a tenth
    of MDAV's time on an embedding of a hundred indicator columns)."""
    d = P.shape[1]
    for node in range(first, last):
        s, e = start[node], stop[node]
        r = perm[s]
        for col in range(d):
            low[col] = P[r, col]
            high[col] = P[r, col]
        for i in range(s + 1, e):
            r = perm[i]
            for col in range(d):
                v = P[r, col]
                if v < low[col]:
                    low[col] = v
                elif v > high[col]:
                    high[col] = v
        best, j = -1.0, 0
        for col in range(d):
            if high[col] - low[col] > best:
                best, j = high[col] - low[col], col
        mid = (s + e) // 2
        _select(perm, s, e, mid, P, j)
        start[2 * node + 1], stop[2 * node + 1] = s, mid
        start[2 * node + 2], stop[2 * node + 2] = mid, e


def _refresh_node(node, first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top):
    """Recompute one node's live count, box and largest ρ² (from its rows or children)."""
    d = P.shape[1]
    if node >= first_leaf:
        live, best = 0, -1.0
        for t in range(start[node], stop[node]):
            if head[t] < end[t]:
                for j in range(d):
                    v = P[t, j]
                    if live == 0 or v < lo[node, j]:
                        lo[node, j] = v
                    if live == 0 or v > hi[node, j]:
                        hi[node, j] = v
                live += 1
                if rho2[t] > best:
                    best = rho2[t]
        cnt[node], top[node] = live, best
        return
    cnt[node] = cnt[2 * node + 1] + cnt[2 * node + 2]
    _box_from_children(node, lo, hi, cnt)
    _top_from_children(node, cnt, top)


def _box_from_children(node, lo, hi, cnt):
    """``node``'s box from its live children's (left as it was when neither is live);
    whether it changed."""
    a, b = 2 * node + 1, 2 * node + 2
    changed = False
    if cnt[a] and cnt[b]:
        for j in range(lo.shape[1]):
            low, high = min(lo[a, j], lo[b, j]), max(hi[a, j], hi[b, j])
            changed = changed or low != lo[node, j] or high != hi[node, j]
            lo[node, j], hi[node, j] = low, high
    elif cnt[a] or cnt[b]:
        c = a if cnt[a] else b
        for j in range(lo.shape[1]):
            changed = changed or lo[c, j] != lo[node, j] or hi[c, j] != hi[node, j]
            lo[node, j], hi[node, j] = lo[c, j], hi[c, j]
    return changed


def _top_from_children(node, cnt, top):
    """``node``'s largest ρ² from its live children's (left as it was when neither is
    live)."""
    a, b = 2 * node + 1, 2 * node + 2
    if cnt[a] and cnt[b]:
        top[node] = max(top[a], top[b])
    elif cnt[a] or cnt[b]:
        top[node] = top[a] if cnt[a] else top[b]


def _refresh(node, first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top):
    """Recompute ``node`` and its ancestors from their rows (the reference the tests
    hold :func:`_emptied` to)."""
    while True:
        _refresh_node(node, first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top)
        if node == 0:
            return
        node = (node - 1) // 2


def _emptied(t, leaf, first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top):
    """Row t of ``leaf`` has emptied: the live counts, boxes and largest ρ² of the leaf
    and its ancestors, as :func:`_refresh` recomputes them. Called once for a row, as
    its last record is taken (the counts go down by one).

    Only an attribute in which t held the leaf's smallest (largest) live value needs
    the leaf's rows again, and only until another live row holds that value; an
    ancestor's box is made again from its children's only while the box below it
    changed. The indicator columns of a nominal attribute are 0 in most rows, so a box
    over 124 embedded columns is kept in about one read per column, where recomputing
    read every live row of the leaf in each column and both children of every
    ancestor. The values kept are the minima and maxima of the same rows; a bound read
    from them is the same (a zero's sign aside, which no squared distance sees).
    """
    cnt[leaf] -= 1
    changed = cnt[leaf] == 0
    if changed:
        top[leaf] = -1.0
    else:
        first, last = start[leaf], stop[leaf]
        for j in range(P.shape[1]):
            v = P[t, j]
            if v == lo[leaf, j]:
                lo[leaf, j] = _live_extreme(first, last, head, end, P, j, v, 1.0)
                changed = changed or lo[leaf, j] != v
            if v == hi[leaf, j]:
                hi[leaf, j] = _live_extreme(first, last, head, end, P, j, v, -1.0)
                changed = changed or hi[leaf, j] != v
        if rho2[t] == top[leaf]:
            best = -1.0
            for r in range(first, last):
                if head[r] < end[r] and rho2[r] > best:
                    best = rho2[r]
                    if best == rho2[t]:
                        break
            top[leaf] = best
    node = leaf
    while node:
        node = (node - 1) // 2
        cnt[node] -= 1
        _top_from_children(node, cnt, top)
        if changed:  # an emptied node changes its parent's box as well
            changed = _box_from_children(node, lo, hi, cnt) or cnt[node] == 0


def _live_extreme(first, last, head, end, P, j, v, sign):
    """The smallest (``sign`` 1) or largest (−1) value of attribute j among the live rows
    ``first`` to ``last − 1``, none of them beyond v: v itself as soon as a row holds it."""
    best = np.inf
    for r in range(first, last):
        if head[r] < end[r]:
            x = sign * P[r, j]
            if x == sign * v:
                return v
            if x < best:
                best = x
    return sign * best


def _refresh_all(first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top):
    """Every node from scratch (after a new anchor changed every ρ²)."""
    for node in range(2 * first_leaf, -1, -1):
        _refresh_node(node, first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top)


def _insert(best_d2, best_id, size, m, d2, record):
    """Put (d2, record) into the ascending list of the m best; return the new size."""
    if size == m:
        if d2 > best_d2[m - 1] or (d2 == best_d2[m - 1] and record > best_id[m - 1]):
            return size
        position = m - 1
    else:
        position = size
        size += 1
    while position > 0 and (best_d2[position - 1] > d2 or
                            (best_d2[position - 1] == d2 and best_id[position - 1] > record)):
        best_d2[position] = best_d2[position - 1]
        best_id[position] = best_id[position - 1]
        position -= 1
    best_d2[position] = d2
    best_id[position] = record
    return size


def _push_children(node, q, lo, hi, cnt, stack, stack_d2, depth):
    """Push the live children of ``node`` on the depth-first stack, nearer box on top;
    return the new depth (the stack holds each node with its box distance to q)."""
    a, b = 2 * node + 1, 2 * node + 2
    da = _min_box2(lo, hi, a, q) if cnt[a] else np.inf
    db = _min_box2(lo, hi, b, q) if cnt[b] else np.inf
    if da > db:
        a, b, da, db = b, a, db, da
    if cnt[b]:
        stack[depth], stack_d2[depth] = b, db
        depth += 1
    if cnt[a]:
        stack[depth], stack_d2[depth] = a, da
        depth += 1
    return depth


def _farthest_in_shell(q, anchor, shell, pointer, rho2, head, end, members, P):
    """(row, record, d², rows examined) of the live record farthest from q, via the shell."""
    delta = np.sqrt(_vector_distance2(q, anchor))
    while pointer[0] < shell.shape[0] and head[shell[pointer[0]]] >= end[shell[pointer[0]]]:
        pointer[0] += 1
    best_row, best_record, best = -1, -1, -1.0
    examined = 0
    for i in range(pointer[0], shell.shape[0]):
        t = shell[i]
        if head[t] >= end[t]:
            continue
        rho = np.sqrt(rho2[t])
        if best >= 0.0 and (rho + delta) * (1.0 + _SLACK) < np.sqrt(best) * (1.0 - _SLACK):
            break
        examined += 1
        d2 = _distance2(P, t, q)
        record = members[head[t]]
        if d2 > best or (d2 == best and record < best_record):
            best_row, best_record, best = t, record, d2
    return best_row, best_record, best, examined


def _anchor_at(point, P, head, end, rho2):
    """ρ² of every live row to ``point``; the live rows sorted by ρ², largest first."""
    live = 0
    for t in range(P.shape[0]):
        if head[t] < end[t]:
            rho2[t] = _distance2(P, t, point)
            live += 1
        else:
            rho2[t] = -1.0
    order = np.argsort(-rho2)
    return order[:live].copy()


def _subtract_group(X, group, size, total):
    """``total`` less the sum of the records ``group[:size]``, added one after another
    (the reference's order: :meth:`~core.methods.pool.RecordPool.remove`)."""
    d = X.shape[1]
    group_sum = X[group[0]].copy()
    for i in range(1, size):
        for j in range(d):
            group_sum[j] += X[group[i], j]
    for j in range(d):
        total[j] -= group_sum[j]


def _sum_live(X, alive, total):
    """``total`` = the sum of the live records of ``X``, added in input order: the
    centroid's sum as the reference (:class:`~core.methods.pool.RecordPool`) forms it
    anew whenever the live records have halved."""
    first = True
    for i in range(X.shape[0]):
        if alive[i]:
            if first:
                total[:] = X[i]
                first = False
            else:
                for j in range(X.shape[1]):
                    total[j] += X[i, j]


_KERNELS = ("_distance2", "_vector_distance2", "_leaf_distances", "_min_box2",
            "_select", "_split_level", "_box_from_children", "_top_from_children",
            "_refresh_node", "_refresh", "_live_extreme", "_emptied",
            "_refresh_all", "_insert", "_push_children", "_farthest_in_shell", "_anchor_at",
            "_subtract_group", "_sum_live")
# Helpers that neither allocate, return nor keep an array (core.compiled's notes).
_BORROWING = frozenset(_KERNELS) - {"_anchor_at", "_subtract_group", "_sum_live"}
for _name in _KERNELS:  # compiled in dependency order; a kernel calls the compiled ones
    _compiled = kernel(globals()[_name], refcounts=_name not in _BORROWING)
    if _compiled is not None:
        globals()[_name] = _compiled


def leaf_places(start: np.ndarray, stop: np.ndarray, levels: int):
    """``(leaf, place)`` of every row in tree order: the number of its leaf (0 for the
    first) and its place among the leaf's rows."""
    first_leaf = (1 << levels) - 1
    sizes = stop[first_leaf:] - start[first_leaf:]
    leaf = np.repeat(np.arange(len(sizes)), sizes)
    return leaf, np.arange(len(leaf)) - start[first_leaf:][leaf]


def leaf_blocks(P: np.ndarray, start: np.ndarray, stop: np.ndarray, levels: int) -> np.ndarray:
    """The rows of every leaf, attribute by attribute: ``Q[leaf, j, i]`` (tree order ``P``)."""
    first_leaf = (1 << levels) - 1
    sizes = stop[first_leaf:] - start[first_leaf:]
    Q = np.zeros((len(sizes), P.shape[1], int(sizes.max())))
    leaf, place = leaf_places(start, stop, levels)
    Q[leaf, :, place] = P
    return Q


def build_tree(P: np.ndarray, leaf_size: int = LEAF_SIZE, check=None):
    """k-d tree order of the rows of ``P``: ``(perm, start, stop, levels)``.

    Node i has children 2i+1 and 2i+2 and covers ``perm[start[i]:stop[i]]``; the leaves
    are the last ``2**levels`` nodes. ``check()`` is called between levels (Cancel).
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    levels = 0
    while (len(P) >> levels) > leaf_size:
        levels += 1
    n_nodes = 2 * (1 << levels) - 1
    start = np.zeros(n_nodes, dtype=np.int64)
    stop = np.zeros(n_nodes, dtype=np.int64)
    stop[0] = len(P)
    perm = np.arange(len(P))
    low, high = np.empty(P.shape[1]), np.empty(P.shape[1])
    for level in range(levels):
        _split_level(P, perm, start, stop, (1 << level) - 1, (1 << (level + 1)) - 1,
                     low, high)
        if check is not None:
            check()
    return perm, start, stop, levels
