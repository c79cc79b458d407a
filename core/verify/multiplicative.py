"""The independent verifier of t-closeness under the multiplicative distance.

It reads only the released table (classes are the distinct released quasi-identifier
tuples); the distance and the buckets are those of :mod:`core.privacy.multiplicative`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.verify.rows import frame_classes

from core.privacy.multiplicative import (MULTIPLICATIVE_TOLERANCE, Buckets, check_level,
                                         class_distances, epsilon_from_multiplicative_t,
                                         proposition3_text)

__all__ = ["MultiplicativeVerification", "verify_multiplicative"]


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
                          checkpoint: Callable[[], None] | None = None,
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
    checkpoint : callable, optional
        Called after the classes are found and after each column; whatever it raises
        (a Cancel) stops the check.

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
    t = check_level(t, "verify")
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
    checkpoint = checkpoint or (lambda: None)
    found = frame_classes(masked, qi)  # groupby(qi, dropna=False, sort=False) classes
    classes, sizes, first_row = found.inverse, found.counts, found.first
    n_buckets, largest, worst, worst_size, over = [], [], [], [], []
    for column in confidential:
        checkpoint()
        values = masked[column].reset_index(drop=True)
        if values.isna().any():
            raise MicroaggError(f"Confidential column '{column}' has missing values.")
        if column in buckets:
            codes, m = buckets[column].assign(values), buckets[column].n_buckets
        else:
            codes, uniques = pd.factorize(values, sort=False)
            m = len(uniques)
        distances = class_distances(classes, codes.astype(np.int64), m)
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
