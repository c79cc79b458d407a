"""The live cluster centroids of Algorithm 1's merging, and the search for the nearest.

Soria-Comas et al., "t-Closeness through Microaggregation" (TKDE 2015), Algorithm 1
merges the cluster of largest EMD into the cluster whose centroid is nearest to its
own, again and again: at 100,000 × 10, t = 0.1, MDAV's 20,000 clusters are merged
19,125 times; at 1,000,000, 195,303 times. Each merge asks for the live centroids tied
for nearest to one of them (:func:`near_ties`), then takes one centroid out
(:func:`remove`) and moves another (:func:`move`).

Layout
    The centroids sit in places, attribute by attribute: ``T[j, p]`` in float64 and,
    less their mean ``center``, ``S[j, p]`` in float32 (the screen). The places are
    split into leaves (a leaf's live points are its first ``fill[leaf]`` places, the
    last live point taking the place of one removed); ``ident[p]`` is the cluster in
    place p, ``place[g]`` and ``leaf_of[g]`` the place and leaf node of cluster g.
One leaf (fewer than ``TREE_FROM`` clusters)
    A full pass over the screen, in float32 (half the bytes and twice the vector width
    of float64), with the smallest of each block of ``LANES`` places; only the places
    whose float32 distance, widened by its rounding bound, is within reach of the
    smallest get their exact distance. At 100,000 records the merging's searches fell
    from about 0.86 s (float64, every place) to about 0.2 s.
k-d tree (from ``TREE_FROM`` clusters)
    The places are the leaves of a k-d tree (:func:`core.methods.spatial_index.build_tree`,
    leaves of ``LEAF_SIZE / 2`` to ``LEAF_SIZE``), each node with a box of its points
    and their number. A search goes depth first, nearer child first, past every node
    whose box is farther than the best so far allows, screening each leaf in float32.
    A moved centroid lies between the two it merges, so its leaf stays and the boxes
    above it widen to hold it; boxes are never narrowed, and the caller builds the
    index again when half of the clusters it was built on are gone (:func:`build`). At
    200,000 centroids a search took 240 µs against 735 µs for the full pass; at
    20,000 the two are even, so the tree serves only large files.

Exactness. :func:`near_ties` returns every live cluster (but the asking one) whose
squared distance, summed attribute by attribute in order, is within a relative
``8·(d+1)·eps`` of the smallest (plus 1e-300): the set a full float64 pass gives. The
float32 distance of a point is within ``margin`` of its exact one
(:func:`core.methods.spatial_search._screen_margin`, MDAV's screen; ``spread`` bounds
every |c − center|²), so a point is passed over only when its float32 distance less the
margin exceeds the bound of the best so far, which never falls below the final bound.
A node is passed over only when its box distance exceeds that bound; the rounded box
distance never exceeds the rounded distance of a point in the box, since each term is
monotone in the coordinate.
"""

from __future__ import annotations

import numpy as np

from core.compiled import COMPILED, kernel
from core.methods.spatial_index import build_tree
from core.methods.spatial_search import _screen_margin, _screen_query

__all__ = ["LEAF_SIZE", "TREE_FROM", "LANES", "build", "scratch_for", "remove", "move",
           "near_ties"]

LEAF_SIZE = 16
TREE_FROM = 32_768
LANES = 16


def build(points: np.ndarray, ids: np.ndarray, groups: int, center: np.ndarray):
    """The index over ``points`` (one row per live cluster; ``ids`` among
    ``0..groups−1``): a k-d tree from ``TREE_FROM`` points, one leaf below.

    Returns ``(T, S, ident, place, leaf_of, start, fill, first_leaf, lo, hi, cnt)``
    (module notes); ``start``/``fill`` per leaf, ``lo``/``hi``/``cnt`` per node.
    """
    points = np.ascontiguousarray(points, dtype=np.float64)
    live, d = points.shape
    leaf_size = LEAF_SIZE if live >= TREE_FROM else max(live, 1)
    perm, start, stop, levels = build_tree(points, leaf_size)
    first_leaf = (1 << levels) - 1
    ordered = points[perm]
    places = -(-live // LANES) * LANES
    T = np.zeros((d, places))
    T[:, :live] = ordered.T
    S = np.full((d, places), np.inf, dtype=np.float32)  # an empty place is never near
    S[:, :live] = (ordered - center).T
    ident = np.full(places, -1, dtype=np.int64)
    ident[:live] = np.asarray(ids, dtype=np.int64)[perm]
    place = np.full(groups, -1, dtype=np.int64)
    place[ident[:live]] = np.arange(live)
    leaf_start, leaf_stop = start[first_leaf:], stop[first_leaf:]
    fill = (leaf_stop - leaf_start).astype(np.int64)
    leaf_of = np.full(groups, -1, dtype=np.int64)
    leaf_of[ident[:live]] = first_leaf + np.repeat(np.arange(len(fill)), fill)
    nodes = len(start)
    lo = np.empty((nodes, d))
    hi = np.empty((nodes, d))
    cnt = np.zeros(nodes, dtype=np.int64)
    lo[first_leaf:] = np.minimum.reduceat(ordered, leaf_start, axis=0)
    hi[first_leaf:] = np.maximum.reduceat(ordered, leaf_start, axis=0)
    cnt[first_leaf:] = fill
    for level in range(levels - 1, -1, -1):
        node = np.arange((1 << level) - 1, (1 << (level + 1)) - 1)
        lo[node] = np.minimum(lo[2 * node + 1], lo[2 * node + 2])
        hi[node] = np.maximum(hi[2 * node + 1], hi[2 * node + 2])
        cnt[node] = cnt[2 * node + 1] + cnt[2 * node + 2]
    return (T, S, ident, place, leaf_of, leaf_start.copy(), fill, first_leaf, lo, hi, cnt)


def scratch_for(index, groups: int):
    """Work arrays of :func:`near_ties` for ``index``:
    ``(stack, stack_d2, q, q32, d32, block_min, ties_d2)``."""
    T, first_leaf = index[0], index[7]
    d, places = T.shape
    depth = 2 * int(first_leaf).bit_length() + 8  # a node per level, and more
    return (np.zeros(depth, dtype=np.int64), np.zeros(depth), np.zeros(d),
            np.zeros(d, dtype=np.float32), np.zeros(places, dtype=np.float32),
            np.zeros(places // LANES, dtype=np.float32), np.zeros(groups))


def _remove(cluster, T, S, ident, place, leaf_of, start, fill, first_leaf, cnt):
    """Take ``cluster`` out; the last live point of its leaf takes its place."""
    node = leaf_of[cluster]
    leaf = node - first_leaf
    at = place[cluster]
    last = start[leaf] + fill[leaf] - 1
    moved = ident[last]
    for j in range(T.shape[0]):
        T[j, at] = T[j, last]
        S[j, at] = S[j, last]
        S[j, last] = np.float32(np.inf)
    ident[at] = moved
    ident[last] = -1
    place[moved] = at
    place[cluster] = -1
    leaf_of[cluster] = -1
    fill[leaf] -= 1
    while True:
        cnt[node] -= 1
        if node == 0:
            break
        node = (node - 1) >> 1


def _move(cluster, point, center, T, S, place, leaf_of, lo, hi, spread):
    """Give ``cluster`` the centroid ``point``; widen the boxes above it to hold it and
    ``spread[0]`` to bound its |point − center|²."""
    at = place[cluster]
    norm2 = 0.0
    for j in range(T.shape[0]):
        T[j, at] = point[j]
        offset = point[j] - center[j]
        S[j, at] = np.float32(offset)
        norm2 += offset * offset
    spread[0] = max(spread[0], norm2)
    node = leaf_of[cluster]
    while True:
        inside = True
        for j in range(T.shape[0]):
            if point[j] < lo[node, j]:
                lo[node, j] = point[j]
                inside = False
            if point[j] > hi[node, j]:
                hi[node, j] = point[j]
                inside = False
        if inside or node == 0:  # a box that held the point: so do those above it
            break
        node = (node - 1) >> 1


def _box2(lo, hi, node, q):
    acc = 0.0
    for j in range(q.shape[0]):
        diff = max(lo[node, j] - q[j], q[j] - hi[node, j], 0.0)
        acc += diff * diff
    return acc


def _exact2(T, p, q):
    acc = 0.0
    for j in range(T.shape[0]):
        diff = T[j, p] - q[j]
        acc += diff * diff
    return acc


def _screen(S, begin, count, q32, d32):
    """Float32 squared distances of places ``begin .. begin+count−1`` into ``d32``."""
    for i in range(count):
        d32[i] = np.float32(0.0)
    for j in range(S.shape[0]):  # attribute by attribute: the inner loop vectorizes
        qj = q32[j]
        for i in range(count):
            diff = S[j, begin + i] - qj
            d32[i] += diff * diff


def _flat_ties(here, count, T, S, ident, q, q32, margin, factor, d32, block_min, ties_d2,
               ties):
    """:func:`near_ties` over one leaf of ``count`` places: the float32 pass, the
    smallest per block of ``LANES``, exact distances within reach of the smallest."""
    blocks = (count + LANES - 1) // LANES
    saved = S[0, here]
    S[0, here] = np.float32(np.inf)  # the asking cluster is never its own nearest
    _screen(S, 0, blocks * LANES, q32, d32)  # (places beyond the live ones: inf)
    S[0, here] = saved
    for b in range(blocks):
        smallest = d32[b * LANES]
        for lane in range(1, LANES):
            value = d32[b * LANES + lane]
            smallest = value if value < smallest else smallest
        block_min[b] = smallest
    least = np.inf
    for b in range(blocks):
        least = min(least, float(block_min[b]))
    # The exact smallest is at most least + margin; a tie is within factor of it, and
    # its float32 distance within margin of its own.
    limit = (least + 2.0 * margin) * factor + 1e-300
    size = 0
    best = np.inf
    for b in range(blocks):
        if block_min[b] > limit:
            continue
        for i in range(b * LANES, min(count, (b + 1) * LANES)):
            if d32[i] <= limit and i != here:  # (an infinite margin lets every place in)
                value = _exact2(T, i, q)
                ties_d2[size] = value
                ties[size] = ident[i]
                size += 1
                best = min(best, value)
    return size, best


def _tree_ties(asking, T, S, ident, start, fill, first_leaf, lo, hi, cnt, q, q32, margin,
               factor, stack, stack_d2, d32, ties_d2, ties):
    """:func:`near_ties` through the k-d tree (module notes)."""
    best = np.inf
    size = 0
    stack[0], stack_d2[0] = 0, _box2(lo, hi, 0, q)
    depth = 1
    while depth:
        depth -= 1
        node, d2 = stack[depth], stack_d2[depth]
        if d2 > best * factor + 1e-300:
            continue
        if node >= first_leaf:
            begin, count = start[node - first_leaf], fill[node - first_leaf]
            _screen(S, begin, count, q32, d32)
            for i in range(count):
                if d32[i] - margin > best * factor + 1e-300:
                    continue
                cluster = ident[begin + i]
                if cluster == asking:
                    continue
                value = _exact2(T, begin + i, q)
                best = min(best, value)
                if value <= best * factor + 1e-300:
                    ties_d2[size] = value
                    ties[size] = cluster
                    size += 1
            continue
        a, b = 2 * node + 1, 2 * node + 2
        da = _box2(lo, hi, a, q) if cnt[a] else np.inf
        db = _box2(lo, hi, b, q) if cnt[b] else np.inf
        if da > db:
            a, b, da, db = b, a, db, da
        if cnt[b]:
            stack[depth], stack_d2[depth] = b, db
            depth += 1
        if cnt[a]:
            stack[depth], stack_d2[depth] = a, da
            depth += 1
    return size, best


def _near_ties(asking, T, S, ident, place, start, fill, first_leaf, lo, hi, cnt, center,
               spread, scratch, ties):
    """The live clusters but ``asking`` tied for nearest to its centroid, into ``ties``
    (cluster numbers, in no order); returns how many (module notes)."""
    stack, stack_d2, q, q32, d32, block_min, ties_d2 = scratch
    d = T.shape[0]
    factor = 1.0 + 8.0 * (d + 1) * 2.220446049250313e-16
    here = place[asking]
    for j in range(d):
        q[j] = T[j, here]
    margin = _screen_margin(spread[0], _screen_query(q, center, q32), d)
    if first_leaf == 0:
        size, best = _flat_ties(here, fill[0], T, S, ident, q, q32, margin, factor, d32,
                                block_min, ties_d2, ties)
    else:
        size, best = _tree_ties(asking, T, S, ident, start, fill, first_leaf, lo, hi, cnt,
                                q, q32, margin, factor, stack, stack_d2, d32, ties_d2, ties)
    bound = best * factor + 1e-300
    kept = 0
    for c in range(size):
        if ties_d2[c] <= bound:
            ties[kept] = ties[c]
            kept += 1
    return kept


if COMPILED:  # helpers compiled before the kernels that call them
    _box2 = kernel(_box2)
    _exact2 = kernel(_exact2)
    _screen = kernel(_screen)
    _flat_ties = kernel(_flat_ties)
    _tree_ties = kernel(_tree_ties)
remove = kernel(_remove)
move = kernel(_move)
near_ties = kernel(_near_ties)
