"""A finished result kept compactly while it waits in a history or a sweep.

A released quasi-identifier column repeats one value per class of the release, yet it is
held as n values: at 1,000,000 × 10 the released quasi-identifiers are 80 MB of a
run's 120 MB, and a workbench that keeps every run runs out of memory after a few dozen.
:class:`StoredResult` keeps each such column as one value per class
(``measures.classes``) and builds the table again when the result is asked for.

Exact by construction: the table is rebuilt once when the result is stored and compared
with the released one, column by column and bit by bit (0.0 and −0.0 apart, NaN in the
same places, the same dtypes, names and index); only when they are identical is the
compact form kept. Otherwise, and for a result with records released unmasked (whose
values are not shared by a class), the result is kept as it is. Every other field of the
result is the same object.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pandas as pd

from core.pipeline.result import AnonymizationResult

__all__ = ["StoredResult", "same_frame", "same_result"]


class StoredResult:
    """``result`` with its released quasi-identifier columns kept once per class.

    Examples
    --------
    >>> from core import RoleSpec, anonymize
    >>> t = pd.DataFrame({"age": [20.0, 21, 40, 41, 60, 61], "id": range(6)})
    >>> r = anonymize(t, RoleSpec(quasi_identifiers=("age",)), k=2)
    >>> stored = StoredResult(r)
    >>> stored.compact, same_frame(stored.result().masked, r.masked)
    (True, True)
    """

    def __init__(self, result: AnonymizationResult):
        self._result = result
        self._per_class: dict | None = None
        found = _compact(result)
        if found is not None:
            self._rest, self._per_class, self._classes, self._columns = found
            self._result = replace(result, masked=_Compacted())

    @property
    def compact(self) -> bool:
        """True when the quasi-identifier columns are kept once per class."""
        return self._per_class is not None

    @property
    def summary(self) -> AnonymizationResult:
        """The result without its table: every field but ``masked`` (which, when
        compact, refuses to be read) — its figures, verification and settings, for lists
        and plots that do not need the released table."""
        return self._result

    def result(self) -> AnonymizationResult:
        """The result as the run gave it (its table rebuilt when compact)."""
        if self._per_class is None:
            return self._result
        return replace(self._result, masked=_rebuilt(self._rest, self._per_class,
                                                     self._classes, self._columns))


class _Compacted:
    """The ``masked`` of :attr:`StoredResult.summary` when compact: reading it fails
    loudly instead of giving a table without its quasi-identifiers."""

    def __getattr__(self, name):
        raise AttributeError("The released table of a stored result is kept compactly: "
                             "ask StoredResult.result() for it.")

    def __repr__(self) -> str:
        return "<released table kept compactly>"


def _compact(result: AnonymizationResult):
    """(the other columns, per-class values, classes, column order), or None to keep
    ``result`` whole."""
    masked, measures = result.masked, result.measures
    if (measures is None or len(result.excluded) or not masked.columns.is_unique
            or len(measures.classes) != len(masked) or len(masked) == 0):
        return None
    columns = [c for c in result.roles.quasi_identifiers if c in masked.columns]
    classes = np.asarray(measures.classes)
    if not columns or classes.min() < 0:
        return None
    first = np.full(int(classes.max()) + 1, -1, dtype=np.int64)
    first[classes[::-1]] = np.arange(len(classes) - 1, -1, -1)  # each class's first row
    if (first < 0).any() or 2 * len(first) > len(classes):  # too few repeats to gain
        return None
    per_class = {c: masked[c].array.take(first) for c in columns}
    rest = masked.drop(columns=columns)
    order = list(masked.columns)
    if not same_frame(_rebuilt(rest, per_class, classes, order), masked):
        return None
    return rest, per_class, classes, order


def _rebuilt(rest: pd.DataFrame, per_class: dict, classes: np.ndarray,
             order: list) -> pd.DataFrame:
    """The released table from the other columns and the per-class values."""
    data = {c: (pd.Series(per_class[c].take(classes), index=rest.index, name=c)
                if c in per_class else rest[c]) for c in order}
    frame = pd.DataFrame(data, index=rest.index)
    frame.columns = pd.Index(order, name=rest.columns.name)
    return frame


def same_frame(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """True when the two tables are the same bit for bit: columns, index, dtypes and
    values (0.0 and −0.0 apart; missing values in the same places)."""
    if not (a.columns.equals(b.columns) and a.columns.name == b.columns.name
            and a.index.equals(b.index) and list(a.dtypes) == list(b.dtypes)):
        return False
    for j in range(a.shape[1]):
        x, y = a.iloc[:, j], b.iloc[:, j]
        if x.dtype.kind in "fc" and isinstance(x.dtype, np.dtype):
            bits = np.dtype(f"i{x.dtype.itemsize}") if x.dtype.kind == "f" else np.uint8
            if not np.array_equal(x.to_numpy().view(bits), y.to_numpy().view(bits)):
                return False
        elif not x.equals(y):
            return False
    return True


def same_result(a: AnonymizationResult, b: AnonymizationResult) -> bool:
    """True when ``a`` is ``b`` given back: the same released table bit for bit
    (:func:`same_frame`) and every other field the same object."""
    return same_frame(a.masked, b.masked) and all(
        getattr(a, f.name) is getattr(b, f.name) for f in fields(a) if f.name != "masked")
