"""The two searches of :mod:`core.methods.spatial_index`: the m nearest live records to
a point, and the live record farthest from one (both exact; the structure and its
bounds are described there).

Float32 screen
    The leaves' rows are also kept in float32, less their mean row (``Q32``,
    :func:`~core.methods.spatial_tree.screen_blocks`), each nominal attribute's block of
    indicator columns as one column of categories (:mod:`core.methods.spatial_screen`).
    A search first measures a leaf's rows in float32 and computes the exact distance
    (:func:`~core.methods.spatial_index._distance2`, the reference's sum) only of the
    rows that the float32 distance, widened by its rounding bound
    (:func:`~core.methods.spatial_screen._screen_margin`), cannot rule out. A search at
    a million records waits on memory; a leaf read in float32 is half the bytes, and a
    census-like table of 124 embedded columns is screened in 5.
Compact leaves
    An index whose rows empty as records are grouped keeps each leaf's live rows in
    front of its float32 block (:func:`_vacate`, called as a row's last record is
    taken): the leaf starting at row s holds row ``slot[s + i]`` at place i, and only
    its first ``fill[leaf]`` places can hold a live row, so a search screens those
    alone. MDAV leaves its leaves partly filled for most of a run (the k-d tree's
    leaves reach from the centre of the data to its edge, and MDAV takes records from
    the edge inwards); at 100,000 × 10 the rows screened fell from 171 to 97 million
    for the nearest searches and from 78 to 46 million for the farthest ones. The
    order in which a leaf's rows are measured does not matter: ties are decided by
    record number, never by the order found.
Cells
    The nearest search descends through the cells of the k-d tree, as Arya and Mount's
    incremental distance does: a node's cell is bounded in each attribute by the
    splits above it, so a child's squared distance to q is its parent's with the one
    split attribute's term changed (O(1) per node, no box read). The split of node v
    puts its left child's rows at or below ``left_hi[v]`` and its right child's at or
    above ``right_lo[v]`` in attribute ``axis[v]``
    (:func:`~core.methods.spatial_tree.cell_splits`); a cell holds every row of its
    node, live or not, so its distance never exceeds a row's. Only a
    leaf's own box of live rows (``lo``/``hi``) is read, once the leaf's cell is near
    enough; that box is what prunes records already taken. The incremental sum is
    rounded differently from a row's distance, so a cell prunes only beyond the best
    by the relative margin ``_SLACK`` (its rounding is below 1e−13 of it); the box
    bound is the exact one of :func:`~core.methods.spatial_index._min_box2`. A table
    with nominal attributes bounds each one's block of indicator columns as one
    attribute, in the cells, the leaves' boxes and the farthest search's bounds
    (:mod:`core.methods.spatial_screen`'s notes, Block bounds), with the same margin.
Prefetch
    A leaf about to be screened is asked for in full first
    (:func:`core.methods.prefetch.prefetch`): at a million records its float32 rows are
    in main memory, and the reads then overlap. The farthest search, going down one
    level, asks for the boxes of the level below while it weighs the two children. Only
    a tree too large for the caches is prefetched; a small one is there already.
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
from core.methods.prefetch import prefetch
from core.methods.spatial_index import _SLACK, _distance2, _insert, _min_box2, _vector_distance2
from core.methods.spatial_screen import (_PREFETCH_FROM, _block_query, _box_terms, _far_blocks,
                                         _leaf_query, _near_blocks, _prefetch_leaf,
                                         _screen_leaf)

__all__: list[str] = []  # kernels only; the tree they search: core.methods.spatial_tree

def _own(node, part, split_lo, split_hi):
    """Whether ``node`` belongs to ``part``: of the nodes ``split_lo`` to ``split_hi − 1``
    (one depth of the tree), part 0 searches those of even rank and part 1 those of odd
    rank; every other node belongs to both (module notes)."""
    return not (split_lo <= node < split_hi) or (node - split_lo) % 2 == part


def _prefetch_nodes(first, count, lo, hi, cnt, top):
    """Ask for the boxes, counts and largest ρ² of nodes ``first`` to ``first + count −
    1`` when the boxes are larger than a processor's caches: the farthest search reads
    them one level down, while it weighs their parents (module notes)."""
    if lo.size < _PREFETCH_FROM // 2:  # half as many float64 values as the leaves' float32
        return
    d = lo.shape[1]
    for box in (lo, hi):
        flat = box.reshape(box.size)
        for i in range(first * d, (first + count) * d, 8):  # 8 float64 to a 64-byte line
            prefetch(flat, (i,))
        prefetch(flat, ((first + count) * d - 1,))
    prefetch(cnt, (first,))
    prefetch(cnt, (first + count - 1,))
    prefetch(top, (first,))
    prefetch(top, (first + count - 1,))


def _vacate(t, leaf, s, screen):
    """Row t (of the leaf numbered ``leaf``, whose rows start at s) has emptied: move it
    behind the leaf's filled places, swapping it with the last filled one (module notes,
    Compact leaves). Called by an index as a row's last record is taken, between
    searches."""
    Q32, slot, place, fill = screen[0], screen[6], screen[7], screen[8]
    i, last = place[t], fill[leaf] - 1
    if i > last:  # vacated already
        return
    other = slot[s + last]
    for j in range(Q32.shape[1]):
        Q32[leaf, j, i], Q32[leaf, j, last] = Q32[leaf, j, last], Q32[leaf, j, i]
    slot[s + i], slot[s + last] = other, t
    place[other], place[t] = i, last
    fill[leaf] = last


def _cell_child(parent, child, q, axis, left_hi, right_lo, offset):
    """The offset in ``axis[parent]`` of ``child``'s cell from q, given the parent's
    ``offset`` there (both ≥ 0): the left child's cell ends at ``left_hi``, the right
    child's begins at ``right_lo``."""
    j = axis[parent]
    if child == 2 * parent + 1:
        return max(offset, q[j] - left_hi[parent])
    return max(offset, right_lo[parent] - q[j])


def _cell_pruned(d2, limit):
    """Whether a cell at incremental squared distance ``d2`` is beyond ``limit`` for
    certain (the margin covers the incremental sum's rounding, module notes)."""
    return d2 > limit + _SLACK * limit + 1e-300


def _push_cells(node, level, q, axis, left_hi, right_lo, offsets, cnt, stack, stack_d2,
                node_d2, depth, limit, block_of, gain, shut):
    """Push the live children of ``node`` (at ``level``, cell distance ``node_d2``) that
    ``limit`` does not rule out, nearer on top; return the new depth. An entry is
    ``child << 6 | level + 1`` with its cell's squared distance.

    ``offsets`` and ``shut`` are the node's cell's (:func:`_nearest_part`). A split in a
    block with a ``gain`` (:func:`~core.methods.spatial_screen._block_query`) adds the
    gain to a child whose split shuts the query's category out, unless the cell had it
    already (``shut[block]``); its offsets are not summed."""
    j = axis[node]
    before = offsets[j]
    a, b = 2 * node + 1, 2 * node + 2
    off_a = _cell_child(node, a, q, axis, left_hi, right_lo, before)
    off_b = _cell_child(node, b, q, axis, left_hi, right_lo, before)
    c = block_of[j]
    if c >= 0 and gain[c] > 0.0:
        da = node_d2 + (gain[c] if off_a > 0.0 and not shut[c] else 0.0)
        db = node_d2 + (gain[c] if off_b > 0.0 and not shut[c] else 0.0)
    else:
        rest = max(node_d2 - before * before, 0.0)
        da, db = rest + off_a * off_a, rest + off_b * off_b
    if da > db:
        a, b, da, db = b, a, db, da
    if cnt[b] and not _cell_pruned(db, limit):
        stack[depth], stack_d2[depth] = b << 6 | (level + 1), db
        depth += 1
    if cnt[a] and not _cell_pruned(da, limit):
        stack[depth], stack_d2[depth] = a << 6 | (level + 1), da
        depth += 1
    return depth


def _nearest(q, m, taken, first_leaf, start, head, end, members, P, screen, lo, hi,
             cnt, stack, stack_d2, best_d2, best_id, buffer32, q32, work):
    """The m live records nearest to q (not the first ``taken[t]`` of row t), ascending.

    ``screen`` is ``(Q32, norm2, center, axis, left_hi, right_lo)``
    (:func:`~core.methods.spatial_tree.screen_blocks`,
    :func:`~core.methods.spatial_tree.cell_splits`): the search descends through the cells
    and reads a leaf's box only when its cell is near enough (module notes); a row
    whose float32 distance is beyond the m-th best by more than its margin
    is passed over, the others are measured exactly (:func:`_distance2`). The whole
    tree is one part.
    """
    return _nearest_part(q, m, taken, first_leaf, start, head, end, members, P, screen,
                         lo, hi, cnt, stack, stack_d2, best_d2, best_id, buffer32, q32, work,
                         0, 0, 0, np.full(2, np.inf))


def _nearest_part(q, m, taken, first_leaf, start, head, end, members, P, screen, lo,
                  hi, cnt, stack, stack_d2, best_d2, best_id, buffer32, q32, work, part,
                  split_lo, split_hi, shared):
    """:func:`_nearest` over ``part``'s subtrees (:func:`_own`); the m-th best so far is
    published in ``shared[part]`` and the other part's, ``shared[1 − part]`` (∞ until it
    has m), prunes as well.

    Depth first, nearer child first. ``offsets`` holds the per-attribute offsets of the
    cell last searched, and ``shut`` the blocks its splits shut the query's category out
    of; the change each level made is logged (``axis_at``, ``was``, ``shut_at``). A node
    popped at ``level`` undoes the changes of that level and below (its parent's cell,
    at ``level − 1``, is on the path to the cell last searched, since every entry above
    it on the stack lies in its own subtree or a later sibling's) and makes its own:
    O(1) per node, where a copy of its parent's offsets was O(d).
    """
    Q32, norm2, center, axis, left_hi, right_lo = screen[:6]
    slot, fill, layout, value = screen[6], screen[8], screen[9], screen[10]
    block_of, whole = screen[11], screen[12]
    other = 1 - part
    size = 0
    if cnt[0] == 0:
        return 0
    d = q.shape[0]
    query = _leaf_query(q, center, layout, value, q32)
    nb, levels = layout.shape[0], stack.shape[0]  # two allocations for the search's state
    floats, ints = np.zeros(d + 2 * nb + levels), np.zeros(2 * nb + 2 * levels, np.int64)
    offsets, sums, gain, was = (floats[:d], floats[d:d + nb], floats[d + nb:d + 2 * nb],
                                floats[d + 2 * nb:])
    held, shut, axis_at, shut_at = (ints[:nb], ints[nb:2 * nb], ints[2 * nb:2 * nb + levels],
                                    ints[2 * nb + levels:])
    current = 0  # the level of the cell last searched
    blocks = _block_query(q, layout, value, whole, sums, gain, held)
    stack[0], stack_d2[0] = 0, 0.0
    depth = 1
    while depth:
        depth -= 1
        node, level = stack[depth] >> 6, stack[depth] & 63
        limit = atomics.load(shared, other)
        if size == m and best_d2[m - 1] < limit:
            limit = best_d2[m - 1]
        if _cell_pruned(stack_d2[depth], limit) or not _own(node, part, split_lo, split_hi):
            continue
        if level:
            while current >= level:  # back to the parent's cell
                offsets[axis_at[current]] = was[current]
                if shut_at[current] >= 0:
                    shut[shut_at[current]] = 0
                current -= 1
            parent = (node - 1) // 2
            j = axis[parent]
            axis_at[level], was[level], shut_at[level] = j, offsets[j], -1
            offsets[j] = _cell_child(parent, node, q, axis, left_hi, right_lo, offsets[j])
            c = block_of[j]
            if c >= 0 and offsets[j] > 0.0 and not shut[c]:
                shut[c], shut_at[level] = 1, c
            current = level
        if node < first_leaf:
            depth = _push_cells(node, level, q, axis, left_hi, right_lo, offsets, cnt, stack,
                                stack_d2, stack_d2[depth], depth, limit, block_of, gain, shut)
            continue
        if blocks:
            if _cell_pruned(_near_blocks(lo, hi, node, q, layout, value, whole, sums, held),
                            limit):
                continue
        elif _min_box2(lo, hi, node, q) > limit:
            continue
        s, leaf = start[node], node - first_leaf
        _prefetch_leaf(Q32, leaf)
        margin = _screen_leaf(Q32, norm2, leaf, fill[leaf], q32, layout, query, d, buffer32)
        work[0] += fill[leaf]
        for i in range(fill[leaf]):
            if buffer32[i] - margin > limit:
                continue
            t = slot[s + i]
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


def _far_box(node, q, reflected, lo, hi):
    """In one pass over the box: the squared distance to its corner farthest from q, and
    ``_min_box2(lo, hi, node, reflected)`` (the same sum in the same order)."""
    box, near = 0.0, 0.0
    for j in range(q.shape[0]):
        far2, near2 = _box_terms(lo, hi, node, j, q, reflected)
        box += far2
        near += near2
    return box, near


def _far_bound(node, q, reflected, spread, scale, lo, hi, cnt, top, blocks, screen, sums,
               sums_b, held):
    """Upper bound on |x − q|² over the live rows of ``node`` (−inf when it has none):
    the smaller of its box's farthest corner and the reflection bound, both from
    :func:`_far_box`, or with ``blocks`` from
    :func:`~core.methods.spatial_screen._far_blocks` (``sums``/``sums_b``: the block
    sums of q and of ``reflected``). The box's sum over the columns in order never falls
    below a row's own rounded distance; the blocks' is widened by the relative margin."""
    if cnt[node] == 0:
        return -np.inf
    if blocks:
        box, near = _far_blocks(node, q, reflected, screen[9], screen[10], screen[12], sums,
                                sums_b, held, lo, hi)
        box += _SLACK * box + 1e-300
    else:
        box, near = _far_box(node, q, reflected, lo, hi)
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


def _farthest_from(q, anchor, first_leaf, start, head, end, members, P, screen, lo,
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
    return _farthest_part(q, anchor, first_leaf, start, head, end, members, P, screen,
                          lo, hi, cnt, top, keys, nodes, buffer32, q32, work, 0, 0, 0,
                          np.full(2, -1.0))


def _farthest_part(q, anchor, first_leaf, start, head, end, members, P, screen, lo,
                   hi, cnt, top, keys, nodes, buffer32, q32, work, part, split_lo, split_hi,
                   shared):
    """:func:`_farthest_from` over ``part``'s subtrees (:func:`_own`); the best so far is
    published in ``shared[part]``, and the other part's prunes as well."""
    Q32, norm2, center, slot, fill = screen[0], screen[1], screen[2], screen[6], screen[8]
    layout, value = screen[9], screen[10]
    other = 1 - part
    query = _leaf_query(q, center, layout, value, q32)
    reflected = 2.0 * anchor - q
    spread = 2.0 * _vector_distance2(anchor, q)
    scale = _vector_distance2(reflected, np.zeros_like(q))
    nb = layout.shape[0]
    floats, ints = np.zeros(3 * nb), np.zeros(2 * nb, np.int64)
    sums, sums_b, gain, held, spare = (floats[:nb], floats[nb:2 * nb], floats[2 * nb:],
                                       ints[:nb], ints[nb:])
    _block_query(reflected, layout, value, screen[12], sums_b, gain, spare)
    blocks = _block_query(q, layout, value, screen[12], sums, gain, held)
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
            if a < first_leaf:
                _prefetch_nodes(2 * a + 1, 4, lo, hi, cnt, top)  # a's and b's children
            if not _own(a, part, split_lo, split_hi):
                a = b
            elif not _own(b, part, split_lo, split_hi):
                b = a
            da = _far_bound(a, q, reflected, spread, scale, lo, hi, cnt, top, blocks, screen,
                            sums, sums_b, held)
            db = _far_bound(b, q, reflected, spread, scale, lo, hi, cnt, top, blocks, screen,
                            sums, sums_b, held)
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
        s, leaf = start[node], node - first_leaf
        _prefetch_leaf(Q32, leaf)
        margin = _screen_leaf(Q32, norm2, leaf, fill[leaf], q32, layout, query, q.shape[0],
                              buffer32)
        work[1] += fill[leaf]
        for i in range(fill[leaf]):
            t = slot[s + i]
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


# The searches allocate; the helpers neither allocate, return nor keep an array
# (core.compiled's notes).
_ALLOCATING = frozenset({"_nearest_part", "_nearest", "_farthest_part", "_farthest_from"})
for _name in ("_own", "_prefetch_nodes", "_vacate", "_cell_child", "_cell_pruned",
              "_push_cells", "_far_box",
              "_nearest_part", "_nearest", "_far_bound", "_heap_push", "_heap_pop",
              "_farthest_part", "_farthest_from"):
    _compiled = kernel(globals()[_name],  # in dependency order, as in spatial_index
                       refcounts=_name in _ALLOCATING)
    if _compiled is not None:
        globals()[_name] = _compiled
