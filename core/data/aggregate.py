"""Building the masked table from a partition.

Each quasi-identifier value is replaced by its group's aggregate: the mean (in the
column's own units) for a numeric attribute, the median category for an ordinal one and
the mode for a nominal one (:func:`core.data.categories.group_aggregate_codes`), so a released
category is always one of the original's. Identifiers are dropped unless asked
otherwise; every other column is copied untouched; row order is preserved; the input
frame is never modified.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.compiled import kernel
from core.data.categories import group_aggregate_codes, released_series
from core.data.encoding import Encoding
from core.data.prepare import numeric_matrix

__all__ = ["group_means", "released_columns", "aggregate"]


def group_means(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mean of ``values`` (n_records × n_attributes) per group, shape (n_groups, n_attributes).

    Each group's sum adds its records' values in input order, as
    ``numpy.bincount(labels, weights=values[:, j])`` does, so the compiled pass over
    the rows (:func:`_group_sums`, every attribute at once) gives the same bits as
    that reference (:func:`_group_sums_reference`).
    """
    labels = np.asarray(labels)
    if labels.size and labels.min() < 0:
        raise ValueError("group_means needs non-negative group labels.")
    if _group_sums_compiled is not None and values.ndim == 2 and labels.size:
        sums, counts = _group_sums_compiled(np.asarray(values, dtype=np.float64),
                                            labels.astype(np.int64, copy=False),
                                            int(labels.max()) + 1)
    else:
        sums, counts = _group_sums_reference(values, labels)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts[:, None]


def _group_sums_reference(values: np.ndarray, labels: np.ndarray):
    """(sums, counts) per group by ``numpy.bincount``, one attribute at a time."""
    counts = np.bincount(labels)
    sums = np.stack(
        [np.bincount(labels, weights=values[:, j], minlength=counts.size)
         for j in range(values.shape[1])],
        axis=1,
    )
    return sums, counts


def _group_sums(values, labels, n_groups):
    """(sums, counts) per group in one pass over the rows, each sum in input order."""
    d = values.shape[1]
    sums = np.zeros((n_groups, d))
    counts = np.zeros(n_groups, dtype=np.int64)
    for i in range(labels.shape[0]):
        g = labels[i]
        counts[g] += 1
        for j in range(d):
            sums[g, j] += values[i, j]
    return sums, counts


_group_sums_compiled = kernel(_group_sums)


def released_columns(means: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Every record's group value, column by column: row j is ``means[:, j][labels]``.

    Shape (n_attributes, n_records), each row contiguous (a released column). Compiled,
    one pass over the records reads each record's group row once; the numpy path
    gathers each column from a contiguous copy (a column of ``means`` read through its
    stride touches a cache line per value). A copy either way: the same bits.
    """
    labels = labels.astype(np.int64, copy=False)
    if _spread_compiled is not None and means.ndim == 2:
        out = np.empty((means.shape[1], len(labels)))  # numpy's: large pages (core.compiled)
        _spread_compiled(np.ascontiguousarray(means, dtype=np.float64), labels, out)
        return out
    by_column = np.ascontiguousarray(means.T)
    return np.stack([row[labels] for row in by_column]) if len(by_column) else \
        np.empty((0, len(labels)))


def _spread(means, labels, out):
    d = means.shape[1]
    for i in range(labels.shape[0]):
        g = labels[i]
        for j in range(d):
            out[j, i] = means[g, j]


_spread_compiled = kernel(_spread)


def aggregate(
    table: pd.DataFrame,
    labels: np.ndarray,
    quasi_identifiers: Sequence[str],
    *,
    drop: Sequence[str] = (),
    blocks: Sequence[Sequence[str]] | None = None,
    encoding: Encoding | None = None,
    checkpoint=None,
) -> pd.DataFrame:
    """Return a new frame with each quasi-identifier replaced by its group aggregate.

    Parameters
    ----------
    table : DataFrame of n_records rows
    labels : ndarray of shape (n_records,) or (n_records, n_blocks)
        Group id per record (per attribute block).
    quasi_identifiers : column names to aggregate
    drop : column names left out of the output (the identifiers, by default)
    blocks : column names of each block, matching the columns of ``labels``
    encoding : Encoding, optional
        The measured quasi-identifiers (:func:`core.data.encoding.encode`); without it every
        quasi-identifier is numeric.
    checkpoint : callable, optional
        Called after each block (a Cancel raised there stops the aggregation; a method
        masked attribute by attribute has a block per attribute).
    """
    labels = np.asarray(labels)
    if labels.ndim == 1:
        labels, blocks = labels[:, None], [list(quasi_identifiers)]
    masked = table.drop(columns=list(drop))  # copy-on-write (pandas 3): table unchanged
    for b, block in enumerate(blocks):
        block_labels = labels[:, b]
        categorical = [] if encoding is None else \
            [c for c in block if encoding.attribute(c).categorical]
        numeric = [c for c in block if c not in categorical]
        if numeric:
            if encoding is None:
                raw = numeric_matrix(table, numeric)
            else:  # the encoding's own values, without a copy when they are these columns
                positions = [encoding.names.index(c) for c in numeric]
                raw = (encoding.values if positions == list(range(len(encoding.names)))
                       else encoding.values[:, positions])
            spread = released_columns(group_means(raw, block_labels), block_labels)
            for j, column in enumerate(numeric):
                masked[column] = pd.Series(spread[j], index=table.index, name=column,
                                           copy=False)
        for column in categorical:
            coding = encoding.attribute(column)
            codes = encoding.values[:, encoding.names.index(column)].astype(np.int64)
            chosen = group_aggregate_codes(codes, block_labels, coding.level,
                                           len(coding.categories))[block_labels]
            masked[column] = released_series(table[column], coding.categories, chosen)
        if checkpoint is not None:
            checkpoint()
    return masked
