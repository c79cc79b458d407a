"""MDAV: Maximum Distance to Average Vector microaggregation.

Domingo-Ferrer & Torra (2005), in the form given in ``shared/data/README.md`` (and used
as "MDAV-NN" in Khomnotai et al. 2018, Section 3.1 and Table 1):

1. While at least 3k records remain: r is the record farthest from the centroid of the
   remaining records; group r with its k−1 nearest remaining records; s is the record
   farthest from r among those still remaining; group s with its k−1 nearest remaining
   records.
2. If 2k to 3k−1 records remain, form one more group around the record farthest from the
   centroid and put the rest in a last group. If fewer than 2k remain, they form one
   group.

Choices where the description is silent: distances are Euclidean on the z-scored
attributes; ties (equal distances) go to the record that comes first in the input.
"""

from __future__ import annotations

import numpy as np

from core.methods.heuristics import fixed_size
from core.progress import TaskState

__all__ = ["mdav"]


def mdav(X: np.ndarray, *, k: int, state: TaskState | None = None) -> np.ndarray:
    """Partition the records of ``X`` into groups of k (the last of k to 2k−1) by MDAV.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers.
    k : int
        Minimum group size, ``2 <= k <= n_records``.
    state : TaskState, optional
        Receives progress once per group and may cancel the run.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group id of every record, 0 .. n_groups−1 in the order the groups were formed.

    Examples
    --------
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> mdav(X, k=2).tolist()
    [0, 0, 1, 1]
    """
    return fixed_size(X, k=k, first="mdav", growth="nn", state=state)
