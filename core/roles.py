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
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import MicroaggError

__all__ = ["Role", "RoleSpec"]


class Role(str, enum.Enum):
    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    CONFIDENTIAL = "confidential"
    NON_CONFIDENTIAL = "non-confidential"


@dataclass(frozen=True)
class RoleSpec:
    """Which column plays which role. Immutable; columns not named are non-confidential.

    Parameters
    ----------
    quasi_identifiers, confidential, identifiers, non_confidential : tuple of str
        Column names. A column may appear in one list only.
    strata : tuple of str
        Stratum columns (any role but quasi-identifier; usually non-confidential).

    Examples
    --------
    >>> spec = RoleSpec(quasi_identifiers=("age", "income"), identifiers=("name",))
    >>> spec.role_of("age")
    <Role.QUASI_IDENTIFIER: 'quasi-identifier'>
    """

    quasi_identifiers: tuple[str, ...] = ()
    confidential: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    non_confidential: tuple[str, ...] = ()
    strata: tuple[str, ...] = field(default=())

    def __post_init__(self):
        for name in ("quasi_identifiers", "confidential", "identifiers",
                     "non_confidential", "strata"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(str(v) for v in value))

    @classmethod
    def from_mapping(cls, roles: Mapping[str, Role | str], strata: Iterable[str] = ()):
        """Build from ``{column: role}``; roles may be :class:`Role` or their string value."""
        lists: dict[Role, list[str]] = {role: [] for role in Role}
        for column, role in roles.items():
            try:
                lists[Role(role)].append(column)
            except ValueError:
                allowed = ", ".join(r.value for r in Role)
                raise MicroaggError(
                    f"Column '{column}': unknown role '{role}'. Use one of: {allowed}."
                ) from None
        return cls(
            quasi_identifiers=tuple(lists[Role.QUASI_IDENTIFIER]),
            confidential=tuple(lists[Role.CONFIDENTIAL]),
            identifiers=tuple(lists[Role.IDENTIFIER]),
            non_confidential=tuple(lists[Role.NON_CONFIDENTIAL]),
            strata=tuple(strata),
        )

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

    def validate(self, table: pd.DataFrame, *, numeric_qi: bool = True) -> None:
        """Check the specification against ``table``; raise :class:`MicroaggError` if wrong.

        Checks: every named column exists; no column has two roles; at least one
        quasi-identifier; with ``numeric_qi`` every quasi-identifier is numeric;
        no stratum column is a quasi-identifier.
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
        if not self.quasi_identifiers:
            raise MicroaggError(
                "No quasi-identifier chosen. Mark at least one column as quasi-identifier."
            )
        if numeric_qi:
            for column in self.quasi_identifiers:
                if not pd.api.types.is_numeric_dtype(table[column]) or \
                        pd.api.types.is_bool_dtype(table[column]):
                    found = _first_non_numeric(table[column])
                    where = (f" (data row {found[0]}: {found[1]!r})" if found is not None
                             else "")
                    raise MicroaggError(
                        f"Quasi-identifier '{column}' is not numeric{where}. This method "
                        "needs numeric quasi-identifiers: correct or recode the column, "
                        "or give it another role."
                    )


def _short_list(names: list[str], limit: int = 12) -> str:
    shown = ", ".join(f"'{n}'" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _first_non_numeric(series: pd.Series):
    """(1-based data row, value) of the first value that is not a number, or None."""
    converted = pd.to_numeric(series, errors="coerce")
    bad = np.flatnonzero((converted.isna() & series.notna()).to_numpy())
    return None if bad.size == 0 else (int(bad[0]) + 1, series.iloc[bad[0]])
