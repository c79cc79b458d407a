"""Column roles and the frozen role specification.

Vocabulary
----------
identifier
    Directly identifies a person (name, ID number). Dropped from the output by default.
quasi-identifier (QI)
    Known to an intruder and linkable to outside sources (age, income). Microaggregated.
confidential
    The sensitive attribute the release protects (a tax amount, a diagnosis). Kept as is
    by k-anonymity methods; t-closeness methods bound its distribution per class.
non-confidential
    Everything else. Kept as is.
strata
    Optional grouping columns: records are only grouped with records of the same stratum.
measurement level
    How a quasi-identifier is compared and aggregated (:class:`Level`): ``numeric``
    (numbers; z-scored, aggregated by the mean), ``ordinal`` (ordered categories, such as
    education; rank distance, aggregated by the median category) or ``nominal``
    (unordered categories, such as sex or region; 0/1 distance, aggregated by the mode).
    A quasi-identifier without a declared level is numeric if its column holds numbers
    and nominal otherwise. :mod:`core.data.encoding` defines the distances.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import MicroaggError

__all__ = ["Role", "Level", "RoleSpec"]


class Role(str, enum.Enum):
    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    CONFIDENTIAL = "confidential"
    NON_CONFIDENTIAL = "non-confidential"


class Level(str, enum.Enum):
    """Measurement level of a quasi-identifier."""

    NUMERIC = "numeric"
    ORDINAL = "ordinal"
    NOMINAL = "nominal"


@dataclass(frozen=True)
class RoleSpec:
    """Which column plays which role. Immutable; columns not named are non-confidential.

    Parameters
    ----------
    quasi_identifiers, confidential, identifiers, non_confidential : tuple of str
        Column names. A column may appear in one list only.
    strata : tuple of str
        Stratum columns (any role but quasi-identifier; usually non-confidential).
    levels : mapping of str to Level or str
        Declared measurement level of quasi-identifiers; the others get their default
        (numeric for a column of numbers, nominal otherwise). Stored as sorted pairs.
    orders : mapping of str to sequence
        The category order of an ordinal quasi-identifier, lowest first. Without one, an
        ordinal column is ordered by its categorical dtype's categories (Stata value
        labels), else by sorting its distinct values.

    Examples
    --------
    >>> spec = RoleSpec(quasi_identifiers=("age", "income"), identifiers=("name",))
    >>> spec.role_of("age")
    <Role.QUASI_IDENTIFIER: 'quasi-identifier'>
    >>> RoleSpec(quasi_identifiers=("age", "grade"), levels={"grade": "ordinal"},
    ...          orders={"grade": ("low", "mid", "high")}).order_of("grade")
    ('low', 'mid', 'high')
    """

    quasi_identifiers: tuple[str, ...] = ()
    confidential: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    non_confidential: tuple[str, ...] = ()
    strata: tuple[str, ...] = field(default=())
    levels: tuple[tuple[str, Level], ...] = field(default=())
    orders: tuple[tuple[str, tuple], ...] = field(default=())

    def __post_init__(self):
        for name in ("quasi_identifiers", "confidential", "identifiers",
                     "non_confidential", "strata"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(str(v) for v in value))
        levels = dict(self.levels.items() if isinstance(self.levels, Mapping)
                      else self.levels)
        checked = {}
        for column, level in levels.items():
            try:
                checked[str(column)] = Level(level)
            except ValueError:
                allowed = ", ".join(lv.value for lv in Level)
                raise MicroaggError(f"Column '{column}': unknown measurement level "
                                    f"'{level}'. Use one of: {allowed}.") from None
        orders = dict(self.orders.items() if isinstance(self.orders, Mapping)
                      else self.orders)
        for column, order in orders.items():
            if checked.setdefault(str(column), Level.ORDINAL) is not Level.ORDINAL:
                raise MicroaggError(f"Column '{column}' has a category order but is "
                                    f"declared {checked[str(column)].value}; an order is "
                                    "for ordinal columns only.")
        object.__setattr__(self, "levels", tuple(sorted(checked.items())))
        object.__setattr__(self, "orders", tuple(sorted(
            (str(c), tuple(o)) for c, o in orders.items() if o is not None)))

    def level_of(self, column: str) -> Level | None:
        """The declared measurement level of ``column``, or None (the default applies)."""
        return dict(self.levels).get(column)

    @property
    def confidential_kinds(self) -> dict[str, str] | None:
        """The distance of each confidential column with a declared level, for
        :func:`core.privacy.attributes.tclose_attributes`: "nominal" (equal distance,
        codes without an order) or "numerical" (ordered distance); the others take the
        default, ordered for numbers and equal for anything else. None when none is
        declared. The t-closeness methods, the verifier and the measures all take it,
        so a release is built, verified and measured with the same distance.

        Examples
        --------
        >>> RoleSpec(quasi_identifiers=("age",), confidential=("dx", "pay"),
        ...          levels={"dx": "nominal"}).confidential_kinds
        {'dx': 'nominal'}
        """
        kinds = {column: "nominal" if level is Level.NOMINAL else "numerical"
                 for column, level in self.levels if column in self.confidential}
        return kinds or None

    def order_of(self, column: str) -> tuple | None:
        """The declared category order of an ordinal column, lowest first, or None."""
        return dict(self.orders).get(column)

    @classmethod
    def from_mapping(cls, roles: Mapping[str, Role | str], strata: Iterable[str] = (), *,
                     levels: Mapping[str, Level | str] | None = None,
                     orders: Mapping[str, tuple] | None = None):
        """Build from ``{column: role}``; roles may be :class:`Role` or their string value.

        ``levels`` are kept for the quasi-identifiers and the confidential columns (their
        distance, :attr:`confidential_kinds`), ``orders`` for the quasi-identifiers only.
        """
        lists: dict[Role, list[str]] = {role: [] for role in Role}
        for column, role in roles.items():
            try:
                lists[Role(role)].append(column)
            except ValueError:
                allowed = ", ".join(r.value for r in Role)
                raise MicroaggError(
                    f"Column '{column}': unknown role '{role}'. Use one of: {allowed}."
                ) from None
        qi = set(lists[Role.QUASI_IDENTIFIER])
        return cls(
            quasi_identifiers=tuple(lists[Role.QUASI_IDENTIFIER]),
            confidential=tuple(lists[Role.CONFIDENTIAL]),
            identifiers=tuple(lists[Role.IDENTIFIER]),
            non_confidential=tuple(lists[Role.NON_CONFIDENTIAL]),
            strata=tuple(strata),
            levels={c: v for c, v in (levels or {}).items()
                    if c in qi or c in set(lists[Role.CONFIDENTIAL])},
            orders={c: v for c, v in (orders or {}).items() if c in qi},
        )

    def kept(self, columns) -> list[str]:
        """Those of ``columns`` released as they are: neither identifiers, quasi-
        identifiers nor strata (the confidential and non-confidential columns, and any
        without a role)."""
        taken = {*self.identifiers, *self.quasi_identifiers, *self.strata}
        return [c for c in columns if c not in taken]

    def as_mapping(self) -> dict[str, Role]:
        mapping: dict[str, Role] = {}
        for role, columns in self._lists():
            for column in columns:
                mapping[column] = role
        return mapping

    def _lists(self):
        return (
            (Role.QUASI_IDENTIFIER, self.quasi_identifiers),
            (Role.CONFIDENTIAL, self.confidential),
            (Role.IDENTIFIER, self.identifiers),
            (Role.NON_CONFIDENTIAL, self.non_confidential),
        )

    def role_of(self, column: str) -> Role:
        return self.as_mapping().get(column, Role.NON_CONFIDENTIAL)

    def validate(self, table: pd.DataFrame, *, numeric_qi: bool = False) -> None:
        """Check the specification against ``table``; raise :class:`MicroaggError` if wrong.

        Checks: every named column exists; no column has two roles; at least one
        quasi-identifier; no stratum column is a quasi-identifier, an identifier or
        confidential; measurement levels
        name quasi-identifiers only; a quasi-identifier declared numeric holds numbers
        (with ``numeric_qi``, so must every quasi-identifier without a declared level).
        """
        columns = [str(c) for c in table.columns]
        seen: dict[str, Role] = {}
        for role, names in self._lists():
            for column in names:
                if column not in columns:
                    raise MicroaggError(
                        f"Column '{column}' (given as {role.value}) is not in the table. "
                        f"The table has: {_short_list(columns)}."
                    )
                if column in seen:
                    raise MicroaggError(
                        f"Column '{column}' has two roles ({seen[column].value} and "
                        f"{role.value}). Give each column one role."
                    )
                seen[column] = role
        for column in self.strata:
            if column not in columns:
                raise MicroaggError(
                    f"Stratum column '{column}' is not in the table. "
                    f"The table has: {_short_list(columns)}."
                )
            if column in self.quasi_identifiers:
                raise MicroaggError(
                    f"Column '{column}' cannot be both a stratum and a quasi-identifier."
                )
            if column in self.identifiers:
                raise MicroaggError(
                    f"Column '{column}' is both a stratum, released as it is, and an "
                    "identifier, dropped from the release. Give it one of the two roles.")
            if column in self.confidential:
                raise MicroaggError(
                    f"Column '{column}' cannot be both a stratum and confidential: a "
                    "stratum is released as it is and no group mixes its values, so every "
                    "class would disclose it. Make it non-confidential to stratify by it, "
                    "or choose another stratum.")
        if not self.quasi_identifiers:
            raise MicroaggError(
                "No quasi-identifier chosen. Mark at least one column as quasi-identifier."
            )
        for column, level in self.levels:
            if column in self.confidential:
                if level is Level.ORDINAL:
                    raise MicroaggError(
                        f"Confidential column '{column}' is declared ordinal. Declare it "
                        "numeric (ordered distance between its values) or nominal (equal "
                        "distance: codes without an order).")
                if level is Level.NUMERIC and not is_number_column(table[column]):
                    raise MicroaggError(
                        f"Confidential column '{column}' is declared numeric but is not "
                        "numeric. Declare it nominal, or correct the column.")
            elif column not in self.quasi_identifiers:
                raise MicroaggError(
                    f"Column '{column}' is declared {level.value}, but it is neither a "
                    "quasi-identifier nor a confidential column; measurement levels are "
                    "for those.")
        for column in self.quasi_identifiers:
            if self.level_of(column) is Level.NUMERIC or (
                    numeric_qi and self.level_of(column) is None):
                if not is_number_column(table[column]):
                    found = _first_non_numeric(table[column])
                    where = (f" (data row {found[0]}: {found[1]!r})" if found is not None
                             else "")
                    raise MicroaggError(
                        f"Quasi-identifier '{column}' is not numeric{where}. Correct or "
                        "recode the column, declare it ordinal or nominal, or give it "
                        "another role."
                    )


def _short_list(names: list[str], limit: int = 12) -> str:
    shown = ", ".join(f"'{n}'" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def is_number_column(series: pd.Series) -> bool:
    """True for a column of numbers (booleans and categoricals are not)."""
    return pd.api.types.is_numeric_dtype(series) and \
        not pd.api.types.is_bool_dtype(series) and \
        not isinstance(series.dtype, pd.CategoricalDtype)


def mostly_numbers_but(series: pd.Series):
    """(1-based data row, value) of the first value of ``series`` that is not a number
    when more than half of its values (missing ones aside) are numbers; None otherwise.

    Each distinct value is parsed once (``pandas.to_numeric`` on the categories, then
    counted over the rows by their codes): a column of a few categories over a million
    rows costs a factorization, not a million parses. The answer is that of parsing
    every value (``to_numeric`` parses each value alone; equal values parse alike).
    """
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    present = codes >= 0
    if not present.any():
        return None
    number = pd.to_numeric(pd.Series(np.asarray(uniques, dtype=object), dtype=object),
                           errors="coerce").notna().to_numpy()
    counts = np.bincount(codes[present], minlength=len(uniques))
    numbers = int(counts[number].sum())
    total = int(present.sum())
    if numbers == total or not numbers / total > 0.5:
        return None
    first = int(np.flatnonzero(present & ~number[np.maximum(codes, 0)])[0])
    return first + 1, series.iloc[first]


def _first_non_numeric(series: pd.Series):
    """(1-based data row, value) of the first value that is not a number, or None."""
    converted = pd.to_numeric(series, errors="coerce")
    bad = np.flatnonzero((converted.isna() & series.notna()).to_numpy())
    return None if bad.size == 0 else (int(bad[0]) + 1, series.iloc[bad[0]])
