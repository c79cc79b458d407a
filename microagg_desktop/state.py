"""Plain view state of the main window: no Qt here, so it is tested without a display.

Following glue's ``viewers/*/state.py``: every option a view shows is held by a small
documented class; the Qt widgets (:mod:`.role_editor`, :mod:`.method_panel`) only bind
to it.

Vocabulary
----------
column kind
    ``"numeric"`` (numbers, usable as a quasi-identifier by numeric methods),
    ``"date"`` or ``"text"`` (everything else, booleans included).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from core import Role, RoleSpec
from core.registry import get_method, methods

__all__ = [
    "STRATUM", "ColumnInfo", "describe_column", "default_role", "SAMPLE_ROLES", "RoleState",
    "MethodState", "format_number",
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
    """The columns of a table and the role chosen for each.

    Parameters
    ----------
    table : DataFrame
        Only read, once, to describe its columns.
    roles : mapping of str to Role or str, optional
        Roles to preset; columns not named get :func:`default_role`.
    """

    def __init__(self, table: pd.DataFrame | None = None,
                 roles: Mapping[str, Role | str] | None = None):
        self.columns: list[ColumnInfo] = []
        self._roles: dict[str, Role] = {}
        self.strata: list[str] = []
        if table is not None:
            self.columns = [describe_column(name, table[name]) for name in table.columns]
            self._roles = {c.name: default_role(c.name) for c in self.columns}
            for column, role in (roles or {}).items():
                if column in self._roles:
                    self.set_choice(column, role.value if isinstance(role, Role) else role)

    def role(self, column: str) -> Role:
        """The role of ``column`` (a stratum column is non-confidential)."""
        return self._roles[column]

    def choice(self, column: str) -> str:
        """What the drop-down shows: a role's value, or :data:`STRATUM`."""
        return STRATUM if column in self.strata else self._roles[column].value

    def set_choice(self, column: str, choice: str) -> None:
        """Set a role by its value, or make ``column`` a stratum with :data:`STRATUM`."""
        if choice == STRATUM:
            if column not in self._roles:
                raise KeyError(f"Column '{column}' is not in the table.")
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
        if column not in self._roles:
            raise KeyError(f"Column '{column}' is not in the table.")
        self._roles[column] = Role(role)
        if column in self.strata:
            self.strata.remove(column)

    def roles(self) -> RoleSpec:
        """The role specification, columns in table order; stratum columns as strata."""
        order = [c.name for c in self.columns]
        return RoleSpec.from_mapping({name: self._roles[name] for name in order},
                                     strata=[c for c in order if c in self.strata])


class MethodState:
    """The chosen registry method and its parameter values (defaults until changed).

    Nothing here names a particular method: everything comes from :func:`core.methods`.
    """

    def __init__(self, method: str | None = None):
        self.method = ""
        self.values: dict[str, Any] = {}
        self.set_method(method or methods()[0].name)

    def set_method(self, name: str) -> None:
        """Choose a method; its parameters go back to their defaults."""
        spec = get_method(name)
        self.method = spec.name
        self.values = {p.name: p.default for p in spec.parameters}

    def set_value(self, name: str, value: Any) -> None:
        """Set one parameter; raise ``KeyError`` if the method has no such parameter."""
        if name not in self.values:
            raise KeyError(f"Method '{self.method}' has no parameter '{name}'.")
        self.values[name] = value

    def parameters(self) -> dict[str, Any]:
        """The parameter values, checked and converted by the registry.

        Raises
        ------
        core.MicroaggError
            A value is outside its parameter's constraint.
        """
        return get_method(self.method).resolve(self.values)
