"""Turning the quasi-identifier columns of a table into the numeric matrix ``X``.

Every attribute is z-scored with the *population* standard deviation (``ddof=0``), the
convention under which the published MDAV information-loss figures are reproduced
(see ``shared/data/README.md``). Then SST = n·d and IL = 100·SSE/SST.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.compiled import kernel
from core.errors import MicroaggError

__all__ = ["Standardized", "numeric_matrix", "constant_columns", "centred_and_std",
           "standardize", "check_group_size"]


@dataclass(frozen=True)
class Standardized:
    """``X`` (n_records × n_attributes), z-scored, with the means and stds used."""

    X: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    columns: tuple[str, ...]


def numeric_matrix(table: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """The named columns as a float64 array, checked for missing and infinite values."""
    converted = []
    for column in columns:
        series = table[column]
        try:
            values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            raise MicroaggError(
                f"Column '{column}' is not numeric. Recode it or give it another role."
            ) from None
        if not np.isfinite(values).all():  # one pass over a clean column; the cause after
            missing = np.isnan(values)
            if missing.any():
                rows = np.flatnonzero(missing)
                raise MicroaggError(
                    f"Column '{column}' has {rows.size} missing value(s) (first at data row "
                    f"{rows[0] + 1}). Impute or remove those rows, or give the column "
                    "another role."
                )
            rows = np.flatnonzero(np.isinf(values))  # what is left: infinite values
            raise MicroaggError(
                f"Column '{column}' has {rows.size} infinite value(s) (first at data row "
                f"{rows[0] + 1}). Replace them with finite values."
            )
        converted.append(values)
    # Written a block of rows at a time: the rows being filled stay in the cache, where
    # a whole column at a time would pass over the matrix once per column.
    out = np.empty((len(table), len(columns)), dtype=np.float64)
    for start in range(0, len(table), _ROWS_PER_BLOCK):
        stop = start + _ROWS_PER_BLOCK
        for j, values in enumerate(converted):
            out[start:stop, j] = values[start:stop]
    return out


_ROWS_PER_BLOCK = 8192


def constant_columns(X: np.ndarray) -> np.ndarray:
    """``X.min(axis=0) == X.max(axis=0)`` per column, which is ``np.all(X == X[0], axis=0)``.

    A column's minimum equals its maximum exactly when every entry equals the first
    (−0.0 equals 0.0; a NaN anywhere makes both sides NaN, and NaN ≠ NaN), so each
    column is read only up to its first different entry.
    """
    X = np.asarray(X)
    if _constant_compiled is None or X.ndim != 2 or len(X) == 0 or X.dtype.kind != "f":
        return X.min(axis=0) == X.max(axis=0)
    return _constant_compiled(X)


def _constant(X):
    """:func:`constant_columns` compiled: stops at each column's first different entry."""
    n, d = X.shape
    out = np.zeros(d, dtype=np.bool_)
    for j in range(d):
        first = X[0, j]
        same = first == first
        i = 1
        while same and i < n:
            same = X[i, j] == first
            i += 1
        out[j] = same
    return out


_constant_compiled = kernel(_constant)


def centred_and_std(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(raw.mean(axis=0), raw − mean, raw.std(axis=0))`` with one subtraction.

    The standard deviation follows numpy's own steps (``numpy._core._methods._var``:
    the squared deviations from the mean summed over the records, divided by n, the
    square root), so it is ``raw.std(axis=0)`` bit for bit (the tests compare them);
    the deviations are kept for the z-scores, which ``(raw − mean) / std`` would
    compute again.
    """
    mean = raw.mean(axis=0)
    if len(raw) == 0:
        return mean, raw - mean, raw.std(axis=0)
    centred = raw - mean
    squares = np.multiply(centred, centred)
    variance = np.add.reduce(squares, axis=0)
    del squares
    np.true_divide(variance, len(raw), out=variance)
    return mean, centred, np.sqrt(variance, out=variance)


def standardize(table: pd.DataFrame, columns: Sequence[str]) -> Standardized:
    """Z-score ``columns`` of ``table`` with the population standard deviation.

    Raises
    ------
    MicroaggError
        A column has missing or infinite values, or is constant (its z-score is undefined).
    """
    raw = numeric_matrix(table, columns)
    mean, centred, std = centred_and_std(raw)
    for j, column in enumerate(columns):
        if not std[j] > 0 or raw[:, j].min() == raw[:, j].max():
            raise MicroaggError(
                f"Column '{column}' is constant (every value is {raw[0, j]:g}), so it "
                "carries no information to protect. Give it the non-confidential role."
            )
    X = np.divide(centred, std, out=centred)  # = (raw − mean) / std
    return Standardized(X=X, mean=mean, std=std, columns=tuple(columns))


def check_group_size(n_records: int, k: int, where: str = "The table") -> None:
    """Raise if fewer than ``k`` records are available to form a group."""
    if n_records < k:
        raise MicroaggError(
            f"{where} has {n_records} record(s), fewer than k = {k}. "
            "Choose a smaller k or use more records."
        )
