"""The tasks of a cluster of t-closeness-first's compiled loop
(:mod:`core.methods.tfirst_loop`, Soria-Comas et al. 2015, Algorithm 3), on two threads.

Tasks
    A cluster's searches are independent: one per subset, and, for x₀'s cluster, the
    record farthest from x₀. They run as tasks on two threads
    (:mod:`core.methods.task_helper`), each writing into its own thread's scratch; a
    subset's task also takes the records it found out of that subset's index, which no
    other task reads. The helper commits to that removal with a compare-and-swap of the
    task's state from 4s to 4s + 2 (s the step), the run's thread takes a late task
    back with one from 4s to 4s + 3: one of them wins, so a task is never done twice,
    and a committed one is waited for. The farthest search runs beside x₀'s own
    searches, so before x₀'s cluster leaves the pool: its answer stands
    unless that record is one of the cluster's, as the cluster only takes records away
    (the farthest record, first in the input on ties, is still the farthest, and still
    the first, among fewer). Otherwise it is searched again (never at 100,000 × 10:
    x₁ lies at the other end of the data from x₀'s nearest records). x₀'s cluster then
    leaves the pool of everyone while the helper starts on x₁'s subset searches, which
    do not read that pool.

The pool of everyone is the tuple of
:meth:`~core.methods.spatial_pool.SpatialPool.hand_over`, a subset's index the tuple
of :class:`~core.methods.spatial_subsets.SubsetIndex`'s trees; a thread's scratch is
:func:`thread_scratch`.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods import spatial_index
from core.methods import spatial_pool_kernels as pool_kernels
from core.methods import spatial_search as search
from core.methods.spatial_screen import query_buffer
from core.methods import task_helper as helper
from core.methods.atomics import load, store, swap

__all__ = ["thread_scratch"]

# Slots of the loop's integer state vector.
COUNT, BUFFER, CLUSTERS, N_SHELL, SHELL_WORK, PENDING, BAD, AGAIN = range(8)


def _far_task(q, pool, part):
    """The live record of the pool farthest from q into ``part``'s answer (only reads
    the pool)."""
    (X, total, alive, P, screen, head, end, solo, members, slot_of, nxt, row_of, leaf_of,
     first_leaf, start, stop, lo, hi, cnt, top, rho2, shell, pointer, anchor) = pool
    keys, nodes, buffer32, q32, work, far = part[6], part[7], part[4], part[5], part[8], part[11]
    row, record, _ = search._farthest_from(q, anchor, first_leaf, start, head, end, members,
                                           P, screen, lo, hi, cnt, top, keys, nodes,
                                           buffer32, q32, work)
    far[0], far[1] = row, record


def _search_subset(g, q, want, trees, part):
    """Subset g's ``want[g]`` live records nearest to q (numbers within the subset,
    nearest first) into ``part``'s answer for task g (only reads the index)."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt,
     top, rho2, taken) = trees[g]
    stack, stack_d2, best_d2, best_id, buffer32, q32 = part[:6]
    work, out_n, out_id = part[8], part[9], part[10]
    found = search._nearest(q, want[g], taken, first_leaf, start, head, end, members, P,
                            screen, lo, hi, cnt, stack, stack_d2, best_d2, best_id,
                            buffer32, q32, work)
    out_n[g] = found
    for i in range(found):
        out_id[g, i] = best_id[i]


def _remove_subset(g, trees, part):
    """Take the records of ``part``'s answer for task g out of subset g's index
    (``work[3]`` set if one was not the first of its row: never, spatial_subsets'
    notes)."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt,
     top, rho2, taken) = trees[g]
    work, out_n, out_id = part[8], part[9], part[10]
    for i in range(out_n[g]):
        record = out_id[g, i]
        t = row_of[record]
        if members[head[t]] != record:
            work[3] = 1
        head[t] += 1
        if head[t] == end[t]:
            spatial_index._emptied(t, leaf_of[t], first_leaf, start, stop, head, end, P,
                                   rho2, lo, hi, cnt, top)
            search._vacate(t, leaf_of[t] - first_leaf, start[leaf_of[t]], screen)


def _hold(ctrl, tried):
    """A test's helper (``ctrl[HOLD]``), inside the first task it has committed to,
    waits until the run's thread has tried to take a task back since ``tried``, and
    then longer than the run's patience (a run's thread that did not wait for the task
    would by then have searched its subset again)."""
    if not ctrl[helper.HOLD]:
        return
    ctrl[helper.HOLD] = 0
    spins = 0
    while load(ctrl, helper.TRIED) == tried and spins < 1 << 34:
        spins += 1
    spins = 0
    while load(ctrl, helper.HOLD) == 0 and spins < 1 << 27:
        spins += 1


def _do_task(task, q, want, trees, pool, part, state, seq, helping, ctrl):
    """Task ``task``: subset ``task``'s search and the removal of what it found from
    that subset's index, or the farthest search (the last task). The helper
    (``helping``) commits before it removes anything: an atomic swap of
    ``state[task]`` from 4·seq to 4·seq + 2, which fails when the run's thread has taken
    the task back (then nothing is changed and False returned)."""
    if task == len(trees):
        _far_task(q, pool, part)
        return not helping or swap(state, task, 4 * seq, 4 * seq + 2)
    _search_subset(task, q, want, trees, part)
    tried = load(ctrl, helper.TRIED)
    if helping and not swap(state, task, 4 * seq, 4 * seq + 2):
        return False
    if helping:
        _hold(ctrl, tried)
    _remove_subset(task, trees, part)
    return True


def _task_of(claimed, with_far, size):
    """The task claimed ``claimed``-th: the farthest search first (the longest), then
    the subsets in order."""
    if with_far:
        return size if claimed == 0 else claimed - 1
    return claimed


def _serve(ctrl, query, want, status, state, trees, pool, part):
    """The helper's loop: claim tasks of each new step until ``ctrl[STOP]``."""
    last = 0  # step 0 is never published
    size = len(trees)
    while not load(ctrl, helper.STOP):
        seq = load(ctrl, helper.SEQ)
        if seq == last:
            continue
        last = seq
        n_tasks, with_far = ctrl[helper.N_TASKS], ctrl[helper.FIRST]
        while True:
            claimed = helper.claim(ctrl, seq, n_tasks)
            if claimed < 0:
                break
            task = _task_of(claimed, with_far, size)
            if _do_task(task, query, want, trees, pool, part, state, seq, True, ctrl):
                ctrl[helper.SERVED] += 1  # written by the helper only
                store(status, task, seq)


def _run_tasks(with_far, want, trees, pool, shared, parts, pending, st):
    """Every task of a cluster, on two threads when ``ctrl[ON]``; ``owner[task]`` says
    whose scratch holds its answer (0 this thread's, 1 the helper's, 2 the spare).

    ``pending``: records of the cluster before, still to leave the pool of everyone;
    this thread takes them out (:func:`_take_pool`) while the helper starts on the
    tasks, which then must not read that pool (no farthest search)."""
    ctrl, query, status, owner, state = shared
    mine, spare = parts[0], parts[2]
    size = len(trees)
    n_tasks = size + with_far
    if not ctrl[helper.ON]:
        if pending.shape[0]:
            _take_pool(pending, pool, st)
        for claimed in range(n_tasks):
            task = _task_of(claimed, with_far, size)
            _do_task(task, query, want, trees, pool, mine, state, 0, False, ctrl)
            owner[task] = 0
        return
    seq = ctrl[helper.SEQ] + 1
    for task in range(size + 1):
        owner[task] = 1
        state[task] = 4 * seq
    ctrl[helper.FIRST] = with_far
    helper.publish(ctrl, n_tasks)
    if pending.shape[0]:
        _take_pool(pending, pool, st)
    while not ctrl[helper.LEAVE]:
        claimed = helper.claim(ctrl, seq, n_tasks)
        if claimed < 0:
            break
        task = _task_of(claimed, with_far, size)
        _do_task(task, query, want, trees, pool, mine, state, seq, False, ctrl)
        owner[task] = 0
    for claimed in range(n_tasks):
        task = _task_of(claimed, with_far, size)
        if owner[task] != 1 or load(status, task) == seq:
            continue
        if ctrl[helper.ON] and helper.wait(ctrl, status, task, seq):
            continue
        store(ctrl, helper.TRIED, ctrl[helper.TRIED] + 1)
        if swap(state, task, 4 * seq, 4 * seq + 3):  # taken back before the helper committed
            ctrl[helper.GAVE_UP] += 1  # one thread until the end of the stretch
            ctrl[helper.ON] = 0
            _do_task(task, query, want, trees, pool, spare, state, seq, False, ctrl)
            owner[task] = 2
        else:  # committed: its removal is under way and short
            while load(status, task) != seq:
                pass


def _answer(task, owner, parts):
    """The scratch holding task's answer."""
    if owner[task] == 0:
        return parts[0]
    if owner[task] == 1:
        return parts[1]
    return parts[2]


def _take_pool(group, pool, st):
    """Take a cluster's records out of the pool of everyone, its sum as
    :meth:`~core.methods.spatial_pool.SpatialPool.remove` keeps it (the group's rows
    added one after another and subtracted; summed afresh once the count has halved)."""
    (X, total, alive, P, screen, head, end, solo, members, slot_of, nxt, row_of, leaf_of,
     first_leaf, start, stop, lo, hi, cnt, top, rho2, shell, pointer, anchor) = pool
    spatial_index._subtract_group(X, group, group.shape[0], total)
    pool_kernels._remove(group, slot_of, nxt, row_of, leaf_of, alive, first_leaf, start,
                         stop, head, end, solo, members, P, rho2, lo, hi, cnt, top, screen)
    st[COUNT] -= group.shape[0]
    if st[COUNT] and st[COUNT] * 2 <= st[BUFFER]:
        st[BUFFER] = st[COUNT]
        spatial_index._sum_live(X, alive, total)


for _name in ("_far_task", "_search_subset", "_remove_subset", "_hold", "_do_task",
              "_task_of", "_serve", "_take_pool", "_run_tasks", "_answer"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled


def thread_scratch(n_nodes: int, depth: int, m: int, leaf: int, d: int, tasks: int) -> tuple:
    """One thread's scratch: the nearest search's stack and best list, the screen's
    buffers, the farthest search's heap, rows examined, and the tasks' answers (records
    found per subset, the records, the farthest (row, record))."""
    return (np.zeros(depth, dtype=np.int64), np.zeros(depth), np.zeros(m),
            np.zeros(m, dtype=np.int64), np.zeros(leaf, dtype=np.float32),
            query_buffer(d), np.zeros(n_nodes), np.zeros(n_nodes, dtype=np.int64),
            np.zeros(4, dtype=np.int64), np.zeros(tasks, dtype=np.int64),
            np.zeros((tasks, m), dtype=np.int64), np.zeros(2, dtype=np.int64))
