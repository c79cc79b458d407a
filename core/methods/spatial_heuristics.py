"""MDAV, CBFS and TFRP (NN or NC growth) on the compiled spatial index.

The same algorithms as :func:`core.methods.heuristics.fixed_size` (see that module for
the choices and tie rules), asking :mod:`core.methods.spatial_index` instead of a full
pass over the unassigned records. The labels are the same on every input; the centroid
of the unassigned records is kept exactly as :class:`~core.methods.pool.RecordPool`
keeps it (its sum minus each group's sum, both added row by row, and summed afresh
whenever the records left have halved), so even a tie decided by the last bit of the
centroid falls the same way.

The loop runs compiled, without the GIL, for a bounded number of groups at a time
(about a tenth of a second, and at most 1/64 of the run), then reports progress and
honours Cancel.
"""

from __future__ import annotations

import time

import numpy as np

from core.compiled import kernel
from core.methods import spatial_index as index
from core.methods import spatial_parallel as parallel
from core.methods import spatial_search as search
from core.methods import spatial_tree
from core.methods.spatial_screen import query_buffer
from core.methods.pool import column_sums
from core.progress import TaskState, next_budget

__all__ = ["fixed_size_indexed"]

_FIRST = {"mdav": 0, "cbfs": 1, "tfrp": 2}
_STEPS = 64
_REINDEX_FROM = 4096  # live rows: below this the index is not built again
# Slots of the integer state vector.
_COUNT, _BUFFER, _GROUPS, _TURN, _WORK, _SHELL_A, _SHELL_B, _POINT_A, _POINT_B, _DONE, _BAD = \
    range(11)


def _take(group, size, gid, X, tree, alive, labels, total, st):
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    index._subtract_group(X, group, size, total)
    for i in range(size):
        record = group[i]
        t = row_of[record]
        if members[head[t]] != record:
            st[_BAD] = 1
        head[t] += 1
        alive[record] = False
        labels[record] = gid
        if head[t] == end[t]:
            index._emptied(t, leaf_of[t], first_leaf, start, stop, head, end, P, rho2, lo, hi,
                           cnt, top)
            search._vacate(t, leaf_of[t] - first_leaf, start[leaf_of[t]], screen)
    st[_COUNT] -= size
    st[_GROUPS] += 1
    if st[_COUNT] and st[_COUNT] * 2 <= st[_BUFFER]:
        st[_BUFFER] = st[_COUNT]
        index._sum_live(X, alive, total)


def _nearest(q, m, tree, taken, anchor, scratch):
    """The m live records nearest to q into ``scratch[3]``: on two threads when the run
    has a helper (:mod:`core.methods.spatial_parallel`), the same answer either way."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    stack, stack_d2, best_d2, best_id, touched, buffer32, work = scratch[:7]
    ctrl, query, shared, mine, spare, helping = scratch[10]
    if ctrl[parallel.ON]:
        return parallel.nearest(q, m, ctrl, query, shared, tree, taken, anchor, mine, spare,
                                helping, best_id)
    return search._nearest(q, m, taken, first_leaf, start, head, end, members, P,
                           screen, lo, hi, cnt, stack, stack_d2, best_d2, best_id, buffer32,
                           scratch[9], work)


def _farthest(q, tree, taken, anchor, scratch):
    """Row of the live record farthest from q: on two threads when the run has a helper,
    the same answer either way (as :func:`_nearest`)."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    buffer32, work, keys, nodes, q32 = scratch[5], scratch[6], scratch[7], scratch[8], scratch[9]
    ctrl, query, shared, mine, spare, helping = scratch[10]
    if ctrl[parallel.ON]:
        return parallel.farthest(q, ctrl, query, shared, tree, taken, anchor, mine, spare,
                                 helping)
    return search._farthest_from(q, anchor, first_leaf, start, head, end, members, P,
                                 screen, lo, hi, cnt, top, keys, nodes, buffer32, q32, work)[0]


def _grow(t0, k, nc, tree, taken, anchor, scratch, group):
    """Records of the group grown from the first live record of row ``t0``, ascending."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    best_id, touched = scratch[3], scratch[4]
    if not nc:
        size = _nearest(P[t0], k, tree, taken, anchor, scratch)
        group[:size] = np.sort(best_id[:size])
        return size
    group[0] = members[head[t0]]
    taken[t0] += 1
    touched[0] = t0
    total = P[t0].copy()
    for size in range(1, k):
        _nearest(total / size, 1, tree, taken, anchor, scratch)
        t = row_of[best_id[0]]
        group[size] = best_id[0]
        taken[t] += 1
        touched[size] = t
        total += P[t]
    for i in range(k):
        taken[touched[i]] = 0
    group[:k] = np.sort(group[:k])
    return k


def _from_centroid(X, tree, total, anchor, shell, st, scratch_work):
    """Row of the live record farthest from the centroid; moves the anchor when scans grow."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    centroid = total / st[_COUNT]
    pointer = st[_POINT_A:_POINT_A + 1]
    row, record, best, examined = index._farthest_in_shell(
        centroid, anchor, shell[:st[_SHELL_A]], pointer, rho2, head, end, members, P)
    st[_WORK] += examined
    scratch_work[2] += examined
    live = cnt[0]
    if examined > 32 + live // 32 or st[_WORK] > 2 * live:
        anchor[:] = centroid
        order = index._anchor_at(centroid, P, head, end, rho2)
        shell[:order.shape[0]] = order
        st[_SHELL_A], st[_POINT_A], st[_WORK] = order.shape[0], 0, 0
        scratch_work[3] += 1
        index._refresh_all(first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top)
    return row


def _form(first, nc, k, max_groups, X, tree, alive, labels, total, st, anchor, shell,
          rho2_b, shell_b, references, taken, scratch, group):
    """Form up to ``max_groups`` groups (or finish); the state lives in the arrays."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    work = scratch[6]
    target = st[_GROUPS] + max_groups
    while st[_GROUPS] < target and not st[_DONE]:
        count = st[_COUNT]
        if count < 2 * k:
            if count:
                for i in range(X.shape[0]):
                    if alive[i]:
                        labels[i] = st[_GROUPS]
                        alive[i] = False
                st[_GROUPS] += 1
                st[_COUNT] = 0
            st[_DONE] = 1
            break
        if first == 2:
            if st[_TURN] % 2 == 0:
                pointer = st[_POINT_A:_POINT_A + 1]
                row = index._farthest_in_shell(references[0], references[0],
                                               shell[:st[_SHELL_A]], pointer, rho2, head,
                                               end, members, P)[0]
            else:
                pointer = st[_POINT_B:_POINT_B + 1]
                row = index._farthest_in_shell(references[1], references[1],
                                               shell_b[:st[_SHELL_B]], pointer, rho2_b,
                                               head, end, members, P)[0]
            st[_TURN] += 1
        else:
            row = _from_centroid(X, tree, total, anchor, shell, st, work)
        size = _grow(row, k, nc, tree, taken, anchor, scratch, group)
        r_point = P[row].copy()
        _take(group, size, st[_GROUPS], X, tree, alive, labels, total, st)
        if first == 0 and count >= 3 * k:
            s_row = _farthest(r_point, tree, taken, anchor, scratch)
            size = _grow(s_row, k, nc, tree, taken, anchor, scratch, group)
            _take(group, size, st[_GROUPS], X, tree, alive, labels, total, st)


for _name in ("_take", "_nearest", "_farthest", "_grow", "_from_centroid", "_form"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled


def fixed_size_indexed(X: np.ndarray, *, k: int, first: str, growth: str,
                       state: TaskState, name: str) -> np.ndarray:
    """Labels of :func:`core.methods.heuristics.fixed_size`, computed on the spatial index.

    ``X`` must already be checked (finite, ``2 <= k <= n``). The index is built again on
    the rows left whenever half of the rows it was built on have emptied and at least
    ``_REINDEX_FROM`` are left (:func:`core.methods.spatial_tree.reindex`); the answers
    do not depend on it.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, d = X.shape
    total = column_sums(X)
    references = np.stack([X.max(axis=0), X.min(axis=0)])
    anchor = references[0].copy() if first == "tfrp" else total / n
    tree, levels, order = spatial_tree.row_tree(X, anchor, state.check)
    st = np.zeros(11, dtype=np.int64)
    st[_COUNT], st[_BUFFER] = n, n
    alive = np.ones(n, dtype=bool)
    labels = np.full(n, -1, dtype=np.int64)
    group = np.zeros(k, dtype=np.int64)
    work = np.zeros(4, dtype=np.int64)
    # At least _STEPS progress reports per run, and one every tenth of a second or so.
    most = max(1, -(-n // (k * _STEPS)))
    chunk = min(16, most)
    helped = indexed = 0
    while True:
        indexed += 1
        rows, cnt = len(tree[0]), tree[12]
        shell, shell_b, rho2_b, taken, scratch = _search_state(tree, levels, order, first,
                                                               references, k, work, st)
        ctrl, query, shared, mine, spare, helping = scratch[10]
        helper = (parallel.SearchHelper(ctrl, query, shared, tree, taken, anchor, helping)
                  if parallel.helper_wanted(levels) else None)
        try:
            while not st[_DONE] and (2 * cnt[0] > rows or cnt[0] < _REINDEX_FROM):
                began = time.perf_counter()
                before = st[_GROUPS]
                if helper is not None:
                    helper.begin()
                try:
                    _form(_FIRST[first], growth == "nc", k, chunk, X, tree, alive, labels,
                          total, st, anchor, shell, rho2_b, shell_b, references, taken,
                          scratch, group)
                finally:
                    if helper is not None:
                        helper.end(time.perf_counter() - began, st[_GROUPS] - before)
                if st[_BAD]:
                    raise AssertionError("spatial index: a group took a record out of queue "
                                         "order")
                state.step((n - st[_COUNT]) / n, f"{name}: {st[_GROUPS]} groups formed")
                spent = time.perf_counter() - began
                chunk = next_budget(chunk, spent, most)
        finally:
            if helper is not None:
                helper.close()
                helped += helper.served
            helper = scratch = None  # both hold the tree
        if st[_DONE]:
            break
        # The old screen goes before the new index is built (reindex reads the rows and
        # their queues): at most one screen is held.
        tree = tree[:1] + (None,) + tree[2:]
        tree, levels, order = spatial_tree.reindex(tree, anchor, state.check)
    fixed_size_indexed.helped = helped
    fixed_size_indexed.work = work
    fixed_size_indexed.indexed = indexed
    return labels


def _search_state(tree, levels, order, first, references, k, work, st):
    """What the compiled loop keeps beside a (new) tree: the shells of the farthest
    searches from the centroid (and, for TFRP, from the second reference), the rows
    taken by a group being grown, and the searches' scratch arrays with the two-thread
    state. Resets the shells' slots of ``st``."""
    P, start, stop = tree[0], tree[7], tree[8]
    head, end = tree[2], tree[3]
    n_nodes, d = len(start), P.shape[1]
    rho2_b = np.zeros(len(P))
    shell, shell_b = np.zeros(len(P), dtype=np.int64), np.zeros(len(P), dtype=np.int64)
    shell[:len(order)] = order
    st[_SHELL_A], st[_POINT_A], st[_WORK] = len(order), 0, 0
    st[_SHELL_B], st[_POINT_B] = 0, 0
    if first == "tfrp":
        order_b = index._anchor_at(references[1], P, head, end, rho2_b)
        shell_b[:len(order_b)] = order_b
        st[_SHELL_B] = len(order_b)
    depth = 2 * levels + 8
    widest = int((stop - start).max()) + 1
    scratch = (np.zeros(depth, dtype=np.int64), np.zeros(depth), np.zeros(k),
               np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64),
               np.zeros(widest, dtype=np.float32), work,
               np.zeros(n_nodes), np.zeros(n_nodes, dtype=np.int64),
               query_buffer(d))
    ctrl, query, shared = parallel.new_state(max(levels, 1), d)
    mine, spare, helping = (parallel.part_scratch(n_nodes, depth, k, widest, d)
                            for _ in range(3))
    scratch += ((ctrl, query, shared, mine, spare, helping),)
    taken = np.zeros(len(P), dtype=np.int64)
    return shell, shell_b, rho2_b, taken, scratch
