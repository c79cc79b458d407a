"""Looks that need not be taken again: IGD's passes skip a group whose last look still
holds.

IGD repeats Decompose, Shrink and SplitLargeGroups until a round changes nothing, and
its last rounds change a few groups out of thousands (PCP + IGD at 100,000 × 10: the
last ten rounds moved 0–300 groups each, and each looked again at all 17,000 in about
0.4 s). A look at group p depends on p, and on each of its records' answers: the
nearest other group and its statistics (Decompose and Shrink), or, for a split not
kept, the group each record left over joined and how far it was (SplitLargeGroups). A
look that found nothing to do finds nothing again while none of those has changed, and
the state is then the same bit for bit, so skipping it changes no label. The numpy
reference (:mod:`core.methods.refine_reference`) looks at every group; the tests
compare the labels.

The bookkeeping, all in :class:`core.methods.refine_kernel.State`:

clock and log
    Every change of a group's members (:func:`log_change`, from the passes' ``_add``
    and ``_remove``) advances ``meta[CLOCK]``, sets the group's ``stamp[g, CHANGED]``
    and writes g to the ring ``log`` of the last ``LOG`` changes. A split being tried
    (``meta[QUIET]``) logs nothing: a split not kept puts every statistic back exactly
    as it was, and a kept one logs its groups at once.
looks
    A look that found nothing to do stamps the group with the clock for its pass
    (``stamp[p, DECOMPOSE | SHRINK | SPLIT]``) and keeps, per record, the answer it
    used: ``near_g``/``near_d`` (the nearest other group and its squared distance) or
    ``split_g``/``split_d`` (the group joined after a split, −1 for a new group or a
    record placed by the split itself, and its squared distance, −1 for the latter).
    ``since[r]`` is the clock at which a record's kept answer last differed from the
    one asked before. ``reach[p, pass − 1]`` bounds, from p's centroid, how far a group
    can be and still be nearer to one of p's records than its answer.
still holds (:func:`unchanged`)
    p has not changed since the look, no record's answer has changed since, no
    answer's group has changed since (its stamp), and every group changed since (the
    log after the look, whole) is dead, or farther from each record than its answer
    (strictly: an equal distance with a lower id would win the tie). A group past the
    reach is farther from every record by the triangle inequality, widened by far
    more than its rounding; the others are measured in the passes' own form. The log
    keeps each entry's centroid in float32 (a group's earlier entry is marked spent when
    it changes again), so that look streams through a few kilobytes; its rounding is
    far below ``SLACK32``, added to the reach. A look more than ``LOG`` changes ago is
    taken again. A look that still holds is stamped with the clock again, so the next
    one reads only the changes after it.

Only IGD keeps this (``meta[TRACK]``): TFRP2 is one pass.
"""

from __future__ import annotations

import numpy as np

from core.methods.refine_kernel import (
    CHANGED,
    CLOCK,
    LOG,
    MARGIN,
    QUIET,
    SKIPPED,
    SLACK32,
    SPLIT,
    TRACK,
    distance,
    jit,
)

__all__ = ["log_change", "remember", "remember_split", "unchanged"]

_WIDEN = 1e-6  # relative: the reach's rounding is below 1e-15 of it


@jit
def log_change(s, g):
    """Group g's members changed (a split being tried logs nothing): the log keeps g,
    whether it is live and its centroid in float32, and g's earlier entry is spent."""
    if s.meta[QUIET]:
        return
    s.meta[CLOCK] += 1
    clock = s.meta[CLOCK]
    before = s.stamp[g, CHANGED]
    if before >= 0 and clock - before < LOG:
        s.log_live[before % LOG] = 0
    s.stamp[g, CHANGED] = clock
    e = clock % LOG
    s.log[e] = g
    s.log_live[e] = s.count[g] > 0
    for j in range(s.X.shape[1]):
        s.log_x[e, j] = s.centT32[j, g]


@jit
def _keep(s, r, g, dist, split):
    """Record r's answer (group g at squared distance ``dist``) for its pass."""
    if split:
        if s.split_g[r] != g or s.split_d[r] != dist:
            s.split_g[r], s.split_d[r] = g, dist
            s.since[r] = s.meta[CLOCK]
    elif s.near_g[r] != g or s.near_d[r] != dist:
        s.near_g[r], s.near_d[r] = g, dist
        s.since[r] = s.meta[CLOCK]


@jit
def _stamp(s, p, kind, recs, m, farthest):
    """p looked at in pass ``kind`` with nothing to do; its answers reach
    ``farthest`` (squared)."""
    spread = 0.0
    for t in range(m):
        spread = max(spread, distance(s, recs[t], p))
    s.reach[p, kind - 1] = (np.sqrt(spread) + np.sqrt(farthest)) * (1.0 + _WIDEN) + \
        s.fmeta[MARGIN]
    s.stamp[p, kind] = s.meta[CLOCK]


@jit
def remember(s, p, kind, recs, m, targets, near):
    """Decompose or Shrink found nothing to do for p: record ``recs[t]``'s nearest
    other group is ``targets[t]`` at ``near[t]``."""
    if not s.meta[TRACK]:
        return
    farthest = 0.0
    for t in range(m):
        _keep(s, recs[t], targets[t], near[t], False)
        farthest = max(farthest, near[t])
    _stamp(s, p, kind, recs, m, farthest)


@jit
def remember_split(s, p, saved, m, left_over, receiver, answer, left, first_new):
    """A split of p (records ``saved[:m]``) was not kept: ``left_over[t]`` had joined
    ``receiver[t]`` at ``answer[t]`` (groups from ``first_new`` on were the split's)."""
    if not s.meta[TRACK]:
        return
    for t in range(m):
        _keep(s, saved[t], -1, -1.0, True)
    farthest = 0.0
    for t in range(left):
        g = receiver[t] if receiver[t] < first_new else -1
        _keep(s, left_over[t], g, answer[t], True)
        farthest = max(farthest, answer[t])
    _stamp(s, p, SPLIT, saved, m, farthest)


@jit
def unchanged(s, p, kind, recs, m):
    """Whether p's last look in pass ``kind`` (its records ``recs[:m]``) still holds
    (module notes); counts the looks skipped."""
    if not s.meta[TRACK]:
        return False
    looked = s.stamp[p, kind]
    clock = s.meta[CLOCK]
    if looked < 0 or s.stamp[p, CHANGED] > looked or clock - looked > LOG:
        return False
    split = kind == SPLIT
    for t in range(m):
        r = recs[t]
        if s.since[r] > looked:
            return False
        g = s.split_g[r] if split else s.near_g[r]
        if g >= 0 and s.stamp[g, CHANGED] > looked:
            return False
        if not split and g < 0:
            return False
    reach = s.reach[p, kind - 1]
    # the float32 look at the log's centroids errs by far less than SLACK32
    within = np.float32(reach * reach * (1.0 + _WIDEN) + s.fmeta[SLACK32])
    d = s.X.shape[1]
    centre = np.empty(d, dtype=np.float32)
    for j in range(d):
        centre[j] = s.cent[p, j]
    for q in range(looked + 1, clock + 1):
        e = q % LOG
        if not s.log_live[e]:  # dead since, or changed again (a later entry)
            continue
        apart = np.float32(0.0)
        for j in range(d):
            t = s.log_x[e, j] - centre[j]
            apart += t * t
        if apart > within:
            continue
        g = s.log[e]
        for t in range(m):
            r = recs[t]
            answer = s.split_d[r] if split else s.near_d[r]
            if answer >= 0.0 and distance(s, r, g) <= answer:
                return False
    s.stamp[p, kind] = clock  # the look holds now: the next one starts from here
    s.meta[SKIPPED] += 1
    return True
