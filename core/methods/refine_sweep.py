"""The nearest group of a record by a sweep over every group: float32 first.

The other way to the candidate lists (:mod:`core.methods.refine_nearest`), chosen by
:mod:`core.methods.refine_way` where groups move too often for the lists to be kept up:
the records of a question are measured against every group's centroid in float32, four
records per sweep (each centroid value read once for four, in vector registers); every
group whose float32 distance lies within the rounding of the least (``2 · SLACK32``, far
above the float32 error of a squared distance) is then measured exactly, in the fixed
form of :mod:`core.methods.refine_kernel`. So the answer is the brute-force answer bit
for bit: the nearest live group other than the one left out, the lower id on a tie.

Two threads
    A sweep over ``SHARED_FROM`` groups or more is cut into ``TASKS`` runs of blocks
    which the run's thread and a helper thread claim one at a time
    (:mod:`core.methods.task_helper`), each writing the nearest group of its run into
    its own row; the rows are merged in id order, so the answer is the one-thread answer
    exactly (the tests compare the labels). The groups change between sweeps, never
    during one. A helper late by more than ``ctrl[PATIENCE]`` spins (taken off the
    processor mid-run): the run's thread sweeps everything itself into its own buffers
    and keeps to one thread until the end of the stretch (``ctrl[ON] = 0``), so the
    helper, whenever it finishes, writes only where nobody reads. Whether two threads
    are faster is measured as the run goes (the helper's probes).
"""

from __future__ import annotations

import numpy as np

from core.methods import task_helper as helper
from core.methods.atomics import load, store
from core.methods.refine_kernel import (
    TASKS,
    CROWDED,
    DRIFT,
    N_GROUPS,
    SAMPLED,
    SHORT,
    SLACK32,
    SWEPT,
    centre,
    distance,
    jit,
    keep_nearest,
    set_list,
    share,
)

__all__ = ["FAR", "new_share", "screened_fill", "serve", "sweep", "sweep_range"]

FAR = 1e18  # a float32 centroid no record comes near ((x − 1e18)² ≈ 1e36 < 3.4e38)
_BLOCK = 512  # groups per block: four records' float32 distances stay in the L1 cache
_SAMPLE = 64  # one question in _SAMPLE swept is checked for crowding
_LANE = 16  # groups whose least float32 distance a fill keeps
# Test settings (as tclose_screen's): every run of blocks to the helper; spins before the
# run's thread gives up waiting; the helper held inside its _HOLD-th run (0: not).
_LEAVE_TO_HELPER, _PATIENCE, _HOLD = False, None, 0


def new_share(n: int) -> dict:
    """:func:`core.methods.refine_kernel.share` with this module's test settings."""
    return share(n, _LEAVE_TO_HELPER, _PATIENCE, _HOLD)


@jit
def sweep(s, recs, m, exclude, out):
    """``out[t]``: the live group ≠ ``exclude`` nearest to record ``recs[t]``, t < m (−1
    if none), on two threads where a helper shares the sweep (``s.ctrl[ON]``)."""
    n_groups = s.meta[N_GROUPS]
    s.meta[SWEPT] += m
    if 0 <= exclude < n_groups:
        s.centT32[:, exclude] = FAR
    ctrl = s.ctrl
    if ctrl[helper.ON] and n_groups >= ctrl[helper.FIRST] and m <= len(s.jrecs):
        best = _shared(s, recs, m, exclude, n_groups, out)
    else:
        best = np.empty(m)
        sweep_range(s, recs, m, exclude, 0, n_groups, best, out)
    for t in range(m):
        if (s.meta[SWEPT] - t) % _SAMPLE == 0 and out[t] >= 0:
            _crowding(s, recs[t], best[t], np.empty(_BLOCK, dtype=np.float32))
    if 0 <= exclude < n_groups and s.count[exclude] > 0:
        centre(s, exclude)


@jit
def _shared(s, recs, m, exclude, n_groups, out):
    """:func:`sweep` cut into ``TASKS`` runs of blocks which this thread and the helper
    claim one at a time, each writing its own rows; the runs' answers are then merged in
    id order (a strict < : the lower id wins a tie). A helper late by more than
    ``ctrl[PATIENCE]`` spins: this thread sweeps alone, into its own buffers, and keeps
    to one thread until the end of the stretch (``ctrl[ON] = 0``)."""
    ctrl = s.ctrl
    s.jrecs[:m] = recs[:m]
    s.job[0], s.job[1] = m, exclude
    blocks = (n_groups + _BLOCK - 1) // _BLOCK
    for task in range(TASKS + 1):
        s.bounds[task] = min(n_groups, task * blocks // TASKS * _BLOCK)
    mine = np.zeros(TASKS, dtype=np.int64)
    seq = helper.publish(ctrl, TASKS)
    while not ctrl[helper.LEAVE]:
        task = helper.claim(ctrl, seq, TASKS)
        if task < 0:
            break
        sweep_range(s, s.jrecs, m, exclude, s.bounds[task], s.bounds[task + 1],
                    s.jbest[task], s.jout[task])
        mine[task] = 1
    best = np.full(m, np.inf)
    for task in range(TASKS):
        if mine[task] or helper.wait(ctrl, s.status, task, seq):
            continue
        store(ctrl, helper.TRIED, ctrl[helper.TRIED] + 1)
        ctrl[helper.GAVE_UP] += 1
        ctrl[helper.ON] = 0
        sweep_range(s, recs, m, exclude, 0, n_groups, best, out)
        return best
    out[:m] = -1
    for task in range(TASKS):
        for t in range(m):
            if s.jbest[task, t] < best[t]:
                best[t], out[t] = s.jbest[task, t], s.jout[task, t]
    return best


@jit
def serve(ctrl, s):
    """The helper's loop: claim runs of blocks of each new sweep until ``ctrl[STOP]``."""
    last = 0  # step 0 is never published
    while not load(ctrl, helper.STOP):
        seq = load(ctrl, helper.SEQ)
        if seq == last:
            continue
        last = seq
        n_tasks = ctrl[helper.N_TASKS]
        while True:
            task = helper.claim(ctrl, seq, n_tasks)
            if task < 0:
                break
            helper.hold(ctrl)
            sweep_range(s, s.jrecs, s.job[0], s.job[1], s.bounds[task], s.bounds[task + 1],
                        s.jbest[task], s.jout[task])
            ctrl[helper.SERVED] += 1  # written by the helper only
            store(s.status, task, seq)


@jit
def sweep_range(s, recs, m, exclude, first, last, best, out):
    """Records ``recs[:m]`` against the live groups ``first .. last − 1`` other than
    ``exclude`` (whose float32 centroid is far away for the sweep, as a dead group's):
    the nearest into ``out[:m]`` (−1 if none) and its squared distance into ``best``.

    In float32 first, four records per pass over a block of centroids, then exactly for
    every group within the float32 rounding of the least so far. A block's least float32
    distance is a live group's; non-negative float32 values order as their bits (as
    int32), whose least numba computes in vector registers.
    """
    slack = 2.0 * s.fmeta[SLACK32]
    limits = np.full(m, np.inf)
    best[:m] = np.inf
    out[:m] = -1
    acc = np.empty((4, _BLOCK), dtype=np.float32)
    bits = acc.view(np.int32)
    one_bits = np.empty(1, dtype=np.int32)
    one = one_bits.view(np.float32)
    for first_g in range(first, last, _BLOCK):
        width = min(_BLOCK, last - first_g)
        for r in range(0, m, 4):
            if m - r >= 4:
                _four(s.XT32, s.centT32, first_g, width, recs[r], recs[r + 1], recs[r + 2],
                      recs[r + 3], acc)
            else:
                for q in range(m - r):
                    _one(s.XT32, s.centT32, first_g, width, recs[r + q], acc[q])
            for q in range(min(4, m - r)):
                near, near_bits = acc[q, :width], bits[q, :width]
                least = near_bits[0]
                for g in range(1, width):
                    least = min(least, near_bits[g])
                one_bits[0] = least
                if not one[0] < limits[r + q]:
                    continue
                limit = min(limits[r + q], one[0] + slack)
                i = recs[r + q]
                for g in range(width):
                    # Every group within the rounding of the least is measured exactly;
                    # ascending ids and a strict < give the lower id on a tie.
                    if near[g] < limit:
                        h = first_g + g
                        if h == exclude or s.count[h] <= 0:
                            continue
                        dist = distance(s, i, h)
                        if dist < best[r + q]:
                            best[r + q], out[r + q] = dist, h
                limits[r + q] = limit


@jit
def _crowding(s, i, best, near):
    """Whether the short lists (``meta[SHORT]``) would prove record i's nearest group (at
    squared distance ``best``): counted in ``meta[SAMPLED]`` and, where it would not,
    ``meta[CROWDED]`` (:mod:`core.methods.refine_way` chooses the lists' length from
    them). It would not where as many groups as a list holds, besides the record's own,
    lie within the nearest's distance plus the drift."""
    reach = np.sqrt(best) + s.fmeta[DRIFT]
    reach = reach * reach + 2.0 * s.fmeta[SLACK32]
    near_ones = 0
    for first in range(0, s.meta[N_GROUPS], _BLOCK):
        width = min(_BLOCK, s.meta[N_GROUPS] - first)
        _one(s.XT32, s.centT32, first, width, i, near)
        for g in range(width):
            if near[g] < reach:
                near_ones += 1
    s.meta[SAMPLED] += 1
    if near_ones >= s.meta[SHORT]:
        s.meta[CROWDED] += 1




@jit
def _four(XT32, centT32, first, width, i0, i1, i2, i3, acc):
    """Squared float32 distances of records i0..i3 to groups ``first .. first + width − 1``
    in ``acc[0..3]``."""
    a0, a1, a2, a3 = acc[0, :width], acc[1, :width], acc[2, :width], acc[3, :width]
    a0[:], a1[:], a2[:], a3[:] = 0.0, 0.0, 0.0, 0.0
    for j in range(XT32.shape[0]):
        x0, x1, x2, x3 = XT32[j, i0], XT32[j, i1], XT32[j, i2], XT32[j, i3]
        row = centT32[j, first:first + width]
        for g in range(width):
            c = row[g]
            t = x0 - c
            a0[g] += t * t
            t = x1 - c
            a1[g] += t * t
            t = x2 - c
            a2[g] += t * t
            t = x3 - c
            a3[g] += t * t


@jit
def _one(XT32, centT32, first, width, i, near):
    """:func:`_four` for one record."""
    near[:width] = 0.0
    for j in range(XT32.shape[0]):
        x = XT32[j, i]
        row = centT32[j, first:first + width]
        for g in range(width):
            t = x - row[g]
            near[g] += t * t


@jit
def screened_fill(s, start, stop, d32):
    """:func:`core.methods.refine_nearest.fill` for records ``start .. stop − 1``, the
    same lists and bounds, screened in float32 (``d32``: scratch of shape (4, groups
    rounded up to a multiple of 16), float32, one per thread).

    ``fill`` measures every group exactly and keeps the ``w + 1`` nearest (w the lists'
    length); here every group is measured in float32, four records at a time, and the
    least of each lane of 16 groups kept. The (w + 1)-th least of those, T, is at least
    the (w + 1)-th float32 distance, so every group among the w + 1 nearest lies within
    T + 2 · SLACK32 in float32: only the lanes whose least does are measured exactly,
    in id order (fewer still: the (w + 1)-th float32 distance among them plus the
    rounding bounds the (w + 1)-th nearest too), and so are the groups within the
    bound's reach. With fewer lanes than w + 1 every group is measured exactly. The
    lists and bounds are ``fill``'s bit for bit (the tests compare them); at 20,000 × 10
    a fill of lists of 64 took 0.30 s against 0.48 s, of 16 0.18 s against 0.22 s.
    """
    n_groups = s.meta[N_GROUPS]
    width = s.cand_g.shape[1]
    lanes = (n_groups + _LANE - 1) // _LANE
    d32[:, n_groups:lanes * _LANE] = FAR  # a lane's tail: no group
    listed = np.zeros(n_groups, dtype=np.bool_)
    ids, near_ones = np.empty(n_groups, dtype=np.int64), np.empty(n_groups, dtype=np.float32)
    work = np.empty(max(n_groups, lanes), dtype=np.float32)
    slack = 2.0 * s.fmeta[SLACK32]
    least = np.empty(lanes, dtype=np.int32)
    one_bits = np.empty(1, dtype=np.int32)
    one = one_bits.view(np.float32)
    top_g = np.empty(width + 1, dtype=np.int64)
    top_d = np.empty(width + 1)
    acc = np.empty((4, _BLOCK), dtype=np.float32)
    for i in range(start, stop, 4):
        take = min(4, stop - i)
        for first in range(0, n_groups, _BLOCK):
            size = min(_BLOCK, n_groups - first)
            if take == 4:
                _four(s.XT32, s.centT32, first, size, i, i + 1, i + 2, i + 3, acc)
            else:
                for q in range(take):
                    _one(s.XT32, s.centT32, first, size, i + q, acc[q])
            for q in range(take):
                d32[q, first:first + size] = acc[q, :size]
        for q in range(take):
            _screened_list(s, i + q, d32[q, :lanes * _LANE], least, one_bits, one, top_g,
                           top_d, listed, ids, near_ones, work, slack)


@jit
def _screened_list(s, i, near, least, one_bits, one, top_g, top_d, listed, ids, near_ones,
                   work, slack):
    """Record i's list and bound from its float32 distances ``near``, whole lanes
    (module notes; ``listed``: scratch, all False; ``work``: scratch)."""
    n_groups, width = s.meta[N_GROUPS], s.cand_g.shape[1]
    lanes = near.shape[0] // _LANE
    bits = near.view(np.int32)
    for lane in range(lanes):
        first = lane * _LANE
        smallest = bits[first]
        for g in range(1, _LANE):
            value = bits[first + g]
            smallest = value if value < smallest else smallest
        least[lane] = smallest
    screen = np.inf
    if lanes > width:
        work_bits = work.view(np.int32)
        work_bits[:lanes] = least[:lanes]
        one_bits[0] = _kth(work_bits[:lanes], width)
        screen = one[0] + slack
    found = 0  # the live groups within the screen, in id order, and their float32 distance
    for lane in range(lanes):
        one_bits[0] = least[lane]
        if not one[0] <= screen:
            continue
        for g in range(lane * _LANE, lane * _LANE + _LANE):
            if near[g] <= screen and g < n_groups and s.count[g] > 0:
                ids[found], near_ones[found] = g, near[g]
                found += 1
    limit = screen
    if found > width + 1:  # the (w + 1)-th of those bounds the (w + 1)-th nearest
        work[:found] = near_ones[:found]
        limit = _kth(work[:found], width) + slack
    m = 0
    for t in range(found):
        if not near_ones[t] <= limit:
            continue
        m = keep_nearest(top_g, top_d, m, width, ids[t], distance(s, i, ids[t]))
    n_listed = min(m, width)
    set_list(s, i, top_g, top_d, n_listed)
    for t in range(n_listed):
        listed[top_g[t]] = True
    beta = np.inf
    if m > width:
        # As fill: an unlisted group's anchor is no nearer than its centroid less its
        # drift (the groups compared directly are left out: listed when anchored).
        beta = np.sqrt(top_d[width])
        reach = np.sqrt(top_d[width]) + s.fmeta[DRIFT]
        reach *= reach
        if reach + slack <= screen:  # every group within reach was found above
            for t in range(found):
                g = ids[t]
                if near_ones[t] <= reach + slack and not s.extra[g] and not listed[g]:
                    dist = distance(s, i, g)
                    if dist <= reach:
                        beta = min(beta, np.sqrt(dist) - s.rho[g])
        else:
            wide = reach + slack
            for lane in range(lanes):
                one_bits[0] = least[lane]
                if not one[0] <= wide:
                    continue
                for g in range(lane * _LANE, lane * _LANE + _LANE):
                    if near[g] <= wide and g < n_groups and s.count[g] > 0 \
                            and not s.extra[g] and not listed[g]:
                        dist = distance(s, i, g)
                        if dist <= reach:
                            beta = min(beta, np.sqrt(dist) - s.rho[g])
    for t in range(n_listed):
        listed[top_g[t]] = False
    s.beta[i] = beta


@jit
def _kth(values, k):
    """The k-th least of ``values`` (from 0), which it reorders (Hoare's selection)."""
    low, high = 0, len(values) - 1
    while low < high:
        pivot = values[(low + high) // 2]
        a, b = low, high
        while a <= b:
            while values[a] < pivot:
                a += 1
            while values[b] > pivot:
                b -= 1
            if a <= b:
                values[a], values[b] = values[b], values[a]
                a += 1
                b -= 1
        if k <= b:
            high = b
        elif k >= a:
            low = a
        else:
            return values[k]
    return values[k]
