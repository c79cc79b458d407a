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
    column whose values are all whole numbers, empty cells aside, is written as integers
    (``218992``, not ``218992.0``); other floats in their shortest round-trip form, so the verifier's
    equality within a class survives the file.
XLSX
    Streamed by :mod:`core.io.xlsx_stream` (memory does not grow with the rows);
    every text cell, header included, has the string type and is never a formula;
    numbers are numeric cells with every digit (a float's shortest round-trip form,
    integers beyond 2**53 in full; Excel itself shows 15 digits, but the file holds
    them all); columns get widths from their header and first values. Excel holds at most 1,048,576 rows: a larger table is refused
    before anything is written, pointing to CSV.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.io.cells import neutralise_frame
from core.io.read import first_line
from core.io.xlsx_stream import write_xlsx
from core.progress import TaskState

__all__ = ["EXCEL_MAX_ROWS", "TABLE_SUFFIXES", "atomic_write", "check_table_path", "write_table"]

EXCEL_MAX_ROWS = 1_048_576
_WIDTH_SAMPLE = 200


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


TABLE_SUFFIXES = (".csv", ".xlsx", ".parquet")
"""The extensions :func:`write_table` writes (it chooses the format by them)."""


def check_table_path(path: str | os.PathLike, rows: int | None = None) -> None:
    """Refuse a file name :func:`write_table` cannot write, before any work: an unknown
    extension, Parquet without pyarrow, or (given the table's ``rows``) more rows than
    an Excel sheet holds."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise MicroaggError(
            f"Cannot export to '{target.name}': use a .csv, .xlsx or .parquet file name.")
    if suffix == ".xlsx" and rows is not None and rows + 1 > EXCEL_MAX_ROWS:
        raise MicroaggError(
            f"Cannot export {rows:,} records to '{target.name}': an Excel sheet holds at "
            f"most {EXCEL_MAX_ROWS - 1:,} rows below its header. Export to a .csv file "
            "instead (or .parquet, with the cluster extra installed), or run blocked "
            "with `--engine dask`, which writes a folder of parts.")
    if suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise MicroaggError(
            f"Cannot export to '{target.name}': Parquet needs pyarrow. Install the "
            "cluster extra (pip install 'microagg-desktop[cluster]') or export to "
            "a .csv file.")


def _refuse_infinities(table: pd.DataFrame, target: Path) -> None:
    """An Excel cell holds no infinity (it would be written empty and read back as
    missing): refuse, naming the first such cell, before anything is written."""
    for column in table.columns:
        values = table[column]
        if pd.api.types.is_float_dtype(values.dtype):
            infinite = np.isinf(values.to_numpy(dtype=np.float64, na_value=np.nan))
        elif values.dtype == object:
            infinite = values.map(lambda v: isinstance(v, float) and math.isinf(v)
                                  ).to_numpy(dtype=bool)
        else:
            continue
        if infinite.any():
            row = int(np.flatnonzero(infinite)[0])
            raise MicroaggError(
                f"Cannot export to '{target.name}': column '{column}' holds "
                f"{values.iloc[row]} (data row {row + 1}), which an Excel cell cannot hold "
                "(it would be read back as empty). Export to a .csv file (or .parquet), "
                "or recode the value.")


def write_table(path: str | os.PathLike, table: pd.DataFrame, *,
                extra_sheets: Sequence[tuple[str, pd.DataFrame]] = (),
                sheet_name: str = "masked", state: TaskState | None = None) -> Path:
    """Write ``table`` to ``.csv``, ``.xlsx`` or ``.parquet`` (by extension), atomically.

    An XLSX file gets ``table`` on the sheet ``sheet_name`` and every ``extra_sheets``
    entry (name, frame) after it. A CSV file holds ``table`` only. ``state`` gets the
    progress of a CSV or XLSX file, written a block of rows at a time; a cancel there
    stops the write and leaves no file.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    state = state or TaskState()
    check_table_path(target, rows=len(table))
    if suffix == ".csv":
        def write(temporary):
            _write_csv(temporary, _csv_ready(table), state)
    elif suffix == ".xlsx":
        _refuse_infinities(table, target)

        def write(temporary):
            _write_xlsx(temporary, [(sheet_name, table), *extra_sheets], state)
    else:  # .parquet (check_table_path)
        def write(temporary):
            table.to_parquet(temporary, index=False)
    try:
        return atomic_write(target, write)
    except PermissionError:
        raise MicroaggError(
            f"Cannot write '{target}': permission denied (is it open in another program?)."
        ) from None
    except OSError as error:
        raise MicroaggError(f"Cannot write '{target}': {first_line(error)}") from None


def _csv_ready(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` as the CSV holds it: text made inert, and a float column whose values
    are all whole numbers below 2**53, missing values aside, as integers (a kept column
    of codes with empty cells, which a reader gives as floats, is released as ``3``, as
    written, not ``3.0``)."""
    out = neutralise_frame(table)
    for position, column in enumerate(table.columns):
        values = table[column]
        if pd.api.types.is_float_dtype(values) and len(values):
            array = values.to_numpy(dtype=np.float64, na_value=np.nan)
            missing = np.isnan(array)
            present = array[~missing]
            if not (present.size and np.isfinite(present).all()
                    and np.all(present == np.round(present))
                    and np.abs(present).max() < 2.0 ** 53):
                continue
            whole = np.where(missing, 0.0, array).astype(np.int64)
            out.isetitem(position, whole if not missing.any() else
                         pd.arrays.IntegerArray(whole, missing))
    return out


def _write_csv(path: str, frame: pd.DataFrame, state: TaskState) -> None:
    """``frame`` as ``pandas.DataFrame.to_csv`` writes it: UTF-8, CRLF (RFC 4180: a field
    holding a bare carriage return is then quoted), minimal quoting, no index, missing
    values empty.

    A table of numbers (int64, float64, and nullable integers with missing values),
    text (categories of text come as text from :func:`~core.io.cells.neutralise_frame`)
    and booleans (nullable ones too) takes a faster path that gives
    the same bytes: numbers are formatted by the same ``numpy`` conversion pandas uses,
    a numeric column that repeats its values (a released group shares them) has each
    distinct value formatted once, and the rows go to the same ``csv`` writer pandas
    uses a block at a time (memory: a block, plus one text per distinct value of the
    repeating columns), with progress on ``state`` after each block. Any other table
    (dates, categories of numbers) is written by pandas, a block at a time with the same
    progress (:func:`_write_csv_by_pandas`).
    """
    columns = [_CsvColumn.of(frame.iloc[:, j]) for j in range(frame.shape[1])]
    if not columns or any(column is None for column in columns):
        _write_csv_by_pandas(path, frame, state)
        return
    # Numbers never need quoting: rows of two or more are joined directly (a row of
    # one empty field is quoted by the writer).
    joined = len(columns) > 1 and all(column.numeric for column in columns)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow([str(c) for c in frame.columns])
        for start in range(0, len(frame), _CSV_ROWS_PER_BLOCK):
            stop = start + _CSV_ROWS_PER_BLOCK
            rows = zip(*[column.texts(start, stop) for column in columns])
            if joined:
                handle.write("\r\n".join(map(",".join, rows)) + "\r\n")
            else:
                writer.writerows(rows)
            state.step(min(stop, len(frame)) / len(frame))


_CSV_ROWS_PER_BLOCK = 65_536
_PANDAS_CHUNK_CELLS = 100_000  # pandas' CSVFormatter: rows per chunk = this // columns


def _write_csv_by_pandas(path: str, frame: pd.DataFrame, state: TaskState) -> None:
    """``frame.to_csv``'s bytes, written a block of rows at a time with progress.

    pandas formats a table in chunks of ``100,000 // columns`` rows, and a chunk's dates
    share one format (a chunk of midnights is written without the time). The blocks are
    whole chunks, starting where pandas' own start, so the bytes are those of one call.
    """
    chunk = max(_PANDAS_CHUNK_CELLS // max(frame.shape[1], 1), 1)
    block = chunk * max(_CSV_ROWS_PER_BLOCK // chunk, 1)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        if len(frame) == 0:
            frame.to_csv(handle, index=False, lineterminator="\r\n")
        for start in range(0, len(frame), block):
            stop = min(start + block, len(frame))
            frame.iloc[start:stop].to_csv(handle, index=False, header=start == 0,
                                          lineterminator="\r\n")
            state.step(stop / len(frame))


class _CsvColumn:
    """A column's CSV fields, as pandas writes them, a block of rows at a time.

    Numbers: distinct values are found on the bit patterns, so 0.0 and −0.0 (equal as
    numbers) each keep their own text; every NaN is written empty. Text: the values
    themselves, a missing one empty. Booleans: "True" and "False", picked by code.
    """

    def __init__(self, values: np.ndarray, numeric: bool, missing: np.ndarray | None = None):
        self._values = values
        self._missing = missing  # of integers: the cells written empty
        self.numeric = numeric
        self._distinct = None
        if not numeric:
            return
        keys = values.view(np.int64) if values.dtype.kind == "f" else values
        distinct, inverse = np.unique(keys, return_inverse=True)
        if 2 * len(distinct) <= len(values):  # repeated values: each formatted once
            self._distinct = _number_texts(distinct.view(values.dtype))
            self._inverse = inverse
            if missing is not None:
                self._distinct = np.append(self._distinct, "")
                self._inverse = np.where(missing, len(distinct), inverse)

    @classmethod
    def coded(cls, labels: np.ndarray, codes: np.ndarray) -> "_CsvColumn":
        """A column held as codes into ``labels`` (each label is one field's text)."""
        column = cls(labels, numeric=False)
        column._distinct, column._inverse = labels, codes
        return column

    @classmethod
    def of(cls, series: pd.Series) -> "_CsvColumn | None":
        """The column's fields, or None for a kind the fast path does not write."""
        if series.dtype in (np.int64, np.float64):
            return cls(series.to_numpy(), numeric=True)
        if series.dtype == pd.Int64Dtype():  # whole numbers beside empty cells
            return cls(series.to_numpy(dtype=np.int64, na_value=0), numeric=True,
                       missing=series.isna().to_numpy())
        if series.dtype == np.bool_:  # as pandas writes them: str(True), str(False)
            return cls.coded(np.array(["False", "True"], dtype=object),
                             series.to_numpy().view(np.uint8))
        if series.dtype == pd.BooleanDtype():  # and a missing one empty
            codes = series.to_numpy(dtype=np.uint8, na_value=2)
            return cls.coded(np.array(["False", "True", ""], dtype=object), codes)
        if (pd.api.types.is_string_dtype(series.dtype)
                and not isinstance(series.dtype, pd.CategoricalDtype)
                and pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty")):
            return cls(series.to_numpy(dtype=object, na_value=""), numeric=False)
        return None

    def texts(self, start: int, stop: int) -> np.ndarray:
        if self._distinct is not None:
            return self._distinct[self._inverse[start:stop]]
        if not self.numeric:
            return self._values[start:stop]
        texts = _number_texts(self._values[start:stop])
        if self._missing is not None:
            texts[self._missing[start:stop]] = ""
        return texts


def _number_texts(values: np.ndarray) -> np.ndarray:
    """Numbers as pandas' CSV writer formats them (object array of str, NaN empty)."""
    texts = values.astype(str).astype(object)
    if values.dtype.kind == "f":
        texts[np.isnan(values)] = ""
    return texts


def _write_xlsx(path: str, sheets: Sequence[tuple[str, pd.DataFrame]],
                state: TaskState) -> None:
    write_xlsx(path, [(name, frame, [_width(frame, c) for c in frame.columns])
                      for name, frame in sheets], progress=state.step)


def _width(frame: pd.DataFrame, column) -> float:
    sample = frame[column].head(_WIDTH_SAMPLE)
    longest = max([len(str(column))] + [len(f"{v:.6g}" if isinstance(v, float) else str(v))
                                        for v in sample.tolist()])
    return float(min(max(longest + 2, 8), 60))
