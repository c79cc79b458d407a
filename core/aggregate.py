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
    blocks: Sequence[Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Return a new frame with each quasi-identifier replaced by its group mean.

    Parameters
    ----------
    table : DataFrame of n_records rows
    labels : ndarray of shape (n_records,) or (n_records, n_blocks)
        Group id per record (per attribute block).
    quasi_identifiers : column names to aggregate
    drop : column names left out of the output (the identifiers, by default)
    blocks : column names of each block, matching the columns of ``labels``
    """
    labels = np.asarray(labels)
    if labels.ndim == 1:
        labels, blocks = labels[:, None], [list(quasi_identifiers)]
    masked = table.drop(columns=list(drop)).copy()
    for b, block in enumerate(blocks):
        raw = numeric_matrix(table, block)
        means = group_means(raw, labels[:, b])[labels[:, b]]
        for j, column in enumerate(block):
            masked[column] = pd.Series(means[:, j], index=table.index, name=column)
    return masked
