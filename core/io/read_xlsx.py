"""Reading an Excel workbook (.xlsx, .xlsm): one sheet, header found, error cells refused.

python-calamine (Rust, what ``read_excel(engine="calamine")`` uses) reads the sheet; the
cells are converted as pandas' ``read_excel`` converts them (whole numbers as ints, dates
as datetimes), and pandas' ``TextParser`` (what ``read_excel`` itself uses) infers the
column types. calamine reports an error cell (``#DIV/0!``, ``#N/A``, ...) as an empty
cell and parses every number as a float, so openpyxl (read-only, once) reads the sheet
instead when the package holds an error cell (``t="e"``) or calamine shows a number
beyond 2**53 (an integer openpyxl keeps exactly); openpyxl then collects the error cells
for the message. calamine does not see empty rows after the table, so the note about
dropped trailing rows comes from the openpyxl reading only. A workbook that is not a ZIP package
(a password-protected one is an encrypted OLE file; an old ``.xls`` renamed) is named for
what it is before openpyxl sees it.

The parser turns text cells that look like numbers into numbers, as it does a CSV's
fields: a text cell "01" beside a "1" would then be one code. A column whose text cells
hold codes written with leading zeros (00094, or 01.10 beside 01.1) is read as text
instead, as written, with a note (:func:`_text_codes`), as the CSV reader does
(:mod:`core.io.read_text`). What the parser would change is put back
(:mod:`core.io.xlsx_cells`): whole numbers beside empty cells from 2**53 on keep every
digit, TRUE and FALSE beside empty cells stay booleans, and text read as a missing
value ('NA') is named in a note.
"""

from __future__ import annotations

import datetime
import re
import zipfile
from pathlib import Path

import pandas as pd
from pandas.io.parsers import (
    TextParser,  # read_excel's own parser: same types as before
)

from core.errors import MicroaggError
from core.io.read_report import ZERO_LED_CODE, Recorder, column_names
from core.io.xlsx_cells import booleans, exact_integers, missing_marks
from core.progress import TaskState

__all__ = ["read_xlsx", "sheet_names"]

_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED = ("EncryptionInfo".encode("utf-16-le"), "EncryptedPackage".encode("utf-16-le"))
_ERRORS_SHOWN = 5


def sheet_names(path: Path) -> list[str]:
    """The worksheet names of a workbook, in workbook order."""
    workbook = _open_calamine(path)
    try:
        return list(workbook.sheet_names)
    finally:
        workbook.close()


def read_xlsx(path: Path, *, sheet: str | int | None, skip_rows: int | None,
              recorder: Recorder, state: TaskState | None = None,
              engine: str = "calamine") -> pd.DataFrame:
    """Read one sheet; ``skip_rows`` rows before the header (else the first non-empty row).

    ``state`` receives the fraction of the sheet's declared rows read (every 1,000 rows)
    and stops the read with :class:`~core.errors.Cancelled` when cancelled.

    Raises
    ------
    MicroaggError
        For an encrypted or non-workbook file, a missing sheet, an empty first sheet when
        another has data, a title row above the header, or error cells in the table.
    """
    rows = None
    zero_led: set[int] | None = set()  # columns with a text cell that may start with 0
    error_cells, uncomputed = _scan_package(path)
    if engine == "calamine" and not error_cells:
        workbook = _open_calamine(path)
        try:
            names = list(workbook.sheet_names)
            name = _choose_sheet(path, names, sheet)
            rows = _calamine_rows(path, workbook, name, state, zero_led)
            if rows is not None and sheet is None and not rows:
                with_data = [n for n in names[1:] if _calamine_rows(path, workbook, n, None)]
                _refuse_empty_first_sheet(path, names, with_data)
        finally:
            workbook.close()
        errors, trailing = [], 0
    if rows is None:
        zero_led = None  # openpyxl's rows: every numeric column is looked at
        workbook = _open(path)
        try:
            names = list(workbook.sheetnames)
            name = _choose_sheet(path, names, sheet)
            rows, errors, trailing = _sheet_rows(workbook[name], state)
            if sheet is None and not rows:
                _refuse_empty_first_sheet(
                    path, names, [n for n in names[1:] if _has_data(workbook[n])])
        finally:
            workbook.close()
    recorder.set("sheet", name, "given" if sheet is not None else "default")
    start = _header_row(path, name, rows, skip_rows)
    recorder.set("header_line", start + 1, "given" if skip_rows is not None else "detected")
    if start >= len(rows):
        return pd.DataFrame()
    width = max(len(row) for row in rows[start:])
    header = column_names(rows[start] + [""] * (width - len(rows[start])), path.name)
    errors = [e for e in errors if e[0] > start]
    if errors:
        raise MicroaggError(_error_cells_message(path, name, header, errors))
    if uncomputed:
        _refuse_uncomputed(path, name, header, rows, start)
    if trailing:
        rows_word = "row" if trailing == 1 else "rows"
        recorder.note(f"Dropped {trailing} empty {rows_word} at the end of sheet '{name}'.")
    if len(rows) == start + 1:
        return pd.DataFrame(columns=header)
    # The parser renames nothing: names are ours, rows are padded to the header's width.
    body = [row + [""] * (len(header) - len(row)) for row in rows[start + 1:]]
    table = TextParser([header] + body, header=0, skip_blank_lines=False).read()
    for note in _text_codes(header, body, table, zero_led):
        recorder.note(note)
    exact_integers(header, body, table)
    booleans(header, body, table)
    for note in missing_marks(header, body, table):
        recorder.note(note)
    return table


_ZERO_LED_CODE = re.compile(ZERO_LED_CODE)  # 00094, 01.10
_ZERO_STARTS = frozenset("0+-")  # or a space: where either can match


def _text_codes(header: list[str], body: list[list], table: pd.DataFrame,
                zero_led: set[int] | None) -> list[str]:
    """Columns read as numbers that hold a text cell written with a leading zero
    (postcodes, codes such as "01" or "01.10") are read as text instead, every cell as
    written (a number cell as its digits), so that "01" and "1" stay two codes, and
    "01.10" and "01.1"; a note for each.
    Only the columns in ``zero_led`` (a text cell starting with a zero, a sign or a
    space) are looked at, every one when it is None."""
    notes = []
    for j, name in enumerate(header):
        if zero_led is not None and j not in zero_led:
            continue
        column = table[name]
        if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            continue
        cells = [row[j] for row in body]
        first = next((i for i, v in enumerate(cells)
                      if type(v) is str and _ZERO_LED_CODE.fullmatch(v)), None)
        if first is None:
            continue
        present = column.notna().to_numpy()
        table[name] = pd.Series([(v.strip() if type(v) is str else str(v)) if keep else None
                                 for v, keep in zip(cells, present)],
                                index=table.index, dtype=object, name=name)
        notes.append(f"Column '{name}' has text cells written with leading zeros, such as "
                     f"'{cells[first].strip()}' (data row {first + 1}); it is read as text "
                     "(codes) so that no zero is lost and '01' stays apart from '1'. If it "
                     "holds numbers, store them as numbers in the workbook and open it "
                     "again.")
    return notes


def _open_calamine(path: Path):
    _check_package(path)
    from python_calamine import CalamineWorkbook

    try:
        return CalamineWorkbook.from_path(str(path))
    except Exception:  # a damaged package: calamine's own error types
        raise MicroaggError(f"'{path.name}' could not be opened as an Excel workbook: it is "
                            "damaged or was not saved by a spreadsheet program.") from None


# A formula cell with no stored result: <f>...</f> (or a shared <f .../>), then no
# value or an empty one. Formula text has no '<' (XML escapes it).
_UNCOMPUTED = re.compile(rb"<f(?:\s[^>]*)?(?:/>|>[^<]*</f>)\s*(?:<v\s*/>|<v>\s*</v>)?\s*</c>")


def _scan_package(path: Path) -> tuple[bool, bool]:
    """Whether a worksheet has a cell of the error type (``t="e"``), and one with a
    formula but no stored result (written by a program, never opened in Excel)."""
    errors = uncomputed = False
    try:
        with zipfile.ZipFile(path) as archive:
            for part in archive.namelist():
                if part.startswith("xl/worksheets/") and part.endswith(".xml"):
                    with archive.open(part) as stream:
                        tail = b""
                        while block := stream.read(1 << 22):
                            text = tail + block
                            errors = errors or b't="e"' in text or b"t='e'" in text
                            uncomputed = uncomputed or bool(_UNCOMPUTED.search(text))
                            if errors and uncomputed:
                                return True, True
                            tail = text[-1024:]
    except (zipfile.BadZipFile, OSError, KeyError, EOFError, ValueError):
        pass  # the reader that opens it names the damage
    return errors, uncomputed


def _refuse_uncomputed(path: Path, sheet: str, header: list[str], rows: list[list],
                       start: int) -> None:
    """Name the first formula cell below the header that was read as empty."""
    import openpyxl
    from openpyxl.utils import get_column_letter

    workbook = openpyxl.load_workbook(path, read_only=True, data_only=False,
                                      keep_links=False)
    try:
        for number, row in enumerate(workbook[sheet].iter_rows(min_row=start + 2),
                                     start=start + 2):
            read = rows[number - 1] if number <= len(rows) else []
            for column, cell in enumerate(row, start=1):
                if cell.data_type == "f" and (column > len(read) or read[column - 1] == ""):
                    letter = get_column_letter(column)
                    name = header[column - 1] if column <= len(header) else letter
                    raise MicroaggError(
                        f"'{path.name}' sheet '{sheet}' column '{name}' holds formulas "
                        f"without a stored result (the first in cell {letter}{number}): "
                        "the workbook was written by a program and never calculated. "
                        "Open it in Excel (or LibreOffice) and save it, then read it again.")
    finally:
        workbook.close()


_EXACT_LIMIT = 2.0 ** 53


def _calamine_rows(path: Path, workbook, name: str, state: TaskState | None,
                   zero_led: set[int] | None = None) -> list[list] | None:
    """The rows as pandas converts them; ``None`` when a number needs openpyxl. The
    columns of text cells that may be codes with leading zeros go into ``zero_led``."""
    try:
        sheet = workbook.get_sheet_by_name(name)
        if state is not None:
            state.step(0.3, "Reading the rows")  # calamine parsed the sheet at once
        values = sheet.to_python(skip_empty_area=False)
    except Exception:
        raise MicroaggError(f"'{path.name}' sheet '{name}' could not be read: the "
                            "workbook is damaged.") from None
    rows, last = [], -1
    total = max(len(values), 1)
    for number, row in enumerate(values, start=1):
        if state is not None and number % 5000 == 0:
            state.step(min(0.3 + 0.65 * number / total, 0.95), "Reading the rows")
        out = []
        for value in row:
            kind = type(value)
            if kind is float:
                if not -_EXACT_LIMIT < value < _EXACT_LIMIT:
                    if value != value or value in (float("inf"), float("-inf")):
                        out.append(value)
                        continue
                    return None
                whole = int(value)
                out.append(whole if whole == value else value)
            elif kind is int and not -_EXACT_LIMIT < value < _EXACT_LIMIT:
                return None
            elif kind is datetime.date:
                out.append(datetime.datetime(value.year, value.month, value.day))
            else:
                if kind is str and zero_led is not None and (value[:1] in _ZERO_STARTS
                                                             or value[:1].isspace()):
                    zero_led.add(len(out))
                out.append(value)
        while out and out[-1] == "":
            out.pop()
        if out:
            last = number - 1
        rows.append(out)
    return rows[:last + 1]


def _check_package(path: Path) -> None:
    with open(path, "rb") as handle:
        head = handle.read(8)
    if head == _OLE:
        data = path.read_bytes()
        if any(marker in data for marker in _ENCRYPTED):
            raise MicroaggError(
                f"'{path.name}' is password-protected (encrypted), so it cannot be read. "
                "Open it in Excel and save an unprotected copy (File > Info > Protect "
                "Workbook > Encrypt with Password, then clear the password), and read that.")
        raise MicroaggError(
            f"'{path.name}' is an old Excel 97-2003 workbook (.xls) with an .xlsx name. "
            "Open it in Excel and save it as an Excel Workbook (.xlsx).")
    if not head.startswith(b"PK"):
        raise MicroaggError(f"'{path.name}' is not an Excel workbook (.xlsx): it is damaged "
                            "or another kind of file.")


def _open(path: Path):
    _check_package(path)
    import openpyxl

    try:
        return openpyxl.load_workbook(path, read_only=True, data_only=True, keep_links=False)
    except Exception:  # a damaged package raises zipfile, KeyError or XML errors
        raise MicroaggError(f"'{path.name}' could not be opened as an Excel workbook: it is "
                            "damaged or was not saved by a spreadsheet program.") from None


def _choose_sheet(path: Path, names: list[str], sheet: str | int | None) -> str:
    if sheet is None:
        return names[0]
    if isinstance(sheet, int):
        if 0 <= sheet < len(names):
            return names[sheet]
        raise MicroaggError(f"'{path.name}' has no sheet number {sheet} (it has "
                            f"{len(names)}: {', '.join(names)}).")
    if sheet not in names:
        raise MicroaggError(
            f"'{path.name}' has no sheet '{sheet}'. Its sheets: {', '.join(names)}.")
    return sheet


def _sheet_rows(worksheet, state: TaskState | None = None
                ) -> tuple[list[list], list[tuple[int, int, str]], int]:
    """The rows as pandas converts them, the error cells (row, column, text), and the
    number of empty rows dropped at the end."""
    declared = max(worksheet.max_row or 0, 1) if state is not None else 1
    # Declared dimensions can be wrong (pandas GH 39486): let openpyxl find the extent.
    worksheet.reset_dimensions()
    rows, errors, last = [], [], -1
    for number, row in enumerate(worksheet.rows, start=1):
        if state is not None and number % 1000 == 0:
            state.step(min(0.95 * number / declared, 0.95), "Reading the rows")
        values, has_error = [], False
        for column, cell in enumerate(row, start=1):
            value = cell.value
            if value is None:
                values.append("")
            elif cell.data_type == "e":
                errors.append((number, column, str(value)))
                values.append("")
                has_error = True
            elif cell.data_type == "n" and not isinstance(value, bool):
                whole = int(value)
                values.append(whole if whole == value else float(value))
            else:
                values.append(value)
        while values and values[-1] == "":
            values.pop()
        if values or has_error:
            last = number - 1
        rows.append(values)
    return rows[:last + 1], errors, len(rows) - (last + 1)


def _header_row(path: Path, sheet: str, rows: list[list], skip: int | None) -> int:
    start = skip or 0
    filled = [i for i in range(start, len(rows)) if any(v != "" for v in rows[i])]
    if not filled:
        return len(rows)
    first = filled[0]
    count = sum(v != "" for v in rows[first])
    if skip is None and count == 1:
        wide = next((i for i in filled[1:10] if sum(v != "" for v in rows[i]) >= 2), None)
        if wide is not None:
            title = next(v for v in rows[first] if v != "")
            raise MicroaggError(
                f"'{path.name}' sheet '{sheet}' row {first + 1} looks like a title "
                f"('{str(title)[:40]}'), not a header: it has one cell and row {wide + 1} "
                f"has {sum(v != '' for v in rows[wide])}. Pass --skip-rows {wide} to start "
                f"at the header in row {wide + 1} (or --skip-rows {start} to read row "
                f"{first + 1} as the header).")
    return first


def _refuse_empty_first_sheet(path: Path, names: list[str], with_data: list[str]) -> None:
    if with_data:
        raise MicroaggError(
            f"'{path.name}': the first sheet, '{names[0]}', is empty. Its sheets: "
            f"{', '.join(names)}. Choose the sheet with the table, e.g. "
            f"--sheet {_quoted(with_data[0])}.")


def _quoted(name: str) -> str:
    return f'"{name}"' if any(c.isspace() for c in name) else name


def _has_data(worksheet) -> bool:
    for number, row in enumerate(worksheet.iter_rows(values_only=True)):
        if any(value is not None and value != "" for value in row):
            return True
        if number > 1000:
            return False
    return False


def _error_cells_message(path: Path, sheet: str, header: list[str],
                         errors: list[tuple[int, int, str]]) -> str:
    from openpyxl.utils import get_column_letter

    shown = [f"cell {get_column_letter(c)}{r} (column "
             f"'{header[c - 1] if c <= len(header) else get_column_letter(c)}', row {r}): "
             f"{text}" for r, c, text in errors[:_ERRORS_SHOWN]]
    more = f"; and {len(errors) - _ERRORS_SHOWN} more" if len(errors) > _ERRORS_SHOWN else ""
    return (f"'{path.name}' sheet '{sheet}' has error cells (Excel formula errors, not "
            f"values): {'; '.join(shown)}{more}. Fix the formulas or clear those cells in "
            "Excel, then save again.")
