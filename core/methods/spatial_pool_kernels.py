"""Compiled kernels of :class:`core.methods.spatial_pool.SpatialPool`.

They extend the spatial index of :mod:`core.methods.spatial_index` to removals in any
order. A distinct row keeps its queue of record numbers (input order); a removed record
is skipped through ``nxt``, a "next live slot" forest over the queues with path
compression, so a row whose early copies stay while later ones leave costs no rescans.
``head[t]`` is always the slot of row t's first live record (``end[t]`` when none is
left), which is all the index's own farthest searches need.

The m nearest records: candidates under a bound go to a buffer of about 2m; when it
is full the m best are selected and the bound tightens to the m-th, so a request for
many candidates costs O(m log m) rather than O(m²). The answer is sorted ascending on
(d², record), the reference's order (exact distance, then input order).

A stream of nearest records (:func:`_scan`, :func:`_sample`, then :func:`_bucket` and
:func:`_take` as often as wanted) is for requests so large that the tree cannot prune:
hundreds to thousands of neighbours among tens of thousands of records in ten
dimensions open most leaves anyway (80,000 records, 3,900 neighbours: 3,100 of 4,096
leaves). It reads the pool's scan set instead, its live rows in tree order packed
into blocks (compacted whenever half of them have emptied): one pass computes every
distance, a sample of them sets how far to list, the rows that near are listed in
buckets by distance, and each take sorts only the buckets it reaches. The records come
in the same order as from :func:`_nearest`, a piece at a time.

The tree kernels (leaf distances, box distances, refreshing a node, the farthest
searches through the shell and the reflection) are :mod:`core.methods.spatial_index`'s
own; only what removal in any order changes lives here.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods.spatial_index import _emptied, _leaf_distances, _min_box2, _push_children
from core.methods.spatial_search import _vacate

__all__ = ["find_live", "remove_records", "nearest_live", "scan_rows", "sample_rows",
           "bucket_rows", "take_next"]


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
            end, solo, members, P, rho2, lo, hi, cnt, top, screen):
    """Flag ``records`` removed; advance their rows' heads, shrink emptied rows' leaves
    and move those rows behind their leaves' live ones in the float32 screen
    (:func:`~core.methods.spatial_search._vacate`).

    ``solo[t]`` follows row t: its one live record, −1 while it has several, −2 once it
    has none (read by the streams, in tree order, instead of the queues).
    """
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
                solo[t] = -2
                _emptied(t, leaf_of[t], first_leaf, start, stop, head, end, P, rho2, lo,
                         hi, cnt, top)
                _vacate(t, leaf_of[t] - first_leaf, start[leaf_of[t]], screen)
                continue
            head[t] = following
        if solo[t] == -1 and _find(nxt, head[t] + 1) >= end[t]:
            solo[t] = members[head[t]]


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
    """Sort the best min(m, size) candidates ascending at the front; return how many.

    Sorted on the distance, then each run of equal distances on the record number: the
    order (distance, record) of one sort on both keys, at the cost of one.
    """
    bound = np.empty(2)
    if size > m:
        size = _shrink(d2, ids, size, m, bound)
    order = np.argsort(d2[:size])
    sorted_d2, sorted_ids = d2[:size][order], ids[:size][order]
    first = 0
    for i in range(1, size + 1):
        if i == size or sorted_d2[i] != sorted_d2[first]:
            if i - first > 1:
                sorted_ids[first:i].sort()
            first = i
    d2[:size], ids[:size] = sorted_d2, sorted_ids
    return size


def _offer_row(t, d2, m, blocked, nxt, head, end, members, cand_d2, cand_id, size, bound,
               after):
    """Offer row t's live, unblocked records after record ``after`` (at distance d2)."""
    slot = head[t]
    cap = cand_d2.shape[0]
    while slot < end[t] and members[slot] <= after:
        slot = _find(nxt, slot + 1)
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
    bound[0], bound[1] = np.inf, np.inf  # nothing ruled out yet, not even at inf
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
                                      cand_d2, cand_id, size, bound, -1)
            continue
        depth = _push_children(node, q, lo, hi, cnt, stack, stack_d2, depth)
    return _finish(cand_d2, cand_id, size, m)


def _scan(q, blocks, size, D):
    """``D[i]`` = squared distance from q to the scan set's row i (the sum order of
    :func:`_leaf_distances`; ``blocks[b, j, i]`` is attribute j of row 32b + i)."""
    width = blocks.shape[2]
    for b in range((size + width - 1) // width):
        _leaf_distances(blocks, b, width, q, D[b * width:])


def _sample(D, slots, size, solo, stride, sample):
    """The distances of the live rows among every ``stride``-th row of the scan set,
    sorted: a spatially spread sample (the set is in tree order) in which every live row
    is equally likely, so its j-th value is about the (j · live rows / its size)-th
    smallest. ``sample`` must hold every place looked at. Returns the sample's size."""
    taken = 0
    for i in range(0, size, stride):
        if solo[slots[i]] != -2 and taken < sample.shape[0]:
            sample[taken] = D[i]
            taken += 1
    sample[:taken].sort()
    return taken


def _bucket(lo_d2, hi_d2, base, scale, table, D, slots, size, solo, spill_d2, spill,
            spill_b, rows_d2, rows, bounds):
    """List the live rows of the scan set with lo_d2 < D ≤ hi_d2, bucket by bucket.

    A row's bucket is ``table[min(⌊(D − base) · scale⌋, len(table) − 1)]``, which never
    decreases as D grows (``table`` ascending, base ≤ every D, scale ≥ 0): every row of
    bucket b is nearer than every row of bucket b + 1, whatever the table, so taking
    the buckets in turn keeps the order exact. Bucket b's rows are at ``rows_d2``/
    ``rows`` [bounds[b]:bounds[b + 1]], in tree order, ``rows[i]`` = (tree row, its one
    live record or −1 when it has several). The ``spill`` arrays are scratch. Returns
    the number of rows listed.
    """
    last = table.shape[0] - 1
    bounds[:] = 0
    listed = 0
    for i in range(size):
        d2 = D[i]
        if lo_d2 < d2 <= hi_d2:
            t = slots[i]
            if solo[t] != -2:
                cell = (d2 - base) * scale  # ≥ 0; compared before the cast can overflow
                b = table[int(cell)] if cell < last else table[last]
                spill_d2[listed], spill[listed, 0], spill[listed, 1] = d2, t, solo[t]
                spill_b[listed] = b
                bounds[b + 1] += 1
                listed += 1
    for b in range(bounds.shape[0] - 1):
        bounds[b + 1] += bounds[b]
    for i in range(listed):  # a counting sort on the bucket, stable
        b = spill_b[i]
        at = bounds[b]
        rows_d2[at], rows[at, 0], rows[at, 1] = spill_d2[i], spill[i, 0], spill[i, 1]
        bounds[b] += 1
    for b in range(bounds.shape[0] - 1, 0, -1):
        bounds[b] = bounds[b - 1]
    bounds[0] = 0
    return listed


def _take(floor, m, blocked, nxt, head, end, members, rows_d2, rows, bounds, lengths, at,
          cand_d2, cand_id):
    """The next records of a stream: the m first in the order (distance, record) after
    ``floor`` = (distance, record) among the live, unblocked records of the buckets of
    :func:`_bucket` from bucket ``at[0]`` on, sorted at the front of ``cand_d2``/
    ``cand_id`` (capacity 2m + 32 at least). Fewer than m only when the buckets run out.

    ``floor`` and ``at`` move on past what is taken; a bucket's rows below the floor
    leave it (``lengths``). Returns how many were taken.
    """
    got = 0
    while got < m and at[0] < lengths.shape[0]:
        b = at[0]
        first, want = bounds[b], m - got
        size, kept = _take_bucket(floor[0], floor[1], want, blocked, nxt, head, end,
                                  members, rows_d2[first:], rows[first:], lengths[b],
                                  cand_d2[got:], cand_id[got:])
        lengths[b] = kept
        if size:
            got += size
            floor[0], floor[1] = cand_d2[got - 1], cand_id[got - 1]
        if size < want:
            at[0] += 1
    return got


def _take_bucket(floor_d2, floor_id, m, blocked, nxt, head, end, members, rows_d2, rows,
                 listed, cand_d2, cand_id):
    """:func:`_take` within one bucket of ``listed`` rows: the m first records after
    (floor_d2, floor_id), fewer only when the bucket has no more. Rows below the floor
    leave the bucket. Returns (how many, the bucket's new length)."""
    bound = np.empty(2)
    bound[0], bound[1] = np.inf, np.inf  # nothing ruled out yet, not even at inf
    size = kept = 0
    for i in range(listed):
        d2, t, record = rows_d2[i], rows[i, 0], rows[i, 1]
        if d2 < floor_d2:
            continue
        rows_d2[kept], rows[kept, 0], rows[kept, 1] = d2, t, record
        kept += 1
        if d2 > bound[0]:
            continue
        after = floor_id if d2 == floor_d2 else -1
        if record < 0:  # copies: through the row's queue
            size = _offer_row(t, d2, m, blocked, nxt, head, end, members, cand_d2, cand_id,
                              size, bound, after)
            continue
        if record <= after or blocked[record] or (d2 == bound[0] and record > bound[1]):
            continue
        # _offer_row's append, written out: as a shared helper it cost tc-kfirst about
        # 10 % (100,000 × 10, t = 0.1: 49–52 s against 45–46 s, back to back)
        cand_d2[size], cand_id[size] = d2, record
        size += 1
        if size == cand_d2.shape[0]:
            size = _shrink(cand_d2, cand_id, size, m, bound)
    return _finish(cand_d2, cand_id, size, m), kept


# Helpers that neither allocate, return nor keep an array, nor call a kernel that does
# (core.compiled's notes).
_BORROWING = frozenset({"_find", "_remove", "_after", "_select_pairs", "_shrink",
                        "_offer_row", "_scan", "_bucket"})
for _name in ("_find", "_remove", "_after", "_select_pairs", "_shrink", "_finish",
              "_offer_row", "_nearest", "_scan", "_sample", "_bucket", "_take_bucket",
              "_take"):
    _compiled = kernel(globals()[_name], refcounts=_name not in _BORROWING)
    if _compiled is not None:
        globals()[_name] = _compiled

find_live, remove_records, nearest_live = _find, _remove, _nearest
scan_rows, sample_rows, bucket_rows, take_next = _scan, _sample, _bucket, _take
