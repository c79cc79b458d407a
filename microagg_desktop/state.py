"""Plain view state of the main window: no Qt here, so it is tested without a display.

Following glue's ``viewers/*/state.py``: every option a view shows is held by a small
documented class; the Qt widgets (:mod:`.role_editor`, :mod:`.method_panel`) only bind
to it.

Vocabulary
----------
column kind
    ``"numeric"`` (numbers, usable as a quasi-identifier by numeric methods),
    ``"date"`` or ``"text"`` (everything else, booleans included).
measurement level
    How a quasi-identifier is compared and released (:class:`core.data.roles.Level`):
    numeric, ordinal (ordered categories) or nominal (unordered categories). Every column
    holds one, numeric for a column of numbers and nominal otherwise until the user
    changes it; only the quasi-identifiers' levels reach the :class:`~core.RoleSpec`.
category order
    The categories of an ordinal column, lowest first. Preset to a categorical column's
    categories (Stata value labels), else to the column's sorted distinct values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core import Role, RoleSpec
from core.methods.registry import DEFAULT_METHOD, get_method
from core.data.roles import Level, is_number_column
from microagg_desktop.wizard_state import carry_values, parameter_key

__all__ = [
    "STRATUM", "ColumnInfo", "describe_column", "column_kind", "default_role", "SAMPLE_ROLES",
    "RoleState", "MethodState", "format_number",
]

STRATUM = "stratum"
"""The role editor's extra choice: a column whose values split the records into strata."""

_ID_NAME = re.compile(r"^(id|.+[_ .\-]id|id[_ .\-].+)$", re.IGNORECASE)

SAMPLE_ROLES: dict[str, Role] = {
    "person_id": Role.IDENTIFIER,
    "region": Role.NON_CONFIDENTIAL,
    "age": Role.QUASI_IDENTIFIER,
    "years_education": Role.QUASI_IDENTIFIER,
    "income": Role.QUASI_IDENTIFIER,
    "hours_worked": Role.QUASI_IDENTIFIER,
    "household_size": Role.QUASI_IDENTIFIER,
    "health_spending": Role.CONFIDENTIAL,
    "diagnosis": Role.CONFIDENTIAL,
}
"""Roles preset by *Open sample* for ``resources/sample_survey.csv``."""


def format_number(value: float, significant: int = 6) -> str:
    """Format a float compactly: ``significant`` digits, no exponent for everyday sizes.

    Examples
    --------
    >>> format_number(45.333333333), format_number(1234567.891), format_number(2.0)
    ('45.3333', '1234568', '2')
    """
    if math.isnan(value):
        return "NA"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    size = abs(value)
    if size == 0:
        return "0"
    if 1e-4 <= size < 1e15:
        decimals = max(0, significant - (math.floor(math.log10(size)) + 1))
        text = f"{value:.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:.{significant}g}"


def column_kind(series: pd.Series) -> str:
    """``"numeric"``, ``"date"`` or ``"text"`` (booleans count as text)."""
    if pd.api.types.is_bool_dtype(series):
        return "text"
    if pd.api.types.is_numeric_dtype(series):
        return "numeric"
    if pd.api.types.is_datetime64_any_dtype(series):
        return "date"
    return "text"


@dataclass(frozen=True)
class ColumnInfo:
    """What the role editor shows about one column."""

    name: str
    kind: str
    summary: str


def describe_column(name: str, series: pd.Series) -> ColumnInfo:
    """Kind and a one-line summary of ``series`` (one pass over the column).

    Numeric columns: minimum, mean and maximum. Other columns: the number of distinct
    values and the most frequent one. Missing values are counted in both cases.
    """
    kind = column_kind(series)
    missing = int(series.isna().sum())
    present = len(series) - missing
    if present == 0:
        summary = "all values missing"
    elif kind == "numeric":
        summary = (f"min {format_number(float(series.min()))} · "
                   f"mean {format_number(float(series.mean()), 4)} · "
                   f"max {format_number(float(series.max()))}")
    else:
        counts = series.value_counts(dropna=True, sort=True)
        top, top_count = counts.index[0], int(counts.iloc[0])
        shown = str(top) if len(str(top)) <= 24 else str(top)[:23] + "…"
        summary = f"{len(counts)} distinct · most frequent '{shown}' ({top_count})"
    if missing and present:
        summary += f" · {missing} missing"
    return ColumnInfo(str(name), kind, summary)


def default_role(name: str) -> Role:
    """The role a column gets when a file is opened: identifier if it is named like one.

    Everything else is non-confidential; the user chooses the quasi-identifiers.

    Examples
    --------
    >>> default_role("person_id").value, default_role("ID").value, default_role("idle").value
    ('identifier', 'identifier', 'non-confidential')
    """
    return Role.IDENTIFIER if _ID_NAME.match(str(name).strip()) else Role.NON_CONFIDENTIAL


class RoleState:
    """The columns of a table, the role chosen for each, and each column's level.

    Parameters
    ----------
    table : DataFrame
        Never modified. Described once; kept (not copied) to list a column's categories
        when they are first needed, so a numeric column is never scanned for distinct
        values unless it is made ordinal.
    roles : mapping of str to Role or str, optional
        Roles to preset; columns not named get :func:`default_role`.

    Examples
    --------
    >>> t = pd.DataFrame({"age": [20, 30, 40], "grade": ["mid", "low", "high"]})
    >>> state = RoleState(t, {"age": "quasi-identifier", "grade": "quasi-identifier"})
    >>> state.level("grade").value
    'nominal'
    >>> state.set_level("grade", "ordinal")
    >>> state.order("grade")
    ('high', 'low', 'mid')
    >>> state.set_order("grade", ["low", "mid", "high"])
    >>> state.roles().order_of("grade")
    ('low', 'mid', 'high')
    """

    def __init__(self, table: pd.DataFrame | None = None,
                 roles: Mapping[str, Role | str] | None = None):
        self.columns: list[ColumnInfo] = []
        self._roles: dict[str, Role] = {}
        self.strata: list[str] = []
        self._table = table
        self._numbers: dict[str, bool] = {}
        self._levels: dict[str, Level] = {}
        self._chosen: set[str] = set()  # levels the user declared
        self._orders: dict[str, tuple] = {}
        self._counts: dict[str, pd.Series] = {}
        self._categories: dict[str, tuple] = {}
        self._warnings: dict[str, str | None] = {}
        self._positions: dict[str, int] = {}
        if table is not None:
            self.columns = [describe_column(name, table[name]) for name in table.columns]
            self._roles = {c.name: default_role(c.name) for c in self.columns}
            for position, (info, name) in enumerate(zip(self.columns, table.columns)):
                self._positions[info.name] = position
                self._numbers[info.name] = is_number_column(table[name])
                self._levels[info.name] = (Level.NUMERIC if self._numbers[info.name]
                                           else Level.NOMINAL)
            for column, role in (roles or {}).items():
                if column in self._roles:
                    self.set_choice(column, role.value if isinstance(role, Role) else role)

    @property
    def table(self) -> pd.DataFrame | None:
        """The described table (not a copy), or None."""
        return self._table

    def role(self, column: str) -> Role:
        """The role of ``column`` (a stratum column is non-confidential)."""
        return self._roles[column]

    def choice(self, column: str) -> str:
        """What the drop-down shows: a role's value, or :data:`STRATUM`."""
        return STRATUM if column in self.strata else self._roles[column].value

    def set_choice(self, column: str, choice: str) -> None:
        """Set a role by its value, or make ``column`` a stratum with :data:`STRATUM`."""
        if choice == STRATUM:
            self._check_column(column)
            self._roles[column] = Role.NON_CONFIDENTIAL
            if column not in self.strata:
                self.strata.append(column)
        else:
            self.set_role(column, choice)

    def set_role(self, column: str, role: Role | str) -> None:
        """Give ``column`` a role (a :class:`~core.Role` or its string value).

        Raises
        ------
        KeyError
            ``column`` is not in the table.
        ValueError
            ``role`` is not a role.
        """
        self._check_column(column)
        self._roles[column] = Role(role)
        if column in self.strata:
            self.strata.remove(column)

    # -- measurement levels --------------------------------------------------------------

    def level(self, column: str) -> Level:
        """The measurement level of ``column`` (used when it is a quasi-identifier)."""
        self._check_column(column)
        return self._levels[column]

    def level_choices(self, column: str) -> tuple[Level, ...]:
        """The levels ``column`` can have: numeric only for a column of numbers; for a
        confidential column, its t-closeness distance: numeric (ordered) or nominal
        (equal distance: codes without an order), and none for text, always nominal."""
        self._check_column(column)
        if self._roles[column] is Role.CONFIDENTIAL:
            return (Level.NUMERIC, Level.NOMINAL) if self._numbers[column] else ()
        if self._numbers[column]:
            return (Level.NUMERIC, Level.ORDINAL, Level.NOMINAL)
        return (Level.ORDINAL, Level.NOMINAL)

    def has_level(self, column: str) -> bool:
        """Whether ``column``'s role has a level to choose: a quasi-identifier, or a
        confidential column of numbers (its distance, :meth:`level_choices`)."""
        self._check_column(column)
        return self._roles[column] is Role.QUASI_IDENTIFIER or (
            self._roles[column] is Role.CONFIDENTIAL and self._numbers[column])

    def shown_level(self, column: str) -> Level:
        """The level ``column``'s role uses: its level, but for a confidential column
        nominal only when declared so (ordered otherwise, an ordinal choice made for it as
        a quasi-identifier included)."""
        level = self.level(column)
        if self._roles[column] is Role.CONFIDENTIAL:
            return Level.NOMINAL if level is Level.NOMINAL else Level.NUMERIC
        return level

    def set_level(self, column: str, level: Level | str) -> None:
        """Declare the measurement level of ``column``.

        A category order given before is kept for when the column is ordinal again.

        Raises
        ------
        KeyError
            ``column`` is not in the table.
        ValueError
            ``level`` is not a level, or numeric for a column that does not hold numbers.
        """
        self._check_column(column)
        try:
            level = Level(level)
        except ValueError:
            allowed = ", ".join(lv.value for lv in Level)
            raise ValueError(f"Column '{column}': unknown measurement level '{level}'. "
                             f"Use one of: {allowed}.") from None
        if self._roles[column] is Role.CONFIDENTIAL and level is Level.ORDINAL:
            raise ValueError(f"Confidential column '{column}' is compared by an ordered "
                             "distance (numeric) or an equal one (nominal), not ordinal.")
        if level is Level.NUMERIC and not self._numbers[column]:
            raise ValueError(f"Column '{column}' does not hold numbers, so it cannot be "
                             "numeric. Declare it ordinal (ordered categories) or nominal "
                             "(unordered categories).")
        self._levels[column] = level
        self._chosen.add(column)

    def declared_levels(self) -> dict[str, Level]:
        """The levels the user declared (not the defaults), by column in table order."""
        return {c.name: self._levels[c.name] for c in self.columns if c.name in self._chosen}

    def categories(self, column: str) -> tuple:
        """The preset category order of ``column``, lowest first.

        A categorical column's categories (unused ones included, as the engine orders
        them); otherwise the distinct values without missing values, sorted (by their
        text when they do not compare). Computed on first use, then kept.
        """
        self._check_column(column)
        if column not in self._categories:
            series = self._series(column)
            if isinstance(series.dtype, pd.CategoricalDtype):
                found = tuple(_plain(v) for v in series.cat.categories)
            else:
                distinct = [_plain(v) for v in self._value_counts(column).index]
                try:
                    found = tuple(sorted(distinct))
                except TypeError:
                    found = tuple(sorted(distinct, key=str))
            self._categories[column] = found
        return self._categories[column]

    def order(self, column: str) -> tuple | None:
        """The category order of an ordinal column, lowest first; None if not ordinal."""
        if self.level(column) is not Level.ORDINAL:
            return None
        return self._orders.get(column) or self.categories(column)

    def set_order(self, column: str, values: Iterable) -> None:
        """Give the ordinal column ``column`` a category order, lowest first.

        ``values`` must name every category of the column once (see :meth:`categories`);
        a value matches a category by its text, so ``"3"`` names the number 3.

        Raises
        ------
        KeyError
            ``column`` is not in the table.
        ValueError
            ``column`` is not ordinal, or ``values`` is not a permutation of its categories.
        """
        if self.level(column) is not Level.ORDINAL:
            raise ValueError(f"Column '{column}' is {self._levels[column].value}; declare "
                             "it ordinal before giving it a category order.")
        values = list(values)
        by_text = {_text(v): v for v in self.categories(column)}
        seen: set[str] = set()
        order = []
        for value in values:
            text = _text(value)
            if text in seen:
                raise ValueError(f"The order for '{column}' lists '{text}' twice; name "
                                 "every category once.")
            if text not in by_text:
                raise ValueError(f"The order for '{column}' lists '{text}', which is not a "
                                 f"category of the column. Its categories are: "
                                 f"{_short(list(by_text))}.")
            seen.add(text)
            order.append(by_text[text])
        left_out = [text for text in by_text if text not in seen]
        if left_out:
            raise ValueError(f"The order for '{column}' leaves out {_short(left_out)}; "
                             "name every category of the column once.")
        self._orders[column] = tuple(order)

    def level_warning(self, column: str) -> str | None:
        """A warning when a text column holds mostly (or only) numbers, else None.

        The engine refuses such a quasi-identifier when no level is declared (a stray
        ``"unknown"`` in an income column must not silently make it nominal); the role
        editor declares a level for every quasi-identifier, so it warns instead.
        """
        self._check_column(column)
        if column not in self._warnings:
            self._warnings[column] = self._find_warning(column)
        return self._warnings[column]

    def _find_warning(self, column: str) -> str | None:
        series = self._series(column)
        if self._numbers[column] or isinstance(series.dtype, pd.CategoricalDtype) or \
                pd.api.types.is_bool_dtype(series):
            return None
        counts = self._value_counts(column)
        if counts.empty:
            return None
        as_number = pd.to_numeric(pd.Series(counts.index, dtype=object), errors="coerce")
        numbers = as_number.notna().to_numpy()
        if counts.to_numpy()[numbers].sum() * 2 <= counts.sum():
            return None
        if numbers.all():
            return (f"Every value of '{column}' is a number stored as text, so it is "
                    "treated as categories: right for codes such as postal codes; convert "
                    "the column to numbers if it measures a quantity.")
        first = counts.index[int(np.flatnonzero(~numbers)[0])]
        return (f"Most values of '{column}' are numbers, but some are not (such as "
                f"{first!r}), so it is treated as categories. Correct or recode those "
                "values if the column is numeric.")

    def roles(self) -> RoleSpec:
        """The role specification, columns in table order; stratum columns as strata.

        Every quasi-identifier's level is declared (what the editor shows is what runs),
        a confidential column of numbers declared nominal is (its distance), and every
        ordinal quasi-identifier's order, with one exception: a text column
        that holds mostly numbers and whose level the user has not chosen is left
        undeclared, so the engine refuses it with the row of the stray value instead of
        treating a column of numbers as categories.
        """
        order = [c.name for c in self.columns]
        qi = [name for name in order if self._roles[name] is Role.QUASI_IDENTIFIER]
        codes = {c: Level.NOMINAL for c in order if self._roles[c] is Role.CONFIDENTIAL
                 and self._numbers[c] and c in self._chosen
                 and self._levels[c] is Level.NOMINAL}  # (see level_choices)
        return RoleSpec.from_mapping(
            {name: self._roles[name] for name in order},
            strata=[c for c in order if c in self.strata],
            levels={**{c: self._levels[c] for c in qi
                       if c in self._chosen or self.level_warning(c) is None}, **codes},
            orders={c: self.order(c) for c in qi if self._levels[c] is Level.ORDINAL})

    def _check_column(self, column: str) -> None:
        if column not in self._roles:
            raise KeyError(f"Column '{column}' is not in the table.")

    def _series(self, column: str) -> pd.Series:
        return self._table.iloc[:, self._positions[column]]

    def _value_counts(self, column: str) -> pd.Series:
        if column not in self._counts:
            self._counts[column] = self._series(column).value_counts(dropna=True,
                                                                     sort=False)
        return self._counts[column]


def _plain(value):
    """A numpy scalar as the Python scalar it holds (so orders read as plain values)."""
    return value.item() if isinstance(value, np.generic) else value


def _text(value) -> str:
    """How a category is matched: its text, with 3.0 written as 3 (as the engine does)."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _short(texts: list[str], limit: int = 8) -> str:
    shown = ", ".join(f"'{t}'" for t in texts[:limit])
    return shown + (f" and {len(texts) - limit} more" if len(texts) > limit else "")


class MethodState:
    """The chosen registry method and its parameter values.

    Nothing here names a particular method: everything comes from :func:`core.methods`.
    A value the user set is remembered by parameter (name and label, i.e. meaning) and
    carried to the next method that has the same parameter, when its constraint allows
    it; otherwise that parameter starts at its default and :attr:`notes` says why (see
    :func:`.wizard_state.carry_values`).

    Examples
    --------
    >>> state = MethodState("mdav")
    >>> state.set_value("k", 5)
    >>> state.set_method("cbfs")
    >>> state.values["k"], state.notes
    (5, [])
    """

    def __init__(self, method: str | None = None):
        self.method = ""
        self.values: dict[str, Any] = {}
        self.notes: list[str] = []
        self.remembered: dict[tuple[str, str], Any] = {}
        self.set_method(method or DEFAULT_METHOD)

    def set_method(self, name: str) -> None:
        """Choose a method; remembered values it allows are kept, the others default."""
        spec = get_method(name)
        self.method = spec.name
        self.values, self.notes = carry_values(spec, self.remembered)

    def set_value(self, name: str, value: Any) -> None:
        """Set one parameter; raise ``KeyError`` if the method has no such parameter."""
        if name not in self.values:
            raise KeyError(f"Method '{self.method}' has no parameter '{name}'.")
        self.values[name] = value
        for parameter in get_method(self.method).parameters:
            if parameter.name == name:
                self.remembered[parameter_key(parameter)] = value
        self.notes = [note for note in self.notes if not note.startswith(f"'{name}'")]

    def parameters(self) -> dict[str, Any]:
        """The parameter values, checked and converted by the registry.

        Raises
        ------
        core.MicroaggError
            A value is outside its parameter's constraint.
        """
        return get_method(self.method).resolve(self.values)
