"""A streaming XLSX writer: the workbook's XML written straight into the zip, row by row.

An XLSX file is a zip of XML parts (ECMA-376 Part 1, SpreadsheetML): the content types,
the package and workbook relationships, the workbook with its sheet list, a style sheet
and one part per worksheet. This module writes the minimal valid set of those parts.
Each worksheet's XML is generated a few thousand rows at a time and deflated into the
zip as it goes, so memory does not grow with the rows, and a cell costs a few string
operations: several times faster than building a cell object per value (openpyxl's
write-only mode, the reference in the tests, gives the same cells).

Cells:

- text (header included) is an inline string (``t="inlineStr"``): always text, never
  a formula, with leading and trailing spaces kept (``xml:space="preserve"``) and
  control characters in Excel's ``_xHHHH_`` escape (:func:`core.io.cells.escape_control`);
- numbers are numeric cells with every digit: a float in its shortest round-trip form
  (``repr``), an integer in full even beyond 2**53 (Excel shows 15 digits; the file
  holds them all), in a column of nullable integers too (whole numbers beside empty
  cells, as the reader keeps household numbers of 17 digits);
- booleans are boolean cells; a date-time is Excel's serial day number with the style
  ``yyyy-mm-dd hh:mm:ss`` (a time-zone-aware value is written as its wall-clock time;
  January and February 1900 allow for Excel's 29 February 1900, and a date before 1900,
  which Excel's date system cannot hold, is written as its text, ``1850-06-01``);
- a missing value (NaN, None, NaT, ±inf) or an empty text is no cell at all.

Anything else in an object column (a ``Decimal``, a time span, a numpy scalar other than
a float) is written as its text, as before.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import zipfile
from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.io.cells import escape_control

__all__ = ["write_xlsx"]

_ROWS_PER_CHUNK = 4096
_ZIP64_CELLS = 16_000_000  # at ~250 bytes of XML per cell, 4 GB
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_STYLES = (
    f'{_HEAD}<styleSheet xmlns="{_MAIN}">'
    '<numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd hh:mm:ss"/></numFmts>'
    '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill>'
    '<fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '</cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/>'
    '</cellStyles></styleSheet>')
_EPOCH = dt.datetime(1899, 12, 30)  # Excel's day 0 in the 1900 date system (after 1900-03-01)
_FIRST_DAY = pd.Timestamp(1900, 1, 1)  # day 1: no earlier day has a serial number
_LEAP_DAY_AFTER = pd.Timestamp(1900, 3, 1)  # day 61: before it, one day less (no 1900-02-29)
# XML 1.0 cannot hold these at all; Excel's escape keeps them as text.
_UNREPRESENTABLE = re.compile("[\ud800-\udfff\ufffe\uffff]")
_BAD_SHEET_CHARACTERS = re.compile(r"[\\*?:/\[\]]")


def _escape(text: str) -> str:
    text = escape_control(text)
    if _UNREPRESENTABLE.search(text):
        text = _UNREPRESENTABLE.sub(lambda m: f"_x{ord(m.group(0)):04X}_", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _text(value: str) -> str | None:
    if not value:
        return None  # as openpyxl wrote it: an empty text cell reads back as missing
    return f' t="inlineStr"><is><t xml:space="preserve">{_escape(value)}</t></is></c>'


def _number(value: float) -> str | None:
    return f"><v>{value!r}</v></c>" if math.isfinite(value) else None


def _generic(value) -> str | None:
    """A cell of an object column: the old writer's rules (numbers, booleans, text)."""
    if value is None:
        return None
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(value, bool):
        return f' t="b"><v>{int(value)}</v></c>'
    if isinstance(value, int):
        return f"><v>{value}</v></c>"
    if isinstance(value, float):
        return _number(value)
    return _text(str(value))


def _serial(stamp: pd.Timestamp) -> str:
    """A date-time's cell: its serial day number in Excel's 1900 date system, which
    counts a 29 February 1900 that never was (day 60), so a day before 1900-03-01 is one
    less than its distance from day 0; a date-time before 1900, which that system cannot
    hold, as its text (``1850-06-01``, the time only when there is one)."""
    moment = stamp.tz_localize(None) if stamp.tzinfo is not None else stamp
    if moment < _FIRST_DAY:
        return _text(moment.date().isoformat() if moment == moment.normalize()
                     else moment.isoformat())
    days = (moment.to_pydatetime() - _EPOCH) / dt.timedelta(days=1)
    if moment < _LEAP_DAY_AFTER:
        days -= 1
    return f' s="1"><v>{days!r}</v></c>'


def _cells(series: pd.Series) -> list:
    """The tail of every cell's XML (after ``<c r="A1"``), or None for no cell."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object)
    if pd.api.types.is_bool_dtype(series):
        return [None if pd.isna(v) else f' t="b"><v>{int(bool(v))}</v></c>' for v in series]
    if pd.api.types.is_integer_dtype(series):
        if not series.isna().any():
            return [f"><v>{v}</v></c>" for v in series.tolist()]
        # Nullable integers with missing values: each its own digits, never a float's.
        return [None if v is pd.NA else f"><v>{v}</v></c>" for v in series.tolist()]
    if pd.api.types.is_numeric_dtype(series):
        return [_number(v) for v in
                series.to_numpy(dtype=np.float64, na_value=np.nan).tolist()]
    if pd.api.types.is_datetime64_any_dtype(series):
        return [None if pd.isna(v) else _serial(v) for v in series]
    return [_generic(v) for v in series.tolist()]


def _letters(j: int) -> str:
    name = ""
    j += 1
    while j:
        j, rest = divmod(j - 1, 26)
        name = chr(65 + rest) + name
    return name


def _write_sheet(handle, frame: pd.DataFrame, widths: Sequence[float], wrote) -> None:
    """The worksheet XML of ``frame``; ``wrote(rows)`` after each chunk of rows."""
    letters = [_letters(j) for j in range(frame.shape[1])]
    cols = "".join(f'<col min="{j}" max="{j}" width="{w}" customWidth="1"/>'
                   for j, w in enumerate(widths, start=1))
    header = "".join(f'<c r="{letter}1"{_text(str(c))}'
                     for letter, c in zip(letters, frame.columns) if str(c))
    handle.write((f'{_HEAD}<worksheet xmlns="{_MAIN}">'
                  + (f"<cols>{cols}</cols>" if cols else "")
                  + f'<sheetData><row r="1">{header}</row>').encode("utf-8"))
    for first in range(0, len(frame), _ROWS_PER_CHUNK):
        chunk = frame.iloc[first:first + _ROWS_PER_CHUNK]
        columns = [_cells(chunk.iloc[:, j]) for j in range(chunk.shape[1])]
        rows = []
        for offset, cells in enumerate(zip(*columns)):
            r = first + offset + 2
            rows.append(f'<row r="{r}">' + "".join(
                f'<c r="{letter}{r}"{cell}' for letter, cell in zip(letters, cells)
                if cell is not None) + "</row>")
        handle.write("".join(rows).encode("utf-8"))
        wrote(len(chunk))
    handle.write(b"</sheetData></worksheet>")


def _sheet_names(names: Sequence[str]) -> list[str]:
    """Names Excel accepts: no ``\\ * ? : / [ ]``, at most 31 characters, all different."""
    out: list[str] = []
    for name in names:
        base = _BAD_SHEET_CHARACTERS.sub("_", str(name))[:31] or "Sheet"
        candidate, number = base, 1
        while candidate.lower() in (o.lower() for o in out):
            number += 1
            candidate = f"{base[:31 - len(str(number))]}{number}"
        out.append(candidate)
    return out


def write_xlsx(path: str, sheets: Sequence[tuple[str, pd.DataFrame, Sequence[float]]],
               *, compresslevel: int = 6, progress=None) -> None:
    """Write ``(name, frame, column widths)`` sheets to a new XLSX file at ``path``.

    ZIP64 headers are written only for a sheet whose XML could pass 4 GB (more than
    ``_ZIP64_CELLS`` cells), since some spreadsheet programs refuse them where they are
    not needed; should a smaller sheet still pass 4 GB, the file is written again with
    them on every sheet. ``progress(fraction)`` is called with the share of all the
    sheets' rows written, after each chunk of rows (an exception there stops the write).
    """
    try:
        _write(path, sheets, compresslevel, force_zip64=False, progress=progress)
    except RuntimeError as error:  # zipfile: "File size too large, try using force_zip64"
        if "zip64" not in str(error).lower():
            raise
        _write(path, sheets, compresslevel, force_zip64=True, progress=progress)


def _write(path, sheets, compresslevel: int, *, force_zip64: bool, progress) -> None:
    total = max(sum(len(frame) for _, frame, _ in sheets), 1)
    written = [0]

    def wrote(rows: int) -> None:
        written[0] += rows
        if progress is not None:
            progress(written[0] / total)

    names = _sheet_names([name for name, _, _ in sheets])
    parts = "".join(
        f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
        for i in range(1, len(sheets) + 1))
    content_types = (
        f'{_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="rels" ContentType="application/'
        'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.'
        'sheet.main+xml"/><Override PartName="/xl/styles.xml" ContentType="application/'
        f'vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>{parts}</Types>')
    package_rels = (f'{_HEAD}<Relationships xmlns="{_PKG}"><Relationship Id="rId1" '
                    f'Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>')
    workbook = (f'{_HEAD}<workbook xmlns="{_MAIN}" xmlns:r="{_REL}"><sheets>' + "".join(
        f'<sheet name="{_escape(name).replace(chr(34), "&quot;")}" sheetId="{i}" '
        f'r:id="rId{i}"/>' for i, name in enumerate(names, start=1)) + "</sheets></workbook>")
    workbook_rels = (f'{_HEAD}<Relationships xmlns="{_PKG}">' + "".join(
        f'<Relationship Id="rId{i}" Type="{_REL}/worksheet" '
        f'Target="worksheets/sheet{i}.xml"/>' for i in range(1, len(sheets) + 1))
        + f'<Relationship Id="rId{len(sheets) + 1}" Type="{_REL}/styles" '
        'Target="styles.xml"/></Relationships>')
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED,
                         compresslevel=compresslevel) as archive:
        archive.writestr("[Content_Types].xml", content_types)
        archive.writestr("_rels/.rels", package_rels)
        archive.writestr("xl/workbook.xml", workbook)
        archive.writestr("xl/_rels/workbook.xml.rels", workbook_rels)
        archive.writestr("xl/styles.xml", _STYLES)
        for i, (_, frame, widths) in enumerate(sheets, start=1):
            big = force_zip64 or frame.size > _ZIP64_CELLS
            with archive.open(f"xl/worksheets/sheet{i}.xml", "w", force_zip64=big) as out:
                _write_sheet(out, frame, widths, wrote)
