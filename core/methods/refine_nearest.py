"""The exact nearest group of a record in the compiled refinement: candidate lists (the
other way, a sweep over every group, is :mod:`core.methods.refine_sweep`; which one a
run takes, :mod:`core.methods.refine_way`).

Refinement asks, again and again, for the group whose centroid is nearest to a record
(its own group excluded). On standard-normal data in ten dimensions the nearest centroid
lies about as far away as the data's spread, so a spatial tree over the centroids prunes
little (a KD-tree search there costs about as much as comparing all groups); but only a
few groups change between two questions about the same record. So each record keeps a
short list:

candidates
    Up to ``CANDIDATES`` (:mod:`core.methods.refine_kernel`) groups, each with its
    squared distance and the version of the group it was measured at. A group that
    changed since is measured again when asked. IGD lengthens every list to
    ``LONG_CANDIDATES`` where the short ones seldom prove a nearest
    (:func:`core.methods.refine_passes._lists_fail`).
bound β
    Every live group not listed, and not compared directly, has its *anchor* at least
    β from the record.
anchors
    Each group has an anchor, a past position of its centroid, at most the drift δ
    from its centroid. A group that moves farther, or is formed, is compared directly
    with every record asked about (up to ``EXTRAS`` such groups); then all of them are
    anchored at their centroids in one pass over the records, which lists each for
    every record whose β it breaks (a float32 first look, then the exact distance).
    So an unlisted group is at least β − δ from the record.

Answer: the nearest of the listed and directly compared groups (ties to the lower id) is
the nearest group if it is nearer than β − δ (less a rounding margin); otherwise the
record is compared with every group, which also refills its list. Distances are always
computed in the one fixed form of :mod:`core.methods.refine_kernel`, so the answer is the
brute-force answer bit for bit; the bounds only decide when to trust a list, with a
margin far above their rounding.
"""

from __future__ import annotations

import numpy as np

from core.methods.refine_kernel import (
    DRIFT,
    HELD,
    LISTS,
    MARGIN,
    MOVED,
    N_EXTRAS,
    N_GROUPS,
    QUERIES,
    RECOMPUTES,
    SCANS,
    SLACK32,
    SWEEPS,
    WAY,
    centre,
    distance,
    distance_to,
    jit,
    keep_nearest,
    set_list,
)
from core.methods.refine_sweep import FAR, sweep

__all__ = ["changed", "fill", "nearest", "nearest_all", "settle", "to_lists", "to_sweeps"]


@jit
def changed(s, g, formed):
    """Group g's members changed (``formed``: it was empty before)."""
    s.version[g] += 1
    if s.count[g] <= 0:
        s.centT32[:, g] = FAR  # no sweep finds it (core.methods.refine_sweep)
        return
    centre(s, g)
    if s.meta[WAY] == HELD or s.extra[g]:
        return
    _drifted(s, g, formed)


@jit
def _drifted(s, g, formed):
    """Group g's distance from its anchor (``rho``); a group farther than the drift, or
    formed, has moved (:func:`_moved`)."""
    drift = 0.0
    for j in range(s.X.shape[1]):
        t = s.cent[g, j] - s.anchor[g, j]
        drift += t * t
    s.rho[g] = np.sqrt(drift)
    if formed or s.rho[g] > s.fmeta[DRIFT]:
        _moved(s, g)


@jit
def _anchored(s, g):
    """Group g anchored at its centroid."""
    for j in range(s.X.shape[1]):
        s.anchor[g, j] = s.cent[g, j]
    s.rho[g] = 0.0


@jit
def _moved(s, g):
    """Group g moved farther than the drift from its anchor, or was formed."""
    s.meta[MOVED] += 1
    if s.meta[WAY] == SWEEPS:  # no lists to keep: the move is only counted
        _anchored(s, g)
        return
    s.extra[g] = 1
    s.extras[s.meta[N_EXTRAS]] = g
    s.meta[N_EXTRAS] += 1
    if s.meta[N_EXTRAS] == len(s.extras):  # sized in refine_kernel.make_state
        _anchor_extras(s)


@jit
def settle(s, versions, n_groups):
    """Back to the lists after a pass held (``meta[WAY] == HELD``: the sweeps answered,
    the lists were left as they were): every group changed since (``versions``, the
    groups' versions when the pass began, ``n_groups`` their number then) is anchored
    again if it moved farther than the drift or was formed in the pass.

    No list was touched in the pass, so no list dropped a group that was dead for a
    while (a split undone brings its group back): such a group is anchored again only
    if it moved, where on the lists it must be anchored as if formed.
    """
    s.meta[WAY] = LISTS
    for g in range(s.meta[N_GROUPS]):
        if s.count[g] <= 0 or s.extra[g]:
            continue
        formed = g >= n_groups
        if formed or s.version[g] != versions[g]:
            _drifted(s, g, formed)


@jit
def to_sweeps(s):
    """Answer every question by comparing with every group; the lists are left stale."""
    for e in range(s.meta[N_EXTRAS]):
        s.extra[s.extras[e]] = 0
    s.meta[N_EXTRAS] = 0
    s.meta[WAY] = SWEEPS


@jit
def to_lists(s):
    """Back to the lists: every group anchored at its centroid (the lists must then be
    filled again, :func:`fill`)."""
    for g in range(s.meta[N_GROUPS]):
        _anchored(s, g)
        s.extra[g] = 0
    s.meta[N_EXTRAS] = 0
    s.meta[WAY] = LISTS


@jit
def _anchor_extras(s):
    """Anchor every group compared directly so far at its centroid, and list it for
    every record whose bound it now breaks (one pass over the records for all)."""
    groups = np.empty(s.meta[N_EXTRAS], dtype=np.int64)
    m = 0
    for e in range(s.meta[N_EXTRAS]):
        g = s.extras[e]
        s.extra[g] = 0
        if s.count[g] > 0 and g < s.meta[N_GROUPS]:
            _anchored(s, g)
            groups[m] = g
            m += 1
    s.meta[N_EXTRAS] = 0
    s.meta[SCANS] += m
    n = s.X.shape[0]
    c32 = np.empty(s.X.shape[1], dtype=np.float32)
    for first in range(0, n, _BLOCK):  # a block of records stays in the L1 cache
        width = min(_BLOCK, n - first)
        acc = s.acc32[:width]
        for e in range(m):
            g = groups[e]
            for j in range(s.X.shape[1]):
                c32[j] = s.cent[g, j]
            # In float32 first (twice the speed); the few records within the bound plus
            # the rounding slack are measured exactly.
            acc[:] = 0.0
            for j in range(s.X.shape[1]):
                c = c32[j]
                row = s.XT32[j, first:first + width]
                for t in range(width):
                    diff = row[t] - c
                    acc[t] += diff * diff
            for t in range(width):
                bound = s.beta[first + t]
                if bound > 0.0 and acc[t] < bound * bound + s.fmeta[SLACK32]:
                    exact = distance(s, first + t, g)
                    if exact < bound * bound:
                        _list(s, first + t, g, exact)


@jit
def _list(s, i, g, d2):
    """Put group g (at squared distance d2, measured now) on record i's list."""
    m = s.n_cand[i]
    far = -1
    for t in range(m):
        if s.cand_g[i, t] == g:
            s.cand_d[i, t] = d2
            s.cand_v[i, t] = s.version[g]
            return
        if far < 0 or s.cand_d[i, t] > s.cand_d[i, far]:
            far = t
    if m < s.cand_g.shape[1]:
        s.cand_g[i, m], s.cand_d[i, m], s.cand_v[i, m] = g, d2, s.version[g]
        s.n_cand[i] = m + 1
        return
    if d2 >= s.cand_d[i, far]:  # g itself stays off the list; its anchor is its centroid
        s.beta[i] = min(s.beta[i], np.sqrt(d2))
        return
    dropped = s.cand_g[i, far]
    if s.count[dropped] > 0:
        s.beta[i] = min(s.beta[i], np.sqrt(distance_to(s, i, s.anchor[dropped])))
    s.cand_g[i, far], s.cand_d[i, far], s.cand_v[i, far] = g, d2, s.version[g]


@jit
def nearest_all(s, recs, m, exclude, out):
    """``out[t]`` = :func:`nearest` (s, recs[t], exclude) for t < m."""
    if s.meta[WAY] != LISTS:
        sweep(s, recs, m, exclude, out)
    else:
        for t in range(m):
            out[t] = nearest(s, recs[t], exclude)


@jit
def nearest(s, i, exclude):
    """The live group ≠ ``exclude`` whose centroid is nearest to record i (lower id on
    ties); -1 if there is none."""
    if s.meta[WAY] != LISTS:
        one, answer = np.full(1, i, dtype=np.int64), np.empty(1, dtype=np.int64)
        sweep(s, one, 1, exclude, answer)
        return answer[0]
    best_g, best_d = -1, np.inf
    n_groups = s.meta[N_GROUPS]
    m = s.n_cand[i]
    s.meta[QUERIES] += 1
    t = 0
    while t < m:
        g = s.cand_g[i, t]
        if s.cand_v[i, t] != s.version[g]:
            if s.count[g] <= 0 or g >= n_groups:
                m -= 1
                s.cand_g[i, t], s.cand_d[i, t], s.cand_v[i, t] = \
                    s.cand_g[i, m], s.cand_d[i, m], s.cand_v[i, m]
                continue
            s.cand_d[i, t] = distance(s, i, g)
            s.cand_v[i, t] = s.version[g]
        dist = s.cand_d[i, t]
        if g != exclude and (dist < best_d or (dist == best_d and g < best_g)):
            best_g, best_d = g, dist
        t += 1
    s.n_cand[i] = m
    for e in range(s.meta[N_EXTRAS]):
        g = s.extras[e]
        if g != exclude and g < n_groups and s.count[g] > 0:
            dist = distance(s, i, g)
            if dist < best_d or (dist == best_d and g < best_g):
                best_g, best_d = g, dist
    trusted = s.beta[i] - s.fmeta[DRIFT] - s.fmeta[MARGIN]
    if best_g >= 0 and trusted > 0.0 and best_d < trusted * trusted:
        return best_g
    s.meta[RECOMPUTES] += 1
    return _compare_all(s, i, exclude, s.acc)


@jit
def _compare_all(s, i, exclude, acc):
    """Record i against every live group: its answer, and a new list and bound."""
    n_groups = s.meta[N_GROUPS]
    for g in range(n_groups):
        acc[g] = 0.0
    for j in range(s.X.shape[1]):
        x = s.X[i, j]
        for g in range(n_groups):
            t = x - s.centT[j, g]
            acc[g] += t * t
    return _relist(s, i, exclude, acc)


@jit
def _relist(s, i, exclude, acc):
    """Record i's list and bound from its squared distances ``acc`` to every group."""
    n_groups = s.meta[N_GROUPS]
    width = s.cand_g.shape[1]
    top_g = np.empty(width + 1, dtype=np.int64)
    top_d = np.empty(width + 1)
    m = 0
    for g in range(n_groups):
        if s.count[g] > 0:
            m = keep_nearest(top_g, top_d, m, width, g, acc[g])
    listed = min(m, width)
    set_list(s, i, top_g, top_d, listed)
    beta = np.inf
    if m > width:
        # An unlisted group's anchor is no nearer than its centroid less its drift (the
        # groups compared directly are left out: they are listed when anchored).
        beta = np.sqrt(top_d[width])
        for t in range(listed):
            acc[top_g[t]] = np.inf
        reach = np.sqrt(top_d[width]) + s.fmeta[DRIFT]
        reach *= reach
        for g in range(n_groups):
            if acc[g] <= reach and s.count[g] > 0 and not s.extra[g]:
                beta = min(beta, np.sqrt(acc[g]) - s.rho[g])
    s.beta[i] = beta
    for t in range(m):
        if top_g[t] != exclude:
            return top_g[t]
    return -1


@jit
def fill(s, start, stop, acc):
    """Lists and bounds for records ``start .. stop − 1`` before the passes (``acc``:
    scratch of shape (4, groups), one per thread)."""
    n_groups = s.meta[N_GROUPS]
    for i in range(start, stop - 3, 4):
        # Four records per sweep over the centroids: each centroid value is read once.
        for first in range(0, n_groups, _BLOCK):
            width = min(_BLOCK, n_groups - first)
            a0, a1 = acc[0, first:first + width], acc[1, first:first + width]
            a2, a3 = acc[2, first:first + width], acc[3, first:first + width]
            a0[:], a1[:], a2[:], a3[:] = 0.0, 0.0, 0.0, 0.0
            for j in range(s.X.shape[1]):
                x0, x1, x2, x3 = s.X[i, j], s.X[i + 1, j], s.X[i + 2, j], s.X[i + 3, j]
                row = s.centT[j, first:first + width]
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
        for r in range(4):
            _relist(s, i + r, -1, acc[r])
    for i in range(start + (stop - start) // 4 * 4, stop):
        _compare_all(s, i, -1, acc[0])


_BLOCK = 512


