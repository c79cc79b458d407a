"""Decompose, Shrink and SplitLargeGroups over :class:`refine_kernel.Arrays`, compiled.

Khomnotai, Lin, Peng & Santra (2018), Figures 2, 4 and 3, with the choices documented in
:mod:`core.methods.refine`. Each pass works on groups ``p .. p_end - 1`` and returns
``(next p, changed)`` once it has looked at about ``budget`` records, so the caller can
report progress and honour Cancel between calls; calling again from ``next p`` continues
the same pass exactly.
"""

from __future__ import annotations

import time

import numpy as np

from core.methods.refine_kernel import (
    GROUP, HEAD, IN_EXTRA, N_EXTRAS, N_GROUPS, N_LIVE, TAIL, Arrays, _append, _distance, _dot,
    _group_sse, _jit, _members, _to_group, _total_sse, _unlink,
)
from core.methods.refine_tree import nearest, touch

__all__ = ["refine_compiled", "decompose_chunk", "shrink_chunk", "split_chunk", "final_labels"]


@_jit
def _add(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras, g, recs, m):
    d = X.shape[1]
    part = X[recs[0]].copy()
    part_sq = sq[recs[0]]
    for t in range(1, m):
        for j in range(d):
            part[j] += X[recs[t], j]
        part_sq += sq[recs[t]]
    if count[g] == 0:
        meta[N_LIVE] += 1
    count[g] += m
    for j in range(d):
        sums[g, j] += part[j]
    sumsq[g] += part_sq
    for t in range(m):
        _append(rint, gint, g, recs[t])
    touch(count, sums, gint, meta, nodes, lo, hi, extras, g)


@_jit
def _remove(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras, g, recs, m):
    d = X.shape[1]
    count[g] -= m
    if count[g] == 0:
        meta[N_LIVE] -= 1
        sums[g, :] = 0.0
        sumsq[g] = 0.0
    else:
        part = X[recs[0]].copy()
        part_sq = sq[recs[0]]
        for t in range(1, m):
            for j in range(d):
                part[j] += X[recs[t], j]
            part_sq += sq[recs[t]]
        for j in range(d):
            sums[g, j] -= part[j]
        sumsq[g] -= part_sq
    for t in range(m):
        _unlink(rint, gint, g, recs[t])
    touch(count, sums, gint, meta, nodes, lo, hi, extras, g)


@_jit
def decompose_chunk(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, perm,
                    extras, cent, hint, k, tol, p, p_end, budget, scratch):
    """Figure 2: dissolve group p into the groups nearest to its records if SSE drops."""
    d = X.shape[1]
    recs, targets, moving = scratch[:, 0], scratch[:, 1], scratch[:, 2]
    changed = False
    done = 0
    while p < p_end and done < budget:
        if count[p] == 0 or meta[N_LIVE] < 2:
            p += 1
            continue
        m = _members(rint, gint, p, recs)
        done += m
        for t in range(m):
            targets[t] = nearest(X, recs[t], p, count, sums, gint, meta, nodes, lo, hi,
                                 perm, extras, cent, hint)
        receivers = np.unique(targets[:m])
        delta = -_group_sse(count, sumsq, sums, p)
        new_sums = np.empty(d)
        for g in receivers:
            n_moving = 0
            for t in range(m):
                if targets[t] == g:
                    moving[n_moving] = recs[t]
                    n_moving += 1
            part = X[moving[0]].copy()
            part_sq = sq[moving[0]]
            for t in range(1, n_moving):
                for j in range(d):
                    part[j] += X[moving[t], j]
                part_sq += sq[moving[t]]
            for j in range(d):
                new_sums[j] = sums[g, j] + part[j]
            new_count = count[g] + n_moving
            new_sumsq = sumsq[g] + part_sq
            delta += (new_sumsq - _dot(new_sums) / new_count) - \
                _group_sse(count, sumsq, sums, g)
        if delta < -tol:
            everyone = recs[:m].copy()
            _remove(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras, p,
                    everyone, m)
            for g in receivers:
                n_moving = 0
                for t in range(m):
                    if targets[t] == g:
                        moving[n_moving] = everyone[t]
                        n_moving += 1
                _add(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras, g,
                     moving, n_moving)
            changed = True
        p += 1
    return p, changed


@_jit
def shrink_chunk(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, perm,
                 extras, cent, hint, k, tol, p, p_end, budget, scratch):
    """Figure 4: move p's best record to its nearest group while that lowers the SSE."""
    recs, targets, one = scratch[:, 0], scratch[:, 1], scratch[:1, 2]
    changed = False
    done = 0
    while p < p_end and done < budget:
        while count[p] > k and meta[N_LIVE] > 1:
            m = _members(rint, gint, p, recs)
            done += m
            n_p = count[p]
            best, best_gain = -1, np.inf
            for t in range(m):
                targets[t] = nearest(X, recs[t], p, count, sums, gint, meta, nodes, lo, hi,
                                     perm, extras, cent, hint)
                g = targets[t]
                n_t = count[g]
                leave = n_p / (n_p - 1) * _to_group(X, recs[t], sums, count, p)
                join = n_t / (n_t + 1) * _to_group(X, recs[t], sums, count, g)
                gain = join - leave
                if gain < best_gain:
                    best, best_gain = t, gain
            if not best_gain < -tol:
                break
            one[0] = recs[best]
            _remove(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras, p,
                    one, 1)
            _add(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras,
                 targets[best], one, 1)
            changed = True
        p += 1
    return p, changed


@_jit
def split_chunk(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, perm,
                extras, cent, hint, k, tol, p, p_end, budget, scratch):
    """Figure 3 on every group of 2k or more records; a split is kept if SSE drops."""
    changed = False
    done = 0
    while p < p_end and done < budget:
        if count[p] >= 2 * k:
            done += int(count[p])
            if _split(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, perm,
                      extras, cent, hint, k, tol, p, scratch):
                changed = True
        p += 1
    return p, changed


@_jit
def _split(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, perm, extras,
           cent, hint, k, tol, p, scratch):
    d = X.shape[1]
    saved, remaining, group, receiver = scratch[:, 0], scratch[:, 1], scratch[:, 2], \
        scratch[:, 3]
    before = _total_sse(count, sumsq, sums, meta[N_GROUPS])
    m = _members(rint, gint, p, saved)
    saved_groups = meta[N_GROUPS]
    left = m
    remaining[:m] = saved[:m]
    _remove(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras, p,
            saved, m)
    centre = np.empty(d)
    while True:
        centre[:] = X[remaining[0]]
        for t in range(1, left):
            for j in range(d):
                centre[j] += X[remaining[t], j]
        for j in range(d):
            centre[j] /= left
        far, far_d = 0, -1.0
        for t in range(left):
            dist = _distance(X, remaining[t], centre)
            if dist > far_d:
                far, far_d = t, dist
        size = 1
        group[0] = remaining[far]
        left = _pop(remaining, left, far)
        total = X[group[0]].copy()
        while size < k:
            for j in range(d):
                centre[j] = total[j] / size
            near, near_d = 0, np.inf
            for t in range(left):
                dist = _distance(X, remaining[t], centre)
                if dist < near_d:
                    near, near_d = t, dist
            record = remaining[near]
            left = _pop(remaining, left, near)
            group[size] = record
            size += 1
            for j in range(d):
                total[j] += X[record, j]
        g = meta[N_GROUPS]
        meta[N_GROUPS] += 1
        count[g] = 0.0
        sumsq[g] = 0.0
        sums[g, :] = 0.0
        gint[g, HEAD] = -1
        gint[g, TAIL] = -1
        _add(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras, g, group,
             size)
        if left <= k:
            break
    one = group[:1]
    for t in range(left):
        one[0] = remaining[t]
        receiver[t] = nearest(X, remaining[t], -1, count, sums, gint, meta, nodes, lo, hi,
                              perm, extras, cent, hint)
        _add(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras,
             receiver[t], one, 1)
    if _total_sse(count, sumsq, sums, meta[N_GROUPS]) < before - tol:
        return True
    for t in range(left):  # undo: the split did not lower the SSE
        one[0] = remaining[t]
        _remove(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras,
                receiver[t], one, 1)
    for g in range(saved_groups, meta[N_GROUPS]):
        n_g = _members(rint, gint, g, group)
        _remove(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras, g,
                group, n_g)
    meta[N_GROUPS] = saved_groups
    kept = 0
    for e in range(meta[N_EXTRAS]):
        if extras[e] < saved_groups:
            extras[kept] = extras[e]
            kept += 1
        else:
            gint[extras[e], IN_EXTRA] = 0
    meta[N_EXTRAS] = kept
    _add(X, sq, rint, gint, count, sumsq, sums, meta, nodes, lo, hi, extras, p, saved, m)
    return False


@_jit
def _pop(values, length, at):
    for t in range(at, length - 1):
        values[t] = values[t + 1]
    return length - 1


@_jit
def final_labels(rint, count, n_groups):
    """Group ids 0..G−1 in the order of the live groups' ids."""
    rank = np.full(n_groups, -1, dtype=np.int64)
    r = 0
    for g in range(n_groups):
        if count[g] > 0:
            rank[g] = r
            r += 1
    out = np.empty(rint.shape[0], dtype=np.int64)
    for i in range(rint.shape[0]):
        out[i] = rank[rint[i, GROUP]]
    return out


def refine_compiled(X, labels, *, k, method, max_rounds, state, use_tree=True):
    """:func:`core.methods.refine.refine` with the compiled passes.

    ``use_tree=False`` searches the nearest group by brute force (for tests).
    """
    arrays = Arrays(X, labels, use_tree=use_tree)
    scratch = np.empty((len(arrays.X), 4), dtype=np.int64)
    budget = [256]

    def run(chunk, start, stop, message, reserve=False):
        p, p_end, changed = 0, int(arrays.meta[N_GROUPS]), False
        while p < p_end:
            if reserve:  # a split makes at most n/k groups
                arrays.reserve(len(arrays.X) // k + 1)
            began = time.perf_counter()
            p, more = chunk(*arrays.args(), k, arrays.tolerance, p, p_end, budget[0],
                            scratch)
            changed |= bool(more)
            elapsed = time.perf_counter() - began
            # About 0.1 s per call: progress and Cancel stay prompt at any size.
            budget[0] = int(min(max(budget[0] * 0.1 / max(elapsed, 1e-4), 16),
                                4 * budget[0], 1 << 40))
            state.step(start + (stop - start) * p / max(p_end, 1), message)
        return changed

    def decompose(start, stop):
        middle = start + 0.9 * (stop - start)
        changed = run(decompose_chunk, start, middle, "refining: decompose")
        return run(split_chunk, middle, stop, "refining: split", reserve=True) | changed

    def shrink(start, stop):
        middle = start + 0.9 * (stop - start)
        changed = run(shrink_chunk, start, middle, "refining: shrink")
        return run(split_chunk, middle, stop, "refining: split", reserve=True) | changed

    if method == "tfrp2":
        decompose(0.0, 1.0)
    else:
        for round_ in range(max_rounds):
            span = 0.5 ** (round_ + 1)
            start = 1.0 - 2 * span
            changed = decompose(start, start + span / 2)
            changed |= shrink(start + span / 2, start + span)
            if not changed:
                break
    state.step(1.0, "refinement done")
    return final_labels(arrays.rint, arrays.count, int(arrays.meta[N_GROUPS]))
