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
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods import spatial_index as index

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
                index._refresh(leaf_of[t], first_leaf, start, stop, head, end, P, rho2, lo,
                               hi, cnt, top)
            else:
                head[t] = following


def _after(d2a, a, d2b, b):
    """Whether (d2a, a) comes after (d2b, b) in the order (distance, record)."""
    return d2a > d2b or (d2a == d2b and a > b)


def _sift_down(heap_d2, heap_id, size, d2, record):
    """Place (d2, record) at the root of the max-heap of ``size`` entries, sifting down."""
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _after(heap_d2[child + 1], heap_id[child + 1],
                                       heap_d2[child], heap_id[child]):
            child += 1
        if not _after(heap_d2[child], heap_id[child], d2, record):
            break
        heap_d2[i], heap_id[i] = heap_d2[child], heap_id[child]
        i = child
    heap_d2[i], heap_id[i] = d2, record


def _push(heap_d2, heap_id, size, m, d2, record):
    """Offer (d2, record) to the max-heap of the m best; return the new size."""
    if size < m:
        i = size
        while i > 0:
            parent = (i - 1) // 2
            if not _after(d2, record, heap_d2[parent], heap_id[parent]):
                break
            heap_d2[i], heap_id[i] = heap_d2[parent], heap_id[parent]
            i = parent
        heap_d2[i], heap_id[i] = d2, record
        return size + 1
    if _after(d2, record, heap_d2[0], heap_id[0]):
        return size
    _sift_down(heap_d2, heap_id, size, d2, record)
    return size


def _nearest(q, m, blocked, nxt, first_leaf, start, stop, head, end, members, P, lo, hi,
             cnt, stack, stack_d2, heap_d2, heap_id, buffer):
    """The m live records nearest to q that are not ``blocked``; sorted ascending in place.

    Returns how many were found (fewer than m only when fewer are available).
    """
    if cnt[0] == 0 or m == 0:
        return 0
    size = 0
    stack[0], stack_d2[0] = 0, index._min_box2(lo, hi, 0, q)
    depth = 1
    while depth:
        depth -= 1
        node, bound = stack[depth], stack_d2[depth]
        if size == m and bound > heap_d2[0]:
            continue
        if node >= first_leaf:
            s = start[node]
            index._leaf_distances(P, s, stop[node], q, buffer)
            for i in range(stop[node] - s):
                d2 = buffer[i]
                if size == m and d2 > heap_d2[0]:
                    continue
                t = s + i
                slot = head[t]
                while slot < end[t]:
                    record = members[slot]
                    if size == m and _after(d2, record, heap_d2[0], heap_id[0]):
                        break
                    if not blocked[record]:
                        size = _push(heap_d2, heap_id, size, m, d2, record)
                    slot = _find(nxt, slot + 1)
            continue
        a, b = 2 * node + 1, 2 * node + 2
        da = index._min_box2(lo, hi, a, q) if cnt[a] else np.inf
        db = index._min_box2(lo, hi, b, q) if cnt[b] else np.inf
        if da > db:
            a, b, da, db = b, a, db, da
        if cnt[b]:
            stack[depth], stack_d2[depth] = b, db
            depth += 1
        if cnt[a]:
            stack[depth], stack_d2[depth] = a, da
            depth += 1
    for last in range(size - 1, 0, -1):  # heap sort: largest to the back
        d2, record = heap_d2[last], heap_id[last]
        heap_d2[last], heap_id[last] = heap_d2[0], heap_id[0]
        _sift_down(heap_d2, heap_id, last, d2, record)
    return size


for _name in ("_find", "_remove", "_after", "_sift_down", "_push", "_nearest"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled

find_live, remove_records, nearest_live = _find, _remove, _nearest
