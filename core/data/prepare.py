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

from core.errors import MicroaggError

__all__ = ["Standardized", "numeric_matrix", "standardize", "check_group_size"]


@dataclass(frozen=True)
class Standardized:
    """``X`` (n_records × n_attributes), z-scored, with the means and stds used."""

    X: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    columns: tuple[str, ...]


def numeric_matrix(table: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """The named columns as a float64 array, checked for missing and infinite values."""
    out = np.empty((len(table), len(columns)), dtype=np.float64)
    for j, column in enumerate(columns):
        series = table[column]
        try:
            values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            raise MicroaggError(
                f"Column '{column}' is not numeric. Recode it or give it another role."
            ) from None
        missing = np.isnan(values)
        if missing.any():
            rows = np.flatnonzero(missing)
            raise MicroaggError(
                f"Column '{column}' has {rows.size} missing value(s) (first at data row "
                f"{rows[0] + 1}). Impute or remove those rows, or give the column another "
                "role."
            )
        infinite = np.isinf(values)
        if infinite.any():
            rows = np.flatnonzero(infinite)
            raise MicroaggError(
                f"Column '{column}' has {rows.size} infinite value(s) (first at data row "
                f"{rows[0] + 1}). Replace them with finite values."
            )
        out[:, j] = values
    return out


def standardize(table: pd.DataFrame, columns: Sequence[str]) -> Standardized:
    """Z-score ``columns`` of ``table`` with the population standard deviation.

    Raises
    ------
    MicroaggError
        A column has missing or infinite values, or is constant (its z-score is undefined).
    """
    raw = numeric_matrix(table, columns)
    mean = raw.mean(axis=0)
    std = raw.std(axis=0)
    for j, column in enumerate(columns):
        if not std[j] > 0 or raw[:, j].min() == raw[:, j].max():
            raise MicroaggError(
                f"Column '{column}' is constant (every value is {raw[0, j]:g}), so it "
                "carries no information to protect. Give it the non-confidential role."
            )
    X = (raw - mean) / std
    return Standardized(X=X, mean=mean, std=std, columns=tuple(columns))


def check_group_size(n_records: int, k: int, where: str = "The table") -> None:
    """Raise if fewer than ``k`` records are available to form a group."""
    if n_records < k:
        raise MicroaggError(
            f"{where} has {n_records} record(s), fewer than k = {k}. "
            "Choose a smaller k or use more records."
        )
