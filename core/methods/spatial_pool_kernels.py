"""Compiled kernels of :class:`core.methods.spatial_pool.SpatialPool`.

They extend the spatial index of :mod:`core.methods.spatial_index` to removals in any
order. A distinct row keeps its queue of record numbers (input order); a removed record
is skipped through ``nxt``, a "next live slot" forest over the queues with path
compression, so a row whose early copies stay while later ones leave costs no rescans.
``head[t]`` is always the slot of row t's first live record (``end[t]`` when none is
left), which is all the index's own farthest searches need.

The m nearest records are kept in a max-heap on (d², record), so a request for many
candidates costs O(m log m) rather than O(m²); the answer is sorted ascending on the
same key, the reference's order (exact distance, then input order).

The tree kernels (leaf distances, box distances, refreshing a node, the farthest
searches through the shell and the reflection) are :mod:`core.methods.spatial_index`'s
own; only what removal in any order changes lives here.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods.spatial_index import _leaf_distances, _min_box2, _push_children, _refresh

__all__ = ["find_live", "remove_records", "nearest_live"]


def _find(nxt, slot):
    """First live slot at or after ``slot`` (path compression on the way)."""
    root = slot
    while nxt[root] != root:
        root = nxt[root]
    while nxt[slot] != root:
        following = nxt[slot]
        nxt[slot] = root
        slot = following
    return root


def _remove(records, slot_of, nxt, row_of, leaf_of, alive, first_leaf, start, stop, head,
            end, P, rho2, lo, hi, cnt, top):
    """Flag ``records`` removed; advance their rows' heads, shrink emptied rows' leaves."""
    for i in range(records.shape[0]):
        record = records[i]
        alive[record] = False
        slot = slot_of[record]
        nxt[slot] = slot + 1
        t = row_of[record]
        if head[t] == slot:
            following = _find(nxt, slot)
            if following >= end[t]:
                head[t] = end[t]
                _refresh(leaf_of[t], first_leaf, start, stop, head, end, P, rho2, lo,
                               hi, cnt, top)
            else:
                head[t] = following


def _after(d2a, a, d2b, b):
    """Whether (d2a, a) comes after (d2b, b) in the order (distance, record)."""
    return d2a > d2b or (d2a == d2b and a > b)


def _select_pairs(d2, ids, size, nth):
    """Reorder the first ``size`` pairs so the ``nth`` smallest (d², record) sit at nth."""
    lo, hi = 0, size - 1
    while lo < hi:
        mid = (lo + hi) // 2
        # median of three as the pivot, by the (distance, record) order
        a, b, c = lo, mid, hi
        if _after(d2[a], ids[a], d2[b], ids[b]):
            a, b = b, a
        if _after(d2[b], ids[b], d2[c], ids[c]):
            b = c
            if _after(d2[a], ids[a], d2[b], ids[b]):
                b = a
        pd, pid = d2[b], ids[b]
        i, k = lo, hi
        while i <= k:
            while _after(pd, pid, d2[i], ids[i]):
                i += 1
            while _after(d2[k], ids[k], pd, pid):
                k -= 1
            if i <= k:
                d2[i], d2[k] = d2[k], d2[i]
                ids[i], ids[k] = ids[k], ids[i]
                i += 1
                k -= 1
        if nth <= k:
            hi = k
        elif nth >= i:
            lo = i
        else:
            return


def _shrink(d2, ids, size, m, bound):
    """Keep the m best of ``size`` candidates at the front; ``bound`` gets the m-th."""
    _select_pairs(d2, ids, size, m - 1)  # the m − 1 before it are the better ones
    bound[0], bound[1] = d2[m - 1], ids[m - 1]
    return m


def _finish(d2, ids, size, m):
    """Sort the best min(m, size) candidates ascending at the front; return how many."""
    bound = np.empty(2)
    if size > m:
        size = _shrink(d2, ids, size, m, bound)
    order = np.argsort(ids[:size])
    by_distance = np.argsort(d2[:size][order], kind="mergesort")
    order = order[by_distance]
    sorted_d2, sorted_ids = d2[:size][order], ids[:size][order]
    d2[:size], ids[:size] = sorted_d2, sorted_ids
    return size


def _offer_row(t, d2, m, blocked, nxt, head, end, members, cand_d2, cand_id, size, bound):
    """Offer row t's live, unblocked records (at distance d2) as candidates."""
    slot = head[t]
    cap = cand_d2.shape[0]
    while slot < end[t]:
        record = members[slot]
        if d2 > bound[0] or (d2 == bound[0] and record > bound[1]):
            break
        if not blocked[record]:
            cand_d2[size], cand_id[size] = d2, record
            size += 1
            if size == cap:
                size = _shrink(cand_d2, cand_id, size, m, bound)
        slot = _find(nxt, slot + 1)
    return size


def _nearest(q, m, blocked, nxt, first_leaf, start, stop, head, end, members, Q, lo, hi,
             cnt, stack, stack_d2, cand_d2, cand_id, buffer):
    """The m live records nearest to q that are not ``blocked``, sorted at the front.

    Candidates under the bound are appended to ``cand_d2``/``cand_id`` (capacity above
    m); when full, the m best are selected and the bound tightens to the m-th, so a
    candidate costs O(1). Returns how many were found (fewer than m only when fewer are
    available).
    """
    if cnt[0] == 0 or m == 0:
        return 0
    bound = np.empty(2)
    bound[0], bound[1] = np.inf, -1.0
    size = 0
    stack[0], stack_d2[0] = 0, _min_box2(lo, hi, 0, q)
    depth = 1
    while depth:
        depth -= 1
        node = stack[depth]
        if stack_d2[depth] > bound[0]:
            continue
        if node >= first_leaf:
            s = start[node]
            _leaf_distances(Q, node - first_leaf, stop[node] - s, q, buffer)
            for i in range(stop[node] - s):
                if buffer[i] <= bound[0]:
                    size = _offer_row(s + i, buffer[i], m, blocked, nxt, head, end, members,
                                      cand_d2, cand_id, size, bound)
            continue
        depth = _push_children(node, q, lo, hi, cnt, stack, stack_d2, depth)
    return _finish(cand_d2, cand_id, size, m)


def _nearest_flat(q, m, blocked, nxt, first_leaf, start, stop, head, end, members, Q, lo,
                  hi, cnt, cand_d2, cand_id, buffer):
    """:func:`_nearest` by a scan of the live leaves in order (no descent through the tree).

    In many dimensions a search for hundreds of neighbours opens most leaves anyway; the
    scan then saves the descent's box tests. A leaf farther than the bound is skipped.
    """
    if cnt[0] == 0 or m == 0:
        return 0
    bound = np.empty(2)
    bound[0], bound[1] = np.inf, -1.0
    size = 0
    for node in range(first_leaf, 2 * first_leaf + 1):
        if cnt[node] == 0 or _min_box2(lo, hi, node, q) > bound[0]:
            continue
        s = start[node]
        _leaf_distances(Q, node - first_leaf, stop[node] - s, q, buffer)
        for i in range(stop[node] - s):
            if buffer[i] <= bound[0]:
                size = _offer_row(s + i, buffer[i], m, blocked, nxt, head, end, members,
                                  cand_d2, cand_id, size, bound)
    return _finish(cand_d2, cand_id, size, m)


for _name in ("_find", "_remove", "_after", "_select_pairs", "_shrink", "_finish",
              "_offer_row", "_nearest", "_nearest_flat"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled

find_live, remove_records, nearest_live = _find, _remove, _nearest
