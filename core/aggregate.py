"""Building the masked table from a partition.

Each quasi-identifier value is replaced by the mean of its group (in the column's own
units). Identifiers are dropped unless asked otherwise; every other column is copied
untouched; row order is preserved; the input frame is never modified.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.prepare import numeric_matrix

__all__ = ["group_means", "aggregate"]


def group_means(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mean of ``values`` (n_records × n_attributes) per group, shape (n_groups, n_attributes)."""
    counts = np.bincount(labels)
    sums = np.stack(
        [np.bincount(labels, weights=values[:, j], minlength=counts.size)
         for j in range(values.shape[1])],
        axis=1,
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts[:, None]


def aggregate(
    table: pd.DataFrame,
    labels: np.ndarray,
    quasi_identifiers: Sequence[str],
    *,
    drop: Sequence[str] = (),
) -> pd.DataFrame:
    """Return a new frame with each quasi-identifier replaced by its group mean.

    Parameters
    ----------
    table : DataFrame of n_records rows
    labels : ndarray of shape (n_records,)
        Group id per record.
    quasi_identifiers : column names to aggregate
    drop : column names left out of the output (the identifiers, by default)
    """
    raw = numeric_matrix(table, quasi_identifiers)
    means = group_means(raw, labels)[labels]
    masked = table.drop(columns=list(drop)).copy()
    for j, column in enumerate(quasi_identifiers):
        masked[column] = pd.Series(means[:, j], index=table.index, name=column)
    return masked
