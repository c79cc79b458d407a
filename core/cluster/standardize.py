"""One measurement of the quasi-identifiers for every block: the whole table's.

A block microaggregated with its own z-scores would measure distances, and information
loss, in units that differ from block to block and from the unblocked run. So the
parameters of :mod:`core.data.encoding` are computed once over the whole (partitioned)
table with Dask and every block is measured with them:

numeric
    mean and population standard deviation (two passes: the mean, then the sum of
    squared deviations, as ``numpy.std`` computes it);
ordinal and nominal
    the categories (the declared order, the categorical dtype's, or the sorted distinct
    values, exactly as :func:`core.data.encoding.encode` chooses them) and the scale
    ``c_j`` or ``w_j`` from the whole table's category counts and its median category
    or mode (:func:`core.data.categories.group_aggregate_codes`, computed from counts).

The same pass counts missing values in the columns a run needs and refuses them, naming
the column. SST, the denominator of IL = 100·SSE/SST, is the whole table's: the sum of
squared z-scores plus n per varying categorical attribute.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.encoding import AttributeCoding, Encoding, encode, resolve_level
from core.data.roles import Level, RoleSpec
from core.errors import MicroaggError

__all__ = ["GlobalEncoding", "global_encoding", "aggregate_code_from_counts"]


@dataclass(frozen=True)
class GlobalEncoding:
    """The whole table's measurement of the quasi-identifiers (module notes).

    Attributes
    ----------
    attributes : tuple of AttributeCoding
        In quasi-identifier order, with global means, s.d., categories and scales.
    n_records : int
    sst : float
        The whole table's total sum of squares.
    """

    attributes: tuple[AttributeCoding, ...]
    n_records: int
    sst: float

    @property
    def width(self) -> int:
        return self.attributes[-1].columns.stop if self.attributes else 0

    def encode(self, frame: pd.DataFrame) -> Encoding:
        """The :class:`~core.data.encoding.Encoding` of ``frame``'s records, measured with
        the whole table's parameters (``X`` of shape (len(frame), width))."""
        shell = Encoding(X=np.empty((0, self.width)),
                         values=np.empty((0, len(self.attributes))),
                         attributes=self.attributes)
        values, unknown = shell.values_of(frame)
        if unknown:  # cannot happen with the whole table's categories
            column = next(iter(unknown))
            raise MicroaggError(f"Column '{column}' holds a value that the whole table's "
                                "categories do not have.")
        return Encoding(X=shell.embed(values), values=values, attributes=self.attributes)


def aggregate_code_from_counts(counts: np.ndarray, level: Level) -> int:
    """The whole table's released category from its category counts (codes 0..m−1).

    The same rule as :func:`core.data.categories.group_aggregate_codes` with a single
    group: the median category (the one of the two middle ones nearer the mean rank,
    ties to the lower) for an ordinal attribute, the most frequent (ties to the lower
    code) for a nominal one.

    Examples
    --------
    >>> aggregate_code_from_counts(np.array([1, 1, 0, 2]), Level.ORDINAL)
    1
    >>> aggregate_code_from_counts(np.array([1, 1, 0, 2]), Level.NOMINAL)
    3
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if level is Level.NOMINAL:
        return int(np.argmax(counts))  # argmax takes the first of equal counts
    cumulative = np.cumsum(counts)
    low = int(np.searchsorted(cumulative, (n - 1) // 2, side="right"))
    high = int(np.searchsorted(cumulative, n // 2, side="right"))
    mean = float((np.arange(counts.size) * counts).sum()) / n
    return high if high - mean < mean - low else low


def global_encoding(frame, roles: RoleSpec, sample: pd.DataFrame, *,
                    needed: list[str]) -> GlobalEncoding:
    """Measure the quasi-identifiers of the Dask frame ``frame`` (module notes).

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
    roles : RoleSpec
    sample : DataFrame
        A few records of ``frame`` (its first rows), to resolve default levels.
    needed : list of str
        Columns in which no value may be missing (quasi-identifiers, strata,
        confidential columns).

    Raises
    ------
    MicroaggError
        A missing value in a needed column (the message names it and the count).
    """
    import dask

    qi = list(roles.quasi_identifiers)
    levels = {c: resolve_level(sample, roles, c) for c in qi}
    numeric = [c for c in qi if levels[c] is Level.NUMERIC]
    categorical = [c for c in qi if levels[c] is not Level.NUMERIC]
    wanted = {"n": frame.shape[0], "missing": frame[needed].isna().sum()}
    if numeric:
        wanted["mean"] = frame[numeric].astype("float64").mean()
    for column in categorical:
        wanted[column] = frame[column].value_counts(dropna=True)
    first = dask.compute(wanted)[0]
    n = int(first["n"])
    for column, count in first["missing"].items():
        if count:
            raise MicroaggError(
                f"Column '{column}' has {int(count):,} missing value(s). The Dask engine "
                "masks complete records only: impute or remove those rows, or give the "
                "column another role.")
    mean = first["mean"] if numeric else pd.Series(dtype=float)
    squares = pd.Series(dtype=float)
    if numeric:
        centre = mean[numeric].to_numpy(dtype=np.float64)
        meta = pd.DataFrame({c: pd.Series(dtype="float64") for c in numeric})
        squares = frame[numeric].map_partitions(_squares, centre, meta=meta).compute().sum()
    sst = 0.0
    attributes, start = [], 0
    for column in qi:
        level = levels[column]
        if level is Level.NUMERIC:
            variance = float(squares[column]) / n
            std = math.sqrt(variance) if variance > 0 else 1.0
            attributes.append(AttributeCoding(column, level, slice(start, start + 1),
                                              mean=float(mean[column]), std=std))
            sst += float(squares[column]) / std ** 2
            start += 1
            continue
        counts = first[column]
        categories = _categories(counts, column, roles, sample)
        by_code = np.zeros(len(categories), dtype=np.int64)
        codes = AttributeCoding(column, level, slice(0, 1), categories=categories).codes(
            pd.Series(counts.index, dtype=object))
        if (codes < 0).any():
            bad = counts.index[int(np.flatnonzero(codes < 0)[0])]
            raise MicroaggError(f"Column '{column}' has the value {bad!r}, which is not "
                                f"in the {level.value} order given for it.")
        np.add.at(by_code, codes, counts.to_numpy(dtype=np.int64))
        centre = aggregate_code_from_counts(by_code, level)
        ranks = np.arange(len(categories), dtype=np.float64)
        if level is Level.ORDINAL:
            spread = float((by_code * (ranks - centre) ** 2).sum())
            scale, width = (math.sqrt(n / spread) if spread > 0 else 1.0), 1
        else:
            differ = int(n - by_code[centre])
            scale, width = (math.sqrt(n / differ) if differ else 1.0), len(categories)
        if (by_code > 0).sum() > 1:
            sst += n
        attributes.append(AttributeCoding(column, level, slice(start, start + width),
                                          categories=categories, scale=scale))
        start += width
    return GlobalEncoding(tuple(attributes), n, sst)


def _squares(part: pd.DataFrame, centre: np.ndarray) -> pd.DataFrame:
    """One row: the partition's sums of squared deviations from ``centre``."""
    deviations = part.to_numpy(dtype=np.float64) - centre
    return pd.DataFrame([np.einsum("ij,ij->j", deviations, deviations)],
                        columns=part.columns)


def _categories(counts: pd.Series, column: str, roles: RoleSpec,
                sample: pd.DataFrame) -> np.ndarray:
    """The categories :func:`core.data.encoding.encode` would choose for the whole column:
    measured on a small column holding every distinct value once (with the sample's
    dtype, so a categorical column keeps its categories)."""
    distinct = pd.Series(list(counts.index), dtype=object, name=column)
    if isinstance(sample[column].dtype, pd.CategoricalDtype):
        distinct = distinct.astype(sample[column].dtype)
    level = roles.level_of(column)
    single = RoleSpec(quasi_identifiers=(column,),
                      levels={column: level} if level is not None else {},
                      orders={column: roles.order_of(column)}
                      if roles.order_of(column) is not None else {})
    if len(distinct) == 1:  # encode measures two records at least
        distinct = pd.concat([distinct, distinct], ignore_index=True)
    return encode(distinct.to_frame(), single, strict=False).attributes[0].categories
