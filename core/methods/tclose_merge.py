"""Algorithm 1's merging loop, compiled (t-closeness through microaggregation).

Soria-Comas et al., "t-Closeness through Microaggregation" (TKDE 2015), Algorithm 1:
while some cluster's EMD exceeds t, merge the cluster with the largest EMD into the
cluster whose quasi-identifier centroid is nearest to its own. :func:`merge_until_close`
gives the same merges and the same partition as the numpy reference
:func:`core.methods.tcloseness._merge_until_close`:

* the worst cluster comes from a max-tree over the cluster EMDs (O(log G) per merge;
  ties go to the first cluster, as ``np.argmax`` does);
* the merged cluster's EMD is the same float as the reference's
  (:func:`core.methods.tclose_emd.run_emd`), read from sorted runs: every live cluster
  keeps its confidential codes sorted, attribute by attribute, and a merge writes the
  merge of its two runs after the others (O(|C|), no gather, no sort); each step's
  crossing comes from the inverse of the table's cumulative counts in O(1). The runs
  have room for ``_RUN_ROOM`` times the records; when it is used up the live runs
  (always n codes per attribute) move to the front. At 100,000 records, t = 0.1, the
  merged clusters hold 8.4 million records in all; gathering and sorting them was
  about half of the merging, which fell from 1.0 s to 0.48 s with the runs;
* the nearest centroid comes from :mod:`core.methods.centroid_index`: a float32 screen
  of the live centroids, in one leaf or, from ``TREE_FROM`` clusters, in a k-d tree
  whose boxes widen as centroids move and which is built again when half of its
  clusters are gone. It returns the clusters a full float64 pass counts as tied;
* the reference sums with numpy's ``einsum``, whose order (and so last bit) differs;
  a sum of d non-negative terms in any order is within ``(d−1)·eps`` of the true
  value, so every centroid within a relative ``8·(d+1)·eps`` of the compiled minimum is
  a possible answer. When there is more than one, the loop returns to Python, which
  measures those few with ``einsum`` exactly as the reference and picks the first
  smallest.

Memory O(n·a + G·d) for a confidential attributes; the loop returns to Python every
``budget`` merges so progress is reported and cancellation honoured.
"""

from __future__ import annotations

import time

import numpy as np

from core.compiled import COMPILED, kernel
from core.methods import centroid_index as _centroid_index
from core.methods.tclose_emd import inverse_cumulative, pack_attributes
from core.methods.tclose_emd import run_emd as _run_emd
from core.privacy.attributes import class_emds
from core.privacy.emd import EMD_TOLERANCE
from core.progress import TaskState

__all__ = ["merge_until_close"]

_SECONDS_PER_CALL = 0.1
_STEPS = 64
_RUN_ROOM = 4  # room for the sorted runs, in records (module notes)


def _tree_update(tree, leaves, emd, alive, g):
    """Max-tree over the live EMDs: ``tree[node]`` is the first cluster with the largest."""
    node = (leaves + g) >> 1
    while node >= 1:
        left = tree[2 * node]
        right = tree[2 * node + 1]
        if left < 0:
            best = right
        elif right < 0:
            best = left
        else:
            value_left = emd[left] if alive[left] else -np.inf
            value_right = emd[right] if alive[right] else -np.inf
            best = right if value_right > value_left else left
        tree[node] = best
        node >>= 1


def _merge_runs(runs, begin, sizes, alive, used, keep, gone):
    """Write the merge of the sorted runs of ``keep`` and ``gone`` at ``used[0]`` and
    make it ``keep``'s (``sizes`` not yet added). When the space left is too small, the
    live runs are first moved to the front, in the order they lie."""
    size = sizes[keep] + sizes[gone]
    if used[0] + size > runs.shape[1]:
        live = np.flatnonzero(alive)
        at = 0
        for g in live[np.argsort(begin[live])]:
            if begin[g] != at:  # never behind its place: a forward copy is safe
                for a in range(runs.shape[0]):
                    for i in range(sizes[g]):
                        runs[a, at + i] = runs[a, begin[g] + i]
                begin[g] = at
            at += sizes[g]
        used[0] = at
    out = used[0]
    for a in range(runs.shape[0]):
        x, x_end = begin[keep], begin[keep] + sizes[keep]
        y, y_end = begin[gone], begin[gone] + sizes[gone]
        row = runs[a]
        for i in range(out, out + size):
            if y == y_end or (x < x_end and row[x] <= row[y]):
                row[i] = row[x]
                x += 1
            else:
                row[i] = row[y]
                y += 1
    begin[keep] = out
    used[0] = out + size


def _sorted_runs(codes, labels, sizes):
    """Every cluster's codes, sorted, attribute by attribute: ``runs[a, begin[g]:begin[g]
    + sizes[g]]``, with room for ``_RUN_ROOM`` times the records (merged runs are
    written after the live ones; :func:`_merge_runs`)."""
    n = len(labels)
    runs = np.empty((codes.shape[0], _RUN_ROOM * n), dtype=np.int64)
    for a in range(codes.shape[0]):
        runs[a, :n] = codes[a][np.lexsort((codes[a], labels))]
    begin = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    return runs, begin, np.array([n], dtype=np.int64)


def _merge_steps(head, tail, following, sizes, sums, counts, index, center, spread, emd,
                 alive, tree, leaves, runs, begin, used, kinds, ms, inverse, P, table_counts,
                 n, limit, budget, forced, live, built, scratch, candidates, marked, result):
    """Up to ``budget`` merges of Algorithm 1.

    The live clusters' centroids are in ``index`` (:mod:`core.methods.centroid_index`,
    built on ``built`` clusters when it is a tree, else ``built`` is 0), less ``center``
    in its float32 screen; ``spread`` holds the largest |c − center|² so far.
    Each live cluster's confidential codes are the sorted runs
    ``runs[a, begin[g]:begin[g] + sizes[g]]``; a merged cluster's runs are the two
    merged, written at ``used[0]`` (:func:`_merge_runs`).
    ``result`` receives (status, merges made, worst cluster, candidates): status 0 when
    every cluster is within ``limit`` or one is left, 1 when the budget is spent, 2 when
    the nearest centroid to ``worst`` is one of ``candidates[:count]`` (ascending) and
    needs the reference's sum to decide (call again with ``forced`` set to the answer),
    3 when half of the clusters the tree was built on are gone (build it again).
    """
    T, S, ident, place, leaf_of, start, fill, first_leaf, lo, hi, cnt = index
    point = scratch[2]
    d = sums.shape[1]
    merges = 0
    result[0] = 0
    while merges < budget:
        if live <= 1:
            result[0] = 0
            break
        if 2 * live <= built:
            result[0] = 3
            break
        worst = tree[1]
        if emd[worst] <= limit:
            result[0] = 0
            break
        if forced >= 0:
            nearest = forced
            forced = -1
        else:
            count = _centroid_index.near_ties(worst, T, S, ident, place, start, fill,
                                              first_leaf, lo, hi, cnt, center, spread,
                                              scratch, candidates)
            nearest = candidates[0]
            if count > 1:  # in ascending cluster numbers, as the reference's
                if count <= 32:
                    candidates[:count].sort()
                else:  # many ties (a few distinct rows): one pass, not a sort
                    for c in range(count):
                        marked[candidates[c]] = True
                    count = 0
                    for g in range(marked.shape[0]):
                        if marked[g]:
                            marked[g] = False
                            candidates[count] = g
                            count += 1
                result[0] = 2
                result[2] = worst
                result[3] = count
                break
        keep = min(worst, nearest)
        gone = max(worst, nearest)
        following[tail[keep]] = head[gone]
        tail[keep] = tail[gone]
        _merge_runs(runs, begin, sizes, alive, used, keep, gone)
        sizes[keep] += sizes[gone]
        for j in range(d):
            sums[keep, j] += sums[gone, j]
        counts[keep] += counts[gone]
        alive[gone] = False
        live -= 1
        counts[gone] = 1.0
        _centroid_index.remove(gone, T, S, ident, place, leaf_of, start, fill, first_leaf,
                               cnt)
        for j in range(d):
            point[j] = sums[keep, j] / counts[keep]
        _centroid_index.move(keep, point, center, T, S, place, leaf_of, lo, hi, spread)
        emd[keep] = _run_emd(runs, begin[keep], sizes[keep], kinds, ms, inverse, P,
                             table_counts, n)
        _tree_update(tree, leaves, emd, alive, gone)
        _tree_update(tree, leaves, emd, alive, keep)
        merges += 1
        result[0] = 1
    result[1] = merges


if COMPILED:  # helpers compiled before the kernels that call them
    _merge_runs = kernel(_merge_runs)
_tree_update = kernel(_tree_update)
merge_steps = kernel(_merge_steps)


def merge_until_close(X, attributes, labels, t, state: TaskState, compact):
    """Algorithm 1's loop, compiled; the same result as the reference.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
    attributes : sequence of TCloseAttribute
    labels : ndarray of shape (n_records,), int
    t : float
    state : TaskState
    compact : callable
        The reference's relabelling (clusters numbered by their first record).

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
    merges : int
    """
    labels = compact(labels)
    n = len(labels)
    groups = int(labels.max()) + 1
    packed = pack_attributes(attributes)
    emd = np.max([class_emds(a, labels) for a in attributes], axis=0)
    sums = np.stack([np.bincount(labels, weights=X[:, j], minlength=groups)
                     for j in range(X.shape[1])], axis=1)
    sizes = np.bincount(labels, minlength=groups).astype(np.int64)
    counts = sizes.astype(np.float64)
    centroids = sums / counts[:, None]
    center = centroids.mean(axis=0)
    spread = np.array([float(np.einsum("ij,ij->i", centroids - center,
                                       centroids - center).max())])
    alive = np.ones(groups, dtype=np.bool_)
    by_label = np.argsort(labels, kind="stable")
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    head = by_label[starts].astype(np.int64)
    tail = by_label[starts + sizes - 1].astype(np.int64)
    following = np.full(n, -1, dtype=np.int64)
    same = labels[by_label[1:]] == labels[by_label[:-1]]
    following[by_label[:-1][same]] = by_label[1:][same]
    leaves = 1
    while leaves < groups:
        leaves *= 2
    tree = np.full(2 * leaves, -1, dtype=np.int64)
    tree[leaves:leaves + groups] = np.arange(groups)
    for node in range(leaves - 1, 0, -1):  # first largest EMD, as np.argmax
        left, right = tree[2 * node], tree[2 * node + 1]
        tree[node] = left if right < 0 or (left >= 0 and emd[right] <= emd[left]) else right
    runs, begin, used = _sorted_runs(packed.codes, labels, sizes)
    inverse = inverse_cumulative(packed)
    candidates = np.empty(groups, dtype=np.int64)
    marked = np.zeros(groups, dtype=np.bool_)
    result = np.zeros(4, dtype=np.int64)
    limit = float(t) + EMD_TOLERANCE
    # Progress in at least _STEPS steps however fast the merges are, and a return to
    # Python every _SECONDS_PER_CALL at most however slow.
    most = max(1, groups // _STEPS)
    merges, forced, budget = 0, -1, 1
    index, previous, built = None, None, 0
    while True:
        if index is None:  # at the start, and when half of the tree's clusters are gone
            live = np.flatnonzero(alive)
            # a new index takes the centroids the previous one holds (the same floats)
            points = centroids[live] if previous is None else previous[0][:, previous[3][live]].T
            index, previous = _centroid_index.build(points, live, groups, center), None
            built = len(live) if index[7] > 0 else 0
            scratch = _centroid_index.scratch_for(index, groups)
        started = time.perf_counter()
        merge_steps(head, tail, following, sizes, sums, counts, index, center, spread, emd,
                    alive, tree, leaves, runs, begin, used, packed.kinds, packed.ms, inverse,
                    packed.prefix, packed.counts, packed.n, limit, budget, forced,
                    groups - merges, built, scratch, candidates, marked, result)
        forced = -1
        merges += int(result[1])
        elapsed = time.perf_counter() - started
        if result[1] and elapsed < _SECONDS_PER_CALL / 2:
            budget = min(budget * 2, most)
        elif elapsed > _SECONDS_PER_CALL:
            budget = max(1, budget // 2)
        state.step(merges / max(1, groups - 1), f"t-closeness: {merges} clusters merged")
        if result[0] == 0:
            break
        if result[0] == 3:
            index, previous = None, index
        if result[0] == 2:
            worst, found = int(result[2]), candidates[:int(result[3])]
            # The reference's own arithmetic on the few tied centroids.
            near = sums[found] / counts[found, None]
            diff = near - sums[worst] / counts[worst]
            forced = int(found[np.argmin(np.einsum("ij,ij->i", diff, diff))])
    out = np.empty(n, dtype=np.int64)
    for group in np.flatnonzero(alive):
        record = head[group]
        members = np.empty(sizes[group], dtype=np.int64)
        for i in range(sizes[group]):
            members[i] = record
            record = following[record]
        out[members] = group
    return compact(out), merges
