"""Reading a released file back for ``verify`` and ``measure``, with its text as released."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.io.cells import restore_frame
from core.io.read import read_table_with_report

__all__ = ["read_released"]


def read_released(path: str, *, sheet=None, original=None):
    """A released file read back with its text as released (CSV apostrophes, XLSX escapes).

    A CSV column that is text in ``original`` is read as text: released postal codes
    such as "01234" would otherwise become numbers, and match no original category.
    """
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
                                dtype={c: str for c in text}, keep_default_na=True)
    return restore_frame(table, "xlsx" if xlsx else "csv")
