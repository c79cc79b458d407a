"""t-closeness with the multiplicative distance: the bucketization construction.

Domingo-Ferrer & Soria-Comas, "From t-closeness to differential privacy and vice versa
in data anonymization", Knowledge-Based Systems 74 (2015) 151–158.

Vocabulary (defined once; used by every function here):

multiplicative distance (Definition 4)
    ``d(D1, D2) = max over sets S of max(Pr_D1(S)/Pr_D2(S), Pr_D2(S)/Pr_D1(S))``: a
    **ratio**, not a logarithm, so ``d >= 1`` and ``d = 1`` only for equal
    distributions. A quotient 0/0 counts as 0 (a value absent from both is ignored);
    x/0 with x > 0 is infinite. For discrete distributions the maximum over single
    values suffices (Proposition 2), which is what :func:`multiplicative_distance` takes.
multiplicative level t
    A table is t-close under this distance when every equivalence class's distribution
    of the confidential attribute is within multiplicative distance t of the whole
    table's. **Here t > 1 (e.g. 1.5) is a ratio**, unrelated to the earth mover's
    distance bound 0 < t <= 1 of :mod:`core.tcloseness` (tc-merge, tc-kfirst, tc-tfirst).
bucket
    A set of confidential values treated as one value. Without buckets, a confidential
    value held by fewer records than there are classes is missing from some class and
    the distance is infinite (Section 6); so the construction measures the distance on
    the bucketized attribute, and what it protects is the bucket of each record.
Proposition 3
    If the assumptions of t-closeness on the intruder's prior and posterior views hold,
    ``exp(ε/2)``-closeness implies ε-differential privacy of the view on each person's
    confidential value, i.e. ``ε = 2·ln(t)`` (:func:`epsilon_from_multiplicative_t`,
    :data:`PROPOSITION_3_ASSUMPTIONS`).

:func:`tc_bucket` is the construction of Section 6 (6.1 optimal bucketization, 6.2–6.3
the algorithm). Choices where the paper leaves room (each is tested):

* **Number of buckets.** Section 6.1: ``b = t + 1`` buckets of mass ``1/(t+1)``, so
  that a class can hold ``t`` times the table's share of one bucket and ``1/t`` of the
  others; "otherwise the closest feasible bucketization". We take ``b = ⌊t + 1.5⌋``
  (t + 1 rounded half up, at least 2): for t = 1.5 this gives the 3 buckets of the
  paper's Figure 2 example of 1.5-closeness. ``n_buckets`` overrides it.
* **Numerical buckets** hold consecutive values (Section 6.3, step 3b). The cut after
  sorted position ``⌊i·N/b + 0.5⌋`` (Section 6.2's ``[i·N/(t+1) + 0.5]``) is moved to
  the nearest place where the value changes (the left one on a tie), because equal
  values must share a bucket: the verifier assigns a bucket from the value alone. With
  heavy ties there may be fewer (and unequal) buckets; the bounds below use the actual
  masses, so t still holds exactly.
* **Nominal buckets**: categories have no order, so any grouping is equally
  homogeneous; categories (largest first, then by label) go to the lightest bucket. With
  at most b categories each category is its own bucket.
* **Class composition** (Section 6.2 (i)–(ii), 6.3 step 4b): a class of e records may
  hold ``n_j`` records of bucket j only if ``n_j/e`` lies in ``[p_j/t, t·p_j]`` (p_j the
  bucket's mass in the table), computed in exact rational arithmetic with t read as the
  decimal it is written as. Since ``p_j > 0`` every class holds every bucket.
* **Number and size of classes.** Section 6.2 takes ``l`` classes emphasizing each
  bucket, of size ``N/((t+1)·l)``, as many as possible. We take the largest number of
  classes m (sizes ``⌊N/m⌋`` and ``⌊N/m⌋+1``, all ``>= k``) for which compositions
  exist whose bucket counts add up exactly to the table's (a maximum-flow feasibility
  check). The classes emphasize the buckets in proportion to their masses, each as much
  as the bounds and the exact totals allow (binary search on the emphasis, each step a
  maximum flow).
* **Which records form a class** (the paper only says "partition in equivalence classes
  of k (or more) records"): MDAV-like. The seed is the unassigned record farthest from
  the centroid of the unassigned records (Euclidean on ``X``); of the compositions still
  to be used, the one whose records nearest to the seed (per bucket) have the smallest
  sum of squared distances is chosen, and the class takes those records. The seed is
  always in its class. Ties go to the record, or composition, that comes first.
* **Verification.** The partition is checked before it is returned: every class has at
  least k records and a multiplicative distance of at most t (within
  :data:`MULTIPLICATIVE_TOLERANCE`); otherwise :class:`MicroaggError` is raised. A
  weaker partition is never returned.
* **One confidential attribute.** The construction bucketizes one attribute. Several
  confidential attributes raise :class:`MicroaggError` (the joint buckets would multiply
  and the classes would have to grow accordingly; not implemented). The verifier handles
  any number, each attribute separately.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from core.errors import MicroaggError
from core.progress import TaskState

__all__ = [
    "MULTIPLICATIVE_TOLERANCE", "PROPOSITION_3_ASSUMPTIONS", "Buckets", "bucketize",
    "default_n_buckets", "multiplicative_distance", "MultiplicativeVerification",
    "verify_multiplicative", "BucketPartition", "tc_bucket",
    "epsilon_from_multiplicative_t", "multiplicative_t_from_epsilon", "proposition3_text",
]

#: A distance at most ``t·(1 + MULTIPLICATIVE_TOLERANCE)`` counts as within t. The
#: counts are integers and every ratio is one float division of exact products, so the
#: error is a few units in the last place; 1e-9 absorbs float noise only.
MULTIPLICATIVE_TOLERANCE = 1e-9

#: What Proposition 3 (ε = 2·ln t) rests on, in plain sentences for the report.
PROPOSITION_3_ASSUMPTIONS = (
    "The intruder already knows the distribution of the confidential attribute in the "
    "whole released table, and nothing more about it (this is the prior view that "
    "t-closeness assumes to be public).",
    "What the release tells the intruder about a person is the distribution of the "
    "confidential attribute in that person's class; the intruder does not know the "
    "confidential values of the other people in the class.",
    "The guarantee holds for the confidential attribute as the distance measured it: by "
    "bucket. If exact values are released, the distance on exact values is usually "
    "infinite and the statement does not apply to them.",
    "It covers only the confidential attribute(s) verified; the quasi-identifiers have "
    "k-anonymity only (for example, an intruder may still learn that someone is not in "
    "the data).",
    "It is not differential privacy in general: against an intruder who knows every "
    "record but one, t-closeness gives no protection.",
)

_KINDS = ("numerical", "nominal")


# --- The distance ---------------------------------------------------------------------

def multiplicative_distance(class_distribution, table_distribution) -> float:
    """Multiplicative distance between two discrete distributions (Definition 4).

    ``max over values x of max(P(x)/Q(x), Q(x)/P(x))`` (Proposition 2: for discrete
    distributions the maximum over single values equals the maximum over all sets).
    It is a ratio, >= 1; ``ln`` of it is what Proposition 3 doubles into ε.

    Parameters
    ----------
    class_distribution, table_distribution : array-like of shape (n_values,) or Series
        Probabilities or counts (each is normalized to sum to 1). Two Series are aligned
        on their index (a value missing from one has probability 0 there).

    Returns
    -------
    float
        The distance; ``inf`` if a value has probability 0 in exactly one of the two.
        Values with probability 0 in both are ignored (0/0 = 0, Definition 4).

    Examples
    --------
    Figure 2 of the paper: class (1/2, 1/4, 1/4) against the uniform (1/3, 1/3, 1/3).

    >>> multiplicative_distance([2, 1, 1], [4, 4, 4])
    1.5
    >>> multiplicative_distance([1, 0], [1, 1])
    inf
    """
    if isinstance(class_distribution, pd.Series) and isinstance(table_distribution,
                                                                pd.Series):
        class_distribution, table_distribution = class_distribution.align(
            table_distribution, fill_value=0)
    p = np.asarray(class_distribution, dtype=np.float64).ravel()
    q = np.asarray(table_distribution, dtype=np.float64).ravel()
    if p.shape != q.shape:
        raise MicroaggError(f"The two distributions have {p.size} and {q.size} values; "
                            "give one probability per value in both.")
    for name, x in (("class", p), ("table", q)):
        if not np.isfinite(x).all() or (x < 0).any() or x.sum() <= 0:
            raise MicroaggError(f"The {name} distribution must be non-negative, finite "
                                "and not all zero.")
    return _ratio_distance(p / p.sum(), q / q.sum())


def _ratio_distance(p: np.ndarray, q: np.ndarray) -> float:
    used = (p > 0) | (q > 0)
    if ((p == 0) & used).any() or ((q == 0) & used).any():
        return math.inf
    ratio = p[used] / q[used]
    return float(max(ratio.max(), (1.0 / ratio).max()))


def _class_distances(classes: np.ndarray, codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Distance of every class (ids 0..G−1) to the whole column, from integer counts."""
    n_classes = int(classes.max()) + 1
    counts = np.bincount(classes * n_codes + codes,
                         minlength=n_classes * n_codes).reshape(n_classes, n_codes)
    sizes = counts.sum(axis=1).astype(np.float64)
    total = counts.sum(axis=0).astype(np.float64)
    present = total > 0
    counts, total = counts[:, present].astype(np.float64), total[present]
    # (n_cj / e_c) / (T_j / N) = n_cj·N / (e_c·T_j): one rounding per ratio.
    with np.errstate(divide="ignore"):
        ratio = counts * float(len(codes)) / (sizes[:, None] * total[None, :])
        return np.maximum(ratio.max(axis=1), (1.0 / ratio).max(axis=1))


# --- Buckets --------------------------------------------------------------------------

@dataclass(frozen=True)
class Buckets:
    """A bucketization of one confidential attribute (Section 6.1).

    Attributes
    ----------
    name : str
        The confidential column.
    kind : {"numerical", "nominal"}
    upper_edges : tuple
        Numerical: ``b − 1`` inclusive upper ends; a value v goes to the first bucket i
        with ``v <= upper_edges[i]`` (the last bucket takes the rest).
    ranges : tuple of (low, high)
        Numerical: smallest and largest value of the table in each bucket.
    categories : tuple of tuples
        Nominal: the categories of each bucket.
    """

    name: str
    kind: str
    upper_edges: tuple = ()
    ranges: tuple = ()
    categories: tuple = ()

    @property
    def n_buckets(self) -> int:
        return len(self.categories) if self.kind == "nominal" else len(self.upper_edges) + 1

    @property
    def labels(self) -> tuple[str, ...]:
        """A readable label per bucket: ``[low, high]`` or ``{a, b}``."""
        if self.kind == "nominal":
            return tuple("{" + ", ".join(map(str, c)) + "}" for c in self.categories)
        return tuple(f"[{low:g}, {high:g}]" if isinstance(low, (int, float, np.number))
                     else f"[{low}, {high}]" for low, high in self.ranges)

    def assign(self, values) -> np.ndarray:
        """Bucket index (0..b−1) of every value; raises on an unknown category."""
        values = pd.Series(values).reset_index(drop=True)
        if values.isna().any():
            raise MicroaggError(f"Confidential column '{self.name}' has missing values; "
                                "every record needs a bucket.")
        if self.kind == "numerical":
            return np.searchsorted(np.asarray(self.upper_edges), values.to_numpy(),
                                   side="left").astype(np.int64)
        lookup = {c: i for i, group in enumerate(self.categories) for c in group}
        codes = values.map(lookup)
        if codes.isna().any():
            unknown = values[codes.isna()].iloc[0]
            raise MicroaggError(f"Confidential column '{self.name}' has the category "
                                f"{unknown!r}, which is in no bucket.")
        return codes.to_numpy(dtype=np.int64)

    def recode(self, values) -> pd.Series:
        """The values replaced by their bucket labels (Section 6.2, step 1)."""
        index = values.index if isinstance(values, pd.Series) else None
        return pd.Series(np.asarray(self.labels, dtype=object)[self.assign(values)],
                         index=index, name=self.name)


def default_n_buckets(t: float) -> int:
    """``t + 1`` rounded half up, at least 2 (Section 6.1; Figure 2: t = 1.5 → 3)."""
    return max(2, math.floor(_fraction(t) + Fraction(3, 2)))


def bucketize(values, n_buckets: int, *, kind: str | None = None,
              name: str = "confidential") -> Buckets:
    """Near-equal-mass buckets of one confidential attribute (Section 6.3, step 3).

    Parameters
    ----------
    values : array-like of shape (n_records,)
    n_buckets : int
        Buckets wanted; fewer result when there are fewer distinct values (or, for a
        numerical attribute, when ties leave no place to cut).
    kind : {"numerical", "nominal"}, optional
        Default: numerical for numeric data, nominal otherwise.

    Examples
    --------
    >>> bucketize(range(12), 3).upper_edges
    (3, 7)
    """
    series = _series(values, name)
    kind = _kind(series, kind, name)
    if kind == "nominal":
        counts = series.value_counts(sort=False)
        order = sorted(counts.index, key=lambda c: (-counts[c], str(c)))
        groups: list[list] = [[] for _ in range(min(n_buckets, len(order)))]
        mass = [0] * len(groups)
        for category in order:
            lightest = mass.index(min(mass))
            groups[lightest].append(category)
            mass[lightest] += int(counts[category])
        return Buckets(name, "nominal",
                       categories=tuple(tuple(sorted(g, key=str)) for g in groups))
    ordered = np.sort(series.to_numpy(), kind="stable")
    n = len(ordered)
    changes = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1  # valid cut positions
    cuts: list[int] = []
    for i in range(1, n_buckets):
        if not len(changes):
            break
        target = math.floor(Fraction(i * n, n_buckets) + Fraction(1, 2))
        j = int(np.searchsorted(changes, target))
        options = [changes[x] for x in (j - 1, j) if 0 <= x < len(changes)]
        cut = int(min(options, key=lambda c: (abs(c - target), c)))
        if not cuts or cut > cuts[-1]:
            cuts.append(cut)
    bounds = [0] + cuts + [n]
    ranges = tuple((_scalar(ordered[a]), _scalar(ordered[b - 1]))
                   for a, b in zip(bounds[:-1], bounds[1:]))
    return Buckets(name, "numerical",
                   upper_edges=tuple(_scalar(ordered[c - 1]) for c in cuts), ranges=ranges)


# --- The verifier ---------------------------------------------------------------------

@dataclass(frozen=True)
class MultiplicativeVerification:
    """What :func:`verify_multiplicative` found on a masked table.

    Attributes
    ----------
    t : float
        The multiplicative level checked (a ratio, t >= 1).
    passed : bool
        Every class's distance is at most ``t·(1 + tolerance)`` for every attribute.
    attributes : tuple of str
    n_buckets : tuple of int
        Buckets (or distinct values, without buckets) per attribute.
    max_distance : tuple of float
        Largest class distance per attribute (``inf`` if a class lacks a bucket).
    worst_class : tuple of dict
        Per attribute, the masked quasi-identifier values of the farthest class.
    worst_class_size : tuple of int
    classes_over_t : tuple of int
    n_classes, smallest_class : int
    tolerance : float
        :data:`MULTIPLICATIVE_TOLERANCE` (relative; float noise only).
    """

    t: float
    passed: bool
    attributes: tuple[str, ...]
    n_buckets: tuple[int, ...]
    max_distance: tuple[float, ...]
    worst_class: tuple[dict, ...]
    worst_class_size: tuple[int, ...]
    classes_over_t: tuple[int, ...]
    n_classes: int
    smallest_class: int
    tolerance: float = MULTIPLICATIVE_TOLERANCE

    @property
    def max_distance_by_attribute(self) -> dict[str, float]:
        return dict(zip(self.attributes, self.max_distance))

    @property
    def epsilon(self) -> float:
        """ε = 2·ln(t) that t-closeness at the level checked implies (Proposition 3)."""
        return epsilon_from_multiplicative_t(self.t)

    @property
    def epsilon_attained(self) -> float:
        """ε = 2·ln(largest distance found): the level the table actually reaches."""
        return epsilon_from_multiplicative_t(max(self.max_distance))

    def describe(self) -> str:
        status = "PASSED" if self.passed else "FAILED"
        parts = [f"'{a}' largest multiplicative distance {d:.4f} over {b} bucket(s)"
                 + (f", {o} class(es) over t" if o else "")
                 for a, b, d, o in zip(self.attributes, self.n_buckets, self.max_distance,
                                       self.classes_over_t)]
        return (f"t-closeness (multiplicative distance, Definition 4) {status} at "
                f"t = {self.t:g}: " + "; ".join(parts) + f". {self.n_classes} equivalence "
                f"classes, the smallest of {self.smallest_class} records.")

    def proposition3_text(self) -> str:
        """The report paragraph on ε (Proposition 3); only meaningful if ``passed``."""
        return proposition3_text(self.t, attained=max(self.max_distance))


def verify_multiplicative(masked: pd.DataFrame, quasi_identifiers: Sequence[str],
                          confidential: Sequence[str], t: float, *,
                          buckets: Buckets | Mapping[str, Buckets] | None = None,
                          ) -> MultiplicativeVerification:
    """Check t-closeness under the multiplicative distance on a masked table alone.

    Equivalence classes are the distinct masked quasi-identifier tuples (exact equality,
    ``groupby``); no partition from the method is used. For each confidential column,
    every class's distribution over the buckets (or, without buckets, over the distinct
    values) is compared with the whole masked table's by Definition 4 / Proposition 2.

    Parameters
    ----------
    masked : DataFrame of n_records rows
    quasi_identifiers, confidential : column names
    t : float
        The multiplicative level, ``t >= 1`` (a ratio; 1.5 means no bucket is more than
        1.5 times, or less than 1/1.5 times, as frequent in a class as in the table).
    buckets : Buckets, or mapping column → Buckets, optional
        The bucketization of a column (:attr:`BucketPartition.buckets`); a bare
        :class:`Buckets` applies to the column it names. Columns without one are
        compared value by value (already bucket labels, or the raw Definition 4).

    Returns
    -------
    MultiplicativeVerification

    Examples
    --------
    The partition of the paper's Figure 2 (12 values, 3 buckets of 4) is 1.5-close:

    >>> table = pd.DataFrame({"qi": [1] * 4 + [2] * 4 + [3] * 4,
    ...                       "c": [0, 1, 4, 8, 2, 5, 6, 9, 3, 7, 10, 11]})
    >>> verify_multiplicative(table, ["qi"], ["c"], 1.5,
    ...                       buckets=bucketize(range(12), 3, name="c")).max_distance
    (1.5,)
    """
    t = _check_level(t, "verify")
    qi, confidential = list(quasi_identifiers), list(confidential)
    for column in qi + confidential:
        if column not in masked.columns:
            raise MicroaggError(f"Column '{column}' is not in the masked table.")
    if not qi:
        raise MicroaggError("t-closeness is checked on quasi-identifiers; none was given.")
    if not confidential:
        raise MicroaggError("t-closeness needs at least one confidential column.")
    if isinstance(buckets, Buckets):
        buckets = {buckets.name: buckets}
    buckets = dict(buckets or {})
    for column in buckets:
        if column not in confidential:
            raise MicroaggError(f"Buckets are given for '{column}', which is not a "
                                "confidential column.")
    classes = masked.groupby(qi, dropna=False, sort=False).ngroup().to_numpy()
    sizes = np.bincount(classes)
    first_row = np.full(len(sizes), len(masked))
    np.minimum.at(first_row, classes, np.arange(len(masked)))
    n_buckets, largest, worst, worst_size, over = [], [], [], [], []
    for column in confidential:
        values = masked[column].reset_index(drop=True)
        if values.isna().any():
            raise MicroaggError(f"Confidential column '{column}' has missing values.")
        if column in buckets:
            codes, m = buckets[column].assign(values), buckets[column].n_buckets
        else:
            codes, uniques = pd.factorize(values, sort=False)
            m = len(uniques)
        distances = _class_distances(classes, codes.astype(np.int64), m)
        index = int(np.argmax(distances))
        n_buckets.append(int(m))
        largest.append(float(distances[index]))
        worst.append({c: masked[c].iat[first_row[index]] for c in qi})
        worst_size.append(int(sizes[index]))
        over.append(int((distances > t * (1 + MULTIPLICATIVE_TOLERANCE)).sum()))
    return MultiplicativeVerification(
        t=t, passed=not any(over), attributes=tuple(map(str, confidential)),
        n_buckets=tuple(n_buckets), max_distance=tuple(largest), worst_class=tuple(worst),
        worst_class_size=tuple(worst_size), classes_over_t=tuple(over),
        n_classes=int(len(sizes)), smallest_class=int(sizes.min()))


# --- Proposition 3 --------------------------------------------------------------------

def epsilon_from_multiplicative_t(t: float) -> float:
    """ε with ``t = exp(ε/2)``, i.e. ``ε = 2·ln(t)`` (Proposition 3).

    >>> round(epsilon_from_multiplicative_t(1.5), 6)
    0.81093
    """
    return 2.0 * math.log(_check_level(t, "Proposition 3"))


def multiplicative_t_from_epsilon(epsilon: float) -> float:
    """The multiplicative level ``t = exp(ε/2)`` whose closeness gives ε (Proposition 3)."""
    if not (isinstance(epsilon, (int, float, np.integer, np.floating))
            and math.isfinite(epsilon) and epsilon >= 0):
        raise MicroaggError(f"ε must be a finite number >= 0. Got {epsilon!r}.")
    return math.exp(epsilon / 2.0)


def proposition3_text(t: float, *, attained: float | None = None) -> str:
    """Plain-language report paragraph: the ε that t-closeness implies, and its assumptions.

    Parameters
    ----------
    t : float
        The multiplicative level the table was verified at (``t >= 1``).
    attained : float, optional
        The largest distance actually found (gives a second, smaller ε).
    """
    epsilon = epsilon_from_multiplicative_t(t)
    text = (f"The table is {t:g}-close under the multiplicative distance (Definition 4 of "
            f"Domingo-Ferrer & Soria-Comas 2015). By their Proposition 3, exp(ε/2)-closeness "
            f"implies ε-differential privacy for each person's confidential value, so "
            f"t = {t:g} corresponds to ε = 2·ln({t:g}) = {epsilon:.4f}")
    if attained is not None and math.isfinite(attained) and attained < t:
        text += (f" (the largest distance found, {attained:.4f}, corresponds to "
                 f"ε = {epsilon_from_multiplicative_t(attained):.4f})")
    text += ". This holds only under these assumptions:\n" + "\n".join(
        f"- {sentence}" for sentence in PROPOSITION_3_ASSUMPTIONS)
    return text


# --- The construction -----------------------------------------------------------------

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
        Progress once per class formed; cancellation.

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
    t = _check_level(t, "tc-bucket")
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
    plan = _plan(supply, n, k, _fraction(t))
    if plan is None:
        raise MicroaggError(
            f"tc-bucket cannot meet t = {t:g} (multiplicative) with k = {k} on these "
            f"{n} records and {buckets.n_buckets} buckets of {', '.join(map(str, supply))} "
            "records: no partition into classes of at least k records keeps every bucket "
            "within the bounds. Choose a larger t, a smaller k, or fewer buckets.")
    labels = _form_classes(X, codes, plan, state)
    distances = _class_distances(labels, codes, buckets.n_buckets)
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
    """Bucket counts per class (n_classes × b), or None if no class count works."""
    b = len(supply)
    largest = min(n // k, int(supply.min()))
    for m in range(largest, 0, -1):
        sizes = np.full(m, n // m, dtype=np.int64)
        sizes[: n % m] += 1
        low, high = _bounds(sizes, supply, n, t)
        if (low > high).any() or (low.sum(axis=1) > sizes).any() \
                or (high.sum(axis=1) < sizes).any() or (low.sum(axis=0) > supply).any() \
                or (high.sum(axis=0) < supply).any():
            continue
        if _flow(sizes, supply, low, high) is None:
            continue
        return _emphasize(sizes, supply, low, high, n)
    return None  # pragma: no cover (m = 1 always fits: one class is the table)


def _bounds(sizes, supply, n, t):
    """Per class and bucket, the fewest and most records within ``[p_j/t, t·p_j]``."""
    cache = {}
    for e in np.unique(sizes):
        share = [Fraction(int(e) * int(s), n) for s in supply]
        cache[int(e)] = ([math.ceil(x / t) for x in share],
                         [min(int(e), math.floor(x * t)) for x in share])
    low = np.array([cache[int(e)][0] for e in sizes], dtype=np.int64)
    high = np.array([cache[int(e)][1] for e in sizes], dtype=np.int64)
    return low, high


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


def _form_classes(X, codes, plan, state) -> np.ndarray:
    """MDAV-like: seed farthest from the centroid, nearest records per planned composition."""
    n = len(X)
    types, type_count = np.unique(plan, axis=0, return_counts=True)
    labels = np.full(n, -1, dtype=np.int64)
    alive = np.arange(n)
    n_classes = len(plan)
    for c in range(n_classes):
        points = X[alive]
        centroid = points.mean(axis=0)
        seed = int(np.argmax(((points - centroid) ** 2).sum(axis=1)))
        distance = ((points - points[seed]) ** 2).sum(axis=1)
        distance[seed] = -1.0  # the seed always belongs to its class
        available = np.flatnonzero(type_count > 0)
        nearest, cumulative = [], []
        alive_codes = codes[alive]
        for j in range(types.shape[1]):
            members = np.flatnonzero(alive_codes == j)
            need = int(types[available, j].max())
            if 0 < need < len(members):
                # Only the nearest `need` matter; keep every tie at the cut so that the
                # stable sort below still prefers the record that comes first.
                cut = np.partition(distance[members], need - 1)[need - 1]
                members = members[distance[members] <= cut]
            order = members[np.argsort(distance[members], kind="stable")]
            nearest.append(order)
            cumulative.append(np.concatenate(([0.0], np.cumsum(
                np.maximum(distance[order], 0.0)))))
        cost = [sum(cumulative[j][types[a, j]] for j in range(types.shape[1]))
                for a in available]
        chosen = int(available[int(np.argmin(cost))])
        type_count[chosen] -= 1
        taken = np.concatenate([nearest[j][: types[chosen, j]]
                                for j in range(types.shape[1])])
        labels[alive[taken]] = c
        keep = np.ones(len(alive), dtype=bool)
        keep[taken] = False
        alive = alive[keep]
        state.step((c + 1) / n_classes, f"tc-bucket: class {c + 1} of {n_classes}")
    return labels


# --- Helpers --------------------------------------------------------------------------

def _fraction(t) -> Fraction:
    """t as the decimal it is written as (1.1 is 11/10), for exact bounds."""
    return Fraction(repr(float(t)))


def _check_level(t, where: str) -> float:
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(t)) or float(t) < 1:
        raise MicroaggError(
            f"The 't' parameter of {where} is the multiplicative level of Definition 4 "
            f"(a ratio, t >= 1, e.g. 1.5), not an EMD bound. Got {t!r} instead.")
    return float(t)


def _series(values, name: str) -> pd.Series:
    series = pd.Series(values).reset_index(drop=True)
    if len(series) == 0:
        raise MicroaggError(f"Confidential column '{name}' has no records.")
    missing = series.isna().to_numpy()
    if missing.any():
        raise MicroaggError(
            f"Confidential column '{name}' has {int(missing.sum())} missing value(s) "
            f"(first at data row {int(np.flatnonzero(missing)[0]) + 1}); impute or "
            "remove those rows.")
    return series


def _kind(series: pd.Series, kind, name: str) -> str:
    if kind is None:
        numeric = pd.api.types.is_numeric_dtype(series) and \
            not pd.api.types.is_bool_dtype(series)
        return "numerical" if numeric else "nominal"
    if kind not in _KINDS:
        raise MicroaggError(f"The kind of confidential column '{name}' must be one of "
                            f"{', '.join(map(repr, _KINDS))}. Got {kind!r} instead.")
    return kind


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
    return name, _series(confidential, name)


def _scalar(value):
    return value.item() if isinstance(value, np.generic) else value
