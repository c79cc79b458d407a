"""Algorithm 2 (k-anonymity-first) with compiled swap evaluation.

Soria-Comas et al., "t-Closeness through Microaggregation" (TKDE 2015), Algorithm 2.
:func:`kfirst_labels` forms the same clusters, with the same swaps, as the numpy
reference in :func:`core.methods.tcloseness.tc_kfirst` (the loop as the paper prints it,
its choices written down in :mod:`core.methods.tcloseness`); only the work per
candidate changes:

* a cluster's candidates y are scanned one at a time by :func:`swap_scan`, a compiled
  loop that prices every swap ``C ∪ {y} \\ {y′}`` in O(1) after an O(log |C|) lookup
  (:mod:`core.methods.tclose_emd`) and prepares the cluster again only after a swap;
* the candidates come from the pool's stream of nearest records
  (:meth:`~core.methods.spatial_pool.SpatialPool.nearest_stream`) a piece at a time, the
  first piece sized from the clusters just formed: every live record's distance to the
  seed is computed once, and the candidates are sorted a bucket at a time as they are
  reached. (At t = 0.1 a cluster of k = 5 late in the run looks at thousands of
  candidates, up to a fifth of the records left; no tree prunes such a search in ten
  dimensions.)

The pool is a :class:`~core.methods.spatial_pool.SpatialPool`: the same farthest and
nearest records as the reference's :class:`~core.methods.pool.RecordPool`, found on a
spatial index instead of a pass over every record left; its positions are the record
numbers.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from core.compiled import kernel
from core.methods.spatial_pool import SpatialPool
from core.methods.tclose_emd import NOMINAL, cluster_emd, pack_attributes
from core.methods.tclose_emd import _up_down
from core.methods.tclose_emd import ordered_state as _ordered_state
from core.methods.tclose_emd import swap_values as _swap_values
from core.privacy.emd import EMD_TOLERANCE
from core.progress import TaskState

__all__ = ["kfirst_labels", "swap_scan"]

# Clusters remembered when sizing a cluster's first piece of candidates: half the median
# of what the last _RECENT clusters looked at (at least _FIRST); each further piece is
# _GROWTH times the one before. The sizes only divide the work: the candidates come in
# the same order whatever they are, so the result does not depend on them. (100,000 ×
# 10, t = 0.1: 42.6–45.1 s against 50.2–52.5 s for the whole median and doubling.)
_RECENT, _FIRST, _START, _GROWTH = 16, 16, 0.5, 1.5


def _swap_scan(mem_pos, mem_codes, cand_pos, cand_codes, kinds, ms, G, P, counts, n, emd,
               limit, tolerance, result):
    """Algorithm 2's swap loop over the candidates in order, one at a time.

    ``mem_pos`` (s,) ascending pool positions of the members and ``mem_codes``
    (n_attributes, s) their codes are updated in place. Stops when the EMD is within
    ``limit`` or the candidates are used up. ``result`` receives
    (EMD, swaps made, candidates looked at).
    """
    A = mem_codes.shape[0]
    s = mem_codes.shape[1]
    sorted_codes = np.empty((A, s), dtype=np.int64)
    bounds = np.empty((A, s + 1, 4), dtype=np.int64)
    whole = np.empty((A, s + 2, 2), dtype=np.int64)
    member_up = np.empty((A, s), dtype=np.int64)
    member_down = np.empty((A, s), dtype=np.int64)
    totals = np.empty(A, dtype=np.int64)
    values = np.empty(s)
    out = np.empty(s)
    prepared = False
    swaps = 0
    i = 0
    while i < cand_pos.shape[0] and emd > limit:
        if not prepared:
            for a in range(A):
                for b in range(s):
                    sorted_codes[a, b] = mem_codes[a, b]
                sorted_codes[a].sort()
                if kinds[a] != NOMINAL and ms[a] > 1:
                    totals[a] = _ordered_state(sorted_codes[a], s, G[a], P[a], n, ms[a],
                                               bounds[a], whole[a])
                    for b in range(s):
                        up, down = _up_down(mem_codes[a, b], sorted_codes[a], s, P[a], n,
                                            bounds[a], whole[a])
                        member_up[a, b] = up
                        member_down[a, b] = down
            prepared = True
        for b in range(s):
            values[b] = -np.inf
        for a in range(A):
            _swap_values(kinds[a], ms[a], mem_codes[a], sorted_codes[a], s, cand_codes[a, i],
                         P[a], counts[a], n, bounds[a], whole[a], member_up[a],
                         member_down[a], totals[a], out)
            for b in range(s):
                if out[b] > values[b]:
                    values[b] = out[b]
        out_member = 0
        best = values[0]
        for b in range(1, s):
            if values[b] < best:
                best = values[b]
                out_member = b
        if best < emd - tolerance:
            # replace the member, keeping the members in pool (input) order
            position = cand_pos[i]
            b = out_member
            while b + 1 < s and mem_pos[b + 1] < position:
                mem_pos[b] = mem_pos[b + 1]
                for a in range(A):
                    mem_codes[a, b] = mem_codes[a, b + 1]
                b += 1
            while b > 0 and mem_pos[b - 1] > position:
                mem_pos[b] = mem_pos[b - 1]
                for a in range(A):
                    mem_codes[a, b] = mem_codes[a, b - 1]
                b -= 1
            mem_pos[b] = position
            for a in range(A):
                mem_codes[a, b] = cand_codes[a, i]
            emd = best
            swaps += 1
            prepared = False
        i += 1
    result[0] = emd
    result[1] = swaps
    result[2] = i


swap_scan = kernel(_swap_scan)


def kfirst_labels(X, attributes, k: int, t: float, state: TaskState):
    """Algorithm 2's clusters (before merging) and its swap count, compiled path.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes), float64
    attributes : sequence of TCloseAttribute
    k : int
    t : float
    state : TaskState
        Progress once per cluster formed; cancellation.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
    swaps : int
    """
    packed = pack_attributes(attributes)
    n = len(X)
    pool = SpatialPool(X, state.check)
    labels = np.full(n, -1, dtype=np.int64)
    limit = float(t) + EMD_TOLERANCE
    result = np.zeros(3)
    recent = deque([2 * k + 16], maxlen=_RECENT)
    tables = (packed.kinds, packed.ms, packed.cumulative, packed.prefix, packed.counts,
              packed.n)
    clusters = swaps = 0

    def generate(seed: int) -> None:
        nonlocal clusters, swaps
        if pool.count < 2 * k:
            chosen = pool.live_positions()
        else:
            want = max(_FIRST, int(_START * np.median(recent)) - k)
            stream = pool.nearest_stream(pool.point(seed), include=seed, expect=k + want)
            members = np.sort(stream.take(k))
            records = pool.records_at(members)
            emd = cluster_emd(packed.codes, records, k, packed.kinds, packed.ms,
                              packed.cumulative, packed.prefix, packed.counts, packed.n)
            codes = np.ascontiguousarray(packed.codes[:, records])
            looked = k
            while emd > limit and looked < pool.count:
                piece = stream.take(want)
                if not piece.size:  # the stream gives every live record: never
                    raise RuntimeError("tc-kfirst: the candidates ran out before the pool")
                piece_codes = np.ascontiguousarray(packed.codes[:, pool.records_at(piece)])
                swap_scan(members, codes, piece, piece_codes, *tables, emd, limit,
                          EMD_TOLERANCE, result)
                emd, swaps = float(result[0]), swaps + int(result[1])
                looked += int(result[2])
                want = int(want * _GROWTH)
            recent.append(looked)
            chosen = members
        labels[pool.remove(np.asarray(chosen))] = clusters
        clusters += 1
        state.step((n - pool.count) / n, f"k-anonymity-first: {clusters} clusters formed")

    while pool.count:
        x0 = pool.farthest(pool.centroid())
        x0_point = pool.point(x0)
        generate(x0)
        if pool.count:
            generate(pool.farthest(x0_point))
    return labels, swaps
