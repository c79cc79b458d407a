"""How the numbers of a text column are written: decimal mark and thousands separator.

Vocabulary
----------
format
    A decimal mark (``'.'`` or ``','``) and a thousands separator (none, ``'.'``, ``','``,
    an apostrophe or a space; a space stands for the no-break and narrow no-break spaces
    too, which look the same and get mixed in one column).
fits
    A format fits a value when the value is written that way. ``1.234.567`` fits only
    ``(',', '.')``; ``50.900`` fits ``('.', none)`` (fifty point nine) *and* ``(',', '.')``
    (fifty thousand nine hundred); ``0.500`` fits no thousands format (a group never
    starts with a lone zero), so it shows that ``'.'`` is the decimal mark.
verdict
    What a column is: ``empty``, ``text`` (some value is not a number at all), ``plain``
    (numbers without separators), ``numbers`` (one reading: the format that fits every
    value), ``ambiguous`` (the formats that fit every value read different numbers) or
    ``mixed`` (every value is a number, but no one format fits them all).

A column is never guessed: an ambiguous column is settled by the decimal mark other
columns of the same file show, by the user's ``decimal``/``thousands``, or refused.
:func:`classify` works on any array of strings (the sample or a whole column, with its
distinct values only) and :func:`to_numbers` converts with the format it found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["NumberFormat", "Verdict", "classify", "fits_all", "to_numbers", "NA_TOKENS",
           "DECIMALS", "THOUSANDS", "SPACES", "describe_separator"]

DECIMALS = (".", ",")
THOUSANDS = (".", ",", " ", "'")
SPACES = " \u00a0\u202f"
# pandas' default missing-value markers: they are missing values, not text.
NA_TOKENS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                       "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
                       "nan", "null"})
_SEPARATORS = set(DECIMALS) | set(THOUSANDS) | set(SPACES)
_SEPARATOR_CLASS = "[.,' \u00a0\u202f]"
# [0-9], not \d: other scripts' digits are text to pandas and to_numeric.
_SEPARATOR_SEARCH = re.compile(_SEPARATOR_CLASS)
_NUMBERISH = re.compile(r"[+-]?[0-9.,' \u00a0\u202f]*[0-9][0-9.,' \u00a0\u202f]*(?:[eE][+-]?[0-9]+)?")
_NAMES = {" ": "a space", "\u00a0": "a space", "\u202f": "a space", "'": '"\'"'}


def describe_separator(char: str | None) -> str:
    """``'.'`` quoted, or the name of an invisible separator (``a space``)."""
    return "none" if not char else _NAMES.get(char, f"'{char}'")


@dataclass(frozen=True)
class NumberFormat:
    """A decimal mark and a thousands separator (``None``: numbers are not grouped)."""

    decimal: str
    thousands: str | None

    @property
    def regex(self) -> str:
        d = re.escape(self.decimal)
        whole = "[0-9]+"
        if self.thousands:
            # A grouped number starts with 1-3 digits, never a lone 0 (0.500 is a fraction).
            t = "[ \u00a0\u202f]" if self.thousands in SPACES else re.escape(self.thousands)
            whole = rf"(?:[1-9][0-9]{{0,2}}(?:{t}[0-9]{{3}})+|[0-9]+)"
        return rf"[+-]?(?:{whole}(?:{d}[0-9]*)?|{d}[0-9]+)(?:[eE][+-]?[0-9]+)?"


@dataclass(frozen=True)
class Verdict:
    """What a column's values are; see the module docstring for the kinds.

    ``format`` is set for ``numbers``; ``shows_decimal`` is the decimal mark a value with a
    fraction proves (``None`` when no value has one); ``examples`` are values behind an
    ``ambiguous`` or ``mixed`` verdict, or the value that does not fit the given format.
    """

    kind: str
    format: NumberFormat | None = None
    shows_decimal: str | None = None
    examples: tuple[str, ...] = ()
    readings: tuple[str, ...] = ()


def classify(values, *, decimal: str | None = None, thousands: str | None = None,
             file_decimal: str | None = None) -> Verdict:
    """The verdict on a column's values.

    Parameters
    ----------
    values : array-like of str, shape (n_values,)
        The cells as text; missing markers (:data:`NA_TOKENS`) and surrounding spaces are
        ignored, repeats cost nothing.
    decimal, thousands : str, optional
        Given by the user: only formats with this mark (and this separator; ``''`` for
        none) are considered. A value that is a number in another format is then
        reported (kind ``mixed``, its value first in ``examples``).
    file_decimal : str, optional
        The decimal mark other columns of the file show; it settles an ambiguous column.

    Examples
    --------
    >>> classify(["50.900", "500"]).kind
    'ambiguous'
    >>> classify(["50.900", "500"], file_decimal=",").format
    NumberFormat(decimal=',', thousands='.')
    """
    distinct = pd.unique(np.asarray(values, dtype=object))
    if len(distinct) <= _FEW:
        verdict = _classify_few(distinct, decimal, thousands)
        if verdict is not None:
            return verdict
    text = pd.Series(distinct, dtype=object)
    text = text[text.notna()].astype(str).str.strip()
    text = text[~text.isin(NA_TOKENS)]
    if text.empty:
        return Verdict("empty")
    numberish = text.str.fullmatch(_NUMBERISH).to_numpy()
    if not numberish.all():
        return Verdict("text", examples=(text.iloc[int(np.argmin(numberish))],))
    # A number without separators fits every format and reads the same in all: only
    # the values with a separator can tell formats apart.
    text = text[text.str.contains(_SEPARATOR_CLASS, regex=True).to_numpy()]
    if text.empty:
        return Verdict("plain")
    present = set("".join(text.tolist())) & _SEPARATORS
    every = _formats(present, None, None)
    allowed = _formats(present, decimal, thousands)
    fits = {f: text.str.fullmatch(f.regex).to_numpy() for f in dict.fromkeys(every + allowed)}
    whole = [f for f in allowed if fits[f].all()]
    if not whole:
        plausible = np.logical_or.reduce([fits[f] for f in every])
        if not plausible.all():
            return Verdict("text", examples=(text.iloc[int(np.argmin(plausible))],))
        return Verdict("mixed", examples=_conflict(text, allowed, fits))
    readings: dict[bytes, list[NumberFormat]] = {}
    for f in whole:
        readings.setdefault(to_numbers(text, f).to_numpy(float).tobytes(), []).append(f)
    groups = list(readings.values())
    if len(groups) > 1 and file_decimal:
        groups = [g for g in ([f for f in g if f.decimal == file_decimal] for g in groups) if g]
    if len(groups) > 1:
        return _ambiguous(text, groups)
    chosen = _representative(groups[0], present)
    fractional = text.str.contains(chosen.decimal, regex=False).any()
    shows = chosen.decimal if fractional and len(readings) == 1 else None
    return Verdict("numbers", chosen, shows)


# Distinct values up to which classify decides in Python first (_classify_few): pandas'
# string methods cost about 0.3 ms a call whatever the size, ten calls a column, so a
# file of 5,000 columns spent 28 s of its 30 s read on the sample's verdicts.
_FEW = 64


def _classify_few(distinct: np.ndarray, decimal: str | None, thousands: str | None
                  ) -> Verdict | None:
    """:func:`classify`'s verdict on a few distinct values, in Python, where it is
    ``empty``, ``text``, ``plain`` or ``numbers`` on ASCII values; else None, and the
    pandas path decides (the rare refusals, whose examples and readings it gives, and
    values beyond ASCII, where Python's and Arrow's ideas of whitespace may part; on
    ASCII both strip the same characters, the separators 0x1C–0x1F too). The tests
    hold the two paths to the same verdicts."""
    text = []
    for value in distinct:
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            continue
        value = str(value)
        if not value.isascii():  # beyond ASCII, the two strips' whitespace may differ
            return None
        value = value.strip()
        if value not in NA_TOKENS:
            text.append(value)
    if not text:
        return Verdict("empty")
    for value in text:
        if not _NUMBERISH.fullmatch(value):
            return Verdict("text", examples=(value,))
    text = [value for value in text if _SEPARATOR_SEARCH.search(value)]
    if not text:
        return Verdict("plain")
    present = set("".join(text)) & _SEPARATORS
    allowed = _formats(present, decimal, thousands)
    whole = [f for f in allowed if all(map(re.compile(f.regex).fullmatch, text))]  # re caches
    if not whole:
        return None  # mixed or text: the pandas path names the values
    readings: dict[bytes, list[NumberFormat]] = {}
    for f in whole:
        numbers = np.array([float(_plain_text(value, f)) for value in text])
        readings.setdefault(numbers.tobytes(), []).append(f)
    if len(readings) > 1:
        return None  # ambiguous, or settled by the file's decimal mark: the pandas path
    chosen = _representative(whole, present)
    fractional = any(chosen.decimal in value for value in text)
    return Verdict("numbers", chosen, chosen.decimal if fractional else None)


def _plain_text(value: str, number_format: NumberFormat) -> str:
    """``value`` without its thousands separators and with '.' as its decimal mark, as
    :func:`to_numbers` rewrites a column."""
    if number_format.thousands and number_format.thousands in SPACES:
        value = re.sub("[ \u00a0\u202f]", "", value)
    elif number_format.thousands:
        value = value.replace(number_format.thousands, "")
    if number_format.decimal != ".":
        value = value.replace(number_format.decimal, ".")
    return value


def fits_all(text: pd.Series, number_format: NumberFormat) -> bool:
    """Whether every non-missing value of ``text`` is written in ``number_format``."""
    pattern = re.compile(f" *{number_format.regex} *")
    return all(pattern.fullmatch(value) for value in text[text.notna()].tolist())


def to_numbers(text: pd.Series, number_format: NumberFormat) -> pd.Series:
    """Convert text written in ``number_format`` to numbers (int64 when all are whole).

    Missing values stay missing; every other value must fit the format (see
    :func:`classify` and :func:`fits_all`).
    """
    # Two literal replaces are quicker than one str.translate with a mapping.
    if number_format.thousands and number_format.thousands in SPACES:
        text = text.str.replace("[ \u00a0\u202f]", "", regex=True)
    elif number_format.thousands:
        text = text.str.replace(number_format.thousands, "", regex=False)
    if number_format.decimal != ".":
        text = text.str.replace(number_format.decimal, ".", regex=False)
    return pd.to_numeric(text)


def _formats(present: set[str], decimal: str | None, thousands: str | None
             ) -> list[NumberFormat]:
    # Thousands separators that do not occur cannot change a reading, so they are left
    # out; both decimal marks stay, as '.' alone may be either.
    decimals = [decimal] if decimal else list(DECIMALS)
    groupings: list[str | None]
    if thousands is not None:
        groupings = [" " if thousands in SPACES else thousands or None]
    else:
        spaced = {" " if c in SPACES else c for c in present}
        groupings = [None] + [t for t in THOUSANDS if t in spaced]
    return [NumberFormat(d, t) for d in decimals for t in groupings if t != d]


def _representative(group: list[NumberFormat], present: set[str]) -> NumberFormat:
    # Formats that read the same numbers differ only in separators that are not used;
    # name the one whose separators occur.
    present = {" " if c in SPACES else c for c in present}
    return min(group, key=lambda f: (f.thousands is not None and f.thousands not in present,
                                     f.decimal not in present, f.thousands is not None))


def _ambiguous(text: pd.Series, groups: list[list[NumberFormat]]) -> Verdict:
    first, second = groups[0][0], groups[1][0]
    a, b = to_numbers(text, first).to_numpy(float), to_numbers(text, second).to_numpy(float)
    differs = np.flatnonzero(a != b)
    first_differs = differs[0]
    return Verdict("ambiguous", examples=tuple(text.iloc[differs[:2]]),
                   readings=(_plain(a[first_differs]), _plain(b[first_differs])))


def _conflict(text: pd.Series, allowed: list[NumberFormat], fits: dict) -> tuple[str, ...]:
    # The format most values fit is the file's intent; show one value it rejects and
    # one it accepts.
    best = fits[max(allowed, key=lambda f: int(fits[f].sum()))]
    return tuple(text[~best].iloc[:1]) + tuple(text[best].iloc[:1])


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))
