"""tc-bucket: the bucketization construction of multiplicative t-closeness (Section 6).

Domingo-Ferrer & Soria-Comas (2015), Sections 6.1–6.3. The vocabulary, the distance and
the choices where the paper leaves room are written down in
:mod:`core.privacy.multiplicative`; this module forms the classes (a maximum-flow plan
of the class compositions, then MDAV-like classes of nearby records).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from core.compiled import COMPILED
from core.errors import MicroaggError
from core.methods.pool import RecordPool, squared_distances

from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from core.privacy.multiplicative import (MULTIPLICATIVE_TOLERANCE, Buckets, as_fraction,
                                         as_series, bucketize, check_level,
                                         class_distances, default_n_buckets,
                                         epsilon_from_multiplicative_t)
from core.progress import TaskState

__all__ = ["BucketPartition", "tc_bucket"]

# Below this many records the reference's passes over the records run (cheaper than
# building the indexes; the same classes).
_SMALL_POOL = 64


@dataclass(frozen=True)
class BucketPartition:
    """The output of :func:`tc_bucket`: a k-anonymous partition, t-close by bucket.

    Attributes
    ----------
    labels : ndarray of shape (n_records,), int64
        Class id per record, 0..n_classes−1 in the order the classes were formed.
    t : float
        The multiplicative level (a ratio > 1), verified.
    buckets : Buckets
        The bucketization; pass it to :func:`verify_multiplicative`, or release
        ``buckets.recode(values)`` in place of the confidential column (Section 6.2).
    n_buckets : int
    bucket_sizes : tuple of int
        Records per bucket in the table.
    cluster_size : int
        ``⌊N/m⌋``, the smallest class size (classes have this size or one more).
    n_classes : int
    max_distance : float
        Largest multiplicative distance of any class (<= t).
    emphasis : float
        The share of its emphasized bucket in the average class (1/b means none).
    merges : int
        Always 0 (kept for the engine's summary).
    """

    labels: np.ndarray
    t: float
    buckets: Buckets
    n_buckets: int
    bucket_sizes: tuple[int, ...]
    cluster_size: int
    n_classes: int
    max_distance: float
    emphasis: float
    merges: int = 0

    @property
    def epsilon(self) -> float:
        """ε = 2·ln(t) of Proposition 3 (see :data:`PROPOSITION_3_ASSUMPTIONS`)."""
        return epsilon_from_multiplicative_t(self.t)


def tc_bucket(X, confidential_values, *, k: int, t: float, n_buckets: int | None = None,
              kind: str | None = None, state: TaskState | None = None) -> BucketPartition:
    """k-anonymous t-closeness by bucketization (Section 6), t a multiplicative level.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_quasi_identifiers)
        Standardized quasi-identifiers.
    confidential_values : array-like of shape (n_records,), Series, or one-column DataFrame
        The one confidential attribute.
    k : int
        Minimum class size (>= 1).
    t : float
        **Multiplicative level, t > 1** (Definition 4; e.g. 1.5), not an EMD bound.
    n_buckets : int, optional
        Buckets to aim for (>= 2); default ``⌊t + 1.5⌋`` (Section 6.1).
    kind : {"numerical", "nominal"}, optional
        Numerical: buckets of consecutive values; nominal: groups of categories.
    state : TaskState, optional
        Progress and cancellation, about every tenth of a second (once per class on the
        reference path).

    Returns
    -------
    BucketPartition

    Raises
    ------
    MicroaggError
        Bad input, several confidential attributes, or no partition meeting k and t.

    Examples
    --------
    >>> X = np.arange(12.0)[:, None]
    >>> part = tc_bucket(X, np.arange(12), k=4, t=1.5)
    >>> part.n_buckets, np.bincount(part.labels).tolist(), part.max_distance
    (3, [4, 4, 4], 1.5)
    """
    state = state or TaskState()
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or not np.isfinite(X).all():
        raise MicroaggError("X must be a finite matrix of shape (n_records, "
                            "n_quasi_identifiers).")
    n = len(X)
    t = check_level(t, "tc-bucket")
    if t <= 1:
        raise MicroaggError("The 't' parameter of tc-bucket is the multiplicative level and "
                            "must be greater than 1 (e.g. 1.5). Got 1.")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise MicroaggError(f"The 'k' parameter must be an integer of at least 1. Got {k!r}.")
    if n < k:
        raise MicroaggError(f"The table has {n} record(s), fewer than k = {k}. "
                            "Choose a smaller k or use more records.")
    if n_buckets is None:
        n_buckets = default_n_buckets(t)
    elif isinstance(n_buckets, bool) or not isinstance(n_buckets, (int, np.integer)) \
            or n_buckets < 2:
        raise MicroaggError(f"The 'n_buckets' parameter must be an integer of at least 2. "
                            f"Got {n_buckets!r}.")
    name, values = _one_attribute(confidential_values)
    if len(values) != n:
        raise MicroaggError(f"Confidential column '{name}' has {len(values)} values but the "
                            f"quasi-identifiers have {n} records.")
    buckets = bucketize(values, int(n_buckets), kind=kind, name=name)
    codes = buckets.assign(values)
    supply = np.bincount(codes, minlength=buckets.n_buckets)
    state.step(0.0, "tc-bucket: choosing class compositions")
    plan = _plan(supply, n, k, as_fraction(t))
    if plan is None:
        raise MicroaggError(
            f"tc-bucket cannot meet t = {t:g} (multiplicative) with k = {k} on these "
            f"{n} records and {buckets.n_buckets} buckets of {', '.join(map(str, supply))} "
            "records: no partition into classes of at least k records keeps every bucket "
            "within the bounds. Choose a larger t, a smaller k, or fewer buckets.")
    labels = _form_classes(X, codes, plan, state)
    distances = class_distances(labels, codes, buckets.n_buckets)
    sizes = np.bincount(labels)
    if sizes.min() < k or distances.max() > t * (1 + MULTIPLICATIVE_TOLERANCE):
        raise MicroaggError(  # a bug, never a weaker result
            f"tc-bucket built a partition that fails its own check (smallest class "
            f"{sizes.min()}, largest distance {distances.max():.6g}); nothing is returned.")
    counts = np.zeros((len(sizes), buckets.n_buckets), dtype=np.int64)
    np.add.at(counts, (labels, codes), 1)
    state.step(1.0, "tc-bucket: done")
    return BucketPartition(
        labels=labels, t=t, buckets=buckets, n_buckets=buckets.n_buckets,
        bucket_sizes=tuple(int(s) for s in supply), cluster_size=int(sizes.min()),
        n_classes=int(len(sizes)), max_distance=float(distances.max()),
        emphasis=float((counts.max(axis=1) / sizes).mean()))


def _plan(supply: np.ndarray, n: int, k: int, t: Fraction) -> np.ndarray | None:
    """Bucket counts per class (n_classes × b), or None if no class count works.

    The most classes first: m classes are ⌊n/m⌋ records each and n mod m of them one
    more. A class's bounds depend on its size alone, so the counting checks (every class
    can reach its size within its bounds, every bucket its supply) are made on the two
    sizes, O(b) for a count m, and the flow is built only for a count that passes them.
    """
    largest = min(n // k, int(supply.min()))
    for m in range(largest, 0, -1):
        big = n % m  # classes of ⌊n/m⌋ + 1 records, the first ones
        kinds = [(n // m + 1, big, *_bounds(n // m + 1, supply, n, t))] if big else []
        kinds.append((n // m, m - big, *_bounds(n // m, supply, n, t)))
        if any((low > high).any() or low.sum() > size or high.sum() < size
               for size, _, low, high in kinds) \
                or (sum(count * low for _, count, low, _ in kinds) > supply).any() \
                or (sum(count * high for _, count, _, high in kinds) < supply).any():
            continue
        sizes = np.concatenate([np.full(count, size, dtype=np.int64)
                                for size, count, _, _ in kinds])
        low = np.concatenate([np.tile(low, (count, 1)) for _, count, low, _ in kinds])
        high = np.concatenate([np.tile(high, (count, 1)) for _, count, _, high in kinds])
        if _flow(sizes, supply, low, high) is None:
            continue
        return _emphasize(sizes, supply, low, high, n)
    return None  # pragma: no cover (m = 1 always fits: one class is the table)


def _bounds(size: int, supply, n: int, t: Fraction):
    """The fewest and most records of each bucket in a class of ``size`` records, within
    ``[p_j/t, t·p_j]`` (exact fractions)."""
    share = [Fraction(size * int(s), n) for s in supply]
    return (np.array([math.ceil(x / t) for x in share], dtype=np.int64),
            np.array([min(size, math.floor(x * t)) for x in share], dtype=np.int64))


def _flow(sizes, supply, low, high) -> np.ndarray | None:
    """Integer counts within [low, high] with row sums ``sizes`` and column sums ``supply``.

    A maximum flow source → class → bucket → sink on the part above the lower bounds;
    feasible exactly when the flow saturates every class.
    """
    m, b = low.shape
    rows, cols = sizes - low.sum(axis=1), supply - low.sum(axis=0)
    if (rows < 0).any() or (cols < 0).any() or (high < low).any():
        return None
    source, sink = 0, m + b + 1
    class_nodes, bucket_nodes = 1 + np.arange(m), 1 + m + np.arange(b)
    tail = np.concatenate([np.zeros(m, dtype=np.int64), np.repeat(class_nodes, b),
                           bucket_nodes])
    head = np.concatenate([class_nodes, np.tile(bucket_nodes, m),
                           np.full(b, sink)])
    capacity = np.concatenate([rows, (high - low).ravel(), cols]).astype(np.int32)
    graph = csr_matrix((capacity, (tail, head)), shape=(sink + 1, sink + 1))
    result = maximum_flow(graph, source, sink)
    if result.flow_value != rows.sum():
        return None
    flow = result.flow.tocsr()[1:m + 1, m + 1:m + 1 + b].toarray()
    return low + np.maximum(flow, 0)


def _emphasize(sizes, supply, low, high, n) -> np.ndarray:
    """Feasible counts in which each class leans on one bucket as far as the totals allow.

    Classes emphasize buckets in proportion to the bucket masses (largest remainders),
    interleaved so that both class sizes emphasize every bucket. The emphasized entry's
    lower bound is raised by the largest s (binary search) that stays feasible.
    """
    m, b = low.shape
    quota = np.floor(m * supply / n).astype(np.int64)
    remainder = m * supply / n - quota
    for j in np.argsort(-remainder, kind="stable")[: m - quota.sum()]:
        quota[j] += 1
    keys = np.concatenate([(np.arange(q) + 0.5) / q for q in quota if q])
    owners = np.concatenate([np.full(q, j) for j, q in enumerate(quota) if q])
    emphasis = owners[np.argsort(keys, kind="stable")]
    rows = np.arange(m)
    others = low.sum(axis=1) - low[rows, emphasis]
    ceiling = np.minimum(high[rows, emphasis], sizes - others)
    best = _flow(sizes, supply, low, high)
    lo_s, hi_s = 0, int((ceiling - low[rows, emphasis]).max())
    while lo_s < hi_s:
        s = (lo_s + hi_s + 1) // 2
        raised = low.copy()
        raised[rows, emphasis] = np.minimum(low[rows, emphasis] + s, ceiling)
        found = _flow(sizes, supply, raised, high)
        if found is None:
            hi_s = s - 1
        else:
            lo_s, best = s, found
    return best


def _nearest(pool, point: np.ndarray, need: int, include):
    """The ``need`` live records of ``pool`` nearest to ``point``, nearest first (ties to
    the first in the input), and their exact squared distances; ``include`` (the seed)
    first, at distance 0. All of them when ``need`` reaches the live count."""
    if need <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    if need < pool.count:
        return pool.nearest_sorted(point, need, include=include)
    live = pool.live_positions()
    distances = squared_distances(pool.rows(live), point)
    if include is not None:
        distances[live == include] = -1.0
    order = np.argsort(distances, kind="stable")
    return live[order], np.maximum(distances[order], 0.0)


def _form_classes(X, codes, plan, state) -> np.ndarray:
    """MDAV-like classes of the planned compositions (Section 6.3): the seed is the
    record farthest from the centroid of the records left, and its class the composition
    (a row of ``plan`` not yet used) whose nearest records of each bucket lie closest to
    the seed in total (the sum of their squared distances; the first composition of
    ``np.unique``'s order on ties). The seed always comes first among its bucket's
    records, so it is in its class whenever the composition takes from its bucket.

    This is the reference: the records left are a :class:`RecordPool` of everyone (the
    centroid and the seed) and one per bucket (the nearest records), O(n²·d / k) time.
    With compiled kernels the same loop runs compiled on spatial
    indexes (:func:`core.methods.bucket_loop.bucket_classes`), with the same
    arithmetic (:mod:`core.methods.pool`: distances summed over the columns in order,
    the centroid a running sum), so the same classes, label for label (the tests
    compare them); a class then costs a farthest search and a nearest search per
    bucket. O(n·d) memory either way.
    """
    n, b = X.shape[0], plan.shape[1]
    types, type_count = np.unique(plan, axis=0, return_counts=True)
    if COMPILED and n >= _SMALL_POOL and X.shape[1]:
        from core.methods.bucket_loop import bucket_classes
        return bucket_classes(X, codes, types, type_count, state)
    labels = np.full(n, -1, dtype=np.int64)
    members = [np.flatnonzero(codes == j) for j in range(b)]
    everyone, pools = RecordPool(X), [RecordPool(X[records]) for records in members]
    n_classes = len(plan)
    for c in range(n_classes):
        seed = everyone.record(everyone.farthest(everyone.centroid()))
        point, home = X[seed], int(codes[seed])
        available = np.flatnonzero(type_count > 0)
        cost = np.zeros(len(available))
        nearest = []
        for j in range(b):
            include = (pools[j].position(int(np.searchsorted(members[j], seed)))
                       if j == home else None)
            positions, distances = _nearest(pools[j], point, int(types[available, j].max()),
                                            include)
            cost += np.concatenate(([0.0], np.cumsum(distances)))[types[available, j]]
            nearest.append(positions)
        chosen = int(available[int(np.argmin(cost))])
        type_count[chosen] -= 1
        taken = []
        for j in range(b):
            positions = nearest[j][:types[chosen, j]]
            taken.append(members[j][pools[j].records_at(positions)])
            pools[j].remove(np.sort(positions))
        taken = np.sort(np.concatenate(taken))
        labels[taken] = c
        everyone.remove(everyone.positions_of(taken))
        state.step((c + 1) / n_classes, f"tc-bucket: class {c + 1} of {n_classes}")
    return labels


def _one_attribute(confidential) -> tuple[str, pd.Series]:
    if isinstance(confidential, pd.DataFrame):
        if confidential.shape[1] != 1:
            raise MicroaggError(
                f"tc-bucket bucketizes one confidential attribute; got "
                f"{confidential.shape[1]} ({', '.join(map(str, confidential.columns))}). "
                "Mark one column as confidential, or use tc-merge, tc-kfirst or tc-tfirst "
                "(EMD t-closeness of every attribute).")
        confidential = confidential.iloc[:, 0]
    if isinstance(confidential, pd.Series):
        name = str(confidential.name) if confidential.name is not None else "confidential"
    else:
        array = np.asarray(confidential)
        if array.ndim == 2 and array.shape[1] == 1:
            array = array[:, 0]
        if array.ndim != 1:
            raise MicroaggError("tc-bucket bucketizes one confidential attribute; give a "
                                "single column.")
        name, confidential = "confidential", array
    return name, as_series(confidential, name)
