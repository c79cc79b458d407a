"""Decompose, Shrink and SplitLargeGroups compiled, over :class:`refine_kernel.State`.

Khomnotai, Lin, Peng & Santra (2018), Figures 2, 4 and 3, with the choices documented in
:mod:`core.methods.refine`, step for step as the numpy reference
(:mod:`core.methods.refine_reference`). Each pass works on groups ``p .. p_end − 1`` and
returns ``(next p, changed)`` once it has looked at about ``budget`` records, so the
caller (:mod:`core.methods.refine_passes`) reports progress and honours Cancel between
calls (about every 0.1 s); calling again from ``next p`` continues the same pass exactly.
"""

from __future__ import annotations

import numpy as np

from core.methods.refine_kernel import (
    DECOMPOSE,
    HEAD,
    N_GROUPS,
    N_LIVE,
    QUIET,
    SHRINK,
    SPLIT,
    TAIL,
    TRACK,
    append,
    distance,
    distance_to,
    dot,
    group_sse,
    jit,
    members,
    unlink,
)
from core.methods.refine_nearest import changed, nearest, nearest_all
from core.methods.refine_track import log_change, remember, remember_split, unchanged

__all__ = ["decompose_chunk", "shrink_chunk", "split_chunk"]


@jit
def _add(s, g, recs, m):
    """Records ``recs[:m]`` join group g (Σx grows by their sum, added in order)."""
    d = s.X.shape[1]
    part = s.X[recs[0]].copy()
    part_sq = s.sq[recs[0]]
    for t in range(1, m):
        for j in range(d):
            part[j] += s.X[recs[t], j]
        part_sq += s.sq[recs[t]]
    formed = s.count[g] == 0
    if formed:
        s.meta[N_LIVE] += 1
    s.count[g] += m
    for j in range(d):
        s.sums[g, j] += part[j]
    s.sumsq[g] += part_sq
    for t in range(m):
        append(s, g, recs[t])
    changed(s, g, formed)
    log_change(s, g)


@jit
def _remove(s, g, recs, m):
    d = s.X.shape[1]
    s.count[g] -= m
    if s.count[g] == 0:
        s.meta[N_LIVE] -= 1
        s.sums[g, :] = 0.0
        s.sumsq[g] = 0.0
    else:
        part = s.X[recs[0]].copy()
        part_sq = s.sq[recs[0]]
        for t in range(1, m):
            for j in range(d):
                part[j] += s.X[recs[t], j]
            part_sq += s.sq[recs[t]]
        for j in range(d):
            s.sums[g, j] -= part[j]
        s.sumsq[g] -= part_sq
    for t in range(m):
        unlink(s, g, recs[t])
    changed(s, g, False)
    log_change(s, g)


@jit
def _going_to(recs, targets, m, g, out):
    """The records among ``recs[:m]`` whose target is g, in order; their number."""
    n_moving = 0
    for t in range(m):
        if targets[t] == g:
            out[n_moving] = recs[t]
            n_moving += 1
    return n_moving


@jit
def decompose_chunk(s, k, tol, p, p_end, budget, scratch):
    """Figure 2: dissolve group p into the groups nearest to its records if SSE drops."""
    d = s.X.shape[1]
    recs, targets, moving = scratch[:, 0], scratch[:, 1], scratch[:, 2]
    new_sums = np.empty(d)
    near = np.empty(s.X.shape[0])
    any_change = False
    done = 0
    while p < p_end and done < budget:
        if s.count[p] == 0 or s.meta[N_LIVE] < 2:
            p += 1
            continue
        m = members(s, p, recs)
        if unchanged(s, p, DECOMPOSE, recs, m):  # refine_track: the last look holds
            done += 1
            p += 1
            continue
        done += m
        nearest_all(s, recs, m, p, targets)
        receivers = np.unique(targets[:m])
        delta = -group_sse(s, p)
        for g in receivers:
            n_moving = _going_to(recs, targets, m, g, moving)
            part = s.X[moving[0]].copy()
            part_sq = s.sq[moving[0]]
            for t in range(1, n_moving):
                for j in range(d):
                    part[j] += s.X[moving[t], j]
                part_sq += s.sq[moving[t]]
            for j in range(d):
                new_sums[j] = s.sums[g, j] + part[j]
            new_count = s.count[g] + n_moving
            new_sumsq = s.sumsq[g] + part_sq
            delta += (new_sumsq - dot(new_sums) / new_count) - group_sse(s, g)
        if delta < -tol:
            everyone = recs[:m].copy()
            _remove(s, p, everyone, m)
            for g in receivers:
                _add(s, g, moving, _going_to(everyone, targets, m, g, moving))
            any_change = True
        elif s.meta[TRACK]:
            for t in range(m):
                near[t] = distance(s, recs[t], targets[t])
            remember(s, p, DECOMPOSE, recs, m, targets, near)
        p += 1
    return p, any_change


@jit
def shrink_chunk(s, k, tol, p, p_end, budget, scratch):
    """Figure 4: move p's best record to its nearest group while that lowers the SSE.

    After a move only p and the receiving group t have changed, so the nearest group of
    each record left in p (p itself excluded) stays what it was unless t is now nearer
    (one distance; on a tie the lower id), or it was t, which moved (asked again): the
    answers are the ones a new question for every record would give.
    """
    recs, targets, one = scratch[:, 0], scratch[:, 1], scratch[:1, 2]
    near = np.empty(s.X.shape[0])  # the squared distance to targets[t]
    any_change = False
    done = 0
    while p < p_end and done < budget:
        moved_to, gone = -1, -1
        if s.count[p] > k and s.meta[N_LIVE] > 1 and \
                unchanged(s, p, SHRINK, recs, members(s, p, recs)):
            done += 1
            p += 1
            continue
        while s.count[p] > k and s.meta[N_LIVE] > 1:
            m = members(s, p, recs)
            done += m
            if moved_to < 0:
                nearest_all(s, recs, m, p, targets)
                for t in range(m):
                    near[t] = distance(s, recs[t], targets[t])
            else:
                _after_move(s, recs, m, p, targets, near, moved_to, gone)
            n_p = s.count[p]
            best, best_target, best_gain = -1, -1, np.inf
            for t in range(m):
                g = targets[t]
                n_t = s.count[g]
                leave = n_p / (n_p - 1) * distance(s, recs[t], p)
                join = n_t / (n_t + 1) * near[t]
                gain = join - leave
                if gain < best_gain:
                    best, best_target, best_gain = t, g, gain
            if not best_gain < -tol:
                remember(s, p, SHRINK, recs, m, targets, near)
                break
            one[0] = recs[best]
            _remove(s, p, one, 1)
            _add(s, best_target, one, 1)
            moved_to, gone = best_target, best
            any_change = True
        p += 1
    return p, any_change


@jit
def _after_move(s, recs, m, p, targets, near, moved_to, gone):
    """The nearest groups of p's records ``recs[:m]`` after the record at ``gone`` left
    for group ``moved_to`` (``targets`` and ``near`` still hold the answers before)."""
    for t in range(gone, m):
        targets[t], near[t] = targets[t + 1], near[t + 1]
    for t in range(m):
        if targets[t] == moved_to:
            targets[t] = nearest(s, recs[t], p)
            near[t] = distance(s, recs[t], targets[t])
            continue
        dist = distance(s, recs[t], moved_to)
        if dist < near[t] or (dist == near[t] and moved_to < targets[t]):
            targets[t], near[t] = moved_to, dist


@jit
def split_chunk(s, k, tol, p, p_end, budget, scratch):
    """Figure 3 on every group of 2k or more records; a split is kept if SSE drops."""
    any_change = False
    done = 0
    while p < p_end and done < budget:
        if s.count[p] >= 2 * k:
            if unchanged(s, p, SPLIT, scratch[:, 0], members(s, p, scratch[:, 0])):
                done += 1
                p += 1
                continue
            done += int(s.count[p])
            if _split(s, k, tol, p, scratch):
                any_change = True
        p += 1
    return p, any_change


@jit
def _farthest_or_nearest(s, remaining, left, point, farthest):
    """Position in ``remaining[:left]`` of the record farthest from (or nearest to)
    ``point``; the first one on ties."""
    best, best_d = 0, -1.0 if farthest else np.inf
    for t in range(left):
        dist = distance_to(s, remaining[t], point)
        if (dist > best_d) if farthest else (dist < best_d):
            best, best_d = t, dist
    return best


@jit
def _among(values, length, value):
    for t in range(length):
        if values[t] == value:
            return True
    return False


@jit
def _pop(values, length, at):
    value = values[at]
    for t in range(at, length - 1):
        values[t] = values[t + 1]
    return value


@jit
def _split(s, k, tol, p, scratch):
    """Figure 3 on group p; whether the split was kept.

    The SSE change is summed over the groups the split touches: −SSE(p), less each
    receiving group's SSE before (in the order they first received), plus each new
    group's SSE and each receiving group's after. A split not kept puts p's and the
    receiving groups' records and statistics back exactly as they were (none is
    recomputed), and it is tried without logging its changes
    (:mod:`core.methods.refine_track`).
    """
    d = s.X.shape[1]
    saved, remaining, group, receiver = scratch[:, 0], scratch[:, 1], scratch[:, 2], \
        scratch[:, 3]
    s.meta[QUIET] = 1
    m = members(s, p, saved)
    p_sse, p_count, p_sumsq, p_sums = group_sse(s, p), s.count[p], s.sumsq[p], \
        s.sums[p].copy()
    saved_groups = s.meta[N_GROUPS]
    left = m
    remaining[:m] = saved[:m]
    _remove(s, p, saved, m)
    point = np.empty(d)
    while True:
        point[:] = s.X[remaining[0]]
        for t in range(1, left):
            for j in range(d):
                point[j] += s.X[remaining[t], j]
        for j in range(d):
            point[j] /= left
        group[0] = _pop(remaining, left, _farthest_or_nearest(s, remaining, left, point,
                                                               True))
        left -= 1
        size = 1
        total = s.X[group[0]].copy()
        while size < k:
            for j in range(d):
                point[j] = total[j] / size
            record = _pop(remaining, left, _farthest_or_nearest(s, remaining, left, point,
                                                                False))
            left -= 1
            group[size] = record
            size += 1
            for j in range(d):
                total[j] += s.X[record, j]
        g = s.meta[N_GROUPS]
        s.meta[N_GROUPS] += 1
        s.count[g], s.sumsq[g], s.sums[g, :] = 0.0, 0.0, 0.0
        s.gint[g, HEAD], s.gint[g, TAIL] = -1, -1
        s.stamp[g, :] = -1
        _add(s, g, group, size)
        if left <= k:
            break
    # the rest, one by one, to the nearest group; the receiving groups as they were
    answer = np.empty(left)
    taken = np.empty(left, dtype=np.int64)
    before = np.empty((left, 3))  # count, Σ|x|², SSE
    before_sums = np.empty((left, d))
    n_taken = 0
    one = group[:1]
    for t in range(left):
        g = nearest(s, remaining[t], -1)
        receiver[t] = g
        answer[t] = distance(s, remaining[t], g)
        if g < saved_groups and not _among(taken, n_taken, g):
            taken[n_taken] = g
            before[n_taken, 0], before[n_taken, 1] = s.count[g], s.sumsq[g]
            before[n_taken, 2] = group_sse(s, g)
            before_sums[n_taken, :] = s.sums[g, :]
            n_taken += 1
        one[0] = remaining[t]
        _add(s, g, one, 1)
    delta = -p_sse
    for u in range(n_taken):
        delta -= before[u, 2]
    for g in range(saved_groups, s.meta[N_GROUPS]):
        delta += group_sse(s, g)
    for u in range(n_taken):
        delta += group_sse(s, taken[u])
    s.meta[QUIET] = 0
    if delta < -tol:
        log_change(s, p)
        for g in range(saved_groups, s.meta[N_GROUPS]):
            log_change(s, g)
        for u in range(n_taken):
            log_change(s, taken[u])
        return True
    # undo: the split did not lower the SSE
    for t in range(left):
        if receiver[t] < saved_groups:
            unlink(s, receiver[t], remaining[t])
    for u in range(n_taken):
        g = taken[u]
        s.count[g], s.sumsq[g], s.sums[g, :] = before[u, 0], before[u, 1], before_sums[u, :]
        changed(s, g, False)
    for g in range(saved_groups, s.meta[N_GROUPS]):
        s.count[g], s.sumsq[g], s.sums[g, :] = 0.0, 0.0, 0.0
        s.meta[N_LIVE] -= 1
        changed(s, g, False)
    s.meta[N_GROUPS] = saved_groups
    for t in range(m):
        append(s, p, saved[t])
    s.count[p], s.sumsq[p], s.sums[p, :] = p_count, p_sumsq, p_sums
    s.meta[N_LIVE] += 1
    changed(s, p, True)
    remember_split(s, p, saved, m, remaining, receiver, answer, left, saved_groups)
    return False
