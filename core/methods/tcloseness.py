"""k-anonymous t-closeness through microaggregation: Algorithms 1, 2 and 3.

Soria-Comas, Domingo-Ferrer, Sánchez & Martínez, "t-Closeness through Microaggregation:
Strict Privacy with Enhanced Utility Preservation", IEEE TKDE 2015 (arXiv:1512.02909).

:func:`tc_merge`
    Algorithm 1 (Section 5): a k-anonymous microaggregation (MDAV unless a partition is
    given), then merge the cluster with the largest EMD into the cluster nearest to it
    by quasi-identifier centroid until every cluster is within t.
:func:`tc_kfirst`
    Algorithm 2 (Section 6), k-anonymity-first: each cluster starts as k nearest records
    and swaps members for the next-nearest outside records while that lowers its EMD;
    its output then goes through Algorithm 1's merging (as Section 6 proposes), so t
    always holds.
:func:`tc_tfirst`
    Algorithm 3 (Section 7), t-closeness-first: the cluster size comes from Expressions
    (3) and (4); the records are split into that many subsets by the confidential
    attribute and every cluster takes one record of each subset (two from a subset with
    extra records), nearest to the MDAV reference record.

Every function takes the standardized quasi-identifiers ``X`` (n_records × n_attributes),
the confidential attributes (see :func:`core.privacy.attributes.tclose_attributes`) and the
keyword-only ``k`` and ``t``, and returns a :class:`TClosePartition`. With several
confidential attributes a cluster's EMD is the largest over the attributes, so
t-closeness holds for each. Every returned partition has been checked with the
O(|C| log |C|) EMD of :mod:`core.privacy.emd`; an EMD within
:data:`~core.privacy.emd.EMD_TOLERANCE` of t counts as within t.

Choices where the paper is ambiguous (each is tested):

* Distances between records and centroids are Euclidean on ``X``; ties go to the record
  (or cluster) that comes first in the input (as in MDAV, :mod:`core.methods.heuristics`).
* Algorithm 1 stops when the largest cluster EMD is at most t. Of two clusters with the
  same largest EMD the first formed is merged; the merged cluster keeps the smaller id.
* Algorithm 2, GenerateCluster: the candidates y are the records outside C in order of
  distance to the seed x, each looked at once ("X′ = X′ \\ {y}" on a local copy); a
  swapped-out y′ returns to the pool of unclustered records for later clusters but is
  not reconsidered for this one. A swap is made only when it lowers the EMD by more than
  the tolerance; of several y′ giving the same EMD the first in the input is swapped out.
  Clusters are formed in pairs (farthest from the centroid, then farthest from that
  record) until no record is left; fewer than 2k remaining records form one cluster.
* Algorithm 3, Expression (3) is ``max{k, ⌈n / (2(n−1)t + 1)⌉}`` with t read as the
  decimal it is written as (``Fraction(repr(t))``), so the ceiling is exact.
  Expression (4) is ``k + ⌊(n mod k) / ⌊n/k⌋⌋`` as printed in Section 7; the box of
  Algorithm 3 prints ⌈·⌉ instead, but only the floor reproduces Table 3 (t = 0.01 gives
  48 → 49 with the floor, 50 with the ceiling; the table prints 49).
* Algorithm 3, subsets: records are sorted by the confidential attribute (the first one
  when there are several, ties broken by the next ones, then by input order); subsets
  hold ⌊n/k⌋ records except the central one (k odd: subset (k+1)/2 takes all r = n mod k
  extra records) or two central ones (k even: subsets k/2 and k/2+1 take ⌈r/2⌉ and
  ⌊r/2⌋). A cluster takes at most one extra record (the box's ``|C| = i`` test), from the
  first central subset that still has extras. If Expression (4) still leaves r ≥ ⌊n/k⌋
  (possible for some n, k), a cluster takes up to ⌈r/⌊n/k⌋⌉ extras so no record is
  left over. A nominal attribute is sorted by its category labels.
* Algorithm 3 guarantees t only through Proposition 2, which assumes one confidential
  attribute with distinct values. It is verified afterwards and, where a cluster exceeds
  t (ties, several attributes, nominal attributes), merged as in Algorithm 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.compiled import COMPILED
from core.methods.pool import RecordPool, squared_distances
from core.errors import MicroaggError
from core.methods.mdav import mdav
from core.progress import TaskState
from core.privacy.emd import EMD_TOLERANCE
from core.privacy.attributes import class_emds, tclose_attributes

__all__ = ["TClosePartition", "tc_merge", "tc_kfirst", "check_tclose_inputs", "close_partition",
           "by_distance", "kfirst_labels_reference"]

# Algorithm 2 evaluates candidate swaps in windows: _WINDOW candidates after a swap,
# doubling while none improves, up to _SWAP_CELLS candidate·member cells.
_WINDOW = 8
_SWAP_CELLS = 1 << 15


@dataclass(frozen=True)
class TClosePartition:
    """A k-anonymous, t-close partition and how it was reached.

    Attributes
    ----------
    labels : ndarray of shape (n_records,), int64
        Cluster id per record, 0..n_clusters−1.
    cluster_size : int
        The cluster size the algorithm aimed at: k for Algorithms 1 and 2, the size from
        Expressions (3)–(4) for Algorithm 3.
    merges : int
        Clusters merged by Algorithm 1's loop.
    max_emd : tuple of float
        Largest cluster EMD per confidential attribute, in the order given.
    swaps : int
        Record swaps made by Algorithm 2 (0 for the others).
    """

    labels: np.ndarray
    cluster_size: int
    merges: int
    max_emd: tuple[float, ...]
    swaps: int = 0


def check_tclose_inputs(X, attributes, k, t) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise MicroaggError("X must be a matrix of shape (n_records, n_quasi_identifiers).")
    if not np.isfinite(X).all():
        raise MicroaggError("The quasi-identifiers have missing or infinite values.")
    n = len(X)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise MicroaggError(f"The 'k' parameter must be an integer of at least 1. Got {k!r}.")
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) \
            or not 0 <= float(t) <= 1:
        raise MicroaggError(f"The 't' parameter must be a number in [0, 1]. Got {t!r}.")
    if n < k:
        raise MicroaggError(f"The table has {n} record(s), fewer than k = {k}. "
                            "Choose a smaller k or use more records.")
    for attribute in attributes:
        if attribute.n != n:
            raise MicroaggError(f"Confidential column '{attribute.name}' has {attribute.n} "
                                f"values but the quasi-identifiers have {n} records.")
    return X


def _cluster_emd(attributes, members) -> float:
    return max(a.emd(members) for a in attributes)


def _compact(labels: np.ndarray) -> np.ndarray:
    """Relabel to 0..G−1 in order of each cluster's first record."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse]


def _merge_until_close(X, attributes, labels, t, state, emd=None) -> tuple[np.ndarray, int]:
    """Algorithm 1's loop: merge the worst cluster into its nearest until all are within t.

    Cost per merge O(G·d) (distances to every live centroid, vectorized) plus the
    merged cluster's EMD in O(|C| log |C|); O(n·d) memory, never n×n. This is the
    reference; :func:`core.methods.tclose_merge.merge_until_close` is the compiled path
    with the same merges. ``emd``: each cluster's largest EMD when the caller has it
    (of the clusters numbered by their first record; changed in place).
    """
    labels = _compact(labels)
    groups = int(labels.max()) + 1
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels, minlength=groups)
    members = np.split(order, np.cumsum(sizes)[:-1])
    if emd is None:
        emd = np.max([class_emds(a, labels) for a in attributes], axis=0)
    sums = np.stack([np.bincount(labels, weights=X[:, j], minlength=groups)
                     for j in range(X.shape[1])], axis=1)
    counts = sizes.astype(np.float64)
    alive = np.ones(groups, dtype=bool)
    limit = float(t) + EMD_TOLERANCE
    merges = 0
    while alive.sum() > 1:
        worst = int(np.argmax(np.where(alive, emd, -np.inf)))
        if emd[worst] <= limit:
            break
        centroids = sums / counts[:, None]
        diff = centroids - centroids[worst]
        distance = np.einsum("ij,ij->i", diff, diff)
        distance[~alive] = np.inf
        distance[worst] = np.inf
        nearest = int(np.argmin(distance))
        keep, gone = min(worst, nearest), max(worst, nearest)
        members[keep] = np.concatenate((members[keep], members[gone]))
        members[gone] = members[gone][:0]
        sums[keep] += sums[gone]
        counts[keep] += counts[gone]
        alive[gone] = False
        counts[gone] = 1.0  # dead rows never win (distance set to inf); avoid 0/0
        emd[keep] = _cluster_emd(attributes, members[keep])
        merges += 1
        state.step(merges / max(1, groups - 1), f"t-closeness: {merges} clusters merged")
    out = np.empty(len(labels), dtype=np.int64)
    for group in np.flatnonzero(alive):
        out[members[group]] = group
    return _compact(out), merges


def close_partition(X, attributes, labels, cluster_size, t, state, swaps=0) -> TClosePartition:
    """Algorithm 1's merging of ``labels`` until every cluster is within t, and the
    partition's figures.

    The clusters' EMDs are measured first: when none exceeds t (as Proposition 2
    promises tc-tfirst for one attribute of distinct values), Algorithm 1's loop would
    stop before its first merge, so the merging's structures are not built (at
    100,000 records about 0.09 s of tc-tfirst's run) and the same EMDs give
    ``max_emd``. The labels are then the merging's own, the clusters numbered by their
    first record (the tests compare both).
    """
    labels = _compact(labels)
    emds = [class_emds(a, labels) for a in attributes]
    worst = np.max(emds, axis=0)
    merges = 0
    if worst.size > 1 and worst.max() > float(t) + EMD_TOLERANCE:
        if COMPILED:
            from core.methods.tclose_merge import merge_until_close
            labels, merges = merge_until_close(X, attributes, labels, t, state, _compact,
                                               emd=worst)
        else:
            labels, merges = _merge_until_close(X, attributes, labels, t, state, emd=worst)
        emds = [class_emds(a, labels) for a in attributes]
    max_emd = tuple(float(emd.max()) for emd in emds)
    state.step(1.0, "t-closeness: done")
    return TClosePartition(labels=labels, cluster_size=int(cluster_size), merges=merges,
                           max_emd=max_emd, swaps=swaps)


def tc_merge(X, confidential, *, k: int, t: float, base_labels=None, kinds=None,
             state: TaskState | None = None) -> TClosePartition:
    """Algorithm 1: microaggregate, then merge clusters until t-closeness holds.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers.
    confidential : TCloseAttribute or sequence of them, or DataFrame / ndarray of shape
        (n_records,) or (n_records, n_confidential)
        The confidential attributes (see :func:`core.privacy.attributes.tclose_attributes`).
    k : int
        Minimum cluster size of the base microaggregation.
    t : float
        EMD bound, 0 <= t <= 1.
    base_labels : ndarray of shape (n_records,), optional
        A k-anonymous partition from any method; by default MDAV on ``X`` with ``k``.
    kinds : optional
        Distance kind per confidential attribute when ``confidential`` is raw data.
    state : TaskState, optional
        Progress once per cluster formed and per merge; cancellation.

    Returns
    -------
    TClosePartition
        ``cluster_size`` is k; ``merges`` counts Algorithm 1's merges.

    Examples
    --------
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> tc_merge(X, np.array([1, 2, 3, 4]), k=2, t=0.25).labels.tolist()
    [0, 0, 0, 0]
    """
    state = state or TaskState()
    attributes = tclose_attributes(confidential, kinds)
    X = check_tclose_inputs(X, attributes, k, t)
    if base_labels is None:
        base_labels = mdav(X, k=k, state=state.sub(0.0, 0.5)) if k >= 2 \
            else np.arange(len(X))
    else:
        base_labels = np.asarray(base_labels)
        if base_labels.shape != (len(X),):
            raise MicroaggError(f"base_labels must have one label per record ({len(X)}); "
                                f"got shape {base_labels.shape}.")
    return close_partition(X, attributes, base_labels, k, t, state.sub(0.5, 1.0))


def _originals(pool: RecordPool, positions: np.ndarray) -> np.ndarray:
    # RecordPool.record() maps one position; the buffer index maps many at once.
    return pool.records_at(positions)


def tc_kfirst(X, confidential, *, k: int, t: float, kinds=None,
              state: TaskState | None = None) -> TClosePartition:
    """Algorithm 2 (k-anonymity-first), followed by Algorithm 1's merging.

    Each cluster starts as the k records nearest to its seed (the record farthest from
    the centroid of the unclustered records, then the one farthest from that seed). While
    its EMD exceeds t, the next-nearest outside record y is considered and swapped for
    the member y′ that minimizes ``EMD(C ∪ {y} \\ {y′})`` if that lowers the EMD.

    With compiled kernels (:data:`core.compiled.COMPILED`) the candidates are priced by
    :func:`core.methods.tclose_kfirst.kfirst_labels` (O(1) per swap after an O(log |C|)
    lookup per candidate); otherwise by :func:`kfirst_labels_reference`, in windows with
    :meth:`~core.privacy.attributes.TCloseAttribute.swap_emds`. Both take the first
    improving candidate in distance order, exactly as the paper's one-at-a-time loop
    would, and give the same clusters and swaps (tests compare them).

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers.
    confidential : see :func:`tc_merge`
    k : int
        Minimum cluster size.
    t : float
        EMD bound, 0 <= t <= 1.
    kinds : optional
        Distance kind per confidential attribute when ``confidential`` is raw data.
    state : TaskState, optional

    Returns
    -------
    TClosePartition
        ``cluster_size`` is k; ``swaps`` and ``merges`` count Algorithm 2's swaps and
        Algorithm 1's merges.
    """
    state = state or TaskState()
    attributes = tclose_attributes(confidential, kinds)
    X = check_tclose_inputs(X, attributes, k, t)
    build = state.sub(0.0, 0.9)
    if COMPILED:
        from core.methods.tclose_kfirst import kfirst_labels
        labels, swaps = kfirst_labels(X, attributes, k, t, build)
    else:
        labels, swaps = kfirst_labels_reference(X, attributes, k, t, build)
    return close_partition(X, attributes, labels, k, t, state.sub(0.9, 1.0), swaps=swaps)


def kfirst_labels_reference(X, attributes, k: int, t: float, build: TaskState):
    """Algorithm 2's clusters (before merging) and its swap count: the numpy reference.

    Candidate swaps are evaluated in windows with
    :meth:`~core.privacy.attributes.TCloseAttribute.swap_emds`; the first improving
    candidate in distance order is taken, exactly as the paper's one-at-a-time loop
    would. :func:`core.methods.tclose_kfirst.kfirst_labels` is the compiled path and
    gives the same labels and swaps.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
    swaps : int
    """
    n = len(X)
    pool = RecordPool(X)
    labels = np.full(n, -1, dtype=np.int64)
    limit = float(t) + EMD_TOLERANCE
    clusters = swaps = 0

    def generate(seed: int) -> None:
        nonlocal clusters, swaps
        if pool.count < 2 * k:
            chosen = pool.live_positions()  # every remaining record
        else:
            point = pool.point(seed)
            order, _ = pool.nearest_sorted(point, k, include=seed)
            order = np.sort(order)  # input order: ties between members y′ go to the first
            members = _originals(pool, order)
            emd = _cluster_emd(attributes, members)
            looked, fetch_size = k, 2 * k + 16
            stream = order[:0]
            window = _WINDOW
            while emd > limit and (stream.size or looked < pool.count):
                if not stream.size:
                    fetch = min(pool.count, looked + fetch_size)
                    if fetch >= pool.count:
                        candidates = by_distance(pool, point, seed)
                    else:
                        candidates, _ = pool.nearest_sorted(point, fetch, include=seed)
                    stream = candidates[looked:fetch]
                    looked, fetch_size = fetch, 2 * fetch_size
                # Evaluate a window of candidates at once; the first improving one is the
                # one the paper's one-at-a-time loop would take.
                batch = stream[:window]
                ids = _originals(pool, batch)
                grid = np.max([a.swap_emds(members, ids) for a in attributes], axis=0)
                out = np.argmin(grid, axis=1)
                best = grid[np.arange(len(ids)), out]
                better = np.flatnonzero(best < emd - EMD_TOLERANCE)
                if not better.size:
                    stream = stream[len(batch):]
                    window = min(2 * window, max(_WINDOW, _SWAP_CELLS // k))
                    continue
                first = int(better[0])
                order = order.copy()
                order[out[first]] = batch[first]
                order = np.sort(order)
                members = _originals(pool, order)
                emd = float(best[first])
                swaps += 1
                stream = stream[first + 1:]
                window = _WINDOW
            chosen = order
        labels[pool.remove(np.asarray(chosen))] = clusters
        clusters += 1
        build.step((n - pool.count) / n, f"k-anonymity-first: {clusters} clusters formed")

    while pool.count:
        x0 = pool.farthest(pool.centroid())
        x0_point = pool.point(x0)
        generate(x0)
        if pool.count:
            generate(pool.farthest(x0_point))
    return labels, swaps


def by_distance(pool: RecordPool, point: np.ndarray, seed: int) -> np.ndarray:
    """Every live position, nearest first (exact distances, ties in input order)."""
    live = pool.live_positions()
    distance = squared_distances(pool.rows(live), point)  # the pool's own sum order
    distance[live == seed] = -1.0
    return live[np.argsort(distance, kind="stable")]


