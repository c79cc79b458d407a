"""The independent t-closeness verifier (earth mover's distance).

It reads only the released table: equivalence classes are the distinct released
quasi-identifier tuples; distances are those of :mod:`core.privacy.emd`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.verify.rows import frame_classes

from core.privacy.attributes import class_emds, tclose_attributes
from core.privacy.emd import EMD_TOLERANCE

__all__ = ["TClosenessVerification", "verify_t_closeness", "changed_columns", "same_values"]


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
    changed: tuple[str, ...] = ()

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
        text = (f"t-closeness {status} at t = {self.t:g}: " + "; ".join(parts)
                + f". {self.n_classes} equivalence classes, the smallest of "
                  f"{self.smallest_class} records.")
        if self.changed:
            text += (f" Confidential column '{self.changed[0]}' differs from the original, "
                     "so its classes cannot be compared with the original distribution.")
        return text


def verify_t_closeness(masked: pd.DataFrame, quasi_identifiers: Sequence[str],
                       confidential: Sequence[str], t: float, *,
                       kinds: Mapping[str, str] | Sequence[str] | str | None = None,
                       original: pd.DataFrame | None = None,
                       checkpoint: Callable[[], None] | None = None
                       ) -> TClosenessVerification:
    """Check t-closeness on a masked table alone.

    Equivalence classes are the distinct masked quasi-identifier tuples (exact equality,
    ``groupby``); no partition or label from the method is used. For every confidential
    column, each class's EMD to that column's distribution in the whole masked table is
    computed (microaggregation leaves confidential values unchanged, so this is the
    original distribution). Given the ``original`` table, a confidential column whose
    released values differ from it fails the check: its released distribution is then
    not the original one.

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
    checkpoint : callable, optional
        Called after the classes are found and after each attribute; whatever it raises
        (a Cancel) stops the check.

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
    checkpoint = checkpoint or (lambda: None)
    attributes = tclose_attributes(masked[confidential], kinds)
    found = frame_classes(masked, qi)  # groupby(qi, dropna=False, sort=False) classes
    classes, sizes, first_row = found.inverse, found.counts, found.first
    max_emd, worst, worst_size, over = [], [], [], []
    for attribute in attributes:
        checkpoint()
        emds = class_emds(attribute, classes)
        index = int(np.argmax(emds))
        max_emd.append(float(emds[index]))
        worst.append({c: masked[c].iat[first_row[index]] for c in qi})
        worst_size.append(int(sizes[index]))
        over.append(int((emds > float(t) + EMD_TOLERANCE).sum()))
    checkpoint()
    changed = () if original is None else tuple(changed_columns(original, masked,
                                                                confidential))
    return TClosenessVerification(
        t=float(t), passed=not any(over) and not changed, changed=changed, attributes=tuple(a.name for a in attributes),
        kinds=tuple(a.kind for a in attributes), max_emd=tuple(max_emd),
        worst_class=tuple(worst), worst_class_size=tuple(worst_size),
        classes_over_t=tuple(over), n_classes=int(len(sizes)),
        smallest_class=int(sizes.min()))


def changed_columns(original: pd.DataFrame, released: pd.DataFrame, columns) -> list[str]:
    """The ``columns`` whose released values differ from the original's (row by row,
    :func:`same_values`)."""
    return [c for c in columns if c in released.columns
            and not same_values(original[c], released[c])]


def same_values(a: pd.Series, b: pd.Series) -> bool:
    """Whether two columns hold the same values row by row, whatever their dtypes.

    A released table read back from a file need not have the original's dtypes: the
    writer puts a float column of whole numbers as integers (``59000.0`` → ``59000``,
    read back as int64), a float32 column (Stata's ``float``) as its shortest float32
    text (``2.7837927``, read back as a float64 that is not the float32's value), and
    text read back is no longer categorical. So numbers are compared as numbers (an
    integer with a float only where the float is that integer exactly, a float32 with
    another float at float32's precision, missing with missing) and anything else as
    its values; ``Series.equals``, which also compares dtypes, called such a column
    changed, and the t-closeness verifier refused the product's own export.

    Examples
    --------
    >>> same_values(pd.Series([59000.0, np.nan]), pd.Series([59000, np.nan]))
    True
    >>> same_values(pd.Series([1.5]), pd.Series([1]))
    False
    """
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    if len(a) != len(b):
        return False
    numeric = (pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b)
               and not pd.api.types.is_bool_dtype(a) and not pd.api.types.is_bool_dtype(b))
    if not numeric:
        return a.astype(object).equals(b.astype(object))
    x, y = a.to_numpy(), b.to_numpy()
    if x.dtype.kind in "iu" and y.dtype.kind in "iu":
        return bool(np.array_equal(x, y))
    if x.dtype.kind in "iu" or y.dtype.kind in "iu":  # an integer against floats
        whole, floats = (x, y) if x.dtype.kind in "iu" else (y, x)
        floats = floats.astype(np.float64)
        exact = np.isfinite(floats) & (floats == np.floor(floats)) & (np.abs(floats) < 2.0 ** 63)
        if not exact.all():
            return False
        return bool(np.array_equal(whole.astype(np.int64), floats.astype(np.int64)))
    if np.float32 in (x.dtype, y.dtype):  # at the coarser precision
        return bool(np.array_equal(x.astype(np.float32), y.astype(np.float32), equal_nan=True))
    return bool(np.array_equal(x.astype(np.float64), y.astype(np.float64), equal_nan=True))
