"""Earth mover's distance (EMD) for t-closeness: the distances and their vocabulary.

Vocabulary (Soria-Comas, Domingo-Ferrer, Sánchez & Martínez, "t-Closeness through
Microaggregation", IEEE TKDE 2015, Section 2.2):

equivalence class
    The records that share one masked quasi-identifier tuple.
t-closeness
    Every equivalence class's distribution of each confidential attribute is within EMD
    ``t`` of that attribute's distribution in the whole table (Definition 2).
ordered distance (numerical or ordinal attributes)
    The m distinct values of the attribute in the whole table are ranked 0..m−1 and two
    values are |i − j| / (m − 1) apart. The EMD is then
    ``(1/(m−1)) · Σ_{i=0}^{m−2} |F_C(i) − F_T(i)|`` with F the cumulative distributions
    (the formula of Section 2.2).
equal distance (nominal attributes)
    Two different categories are 1 apart; the EMD is half the L1 distance between the
    class's and the table's category frequencies.

Cost. A class's ordered EMD is computed from the ranks of its members in
O(|C| log |C| + |C| log m): ``F_C`` is a step function with at most |C| steps, and on
each interval where it is constant (level c) the sum of |c − F_T(i)| splits where the
non-decreasing ``F_T`` crosses c (a binary search) into two sums read from a prefix
array of ``F_T`` prepared once per attribute (size m). Nothing per class is O(m).
Algorithm 2's candidate swaps (:meth:`TCloseAttribute.swap_emds`) cost
O(|C| log |C|) each for clusters of up to 40 records (each swapped cluster recomputed:
fewer numpy calls) and O(log |C| + log m) each above that (an incremental update);
never O(n).

Exactness. Sums are formed from integer counts (scaled by n·|C|) in float64, exact
while the products stay below 2**53, so EMDs agree with a naive computation to about
1e-16. :data:`EMD_TOLERANCE` (1e-12) absorbs that float noise: an EMD within 1e-12 of
``t`` counts as within ``t``, in the methods and in the verifier alike.
"""

from __future__ import annotations


import numpy as np
import pandas as pd


__all__ = ["EMD_TOLERANCE", "KINDS", "ranks", "emd_ordered", "emd_nominal"]


#: An EMD within this of t counts as within t (float noise only; see the module notes).
EMD_TOLERANCE = 1e-12


KINDS = ("numerical", "nominal")


# Up to this cluster size, swaps are evaluated by recomputing each swapped cluster
# (O(|C| log |C|) each, but fewer numpy calls); above it by the update of
# _ordered_swaps / _nominal_swaps (O(log |C| + log m) per swap).
_DIRECT_SWAP_SIZE = 40


# h = j·n − s·G(i) crosses n, 0 and −n where s·G(i) reaches (j−1)·n, j·n and (j+1)·n.
_THRESHOLDS = np.array([-1.0, 0.0, 1.0])


def ranks(values) -> tuple[np.ndarray, int]:
    """Rank of every record's value among the m distinct values of the whole column.

    Parameters
    ----------
    values : array-like of shape (n_records,)
        Numeric, or any sortable values (ordinal categories as sortable labels).

    Returns
    -------
    rank_per_record : ndarray of shape (n_records,), int64
        0 for the smallest distinct value, m−1 for the largest; equal values share a rank.
    m : int
        The number of distinct values.

    Examples
    --------
    >>> r, m = ranks([30, 10, 20, 10])
    >>> r.tolist(), m
    ([2, 0, 1, 0], 3)
    """
    codes, uniques = pd.factorize(pd.Series(values), sort=True)
    return codes.astype(np.int64), len(uniques)


def _cumulative(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative counts G (size m) and their prefix sums P (size m+1, P[x] = Σ_{i<x} G(i))."""
    cumulative = np.cumsum(counts, dtype=np.int64)
    prefix = np.concatenate(([0.0], np.cumsum(cumulative, dtype=np.float64)))
    return cumulative.astype(np.float64), prefix


def _ordered_sum(sorted_ranks: np.ndarray, cumulative: np.ndarray, prefix: np.ndarray,
                 n: int) -> np.ndarray:
    """``n·s·Σ_{i<m−1}|F_C(i) − F_T(i)|`` for each row of sorted member ranks.

    ``sorted_ranks`` has shape (..., s), each row ascending (repeats allowed). The step
    function F_C is j/s on [r_j, r_{j+1}) (r_0 = 0, r_{s+1} = m−1); on each interval
    the sum of |j·n − s·G(i)| is split where s·G(i) reaches j·n (binary search in the
    non-decreasing G) and read from the prefix sums P of G.
    """
    m = len(cumulative)
    s = sorted_ranks.shape[-1]
    shape = sorted_ranks.shape[:-1] + (1,)
    start = np.concatenate((np.zeros(shape, dtype=np.int64), sorted_ranks), axis=-1)
    stop = np.concatenate((sorted_ranks, np.full(shape, m - 1, dtype=np.int64)), axis=-1)
    stop = np.maximum(stop, start)
    level = np.arange(s + 1, dtype=np.float64) * n  # j·n, the scaled height of F_C
    split = np.searchsorted(cumulative, level / s, side="left")
    split = np.clip(split, start, stop)
    below = level * (split - start) - s * (prefix[split] - prefix[start])
    above = s * (prefix[stop] - prefix[split]) - level * (stop - split)
    return (below + above).sum(axis=-1)


def emd_ordered(cluster_ranks, m: int, table_counts) -> float:
    """EMD with the ordered distance between a cluster and the whole table.

    Parameters
    ----------
    cluster_ranks : array-like of int, shape (cluster_size,)
        Ranks (0..m−1, from :func:`ranks`) of the cluster's members; repeats allowed.
    m : int
        Number of distinct values in the whole table.
    table_counts : array-like of int, shape (m,)
        How many records of the whole table have each rank.

    Returns
    -------
    float
        ``(1/(m−1)) Σ_{i=0}^{m−2} |F_C(i) − F_T(i)|`` (paper, Section 2.2); 0 when m = 1.
        Cost O(|C| log |C| + |C| log m) once the table's arrays exist (this convenience
        function builds them in O(m); :class:`TCloseAttribute` builds them once).

    Examples
    --------
    Six distinct values, one record each; a cluster holding the two smallest:

    >>> emd_ordered([0, 1], 6, [1, 1, 1, 1, 1, 1])  # (1/5)(|1/2−1/6|+|1−2/6|+...+|1−5/6|)
    0.4
    """
    table_counts = np.asarray(table_counts, dtype=np.int64)
    if m <= 1:
        return 0.0
    cumulative, prefix = _cumulative(table_counts)
    members = np.sort(np.asarray(cluster_ranks, dtype=np.int64))
    n = int(cumulative[-1])
    total = _ordered_sum(members, cumulative, prefix, n)
    return float(total) / (n * len(members) * (m - 1))


def emd_nominal(cluster_codes, table_distribution) -> float:
    """EMD with the equal distance: half the L1 distance between the distributions.

    Parameters
    ----------
    cluster_codes : array-like of int, shape (cluster_size,)
        Category codes (0..m−1) of the cluster's members.
    table_distribution : array-like of float, shape (m,)
        Share of each category in the whole table (sums to 1).

    Returns
    -------
    float
        ``½ Σ_v |p_C(v) − p_T(v)|``, computed in O(|C| log |C|) from the cluster's
        counts: categories absent from the cluster contribute their table share, which is
        ``1 − Σ_{v in C} p_T(v)``.

    Examples
    --------
    >>> emd_nominal([0, 0], [0.5, 0.25, 0.25])
    0.5
    """
    p_table = np.asarray(table_distribution, dtype=np.float64)
    present, counts = np.unique(np.asarray(cluster_codes, dtype=np.int64), return_counts=True)
    shares = p_table[present]
    inside = np.abs(counts / counts.sum() - shares).sum()
    return float(0.5 * (inside + max(0.0, 1.0 - shares.sum())))
