"""Kept columns that nearly follow a quasi-identifier, measured on the release.

:mod:`core.pipeline.relations` finds the columns that are exact functions of a
quasi-identifier. A column that tracks one without being a function of it (a copy with
noise or with a miscoded cell, tax paid beside earnings) undoes part of the masking
too: a released class's records share their quasi-identifier values, but an intruder
who knows a record's original value picks it out of its class by the kept column.

The measure is that attack, by an intruder who knows how the two relate in rank. Each
of the two columns is read as its average ranks over the records where it has a value
(divided by their number, so both run over (0, 1]); an ordinal quasi-identifier ranks
by its categories' order (:mod:`core.pipeline.follows`). In every released class holding
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
quasi-identifiers (income per hour) is attacked the same way on its values
(:mod:`core.pipeline.follows`).

A class of up to 32 records compares every pair of its records, in a few loops
without branches to mispredict; a larger one searches its sorted values
(:func:`_picked_kernel`, or whole-array numpy passes without the compiled kernels),
``n·log`` of its size. One pass over a 1,000,000-record release of classes of 5 took
0.012 s, against 0.040–0.048 s by sorting and searching every class in the same run
(``benchmarks/scale_follows.py``); a class of 500,000 records of a 0/1 column is
searched too. :func:`picked_out_reference` compares every pair of a class's records
in numpy and is the tests' reference. They are given ranks (finite, distinct values
at least 1/(2m) apart), so equally near values are runs of equal values, and a
distance's rounding never reorders two values.
"""

from __future__ import annotations

import math
import numpy as np

from core.compiled import kernel

__all__ = ["HALFWAY", "MIN_CLASSES", "Ranks", "class_blocks", "picked_out", "picked_out_reference",
           "ranks", "rises", "tracks"]

HALFWAY = 0.5
MIN_CLASSES = 10
_FEW = 32  # records in a class: up to this, the attack compares every pair


def ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks of the present values (1..m) divided by m; NaN stays NaN."""
    average, m = _average_ranks(values)
    return average / m if m else average


class Ranks:
    """A column's average ranks over its present values, read rising (:func:`ranks` of
    its values) or falling (:func:`ranks` of its values negated), bit for bit.

    Among the negated values a value's average rank is m + 1 − its own (a run of equal
    values from rank s + 1 to e averages (s + e + 1)/2; negated, it runs from m − e + 1
    to m − s), and ranks are whole or half numbers, exact in floats below 2**53, so one
    sort serves both ways. Ranks depend on the values, not on their order:
    ``ranks(values[order])`` is ``ranks(values)[order]``, so the original's ranks are
    made before there is a release and read in the release's class order
    (``order``)."""

    def __init__(self, values: np.ndarray):
        self._average, self.present = _average_ranks(values)

    def rising(self, order: np.ndarray | None = None) -> np.ndarray:
        average = self._average if order is None else self._average[order]
        return average / self.present if self.present else average

    def falling(self, order: np.ndarray | None = None) -> np.ndarray:
        average = self._average if order is None else self._average[order]
        return (self.present + 1 - average) / self.present if self.present else average


def _average_ranks(values: np.ndarray) -> tuple[np.ndarray, int]:
    """``(average ranks 1..m of the present values, NaN where missing; m)``."""
    values = np.asarray(values, dtype=np.float64)
    out = np.full(len(values), np.nan)
    present = np.flatnonzero(~np.isnan(values))
    m = len(present)
    if not m:
        return out, 0
    order = present[np.argsort(values[present])]  # any order: ties are averaged
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    if len(starts) == m:  # distinct values: ranks 1..m
        out[order] = np.arange(1, m + 1)
        return out, m
    ends = np.r_[starts[1:], m]
    average = (starts + ends + 1) / 2.0  # ranks start + 1 .. end, averaged
    out[order] = np.repeat(average, ends - starts)
    return out, m


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
                             np.empty(widest), np.empty(widest))
    return float(found[0]), int(found[1]), int(found[2])


def rises(q: np.ndarray, c: np.ndarray) -> bool:
    """Whether the ranks ``c`` rise with the ranks ``q`` over the records with both
    (their covariance ≥ 0); an intruder reads a falling column by the ranks of its
    values negated."""
    both = ~np.isnan(q) & ~np.isnan(c)
    present = int(np.count_nonzero(both))
    if present < 2:
        return True
    if present < len(both):  # else every record: the same values, not copied
        q, c = q[both], c[both]
    x, y = q - q.mean(), c - c.mean()
    return float(x @ y) >= 0


def _picked_kernel(order, starts, q, c, rows, x, y):
    """:func:`picked_out` over the class blocks ``order[starts[b]:starts[b + 1]]``;
    ``rows``, ``x`` and ``y`` are scratch of the widest block's length. A class of up to
    :data:`_FEW` records compares every pair of its records (:func:`_few_picked`, as
    :func:`picked_out_reference` does, in a few branch-free loops), a larger one
    searches its sorted values (:func:`_many_picked`)."""
    picked, records, classes = 0.0, 0, 0
    for b in range(starts.shape[0] - 1):
        m = 0
        for t in range(starts[b], starts[b + 1]):
            i = order[t]
            if q[i] == q[i] and c[i] == c[i]:
                rows[m] = i
                x[m] = q[i]
                y[m] = c[i]
                m += 1
        if m < 2:
            continue
        # Each record's share is added to the one running sum, in the records' order.
        picked, apart = (_few_picked(x, y, m, picked) if m <= _FEW else
                         _many_picked(q, c, rows, m, x, picked))
        if apart < 2:  # the quasi-identifier's values are all equal: nobody told apart
            continue
        records += apart
        classes += 1
    return np.array([picked, float(records), float(classes)])


def _few_picked(x, y, m, picked):
    """``(picked, apart)`` of one class, its quasi-identifier's ranks ``x[:m]`` and the
    kept column's ``y[:m]``, by comparing every pair: a record is picked out when no
    kept value is nearer to its ``x`` than its own (1/t with the t as near), its share
    added to ``picked`` (the sum so far: added one record after another, the sum is
    the same float whichever way each class is searched); ``apart`` counts the
    distinct values of ``x``, and nothing is added when it is below 2. The distances
    are the sorted search's (:func:`_many_picked`), so both give the same bits."""
    apart = 0
    for t in range(m):
        new = 1
        for j in range(t):
            new &= x[j] != x[t]
        apart += new
    if apart < 2:
        return picked, apart
    for t in range(m):
        own = abs(y[t] - x[t])
        nearer, ties = 0, 0
        for j in range(m):
            distance = abs(y[j] - x[t])
            nearer += distance < own
            ties += distance == own
        if nearer == 0:
            picked += 1.0 / ties
    return picked, apart


def _many_picked(q, c, rows, m, values, picked):
    """:func:`_few_picked` of the class ``rows[:m]`` of ``q`` and ``c`` by sorting: each
    record's nearest kept values are beside its place among them (``values`` is
    scratch)."""
    values[:m] = np.sort(q[rows[:m]])
    apart = 1  # the distinct values of the quasi-identifier: records told apart
    for t in range(1, m):
        if values[t] != values[t - 1]:
            apart += 1
    if apart < 2:
        return picked, apart
    values[:m] = np.sort(c[rows[:m]])
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
    return picked, apart


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


if kernel(_few_picked) is not None:  # compiled, for the compiled attack to call
    _few_picked, _many_picked = kernel(_few_picked), kernel(_many_picked)
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
