"""Earth mover's distance (EMD) for t-closeness, and the independent t-closeness verifier.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import MicroaggError

__all__ = [
    "EMD_TOLERANCE", "KINDS", "ranks", "emd_ordered", "emd_nominal", "TCloseAttribute",
    "tclose_attributes", "TClosenessVerification", "verify_t_closeness", "class_emds",
]

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


@dataclass(frozen=True, eq=False)
class TCloseAttribute:
    """One confidential attribute, prepared once for fast EMDs of many clusters.

    Attributes
    ----------
    name : str
    kind : {"numerical", "nominal"}
        ``numerical``: ordered distance over the ranks of the distinct values (also right
        for ordinal attributes given as sortable values); ``nominal``: equal distance.
    codes : ndarray of shape (n_records,), int64
        Rank (numerical) or category code (nominal, codes in sorted label order) per record.
    m : int
        Number of distinct values in the whole table.
    counts : ndarray of shape (m,), int64
        Records per value in the whole table.
    """

    name: str
    kind: str
    codes: np.ndarray
    m: int
    counts: np.ndarray
    _cumulative: np.ndarray = field(repr=False)
    _prefix: np.ndarray = field(repr=False)

    @classmethod
    def from_values(cls, values, *, kind: str | None = None, name: str = "confidential"):
        """Prepare a column. ``kind`` defaults to numerical for numeric (and boolean) data.

        Raises
        ------
        MicroaggError
            Missing values, an unknown kind, or an empty column.
        """
        series = pd.Series(values).reset_index(drop=True)
        if kind is None:
            kind = "numerical" if pd.api.types.is_numeric_dtype(series) else "nominal"
        if kind not in KINDS:
            raise MicroaggError(
                f"The distance kind of confidential column '{name}' must be one of "
                f"{', '.join(repr(k) for k in KINDS)}. Got {kind!r} instead.")
        if len(series) == 0:
            raise MicroaggError(f"Confidential column '{name}' has no records.")
        missing = series.isna().to_numpy()
        if missing.any():
            raise MicroaggError(
                f"Confidential column '{name}' has {int(missing.sum())} missing value(s) "
                f"(first at data row {int(np.flatnonzero(missing)[0]) + 1}). t-closeness "
                "needs every value; impute or remove those rows.")
        try:
            codes, m = ranks(series)
        except TypeError:
            raise MicroaggError(
                f"Confidential column '{name}' mixes values that cannot be ordered; "
                "convert it to one type (text or numbers).") from None
        counts = np.bincount(codes, minlength=m).astype(np.int64)
        cumulative, prefix = _cumulative(counts)
        return cls(name=str(name), kind=kind, codes=codes, m=m, counts=counts,
                   _cumulative=cumulative, _prefix=prefix)

    @property
    def n(self) -> int:
        return len(self.codes)

    def emd(self, members) -> float:
        """EMD of the cluster whose record indices are ``members`` (shape (cluster_size,))."""
        return float(self.emd_of_codes_batch(np.sort(self.codes[np.asarray(members)])[None])[0])

    def emd_of_codes_batch(self, sorted_codes: np.ndarray) -> np.ndarray:
        """EMDs of many clusters of one size at once.

        Parameters
        ----------
        sorted_codes : ndarray of shape (n_clusters, cluster_size), int64
            Each row the member codes of one cluster, in ascending order.

        Returns
        -------
        ndarray of shape (n_clusters,)
        """
        s = sorted_codes.shape[-1]
        if self.m <= 1:
            return np.zeros(sorted_codes.shape[:-1])
        if self.kind == "numerical":
            total = _ordered_sum(sorted_codes, self._cumulative, self._prefix, self.n)
            return total / (float(self.n) * s * (self.m - 1))
        return self._nominal_batch(sorted_codes)

    def _nominal_batch(self, sorted_codes: np.ndarray) -> np.ndarray:
        """Half L1 per row, from run lengths of the sorted codes (O(size) per row)."""
        rows, s = sorted_codes.shape
        flat = sorted_codes.ravel()
        starts = np.ones(flat.size, dtype=bool)
        starts[1:] = flat[1:] != flat[:-1]
        starts[::s] = True
        run_start = np.flatnonzero(starts)
        run_length = np.diff(np.append(run_start, flat.size))
        run_row = run_start // s
        shares = self.counts[flat[run_start]] / self.n
        gap = np.abs(run_length / s - shares) - shares
        return 0.5 * (1.0 + np.bincount(run_row, weights=gap, minlength=rows))

    def swap_emds(self, members, incoming) -> np.ndarray:
        """EMD after swapping each of ``incoming`` for each member.

        Parameters
        ----------
        members : ndarray of shape (cluster_size,)
            Record indices of the cluster.
        incoming : ndarray of shape (n_candidates,)
            Record indices of candidate records from outside the cluster.

        Returns
        -------
        ndarray of shape (n_candidates, cluster_size)
            Entry [a, b] is the EMD of the cluster with ``members[b]`` replaced by
            ``incoming[a]`` (Algorithm 2's ``C ∪ {y} \\ {y′}``).

        Notes
        -----
        Cost O((|C| + n_candidates)(log |C| + log m) + n_candidates·|C|), independent of
        n. Ordered distance: with ``h(i) = n·s·(F_C(i) − F_T(i))``, replacing a member of
        rank a by a record of rank b adds n to h on [b, a) (b < a) or subtracts n on
        [a, b) (b > a), so the new sum of |h| is the old one plus ``U(a) − U(b)`` or
        ``D(b) − D(a)``, where U(x) = Σ_{i<x} (|h(i)+n| − |h(i)|) and D likewise with −n.
        U and D are piecewise sums over the cluster's steps, read from the prefix sums of
        the table's cumulative counts. Equal distance: only two category counts change.
        """
        member_codes = self.codes[np.asarray(members)]
        new = self.codes[np.asarray(incoming)]
        s = len(member_codes)
        if self.m <= 1:
            return np.zeros((len(new), s))
        if s <= _DIRECT_SWAP_SIZE:
            return self._swap_emds_direct(members, incoming)  # fewer numpy calls
        if self.kind == "nominal":
            return self._nominal_swaps(np.sort(member_codes), member_codes, new)
        return self._ordered_swaps(member_codes, new)

    def _ordered_swaps(self, member_codes: np.ndarray, new: np.ndarray) -> np.ndarray:
        """The ordered-distance case of :meth:`swap_emds`, in one vectorized pass.

        Every query is a range [lo, hi) of ranks on which the cluster's cumulative count
        is a constant j: the s+1 whole steps of the cluster, and for each member and
        candidate rank x the part of its step below x. On a range, h = j·n − s·G(i) falls
        as i grows; its three thresholds (h = n, 0, −n) split the range into regions where
        |h|, |h+n| − |h| and |h−n| − |h| are linear in G, summed from the prefix sums P.
        """
        n, m = float(self.n), self.m
        G, P = self._cumulative, self._prefix
        s = len(member_codes)
        ordered = np.sort(member_codes)
        points = np.concatenate((member_codes, new))
        step = np.searchsorted(ordered, points, side="right")
        starts = np.concatenate(([0], ordered))
        j = np.concatenate((np.arange(s + 1), step))
        lo = np.concatenate((starts, starts[step]))
        hi = np.concatenate((ordered, [m - 1], points))
        bounds = np.searchsorted(G, (j[:, None] + _THRESHOLDS) * (n / s))
        bounds = np.clip(bounds, lo[:, None], hi[:, None])
        edges = np.concatenate((lo[:, None], bounds, hi[:, None]), axis=1)  # (Q, 5)
        count = np.diff(edges, axis=1)
        h_sum = (j * n)[:, None] * count - s * np.diff(P[edges], axis=1)
        absolute = h_sum[:, 0] + h_sum[:, 1] - h_sum[:, 2] - h_sum[:, 3]
        up = n * (count[:, 0] + count[:, 1] + count[:, 2] - count[:, 3]) + 2 * h_sum[:, 2]
        down = n * (count[:, 1] + count[:, 2] + count[:, 3] - count[:, 0]) - 2 * h_sum[:, 1]
        whole_up = np.concatenate(([0.0], np.cumsum(up[:s + 1])))
        whole_down = np.concatenate(([0.0], np.cumsum(down[:s + 1])))
        up_at = whole_up[step] + up[s + 1:]
        down_at = whole_down[step] + down[s + 1:]
        a, b = member_codes[None, :], new[:, None]
        delta = np.where(b < a, up_at[None, :s] - up_at[s:, None],
                         down_at[s:, None] - down_at[None, :s])
        return (absolute[:s + 1].sum() + delta) / (n * s * (m - 1))

    def _nominal_swaps(self, ordered, member_codes, new) -> np.ndarray:
        s, n = len(ordered), float(self.n)
        count_out = (np.searchsorted(ordered, member_codes, side="right")
                     - np.searchsorted(ordered, member_codes, side="left"))
        count_in = (np.searchsorted(ordered, new, side="right")
                    - np.searchsorted(ordered, new, side="left"))
        target_out = s * self.counts[member_codes] / n
        target_in = s * self.counts[new] / n
        out_change = (np.abs(count_out - 1 - target_out) - np.abs(count_out - target_out))
        in_change = (np.abs(count_in + 1 - target_in) - np.abs(count_in - target_in))
        current = self._nominal_batch(ordered[None])[0]
        delta = 0.5 * (out_change[None, :] + in_change[:, None]) / s
        same = new[:, None] == member_codes[None, :]
        return np.where(same, current, current + delta)

    def _swap_emds_direct(self, members, incoming) -> np.ndarray:
        """:meth:`swap_emds` by recomputing every swapped cluster (reference for tests)."""
        codes = self.codes[np.asarray(members)]
        s = len(codes)
        keep = ~np.eye(s, dtype=bool)
        without = np.broadcast_to(codes, (s, s))[keep].reshape(s, s - 1)
        new = self.codes[np.asarray(incoming)]
        grid = np.concatenate(
            (np.broadcast_to(without, (len(new), s, s - 1)),
             np.broadcast_to(new[:, None, None], (len(new), s, 1))), axis=-1)
        grid = np.sort(grid, axis=-1).reshape(len(new) * s, s)
        return self.emd_of_codes_batch(grid).reshape(len(new), s)

    def class_emds(self, labels: np.ndarray) -> np.ndarray:
        """EMD of every group of ``labels`` (ids 0..G−1), shape (G,), in O(n log n) total."""
        return class_emds(self, labels)


def class_emds(attribute: TCloseAttribute, labels: np.ndarray) -> np.ndarray:
    """EMD of each group of a partition for one attribute, all groups at once.

    Parameters
    ----------
    attribute : TCloseAttribute
    labels : ndarray of shape (n_records,), ints 0..G−1 (every id used)

    Returns
    -------
    ndarray of shape (G,)
    """
    labels = np.asarray(labels, dtype=np.int64)
    sizes = np.bincount(labels)
    order = np.lexsort((attribute.codes, labels))
    codes = attribute.codes[order]
    result = np.empty(len(sizes))
    # Groups of equal size are evaluated together as one (n_groups, size) matrix.
    group_start = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    for size in np.unique(sizes):
        groups = np.flatnonzero(sizes == size)
        block = codes[group_start[groups, None] + np.arange(size)]
        result[groups] = attribute.emd_of_codes_batch(block)
    return result


def tclose_attributes(confidential, kinds=None) -> tuple[TCloseAttribute, ...]:
    """Prepare confidential attributes given in any of the accepted forms.

    Parameters
    ----------
    confidential : DataFrame, Series, ndarray of shape (n_records,) or (n_records, p),
        a TCloseAttribute, or a sequence of TCloseAttribute
    kinds : str, or mapping column → kind, or sequence of kinds, optional
        "numerical" or "nominal" per attribute; by default numeric data are numerical,
        anything else nominal.

    Returns
    -------
    tuple of TCloseAttribute
    """
    if isinstance(confidential, TCloseAttribute):
        return (confidential,)
    if isinstance(confidential, (list, tuple)) and confidential and \
            all(isinstance(a, TCloseAttribute) for a in confidential):
        return tuple(confidential)
    if isinstance(confidential, pd.Series):
        confidential = confidential.to_frame(name=confidential.name or "confidential")
    if not isinstance(confidential, pd.DataFrame):
        array = np.asarray(confidential)
        if array.ndim == 1:
            array = array[:, None]
        confidential = pd.DataFrame(array, columns=[f"confidential_{j}"
                                                    for j in range(array.shape[1])])
    columns = list(confidential.columns)
    if not columns:
        raise MicroaggError("t-closeness needs at least one confidential column.")
    if kinds is None or isinstance(kinds, str):
        kinds = [kinds] * len(columns)
    elif isinstance(kinds, Mapping):
        unknown = [c for c in kinds if c not in columns]
        if unknown:
            raise MicroaggError(f"Column '{unknown[0]}' has a distance kind but is not a "
                                "confidential column.")
        kinds = [kinds.get(c) for c in columns]
    elif len(kinds) != len(columns):
        raise MicroaggError(f"Give one distance kind per confidential column "
                            f"({len(columns)}); got {len(kinds)}.")
    return tuple(TCloseAttribute.from_values(confidential[c], kind=kind, name=str(c))
                 for c, kind in zip(columns, kinds))


@dataclass(frozen=True)
class TClosenessVerification:
    """What the t-closeness verifier found on a masked table.

    Attributes
    ----------
    t : float
        The level checked.
    passed : bool
        Every class's EMD is at most ``t + tolerance`` for every confidential attribute.
    attributes : tuple of str
        The confidential columns, in the order given.
    kinds : tuple of str
        The distance used for each ("numerical": ordered; "nominal": equal).
    max_emd : tuple of float
        Largest class EMD per attribute.
    worst_class : tuple of dict
        Per attribute, the masked quasi-identifier values of the class with the largest EMD.
    worst_class_size : tuple of int
    classes_over_t : tuple of int
        Per attribute, how many classes exceed ``t + tolerance``.
    n_classes, smallest_class : int
        Equivalence classes of the masked quasi-identifiers and the size of the smallest.
    tolerance : float
        :data:`EMD_TOLERANCE`, absorbing float noise only.
    """

    t: float
    passed: bool
    attributes: tuple[str, ...]
    kinds: tuple[str, ...]
    max_emd: tuple[float, ...]
    worst_class: tuple[dict, ...]
    worst_class_size: tuple[int, ...]
    classes_over_t: tuple[int, ...]
    n_classes: int
    smallest_class: int
    tolerance: float = EMD_TOLERANCE

    @property
    def max_emd_by_attribute(self) -> dict[str, float]:
        return dict(zip(self.attributes, self.max_emd))

    def describe(self) -> str:
        status = "PASSED" if self.passed else "FAILED"
        parts = []
        for name, kind, emd, over in zip(self.attributes, self.kinds, self.max_emd,
                                         self.classes_over_t):
            distance = "ordered distance" if kind == "numerical" else "equal distance"
            text = f"'{name}' largest EMD {emd:.4f} ({distance})"
            if over:
                text += f", {over} class(es) over t"
            parts.append(text)
        return (f"t-closeness {status} at t = {self.t:g}: " + "; ".join(parts)
                + f". {self.n_classes} equivalence classes, the smallest of "
                  f"{self.smallest_class} records.")


def verify_t_closeness(masked: pd.DataFrame, quasi_identifiers: Sequence[str],
                       confidential: Sequence[str], t: float, *,
                       kinds: Mapping[str, str] | Sequence[str] | str | None = None,
                       ) -> TClosenessVerification:
    """Check t-closeness on a masked table alone.

    Equivalence classes are the distinct masked quasi-identifier tuples (exact equality,
    ``groupby``); no partition or label from the method is used. For every confidential
    column, each class's EMD to that column's distribution in the whole masked table is
    computed (microaggregation leaves confidential values unchanged, so this is the
    original distribution).

    Parameters
    ----------
    masked : DataFrame of n_records rows
    quasi_identifiers : column names (the masked ones)
    confidential : column names
    t : float
        The EMD bound, 0 <= t <= 1.
    kinds : "numerical"/"nominal" per column (mapping or sequence), optional
        Default: numerical for numeric columns (ordered distance over the distinct values),
        nominal otherwise (equal distance).

    Returns
    -------
    TClosenessVerification

    Examples
    --------
    >>> table = pd.DataFrame({"qi": [1, 1, 2, 2], "salary": [10, 30, 20, 40]})
    >>> verify_t_closeness(table, ["qi"], ["salary"], 0.2).passed
    True
    """
    if not (isinstance(t, (int, float, np.integer, np.floating)) and 0 <= float(t) <= 1):
        raise MicroaggError(f"The 't' parameter must be a number in [0, 1]. Got {t!r}.")
    qi, confidential = list(quasi_identifiers), list(confidential)
    for column in qi + confidential:
        if column not in masked.columns:
            raise MicroaggError(f"Column '{column}' is not in the masked table.")
    if not qi:
        raise MicroaggError("t-closeness is checked on quasi-identifiers; none was given.")
    attributes = tclose_attributes(masked[confidential], kinds)
    classes = masked.groupby(qi, dropna=False, sort=False).ngroup().to_numpy()
    sizes = np.bincount(classes)
    first_row = np.full(len(sizes), len(masked))
    np.minimum.at(first_row, classes, np.arange(len(masked)))
    max_emd, worst, worst_size, over = [], [], [], []
    for attribute in attributes:
        emds = class_emds(attribute, classes)
        index = int(np.argmax(emds))
        max_emd.append(float(emds[index]))
        worst.append({c: masked[c].iat[first_row[index]] for c in qi})
        worst_size.append(int(sizes[index]))
        over.append(int((emds > float(t) + EMD_TOLERANCE).sum()))
    return TClosenessVerification(
        t=float(t), passed=not any(over), attributes=tuple(a.name for a in attributes),
        kinds=tuple(a.kind for a in attributes), max_emd=tuple(max_emd),
        worst_class=tuple(worst), worst_class_size=tuple(worst_size),
        classes_over_t=tuple(over), n_classes=int(len(sizes)),
        smallest_class=int(sizes.min()))
