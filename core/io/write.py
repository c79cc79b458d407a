"""Writing files atomically and safely: what an export may put in front of a reader.

:func:`atomic_write` writes to a private temporary file in the target folder and renames
it onto the target, so a failed or interrupted export never leaves a partial file. The
file then gets the permissions a normally created file gets (``0666`` less the umask),
or keeps those of the file it replaces: a release on a shared drive stays readable by
the colleagues who could read the file before.

:func:`write_table` writes CSV or XLSX (:mod:`core.io.cells` says how text that a
spreadsheet would execute is made inert):

CSV
    UTF-8 with CRLF line ends (RFC 4180); formula-like text and headers neutralised with a leading apostrophe; a float
    column whose values are all whole numbers is written as integers (``218992``, not
    ``218992.0``); other floats in their shortest round-trip form, so the verifier's
    equality within a class survives the file.
XLSX
    Streamed with openpyxl's write-only mode (memory does not grow with the rows);
    every text cell, header included, has the string type and is never a formula;
    numbers are numeric cells with every digit (openpyxl's 16 significant digits would
    change some values in the 17th, and integers beyond 2**53; Excel itself shows 15
    digits, but the file holds them all); columns get widths from their header
    and first values. Excel holds at most 1,048,576 rows: a larger table is refused
    before anything is written, pointing to CSV.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.io.cells import escape_control, neutralise_frame
from core.io.read import first_line

__all__ = ["atomic_write", "write_table", "EXCEL_MAX_ROWS"]

EXCEL_MAX_ROWS = 1_048_576
_WIDTH_SAMPLE = 200
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")  # tab and line feed survive XML


class _Exact(str):
    """A number openpyxl would change (a float's 17th digit, an integer beyond 2**53),
    as the exact text written into the numeric cell."""


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: str | os.PathLike, write) -> Path:
    """Call ``write(temporary_path)``, then rename the temporary file onto ``path``.

    The temporary file lives in the target folder (so the rename is atomic on the same
    file system), is private while it is written, and is removed if ``write`` fails. The
    finished file gets the mode of the file it replaces, or the default mode of a new
    file.
    """
    target = Path(path)
    if target.is_dir():
        raise MicroaggError(f"Cannot write '{target}': it is a folder. Give a file name.")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise MicroaggError(f"Cannot write '{target}': folder '{folder}' does not exist.")
    mode = (target.stat().st_mode & 0o7777) if target.exists() else _default_mode()
    # The temporary name keeps the extension: writers choose the format from it.
    handle, temporary = tempfile.mkstemp(prefix=f".{target.stem}.",
                                         suffix=f".partial{target.suffix}", dir=folder)
    os.close(handle)
    try:
        write(temporary)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    return target


def write_table(path: str | os.PathLike, table: pd.DataFrame, *,
                extra_sheets: Sequence[tuple[str, pd.DataFrame]] = (),
                sheet_name: str = "masked") -> Path:
    """Write ``table`` to ``.csv``, ``.xlsx`` or ``.parquet`` (by extension), atomically.

    An XLSX file gets ``table`` on the sheet ``sheet_name`` and every ``extra_sheets``
    entry (name, frame) after it. A CSV file holds ``table`` only.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix == ".csv":
        def write(temporary):
            # CRLF (RFC 4180): a field holding a bare carriage return is then quoted.
            _csv_ready(table).to_csv(temporary, index=False, encoding="utf-8",
                                     lineterminator="\r\n")
    elif suffix == ".xlsx":
        if len(table) + 1 > EXCEL_MAX_ROWS:
            raise MicroaggError(
                f"Cannot export {len(table):,} records to '{target.name}': an Excel sheet "
                f"holds at most {EXCEL_MAX_ROWS - 1:,} rows below its header. Export to "
                "a .csv file instead (or .parquet, with the cluster extra installed), "
                "or run blocked with `--engine dask`, which writes a folder of parts.")

        def write(temporary):
            _write_xlsx(temporary, [(sheet_name, table), *extra_sheets])
    elif suffix == ".parquet":
        if importlib.util.find_spec("pyarrow") is None:
            raise MicroaggError(
                f"Cannot export to '{target.name}': Parquet needs pyarrow. Install the "
                "cluster extra (pip install 'microagg-desktop[cluster]') or export to "
                "a .csv file.")

        def write(temporary):
            table.to_parquet(temporary, index=False)
    else:
        raise MicroaggError(
            f"Cannot export to '{target.name}': use a .csv, .xlsx or .parquet file name."
        )
    try:
        return atomic_write(target, write)
    except PermissionError:
        raise MicroaggError(
            f"Cannot write '{target}': permission denied (is it open in another program?)."
        ) from None
    except OSError as error:
        raise MicroaggError(f"Cannot write '{target}': {first_line(error)}") from None


def _csv_ready(table: pd.DataFrame) -> pd.DataFrame:
    out = neutralise_frame(table)
    for position, column in enumerate(table.columns):
        values = table[column]
        if pd.api.types.is_float_dtype(values) and len(values):
            array = values.to_numpy(dtype=np.float64, na_value=np.nan)
            finite = np.isfinite(array)
            if finite.all() and np.all(array == np.round(array)) and \
                    np.abs(array).max() < 2.0 ** 53:
                out.isetitem(position, array.astype(np.int64))
    return out


def _write_xlsx(path: str, sheets: Sequence[tuple[str, pd.DataFrame]]) -> None:
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
            cell = WriteOnlyCell(sheet, value=escape_control(value)
                                 if _CONTROL.search(value) or "_x" in value else value)
            cell.data_type = "s"  # the string type: never a formula
            return cell

        def exact(value):
            cell = WriteOnlyCell(sheet, value=str(value))
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
                v if float("%.16g" % v) == v else _Exact(repr(v)) for v in array.tolist()]
    if pd.api.types.is_datetime64_any_dtype(series):
        return [None if pd.isna(v) else v.to_pydatetime() for v in series]
    return [None if _missing(v) else v if isinstance(v, (int, float, bool)) else str(v)
            for v in series.tolist()]


def _missing(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _width(frame: pd.DataFrame, column) -> float:
    sample = frame[column].head(_WIDTH_SAMPLE)
    longest = max([len(str(column))] + [len(f"{v:.6g}" if isinstance(v, float) else str(v))
                                        for v in sample.tolist()])
    return float(min(max(longest + 2, 8), 60))
