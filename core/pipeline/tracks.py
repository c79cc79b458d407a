"""Kept columns that nearly follow a quasi-identifier, measured on the release.

:mod:`core.pipeline.relations` finds the columns that are exact functions of a
quasi-identifier. A column that tracks one without being a function of it (a copy with
noise or with a miscoded cell, tax paid beside earnings) undoes part of the masking
too: a released class's records share their quasi-identifier values, but an intruder
who knows a record's original value picks it out of its class by the kept column.

The measure is that attack, by an intruder who knows how the two relate in rank. Each
of the two columns is read as its average ranks over the records where it has a value
(divided by their number, so both run over (0, 1]). In every released class holding
at least two records with both values, whose quasi-identifier values are not all
equal, each such record is picked out when its kept value's rank is the nearest, among
the class's, to its quasi-identifier's rank (1/t when t are equally near, its own
among them). Records of a class with equal quasi-identifier values cannot be told
apart by it, whatever is kept, so the attack is measured against the records it could
tell apart, one per distinct value in each class (``apart``); chance picks out one
per class.

A column counts as following the quasi-identifier when the records picked out are
at least halfway from chance to all that could be, ``picked − C ≥ HALFWAY·(apart −
C)`` over the C classes measured (60 % of them when a class's 5 records all differ),
over at least ``MIN_CLASSES`` classes, with at least ``3·√C`` records picked out beyond
chance. Choice, measured on the benchmark data sets with MDAV at k = 3, 5 and 10 and
random sets of four quasi-identifiers (the other columns kept): on Census, PEARNVAL
(earnings) and FICA (social security tax, a function of earnings up to a cap) kept
beside a masked WSALVAL (wages) pick out 58–82 % of the records, against 10–33 % by
chance, and are said; so is Tarragona's gross profit beside a masked net profit at
k = 3 and 5. EIA and Adult gave none. A copy with noise at a tenth of the quasi-
identifier's standard deviation is said; at a fifth it is not. A function of two
quasi-identifiers (income per hour) is not measured.

The class blocks are searched in sorted order (:func:`_picked_kernel`, or whole-array
numpy passes without the compiled kernels), ``n·log`` of the class sizes: one pass over
a 1,000,000-record release took 0.1 s (2 s in numpy), with a class of 500,000 records
of a 0/1 column among them as well. :func:`picked_out_reference` compares every pair of
a class's records and is the tests' reference. They are given ranks (finite, distinct
values at least 1/(2m) apart), so equally near values are runs of equal values.
"""

from __future__ import annotations

import math
import numpy as np

from core.compiled import kernel

__all__ = ["HALFWAY", "MIN_CLASSES", "class_blocks", "picked_out", "picked_out_reference",
           "ranks", "rises", "tracks"]

HALFWAY = 0.5
MIN_CLASSES = 10


def ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks of the present values (1..m) divided by m; NaN stays NaN."""
    values = np.asarray(values, dtype=np.float64)
    out = np.full(len(values), np.nan)
    present = np.flatnonzero(~np.isnan(values))
    m = len(present)
    if not m:
        return out
    order = present[np.argsort(values[present])]  # any order: ties are averaged
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    if len(starts) == m:  # distinct values: ranks 1..m
        out[order] = np.arange(1, m + 1) / m
        return out
    ends = np.r_[starts[1:], m]
    average = (starts + ends + 1) / 2.0  # ranks start + 1 .. end, averaged
    out[order] = np.repeat(average, ends - starts) / m
    return out


def class_blocks(classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, starts)``: the records sorted by class (ids 0..), each class's block
    ``order[starts[b]:starts[b + 1]]``, for :func:`picked_out` (made once per release)."""
    classes = np.asarray(classes, dtype=np.int64)
    order = np.argsort(classes, kind="stable")
    ordered = classes[order]
    return order, np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1], True])


def picked_out(blocks: tuple[np.ndarray, np.ndarray], q: np.ndarray, c: np.ndarray
               ) -> tuple[float, int, int]:
    """``(picked, apart, classes)`` of the attack (module notes) on the ranks ``q``
    (the quasi-identifier's) and ``c`` (the kept column's), NaN where missing, in the
    classes ``blocks`` (:func:`class_blocks`): records picked out (fractions for ties),
    records the quasi-identifier tells apart in the classes measured, and those
    classes."""
    order, starts = blocks
    if not len(order):
        return 0.0, 0, 0
    if _picked_compiled is None:
        return _picked_numpy(order, starts, np.asarray(q, dtype=np.float64),
                             np.asarray(c, dtype=np.float64))
    widest = int(np.diff(starts).max())
    found = _picked_compiled(order, starts, np.asarray(q, dtype=np.float64),
                             np.asarray(c, dtype=np.float64), np.empty(widest, np.int64),
                             np.empty(widest))
    return float(found[0]), int(found[1]), int(found[2])


def rises(q: np.ndarray, c: np.ndarray) -> bool:
    """Whether the ranks ``c`` rise with the ranks ``q`` over the records with both
    (their covariance ≥ 0); an intruder reads a falling column by the ranks of its
    values negated."""
    both = ~np.isnan(q) & ~np.isnan(c)
    if both.sum() < 2:
        return True
    x, y = q[both] - q[both].mean(), c[both] - c[both].mean()
    return float(x @ y) >= 0


def _picked_kernel(order, starts, q, c, rows, values):
    """:func:`picked_out` over the class blocks ``order[starts[b]:starts[b + 1]]``;
    ``rows`` and ``values`` are scratch of the widest block's length."""
    picked, records, classes = 0.0, 0, 0
    for b in range(starts.shape[0] - 1):
        m = 0
        for t in range(starts[b], starts[b + 1]):
            i = order[t]
            if q[i] == q[i] and c[i] == c[i]:
                rows[m] = i
                m += 1
        if m < 2:
            continue
        constant = True
        for t in range(1, m):
            if q[rows[t]] != q[rows[0]]:
                constant = False
                break
        if constant:
            continue
        _sorted_into(q, rows, m, values)
        apart = 1  # the distinct values of the quasi-identifier: records told apart
        for t in range(1, m):
            if values[t] != values[t - 1]:
                apart += 1
        _sorted_into(c, rows, m, values)
        block = values[:m]
        for t in range(m):
            x = q[rows[t]]
            p = np.searchsorted(block, x)
            best = np.inf
            if p < m:
                best = block[p] - x
            if p > 0 and x - block[p - 1] < best:
                best = x - block[p - 1]
            ties = 0  # the runs of equal values beside p as near (ranks: module notes)
            if p < m and block[p] - x == best:
                ties += np.searchsorted(block, block[p], side="right") - p
            if p > 0 and x - block[p - 1] == best:
                ties += p - np.searchsorted(block, block[p - 1], side="left")
            if abs(c[rows[t]] - x) == best:
                picked += 1.0 / ties
        records += apart
        classes += 1
    return np.array([picked, float(records), float(classes)])


def _picked_numpy(order, starts, q, c):
    """:func:`_picked_kernel` in whole-array numpy passes (without the compiled
    kernels): the same comparisons on the same values, so the same sums."""
    classes = np.empty(len(order), dtype=np.int64)
    classes[order] = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    both = np.flatnonzero(~np.isnan(q) & ~np.isnan(c))
    cls, x, y = classes[both], q[both], c[both]
    n_classes = len(starts) - 1
    by_q = np.lexsort((x, cls))  # the distinct values of q in each class
    new_value = np.r_[True, (cls[by_q][1:] != cls[by_q][:-1]) | (x[by_q][1:] != x[by_q][:-1])]
    apart = np.bincount(cls[by_q], weights=new_value, minlength=n_classes)
    size = np.bincount(cls, minlength=n_classes)
    measured = (size >= 2) & (apart >= 2)
    keep = measured[cls]
    cls, x, y = cls[keep], x[keep], y[keep]
    if not len(cls):
        return 0.0, 0, 0
    by_c = np.lexsort((y, cls))
    cls_c, values = cls[by_c], y[by_c]
    first = np.searchsorted(cls_c, np.arange(n_classes))  # each class's block in values
    last = np.searchsorted(cls_c, np.arange(n_classes), side="right")
    # Each record's p: its class's kept values below its q, by one sort of both (a q
    # before a kept value equal to it).
    m = len(cls)
    merged = np.lexsort((np.r_[np.ones(m), np.zeros(m)], np.r_[y, x], np.r_[cls, cls]))
    is_value = merged < m
    below = np.cumsum(is_value) - is_value  # kept values sorted before each position
    queries = merged[~is_value] - m
    p = np.empty(m, dtype=np.int64)
    p[queries] = below[~is_value]  # global positions in values
    start, stop = first[cls], last[cls]
    right = np.where(p < stop, values[np.minimum(p, len(values) - 1)] - x, np.inf)
    left = np.where(p > start, x - values[np.maximum(p - 1, 0)], np.inf)
    best = np.minimum(right, left)
    run_start = np.r_[0, np.flatnonzero((cls_c[1:] != cls_c[:-1]) | (values[1:] != values[:-1]))
                      + 1]
    run_length = np.diff(np.r_[run_start, len(values)])
    run_of = np.repeat(np.arange(len(run_start)), run_length)
    ties = (np.where((p < stop) & (right == best),
                     run_length[run_of[np.minimum(p, len(values) - 1)]], 0)
            + np.where((p > start) & (left == best),
                       run_length[run_of[np.maximum(p - 1, 0)]], 0))
    hit = np.abs(y - x) == best
    picked = float(np.sum(1.0 / ties[hit]))
    return picked, int(apart[measured].sum()), int(measured.sum())


def _sorted_into(source, rows, m, out):
    """``source[rows[:m]]`` in ascending order into ``out[:m]`` (no NaN among them):
    by insertion for a class of a few records, else numpy's sort."""
    if m > 32:
        out[:m] = np.sort(source[rows[:m]])
        return
    for t in range(m):
        v = source[rows[t]]
        j = t
        while j > 0 and out[j - 1] > v:
            out[j] = out[j - 1]
            j -= 1
        out[j] = v


_sorted_into_compiled = kernel(_sorted_into)
if _sorted_into_compiled is not None:
    _sorted_into = _sorted_into_compiled
_picked_compiled = kernel(_picked_kernel)


def picked_out_reference(classes: np.ndarray, q: np.ndarray, c: np.ndarray
                         ) -> tuple[float, int, int]:
    """:func:`picked_out` by comparing every pair of a class's records (numpy)."""
    classes, q, c = (np.asarray(classes, dtype=np.int64), np.asarray(q, dtype=np.float64),
                     np.asarray(c, dtype=np.float64))
    picked, records, measured = 0.0, 0, 0
    both = ~np.isnan(q) & ~np.isnan(c)
    for cls in np.unique(classes[both]):
        rows = np.flatnonzero((classes == cls) & both)
        x, y = q[rows], c[rows]
        if len(rows) < 2 or (x == x[0]).all():
            continue
        distance = np.abs(x[:, None] - y[None, :])
        nearest = distance == distance.min(axis=1, keepdims=True)
        picked += float((np.diag(nearest) / nearest.sum(axis=1)).sum())
        records += len(np.unique(x))
        measured += 1
    return picked, records, measured


def tracks(picked: float, apart: int, classes: int) -> bool:
    """Whether the attack's result (:func:`picked_out`) counts as following (module
    notes)."""
    if classes < MIN_CLASSES:
        return False
    beyond = picked - classes
    return beyond >= HALFWAY * (apart - classes) and beyond >= 3.0 * math.sqrt(classes)
