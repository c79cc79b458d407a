"""Columns that give a quasi-identifier away, found in the original table.

:func:`core.pipeline.warnings.release_warnings` warns about those released as they are
("a kept column that reveals a quasi-identifier"). The relations between a column that
may be released as it is (neither identifier, quasi-identifier nor stratum) and a
quasi-identifier, tried in this order:

codings
    The column determines the quasi-identifier (every value of the column goes with one
    value of it), or is determined by it. Adult's ``education`` maps one-to-one to
    ``education-num``: masking ``education-num`` while releasing ``education`` protects
    nothing. Only codings count: the determining side must have at most half as many
    distinct values as records (a missing value one of them; a column unique to every
    record determines everything trivially, and its mapping is not public knowledge),
    and both sides at least two values. The rows missing either value do not count, nor
    does a missing value count as a value for one-to-one.
orders and bands
    Beyond codings, a column is related to a quasi-identifier measured on numbers when
    one of them is a function of the other with each of its values taken on one interval
    of the other's values, however many distinct values both have:

    - the column a strictly monotone function of the quasi-identifier ("is a monotone
      function of": ``birth_year = 2024 − age``): at least the original order, and the
      values themselves to whoever knows the function;
    - the column a rounding or a banding of it ("is a rounding or banding of":
      ``income_k = round(income / 1000)``, ``over_40 = age > 40``, top-coding; the
      bands need not be in order): each record's band;
    - the quasi-identifier a rounding or a banding of the column ("is a finer measure
      of": a date of birth beside age): the quasi-identifier itself.

    Numbers here are numbers, dates, times and durations, and text holding one number
    in every cell (``'102,300'``, ``'$102,300'``, ``'42 years'``) or an ISO date
    (``'1982-04-03'``; :func:`numbers`). A
    row missing either value does not count: a gap in the column (item non-response)
    hides nothing of the other rows.

    Every column is a function of a quasi-identifier of distinct values, and two columns
    of distinct values are one-to-one, so the intervals must be unlikely by chance. With
    u distinct values on the finer side, m on the coarser and u_i of the finer's values
    in the i-th: intervals in order (both sides numbers, bands increasing or decreasing)
    happen with probability 2·∏u_i!/u!, intervals in any order m!·∏u_i!/u!, and the
    relation counts when that is at most 2/8! (``_MONOTONE_FROM`` = 8: eight distinct
    values in the same order). A yes/no flag over 20 ages, 10 and 10, counts (1 in
    92,378); 3 bands of 3 ages do not (1 in 280), nor 7 values in order (1 in 2,520).

Left alone here: a copy with noise or with a miscoded cell, a function of two
quasi-identifiers (income per hour) and two kept columns that give a quasi-identifier
together (its parts), measured on the release by :mod:`core.pipeline.follows`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.roles import RoleSpec

__all__ = ["ColumnRelation", "column_relations", "numbers", "BANDED", "FINER", "MONOTONE"]

_SAMPLE = 50_000  # rows to refute a relation quickly before checking all of them
_MONOTONE_FROM = 8
# The chance, at most, that unrelated columns fall into intervals of each other (module
# notes): two columns of 8 distinct values in the same or the reverse order, 2/8!.
_LOG_CHANCE = math.log(2 / math.factorial(_MONOTONE_FROM))
MONOTONE = "is a monotone function of"
BANDED = "is a rounding or banding of"
FINER = "is a finer measure of"
# One number in a text cell, with words or signs around it but no other digit: '42
# years', '$102,300', '94116 EUR' (thousands in groups of three; a decimal comma is not
# taken for one).
_ONE_NUMBER = re.compile(r"[^0-9]*?([+\-\u2212]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)"
                         r"(?:\.[0-9]*)?|[+\-\u2212]?\.[0-9]+)[^0-9]*")
_ISO_DATE = r"\s*[0-9]{4}-[0-9]{2}(?:-[0-9]{2})?(?:[T ][0-9:.]+)?\s*"  # 1982-04-03


@dataclass(frozen=True)
class ColumnRelation:
    """In the original table, ``column`` ``relation`` quasi-identifier
    ``quasi_identifier``: "maps one-to-one to", "determines", "is determined by", or one
    of :data:`MONOTONE`, :data:`BANDED` and :data:`FINER`."""

    column: str
    quasi_identifier: str
    relation: str


def column_relations(table: pd.DataFrame, roles: RoleSpec) -> tuple[ColumnRelation, ...]:
    """Every relation (module notes) between a column that may be released as it is
    and a quasi-identifier in ``table``, columns in the table's order, then
    quasi-identifiers in theirs.

    It reads the original alone, so :func:`core.pipeline.run.run` computes it on its
    helper thread while the method runs (about 1.6 s for 13 columns of 1,000,000 rows,
    and about 1 s more for each column of text that holds numbers);
    :func:`core.pipeline.warnings.release_warnings` keeps the relations of the columns
    the release left unchanged.
    """
    skip = set(roles.quasi_identifiers) | set(roles.identifiers) | set(roles.strata)
    candidates = [c for c in table.columns if c not in skip]
    if not candidates:
        return ()
    n = len(table)
    codes = {c: codes_of(table[c]) for c in [*candidates, *roles.quasi_identifiers]}
    distinct = {c: int(codes[c].max()) + 1 if n else 0 for c in codes}
    views = _Views(table, distinct)
    found = []
    for column in candidates:
        for qi in roles.quasi_identifiers:
            m, u = views.present_distinct(column), views.present_distinct(qi)
            if m < 2 or u < 2:
                continue
            both = ~(views.gaps(column) | views.gaps(qi))  # rows a coding can be read on
            both = None if both.all() else both
            if distinct[column] <= n / 2 and _determines(codes[column], codes[qi], both):
                relation = ("maps one-to-one to" if m == u
                            and _determines(codes[qi], codes[column], both) else "determines")
            elif distinct[qi] <= n / 2 and _determines(codes[qi], codes[column], both):
                relation = "is determined by"
            else:
                relation = _ordered(column, qi, m, u, codes, views)
                if relation is None:
                    continue
            found.append(ColumnRelation(column, qi, relation))
    return tuple(found)


def numbers(series: pd.Series) -> np.ndarray | None:
    """``series`` as numbers for the order checks (float64, NaN where missing): numbers;
    dates, times and durations as their instants and lengths; text (or categories) with
    one number in every cell that has a value, as that number (``'$102,300'`` is
    102300), or an ISO date in every cell (``'1982-04-03'``, as the date); None for
    anything else, and for yes/no columns. Whole numbers beyond 2**53 lose their last
    digits here, so a relation among such numbers may be missed.

    >>> numbers(pd.Series(["42 years", "$1,200", None])).tolist()
    [42.0, 1200.0, nan]
    >>> numbers(pd.Series(["North", "1982-04-03"])) is None
    True
    """
    if pd.api.types.is_bool_dtype(series):
        return None
    if pd.api.types.is_numeric_dtype(series):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    if pd.api.types.is_datetime64_any_dtype(series) or pd.api.types.is_timedelta64_dtype(
            series):
        if isinstance(series.dtype, pd.DatetimeTZDtype):
            series = series.dt.tz_convert(None)
        return np.where(series.isna(), np.nan, series.astype("int64").astype(np.float64))
    if not (series.dtype == object or pd.api.types.is_string_dtype(series)
            or isinstance(series.dtype, pd.CategoricalDtype)):
        return None
    has = series.notna().to_numpy()
    present = series[has].astype(str)
    kind = None
    for rows in (slice(0, _SAMPLE), slice(None)):  # the first cells refute most text
        text = present.iloc[rows]
        if kind != "date" and text.str.fullmatch(_ONE_NUMBER.pattern).all():
            kind = "number"
        elif kind != "number" and text.str.fullmatch(_ISO_DATE).all():
            kind = "date"
        else:
            return None
        if len(present) <= _SAMPLE:
            break
    values = np.full(len(series), np.nan)
    if len(present):
        if kind == "number":
            digits = present.str.extract(_ONE_NUMBER, expand=False)
            found = pd.to_numeric(digits.str.replace(",", "", regex=False)
                                  .str.replace("\u2212", "-", regex=False), errors="coerce")
        else:
            found = pd.to_datetime(present.str.strip(), format="ISO8601", errors="coerce")
            if found.isna().any():  # 2024-13-45: not a date
                return None
            found = found.astype("int64")
        values[has] = found.to_numpy(np.float64)
    return values


class _Views:
    """Each column's numbers (:func:`numbers`), present count and sorted rows, made once
    and kept for the other pairs."""

    def __init__(self, table: pd.DataFrame, distinct: dict):
        self.table, self.distinct = table, distinct
        self._numbers: dict = {}
        self._sorted: dict = {}
        self._gaps: dict = {}

    def gaps(self, column: str) -> np.ndarray:
        """Where ``column`` is missing."""
        if column not in self._gaps:
            self._gaps[column] = self.table[column].isna().to_numpy()
        return self._gaps[column]

    def numbers(self, column: str, head: bool = False) -> np.ndarray | None:
        """:func:`numbers` of ``column``; with ``head``, of its first rows only (text
        is read as numbers there first, where most text columns are refuted)."""
        if column in self._numbers:
            found = self._numbers[column]
            return found[:_SAMPLE] if head and found is not None else found
        if not head:
            self._numbers[column] = numbers(self.table[column])
            return self._numbers[column]
        if (column, "head") not in self._numbers:
            self._numbers[column, "head"] = numbers(self.table[column].iloc[:_SAMPLE])
        return self._numbers[column, "head"]

    def present_distinct(self, column: str) -> int:
        """Distinct values, a missing value not one."""
        return self.distinct[column] - int(self.gaps(column).any())

    def sorted_rows(self, column: str) -> np.ndarray:
        """The rows where ``column``'s number is not missing, in its order."""
        if column not in self._sorted:
            values = self.numbers(column)
            present = np.flatnonzero(~np.isnan(values))
            self._sorted[column] = present[np.argsort(values[present], kind="stable")]
        return self._sorted[column]


def _ordered(column: str, qi: str, m: int, u: int, codes: dict, views: _Views
             ) -> str | None:
    """The order or band relation of ``column`` (``m`` distinct values, a missing value
    not one) to numeric ``qi`` (``u``) (module notes), or None."""
    if views.numbers(qi) is None:
        return None
    if m <= u:
        bands = _intervals(column, qi, codes[column], views, one_to_one=m == u)
        if bands is not None:
            per_band, ordered = bands
            return MONOTONE if ordered and per_band.max() == 1 else BANDED
    if m > u and views.numbers(column, head=True) is not None and _intervals(
            qi, column, codes[qi], views, one_to_one=False) is not None:
        return FINER
    return None


def _intervals(coarse: str, fine: str, codes: np.ndarray, views: _Views,
               one_to_one: bool):
    """Whether column ``coarse`` (its ``codes``) is a function of numeric ``fine``
    taking each of its values on one interval of ``fine``'s, beyond chance (module
    notes): (values of ``fine`` in each band, whether the bands are in order), or None.

    The first rows refute most pairs (intervals over all rows are intervals over every
    part of them) before ``fine``'s rows are sorted; with ``one_to_one`` (as many
    distinct values on both sides), only bands in order can count, and the first rows
    must be in order too.
    """
    if one_to_one and views.numbers(coarse, head=True) is None:
        return None
    gaps = views.gaps(coarse)
    if len(gaps) > _SAMPLE:
        values = views.numbers(fine, head=True)
        if values is None:
            return None
        head = np.flatnonzero(~np.isnan(values) & ~gaps[:_SAMPLE])
        head = head[np.argsort(values[head], kind="stable")]
        starts = _bands(codes, values, head)
        if starts is None or one_to_one and not _in_order(
                views.numbers(coarse, head=True)[head[starts]]):
            return None
    values = views.numbers(fine)
    if values is None:
        return None
    rows = views.sorted_rows(fine)
    rows = rows[~gaps[rows]]
    starts = _bands(codes, values, rows)
    if starts is None:
        return None
    band = codes[rows[starts]]  # each distinct value's band, in order
    per_band = np.bincount(band)
    per_band = per_band[per_band > 0]
    if len(per_band) < 2:
        return None
    ranks = views.numbers(coarse)  # None: bands not in order
    first = starts[np.r_[True, band[1:] != band[:-1]]]  # each band's first row
    ordered = ranks is not None and _in_order(ranks[rows[first]])
    arrangements = math.log(2) if ordered else math.lgamma(len(per_band) + 1)
    log_chance = (arrangements + sum(math.lgamma(x + 1) for x in per_band.tolist())
                  - math.lgamma(len(band) + 1))
    return (per_band, ordered) if log_chance <= _LOG_CHANCE + 1e-9 else None


def _in_order(band_values: np.ndarray) -> bool:
    """Whether the values of consecutive bands only rise, or only fall."""
    steps = np.diff(band_values)
    return bool((steps > 0).all() or (steps < 0).all())


def _bands(codes: np.ndarray, values: np.ndarray, rows: np.ndarray):
    """For ``rows`` sorted by ``values``: where ``codes`` are a function of ``values``
    taking each code on one interval, the position of each distinct value's first row;
    None where they are not."""
    v, c = values[rows], codes[rows]
    starts = np.flatnonzero(np.r_[True, v[1:] != v[:-1]]) if len(v) else rows
    band = c[starts]  # the code of each distinct value, if the codes are a function
    if not np.array_equal(np.repeat(band, np.diff(np.r_[starts, len(v)])), c):
        return None
    runs = 1 + int(np.count_nonzero(band[1:] != band[:-1])) if len(band) else 0
    return starts if runs == np.unique(band).size else None


def codes_of(series: pd.Series) -> np.ndarray:
    """``series``' values as codes 0, 1, ... (a missing value one of them)."""
    codes, _ = pd.factorize(series, use_na_sentinel=False)
    return codes.astype(np.int64)


def _determines(source: np.ndarray, target: np.ndarray, both: np.ndarray | None) -> bool:
    """True when every value of ``source`` goes with a single value of ``target``, on
    the rows ``both`` (a mask; None: all rows) where neither is missing."""
    if both is not None:
        source, target = source[both], target[both]
        if not len(source):
            return False
    for rows in (slice(0, _SAMPLE), slice(None)):
        s, t = source[rows], target[rows]
        pairs = np.unique(s * (int(target.max()) + 1) + t)
        if pairs.size != np.unique(s).size:
            return False
        if len(source) <= _SAMPLE:
            break
    return True
