"""Compiled V-MDAV: the groups of :func:`core.methods.vmdav.vmdav` in one pass each.

The reference (:func:`core.methods.vmdav.vmdav_reference`) makes k + 2 passes over the
unassigned records per group (e's distances, one per member for the distance to the
group, one per extension for d_out). This path makes one and takes the same decisions,
so the labels are the same on every input.

Farthest from the centroid
    The centroid c is fixed for the whole run, so the records are sorted once by their
    squared distance to c (largest first). The answer is the record first in the input
    among the unassigned ones within the reference's tie tolerance of the largest: a
    range of that order, whose smallest unassigned record number a segment tree gives.
The k−1 nearest to e
    One pass computes D, the squared distances from e to every unassigned record, in
    the reference's floating-point form (columns summed in order), and keeps the k−1
    smallest, ties to the record first in the input.
Extension (e_min, d_in, d_out)
    Every unassigned r has to_group(r) ≤ D[r], since e is a member; with B the smallest
    D, the triangle inequality |r − e| ≤ |r − m| + |m − e| limits the records that can
    be within the tie tolerance of the group's nearest to a ball around e (a few
    hundred records of 10-d standard-normal data, found by a branch-free sweep of D).
    The ball's records are gathered into a small column-wise block first (they lie
    scattered in memory, and independent loads overlap), then measured against every
    member column by column, in the fixed form: e_min and d_in. d_out is first bounded
    by e_min's distance to another record of that ball; only when that bound does not
    already stop the group is the exact d_out found, among the records the triangle
    inequality leaves (partial sums that already exceed the best so far are cut short:
    sums of non-negative terms never decrease, so the cut is exact). Bounds prune with
    a margin of 1e−9 relative (rounding is about 1e−15), so the exact decisions are the
    reference's.

The unassigned records sit column by column in a buffer in input order, compacted once
at most half of it is unassigned. A nominal attribute's block of indicator columns is
one column of the buffer, the row's category (:mod:`core.methods.block_sums`): its two
nonzero terms, in column order, come from a table made for each query, so a distance is
the sum over every column, term for term, read in a few values where the embedding has
one per category (the census table of ``bench_estimate.py --nominal``, 59 columns, is 6
in the buffer; V-MDAV on it at 100,000 records took 11.4 s against 48 s over every
column, the same labels). The kernel forms groups until about ``_BUDGET`` buffer rows
have been measured (about 0.1 s), then returns, so that progress is reported
(one step per group, as the reference does) and Cancel is honoured.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods.block_sums import block_layout, block_terms, query_tables
from core.progress import TaskState

__all__ = ["vmdav_compiled", "fits_compiled", "squared_distances"]

_EPS = np.finfo(np.float64).eps
_BUDGET = 30_000_000  # buffer rows measured, about 0.1 s


def squared_distances(rows: np.ndarray, point: np.ndarray) -> np.ndarray:
    """``Σ_j (rows[:, j] − point[j])²``, summed over the columns in order.

    The one floating-point form of a distance in V-MDAV: the reference and the compiled
    loops compute exactly these operations in this order, so they agree bit for bit.
    """
    out = np.zeros(len(rows))
    for j in range(rows.shape[1]):
        diff = rows[:, j] - point[j]
        out += diff * diff
    return out


def fits_compiled(X: np.ndarray) -> bool:
    """Whether the compiled path applies: finite values in 1e−100 ≤ |x| ≤ 1e100 or 0.

    The pruning bounds of the compiled path allow for relative rounding; in that range
    no difference of two values, nor its square, overflows or falls below the normal
    range, where rounding would no longer be relative. Other data take the reference.
    """
    if X.size == 0:
        return True
    magnitude = np.abs(X)
    if not np.isfinite(magnitude).all() or magnitude.max() > 1e100:
        return False
    return bool(((magnitude == 0) | (magnitude >= 1e-100)).all())


@kernel
def _segment_min(tree, size, lo, hi):
    """Smallest value at leaves ``lo .. hi−1`` of a min segment tree of ``size`` leaves."""
    best = tree[0]
    lo += size
    hi += size
    while lo < hi:
        if lo & 1:
            best = min(best, tree[lo])
            lo += 1
        if hi & 1:
            hi -= 1
            best = min(best, tree[hi])
        lo >>= 1
        hi >>= 1
    return best


@kernel
def _segment_set(tree, size, leaf, value):
    node = leaf + size
    tree[node] = value
    node >>= 1
    while node >= 1:
        tree[node] = min(tree[2 * node], tree[2 * node + 1])
        node >>= 1


@kernel
def _pass(columns, layout, q, terms, out, length):
    """Squared distances from ``q`` to the first ``length`` buffer rows, fixed form.

    A buffer column is an attribute's column, or a nominal block's category codes
    (:func:`~core.methods.block_sums.block_layout`), whose terms the query's table
    ``terms`` gives (:func:`~core.methods.block_sums.block_terms`): the same sums, term
    after term, as every column's.
    """
    for i in range(length):
        out[i] = 0.0
    for c in range(columns.shape[0]):
        column = columns[c]
        if layout[c, 1] == 1:
            qj = q[layout[c, 0]]
            for i in range(length):
                diff = column[i] - qj
                out[i] += diff * diff
            continue
        at = layout[c, 2]
        for i in range(length):
            code = at + 2 * np.int64(column[i])
            out[i] += terms[code]
            out[i] += terms[code + 1]


@kernel
def _distance(X, a, b):
    acc = 0.0
    for j in range(X.shape[1]):
        diff = X[a, j] - X[b, j]
        acc += diff * diff
    return acc


@kernel
def _widen(radius2):
    """A squared radius enlarged past the rounding of the distances it bounds."""
    return radius2 * (1.0 + 1e-9) + 1e-290


@kernel
def _distance_below(columns, layout, q, terms, i, ceiling):
    """The distance from ``q`` to buffer row i (:func:`_pass`'s sum, ``terms`` q's
    table), or a partial sum of it once that exceeds ``ceiling``.

    Partial sums of non-negative terms never decrease, even rounded, so a value above
    the ceiling proves the full sum is above it; at or below it, the value is exact.
    """
    acc = 0.0
    for c in range(columns.shape[0]):
        if layout[c, 1] == 1:
            diff = columns[c, i] - q[layout[c, 0]]
            acc += diff * diff
        else:
            code = layout[c, 2] + 2 * np.int64(columns[c, i])
            acc += terms[code]
            acc += terms[code + 1]
        if acc > ceiling:
            return acc
    return acc


@kernel
def _gather(columns, ball, inside, points):
    """``points[c, f]``: buffer column c of the ball's row f (one independent load
    each)."""
    for f in range(inside):
        row = ball[f]
        for c in range(columns.shape[0]):
            points[c, f] = columns[c, row]


@kernel
def _from_point(X, record, layout, value, terms, held, points, inside, out):
    """``out[f]`` = ``_distance(X, record, row f)``, the columns summed in order
    (:func:`_pass` on the gathered rows)."""
    block_terms(X[record], layout, value, terms, held)
    _pass(points, layout, X[record], terms, out, inside)


@kernel
def _extend(X, ids, alive, length, D, near, near_d2, listed, members, rho, size, largest,
            count, gamma, tie_factor, columns, layout, value, terms, held, ball, points,
            to_group, scratch):
    """Step 2b for one group; D holds the squared distances of the buffer rows from e,
    ``near[:listed]`` the positions of e's nearest (ascending, ties in input order).

    Returns the buffer position of the record to add (−1 when the group stops) and the
    work done, in buffer rows.
    """
    if size >= largest or count == 0:
        return -1, 0
    # Any unassigned r has to_group(r) <= D[r] (e is a member): B bounds the minimum.
    B = np.inf
    reach = 0.0
    for f in range(listed):  # e's nearest, sorted: the first unassigned one is the minimum
        if alive[near[f]]:
            B = near_d2[f]
            break
    if B == np.inf:
        for i in range(length):
            if alive[i] and D[i] < B:
                B = D[i]
    for i in range(size):
        reach = max(reach, rho[i])
    # |x_r − e| <= |x_r − m| + |m − e|: only rows this close to e can be that close.
    best = B
    for f in range(listed):  # e's nearest first: a small best narrows the ball
        if alive[near[f]]:
            for m in range(size):
                best = min(best, _distance(X, members[m], ids[near[f]]))
    limit = _widen((reach + np.sqrt(_widen(best * tie_factor))) ** 2)
    inside = 0
    for i in range(length):  # without branches: most rows are outside
        ball[inside] = i
        inside += (D[i] <= limit) & alive[i]
    # The ball's rows lie scattered in memory: gather them, then measure them column
    # by column against every member (the same sums as _distance).
    _gather(columns, ball, inside, points)
    for f in range(inside):
        to_group[f] = np.inf
    for m in range(size):
        _from_point(X, members[m], layout, value, terms, held, points, inside, scratch)
        for f in range(inside):
            to_group[f] = min(to_group[f], scratch[f])
    for f in range(inside):
        best = min(best, to_group[f])
    at = -1  # e_min: the first in input order within the tie tolerance of the best
    for f in range(inside):
        if to_group[f] <= best * tie_factor and (at < 0 or ids[ball[f]] < ids[ball[at]]):
            at = f
    e_min = ball[at]
    d_in2 = to_group[at]
    work = length + inside * (size + 1)
    # d_out² is at most the distance to any other unassigned record; when even that
    # bound fails the rule, the exact d_out fails it too.
    _from_point(X, ids[e_min], layout, value, terms, held, points, inside, scratch)
    bound = np.inf
    for f in range(inside):
        if f != at:
            bound = min(bound, scratch[f])
    if not np.sqrt(d_in2 * tie_factor) < gamma * np.sqrt(bound):  # ties do not join
        return -1, work
    limit = _widen((np.sqrt(D[e_min]) + np.sqrt(bound)) ** 2)
    d_out2 = np.inf  # terms: e_min's table, from _from_point
    q = X[ids[e_min]]
    for i in range(length):
        if alive[i] and i != e_min and D[i] <= limit:
            d_out2 = min(d_out2, _distance_below(columns, layout, q, terms, i, d_out2))
    if not np.sqrt(d_in2 * tie_factor) < gamma * np.sqrt(d_out2):
        return -1, work + length
    return e_min, work + length


@kernel
def _scan(columns, layout, q, terms, alive, pe, length, D, near, near_d2, keep):
    """D, the squared distances from e = ``q`` (at buffer position ``pe``), and e's
    ``keep`` nearest unassigned rows, ascending, ties in input order; returns how many.
    """
    _pass(columns, layout, q, terms, D, length)
    found = 0
    gate = np.inf  # a row at or above it is not kept: one comparison for most rows
    for i in range(length):  # input order: an equal distance never displaces
        d2 = D[i]
        if d2 >= gate or not alive[i] or i == pe:
            continue
        slot = found if found < keep else keep - 1
        while slot > 0 and near_d2[slot - 1] > d2:
            near_d2[slot] = near_d2[slot - 1]
            near[slot] = near[slot - 1]
            slot -= 1
        near_d2[slot] = d2
        near[slot] = i
        if found < keep:
            found += 1
        if found == keep:
            gate = near_d2[keep - 1]
    return found


@kernel
def _form_groups(X, columns, layout, value, terms, held, ids, alive, length, where, labels,
                 order, negated, rank, segment, size, cursor, counts, group, count, k, gamma,
                 far_factor, tie_factor, budget):
    """Form groups until ``budget`` distances are computed or fewer than k remain.

    ``columns`` (buffer columns × buffer, :func:`~core.methods.block_sums.block_layout`)
    holds the unassigned records in input order (``terms``: the query's table of the
    blocks' terms), ``ids`` their record numbers, ``where`` a record's buffer position.
    Returns
    ``(group, count)``; ``counts[g]`` is the number unassigned after group g.
    """
    n = X.shape[0]
    work = 0
    largest = 2 * k - 1
    D = np.empty(length)
    members = np.empty(largest, np.int64)
    rho = np.empty(largest)
    keep = 2 * k - 1  # e's k−1 nearest, then k more: the bound B of the extension step
    near = np.empty(keep + 1, np.int64)
    near_d2 = np.empty(keep + 1)
    ball = np.empty(length, np.int64)
    points = np.empty((columns.shape[0], length))
    to_group = np.empty(length)
    scratch = np.empty(length)
    while count >= k and work < budget:
        p = cursor[0]
        while labels[order[p]] >= 0:
            p += 1
        cursor[0] = p
        threshold = -negated[p] * far_factor
        last = np.searchsorted(negated, -threshold, side="right")
        e = _segment_min(segment, size, p, last)
        pe = where[e]
        block_terms(X[e], layout, value, terms, held)
        found = _scan(columns, layout, X[e], terms, alive, pe, length, D, near, near_d2,
                      keep)
        work += length
        chosen = min(found, k - 1)
        for f in range(k):
            i = near[f] if f < chosen else pe
            alive[i] = False
            labels[ids[i]] = group
            _segment_set(segment, size, rank[ids[i]], n)
            members[f] = ids[i]
            rho[f] = np.sqrt(D[i])
        rho[k - 1] = 0.0
        count -= k
        members_n = k
        while gamma > 0:
            i, spent = _extend(X, ids, alive, length, D, near, near_d2, found, members,
                               rho, members_n, largest, count, gamma, tie_factor,
                               columns, layout, value, terms, held, ball, points,
                               to_group, scratch)
            work += spent
            if i < 0:
                break
            alive[i] = False
            labels[ids[i]] = group
            _segment_set(segment, size, rank[ids[i]], n)
            members[members_n] = ids[i]
            rho[members_n] = np.sqrt(D[i])
            members_n += 1
            count -= 1
        counts[group] = count
        group += 1
    return group, count


def vmdav_compiled(X: np.ndarray, *, k: int, gamma: float, state: TaskState):
    """Steps 1–2 of V-MDAV (see :mod:`core.methods.vmdav`) on the compiled path.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes), C-contiguous float64
        Checked by the caller (finite, ``fits_compiled``).
    k : int
    gamma : float
    state : TaskState
        Receives one step per group formed (after each batch) and may cancel the run.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group ids, −1 for the fewer than k records left for step 3.
    n_groups : int
    """
    n, d = X.shape
    labels = np.full(n, -1, dtype=np.int64)
    to_centre = squared_distances(X, X.mean(axis=0))
    order = np.lexsort((np.arange(n), -to_centre))  # farthest first, ties in input order
    negated = -to_centre[order]
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    size = 1 << max(n - 1, 1).bit_length()
    segment = np.full(2 * size, n, dtype=np.int64)
    segment[size:size + n] = order
    for node in range(size - 1, 0, -1):
        segment[node] = min(segment[2 * node], segment[2 * node + 1])
    cursor = np.zeros(1, dtype=np.int64)
    counts = np.zeros(n // k + 1, dtype=np.int64)
    far_factor = 1.0 - 4.0 * (d + 2) * _EPS
    tie_factor = 1.0 + 4.0 * (d + 2) * _EPS
    codes, layout, value, _ = block_layout(X)
    terms, held = query_tables(layout)
    group, count = 0, n
    while count >= k:
        # The buffer: unassigned records in input order, column by column.
        ids = np.flatnonzero(labels < 0)
        columns = np.ascontiguousarray(codes[:, ids])
        alive = np.ones(len(ids), dtype=bool)
        where = np.full(n, -1, dtype=np.int64)
        where[ids] = np.arange(len(ids))
        while count >= k and count * 2 > len(ids):
            before = group
            group, count = _form_groups(
                X, columns, layout, value, terms, held, ids, alive, len(ids), where, labels,
                order, negated, rank, segment, size, cursor, counts, group, count, k,
                float(gamma), far_factor, tie_factor, _BUDGET)
            for g in range(before, group):
                state.step((n - counts[g]) / n, f"V-MDAV: {g + 1} groups formed")
    return labels, group
