"""Quasi-identifiers of every measurement level as one numeric matrix ``X``.

Domingo-Ferrer & Torra, "Ordinal, continuous and heterogeneous k-anonymity through
microaggregation" (2005), define microaggregation on numeric, ordinal and nominal
attributes with one distance per level; the t-closeness paper (``shared/papers`` 000,
Section 8) names it as the way to treat categorical and numeric attributes together.
This module fixes the distances, how they are weighted into one record distance, and an
embedding in which that distance is Euclidean, so every partition method, the KD-tree
code and the refinement run unchanged on ``X``.

The record distance
-------------------
For records x and y over quasi-identifiers j = 1..d, ``D(x, y)² = Σ_j d_j(x_j, y_j)²``:

numeric
    ``d_j = |x_j − y_j| / σ_j`` with the population standard deviation (the z-scores
    that reproduce the published MDAV figures; unchanged).
ordinal
    ``d_j = c_j · |r(x_j) − r(y_j)|``, a rank distance: ``r`` is the position of the
    category in the attribute's order (0 for the lowest), so the distance counts the
    steps between two categories, as Domingo-Ferrer & Torra's ordinal distance does.
nominal
    ``d_j = w_j · [x_j ≠ y_j]``: 0 for the same category, ``w_j`` otherwise.

Weighting (the choice this module makes): every quasi-identifier weighs the same. Its
scale is set so that its total sum of squares, ``SST_j = Σ_i d_j(x_ij, a_j)²`` with
``a_j`` the attribute's aggregate over the whole table (mean, median category or mode,
as in :func:`group_aggregate_codes`), equals n, which is what a z-scored numeric
attribute has:

    ``c_j² = n / Σ_i (r_i − r_median)²``        ``w_j² = n / #{i : x_ij ≠ mode_j}``

So SST = n·d as before and IL = 100·SSE/SST keeps its meaning: 100 % is releasing one
value per attribute for the whole table. A column with a single category is constant
and refused, as a constant numeric column is.

The embedding
-------------
numeric → its z-score (one column); ordinal → ``c_j · r`` (one column); nominal → one
indicator column per category, times ``w_j / √2`` (two different categories are then
``w_j`` apart). The Euclidean distance between two rows of ``X`` equals ``D`` exactly.
With only numeric quasi-identifiers ``X`` is bit for bit the z-scored matrix of
:func:`core.data.prepare.standardize`.

SSE of a release is ``Σ_i D(x_i, x′_i)²`` between every original record and its
released one. For numeric attributes, released as group means, this is the within-group
sum of squares of before; for categorical ones it counts the distance to the released
category (the partition methods minimise the within-group sum of squares of ``X``,
which for a nominal attribute is the Gini impurity of its groups: a close proxy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.data.categories import group_aggregate_codes
from core.data.memory import check_run_memory
from core.data.prepare import centred_and_std, constant_columns, numeric_matrix
from core.data.roles import Level, RoleSpec, is_number_column, mostly_numbers_but

__all__ = ["AttributeCoding", "Encoding", "encode", "resolve_level"]


@dataclass(frozen=True)
class AttributeCoding:
    """How one quasi-identifier is measured.

    Attributes
    ----------
    name : str
    level : Level
    columns : slice
        Its columns in ``X``.
    categories : ndarray or None
        Ordinal: the order, lowest first; nominal: the distinct values, sorted. The
        position in this array is the category's code.
    mean, std : float
        Numeric only: the z-score parameters.
    scale : float
        Ordinal ``c_j``; nominal ``w_j`` (the distance between two categories).
    """

    name: str
    level: Level
    columns: slice
    categories: np.ndarray | None = field(default=None, repr=False)
    mean: float = 0.0
    std: float = 1.0
    scale: float = 1.0

    @property
    def categorical(self) -> bool:
        return self.level is not Level.NUMERIC

    def codes(self, series: pd.Series) -> np.ndarray:
        """Category code of every value (−1 for a value outside the categories)."""
        return _codes(series, self.categories)


@dataclass(frozen=True)
class Encoding:
    """The quasi-identifiers of a table, measured.

    Attributes
    ----------
    X : ndarray of shape (n_records, n_columns)
        The embedding (module notes); ``n_columns ≥ n_quasi_identifiers``.
    values : ndarray of shape (n_records, n_quasi_identifiers)
        Numeric attributes in their own units, categorical ones as category codes.
    attributes : tuple of AttributeCoding
        In quasi-identifier order.
    """

    X: np.ndarray
    values: np.ndarray
    attributes: tuple[AttributeCoding, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes)

    @property
    def levels(self) -> dict[str, Level]:
        return {a.name: a.level for a in self.attributes}

    @property
    def numeric(self) -> bool:
        """True when every quasi-identifier is numeric."""
        return all(not a.categorical for a in self.attributes)

    @property
    def constant(self) -> tuple[str, ...]:
        """The quasi-identifiers with a single value (they carry no information)."""
        if not len(self.values):
            return ()
        same = constant_columns(self.values)  # every value equal to the first
        return tuple(a.name for j, a in enumerate(self.attributes) if same[j])

    def total_sum_of_squares(self) -> float:
        """SST: Σ z² of the numeric attributes plus n per varying categorical one.

        Computed once per encoding (the measures and the verifier both ask; an encoding's
        arrays are not changed once it is made)."""
        return self._total_sum_of_squares

    @cached_property
    def _total_sum_of_squares(self) -> float:
        numeric = self.columns_of([a.name for a in self.attributes if not a.categorical])
        varying = sum(a.categorical and a.name not in self.constant for a in self.attributes)
        Z = self.X[:, numeric]  # a copy in Fortran order: its sum is the published one
        return float(np.einsum("ij,ij->", Z, Z)) + len(self.X) * varying

    def attribute(self, name: str) -> AttributeCoding:
        for a in self.attributes:
            if a.name == name:
                return a
        raise KeyError(name)

    def columns_of(self, names: Sequence[str]) -> list[int]:
        """The columns of ``X`` that hold the attributes ``names``."""
        out: list[int] = []
        for name in names:
            s = self.attribute(name).columns
            out.extend(range(s.start, s.stop))
        return out

    def values_of(self, table: pd.DataFrame) -> tuple[np.ndarray, dict[str, int]]:
        """``table``'s quasi-identifiers measured like the original's.

        Returns the values matrix (n × d; codes for categorical attributes, −1 for a
        category the original does not have) and, per categorical column, how many
        values were outside the original categories.
        """
        if self.numeric:  # the numeric matrix itself, in quasi-identifier order
            return numeric_matrix(table, list(self.names)), {}
        out = np.empty((len(table), len(self.attributes)), dtype=np.float64)
        unknown: dict[str, int] = {}
        numeric = [a for a in self.attributes if not a.categorical]
        if numeric:
            raw = numeric_matrix(table, [a.name for a in numeric])
            for j, a in enumerate(numeric):
                out[:, self.attributes.index(a)] = raw[:, j]
        for j, a in enumerate(self.attributes):
            if a.categorical:
                codes = a.codes(table[a.name])
                out[:, j] = codes
                if (codes < 0).any():
                    unknown[a.name] = int((codes < 0).sum())
        return out, unknown

    def squared_distances(self, values: np.ndarray, other: np.ndarray | None = None
                          ) -> np.ndarray:
        """``d_j(x_ij, y_ij)²`` for every record and attribute, shape (n, d).

        ``values`` and ``other`` are values matrices (:meth:`values_of`); ``other``
        defaults to the original's. A code of −1 (a category the original lacks) counts
        as the largest distance of its attribute.
        """
        other = self.values if other is None else other
        if self.numeric and values.ndim == 2 and values.shape == other.shape:
            # The loop's operations on whole rows at once: the same entries.
            # ((values − other) / std)², each step in place: one array of n × d held.
            out = np.subtract(values, other, dtype=np.float64)
            np.divide(out, np.array([a.std for a in self.attributes]), out=out)
            return np.square(out, out=out)
        out = np.empty(values.shape, dtype=np.float64)
        for j, a in enumerate(self.attributes):
            x, y = values[:, j], other[:, j]
            if a.level is Level.NUMERIC:
                out[:, j] = ((x - y) / a.std) ** 2
            elif a.level is Level.ORDINAL:
                steps = np.abs(x - y)
                steps[(x < 0) | (y < 0)] = len(a.categories) - 1
                out[:, j] = (a.scale * steps) ** 2
            else:
                out[:, j] = np.where(x != y, a.scale ** 2, 0.0)
        return out

    def embed(self, values: np.ndarray) -> np.ndarray:
        """The embedding of a values matrix (codes of −1 embed as no category)."""
        n = len(values)
        width = self.attributes[-1].columns.stop if self.attributes else 0
        if self.attributes and self.numeric and values.shape == (n, width):
            # Every entry by the same two operations as the loop below, in one pass each.
            Z = np.empty((n, width), dtype=np.float64)
            np.subtract(values, np.array([a.mean for a in self.attributes]), out=Z)
            return np.divide(Z, np.array([a.std for a in self.attributes]), out=Z)
        Z = np.zeros((n, width), dtype=np.float64)
        for j, a in enumerate(self.attributes):
            s = a.columns
            if a.level is Level.NUMERIC:
                Z[:, s.start] = (values[:, j] - a.mean) / a.std
            elif a.level is Level.ORDINAL:
                Z[:, s.start] = a.scale * values[:, j]
            else:
                codes = values[:, j].astype(np.int64)
                rows = np.flatnonzero(codes >= 0)
                Z[rows, s.start + codes[rows]] = a.scale / math.sqrt(2.0)
        return Z


def resolve_level(table: pd.DataFrame, roles: RoleSpec, column: str) -> Level:
    """The measurement level of quasi-identifier ``column``: declared, or its default.

    Default: numeric for a column of numbers, nominal otherwise (text, booleans,
    categoricals such as Stata value labels).
    """
    declared = roles.level_of(column)
    if declared is not None:
        return declared
    series = table[column]
    if is_number_column(series):
        return Level.NUMERIC
    if not isinstance(series.dtype, pd.CategoricalDtype) and \
            not pd.api.types.is_bool_dtype(series):
        # A column of numbers with a stray text value ("unknown") must not silently
        # become a nominal attribute of a hundred categories. Text that is all numbers
        # (postal codes kept as "01234") is a deliberate choice of categories: nominal.
        found = mostly_numbers_but(series)
        if found is not None:
            raise MicroaggError(
                f"Quasi-identifier '{column}' is not numeric (data row {found[0]}: "
                f"{found[1]!r}), though most of its values are numbers. "
                "Correct or recode the value, or declare the column nominal or ordinal "
                "if it holds categories.")
    return Level.NOMINAL


def encode(table: pd.DataFrame, roles: RoleSpec, *, strict: bool = True,
           run: tuple = (None, None)) -> Encoding:
    """Measure the quasi-identifiers of ``table`` (module notes).

    Parameters
    ----------
    table : DataFrame
        Never modified.
    roles : RoleSpec
        The quasi-identifiers, their declared levels and ordinal orders.
    strict : bool
        Refuse a constant quasi-identifier (before a run). The measures and the
        verifier, which must describe any table, pass False: a constant attribute then
        gets scale 1 (it adds nothing to SSE and n to SST).
    run : (method, refinement[, base method])
        What the embedding is for, as the memory check counts it
        (:func:`core.data.memory.check_run_memory`): a run that would not fit in memory
        is refused before the embedding of its nominal attributes is made (numeric
        ones are standardized first: the check needs every attribute's width).

    Returns
    -------
    Encoding

    Raises
    ------
    MicroaggError
        A missing or infinite value, a constant column, a value outside a declared
        order (the message names the column and the first data row); a run that would
        not fit in memory.

    Examples
    --------
    >>> t = pd.DataFrame({"age": [20, 30, 40, 50], "sex": ["F", "M", "F", "F"]})
    >>> e = encode(t, RoleSpec(quasi_identifiers=("age", "sex")))
    >>> e.X.shape, [a.level.value for a in e.attributes]
    ((4, 3), ['numeric', 'nominal'])
    >>> float(e.squared_distances(e.values)[:, 1].sum() + 4)  # SST_sex = n
    4.0
    """
    qi = list(roles.quasi_identifiers)
    n = len(table)
    levels = {c: resolve_level(table, roles, c) for c in qi}
    numeric = [c for c in qi if levels[c] is Level.NUMERIC]
    values = np.empty((n, len(qi)), dtype=np.float64)
    stats: dict[str, tuple[float, float]] = {}
    if numeric:
        # The same operations as core.prepare.standardize, so numeric files give
        # exactly the same X (and published figures) as before.
        raw = numeric_matrix(table, numeric)
        mean, centred, std = centred_and_std(raw)
        # = raw.min(axis=0) == raw.max(axis=0): the values are finite (numeric_matrix)
        constant = constant_columns(raw) if strict else None
        for j, column in enumerate(numeric):
            if strict and (not std[j] > 0 or constant[j]):
                raise MicroaggError(
                    f"Column '{column}' is constant (every value is {raw[0, j]:g}), so it "
                    "carries no information to protect. Give it the non-confidential role.")
        if not strict:
            std = np.where(std > 0, std, 1.0)
        Z = np.divide(centred, std, out=centred)  # = (raw − mean) / std
        if len(numeric) == len(qi):  # raw holds the quasi-identifiers in order
            values = raw
        for j, column in enumerate(numeric):
            if values is not raw:
                values[:, qi.index(column)] = raw[:, j]
            stats[column] = (float(mean[j]), float(std[j]))
    attributes = []
    codes_of: dict[str, np.ndarray] = {}
    start = 0
    for j, column in enumerate(qi):
        level = levels[column]
        if level is Level.NUMERIC:
            attributes.append(AttributeCoding(column, level, slice(start, start + 1),
                                              mean=stats[column][0], std=stats[column][1]))
            start += 1
            continue
        series = table[column]
        categories = _categories(series, level, roles.order_of(column))
        codes = _codes(series, categories)
        _check_codes(series, codes, column, level, roles.order_of(column) is not None)
        values[:, j] = codes
        present = np.unique(codes)
        if present.size < 2 and strict:
            raise MicroaggError(
                f"Column '{column}' is constant (every value is {series.iloc[0]!r}), so "
                "it carries no information to protect. Give it the non-confidential role.")
        global_code = group_aggregate_codes(codes, np.zeros(n, dtype=np.int64), level,
                                            len(categories))[0]
        if level is Level.ORDINAL:
            spread = float(((codes - global_code) ** 2).sum())
            scale = math.sqrt(n / spread) if spread > 0 else 1.0
            width = 1
        else:
            differ = int((codes != global_code).sum())
            scale = math.sqrt(n / differ) if differ else 1.0
            width = len(categories)
        codes_of[column] = codes
        attributes.append(AttributeCoding(column, level, slice(start, start + width),
                                          categories=categories, scale=scale))
        start += width
    check_run_memory(attributes, n, start, *run, kept=len(roles.kept(table.columns)))
    if len(numeric) == len(qi):
        X = Z
    else:
        # Written into X directly (a block per attribute copied in afterwards held the
        # embedding twice).
        X = np.zeros((n, start), dtype=np.float64)
        for a in attributes:
            if a.level is Level.NUMERIC:
                X[:, a.columns.start] = Z[:, numeric.index(a.name)]
            elif a.level is Level.ORDINAL:
                X[:, a.columns.start] = a.scale * codes_of[a.name].astype(np.float64)
            else:
                X[np.arange(n), a.columns.start + codes_of[a.name]] = a.scale / math.sqrt(2.0)
    return Encoding(X=X, values=values, attributes=tuple(attributes))


def _categories(series: pd.Series, level: Level, order) -> np.ndarray:
    if order is not None:
        return _given_order(series, order)
    if isinstance(series.dtype, pd.CategoricalDtype):
        return np.asarray(series.cat.categories, dtype=object)
    distinct = pd.unique(series.dropna())
    try:
        ordered = sorted(distinct)
    except TypeError:
        ordered = sorted(distinct, key=str)
    return np.asarray(ordered, dtype=object)


def _given_order(series: pd.Series, order) -> np.ndarray:
    """The user's order matched to the column's values: by value in a column of
    numbers (the order's "2.0", "2" and 2 are 2), by text in any other."""
    column, order = series.name, list(order)
    numbers = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    keys = [_order_key(v, numbers) for v in order]
    if len(set(keys)) != len(keys):
        repeated = next(v for i, (v, key) in enumerate(zip(order, keys)) if key in keys[:i])
        raise MicroaggError(f"The order given for '{column}' lists '{repeated}' twice "
                            "(as the same value); name every category once.")
    by_key = {}
    for value in pd.unique(series.dropna()):
        by_key.setdefault(_order_key(value, numbers), value)
    return np.asarray([by_key.get(key, v) for v, key in zip(order, keys)], dtype=object)


def _order_key(value, numbers: bool):
    """What an order's entry and a column's value are matched on."""
    value = value.item() if isinstance(value, np.generic) else value
    if numbers and not isinstance(value, bool):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _codes(series: pd.Series, categories: np.ndarray) -> np.ndarray:
    """Each value's place in ``categories`` (−1 outside them or missing), each distinct
    value looked up once as the object the column holds (the codes of every row's)."""
    rows, distinct = pd.factorize(series, use_na_sentinel=True)
    index = pd.Index(categories, dtype=object)
    places = index.get_indexer(pd.Index(np.asarray(distinct, dtype=object), dtype=object))
    return np.append(np.asarray(places, dtype=np.int64), -1)[rows]  # −1 for missing


def _check_codes(series: pd.Series, codes: np.ndarray, column: str, level: Level,
                 given: bool) -> None:
    missing = series.isna().to_numpy()
    if missing.any():
        rows = np.flatnonzero(missing)
        raise MicroaggError(
            f"Column '{column}' has {rows.size} missing value(s) (first at data row "
            f"{rows[0] + 1}). Impute or remove those rows, or give the column another role.")
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        value = series.iloc[[bad[0]]].tolist()[0]  # a Python value: 2.0, not np.float64
        raise MicroaggError(
            f"Column '{column}' has the value {value!r} (data row "
            f"{bad[0] + 1}), which is not in the {level.value} order given for it"
            + (". Add it to the order, or correct the value." if given else "."))

