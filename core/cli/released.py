"""Reading a released file back for ``verify`` and ``measure``, with its text as released."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.io.cells import restore_frame
from core.io.read import read_table_with_report
from core.pipeline.missing import flag_column_name

__all__ = ["read_released", "add_missing_option", "released_records"]

MISSING_HELP = ("exclude: the release flags records it released unmasked (missing values) "
                "in its column unmasked_missing; leave them out of the check, as the run "
                "did (default stop: every record is checked)")


def _read_parquet(path: str) -> pd.DataFrame:
    """A released Parquet file (``anonymize -o x.parquet``), with a message if unreadable."""
    if importlib.util.find_spec("pyarrow") is None:
        raise MicroaggError(f"Cannot read '{Path(path).name}': Parquet needs pyarrow. "
                            "Install the cluster extra (pip install "
                            "'microagg-desktop[cluster]').")
    if not Path(path).is_file():
        raise MicroaggError(f"The file '{path}' does not exist.")
    try:
        return pd.read_parquet(path)
    except Exception as error:  # pyarrow's errors have no common base
        reason = str(error).rstrip(".")
        raise MicroaggError(f"Cannot read '{Path(path).name}' as Parquet: {reason}. Is it "
                            "a release written as .parquet?") from None


def add_missing_option(command) -> None:
    """``--missing {stop,exclude}`` of ``verify`` and ``measure``."""
    command.add_argument("--missing", choices=("stop", "exclude"), default="stop",
                         help=MISSING_HELP)


def released_records(original: pd.DataFrame, masked: pd.DataFrame, path: str,
                     missing: str, needed=()):
    """The records a check covers: all, or with ``missing="exclude"`` those the release
    did not flag as released unmasked (``anonymize --missing exclude``'s flag column,
    named as the run names it from the original's columns).

    A flagged record must have a missing value in one of the ``needed`` columns (the
    quasi-identifiers, strata and confidential columns given): the run leaves out no
    other, so a release that flags one has been changed, and is refused.

    Returns (original, masked, flagged, flag): the tables of the covered records (the
    flag column dropped), the number of records left out and the flag column's name.
    """
    flag = flag_column_name(original.columns)
    if missing != "exclude":
        if flag in masked.columns and flag not in original.columns:
            print(f"microagg: note: '{Path(path).name}' flags records released unmasked "
                  f"in its column '{flag}'; add --missing exclude to check the others.",
                  file=sys.stderr)
        return original, masked, 0, None
    if flag not in masked.columns:
        raise MicroaggError(
            f"'{Path(path).name}' has no column '{flag}', which flags the records a run "
            "with --missing exclude released unmasked. Check it without --missing "
            "exclude.")
    if len(masked) != len(original):
        raise MicroaggError(
            f"The masked table has {len(masked)} rows but the original has "
            f"{len(original)}. Compare tables with the same records in the same order.")
    values = pd.to_numeric(masked[flag], errors="coerce")
    if not values.isin([0, 1]).all():
        raise MicroaggError(f"Column '{flag}' of '{Path(path).name}' must hold 0 or 1 in "
                            "every row (1: released unmasked).")
    keep = (values == 0).to_numpy()
    needed = [c for c in needed if c in original.columns]
    if needed:
        complete = np.flatnonzero(~keep & original[needed].notna().all(axis=1).to_numpy())
        if complete.size:
            raise MicroaggError(
                f"Row {complete[0] + 1} of '{Path(path).name}' is flagged as released "
                f"unmasked in '{flag}', but its original record has every value of "
                f"{', '.join(needed)}: a run with --missing exclude leaves out only "
                "records with a missing value there. This release is not what that run "
                "makes; do not publish it.")
    return (original[keep].reset_index(drop=True),
            masked[keep].drop(columns=[flag]).reset_index(drop=True),
            int((~keep).sum()), flag)


def read_released(path: str, *, sheet=None, original=None):
    """A released file read back with its text as released (CSV apostrophes, XLSX escapes).

    A CSV column that is text in ``original`` is read as text: released postal codes
    such as "01234" would otherwise become numbers, and match no original category.
    Nor is a released text that the reader takes for a missing-value mark ('NA',
    'None') missing where the original's column holds that text as a value (a category
    NA from an SPSS file's labels): it is read back as the text it is.
    """
    if Path(path).suffix.lower() == ".parquet":  # as written: types and text kept
        return _read_parquet(path)
    table, report = read_table_with_report(path, sheet=sheet)
    xlsx = Path(path).suffix.lower() in (".xlsx", ".xlsm")
    if original is not None and not xlsx:
        text = [c for c in table.columns if c in original.columns
                and not pd.api.types.is_numeric_dtype(original[c])
                and pd.api.types.is_numeric_dtype(table[c])]
        if text:
            settings = report.settings
            table = pd.read_csv(path, sep=settings["delimiter"]["value"],
                                encoding=settings["encoding"]["value"],
                                dtype={c: str for c in text}, keep_default_na=True,
                                low_memory=False)  # one reading per column, not per block
    if original is not None:
        table = _marks_as_written(table, path, original, report.settings, xlsx)
    return restore_frame(table, "xlsx" if xlsx else "csv")


def _marks_as_written(table: pd.DataFrame, path: str, original: pd.DataFrame, settings,
                      xlsx: bool) -> pd.DataFrame:
    """``table`` with the cells read as missing put back as written where the text is a
    value of the original's column (:func:`read_released`). Only text columns of the
    original with a missing value in ``table`` are read again."""
    again = [c for c in table.columns if c in original.columns
             and not pd.api.types.is_numeric_dtype(original[c])
             and not pd.api.types.is_bool_dtype(original[c]) and table[c].isna().any()]
    if not again:
        return table
    skip = settings["header_line"]["value"] - 1
    as_written = dict(usecols=again, dtype=str, keep_default_na=False, na_values=[""],
                      skiprows=skip)
    written = (pd.read_excel(path, sheet_name=settings["sheet"]["value"], engine="calamine",
                             **as_written) if xlsx else
               pd.read_csv(path, sep=settings["delimiter"]["value"],
                           encoding=settings["encoding"]["value"], **as_written))
    if len(written) != len(table):  # rows read otherwise (blank lines): leave them
        return table
    table = table.copy()
    for name in again:
        values = set(original[name].dropna().astype(str))
        cells = written[name].str.strip()
        back = (table[name].isna().to_numpy() & cells.isin(values).to_numpy())
        if back.any():
            table[name] = table[name].astype(object).where(~back, cells.to_numpy())
    return table
