"""t-closeness-first's cluster loop (Soria-Comas et al. 2015, Algorithm 3), compiled.

:func:`core.methods.tfirst.tc_tfirst` forms clusters in MDAV fashion: x₀ is the record
farthest from the centroid of the records left, its cluster takes from every subset of
the confidential order its ``want[g]`` records nearest to x₀, then x₁, the record left
farthest from x₀, gets a cluster the same way. :func:`tfirst_clusters` runs that loop
without returning to Python between clusters (a budget of clusters per call, about a
tenth of a second, then progress and Cancel), on the structures of the compiled path:
the pool of every record (:class:`~core.methods.spatial_pool.SpatialPool`, its state
handed over) for the centroid and the farthest records, and one spatial index per
subset (:class:`~core.methods.spatial_subsets.SubsetIndex`) for the nearest ones. Each
is built again on the records it has left as they halve (:func:`pool_on_live`,
:meth:`~core.methods.spatial_subsets.SubsetIndex.reindex`), between calls.

Tasks
    A cluster's searches are independent tasks, run on two threads
    (:mod:`core.methods.tfirst_tasks`); the farthest search from x₀ runs beside x₀'s
    own, before x₀'s cluster leaves the pool, and that cluster leaves the pool while
    x₁'s records are searched in the subsets.

Exactness: the answers are those of the reference path
(:func:`core.methods.tfirst._reference_labels`, every search exact, ties to the record
first in the input), and the centroid is the
pool's own sum with its schedule (each cluster's rows subtracted, added one after
another; summed afresh whenever the count has halved), so the labels are the
reference's bit for bit; the tests compare them.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from core.compiled import kernel
from core.methods import spatial_index as index
from core.methods import spatial_parallel
from core.methods import task_helper as helper
from core.methods import tfirst_tasks as tasks
from core.progress import TaskState, next_budget
from core.threads import second_thread_allowed

__all__ = ["LoopRun", "build_indexes", "pool_on_live", "rebuild_due", "tfirst_clusters"]

_STEPS = 64  # progress reports per run at least
# Slots of the integer state vector.
_COUNT, _BUFFER, _CLUSTERS, _N_SHELL, _SHELL_WORK, _PENDING, _BAD, _AGAIN = (
    tasks.COUNT, tasks.BUFFER, tasks.CLUSTERS, tasks.N_SHELL, tasks.SHELL_WORK, tasks.PENDING,
    tasks.BAD, tasks.AGAIN)


def _want_of(counts, per, clusters, extras_per_cluster, want):
    """Records each subset gives the next cluster (:func:`core.methods.tfirst.tc_tfirst`:
    one, and the extras from the first subsets that still have more than the clusters
    left)."""
    remaining = per - clusters
    taken_extra = 0
    for i in range(counts.shape[0]):
        want[i] = 1
        if counts[i] - 1 >= remaining and taken_extra < extras_per_cluster:
            want[i] = 1 + min(extras_per_cluster - taken_extra, counts[i] - remaining)
            taken_extra += want[i] - 1


def _take_subsets(want, counts, trees, subsets, parts, owner, chosen, labels, st):
    """The cluster's records (already out of their subsets' indexes, :func:`_do_task`):
    label them (the next cluster number) and return them, ascending, in ``chosen``'s
    first places."""
    size = 0
    for g in range(len(trees)):
        answer = tasks._answer(g, owner, parts)
        out_n, out_id = answer[9], answer[10]
        records = subsets[g]
        if out_n[g] != want[g]:
            st[_BAD] = 1
        for i in range(out_n[g]):
            chosen[size] = records[out_id[g, i]]
            size += 1
        counts[g] -= want[g]
    group = chosen[:size]
    group.sort()
    for i in range(size):
        labels[group[i]] = st[_CLUSTERS]
    st[_CLUSTERS] += 1
    return group


def _from_centroid(pool, st):
    """The live record farthest from the centroid, through the shell; the anchor moves
    when scans grow (:meth:`~core.methods.spatial_pool.SpatialPool.farthest`)."""
    (X, total, alive, P, screen, head, end, solo, members, slot_of, nxt, row_of, leaf_of,
     first_leaf, start, stop, lo, hi, cnt, top, rho2, shell, pointer, anchor) = pool
    centroid = total / st[_COUNT]
    _, record, _, examined = index._farthest_in_shell(
        centroid, anchor, shell[:st[_N_SHELL]], pointer, rho2, head, end, members, P)
    st[_SHELL_WORK] += examined
    live = cnt[0]
    if examined > 32 + live // 32 or st[_SHELL_WORK] > 2 * live:
        anchor[:] = centroid
        order = index._anchor_at(anchor, P, head, end, rho2)
        shell[:order.shape[0]] = order
        st[_N_SHELL], st[_SHELL_WORK] = order.shape[0], 0
        pointer[0] = 0
        index._refresh_all(first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top)
    return record


def _form(budget, per, extras_per_cluster, counts, trees, subsets, pool, shared, parts,
          want, chosen, labels, st):
    """Form up to ``budget`` clusters (or finish), x₀'s then x₁'s; the loop's state
    lives in the arrays (``st[_PENDING]``: x₁ when its cluster is still to come, else
    −1).

    x₀'s cluster leaves the pool of everyone while x₁'s records are searched in the
    subsets (:func:`_run_tasks`), unless x₁ has to be searched again without it or the
    budget ends between the two."""
    X = pool[0]
    query, owner = shared[1], shared[3]
    size = len(trees)
    first, second = chosen[0], chosen[1]
    nothing = chosen[0][:0]
    target = min(st[_CLUSTERS] + budget, per)
    while st[_CLUSTERS] < target:
        pending = nothing
        if st[_PENDING] >= 0:
            record = st[_PENDING]
            st[_PENDING] = -1
        else:
            query[:] = X[_from_centroid(pool, st)]
            with_far = 1 if st[_CLUSTERS] + 1 < per else 0
            _want_of(counts, per, st[_CLUSTERS], extras_per_cluster, want)
            tasks._run_tasks(with_far, want, trees, pool, shared, parts, nothing, st)
            group = _take_subsets(want, counts, trees, subsets, parts, owner, first, labels,
                                  st)
            if not with_far:
                tasks._take_pool(group, pool, st)
                continue
            record = tasks._answer(size, owner, parts)[11][1]
            pending = group
            for i in range(group.shape[0]):
                if group[i] == record:  # x₁ is in x₀'s cluster: search again (module notes)
                    st[_AGAIN] += 1
                    tasks._take_pool(group, pool, st)
                    tasks._far_task(query, pool, parts[0])
                    record = parts[0][11][1]
                    pending = nothing
                    break
            if st[_CLUSTERS] >= target:
                if pending.shape[0]:
                    tasks._take_pool(pending, pool, st)
                st[_PENDING] = record
                break
        query[:] = X[record]
        _want_of(counts, per, st[_CLUSTERS], extras_per_cluster, want)
        tasks._run_tasks(0, want, trees, pool, shared, parts, pending, st)
        group = _take_subsets(want, counts, trees, subsets, parts, owner, second, labels, st)
        tasks._take_pool(group, pool, st)


for _name in ("_want_of", "_take_subsets", "_from_centroid", "_form"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled


_SIDE_BY_SIDE_FROM = 20_000  # records: below, a second thread is not worth starting


def build_indexes(X: np.ndarray, subsets: list, check=None):
    """``(everyone, indexes)``: the pool of every record
    (:class:`~core.methods.spatial_pool.SpatialPool`) and one index per subset
    (:class:`~core.methods.spatial_subsets.SubsetIndex`), for this loop and
    :mod:`core.methods.bucket_loop`. Neither build reads the other, so when the run may
    use a second thread (:func:`core.threads.second_thread_allowed`) the subsets' are
    built on it meanwhile: 100,000 × 10 in 0.10–0.11 s against 0.18–0.19 s one after the
    other, 1,000,000 × 10 in 2.2–2.3 s against 3.3–4.0 s. Each is the same structure
    either way. ``check()`` (Cancel) is called by both; an error in either is raised
    here once both have stopped.

    The pool of everyone answers only the farthest searches and the centroid (the
    nearest records come from the subsets' indexes), so it takes MDAV's leaves
    (``spatial_index.LEAF_SIZE``), not the pool's own smaller ones, which tc-kfirst's
    nearest searches keep. tc-tfirst's clusters at 100,000 × 20 took 7.8–8.1 s on them
    against 13.4–14.2 s; at 100,000 × 3, 6 and 10, 0.59–0.60 / 0.85 / 1.94–2.02 s
    against 0.62 / 0.90 / 1.92–1.98 s; the same labels."""
    from core.methods.spatial_pool import SpatialPool
    from core.methods.spatial_subsets import SubsetIndex

    def pool():
        return SpatialPool(X, check, leaf_size=index.LEAF_SIZE)

    if len(X) < _SIDE_BY_SIDE_FROM or not second_thread_allowed():
        return pool(), SubsetIndex(X, subsets, check)
    with ThreadPoolExecutor(1, thread_name_prefix="subset indexes") as helper_thread:
        indexes = helper_thread.submit(SubsetIndex, X, subsets, check)
        everyone = pool()  # on an error, the with waits for the helper
    return everyone, indexes.result()


_REBUILD_FROM = 4096  # live rows: below this the pool of everyone is not built again


def rebuild_due(pool: tuple) -> bool:
    """Whether the pool of everyone (:func:`take_over`'s tuple) is to be built again on
    its live records (:func:`pool_on_live`): once half of the rows it was built on have
    emptied and at least ``_REBUILD_FROM`` are live, as MDAV's index
    (:mod:`core.methods.spatial_heuristics`)."""
    live_rows, rows = int(pool[18][0]), len(pool[3])
    return 2 * live_rows <= rows and live_rows >= _REBUILD_FROM


def pool_on_live(X: np.ndarray, total: np.ndarray, alive: np.ndarray, st: np.ndarray,
                 check=None) -> tuple:
    """A pool of everyone built on the live records (``alive``) alone, to replace one
    whose rows have halved (:func:`rebuild_due`); the caller lets go of the old one first,
    so the two are never held together. Only while no search reads the pool.

    Its leaves then hold live rows only, so the farthest searches, the anchor's sort of
    the rows and the removals pass over no emptied ones: tc-tfirst's clusters at
    100,000 × 10 on one thread took 4.25 s against 4.97 s (the farthest searches 1.40 s
    against 1.87 s, MDAV's 1.31 s). The records' running sum (``total``) and its
    schedule (``st``'s count and buffer) carry over as they are, the shell is sorted from
    the centroid, and every answer is exact, so the labels are the same."""
    from core.methods.spatial_pool import SpatialPool

    fresh = SpatialPool(X, check, leaf_size=index.LEAF_SIZE, records=np.flatnonzero(alive),
                        anchor=total / st[_COUNT])
    arrays, (_, _, n_shell, shell_work) = fresh.hand_over()
    st[_N_SHELL], st[_SHELL_WORK] = n_shell, shell_work
    return (X, total, alive) + arrays[3:]


def _widest_leaf(start: np.ndarray, stop: np.ndarray, first_leaf: int) -> int:
    return int((stop[first_leaf:] - start[first_leaf:]).max(initial=0)) + 1


def take_over(everyone, indexes) -> tuple[tuple, np.ndarray, int]:
    """``(pool, st, leaf)`` for a compiled loop on a pool of everyone
    (:meth:`~core.methods.spatial_pool.SpatialPool.hand_over`) and subset indexes
    (:class:`~core.methods.spatial_subsets.SubsetIndex`): the pool's arrays, the
    integer state vector holding the pool's scalars (the other slots 0), and the
    widest leaf a search's screen buffer must hold, an index built again included
    (its leaves have up to LEAF_SIZE rows). Used here and by
    :mod:`core.methods.bucket_loop`."""
    pool, (count, buffer, n_shell, shell_work) = everyone.hand_over()
    st = np.zeros(8, dtype=np.int64)
    st[_COUNT], st[_BUFFER], st[_N_SHELL], st[_SHELL_WORK] = count, buffer, n_shell, shell_work
    leaf = max([_widest_leaf(pool[14], pool[15], pool[13]), index.LEAF_SIZE + 1] +
               [_widest_leaf(tree[7], tree[8], tree[9]) for tree in indexes.plain_trees])
    return pool, st, leaf


# Test settings: every task to the helper; spins before a task is taken back from it;
# the helper held inside the first task it commits to (task_helper's HOLD).
_LEAVE_TO_HELPER, _PATIENCE, _HOLD = False, None, False


def _two_threads(levels: int, size: int) -> bool:
    """Whether a run gets a helper: as MDAV's searches do
    (:func:`~core.methods.spatial_parallel.helper_wanted`), and more than one subset."""
    return spatial_parallel.helper_wanted(levels) and size > 1


class LoopRun(NamedTuple):
    """What :func:`tfirst_clusters` returns: the labels (n_records,) and how the two
    threads shared the work (for the tests): x₁ searched again after x₀'s cluster took
    it (``again``), the pool of everyone built again (``rebuilt``, :func:`pool_on_live`),
    tasks the helper answered (``served``), answers taken back from it (``gave_up``) and
    attempts to take one back from a task it held (``tried``)."""

    labels: np.ndarray
    again: int
    rebuilt: int
    served: int
    gave_up: int
    tried: int


def tfirst_clusters(X: np.ndarray, subsets: list[np.ndarray], per: int,
                    extras_per_cluster: int, state: TaskState) -> LoopRun:
    """Algorithm 3's clusters (before any merging), with the run's statistics.

    ``X`` (n_records × n_attributes) is checked; ``subsets`` are the record numbers of
    each subset of the confidential order (ascending), ``per`` the clusters to form
    (the size of the smallest subset) and ``extras_per_cluster`` the most extra records
    a cluster takes (:func:`core.methods.tfirst.tc_tfirst`). ``state`` gets progress
    about every tenth of a second (at least ``_STEPS`` times) and may cancel there.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, d = X.shape
    everyone, indexes = build_indexes(X, subsets, state.check)
    pool, st, leaf = take_over(everyone, indexes)
    del everyone  # its arrays are the pool's now, and it is built again as it empties
    start, first_leaf = pool[14], pool[13]
    trees, size = indexes.trees, len(subsets)
    st[_PENDING] = -1
    counts = np.array([len(members) for members in subsets], dtype=np.int64)
    m = 1 + int(extras_per_cluster)
    depth = indexes.scratch_shape[0]
    parts = tuple(tasks.thread_scratch(len(start), depth, m, leaf, d, size + 1) for _ in range(3))
    ctrl = helper.new_control(_LEAVE_TO_HELPER, _PATIENCE, _HOLD)
    shared = (ctrl, np.zeros(d), np.zeros(size + 1, dtype=np.int64),
              np.zeros(size + 1, dtype=np.int64), np.zeros(size + 1, dtype=np.int64))
    want = np.zeros(size, dtype=np.int64)
    chosen = np.zeros((2, size * m), dtype=np.int64)  # x₀'s cluster and x₁'s
    labels = np.full(n, -1, dtype=np.int64)
    levels = int(first_leaf + 1).bit_length() - 1
    two = _two_threads(levels, size)
    def serving():  # the helper's arguments, with the pool of the moment
        return (ctrl, shared[1], want, shared[2], shared[4], trees, pool, parts[1])

    runner = helper.TaskHelper(ctrl, tasks._serve, serving()) if two else None
    most = max(1, -(-per // _STEPS))
    chunk = min(16, most)
    rebuilt = 0
    try:
        while st[_CLUSTERS] < per:
            began = time.perf_counter()
            before = st[_CLUSTERS]
            if runner is not None:
                runner.begin(serving())
            try:
                _form(chunk, per, int(extras_per_cluster), counts, trees, indexes.subsets,
                      pool, shared, parts, want, chosen, labels, st)
            finally:
                if runner is not None:
                    runner.end(time.perf_counter() - began, int(st[_CLUSTERS] - before))
            if (runner is None or runner.idle) and st[_CLUSTERS] < per:  # no helper reading
                indexes.reindex()
                if rebuild_due(pool):
                    total, alive = pool[1], pool[2]
                    pool = None  # the old pool goes before the new one is built
                    if runner is not None:
                        runner.release()
                    pool = pool_on_live(X, total, alive, st, state.check)
                    rebuilt += 1
            if st[_BAD] or any(part[8][3] for part in parts):
                raise AssertionError("subset index: a record taken out of its row's order")
            state.step(st[_CLUSTERS] / per, f"t-closeness-first: {st[_CLUSTERS]} clusters "
                                            "formed")
            spent = time.perf_counter() - began
            chunk = next_budget(chunk, spent, most)
    finally:
        if runner is not None:
            runner.close()
    return LoopRun(labels, again=int(st[_AGAIN]), rebuilt=rebuilt,
                   served=runner.served if runner is not None else 0,
                   gave_up=runner.gave_up if runner is not None else 0,
                   tried=int(ctrl[helper.TRIED]))
