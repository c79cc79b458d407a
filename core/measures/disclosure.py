"""Disclosure risk of a release: record linkage (DLD), interval disclosure (ID), k′.

The definitions are in :mod:`core.measures.measure.measure`'s notes (Nin, Mic1D-k, Section 2.3).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from core.compiled import kernel
from core.measures.linkage import TIE_TOLERANCE, build_tree, link_queries, squared_distances
from core.progress import TaskState
from core.verify.rows import DistinctRows, distinct_rows

__all__ = ["real_anonymity", "record_linkage", "LinkageOriginals", "linkage_originals",
           "interval_disclosure", "inside_count", "inside_counts"]


_TIE_TOLERANCE = TIE_TOLERANCE


def real_anonymity(masked_values: np.ndarray) -> float:
    """k′ = n / number of distinct rows of ``masked_values`` (n_records × n_attributes).

    Distinct as in ``numpy.unique(axis=0)``, found by hashing the rows
    (:func:`core.verify.rows.distinct_rows`).
    """
    masked_values = np.asarray(masked_values, dtype=np.float64)
    if len(masked_values) == 0:
        return 0.0
    return len(masked_values) / distinct_rows(masked_values, order="any").n_classes


class LinkageOriginals(NamedTuple):
    """What record linkage needs of the original records alone (:func:`linkage_originals`).

    ``originals`` are the distinct rows, ``points`` their values (one row each) and
    ``tree`` the compiled search's KD-tree over them (None without the kernels).
    """

    originals: DistinctRows
    points: np.ndarray
    tree: object


def linkage_originals(Z_original: np.ndarray, blocks=()) -> LinkageOriginals:
    """The distinct original rows and the search tree over them.

    ``blocks`` are the ``(first column, width)`` of nominal attributes' indicator
    columns, which the tree keeps as one column each where the rows fit
    (:func:`core.measures.linkage.build_tree`; the distances are the same). A function
    of the original alone, so it can be made ahead (on another thread) and given to
    :func:`record_linkage`.
    """
    Z_original = np.ascontiguousarray(Z_original, dtype=np.float64)
    n = len(Z_original)
    originals = distinct_rows(Z_original, order="any")
    # Distinct originals numbered by first appearance are the rows themselves, in order.
    points = (Z_original if originals.n_classes == n
              and np.array_equal(originals.first, np.arange(n)) else
              Z_original[originals.first])
    return LinkageOriginals(originals, points, build_tree(points, blocks) if n else None)


def record_linkage(Z_original: np.ndarray, Z_masked: np.ndarray, *,
                   classes: DistinctRows | None = None,
                   originals: LinkageOriginals | None = None, blocks=(),
                   per_class: bool = False, state: TaskState | None = None) -> float:
    """DLD: percent of masked records linked to their own original (ties split credit).

    For every masked record, the original records nearest to it (squared Euclidean
    distances summed over the attributes in order); if its own original is among the t
    nearest (with multiplicity; distances within a relative 1e-12 of the minimum are
    ties) it scores 1/t, else 0. Nin, Mic1D-k, Section 2.3, after Domingo-Ferrer &
    Torra (2001). The search is :mod:`core.measures.linkage`'s: over the distinct
    original rows, once per distinct masked row, never n × n.

    Parameters
    ----------
    Z_original, Z_masked : ndarray of shape (n_records, n_known)
        Row i of both is record i, on the known attributes, already z-scored.
    classes : DistinctRows, optional
        Classes of masked records whose rows of ``Z_masked`` are known to be equal
        (e.g. the classes of the released values they were embedded from, a finer
        partition than the distinct rows of ``Z_masked``): the distinct masked rows are
        then found among the classes' first rows only. The figure is the same.
    per_class : bool
        ``Z_masked`` holds one row per class of ``classes``, its records' masked row
        (``Z_masked[classes.first]`` of the records' rows): the records' rows are not
        made (a release of nominal attributes embeds to hundreds of columns). The
        figure is the same.
    originals : LinkageOriginals, optional
        :func:`linkage_originals` of ``Z_original``, when made ahead.
    blocks : sequence of (int, int), optional
        The ``(first column, width)`` of nominal attributes' indicator columns, for
        :func:`linkage_originals` when ``originals`` is not given. The figure is the
        same with or without them.
    state : TaskState, optional
        Progress and cancellation (the search returns to it every ~0.1 s).

    Returns
    -------
    float
        ``100 · mean_i [own original among the t_i nearest originals] / t_i``.

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [1.0]])
    >>> record_linkage(Z, Z)   # record 0 linked; records 1 and 2 tied: 1/2 each
    66.66666666666667
    """
    Z_original = np.ascontiguousarray(Z_original, dtype=np.float64)
    Z_masked = np.ascontiguousarray(Z_masked, dtype=np.float64)
    n = len(Z_original)
    if n == 0:
        return 0.0
    found, points, tree = (linkage_originals(Z_original, blocks) if originals is None
                           else originals)
    if per_class and (classes is None or len(Z_masked) != classes.n_classes):
        raise ValueError("per_class needs the classes and one masked row for each.")
    if classes is None:
        masked = distinct_rows(Z_masked, order="any")
        queries = Z_masked[masked.first]
        own = squared_distances(Z_masked, Z_original)
    else:  # the classes' rows: the queries among them, each record its class's
        rows = Z_masked if per_class else Z_masked[classes.first]
        among = distinct_rows(rows, order="any")
        masked = _merged(classes, among)
        queries = rows[among.first]
        # A record's row equals its class's up to the sign of a zero: same distances.
        own = squared_distances(rows, Z_original, rows=classes.inverse)
    own_point, query_of_record = found.inverse, masked.inverse
    bound = smallest_per_class(own, query_of_record, len(queries))
    nearest, tied = link_queries(points, found.counts, queries, bound,
                                 own_point[masked.first], tree=tree, state=state)
    # A record is linked when its own original is (tied) nearest; −1 marks none.
    linked = own <= nearest[query_of_record] * (1.0 + _TIE_TOLERANCE) ** 2
    credit = np.zeros(n)
    np.divide(1.0, tied[query_of_record], out=credit, where=linked)
    return float(100.0 * credit.sum() / n)


def smallest_per_class(values: np.ndarray, classes: np.ndarray, n_classes: int) -> np.ndarray:
    """``np.minimum.at(np.full(n_classes, inf), classes, values)``: each class's minimum.

    Compiled, one pass with numpy.minimum's rule (a NaN, once met, stays).
    """
    if _smallest_compiled is None:
        smallest = np.full(n_classes, np.inf)
        np.minimum.at(smallest, classes, values)
        return smallest
    return _smallest_compiled(np.asarray(values, dtype=np.float64),
                              np.asarray(classes, dtype=np.int64), n_classes)


def _smallest(values, classes, n_classes):
    smallest = np.full(n_classes, np.inf)
    for i in range(len(values)):
        c = classes[i]
        v = values[i]
        if v != v or v < smallest[c]:  # a NaN met stays: nothing is < NaN
            smallest[c] = v
    return smallest


_smallest_compiled = kernel(_smallest)


def _merged(classes: DistinctRows, among: DistinctRows) -> DistinctRows:
    """The classes of records whose classes are equal rows: ``among`` of ``classes``.

    ``among`` holds the classes of the rows ``classes.first`` (one per class).
    """
    counts = np.bincount(among.inverse, weights=classes.counts,
                         minlength=among.n_classes).astype(np.int64)
    return DistinctRows(among.inverse[classes.inverse], counts, classes.first[among.first])


def interval_disclosure(raw: np.ndarray, raw_masked: np.ndarray, *,
                        interval: float = 1.0) -> float:
    """ID: percent of original values inside the rank interval of their masked value.

    Parameters
    ----------
    raw, raw_masked : ndarray of shape (n_records, n_known)
    interval : float
        Half-width in percent of the records: ``w = ceil(interval/100 · n)`` ranks.

    Returns
    -------
    float

    Examples
    --------
    >>> x = np.array([[1.0], [2.0], [3.0], [4.0]])
    >>> interval_disclosure(x, x)
    100.0
    """
    raw = np.asarray(raw, dtype=np.float64)
    raw_masked = np.asarray(raw_masked, dtype=np.float64)
    if raw.size == 0:
        return float("nan")
    inside = sum(inside_count(raw[:, j], raw_masked[:, j], interval=interval)
                 for j in range(raw.shape[1]))
    return float(100.0 * (inside / raw.size))


def inside_count(original: np.ndarray, masked: np.ndarray, *, interval: float = 1.0,
                 classes: np.ndarray | None = None) -> int:
    """How many original values of one attribute lie in their masked value's interval.

    The interval of :func:`interval_disclosure`, for one column of n values.

    Parameters
    ----------
    original : ndarray of shape (n_records,)
    masked : ndarray of shape (n_records,), or (n_classes,) with ``classes``
        The masked values, or one per class of records released alike.
    interval : float
    classes : ndarray of shape (n_records,), optional
        The class of every record (``masked[classes]`` is the masked column): the
        positions are then searched once per class.

    The count of :func:`inside_counts` for this one column.
    """
    n = len(original)
    if n == 0:
        return 0
    if classes is None:
        classes = np.arange(n, dtype=np.int64)
    original = np.asarray(original, dtype=np.float64).reshape(n, 1)
    masked = np.asarray(masked, dtype=np.float64).reshape(-1, 1)
    return inside_counts(original, masked, [0], classes, interval)[0]


def inside_counts(original: np.ndarray, masked: np.ndarray, columns, classes: np.ndarray,
                  interval: float = 1.0) -> dict[int, int]:
    """:func:`inside_count` of each column in ``columns``, in one pass over the records.

    Parameters
    ----------
    original : ndarray of shape (n_records, n_attributes)
    masked : ndarray of shape (n_classes, n_attributes)
        The masked values of each class of records released alike.
    columns : sequence of int
    classes : ndarray of shape (n_records,)
        The class of every record.
    interval : float

    Each class's interval bounds are looked up once (the masked values searched in
    sorted order: a sorted search walks the original values once instead of jumping
    across them), so a record reads its class's two bounds instead of two random
    entries of the sorted column. Columns are counted one after another, so the bounds
    held are two per class (16 MB for a release of 1,000,000 classes), not two per
    class and column. Each column is copied out of the table once, sorted from that
    copy and counted on it (a pass over a strided column of a 10-column table reads
    every cache line of the table: three times the time of a contiguous one).
    """
    columns = [int(j) for j in columns]
    n = len(original)
    if n == 0 or not columns:
        return {j: 0 for j in columns}
    w = math.ceil(interval / 100.0 * n - 1e-9)
    classes = np.asarray(classes, dtype=np.int64)
    original = np.asarray(original, dtype=np.float64)
    counts = {}
    for j in columns:  # one column at a time: two bounds per class, not two per cell
        column = np.ascontiguousarray(original[:, j])
        sorted_column = np.sort(column)
        values = np.ascontiguousarray(masked[:, j], dtype=np.float64)
        by_value = np.argsort(values)  # equal values have equal positions: any order
        if _inside_column_compiled is not None:
            counts[j] = int(_inside_column_compiled(column, sorted_column, values, by_value,
                                                    w, classes))
            continue
        rho = np.empty(len(values), dtype=np.int64)
        rho[by_value] = np.searchsorted(sorted_column, values[by_value], side="left")
        np.minimum(rho, n - 1, out=rho)
        low = sorted_column[np.maximum(rho - w, 0)]
        high = sorted_column[np.minimum(rho + w, n - 1)]
        counts[j] = int(np.count_nonzero((column >= low[classes]) & (column <= high[classes])))
    return counts


def _inside_column(column, sorted_column, values, by_value, w, classes):
    """One column's count of :func:`inside_counts`: each class's bounds by one walk of
    the sorted column in the order of the masked values (``numpy.searchsorted``'s left
    positions, NaN last as numpy orders it), then one pass over the records."""
    n = sorted_column.shape[0]
    low = np.empty(values.shape[0])
    high = np.empty(values.shape[0])
    p = 0
    for t in range(by_value.shape[0]):
        c = by_value[t]
        v = values[c]
        if v == v:
            while p < n and sorted_column[p] < v:
                p += 1
        else:  # NaN: after every number
            while p < n and sorted_column[p] == sorted_column[p]:
                p += 1
        rho = min(p, n - 1)
        low[c] = sorted_column[max(rho - w, 0)]
        high[c] = sorted_column[min(rho + w, n - 1)]
    count = 0
    for i in range(column.shape[0]):
        c = classes[i]
        x = column[i]
        if x >= low[c] and x <= high[c]:
            count += 1
    return count


_inside_column_compiled = kernel(_inside_column)
