"""Reading tables from files and writing results atomically.

Reading: CSV/TSV/TXT (delimiter and encoding detected: UTF-8, UTF-8 with BOM, Latin-1;
a semicolon-separated file with decimal commas is read as numbers), XLSX (openpyxl in
read-only mode; a named sheet, the first by default) and Stata ``.dta``. The input file
is only ever opened for reading.

Writing: :func:`write_table` writes to a temporary file in the target folder and renames
it over the target, so a failed or interrupted export never leaves a partial file.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from core.errors import MicroaggError

__all__ = ["read_table", "sheet_names", "READABLE_SUFFIXES", "first_line"]

READABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".xlsx", ".xlsm", ".dta")
_DELIMITERS = (",", ";", "\t", "|")
_SAMPLE_BYTES = 256 * 1024


def read_table(path: str | os.PathLike, *, sheet: str | int | None = None) -> pd.DataFrame:
    """Read a table; raise :class:`MicroaggError` naming the file on any problem."""
    path = Path(path)
    if not path.exists():
        raise MicroaggError(f"File '{path}' does not exist.")
    if path.is_dir():
        raise MicroaggError(f"'{path}' is a folder, not a table file.")
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".tsv", ".txt"):
            table = _read_csv(path)
        elif suffix in (".xlsx", ".xlsm"):
            table = _read_xlsx(path, sheet)
        elif suffix == ".dta":
            table = pd.read_stata(path)
        else:
            raise MicroaggError(
                f"'{path.name}': unsupported file type '{suffix or '(none)'}'. "
                f"Use one of: {', '.join(READABLE_SUFFIXES)}."
            )
    except MicroaggError:
        raise
    except (OSError, ValueError, KeyError, UnicodeError, pd.errors.ParserError) as error:
        raise MicroaggError(f"Could not read '{path.name}': {first_line(error)}") from None
    if table.shape[1] == 0 or len(table) == 0:
        raise MicroaggError(f"'{path.name}' has no data rows.")
    table.columns = _unique_names(table.columns, path.name)
    return table


def sheet_names(path: str | os.PathLike) -> list[str]:
    """The worksheet names of an XLSX file, in workbook order."""
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(path, read_only=True)
    except Exception as error:  # openpyxl raises many types for a broken file
        raise MicroaggError(f"Could not open '{Path(path).name}' as XLSX: "
                            f"{first_line(error)}") from None
    try:
        return list(workbook.sheetnames)
    finally:
        workbook.close()


def _read_xlsx(path: Path, sheet: str | int | None) -> pd.DataFrame:
    names = sheet_names(path)
    if sheet is None:
        sheet = names[0]
    elif isinstance(sheet, str) and sheet not in names:
        raise MicroaggError(
            f"'{path.name}' has no sheet '{sheet}'. Its sheets: {', '.join(names)}."
        )
    # pandas opens the workbook with openpyxl in read-only, values-only mode.
    return pd.read_excel(path, sheet_name=sheet, engine="openpyxl")


def _read_csv(path: Path) -> pd.DataFrame:
    with open(path, "rb") as handle:
        sample = handle.read(_SAMPLE_BYTES)
    if not sample.strip():
        raise MicroaggError(f"'{path.name}' is empty.")
    if b"\x00" in sample:
        raise MicroaggError(f"'{path.name}' is not a text file (it contains NUL bytes).")
    encoding = _detect_encoding(sample)
    text = sample.decode(encoding, errors="replace")
    delimiter = _detect_delimiter(text, path)
    decimal = "," if delimiter == ";" and _uses_decimal_comma(text, delimiter) else "."
    header = next(csv.reader(io.StringIO(text), delimiter=delimiter), [])
    _unique_names(header, path.name)  # pandas would silently rename a repeated name
    # pandas >= 3 parses floats round-trip: a masked value written by us reads back bit
    # for bit, so the verifier's equivalence classes are the same after a CSV export.
    return pd.read_csv(path, sep=delimiter, encoding=encoding, decimal=decimal,
                       skipinitialspace=True)


def _detect_encoding(sample: bytes) -> str:
    if sample.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    try:
        sample.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as error:
        # A sample cut in the middle of a multi-byte character is still UTF-8.
        if error.start >= len(sample) - 3 and error.reason == "unexpected end of data":
            return "utf-8"
        return "latin-1"


def _detect_delimiter(text: str, path: Path) -> str:
    lines = [line for line in text.splitlines()[:50] if line.strip()]
    if len(lines) > 1 and len(text) >= _SAMPLE_BYTES:
        lines = lines[:-1]  # the last line of a cut sample may be partial
    best, best_score = ",", (0, 0)
    for delimiter in _DELIMITERS:
        rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter))
        widths = [len(row) for row in rows]
        if not widths or widths[0] < 2:
            continue
        consistent = sum(w == widths[0] for w in widths)
        score = (consistent, widths[0])
        if score > best_score:
            best, best_score = delimiter, score
    return best


def _uses_decimal_comma(text: str, delimiter: str) -> bool:
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))[1:20]
    cells = [cell.strip() for row in rows for cell in row if cell.strip()]
    comma_numbers = [c for c in cells if _is_number(c.replace(",", ".", 1)) and "," in c]
    return bool(comma_numbers) and not any("." in c and _is_number(c) for c in cells)


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _unique_names(columns: Iterable, file_name: str) -> list[str]:
    names = [str(c).strip() for c in columns]
    for i, name in enumerate(names):
        if not name or name.startswith("Unnamed: "):
            names[i] = f"column_{i + 1}"
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise MicroaggError(
                f"'{file_name}' has two columns named '{name}'. Rename one of them."
            )
        seen.add(name)
    return names


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
