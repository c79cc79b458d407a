"""Disclosure risk of a release: record linkage (DLD), interval disclosure (ID), k′.

The definitions are in :mod:`core.measures.measure.measure`'s notes (Nin, Mic1D-k, Section 2.3).
"""

from __future__ import annotations

import math

import numpy as np


import itertools

from scipy.spatial import cKDTree

__all__ = ["real_anonymity", "record_linkage", "interval_disclosure"]


_TIE_TOLERANCE = 1e-12


def real_anonymity(masked_values: np.ndarray) -> float:
    """k′ = n / number of distinct rows of ``masked_values`` (n_records × n_attributes)."""
    masked_values = np.asarray(masked_values, dtype=np.float64)
    if len(masked_values) == 0:
        return 0.0
    return len(masked_values) / len(np.unique(masked_values, axis=0))


def record_linkage(Z_original: np.ndarray, Z_masked: np.ndarray) -> float:
    """DLD: percent of masked records linked to their own original (ties split credit).

    Parameters
    ----------
    Z_original, Z_masked : ndarray of shape (n_records, n_known)
        Row i of both is record i, on the known attributes, already z-scored.

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
    points, own_point, multiplicity = _distinct(Z_original)
    queries, query_of_record, _ = _distinct(Z_masked)
    tree = cKDTree(points)
    nearest, _ = tree.query(queries, k=1)
    radius = np.asarray(nearest, dtype=np.float64).reshape(-1) * (1.0 + _TIE_TOLERANCE)
    # A record can only be linked if its own original is (tied) nearest.
    own = points[own_point] - queries[query_of_record]
    own_distance = np.sqrt(np.einsum("ij,ij->i", own, own))
    candidate = own_distance <= radius[query_of_record]
    tied_total = np.ones(len(queries))
    linked = np.unique(query_of_record[candidate])
    if linked.size:
        balls = tree.query_ball_point(queries[linked], r=radius[linked])
        lengths = np.fromiter((len(b) for b in balls), dtype=np.int64, count=len(balls))
        members = np.fromiter(itertools.chain.from_iterable(balls), dtype=np.int64,
                              count=int(lengths.sum()))
        tied_total[linked] = np.add.reduceat(multiplicity[members],
                                             np.r_[0, np.cumsum(lengths)[:-1]])
    credit = np.where(candidate, 1.0 / tied_total[query_of_record], 0.0)
    return float(100.0 * credit.sum() / n)


def _distinct(Z: np.ndarray):
    """Distinct rows of Z, the row index of every record, and each row's multiplicity."""
    points, inverse, counts = np.unique(Z, axis=0, return_inverse=True, return_counts=True)
    return points, inverse.reshape(-1), counts


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
    n = len(raw)
    w = math.ceil(interval / 100.0 * n - 1e-9)
    inside = np.empty(raw.shape, dtype=bool)
    for j in range(raw.shape[1]):
        ordered = np.sort(raw[:, j])
        rho = np.minimum(np.searchsorted(ordered, raw_masked[:, j], side="left"), n - 1)
        low = ordered[np.maximum(rho - w, 0)]
        high = ordered[np.minimum(rho + w, n - 1)]
        inside[:, j] = (raw[:, j] >= low) & (raw[:, j] <= high)
    return float(100.0 * inside.mean())
