"""Role suggestions from column names and data, each with its reason in words. No Qt.

Nothing here changes a role: the role editor shows the suggestions and the user confirms
them. Three kinds of evidence are used:

identifier
    Every value of the column is different (and it is not a column of measured decimals),
    or its name reads like one (``person_id``, ``ssn``, ``email``...).
named like a quasi-identifier / confidential attribute
    Obvious names (age, sex, region, zip code, occupation, marital status...) suggest a
    quasi-identifier; income- or health-like names suggest a confidential attribute, as
    a suggestion only (an intruder may know someone's income).
determines a quasi-identifier
    A text column whose value fixes the value of a column chosen as quasi-identifier
    (Adult's ``education`` and ``education-num``) would reveal, released as it is, the
    quasi-identifier that microaggregation hid. It should share the quasi-identifier's
    role, or be dropped as an identifier.

Every check is one pass over a column (``pandas.factorize``) or over a pair of columns
(the distinct pairs of codes), so the cost is O(n · columns).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core import Role
from core.data.roles import is_number_column

__all__ = ["Suggestion", "RoleSuggester", "suggest_roles", "name_suggestion",
           "MIN_RECORDS_FOR_DATA"]

MIN_RECORDS_FOR_DATA = 10
"""Below this many records, "all values distinct" says nothing and is not used."""

_ID_TOKENS = {"id", "ids", "ssn", "uuid", "guid", "email", "mail", "phone", "telephone",
              "passport", "name", "surname", "firstname", "lastname", "fullname", "nif",
              "nin", "identifier", "ident"}
_QI_TOKENS = {"age", "sex", "gender", "region", "zip", "zipcode", "postcode", "postal",
              "occupation", "job", "profession", "birth", "birthdate", "birthday", "dob",
              "born", "marital", "race", "ethnicity", "ethnic", "nationality", "country",
              "county", "municipality", "city", "province", "district", "religion",
              "education", "citizenship", "state"}
_QI_STEMS = ("birth", "marit", "occup", "educ", "postc", "zipc", "nation", "ethni")
_CONFIDENTIAL_STEMS = ("income", "salar", "wage", "earning", "health", "diagnos",
                       "disease", "illness", "medic", "treatment", "hiv", "disab",
                       "wealth", "debt", "loan", "pension", "spending", "expenditure",
                       "benefit", "sickness", "crime", "conviction")


@dataclass(frozen=True)
class Suggestion:
    """A suggested role for one column and why.

    Attributes
    ----------
    column : str
    role : Role
        The role suggested.
    reason : str
        One or two plain sentences (the editor's tooltip).
    evidence : str
        ``"data"`` (all values distinct), ``"name"``, or ``"determines"`` (the column
        fixes a quasi-identifier's value; ``related`` names that quasi-identifier).
    related : str or None
    """

    column: str
    role: Role
    reason: str
    evidence: str = "name"
    related: str | None = None

    @property
    def is_warning(self) -> bool:
        """True when ignoring the suggestion would leak a quasi-identifier."""
        return self.evidence == "determines"


def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    return [t for t in re.split(r"[^0-9a-zA-Z]+", spaced.lower()) if t]


def name_suggestion(name: str) -> Suggestion | None:
    """The role a column's name alone suggests, or None.

    Examples
    --------
    >>> name_suggestion("person_id").role.value, name_suggestion("Age").role.value
    ('identifier', 'quasi-identifier')
    >>> name_suggestion("health_spending").role.value, name_suggestion("fnlwgt")
    ('confidential', None)
    """
    tokens = _tokens(name)
    if any(t in _ID_TOKENS for t in tokens):
        return Suggestion(str(name), Role.IDENTIFIER,
                          f"'{name}' is named like an identifier: identifiers are dropped "
                          "from the release.", "name")
    if any(t in _QI_TOKENS or t.startswith(_QI_STEMS) for t in tokens):
        return Suggestion(str(name), Role.QUASI_IDENTIFIER,
                          f"'{name}' is named like an attribute an intruder could know "
                          "about a person (age, sex, place, occupation...): a "
                          "quasi-identifier.", "name")
    if any(t.startswith(_CONFIDENTIAL_STEMS) for t in tokens):
        return Suggestion(str(name), Role.CONFIDENTIAL,
                          f"'{name}' is named like a sensitive attribute (income, health, "
                          "diagnosis...): perhaps confidential. Only a suggestion: make "
                          "it a quasi-identifier if an intruder could know it.", "name")
    return None


class RoleSuggester:
    """Suggestions for the columns of one table; codes are computed once and kept.

    Parameters
    ----------
    table : DataFrame
        Never modified; kept (not copied).

    Examples
    --------
    >>> t = pd.DataFrame({"key": range(12), "grade": list("ab" * 6),
    ...                   "score": [1, 2] * 6})
    >>> s = RoleSuggester(t).suggestions({"score": Role.QUASI_IDENTIFIER})
    >>> s["key"].evidence, s["grade"].related
    ('data', 'score')
    """

    def __init__(self, table: pd.DataFrame):
        self._table = table
        self._codes: dict[int, tuple[np.ndarray, int]] = {}
        self._determines: dict[tuple[int, int], bool] = {}
        self._base: dict[str, Suggestion] = {}
        for position, name in enumerate(table.columns):
            found = self._distinct_suggestion(position) or name_suggestion(name)
            if found is not None:
                self._base[str(name)] = found

    def _series(self, position: int) -> pd.Series:
        return self._table.iloc[:, position]

    def _column_codes(self, position: int) -> tuple[np.ndarray, int]:
        """Integer codes of the column's values (missing is a value) and their count."""
        if position not in self._codes:
            codes, uniques = pd.factorize(self._series(position), use_na_sentinel=False)
            self._codes[position] = (codes.astype(np.int64, copy=False), len(uniques))
        return self._codes[position]

    def _distinct_suggestion(self, position: int) -> Suggestion | None:
        series = self._series(position)
        n = len(series)
        if n < MIN_RECORDS_FOR_DATA or series.isna().any():
            return None
        if pd.api.types.is_float_dtype(series) and not _whole_numbers(series):
            return None  # measured decimals are all different by nature
        if pd.api.types.is_bool_dtype(series):
            return None
        if self._column_codes(position)[1] != n:
            return None
        name = str(self._table.columns[position])
        return Suggestion(name, Role.IDENTIFIER,
                          f"Every one of the {n:,} values of '{name}' is different, so it "
                          "points to one record: an identifier, dropped from the release.",
                          "data")

    def determines(self, source: str, target: str) -> bool:
        """True when equal values of ``source`` always come with equal ``target`` values."""
        a = self._table.columns.get_loc(source)
        b = self._table.columns.get_loc(target)
        if (a, b) not in self._determines:
            codes_a, count_a = self._column_codes(a)
            # A column of count_a values determines none with more: a first stretch of
            # the target with more distinct values settles it without reading it all
            # (a text column of four categories beside a measured one of 1,000,000).
            prefix = self._series(b).iloc[:max(1024, 2 * count_a + 1)]
            if len(pd.factorize(prefix, use_na_sentinel=False)[1]) > count_a:
                self._determines[(a, b)] = False
                return False
            codes_b, count_b = self._column_codes(b)
            pairs = pd.unique(codes_a * np.int64(count_b) + codes_b)
            self._determines[(a, b)] = len(pairs) == count_a
        return self._determines[(a, b)]

    def suggestions(self, roles: Mapping[str, Role | str] | None = None
                    ) -> dict[str, Suggestion]:
        """A suggestion per column that has one, given the roles chosen now.

        A text column that determines a quasi-identifier (and is neither a
        quasi-identifier nor an identifier) gets a warning that outranks any other
        suggestion for it.
        """
        roles = {str(c): Role(r) for c, r in (roles or {}).items()}
        found = dict(self._base)
        qis = [c for c, r in roles.items() if r is Role.QUASI_IDENTIFIER
               and c in self._table.columns]
        if not qis:
            return found
        for position, name in enumerate(self._table.columns):
            name = str(name)
            if roles.get(name) in (Role.QUASI_IDENTIFIER, Role.IDENTIFIER):
                continue
            if is_number_column(self._series(position)):
                continue
            if found.get(name) is not None and found[name].evidence == "data":
                continue  # all distinct: determines everything, already an identifier
            for qi in qis:
                if qi == name or not self.determines(name, qi):
                    continue
                link = ("maps one-to-one to" if self.determines(qi, name)
                        else "determines")
                found[name] = Suggestion(
                    name, Role.QUASI_IDENTIFIER,
                    f"'{name}' {link} the quasi-identifier '{qi}': released as it is, it "
                    f"would give '{qi}' away. Give it the same role, or make it an "
                    "identifier so it is dropped.", "determines", qi)
                break
        return found


def suggest_roles(table: pd.DataFrame, roles: Mapping[str, Role | str] | None = None
                  ) -> dict[str, Suggestion]:
    """Suggestions for ``table``'s columns given the chosen ``roles`` (one-off use).

    See :class:`RoleSuggester`, which keeps its work between calls.
    """
    return RoleSuggester(table).suggestions(roles)


def _whole_numbers(series: pd.Series) -> bool:
    """Whether every value of a float column is a whole number; a first stretch with a
    fraction settles it without reading the rest (a measured column of 1,000,000)."""
    values = series.to_numpy(dtype=float)
    for part in (values[:1024], values[1024:]):
        if not np.all(np.mod(part, 1) == 0):
            return False
    return True
