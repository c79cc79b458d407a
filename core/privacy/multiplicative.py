"""t-closeness with the multiplicative distance: the distance, buckets and Proposition 3.

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
    distance bound 0 < t <= 1 of :mod:`core.privacy.emd` (tc-merge, tc-kfirst, tc-tfirst).
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

:func:`core.methods.bucket.tc_bucket` is the construction of Section 6 (6.1 optimal bucketization, 6.2–6.3
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
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from core.errors import MicroaggError

__all__ = [
    "MULTIPLICATIVE_TOLERANCE", "PROPOSITION_3_ASSUMPTIONS", "multiplicative_distance",
    "class_distances", "Buckets", "default_n_buckets", "bucketize",
    "epsilon_from_multiplicative_t", "multiplicative_t_from_epsilon", "proposition3_text",
    "as_fraction", "check_level", "as_series",
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


def class_distances(classes: np.ndarray, codes: np.ndarray, n_codes: int) -> np.ndarray:
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
        """A label per bucket, ``[low, high]`` or ``{a, b}``, with every digit: a
        rounded label could name two buckets alike (1234560.2 and 1234560.5 are both
        1.23456e+06 to six digits), and the release would then merge them."""
        if self.kind == "nominal":
            labels = tuple("{" + ", ".join(map(str, c)) + "}" for c in self.categories)
        else:
            labels = tuple(f"[{_exact_text(low)}, {_exact_text(high)}]"
                           for low, high in self.ranges)
        if len(set(labels)) != len(labels):
            raise MicroaggError(f"The buckets of '{self.name}' cannot be told apart by "
                                f"their labels ({', '.join(labels)}); nothing was released.")
        return labels

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


def _exact_text(value) -> str:
    """A number as the shortest text that reads back as it (whole numbers without a
    decimal point); anything else as ``str``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    number = float(value)
    return str(int(number)) if number.is_integer() and abs(number) < 2 ** 53 else repr(number)


def default_n_buckets(t: float) -> int:
    """``t + 1`` rounded half up, at least 2 (Section 6.1; Figure 2: t = 1.5 → 3)."""
    return max(2, math.floor(as_fraction(t) + Fraction(3, 2)))


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
    series = as_series(values, name)
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


def epsilon_from_multiplicative_t(t: float) -> float:
    """ε with ``t = exp(ε/2)``, i.e. ``ε = 2·ln(t)`` (Proposition 3).

    >>> round(epsilon_from_multiplicative_t(1.5), 6)
    0.81093
    """
    return 2.0 * math.log(check_level(t, "Proposition 3"))


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


def as_fraction(t) -> Fraction:
    """t as the decimal it is written as (1.1 is 11/10), for exact bounds."""
    return Fraction(repr(float(t)))


def check_level(t, where: str) -> float:
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(t)) or float(t) < 1:
        raise MicroaggError(
            f"The 't' parameter of {where} is the multiplicative level of Definition 4 "
            f"(a ratio, t >= 1, e.g. 1.5), not an EMD bound. Got {t!r} instead.")
    return float(t)


def as_series(values, name: str) -> pd.Series:
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


def _scalar(value):
    return value.item() if isinstance(value, np.generic) else value
