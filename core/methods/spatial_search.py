"""The two searches of :mod:`core.methods.spatial_index`: the m nearest live records to
a point, and the live record farthest from one (both exact; the structure and its
bounds are described there).

Float32 screen
    The leaves' rows are also kept in float32, less their mean row (``Q32``,
    :func:`screen_blocks`). A search first measures a leaf's rows in float32 and
    computes the exact distance (:func:`~core.methods.spatial_index._distance2`, the
    reference's sum) only of the rows that the float32 distance, widened by its rounding
    bound (:func:`_screen_margin`), cannot rule out. A search at a million records waits
    on memory; a leaf read in float32 is half the bytes.
Parts
    Each search can be split in two parts that share the tree
    (:mod:`core.methods.spatial_parallel` runs them on two threads): part 0 takes the
    subtrees of even rank at one depth, part 1 those of odd rank (:func:`_own`), and
    each prunes with the other's bound as well as its own (``shared``). A one-thread
    search is part 0 of a tree that is not split, with nothing from another part.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods import atomics
from core.methods import spatial_index as index
from core.methods.spatial_index import (_SLACK, _distance2, _insert, _min_box2, _push_children,
                                        _vector_distance2, leaf_blocks)

__all__ = ["row_tree", "screen_blocks"]


def _leaf_distances32(Q32, leaf, size, q32, buffer32):
    """:func:`_leaf_distances` in float32, of the centred rows (a screen only)."""
    for i in range(size):
        buffer32[i] = np.float32(0.0)
    for j in range(Q32.shape[1]):
        qj = q32[j]
        for i in range(size):
            diff = Q32[leaf, j, i] - qj
            buffer32[i] += diff * diff


def _screen_query(q, center, q32):
    """Put q − center into ``q32`` (float32); return |q − center|² (float64)."""
    acc = 0.0
    for j in range(q.shape[0]):
        v = q[j] - center[j]
        q32[j] = np.float32(v)
        acc += v * v
    return acc


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


def _screen_leaf(Q32, norm2, leaf, size, q32, query_norm2, buffer32):
    """Float32 distances of a leaf's ``size`` rows into ``buffer32``; return the margin
    (:func:`_screen_margin`) within which they may differ from the exact ones."""
    _leaf_distances32(Q32, leaf, size, q32, buffer32)
    return _screen_margin(norm2[leaf], query_norm2, q32.shape[0])


def _own(node, part, split_lo, split_hi):
    """Whether ``node`` belongs to ``part``: of the nodes ``split_lo`` to ``split_hi − 1``
    (one depth of the tree), part 0 searches those of even rank and part 1 those of odd
    rank; every other node belongs to both (module notes)."""
    return not (split_lo <= node < split_hi) or (node - split_lo) % 2 == part


def _nearest(q, m, taken, first_leaf, start, stop, head, end, members, P, screen, lo, hi,
             cnt, stack, stack_d2, best_d2, best_id, buffer32, q32, work):
    """The m live records nearest to q (not the first ``taken[t]`` of row t), ascending.

    ``screen`` is ``(Q32, norm2, center)`` (:func:`screen_blocks`): a row whose float32
    distance is beyond the m-th best by more than :func:`_screen_margin` is passed over;
    the others are measured exactly (:func:`_distance2`). The whole tree is one part.
    """
    return _nearest_part(q, m, taken, first_leaf, start, stop, head, end, members, P, screen,
                         lo, hi, cnt, stack, stack_d2, best_d2, best_id, buffer32, q32, work,
                         0, 0, 0, np.full(2, np.inf))


def _nearest_part(q, m, taken, first_leaf, start, stop, head, end, members, P, screen, lo,
                  hi, cnt, stack, stack_d2, best_d2, best_id, buffer32, q32, work, part,
                  split_lo, split_hi, shared):
    """:func:`_nearest` over ``part``'s subtrees (:func:`_own`); the m-th best so far is
    published in ``shared[part]`` and the other part's, ``shared[1 − part]`` (∞ until it
    has m), prunes as well."""
    Q32, norm2, center = screen
    other = 1 - part
    size = 0
    if cnt[0] == 0:
        return 0
    query_norm2 = _screen_query(q, center, q32)
    stack[0], stack_d2[0] = 0, _min_box2(lo, hi, 0, q)
    depth = 1
    while depth:
        depth -= 1
        node = stack[depth]
        limit = atomics.load(shared, other)
        if size == m and best_d2[m - 1] < limit:
            limit = best_d2[m - 1]
        if stack_d2[depth] > limit or not _own(node, part, split_lo, split_hi):
            continue
        if node < first_leaf:
            depth = _push_children(node, q, lo, hi, cnt, stack, stack_d2, depth)
            continue
        s = start[node]
        margin = _screen_leaf(Q32, norm2, node - first_leaf, stop[node] - s, q32,
                              query_norm2, buffer32)
        work[0] += stop[node] - s
        for i in range(stop[node] - s):
            if buffer32[i] - margin > limit:
                continue
            t = s + i
            r = head[t] + taken[t]
            if r >= end[t]:
                continue
            d2 = _distance2(P, t, q)
            if d2 > limit:
                continue
            while r < end[t]:
                record = members[r]
                if size == m and (d2 > best_d2[m - 1] or
                                  (d2 == best_d2[m - 1] and record > best_id[m - 1])):
                    break
                size = _insert(best_d2, best_id, size, m, d2, record)
                r += 1
            if size == m and best_d2[m - 1] < limit:
                limit = best_d2[m - 1]
        if size == m:
            atomics.store(shared, part, best_d2[m - 1])
    return size


def _far_bound(node, q, reflected, spread, scale, lo, hi, cnt, top):
    """Upper bound on |x − q|² over the live rows of ``node`` (−inf when it has none)."""
    if cnt[node] == 0:
        return -np.inf
    # In one pass over the box: the squared distance to its corner farthest from q, and
    # _min_box2(lo, hi, node, reflected) (the same sum in the same order).
    box, near = 0.0, 0.0
    for j in range(q.shape[0]):
        low, high = lo[node, j], hi[node, j]
        a, b = abs(low - q[j]), abs(high - q[j])
        far = a if a > b else b
        box += far * far
        diff = max(low - reflected[j], reflected[j] - high, 0.0)
        near += diff * diff
    reflection = 2.0 * top[node] + spread - near
    reflection += _SLACK * (2.0 * top[node] + spread + near + scale)
    return min(box, reflection)


def _heap_push(keys, nodes, size, key, node):
    """Push (key, node) on the max-heap ``keys``/``nodes`` of ``size`` entries."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if keys[parent] >= key:
            break
        keys[i], nodes[i] = keys[parent], nodes[parent]
        i = parent
    keys[i], nodes[i] = key, node
    return size + 1


def _heap_pop(keys, nodes, size):
    """Remove the top of the max-heap; return the new size (the top was read before)."""
    size -= 1
    key, node = keys[size], nodes[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] > keys[child]:
            child += 1
        if keys[child] <= key:
            break
        keys[i], nodes[i] = keys[child], nodes[child]
        i = child
    if size:
        keys[i], nodes[i] = key, node
    return size


def _farthest_from(q, anchor, first_leaf, start, stop, head, end, members, P, screen, lo,
                   hi, cnt, top, keys, nodes, buffer32, q32, work):
    """(row, record, d²) of the live record farthest from q; ties to the first record.

    Best first: nodes wait on a max-heap by their bound, so the search ends as soon as
    the largest bound left is below the best distance found (``keys``/``nodes`` hold
    one entry per tree node at most). A node taken from the heap is followed down to a
    leaf through its child of larger bound, the other child waiting on the heap: half
    the heap operations of pushing both, and a visit order that is best first but for
    the nodes on that path. Every node whose bound is not below the best is still
    visited, so the answer does not depend on the order. A row is measured exactly only
    when its float32 distance (``screen``, as in :func:`_nearest`) may reach the best.
    The whole tree is one part; (−1, −1, −1) when no record is live.
    """
    return _farthest_part(q, anchor, first_leaf, start, stop, head, end, members, P, screen,
                          lo, hi, cnt, top, keys, nodes, buffer32, q32, work, 0, 0, 0,
                          np.full(2, -1.0))


def _farthest_part(q, anchor, first_leaf, start, stop, head, end, members, P, screen, lo,
                   hi, cnt, top, keys, nodes, buffer32, q32, work, part, split_lo, split_hi,
                   shared):
    """:func:`_farthest_from` over ``part``'s subtrees (:func:`_own`); the best so far is
    published in ``shared[part]``, and the other part's prunes as well."""
    Q32, norm2, center = screen
    other = 1 - part
    query_norm2 = _screen_query(q, center, q32)
    reflected = 2.0 * anchor - q
    spread = 2.0 * _vector_distance2(anchor, q)
    scale = _vector_distance2(reflected, np.zeros_like(q))
    best_row, best_record, best = -1, -1, -1.0
    size = _heap_push(keys, nodes, 0, np.inf, 0) if cnt[0] else 0
    while size:
        bound, node = keys[0], nodes[0]
        size = _heap_pop(keys, nodes, size)
        limit = max(best, atomics.load(shared, other))
        if bound < limit:
            break
        while node < first_leaf:  # down to a leaf through the child of larger bound
            a, b = 2 * node + 1, 2 * node + 2
            if not _own(a, part, split_lo, split_hi):
                a = b
            elif not _own(b, part, split_lo, split_hi):
                b = a
            da = _far_bound(a, q, reflected, spread, scale, lo, hi, cnt, top)
            db = _far_bound(b, q, reflected, spread, scale, lo, hi, cnt, top)
            if db > da:
                a, b, da, db = b, a, db, da
            if b != a and cnt[b] and db >= limit:
                size = _heap_push(keys, nodes, size, db, b)
            if not cnt[a] or da < limit:
                node = -1
                break
            node = a
        if node < 0:
            continue
        s = start[node]
        margin = _screen_leaf(Q32, norm2, node - first_leaf, stop[node] - s, q32,
                              query_norm2, buffer32)
        work[1] += stop[node] - s
        for i in range(stop[node] - s):
            t = s + i
            if head[t] >= end[t] or buffer32[i] + margin < limit:
                continue
            d2 = _distance2(P, t, q)
            if d2 < limit:
                continue
            record = members[head[t]]
            if d2 > best or (d2 == best and record < best_record):
                best_row, best_record, best = t, record, d2
                limit = max(limit, best)
        atomics.store(shared, part, best)
    return best_row, best_record, best


for _name in ("_leaf_distances32", "_screen_query", "_screen_margin", "_screen_leaf", "_own",
              "_nearest_part", "_nearest", "_far_bound", "_heap_push", "_heap_pop",
              "_farthest_part", "_farthest_from"):
    _compiled = kernel(globals()[_name])  # in dependency order, as in spatial_index
    if _compiled is not None:
        globals()[_name] = _compiled


def screen_blocks(P: np.ndarray, start: np.ndarray, stop: np.ndarray, levels: int):
    """``(Q32, norm2, center)``: the float32 screen of the searches (module notes).

    ``Q32`` is :func:`leaf_blocks` of ``P − center`` in float32 (``center`` the mean row),
    ``norm2[leaf]`` the largest |x − center|² of the leaf's rows; it is infinite for every
    leaf when a row lies beyond 1e15 of the centre, where float32 could overflow, and then
    every row gets its exact distance.
    """
    center = P.mean(axis=0) if len(P) else np.zeros(P.shape[1])
    shifted = P - center
    first_leaf = (1 << levels) - 1
    sizes = stop[first_leaf:] - start[first_leaf:]
    row_norm2 = np.einsum("ij,ij->i", shifted, shifted)
    firsts = np.minimum(start[first_leaf:], max(len(P) - 1, 0))
    norm2 = np.maximum.reduceat(row_norm2, firsts) if len(P) else np.zeros(len(sizes))
    norm2 = np.where(sizes > 0, norm2, 0.0)
    if not (np.isfinite(norm2).all() and norm2.max(initial=0.0) <= 1e30):
        norm2 = np.full(len(sizes), np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        Q32 = leaf_blocks(shifted, start, stop, levels).astype(np.float32)
    return Q32, norm2, center


def row_tree(X: np.ndarray, anchor: np.ndarray, check=None):
    """The records of ``X`` on the spatial index, as the searches take it; returns
    ``(tree, levels, order)``.

    ``tree`` is ``(P, screen, head, end, members, row_of, leaf_of, start, stop,
    first_leaf, lo, hi, cnt, top, rho2)``: identical records stored once as a row
    holding its records in input order (``members[head[t]:end[t]]``, the live ones),
    rows in k-d tree order, the leaves' boxes, counts and largest ρ² (squared distance
    to ``anchor``) set, and the float32 screen. ``order`` is the rows sorted by ρ²,
    largest first (the shell of the farthest-from-centroid search). ``check`` is
    called between the steps (Cancel).
    """
    check = check or (lambda: None)
    d = X.shape[1]
    members, starts, row_of = index.distinct_rows(X)
    check()
    P = X[members[starts[:-1]]]
    perm, start, stop, levels = index.build_tree(P, index.LEAF_SIZE, check)
    check()
    P = np.ascontiguousarray(P[perm])
    head, end = starts[:-1][perm].copy(), starts[1:][perm].copy()
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(len(perm))
    row_of = inverse[row_of]
    first_leaf = (1 << levels) - 1
    leaf_of = np.empty(len(P), dtype=np.int64)
    for node in range(first_leaf, 2 * first_leaf + 1):
        leaf_of[start[node]:stop[node]] = node
    n_nodes = len(start)
    lo, hi = np.zeros((n_nodes, d)), np.zeros((n_nodes, d))
    cnt, top, rho2 = np.zeros(n_nodes, dtype=np.int64), np.zeros(n_nodes), np.zeros(len(P))
    order = index._anchor_at(anchor, P, head, end, rho2)
    index._refresh_all(first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top)
    check()
    screen = screen_blocks(P, start, stop, levels)
    tree = (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi,
            cnt, top, rho2)
    return tree, levels, order
