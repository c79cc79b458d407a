"""Records with missing values: stop, or set them aside and release them flagged.

A missing value in a quasi-identifier cannot be measured, so a record that has one
cannot be grouped. The run option ``missing`` says what to do:

``"stop"`` (the default)
    Refuse the run, naming the column and the first data row
    (:class:`MissingValuesError`).
``"exclude"``
    Set aside every record with a missing value in a quasi-identifier, a stratum column,
    or a confidential column (t-closeness, Laplace noise and the per-class EMD that the
    measures report for every run need every confidential value).
    The method runs on the other records; the released table then holds *all* records
    in their original order: the masked ones, and the set-aside ones with their original
    values (identifiers still dropped) and the flag column ``unmasked_missing`` = 1
    (:func:`put_back`). The set-aside records are **not protected**; a release warning
    says so every time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.errors import MicroaggError

__all__ = ["MISSING_OPTIONS", "FLAG_COLUMN", "MissingValuesError", "check_option", "missing_rows",
           "refuse_missing", "check_remaining", "flag_column_name", "put_back"]

MISSING_OPTIONS = ("stop", "exclude")
FLAG_COLUMN = "unmasked_missing"


class MissingValuesError(MicroaggError):
    """A column the run needs has missing values and ``missing="stop"``.

    Attributes
    ----------
    column : str
    count : int
        Number of missing values in the column.
    row : int
        1-based data row of the first one.
    """

    def __init__(self, message: str, *, column: str, count: int, row: int):
        super().__init__(message)
        self.column, self.count, self.row = column, count, row


def check_option(missing) -> str:
    """``missing`` itself if it is one of :data:`MISSING_OPTIONS`; a clear error otherwise."""
    if missing not in MISSING_OPTIONS:
        raise MicroaggError(f"The 'missing' option must be one of "
                            f"{', '.join(map(repr, MISSING_OPTIONS))}. Got {missing!r}.")
    return missing


def missing_rows(table: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Positions (0-based, sorted) of the rows with a missing value in any of ``columns``."""
    if not columns or table.empty:
        return np.empty(0, dtype=np.int64)
    mask = table[list(columns)].isna().to_numpy().any(axis=1)
    return np.flatnonzero(mask).astype(np.int64)


def refuse_missing(table: pd.DataFrame, columns: Sequence[str], kinds: dict[str, str]) -> None:
    """Raise :class:`MissingValuesError` for the first of ``columns`` with a missing value.

    ``kinds`` names what each column is ("Quasi-identifier", "Confidential column").
    """
    for column in columns:
        missing = table[column].isna().to_numpy()
        if missing.any():
            rows = np.flatnonzero(missing)
            raise MissingValuesError(
                f"{kinds.get(column, 'Column')} '{column}' has {rows.size} missing value(s) "
                f"(first at data row {rows[0] + 1}). Impute or remove those rows, give the "
                "column another role, or choose to exclude those records (they are then "
                "released unmasked and flagged).",
                column=column, count=int(rows.size), row=int(rows[0]) + 1)


def check_remaining(n_records: int, n_excluded: int, k: int | None) -> None:
    """Refuse when every record, or all but fewer than k, would be set aside."""
    remaining = n_records - n_excluded
    if n_excluded and remaining == 0:
        raise MicroaggError(
            f"Every one of the {n_records:,} records has a missing value in a column the "
            "run needs, so none could be masked. Impute the missing values, or give the "
            "columns with missing values another role.")
    if n_excluded and k is not None and remaining < k:
        raise MicroaggError(
            f"{n_excluded:,} of the {n_records:,} records have missing values and would be "
            f"set aside, leaving {remaining:,}, fewer than k = {k}. Impute the missing "
            "values, choose a smaller k, or give the columns with missing values another "
            "role.")


def flag_column_name(columns) -> str:
    """:data:`FLAG_COLUMN`, or with ``_1``, ``_2``... appended if the table has that name."""
    taken = {str(c) for c in columns}
    name, number = FLAG_COLUMN, 0
    while name in taken:
        number += 1
        name = f"{FLAG_COLUMN}_{number}"
    return name


def put_back(table: pd.DataFrame, released: pd.DataFrame, excluded: np.ndarray,
             flag: str) -> pd.DataFrame:
    """The full release: ``released`` rows and the set-aside rows of ``table``, in order.

    Parameters
    ----------
    table : DataFrame
        The original table of n records (never modified).
    released : DataFrame
        The masked table of the n − len(excluded) other records, in their order.
    excluded : ndarray of int
        Sorted positions in ``table`` of the set-aside records.
    flag : str
        Name of the 0/1 flag column appended (1 on the set-aside records).

    Returns
    -------
    DataFrame
        n rows with ``table``'s index; the columns of ``released`` then ``flag``. A
        set-aside record keeps its original values in every released column.

    Examples
    --------
    >>> t = pd.DataFrame({"a": [1.0, None, 3.0]})
    >>> put_back(t, pd.DataFrame({"a": [2.0, 2.0]}), np.array([1]), "f")
         a  f
    0  2.0  0
    1  NaN  1
    2  2.0  0
    """
    n = len(table)
    kept = np.setdiff1d(np.arange(n), excluded)
    columns = list(released.columns)
    masked_part = released.set_axis(kept, axis=0)  # a new frame: ours to change
    original_part = table.iloc[excluded][columns].set_axis(excluded, axis=0)
    for column in columns:  # keep a categorical column categorical (value labels)
        ours, theirs = masked_part[column], original_part[column]
        if isinstance(ours.dtype, pd.CategoricalDtype) and \
                isinstance(theirs.dtype, pd.CategoricalDtype) and ours.dtype != theirs.dtype:
            union = pd.CategoricalDtype(
                list(dict.fromkeys([*theirs.cat.categories, *ours.cat.categories])),
                ordered=theirs.cat.ordered)
            masked_part[column] = ours.astype(union)
            original_part[column] = theirs.astype(union)
    full = pd.concat([masked_part, original_part], axis=0).sort_index(kind="stable")
    full = full.set_axis(table.index, axis=0)
    flags = np.zeros(n, dtype=np.int64)
    flags[excluded] = 1
    full[flag] = flags
    return full
