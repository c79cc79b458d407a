"""One measurement of the quasi-identifiers for every block: the whole table's.

A block microaggregated with its own z-scores would measure distances, and information
loss, in units that differ from block to block and from the unblocked run. So the
parameters of :mod:`core.data.encoding` are computed once over the whole (partitioned)
table with Dask, in one pass (:func:`survey` per partition, :func:`merge` on the
client), and every block is measured with them:

numeric
    mean and population standard deviation, exactly: each partition gives the sums of
    its values and of their squares as Shewchuk's exact partials (each square split
    exactly in two doubles, Dekker's product), the partials of every partition are
    added as fractions, and the mean and the sum of squared deviations
    ``Σx² − (Σx)²/n`` are rounded once. They are therefore the same bits however the
    table is cut into partitions or files (an in-memory table and the same records in
    uneven Parquet parts get one release), and agree with ``numpy.std`` to rounding.
    (A value below about 1e−145 in magnitude, not 0, has a square whose rounding error
    is below the smallest normal double and is lost: the moments are then not the
    exact ones rounded once, still the same bits however the table is cut.)
    (A merge of each partition's mean and squared deviations by the pairwise rule of
    Chan, Golub & LeVeque depends on where the partitions are cut, in the last bits,
    and a last bit can decide a tie of the method.);
ordinal and nominal
    the categories (the declared order, the categorical dtype's, or the sorted distinct
    values, exactly as :func:`core.data.encoding.encode` chooses them) and the scale
    ``c_j`` or ``w_j`` from the whole table's category counts and its median category
    or mode (:func:`core.data.categories.group_aggregate_codes`, computed from counts).

The same pass counts missing values in the columns a run needs (refused, naming the
column), counts the strata and draws the sample the blocks are built on. SST, the denominator of IL = 100·SSE/SST, is the whole table's: the sum of
squared z-scores plus n per varying categorical attribute.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from core.compiled import COMPILED, kernel
from core.data.encoding import AttributeCoding, Encoding, encode, resolve_level
from core.data.roles import Level, RoleSpec
from core.errors import MicroaggError

__all__ = ["GlobalEncoding", "Survey", "survey", "merge", "encoding_of", "resolve_levels",
           "global_encoding", "aggregate_code_from_counts"]


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


@dataclass(frozen=True)
class Survey:
    """What one pass over the records measures (:func:`survey`), mergeable (:func:`merge`).

    Attributes
    ----------
    n : int
    missing : Series
        Missing values per needed column.
    sums : dict of str to (ndarray, ndarray)
        Per numeric quasi-identifier: the exact partials of the sum of its values and
        of the sum of their squares (:func:`exact_sums`); ``moments`` gives the count,
        mean and sum of squared deviations from them.
    categories : dict of str to Series
        Per categorical quasi-identifier: records per value.
    strata : Series or None
        Records per stratum (the stratum columns' tuple).
    sample : DataFrame
        The quasi-identifiers and strata of the sampled records.
    """

    n: int
    missing: pd.Series
    sums: dict
    categories: dict
    strata: pd.Series | None
    sample: pd.DataFrame

    @property
    def moments(self) -> pd.DataFrame:
        """Per numeric quasi-identifier: ``count``, ``mean`` and ``m2`` (the sum of
        squared deviations from the mean), each rounded once (:func:`moments_of`)."""
        rows = {column: (float(self.n), *moments_of(self.n, *partials))
                for column, partials in self.sums.items()}
        return pd.DataFrame.from_dict(rows, orient="index",
                                      columns=["count", "mean", "m2"])


_PARTIALS = 64  # Shewchuk's partials of a sum of doubles are fewer than 41


def _grow(partials, count, x):
    """Add ``x`` to the exact sum held by ``partials[:count]`` (non-overlapping doubles,
    Shewchuk's algorithm, as Python's ``math.fsum``); the new count."""
    k = 0
    for j in range(count):
        y = partials[j]
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            partials[k] = lo
            k += 1
        x = hi
    partials[k] = x
    return k + 1


def _column_partials(values):
    """Per column of ``values`` (n × c, finite or NaN), the exact partials of the sum
    of its numbers and of the sum of their squares (each square exactly ``hi + lo``:
    Dekker's split of the value in two halves of 26 bits); NaN is left out."""
    n, c = values.shape
    sums = np.zeros((c, _PARTIALS))
    squares = np.zeros((c, _PARTIALS))
    n_sums = np.zeros(c, dtype=np.int64)
    n_squares = np.zeros(c, dtype=np.int64)
    for j in range(c):
        for i in range(n):
            x = values[i, j]
            if x != x:
                continue
            n_sums[j] = _grow(sums[j], n_sums[j], x)
            split = 134217729.0 * x  # 2^27 + 1
            high = split - (split - x)
            low = x - high
            square = x * x
            error = ((high * high - square) + 2.0 * high * low) + low * low
            n_squares[j] = _grow(squares[j], n_squares[j], square)
            if error != 0.0:
                n_squares[j] = _grow(squares[j], n_squares[j], error)
    return sums, n_sums, squares, n_squares


# The helper is rebound to its compiled version before the kernel first runs (numba
# reads a kernel's globals when it compiles it, at its first call).
if COMPILED:
    _grow = kernel(_grow)
_column_partials_compiled = kernel(_column_partials)


def exact_sums(values: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per column, the exact partials of Σx and of Σx² (NaN left out), for
    :func:`moments_of`. A column holding an infinity gives NaN partials."""
    values = np.asarray(values, dtype=np.float64)
    kernel_ = _column_partials_compiled or _column_partials
    sums, n_sums, squares, n_squares = kernel_(np.ascontiguousarray(values))
    out = []
    for j in range(values.shape[1]):
        column = values[:, j]
        if np.isinf(column).any():
            out.append((np.array([np.nan]), np.array([np.nan])))
        else:
            out.append((sums[j, :n_sums[j]].copy(), squares[j, :n_squares[j]].copy()))
    return out


def moments_of(count: float, sums: np.ndarray, squares: np.ndarray) -> tuple[float, float]:
    """(mean, Σ(x − mean)²) of ``count`` values from the exact partials of their sum and
    of the sum of their squares (of every partition, concatenated), each rounded once."""
    if count <= 0:
        return 0.0, 0.0
    if np.isnan(sums).any() or np.isnan(squares).any():
        return float("nan"), float("nan")
    total = sum(map(Fraction, sums.tolist()), Fraction(0))
    total_squares = sum(map(Fraction, squares.tolist()), Fraction(0))
    return float(total / count), float(total_squares - total * total / count)


def survey(part: pd.DataFrame, *, numeric: list[str], categorical: list[str],
           needed: list[str], strata: list[str], chosen: np.ndarray) -> Survey:
    """Measure one partition; ``chosen`` marks its records that join the sample."""
    values = part[numeric].to_numpy(dtype=np.float64) if numeric else np.empty((len(part), 0))
    counted = part.groupby(strata, dropna=False, sort=False, observed=True).size() if strata else None
    return Survey(
        n=len(part), missing=part[needed].isna().sum(),
        sums=dict(zip(numeric, exact_sums(values))),
        categories={c: part[c].value_counts(dropna=True, sort=False) for c in categorical},
        strata=counted, sample=part.loc[chosen, _unique([*numeric, *categorical, *strata])])


def merge(surveys: list[Survey]) -> Survey:
    """One :class:`Survey` of the records of all ``surveys``."""
    sums = {column: (np.concatenate([s.sums[column][0] for s in surveys]),
                     np.concatenate([s.sums[column][1] for s in surveys]))
            for column in surveys[0].sums}
    strata = None
    if surveys[0].strata is not None:
        joined = pd.concat([s.strata for s in surveys])
        strata = joined.groupby(level=list(range(joined.index.nlevels)),
                                dropna=False, observed=True).sum()
    return Survey(
        n=sum(s.n for s in surveys), missing=sum(s.missing for s in surveys),
        sums=sums,
        categories={c: pd.concat([s.categories[c] for s in surveys]).groupby(
            level=0, sort=False).sum() for c in surveys[0].categories},
        strata=strata, sample=pd.concat([s.sample for s in surveys], ignore_index=True))


def _unique(columns: list[str]) -> list[str]:
    return list(dict.fromkeys(columns))


def resolve_levels(roles: RoleSpec, sample: pd.DataFrame) -> dict[str, Level]:
    """The level of every quasi-identifier, from a few records (declared or default)."""
    return {c: resolve_level(sample, roles, c) for c in roles.quasi_identifiers}


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

    levels = resolve_levels(roles, sample)
    numeric = [c for c, level in levels.items() if level is Level.NUMERIC]
    categorical = [c for c, level in levels.items() if level is not Level.NUMERIC]
    parts = [dask.delayed(lambda p: survey(p, numeric=numeric, categorical=categorical,
                                           needed=needed, strata=[],
                                           chosen=np.zeros(len(p), dtype=bool)))(part)
             for part in frame.to_delayed()]
    return encoding_of(merge(list(dask.compute(*parts))), roles, levels, sample)


def encoding_of(measured: Survey, roles: RoleSpec, levels: dict[str, Level],
                sample: pd.DataFrame) -> GlobalEncoding:
    """The :class:`GlobalEncoding` of the whole table from its merged :class:`Survey`.

    Raises
    ------
    MicroaggError
        A missing value in a needed column, or a value outside a declared order.
    """
    n = measured.n
    for column, count in measured.missing.items():
        if count:
            raise MicroaggError(
                f"Column '{column}' has {int(count):,} missing value(s). The Dask engine "
                "masks complete records only: impute or remove those rows, or give the "
                "column another role.")
    sst = 0.0
    attributes, start = [], 0
    moments = measured.moments  # each column's exact sums, added up once
    for column in roles.quasi_identifiers:
        level = levels[column]
        if level is Level.NUMERIC:
            mean, m2 = (float(moments.loc[column, key]) for key in ("mean", "m2"))
            variance = m2 / n
            std = math.sqrt(variance) if variance > 0 else 1.0
            attributes.append(AttributeCoding(column, level, slice(start, start + 1),
                                              mean=mean, std=std))
            sst += m2 / std ** 2
            start += 1
            continue
        counts = measured.categories[column]
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
