"""Projected microaggregation: PCP and Z-scores (Nin, Mic1D-k, Section 2.2, Algorithm 1).

Each record (a row of the z-scored matrix ``X``) is projected onto one number, the
records are sorted by it, and the sorted order is cut optimally into runs of k to 2k−1
records by the Hansen–Mukherjee shortest path whose edge cost is the MULTIVARIATE SSE of
the run on all d original attributes (:func:`core.methods.univariate.optimal_partition_of_order`).

- *PCP microaggregation*: the projection is the score on the first principal component
  of ``X`` (the eigenvector of the d × d covariance matrix with the largest eigenvalue).
- *Z-scores microaggregation*: the projection is the sum of the record's z-scores, the
  row sum of ``X``.

Choices where the paper is silent:

- Algorithm 1 first splits the attributes into blocks and microaggregates each block on
  its own. These functions microaggregate one block, all the columns of ``X``; blocking
  is the caller's business (it breaks k-anonymity, as the paper itself shows).
- ``X`` is taken as given (the caller z-scores it, as :mod:`core.data.prepare` does).
- Sign of the principal component: reversing the order gives the mirror image of every
  candidate partition, so both signs reach the same minimum SSE; only the choice among
  equally cheap partitions can differ. The sign is fixed so that the loading of largest
  magnitude is positive (the first such attribute on equal magnitudes). If the largest
  eigenvalue is repeated, the component is whichever vector of that eigenspace
  ``numpy.linalg.eigh`` returns.
- Ties in the projection keep the input order (stable sort); ties between equally cheap
  partitions follow :func:`~core.methods.univariate.optimal_partition_of_order`.
- Group ids increase along the projected order (group 0 has the smallest projections).
"""

from __future__ import annotations

import numpy as np

from core.data.prepare import check_group_size
from core.progress import TaskState
from core.methods.univariate import _partition_of_order, check_k, check_records
from core.methods import ordered_cuts

__all__ = ["pcp", "zscores", "pcp_projection", "zscores_projection"]


def pcp_projection(X: np.ndarray) -> np.ndarray:
    """Score of every record on the first principal component of ``X``.

    The covariance matrix (d × d, population normalisation) is built in O(n·d²) and
    diagonalised with :func:`numpy.linalg.eigh`; no n × n matrix is formed.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)

    Returns
    -------
    scores : ndarray of shape (n_records,)
        ``(X − column means) @ v`` where ``v`` is the unit eigenvector of the largest
        eigenvalue, signed so that its largest-magnitude entry is positive.

    Examples
    --------
    >>> X = np.array([[-1.0, -1.0], [0.0, 0.0], [1.0, 1.0]])
    >>> np.round(pcp_projection(X) ** 2, 6).tolist()
    [2.0, 0.0, 2.0]
    >>> bool(pcp_projection(X)[0] < 0)
    True
    """
    return _pcp_scores(check_records(X))


def _pcp_scores(X: np.ndarray) -> np.ndarray:
    """:func:`pcp_projection` of a checked ``X``."""
    centred = X - X.mean(axis=0)
    covariance = centred.T @ centred / len(X)
    _, vectors = np.linalg.eigh(covariance)
    component = vectors[:, -1]
    if component[np.argmax(np.abs(component))] < 0:
        component = -component
    return centred @ component


def _row_sums(X: np.ndarray) -> np.ndarray:
    """:func:`zscores_projection` of a checked ``X``."""
    return X.sum(axis=1)


def zscores_projection(X: np.ndarray) -> np.ndarray:
    """Sum of the z-scores of every record: the row sums of ``X``, shape (n_records,).

    Examples
    --------
    >>> zscores_projection(np.array([[1.0, -0.5], [0.0, 2.0]])).tolist()
    [0.5, 2.0]
    """
    return _row_sums(check_records(X))


def pcp(X: np.ndarray, *, k: int, state: TaskState | None = None) -> np.ndarray:
    """PCP microaggregation: sort by the first principal component, cut optimally.

    Nin, Mic1D-k, Section 2.2, Algorithm 1 with one block of attributes and the
    principal component projection.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers.
    k : int
        Minimum group size, ``2 <= k <= n_records``.
    state : TaskState, optional
        Receives progress and may cancel the run.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group id of every record in the input order; each group has k to 2k−1 records
        and is a run of consecutive records in the projected order.

    Raises
    ------
    MicroaggError
        ``k`` is not an integer ≥ 2, there are fewer than ``k`` records, or ``X`` is not
        a finite 2-D array.

    Examples
    --------
    >>> X = np.array([[0.0, 0.1], [5.0, 5.2], [0.2, 0.0], [5.1, 4.9]])
    >>> pcp(X, k=2).tolist()
    [0, 1, 0, 1]
    """
    return _projected(X, k, state, _pcp_scores, "PCP")


def zscores(X: np.ndarray, *, k: int, state: TaskState | None = None) -> np.ndarray:
    """Z-scores microaggregation: sort by the sum of the z-scores, cut optimally.

    Nin, Mic1D-k, Section 2.2, Algorithm 1 with one block of attributes and the
    sum-of-z-scores projection.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers (their row sums are the projection).
    k : int
        Minimum group size, ``2 <= k <= n_records``.
    state : TaskState, optional
        Receives progress and may cancel the run.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group id of every record in the input order; each group has k to 2k−1 records
        and is a run of consecutive records in the order of the row sums.

    Raises
    ------
    MicroaggError
        ``k`` is not an integer ≥ 2, there are fewer than ``k`` records, or ``X`` is not
        a finite 2-D array.

    Examples
    --------
    >>> X = np.array([[0.0, 0.1], [5.0, 5.2], [0.2, 0.0], [5.1, 4.9]])
    >>> zscores(X, k=2).tolist()
    [0, 1, 0, 1]
    """
    return _projected(X, k, state, _row_sums, "Z-scores")


def _projected(X, k, state, project, name: str) -> np.ndarray:
    k = check_k(k)
    X = check_records(X)
    check_group_size(len(X), k)
    state = state or TaskState()
    state.step(0.0, f"{name}: projecting the records")
    order = ordered_cuts.stable_argsort(project(X), state=state)
    state.step(0.05, f"{name}: optimal partition of the projected order")
    labels_sorted = _partition_of_order(X[order], k, state.sub(0.05, 1.0),
                                        compiled=ordered_cuts.COMPILED)
    labels = np.empty_like(labels_sorted)
    labels[order] = labels_sorted
    return labels
