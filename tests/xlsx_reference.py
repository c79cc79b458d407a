"""The XLSX writer the product used before :mod:`core.io.xlsx_stream`: openpyxl's
write-only mode, one cell object per value. Kept as the reference the streaming writer
is compared with (the same cells when read back)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.io.cells import escape_control
from core.io.write import _width

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")


class _Exact(str):
    """A number openpyxl would change, as the exact text written into the numeric cell."""


def write_xlsx_reference(path: str, sheets: Sequence[tuple[str, pd.DataFrame]]) -> None:
    import openpyxl
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.utils import get_column_letter

    workbook = openpyxl.Workbook(write_only=True)
    for name, frame in sheets:
        sheet = workbook.create_sheet(title=str(name)[:31])
        for j, column in enumerate(frame.columns, start=1):
            sheet.column_dimensions[get_column_letter(j)].width = _width(frame, column)

        def text(value):
            # Control characters (a carriage return) would be normalised away by XML:
            # Excel's _x000D_ escapes keep them.
            cell = WriteOnlyCell(sheet, value=escape_control(value)  # noqa: B023
                                 if _CONTROL.search(value) or "_x" in value else value)
            cell.data_type = "s"  # the string type: never a formula
            return cell

        def exact(value):
            cell = WriteOnlyCell(sheet, value=str(value))  # noqa: B023
            cell.data_type = "n"  # a number, written with all its digits
            return cell

        sheet.append([text(str(c)) for c in frame.columns])
        columns = [_cell_values(frame[c]) for c in frame.columns]
        for row in zip(*columns):
            sheet.append([exact(v) if isinstance(v, _Exact) else
                          text(v) if isinstance(v, str) else v for v in row])
    workbook.save(path)


def _cell_values(series: pd.Series) -> list:
    """Python values for openpyxl: floats, ints, bools, text, datetimes; None when missing."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object)
    if pd.api.types.is_bool_dtype(series):
        return [None if pd.isna(v) else bool(v) for v in series]
    if pd.api.types.is_integer_dtype(series) and not series.isna().any():
        # openpyxl would write an integer beyond 2**53 as a rounded float.
        return [v if abs(v) < 2 ** 53 else _Exact(str(v))
                for v in series.to_numpy(dtype=np.int64).tolist()]
    if pd.api.types.is_numeric_dtype(series):
        array = series.to_numpy(dtype=np.float64, na_value=np.nan)
        return [None if not math.isfinite(v) else
                v if float(f"{v:.16g}") == v else _Exact(repr(v)) for v in array.tolist()]
    if pd.api.types.is_datetime64_any_dtype(series):
        return [None if pd.isna(v) else v.to_pydatetime() for v in series]
    return [None if _missing(v) else v if isinstance(v, (int, float, bool)) else str(v)
            for v in series.tolist()]


def _missing(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


