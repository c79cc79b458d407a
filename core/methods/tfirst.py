"""t-closeness first (Soria-Comas et al. 2015, Algorithm 3, Expressions (3) and (4)).

The cluster size follows from k and t; the records are split into that many subsets by
the confidential attribute, and every cluster takes one record of each subset near an
MDAV reference record. Shared helpers and the vocabulary: :mod:`core.methods.tcloseness`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from core.methods import tcloseness
from core.methods.pool import RecordPool
from core.methods.tcloseness import (TClosePartition, check_tclose_inputs, close_partition)
from core.privacy.attributes import tclose_attributes
from core.progress import TaskState

__all__ = ["tfirst_cluster_size", "tc_tfirst"]

# Below this many records the reference path runs even with compiled kernels: a pass
# over a few records costs less than building the indexes (the answers are the same).
_SMALL_POOL = 64


def _reference_pools(X: np.ndarray, subsets: list[np.ndarray]):
    """``(everyone, take_nearest)``: a :class:`RecordPool` of every record (for the
    farthest records and the centroid), and a function that takes ``want[i]`` records
    nearest to a point out of each subset i (returned ascending) from a
    :class:`RecordPool` per subset, asked once per record taken."""
    pools = [RecordPool(X[members]) for members in subsets]

    def take_nearest(point: np.ndarray, want: np.ndarray) -> np.ndarray:
        chosen = [members[pool.remove(pool.nearest(point, 1))]
                  for pool, members, count in zip(pools, subsets, want)
                  for _ in range(count)]
        return np.sort(np.concatenate(chosen))

    return RecordPool(X), take_nearest


def _reference_labels(X, subsets, per, extras_per_cluster, build: TaskState) -> np.ndarray:
    """Algorithm 3's clusters (before merging) on the reference pools, one cluster at a
    time; :func:`core.methods.tfirst_loop.tfirst_clusters` is the compiled path."""
    size = len(subsets)
    counts = np.array([len(members) for members in subsets], dtype=np.int64)
    everyone, take_nearest = _reference_pools(X, subsets)
    labels = np.full(len(X), -1, dtype=np.int64)
    clusters = 0

    def form(point: np.ndarray) -> None:
        nonlocal clusters
        remaining = per - clusters  # records each subset keeps beyond its extras
        want = np.ones(size, dtype=np.int64)
        taken_extra = 0
        for i in range(size):
            if counts[i] - 1 >= remaining and taken_extra < extras_per_cluster:
                want[i] = 1 + min(extras_per_cluster - taken_extra, counts[i] - remaining)
                taken_extra += want[i] - 1
        chosen = take_nearest(point, want)
        counts[:] -= want
        labels[chosen] = clusters
        everyone.remove(everyone.positions_of(chosen))
        clusters += 1
        build.step(clusters / per, f"t-closeness-first: {clusters} clusters formed")

    while clusters < per:
        x0_point = everyone.point(everyone.farthest(everyone.centroid()))
        form(x0_point)
        if clusters < per:
            form(everyone.point(everyone.farthest(x0_point)))
    return labels


def tfirst_cluster_size(n: int, k: int, t: float) -> int:
    """Cluster size of Algorithm 3 from Expressions (3) and (4).

    ``k₃ = max{k, ⌈n / (2(n−1)t + 1)⌉}`` (Expression (3), from Proposition 2), then
    ``k₃ + ⌊(n mod k₃) / ⌊n/k₃⌋⌋`` (Expression (4), with the floor of Section 7; the box
    of Algorithm 3 prints a ceiling, which does not reproduce Table 3). ``t`` is read as
    the decimal it prints as, so exact cases are not spoiled by binary rounding.

    Examples
    --------
    >>> tfirst_cluster_size(1080, 2, 0.01), tfirst_cluster_size(1080, 2, 0.05)
    (49, 10)
    """
    t_exact = Fraction(repr(float(t)))
    size = max(int(k), math.ceil(Fraction(n) / (2 * (n - 1) * t_exact + 1)))
    size = min(size, n)
    return size + (n % size) // (n // size)


def _subsets(attributes, size: int):
    """Record indices of each of the ``size`` subsets (input order inside each)."""
    keys = [a.codes for a in reversed(attributes)]
    order = np.lexsort(tuple(keys))  # primary key: the first attribute; stable
    n = len(order)
    per, extra = divmod(n, size)
    lengths = np.full(size, per)
    if size % 2:
        lengths[size // 2] += extra
    else:
        lengths[size // 2 - 1] += (extra + 1) // 2
        lengths[size // 2] += extra // 2
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    return [np.sort(order[bounds[i]:bounds[i + 1]]) for i in range(size)], per, extra


def tc_tfirst(X, confidential, *, k: int, t: float, kinds=None,
              state: TaskState | None = None) -> TClosePartition:
    """Algorithm 3 (t-closeness-first), then Algorithm 1's merging where t is not met.

    The cluster size ``k₃`` comes from :func:`tfirst_cluster_size` (Expressions (3) and
    (4)). The records are split into k₃ subsets of ⌊n/k₃⌋ records by ascending
    confidential value, the extra records in the central subset(s). Clusters are then
    formed in MDAV fashion: x₀ is the record farthest from the centroid of the records
    left, and its cluster takes from every subset the record nearest to x₀ (and a second
    one from a subset with extra records); then x₁, the record left farthest from x₀,
    gets a cluster the same way. By Proposition 2 each cluster's EMD is at most about
    (n−k₃)/(2(n−1)k₃) ≤ t for one confidential attribute with distinct values; otherwise
    the clusters are verified and merged as in Algorithm 1.

    Cost O(n²·d / k₃) time on the reference path (one pass over the records left per
    cluster, in the subsets' own pools, :func:`_reference_labels`) and O(n·d) memory,
    like MDAV. With compiled kernels the loop runs compiled
    (:func:`core.methods.tfirst_loop.tfirst_clusters`, the same clusters) on spatial
    indexes: a cluster costs one search per subset for its members and one for the next
    x₀ or x₁, the searches of a cluster shared between two threads.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers.
    confidential : see :func:`tc_merge`
        The first attribute orders the subsets.
    k : int
    t : float
    kinds : optional
    state : TaskState, optional

    Returns
    -------
    TClosePartition
        ``cluster_size`` is k₃; ``merges`` counts merges made afterwards (0 when the
        bound of Proposition 2 suffices).

    Examples
    --------
    >>> X = np.arange(8.0)[:, None]
    >>> part = tc_tfirst(X, np.arange(8), k=2, t=0.3)
    >>> part.cluster_size, np.bincount(part.labels).tolist()
    (2, [2, 2, 2, 2])
    """
    state = state or TaskState()
    attributes = tclose_attributes(confidential, kinds)
    X = check_tclose_inputs(X, attributes, k, t)
    n = len(X)
    size = tfirst_cluster_size(n, k, t)
    subsets, per, extra = _subsets(attributes, size)
    extras_per_cluster = -(-extra // per)  # 1 whenever Expression (4) leaves r < ⌊n/k⌋
    build = state.sub(0.0, 0.9)
    if tcloseness.COMPILED and n >= _SMALL_POOL:
        from core.methods.tfirst_loop import tfirst_clusters
        labels = tfirst_clusters(X, subsets, per, extras_per_cluster, build).labels
    else:
        labels = _reference_labels(X, subsets, per, extras_per_cluster, build)
    return close_partition(X, attributes, labels, size, t, state.sub(0.9, 1.0))

