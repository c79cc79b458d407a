"""The nearest group of a record by a sweep over every group: float32 first.

The other way to the candidate lists (:mod:`core.methods.refine_nearest`), chosen by
:mod:`core.methods.refine_way` where groups move too often for the lists to be kept up:
the records of a question are measured against every group's centroid in float32, four
records per sweep (each centroid value read once for four, in vector registers); every
group whose float32 distance lies within the rounding of the least (``2 · SLACK32``, far
above the float32 error of a squared distance) is then measured exactly, in the fixed
form of :mod:`core.methods.refine_kernel`. So the answer is the brute-force answer bit
for bit: the nearest live group other than the one left out, the lower id on a tie.
"""

from __future__ import annotations

import numpy as np

from core.methods.refine_kernel import (
    CROWDED,
    DRIFT,
    N_GROUPS,
    SAMPLED,
    SLACK32,
    SWEPT,
    centre,
    distance,
    jit,
)

__all__ = ["FAR", "sweep"]

FAR = 1e18  # a float32 centroid no record comes near ((x − 1e18)² ≈ 1e36 < 3.4e38)
_BLOCK = 512  # groups per block: four records' float32 distances stay in the L1 cache
_SAMPLE = 64  # one question in _SAMPLE swept is checked for crowding


@jit
def sweep(s, recs, m, exclude, out):
    """Records ``recs[:m]`` against every live group ≠ ``exclude``: in float32 first,
    four records per sweep over the centroids, then exactly for every group within the
    float32 rounding of the least.

    A dead group's float32 centroid is far away (:func:`changed`), and so is
    ``exclude``'s for the sweep, so a block's least float32 distance is a live group's.
    Non-negative float32 values order as their bits (as int32), whose least numba
    computes in vector registers.
    """
    n_groups = s.meta[N_GROUPS]
    s.meta[SWEPT] += m
    slack = 2.0 * s.fmeta[SLACK32]
    if 0 <= exclude < n_groups:
        s.centT32[:, exclude] = FAR
    limits = np.full(m, np.inf)
    best = np.full(m, np.inf)
    out[:m] = -1
    acc = np.empty((4, _BLOCK), dtype=np.float32)
    bits = acc.view(np.int32)
    one_bits = np.empty(1, dtype=np.int32)
    one = one_bits.view(np.float32)
    for first in range(0, n_groups, _BLOCK):
        width = min(_BLOCK, n_groups - first)
        for r in range(0, m, 4):
            if m - r >= 4:
                _four(s.XT32, s.centT32, first, width, recs[r], recs[r + 1], recs[r + 2],
                      recs[r + 3], acc)
            else:
                for q in range(m - r):
                    _one(s.XT32, s.centT32, first, width, recs[r + q], acc[q])
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
                        h = first + g
                        if h == exclude or s.count[h] <= 0:
                            continue
                        dist = distance(s, i, h)
                        if dist < best[r + q]:
                            best[r + q], out[r + q] = dist, h
                limits[r + q] = limit
    for t in range(m):
        if (s.meta[SWEPT] - t) % _SAMPLE == 0 and out[t] >= 0:
            _crowding(s, recs[t], best[t], acc[0])
    if 0 <= exclude < n_groups and s.count[exclude] > 0:
        centre(s, exclude)


@jit
def _crowding(s, i, best, near):
    """Whether the short lists (as long as now) would prove record i's nearest group (at
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
    if near_ones >= s.cand_g.shape[1]:
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
