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
* the nearest centroid is searched over the live clusters only (kept together,
  attribute by attribute, as clusters merge away), first in float32: the centroids less
  their mean are also kept in float32 (the screen), and a full pass measures them in
  float32, half the bytes and twice the vector width of float64, then takes the
  smallest of each block of ``_LANES``. Only the centroids whose float32 distance,
  widened by its rounding bound (:func:`core.methods.spatial_screen._screen_margin`,
  MDAV's screen), is within reach of the smallest get the exact distance, a sequential
  sum of squares in float64. At 100,000 records, t = 0.1 (19,125 merges) the search
  fell from about 0.86 s to about 0.2 s. With many clusters the float32 pass is shared
  with a helper thread (:mod:`core.methods.tclose_screen`), the same answer. A k-d
  tree over the centroids was tried, and dropped: in float64 at 100,000 records it
  gave nothing (in ten dimensions it read a third of the centroids per search);
  screened in float32, with moved centroids put back into the leaf their point falls
  in, it answered random questions three times faster than the full pass at 200,000
  centroids, but Algorithm 1's questions come from the worst clusters, and the merging
  of 1,000,000 records took 67 s with it against 54 s without (same labels).
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
from core.methods.tclose_emd import inverse_cumulative, pack_attributes
from core.methods.tclose_emd import run_emd as _run_emd
from core.methods.spatial_screen import _screen_margin, _screen_query
from core.methods.task_helper import FIRST, ON, TaskHelper
from core.methods.tclose_screen import LANES, new_share, screen_all, screen_range, serve
from core.privacy.attributes import class_emds
from core.privacy.emd import EMD_TOLERANCE
from core.progress import TaskState
from core.threads import second_thread_allowed

__all__ = ["merge_until_close"]

_SECONDS_PER_CALL = 0.1
_STEPS = 64
_LANES = LANES  # centroids screened together (module notes)
_TWO_THREADS_FROM = 16_384  # clusters: fewer merge too fast for a helper to pay
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


def _nearest_ties(here, live, centroids, screen, center, spread, q, q32, share, ties_d2,
                  ties):
    """The live centroids but ``here`` tied for nearest to ``centroids[:, here]``.

    Every place i whose squared distance (summed attribute by attribute in order) is
    within a relative ``8·(d+1)·eps`` of the smallest (plus 1e-300) goes into ``ties``
    (as a place); returns how many. The float32 screen (module notes; on two threads
    when ``share`` says so, :mod:`core.methods.tclose_screen`) rules the others out;
    ``spread`` bounds |c − center|² of every centroid.
    """
    d = centroids.shape[0]
    factor = 1.0 + 8.0 * (d + 1) * 2.220446049250313e-16
    for j in range(d):
        q[j] = centroids[j, here]
    query_norm2 = _screen_query(q, center, q32)
    margin = _screen_margin(spread, query_norm2, d)
    saved = screen[0, here]
    screen[0, here] = np.float32(np.inf)  # here is never its own nearest
    blocks = (live + _LANES - 1) // _LANES
    if share[0][ON] and blocks >= share[0][FIRST]:  # (a shorter pass stays on one thread)
        d32, block_min = screen_all(blocks, screen, q32, share)
    else:
        d32, block_min = share[6], share[7]
        screen_range(screen, 0, blocks, q32, d32, block_min)
    screen[0, here] = saved
    least = np.inf
    for b in range(blocks):
        least = min(least, float(block_min[b]))
    # The exact smallest is at most least + margin; a tie is within factor of it, and
    # its float32 distance within margin of its own.
    limit = (least + 2.0 * margin) * factor + 1e-300
    count = 0
    best = np.inf
    for b in range(blocks):
        if block_min[b] > limit:
            continue
        for i in range(b * _LANES, min(live, (b + 1) * _LANES)):
            if d32[i] <= limit and i != here:  # (an infinite margin lets every place in)
                value = 0.0
                for j in range(d):
                    diff = centroids[j, i] - q[j]
                    value += diff * diff
                ties_d2[count] = value
                ties[count] = i
                count += 1
                best = min(best, value)
    bound = best * factor + 1e-300
    kept = 0
    for c in range(count):
        if ties_d2[c] <= bound:
            ties[kept] = ties[c]
            kept += 1
    return kept


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


def _merge_steps(head, tail, following, sizes, sums, counts, centroids, screen, order, slot,
                 center, spread, emd, alive, tree, leaves, runs, begin, used, kinds, ms,
                 inverse, P, table_counts, n, limit, budget, forced, live, scratch, share,
                 candidates, marked, result):
    """Up to ``budget`` merges of Algorithm 1.

    The ``live`` clusters left are ``order[:live]`` (``slot`` is the inverse), with their
    centroids in that order in ``centroids[j, :live]`` (attribute j) and, as float32
    less ``center``, in ``screen``: a merge moves the last into the place of the
    cluster merged away. ``spread`` holds the largest |c − center|² so far.
    Each live cluster's confidential codes are the sorted runs
    ``runs[a, begin[g]:begin[g] + sizes[g]]``; a merged cluster's runs are the two
    merged, written at ``used[0]`` (:func:`_merge_runs`).
    ``result`` receives (status, merges made, worst cluster, candidates): status 0 when
    every cluster is within ``limit`` or one is left, 1 when the budget is spent, 2 when
    the nearest centroid to ``worst`` is one of ``candidates[:count]`` (ascending) and
    needs the reference's sum to decide (call again with ``forced`` set to the answer).
    """
    q, q32, ties_d2 = scratch
    d = sums.shape[1]
    merges = 0
    result[0] = 0
    while merges < budget:
        if live <= 1:
            result[0] = 0
            break
        worst = tree[1]
        if emd[worst] <= limit:
            result[0] = 0
            break
        if forced >= 0:
            nearest = forced
            forced = -1
        else:
            count = _nearest_ties(slot[worst], live, centroids, screen, center, spread[0], q,
                                  q32, share, ties_d2, candidates)
            for c in range(count):
                candidates[c] = order[candidates[c]]
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
        moved, at = order[live], slot[gone]  # the last live cluster fills gone's place
        order[at], slot[moved] = moved, at
        for j in range(d):
            centroids[j, at] = centroids[j, live]
            screen[j, at] = screen[j, live]
            screen[j, live] = np.float32(np.inf)  # a vacated place is never near
        at = slot[keep]
        norm2 = 0.0
        for j in range(d):
            value = sums[keep, j] / counts[keep]
            centroids[j, at] = value
            offset = value - center[j]
            screen[j, at] = np.float32(offset)
            norm2 += offset * offset
        spread[0] = max(spread[0], norm2)
        emd[keep] = _run_emd(runs, begin[keep], sizes[keep], kinds, ms, inverse, P,
                             table_counts, n)
        _tree_update(tree, leaves, emd, alive, gone)
        _tree_update(tree, leaves, emd, alive, keep)
        merges += 1
        result[0] = 1
    result[1] = merges


if COMPILED:  # helpers compiled before the kernels that call them
    _nearest_ties = kernel(_nearest_ties)
    _merge_runs = kernel(_merge_runs)
_tree_update = kernel(_tree_update)
merge_steps = kernel(_merge_steps)


def _two_threads(groups: int) -> bool:
    """Whether a merging run gets a helper: a second thread allowed, and clusters enough
    that sharing their screen pays."""
    return groups >= _TWO_THREADS_FROM and second_thread_allowed()


def _helper(share, screen, q32, groups):
    """A helper thread for the screen (:mod:`core.methods.tclose_screen`), or None."""
    if not _two_threads(groups):
        return None
    ctrl, bounds, status, _, d32, block_min, _, _ = share
    return TaskHelper(ctrl, serve, (ctrl, screen, q32, bounds, d32, block_min, status),
                      name="microagg-merge-helper")


def merge_until_close(X, attributes, labels, t, state: TaskState, compact, emd=None):
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
    emd : ndarray of shape (n_clusters,), optional
        Each cluster's largest EMD when the caller has it (of the clusters as
        ``compact`` numbers them; changed in place).

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
    merges : int
    """
    labels = compact(labels)
    n = len(labels)
    groups = int(labels.max()) + 1
    packed = pack_attributes(attributes)
    if emd is None:
        emd = np.max([class_emds(a, labels) for a in attributes], axis=0)
    sums = np.stack([np.bincount(labels, weights=X[:, j], minlength=groups)
                     for j in range(X.shape[1])], axis=1)
    sizes = np.bincount(labels, minlength=groups).astype(np.int64)
    counts = sizes.astype(np.float64)
    centroids = np.ascontiguousarray((sums / counts[:, None]).T)  # attribute by attribute
    places = -(-groups // _LANES) * _LANES
    center = centroids.mean(axis=1)
    offsets = centroids - center[:, None]
    screen = np.full((X.shape[1], places), np.inf, dtype=np.float32)
    screen[:, :groups] = offsets
    spread = np.array([float(np.einsum("ji,ji->i", offsets, offsets).max())])
    scratch = (np.empty(X.shape[1]), np.empty(X.shape[1], dtype=np.float32), np.empty(groups))
    share = new_share(places)
    alive = np.ones(groups, dtype=np.bool_)
    by_label = np.argsort(labels, kind="stable")
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    head = by_label[starts].astype(np.int64)
    tail = by_label[starts + sizes - 1].astype(np.int64)
    following = np.full(n, -1, dtype=np.int64)
    same = labels[by_label[1:]] == labels[by_label[:-1]]
    following[by_label[:-1][same]] = by_label[1:][same]
    order, slot = np.arange(groups), np.arange(groups)  # live clusters, in centroids' order
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
    runner = _helper(share, screen, scratch[1], groups)
    shared_from = share[0][FIRST] * _LANES  # live clusters below which nothing is shared
    try:
        while True:
            started = time.perf_counter()
            two = runner is not None and groups - merges >= shared_from
            if two:
                runner.begin()
            try:
                merge_steps(head, tail, following, sizes, sums, counts, centroids, screen,
                            order, slot, center, spread, emd, alive, tree, leaves, runs,
                            begin, used, packed.kinds, packed.ms, inverse, packed.prefix,
                            packed.counts, packed.n, limit, budget, forced, groups - merges,
                            scratch, share, candidates, marked, result)
            finally:
                if two:
                    runner.end(time.perf_counter() - started, int(result[1]))
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
            if result[0] == 2:
                worst, found = int(result[2]), candidates[:int(result[3])]
                # The reference's own arithmetic on the few tied centroids.
                near = sums[found] / counts[found, None]
                diff = near - sums[worst] / counts[worst]
                forced = int(found[np.argmin(np.einsum("ij,ij->i", diff, diff))])
    finally:
        if runner is not None:
            runner.close()
    out = np.empty(n, dtype=np.int64)
    for group in np.flatnonzero(alive):
        record = head[group]
        members = np.empty(sizes[group], dtype=np.int64)
        for i in range(sizes[group]):
            members[i] = record
            record = following[record]
        out[members] = group
    return compact(out), merges
