"""A finished result kept compactly while it waits in a history or a sweep.

A released quasi-identifier column repeats one value per class of the release, yet it is
held as n values: at 1,000,000 × 10 the released quasi-identifiers are 80 MB of a
run's 120 MB, and a workbench that keeps every run runs out of memory after a few dozen.
:class:`StoredResult` keeps each such column as one value per class
(``measures.classes``) and builds the table again when the result is asked for. The
per-record arrays are kept small too: the group and class numbers in 32 bits when they
fit, the one-block ``block_labels`` as the labels they repeat, and ``record_risk`` as
what it is, ``1 / class_sizes[classes]``. At 1,000,000 records a stored run holds about
a third of what it did with those arrays whole.

Exact by construction: the result is rebuilt once when it is stored and compared with
the run's, the table column by column and bit by bit (0.0 and −0.0 apart, NaN in the
same places, the same dtypes, names and index) and every array by its dtype, shape and
bytes; only when they are identical is the compact form kept. Otherwise, and for a
result with records released unmasked (whose values are not shared by a class), the
result is kept as it is. Every other field of the result is the same object.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pandas as pd

from core.data.bits import same_bits
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
        if found is None:
            return
        (self._rest, self._per_class, self._columns, self._labels,
         self._one_block, self._classes) = found
        measures = result.measures
        self._result = replace(
            result, masked=_Compacted("masked"), labels=_Compacted("labels"),
            block_labels=_Compacted("block_labels"),
            measures=replace(measures, classes=_Compacted("measures.classes"),
                             record_risk=_Compacted("measures.record_risk")))
        if not same_result(self.result(), result):
            self._result, self._per_class = result, None

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
        """The result as the run gave it (its table and arrays rebuilt when compact)."""
        if self._per_class is None:
            return self._result
        classes, labels = _widened(self._classes), _widened(self._labels)
        block_labels = (labels.reshape(-1, 1).copy() if self._one_block is None
                        else _widened(self._one_block))
        measures = self._result.measures
        return replace(
            self._result, masked=_rebuilt(self._rest, self._per_class, classes,
                                          self._columns),
            labels=labels, block_labels=block_labels,
            measures=replace(measures, classes=classes,
                             record_risk=1.0 / measures.class_sizes[classes]))


class _Compacted:
    """A per-record field of :attr:`StoredResult.summary` when compact (the table, the
    labels, the classes, the record risks): reading it fails loudly instead of giving
    something that is not the run's."""

    def __init__(self, name: str):
        self._name = name

    def _refuse(self, *args, **kwargs):
        raise AttributeError(f"The {self._name} of a stored result is kept compactly: "
                             "ask StoredResult.result() for it.")

    def __getattr__(self, name):
        if name.startswith("__") or name == "_name":
            raise AttributeError(name)
        self._refuse()

    __array__ = __len__ = __iter__ = __getitem__ = _refuse

    def __repr__(self) -> str:
        return f"<{self._name} kept compactly>"


def _compact(result: AnonymizationResult):
    """(the other columns, per-class values, column order, labels, block labels (None
    when they are the labels as one column), classes), the arrays narrowed, or None to
    keep ``result`` whole."""
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
    # dtype kept; a RangeIndex instead of the first rows' numbers
    per_class = {c: masked[c].iloc[first].reset_index(drop=True) for c in columns}
    rest = masked.drop(columns=columns)
    labels, block_labels = np.asarray(result.labels), result.block_labels
    if not isinstance(block_labels, np.ndarray):
        return None
    one_block = (block_labels.shape == (len(labels), 1) and block_labels.dtype == labels.dtype
                 and np.array_equal(block_labels[:, 0], labels))
    return (rest, per_class, masked.columns, _narrowed(labels),
            None if one_block else _narrowed(block_labels), _narrowed(classes))


class _Narrowed(np.ndarray):
    """An int64 array held in 32 bits (:func:`_narrowed`)."""


def _narrowed(values: np.ndarray) -> np.ndarray:
    """``values`` in 32 bits when it is int64 and fits, marked to be widened again."""
    if (values.dtype == np.int64 and values.size
            and -2 ** 31 <= values.min() and values.max() < 2 ** 31):
        return values.astype(np.int32).view(_Narrowed)
    return values


def _widened(values: np.ndarray) -> np.ndarray:
    """The array :func:`_narrowed` was given."""
    if isinstance(values, _Narrowed):
        return values.view(np.ndarray).astype(np.int64)
    return values


def _rebuilt(rest: pd.DataFrame, per_class: dict, classes: np.ndarray,
             order: pd.Index) -> pd.DataFrame:
    """The released table from the other columns and the per-class values."""
    data = [(pd.Series(per_class[c].array.take(classes), index=rest.index,
                       dtype=per_class[c].dtype) if c in per_class else rest[c])
            for c in order]
    frame = pd.concat(data, axis=1, ignore_index=True)  # at least one quasi-identifier
    frame.index = rest.index
    frame.columns = order  # the released labels themselves: names, dtype, levels
    return frame


def same_frame(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """True when the two tables are the same bit for bit: column labels and index (with
    their names and dtypes), dtypes (categories in their order) and values: numbers by
    their bytes (0.0 and −0.0 apart), objects by type and value (1, 1.0 and True apart,
    None apart from NaN), missing values in the same places. Where it cannot tell, it
    says False."""
    labels = ((a.columns, b.columns), (a.index, b.index))
    if a.shape != b.shape or not all(
            x.equals(y) and list(x.names) == list(y.names) and x.dtype == y.dtype
            and _same_values(x.to_numpy(), y.to_numpy()) for x, y in labels):
        return False
    return all(_same_column(a.iloc[:, j], b.iloc[:, j]) for j in range(a.shape[1]))


def _same_column(x: pd.Series, y: pd.Series) -> bool:
    if str(x.dtype) != str(y.dtype) or x.dtype != y.dtype:
        return False
    if isinstance(x.dtype, pd.CategoricalDtype):
        return (x.cat.ordered == y.cat.ordered
                and _same_values(x.cat.categories.to_numpy(), y.cat.categories.to_numpy())
                and np.array_equal(x.cat.codes.to_numpy(), y.cat.codes.to_numpy()))
    if isinstance(x.dtype, np.dtype):
        return _same_values(x.to_numpy(), y.to_numpy())
    if isinstance(x.dtype, pd.StringDtype):  # text or its one missing value: exact
        return bool(x.equals(y))
    # Other extension arrays (nullable numbers, booleans): the same missing places, then
    # the rest.
    missing_x, missing_y = x.isna().to_numpy(), y.isna().to_numpy()
    return (np.array_equal(missing_x, missing_y)
            and _same_values(x[~missing_x].to_numpy(), y[~missing_y].to_numpy()))


def _same_values(u: np.ndarray, v: np.ndarray) -> bool:
    if u.dtype != v.dtype or u.shape != v.shape:
        return False
    if u.dtype.kind != "O":  # numbers, booleans, dates: their bytes
        return same_bits(u, v)
    if (pd.api.types.infer_dtype(u, skipna=False) == "string"
            and pd.api.types.infer_dtype(v, skipna=False) == "string"):
        return bool(np.array_equal(u, v))  # text only: == is exact
    return all(type(p) is type(q) and (p is q or _same_scalar(p, q)) for p, q in zip(u, v))


def _same_scalar(p, q) -> bool:
    if isinstance(p, (float, np.floating)):
        return same_bits(p, q)
    try:
        return bool(p == q)
    except (TypeError, ValueError):
        return False


_REBUILT = {"masked", "labels", "block_labels", "measures"}  # fields a compact form rebuilds
_REBUILT_MEASURES = {"classes", "record_risk"}


def same_result(a: AnonymizationResult, b: AnonymizationResult) -> bool:
    """True when ``a`` is ``b`` given back: the same released table bit for bit
    (:func:`same_frame`), the same labels, block labels, classes and record risks (dtype,
    shape and bytes), and every other field, and every other field of the measures, the
    same object."""
    if not same_frame(a.masked, b.masked) or not all(
            getattr(a, f.name) is getattr(b, f.name) for f in fields(a)
            if f.name not in _REBUILT):
        return False
    if not (_same_array(a.labels, b.labels) and _same_array(a.block_labels, b.block_labels)):
        return False
    m, n = a.measures, b.measures
    if m is n:
        return True
    if m is None or n is None:
        return False
    return all(getattr(m, f.name) is getattr(n, f.name) for f in fields(m)
               if f.name not in _REBUILT_MEASURES) and all(
        _same_array(getattr(m, name), getattr(n, name)) for name in _REBUILT_MEASURES)


def _same_array(u, v) -> bool:
    """Both None, or ndarrays (not a subclass) with the same dtype, shape and bytes."""
    if u is None or v is None:
        return u is v
    return type(u) is type(v) is np.ndarray and same_bits(u, v)
