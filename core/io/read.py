"""Reading a table from a file: read right, or refused with a message naming the file.

Formats: CSV/TSV/TXT (:mod:`core.io.read_text`: encoding, delimiter, header line and each
column's decimal mark and thousands separator detected or given), XLSX/XLSM
(:mod:`core.io.read_xlsx`: a named sheet, the first by default), Stata ``.dta``, SPSS
``.sav``/``.zsav`` and SAS ``.sas7bdat``/``.xpt`` (:mod:`core.io.read_stat`; value labels
become categories). The input file is only ever opened for reading.

Every problem raises :class:`~core.errors.MicroaggError` (no other exception type leaves
this module) with one line in the user's terms: the file, and the line, column, cell or
option at fault. :func:`read_table_with_report` also says what was detected
(:class:`~core.io.read_report.ReadReport`), so it can be repeated with explicit options.
"""

from __future__ import annotations

import codecs
import os
import struct
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import Cancelled, MicroaggError
from core.io.number_format import DECIMALS, SPACES, THOUSANDS, describe_separator
from core.io.read_report import ReadReport, Recorder, column_names
from core.io.read_stat import STAT_SUFFIXES, describe_kind, labelled, read_stat
from core.io.read_text import read_text
from core.io.read_xlsx import read_xlsx
from core.io.read_xlsx import sheet_names as _sheet_names
from core.progress import TaskState

__all__ = ["read_table", "read_table_with_report", "ReadReport", "sheet_names",
           "READABLE_SUFFIXES", "first_line"]

READABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".xlsx", ".xlsm", ".dta") + STAT_SUFFIXES
_TEXT, _EXCEL = (".csv", ".tsv", ".txt"), (".xlsx", ".xlsm")
_KINDS = {".xlsx": "an Excel workbook", ".xlsm": "an Excel workbook", ".dta": "a Stata file",
          **{suffix: describe_kind(suffix) for suffix in STAT_SUFFIXES}}
_STATA_OLD = range(104, 120)  # the first byte of formats 104-119 before the XML-like ones


def read_table(path: str | os.PathLike, *, sheet: str | int | None = None,
               delimiter: str | None = None, decimal: str | None = None,
               thousands: str | None = None, encoding: str | None = None,
               skip_rows: int | None = None, header_row: int | None = None,
               state: TaskState | None = None) -> pd.DataFrame:
    """Read a table; :func:`read_table_with_report` without the report.

    Examples
    --------
    >>> table = read_table("survey.csv", decimal=",", thousands=".")  # doctest: +SKIP
    """
    return read_table_with_report(
        path, sheet=sheet, delimiter=delimiter, decimal=decimal, thousands=thousands,
        encoding=encoding, skip_rows=skip_rows, header_row=header_row, state=state)[0]


def read_table_with_report(path: str | os.PathLike, *, sheet: str | int | None = None,
                           delimiter: str | None = None, decimal: str | None = None,
                           thousands: str | None = None, encoding: str | None = None,
                           skip_rows: int | None = None, header_row: int | None = None,
                           state: TaskState | None = None, rows: int | None = None
                           ) -> tuple[pd.DataFrame, ReadReport]:
    """Read a table and report the settings used and what was noticed.

    Parameters
    ----------
    path : str or path-like
        A file with one of the :data:`READABLE_SUFFIXES`.
    sheet : str or int, optional
        Workbook sheet, by name or 0-based position; the first by default. Ignored for
        other files (a command may read a CSV and a workbook with the same options).
    delimiter : str, optional
        One character; detected among ``,`` ``;`` tab ``|`` by default.
    decimal : {'.', ','}, optional
        The decimal mark. Detected per file from the numbers that show it; a column whose
        numbers read differently with either mark (``50.900``) is refused when it cannot
        be told.
    thousands : str, optional
        The thousands separator (``.``, ``,``, space, ``'``, no-break or narrow no-break
        space), ``''`` for none. Detected per column by default.
    encoding : str, optional
        Any Python codec name. Detected by default: byte-order mark (UTF-8, UTF-16,
        UTF-32), else UTF-8, else Latin-1.
    skip_rows : int, optional
        Lines (sheet rows) before the header; a title line is refused unless given.
    header_row : int, optional
        The 1-based line (sheet row) of the header: ``skip_rows = header_row - 1``.
    state : TaskState, optional
        Receives the fraction read (bytes of a text file, rows of a sheet) and stops the
        read with :class:`~core.errors.Cancelled` when cancelled. The table is the same
        with or without it.
    rows : int, optional
        Keep only the first ``rows`` records, reading no more of an SPSS, SAS or Stata
        file than that (:func:`core.io.preview.preview_table` uses it).

    Returns
    -------
    table : DataFrame, shape (n_records, n_columns)
        Unique, stripped column names; numbers as int64/float64.
    report : ReadReport
        ``settings`` (each ``{"value", "source"}``) and ``notes``.

    Examples
    --------
    >>> table, report = read_table_with_report("eu.csv")  # doctest: +SKIP
    >>> report.settings["decimal"]  # doctest: +SKIP
    {'value': ',', 'source': 'detected'}
    """
    given = dict(delimiter=delimiter, decimal=decimal, thousands=thousands,
                 encoding=encoding)
    skip_rows = _validate(sheet, given, skip_rows, header_row)
    try:
        path = Path(path)
        name = path.name or str(path)
    except TypeError:
        raise MicroaggError(f"path must be a file name; got {type(path).__name__}.") from None
    suffix = path.suffix.lower()
    recorder = Recorder()
    try:
        _check_path(path, suffix)
        if suffix in _TEXT:
            table = read_text(path, encoding=encoding, delimiter=delimiter, decimal=decimal,
                              thousands=thousands, skip_rows=skip_rows, recorder=recorder,
                              state=state)
            if sheet is not None:
                recorder.note("The sheet option does not apply to a text file; ignored.")
        else:
            for option, value in given.items():
                if value is not None:
                    recorder.note(f"The {option} option does not apply to {_KINDS[suffix]}; "
                                  "ignored.")
            if state is not None:
                state.step(0.0, f"Reading {name}")
            if suffix in _EXCEL:
                table = read_xlsx(path, sheet=sheet, skip_rows=skip_rows, recorder=recorder,
                                  state=state)
            else:
                if skip_rows is not None:
                    recorder.note("The header row options do not apply to "
                                  f"{_KINDS[suffix]}; ignored.")
                table = (read_stat(path, recorder=recorder, rows=rows)
                         if suffix in STAT_SUFFIXES else _read_stata(path, recorder, rows))
                _empty_text_as_missing(table, _KINDS[suffix], recorder)
        if rows is not None:
            table = table.iloc[:rows]
        _infinite_note(table, recorder)
        if state is not None:
            state.step(1.0, f"Read {name}")
    except (MicroaggError, Cancelled):
        raise
    except MemoryError:
        raise MicroaggError(f"'{name}' is too large to read into memory.") from None
    except OSError as error:
        raise MicroaggError(f"Could not read '{name}': "
                            f"{error.strerror or first_line(error)}.") from None
    except Exception as error:  # noqa: BLE001 - the last guard: only our type leaves
        raise MicroaggError(f"Could not read '{name}': {first_line(error)}") from None
    if table.shape[1] == 0 or len(table) == 0:
        raise MicroaggError(f"'{name}' has no data rows.")
    table.columns = column_names(table.columns, name)
    return table, recorder.report()


def sheet_names(path: str | os.PathLike) -> list[str]:
    """The worksheet names of an XLSX file, in workbook order."""
    path = Path(path)
    try:
        _check_path(path, path.suffix.lower())
        return _sheet_names(path)
    except MicroaggError:
        raise
    except Exception as error:
        raise MicroaggError(f"Could not open '{path.name}' as XLSX: "
                            f"{first_line(error)}") from None


def first_line(error: BaseException) -> str:
    """The first line of an exception's message (its type name when it has none)."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _validate(sheet, given: dict, skip_rows, header_row) -> int | None:
    """Check the options once; the number of lines before the header (or ``None``)."""
    delimiter, decimal, thousands, encoding = given.values()
    if sheet is not None and (isinstance(sheet, bool) or not isinstance(sheet, (str, int))
                              or (isinstance(sheet, int) and sheet < 0)):
        _invalid("sheet", "a sheet name or a position from 0", sheet)
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1
                                  or delimiter in '"\r\n' or delimiter.isalnum()):
        _invalid("delimiter", "one character such as ',', ';', '\\t' or '|'", delimiter)
    if decimal is not None and (not isinstance(decimal, str) or decimal not in DECIMALS):
        _invalid("decimal", "'.' or ','", decimal)
    if thousands is not None and (not isinstance(thousands, str)
                                  or thousands not in THOUSANDS + tuple(SPACES) + ("",)):
        allowed = ", ".join(describe_separator(t) for t in THOUSANDS)
        _invalid("thousands", f"one of {allowed}, or '' for none", thousands)
    if decimal is not None and decimal == thousands:
        raise MicroaggError(f"decimal and thousands must differ; both are '{decimal}'.")
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except (LookupError, TypeError):
            _invalid("encoding", "a known encoding such as utf-8, latin-1, cp1252 or "
                     "utf-16", encoding)
    for option, value, lowest in (("skip_rows", skip_rows, 0), ("header_row", header_row, 1)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < lowest):
            _invalid(option, f"a whole number from {lowest}", value)
    if skip_rows is not None and header_row is not None:
        raise MicroaggError("Give skip_rows or header_row, not both (header_row N is "
                            "skip_rows N-1).")
    return header_row - 1 if header_row is not None else skip_rows


def _invalid(option: str, allowed: str, received) -> None:
    raise MicroaggError(f"{option} must be {allowed}; got {received!r}.")


def _check_path(path: Path, suffix: str) -> None:
    if path.is_dir():
        raise MicroaggError(f"'{path}' is a folder, not a table file. Choose a file inside "
                            f"it ({', '.join(READABLE_SUFFIXES)}).")
    if not path.exists():
        raise MicroaggError(f"File '{path}' does not exist.")
    if suffix not in READABLE_SUFFIXES:
        raise MicroaggError(f"'{path.name}': unsupported file type '{suffix or '(none)'}'. "
                            f"Use one of: {', '.join(READABLE_SUFFIXES)}.")


def _empty_text_as_missing(table: pd.DataFrame, kind: str, recorder) -> None:
    """Empty text is a missing string value in Stata, SPSS and SAS files (SAS pads
    text with blanks): it becomes missing, with a note per column, so that it meets the
    run's missing-value rule instead of becoming a category "" that an export writes
    as an empty cell."""
    for name in table.columns:
        column = table[name]
        if column.dtype != object and not pd.api.types.is_string_dtype(column):
            continue
        empty = column.map(lambda v: isinstance(v, str) and not v.strip()).to_numpy(bool)
        if empty.any():
            table[name] = column.mask(empty)
            first = int(np.flatnonzero(empty)[0])
            recorder.note(f"Column '{name}' has {int(empty.sum()):,} empty text value(s) "
                          f"(the first at data row {first + 1}), which {kind} uses for "
                          "a missing string: they are read as missing values.")


def _infinite_note(table: pd.DataFrame, recorder) -> None:
    """A note per column of numbers holding an infinite value: a number written beyond
    the largest a float holds (``1e400``) is read as infinity, as is ``inf``, and would
    otherwise be released as ``inf`` without a word (a quasi-identifier refuses it)."""
    for name in table.columns:
        column = table[name]
        if column.dtype.kind != "f":
            continue
        infinite = np.isinf(column.to_numpy())
        if infinite.any():
            first = int(np.flatnonzero(infinite)[0])
            recorder.note(f"Column '{name}' has {int(infinite.sum()):,} infinite value(s) "
                          f"(the first at data row {first + 1}): a number beyond the "
                          "largest a computer holds (about 1.8e308, such as 1e400), or "
                          "'inf'. Such values are kept as infinity; replace them if they "
                          "are errors.")


def _read_stata(path: Path, recorder, rows: int | None = None) -> pd.DataFrame:
    truncated = MicroaggError(f"'{path.name}' is not a complete Stata file: it is truncated "
                              "(it ends before the data it declares). Copy or export it "
                              "again from Stata.")
    with open(path, "rb") as handle:
        head = handle.read(11)
        if head == b"<stata_dta>":  # formats 117-119 close with a tag: check it is there
            handle.seek(max(0, path.stat().st_size - 64))
            if not handle.read().rstrip().endswith(b"</stata_dta>"):
                raise truncated
        elif len(head) < 4 or head[0] not in _STATA_OLD or head[1] not in (1, 2):
            # The old formats start: release, byte order (1 high-low, 2 low-high), ...
            raise MicroaggError(f"'{path.name}' is not a Stata file (.dta): it is damaged "
                                "or another kind of file. Save it again from Stata, or "
                                "export it as CSV.")
    try:
        # pandas warns about what it computes from a damaged header (overflow ...):
        # the damage is reported here, in one sentence, not on the terminal.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if rows is not None:
                with pd.read_stata(path, iterator=True, convert_categoricals=False) as reader:
                    table = reader.read(max(rows, 1))
            else:
                table = pd.read_stata(path, convert_categoricals=False)
    except (struct.error, EOFError):
        raise truncated from None
    except ValueError as error:
        if "buffer is smaller" in str(error):
            raise truncated from None
        raise MicroaggError(f"'{path.name}' could not be read as a Stata file: it is "
                            "damaged.") from None
    return _stata_labels(path, table, recorder)


def _stata_labels(path: Path, table: pd.DataFrame, recorder) -> pd.DataFrame:
    """The value labels of a Stata file applied as an SPSS file's are
    (:func:`core.io.read_stat.labelled`): codes as their labels, an unlabelled code as
    its text (``3``, not ``3.0``), with a note, and a note when two codes share a
    label (pandas refuses such a file)."""
    import pyreadstat

    try:
        _, meta = pyreadstat.read_dta(str(path), metadataonly=True)
        value_labels = getattr(meta, "variable_value_labels", None) or {}
    except Exception:  # noqa: BLE001 - pyreadstat raises plain Exceptions
        # Labels pyreadstat cannot read: pandas' own conversion, as before.
        rows = len(table)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pd.read_stata(path, iterator=True) as reader:
                return reader.read(rows) if rows else reader.read()
    for name, labels in value_labels.items():
        if labels and name in table.columns:  # ordered, as pandas makes them
            table[name] = labelled(table[name], labels, name, recorder, ordered=True)
    return table
