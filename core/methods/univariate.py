"""Optimal microaggregation of records in a fixed order (Hansen–Mukherjee shortest path).

Vocabulary. An *order* is a sequence of records (the rows of ``X_ordered``, in that
order). A partition *of the order* cuts it into runs of consecutive records; here every
run has k to 2k−1 records. Its cost is the within-group SSE: the sum, over all records,
of the squared Euclidean distance to the mean of the record's run, over all d columns.

Nin, *One dimension microaggregation (Mic1D-k)*, Section 2.2 ("Optimal Univariate
Microaggregation"), after Hansen & Mukherjee, "A polynomial algorithm for optimal
univariate microaggregation", IEEE Trans. Knowledge and Data Engineering 15(4),
1043–1044 (2003): node i of a graph stands for "the first i records are grouped"; the
edge i → j exists for k ≤ j − i ≤ 2k − 1 and costs the SSE of records i .. j−1; the
shortest path from node 0 to node n is the optimal partition of the order. For
univariate data sorted by value it is the optimal univariate microaggregation, because
some optimal partition has contiguous groups of k to 2k−1 values (Domingo-Ferrer &
Mateo-Sanz 2002, the paper's reference [7]). The same shortest path with a
multivariate SSE is the partition step of projected microaggregation
(:mod:`core.methods.projection`).

Choices where the description is silent:

- The graph is acyclic and ordered, so the shortest path is a dynamic programme over
  the nodes in increasing order (what Dijkstra reduces to here): O(n·k·d) time and
  O(n·d) memory, with no n × n matrix.
- Edge costs come from prefix sums of x and of |x|² (O(d) per edge). Those sums lose
  precision on long inputs, so the columns are centred first (their means subtracted,
  which changes no SSE) and segment SSEs that rounding made slightly negative are set
  to 0. The remaining absolute error of an edge cost is about n·d·ε times the mean
  squared centred value (ε = 2.2e−16), far below any group's SSE on real data.
- Every sum over the attributes (a row's squared norm, the squared norm of a run's
  sum) adds the columns in order, starting from 0, rather than with numpy's vectorised
  dot products, whose order (and fused multiply-adds) depend on the processor. Each
  cost is then one defined floating-point number, which the compiled path
  (:mod:`core.methods.ordered_cuts`, used when :data:`core.compiled.COMPILED`)
  reproduces bit for bit; with one or two attributes it is the dot product's number.
- Ties between equal-cost paths (equal in floating point): at every node the last group
  is the smallest among the equally cheap ones. The partition returned is therefore,
  among the optimal ones, the one whose group sizes read from the END of the order are
  lexicographically smallest (small groups late, larger groups early).
"""

from __future__ import annotations

import numbers

import numpy as np

from core.errors import MicroaggError
from core.data.prepare import check_group_size
from core.progress import TaskState
from core.methods import ordered_cuts

__all__ = ["optimal_partition_of_order", "optimal_univariate"]

# Elements of the (nodes × candidate sizes × attributes) scratch array computed at once.
_CHUNK_ELEMENTS = 1 << 20


def check_k(k) -> int:
    """``k`` as an int, or :class:`MicroaggError` unless it is an integer ≥ 2."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
        raise MicroaggError(
            f"The 'k' parameter must be an integer in the range [2, inf]; got {k!r}."
        )
    return int(k)


def check_records(X, name: str = "X") -> np.ndarray:
    """``X`` as a finite float64 array of shape (n_records, n_attributes); no copy if possible."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < 1:
        raise MicroaggError(
            f"'{name}' must be a 2-D array (records × attributes) with at least one "
            f"attribute; got shape {X.shape}."
        )
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise MicroaggError(
            f"'{name}' has {int(bad.sum())} missing or infinite value(s) (first at row "
            f"{row + 1}, attribute {column + 1}). Replace them with finite values."
        )
    return X


def optimal_partition_of_order(
    X_ordered: np.ndarray, *, k: int, state: TaskState | None = None
) -> np.ndarray:
    """Cut an ordered set of records into runs of k..2k−1 records with minimum total SSE.

    The Hansen–Mukherjee shortest path (Nin, Mic1D-k, Section 2.2) with a multivariate
    edge cost: the cost of grouping records i .. j−1 is the sum of their squared
    Euclidean distances to their mean over all d columns. The rows are not reordered.

    Parameters
    ----------
    X_ordered : ndarray of shape (n_records, n_attributes)
        The records, already in the order to be cut (e.g. sorted by a projection).
    k : int
        Minimum group size, ``2 <= k <= n_records``.
    state : TaskState, optional
        Receives progress at least once per 1 % of the nodes and may cancel the run.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group id of every row in the given order: 0 .. n_groups−1, non-decreasing along
        the rows, each id on k to 2k−1 consecutive rows. Among equally cheap partitions,
        the one with the smallest groups at the end of the order (see the module notes).

    Raises
    ------
    MicroaggError
        ``k`` is not an integer ≥ 2, there are fewer than ``k`` records, or ``X_ordered``
        is not a finite 2-D array.

    Examples
    --------
    >>> X = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0], [13.0]])
    >>> optimal_partition_of_order(X, k=3).tolist()
    [0, 0, 0, 1, 1, 1, 1]
    """
    k = check_k(k)
    X = check_records(X_ordered, "X_ordered")
    check_group_size(len(X), k)
    return _partition_of_order(X, k, state or TaskState(), compiled=ordered_cuts.COMPILED)


def _partition_of_order(X: np.ndarray, k: int, state: TaskState, *,
                        compiled: bool) -> np.ndarray:
    """Labels of :func:`optimal_partition_of_order` for a checked ``X``, by either path."""
    _, last_size = _shortest_path(X, k, state, compiled=compiled)
    sizes = ordered_cuts.group_sizes(last_size)
    labels = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    state.step(1.0, f"Optimal partition: {sizes.size} groups")
    return labels


def _shortest_path(X: np.ndarray, k: int, state: TaskState, *,
                   compiled: bool) -> tuple[np.ndarray, np.ndarray]:
    """``cost`` and ``last_size`` of every node: the compiled kernels or the reference.

    Both paths give the same two arrays, bit for bit (see the module notes).
    """
    mean = X.mean(axis=0)
    if compiled:
        prefix, prefix_sq = ordered_cuts.centred_prefix_sums(X, mean)
        return ordered_cuts.shortest_path(prefix, prefix_sq, k=k, state=state)
    prefix, prefix_sq = _reference_prefix_sums(X, mean)
    return _reference_shortest_path(prefix, prefix_sq, k, state)


def _reference_prefix_sums(X: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, d = X.shape
    centred = X - mean
    prefix = np.zeros((n + 1, d))
    np.cumsum(centred, axis=0, out=prefix[1:])
    prefix_sq = np.zeros(n + 1)
    np.cumsum(_squared_norms(centred), out=prefix_sq[1:])
    return prefix, prefix_sq


def _squared_norms(vectors: np.ndarray) -> np.ndarray:
    """Squared norm along the last axis, the columns added in order from 0."""
    norms = vectors[..., 0] * vectors[..., 0]
    for column in range(1, vectors.shape[-1]):
        norms += vectors[..., column] * vectors[..., column]
    return norms


def _reference_shortest_path(prefix: np.ndarray, prefix_sq: np.ndarray, k: int,
                             state: TaskState) -> tuple[np.ndarray, np.ndarray]:
    """The numpy dynamic programme over the nodes: ``cost`` and ``last_size`` per node."""
    n, d = prefix.shape[0] - 1, prefix.shape[1]
    sizes = np.arange(k, 2 * k, dtype=np.int64)  # candidate sizes of the last group
    cost = np.full(n + 1, np.inf)
    cost[0] = 0.0
    last_size = np.zeros(n + 1, dtype=np.int64)

    # Nodes j .. j+k−1 only depend on nodes < j (every edge spans at least k records),
    # so up to k nodes are settled at once. Edge costs are computed a chunk of nodes at a
    # time, the chunk sized to bound the (nodes × sizes × attributes) scratch array.
    chunk = max(1, _CHUNK_ELEMENTS // (k * d))
    block_size = min(k, chunk)
    n_nodes = n - k + 1  # nodes k .. n; nodes 1 .. k−1 are unreachable
    report_every = max(1, n_nodes // 200)
    next_report = 0
    for chunk_start in range(k, n + 1, chunk):
        ends = np.arange(chunk_start, min(chunk_start + chunk, n + 1))
        starts, edge = _segment_sse(prefix, prefix_sq, ends, sizes)
        for lo in range(0, ends.size, block_size):
            block = slice(lo, lo + block_size)
            total = cost[starts[block]] + edge[block]
            best = np.argmin(total, axis=1)  # first minimum = smallest last group
            nodes = ends[block]
            cost[nodes] = total[np.arange(best.size), best]
            last_size[nodes] = sizes[best]
            done = int(nodes[-1]) - k + 1
            if done >= next_report:
                state.step(done / n_nodes, "Optimal partition: shortest path")
                next_report = done + report_every
    # Every node ≥ k is reachable (any count ≥ k splits into runs of k..2k−1), so the
    # walk back from n only visits settled nodes and ends exactly at 0.
    return cost, last_size


def _segment_sse(prefix: np.ndarray, prefix_sq: np.ndarray, ends: np.ndarray,
                 sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start node and SSE of the run of each size in ``sizes`` ending at each of ``ends``.

    Returns ``starts`` and ``sse`` of shape (len(ends), len(sizes)); a run that would
    start before the first record gets start 0 and SSE +inf.
    """
    starts = ends[:, None] - sizes[None, :]
    outside = starts < 0
    starts[outside] = 0
    sums = prefix[ends][:, None, :] - prefix[starts]
    sse = (prefix_sq[ends][:, None] - prefix_sq[starts]) - _squared_norms(sums) / sizes
    np.maximum(sse, 0.0, out=sse)  # rounding can leave a tiny negative SSE
    sse[outside] = np.inf
    return starts, sse


def optimal_univariate(
    values: np.ndarray, *, k: int, state: TaskState | None = None
) -> np.ndarray:
    """Optimal univariate microaggregation: minimum-SSE groups of k..2k−1 values.

    Sorts the values (stable sort, so equal values keep their input order), cuts the
    sorted sequence with :func:`optimal_partition_of_order`, and maps the groups back to
    the input order. Hansen & Mukherjee (2003) prove the result optimal among all
    partitions into groups of at least k values (Nin, Mic1D-k, Section 2.2).

    Parameters
    ----------
    values : ndarray of shape (n_records,)
        One numeric attribute.
    k : int
        Minimum group size, ``2 <= k <= n_records``.
    state : TaskState, optional
        Receives progress and may cancel the run.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group id of every value in the input order; ids increase with the values
        (group 0 holds the smallest values).

    Raises
    ------
    MicroaggError
        ``k`` is not an integer ≥ 2, there are fewer than ``k`` values, or ``values`` is
        not a finite 1-D array.

    Examples
    --------
    >>> optimal_univariate(np.array([12.0, 1.0, 10.0, 3.0, 13.0, 2.0, 11.0]), k=3).tolist()
    [1, 0, 1, 0, 1, 0, 1]
    """
    k = check_k(k)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise MicroaggError(
            f"'values' must be a 1-D array (one attribute); got shape {values.shape}."
        )
    check_records(values[:, None], "values")
    check_group_size(values.size, k)
    state = state or TaskState()
    order = ordered_cuts.stable_argsort(values, state=state)
    labels_sorted = _partition_of_order(values[order][:, None], k, state,
                                        compiled=ordered_cuts.COMPILED)
    labels = np.empty_like(labels_sorted)
    labels[order] = labels_sorted
    return labels
