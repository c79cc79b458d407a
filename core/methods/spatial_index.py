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
    of about ``LEAF_SIZE`` rows. Every node keeps the box and the number of its live
    rows; a row whose queue empties shrinks its leaf's box and those above it. The m
    nearest records come from a depth-first search that skips a node whose box is
    farther than the m-th best so far.
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

Float32 screen
    The leaves' rows are also kept in float32, less a centre (``Q32``). A search first
    measures a leaf's rows in float32 and computes the exact distance only of the rows
    that the float32 distance, widened by its rounding bound (:func:`_screen_margin`),
    cannot rule out: half the bytes read per leaf, which at a million records is what a
    search waits for.

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

__all__ = ["LEAF_SIZE", "distinct_rows", "build_tree", "leaf_blocks"]

LEAF_SIZE = 48
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


def _min_box2(lo, hi, node, q):
    """Squared distance from q to the node's box (branch-free; never above a row's own)."""
    acc = 0.0
    for j in range(q.shape[0]):
        diff = max(lo[node, j] - q[j], q[j] - hi[node, j], 0.0)
        acc += diff * diff
    return acc


def _max_box2(lo, hi, node, q):
    acc = 0.0
    for j in range(q.shape[0]):
        a = abs(lo[node, j] - q[j])
        b = abs(hi[node, j] - q[j])
        diff = a if a > b else b
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


def _split_level(P, perm, start, stop, first, last):
    """Split nodes ``first .. last−1`` at the median of their widest attribute."""
    d = P.shape[1]
    for node in range(first, last):
        s, e = start[node], stop[node]
        best, j = -1.0, 0
        for col in range(d):
            low, high = P[perm[s], col], P[perm[s], col]
            for i in range(s + 1, e):
                v = P[perm[i], col]
                if v < low:
                    low = v
                elif v > high:
                    high = v
            if high - low > best:
                best, j = high - low, col
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
    a, b = 2 * node + 1, 2 * node + 2
    cnt[node] = cnt[a] + cnt[b]
    if cnt[a] and cnt[b]:
        for j in range(d):
            lo[node, j] = min(lo[a, j], lo[b, j])
            hi[node, j] = max(hi[a, j], hi[b, j])
        top[node] = max(top[a], top[b])
    elif cnt[a] or cnt[b]:
        c = a if cnt[a] else b
        for j in range(d):
            lo[node, j] = lo[c, j]
            hi[node, j] = hi[c, j]
        top[node] = top[c]


def _refresh(node, first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top):
    """Recompute ``node`` and its ancestors (after one of its rows emptied)."""
    while True:
        _refresh_node(node, first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top)
        if node == 0:
            return
        node = (node - 1) // 2


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


def _nearest(q, m, taken, first_leaf, start, stop, head, end, members, P, screen, lo, hi,
             cnt, stack, stack_d2, best_d2, best_id, buffer32, q32, work):
    """The m live records nearest to q (not the first ``taken[t]`` of row t), ascending.

    ``screen`` is ``(Q32, norm2, center)`` (:func:`screen_blocks`): a row whose float32
    distance is beyond the m-th best by more than :func:`_screen_margin` is passed over;
    the others are measured exactly (:func:`_distance2`).
    """
    Q32, norm2, center = screen
    size = 0
    depth = 0
    if cnt[0] == 0:
        return 0
    query_norm2 = _screen_query(q, center, q32)
    stack[0], stack_d2[0] = 0, _min_box2(lo, hi, 0, q)
    depth = 1
    while depth:
        depth -= 1
        node, bound = stack[depth], stack_d2[depth]
        if size == m and bound > best_d2[m - 1]:
            continue
        if node >= first_leaf:
            s = start[node]
            leaf = node - first_leaf
            _leaf_distances32(Q32, leaf, stop[node] - s, q32, buffer32)
            margin = _screen_margin(norm2[leaf], query_norm2, q.shape[0])
            work[0] += stop[node] - s
            for i in range(stop[node] - s):
                if size == m and buffer32[i] - margin > best_d2[m - 1]:
                    continue
                t = s + i
                r = head[t] + taken[t]
                if r >= end[t]:
                    continue
                d2 = _distance2(P, t, q)
                while r < end[t]:
                    record = members[r]
                    if size == m and (d2 > best_d2[m - 1] or
                                      (d2 == best_d2[m - 1] and record > best_id[m - 1])):
                        break
                    size = _insert(best_d2, best_id, size, m, d2, record)
                    r += 1
            continue
        depth = _push_children(node, q, lo, hi, cnt, stack, stack_d2, depth)
    return size


def _far_bound(node, q, reflected, spread, scale, lo, hi, cnt, top):
    """Upper bound on |x − q|² over the live rows of ``node`` (−inf when it has none)."""
    if cnt[node] == 0:
        return -np.inf
    # _max_box2(lo, hi, node, q) and _min_box2(lo, hi, node, reflected) in one pass over
    # the box (the same sums in the same order; half the time of the two calls)
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
    """
    Q32, norm2, center = screen
    query_norm2 = _screen_query(q, center, q32)
    reflected = 2.0 * anchor - q
    spread = 2.0 * _vector_distance2(anchor, q)
    scale = _vector_distance2(reflected, np.zeros_like(q))
    best_row, best_record, best = -1, -1, -1.0
    if cnt[0] == 0:
        return best_row, best_record, best
    size = _heap_push(keys, nodes, 0, np.inf, 0)
    while size:
        bound, node = keys[0], nodes[0]
        size = _heap_pop(keys, nodes, size)
        if bound < best:
            break
        while node < first_leaf:  # down to a leaf through the child of larger bound
            a, b = 2 * node + 1, 2 * node + 2
            da = _far_bound(a, q, reflected, spread, scale, lo, hi, cnt, top)
            db = _far_bound(b, q, reflected, spread, scale, lo, hi, cnt, top)
            if db > da:
                a, b, da, db = b, a, db, da
            if cnt[b] and db >= best:
                size = _heap_push(keys, nodes, size, db, b)
            if not cnt[a] or da < best:
                node = -1
                break
            node = a
        if node < 0:
            continue
        s = start[node]
        leaf = node - first_leaf
        _leaf_distances32(Q32, leaf, stop[node] - s, q32, buffer32)
        margin = _screen_margin(norm2[leaf], query_norm2, q.shape[0])
        work[1] += stop[node] - s
        for i in range(stop[node] - s):
            t = s + i
            if head[t] >= end[t] or buffer32[i] + margin < best:
                continue
            d2 = _distance2(P, t, q)
            if d2 < best:
                continue
            record = members[head[t]]
            if d2 > best or (d2 == best and record < best_record):
                best_row, best_record, best = t, record, d2
    return best_row, best_record, best


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


_KERNELS = ("_distance2", "_vector_distance2", "_leaf_distances", "_leaf_distances32",
            "_screen_query", "_screen_margin", "_min_box2", "_max_box2",
            "_select", "_split_level", "_refresh_node", "_refresh",
            "_refresh_all", "_insert", "_push_children", "_nearest", "_far_bound",
            "_heap_push", "_heap_pop", "_farthest_from", "_farthest_in_shell", "_anchor_at")
for _name in _KERNELS:  # compiled in dependency order; a kernel calls the compiled ones
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled


def leaf_blocks(P: np.ndarray, start: np.ndarray, stop: np.ndarray, levels: int) -> np.ndarray:
    """The rows of every leaf, attribute by attribute: ``Q[leaf, j, i]`` (tree order ``P``)."""
    first_leaf = (1 << levels) - 1
    sizes = stop[first_leaf:] - start[first_leaf:]
    Q = np.zeros((len(sizes), P.shape[1], int(sizes.max())))
    leaf = np.repeat(np.arange(len(sizes)), sizes)
    Q[leaf, :, np.arange(len(P)) - start[first_leaf:][leaf]] = P
    return Q


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
    for level in range(levels):
        _split_level(P, perm, start, stop, (1 << level) - 1, (1 << (level + 1)) - 1)
        if check is not None:
            check()
    return perm, start, stop, levels
