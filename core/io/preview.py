"""The first rows of a file as they would be read with given options: an import preview.

:func:`preview_table` reads only the head of a text file (the part detection looks at,
so what is detected is what the whole read detects), the first records of an SPSS, SAS
or Stata file, and one sheet of a workbook. It never raises for the file or the options:
a problem is the :attr:`Preview.error` sentence, so a dialog can show it while the user
changes the options.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core.errors import MicroaggError
from core.io.csv_dialect import SAMPLE_BYTES, detect_encoding, sniff
from core.io.number_format import describe_separator
from core.io.read import first_line, read_table_with_report, sheet_names
from core.io.read_stat import STAT_SUFFIXES

__all__ = ["Preview", "preview_table", "file_kind"]

_TEXT, _EXCEL = (".csv", ".tsv", ".txt"), (".xlsx", ".xlsm")
# Twice the detection sample: the head holds the whole sample the full read looks at.
_HEAD_BYTES = 2 * SAMPLE_BYTES


def file_kind(path: str | os.PathLike) -> str:
    """``'text'``, ``'workbook'``, ``'stata'``, ``'spss'``, ``'sas'`` or ``'unknown'``."""
    suffix = Path(path).suffix.lower()
    if suffix in _TEXT:
        return "text"
    if suffix in _EXCEL:
        return "workbook"
    if suffix == ".dta":
        return "stata"
    if suffix in STAT_SUFFIXES:
        return "spss" if suffix in (".sav", ".zsav") else "sas"
    return "unknown"


@dataclass(frozen=True)
class Preview:
    """What reading a file with some options gives, in a few rows.

    Attributes
    ----------
    table : DataFrame or None, shape (<= rows, n_columns)
        The first rows as read; ``None`` when :attr:`error` is set.
    settings : dict
        :attr:`core.io.ReadReport.settings`: each ``{"value", "source"}``, the source
        ``"detected"``, ``"given"``, ``"default"`` or ``"not applicable"``.
    notes : tuple of str
        The reader's notes on these rows.
    sheets : tuple of str
        A workbook's sheet names, in order; empty for other files.
    error : str or None
        Why the file does not read with these options (one sentence saying what to do).
    kind : str
        :func:`file_kind` of the file.
    """

    table: pd.DataFrame | None
    settings: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    sheets: tuple[str, ...] = ()
    error: str | None = None
    kind: str = "unknown"

    @property
    def ok(self) -> bool:
        """True when the options read the file."""
        return self.error is None


def preview_table(path: str | os.PathLike, *, rows: int = 50, **read_options) -> Preview:
    """The first ``rows`` records of ``path`` read with ``read_options``.

    Parameters
    ----------
    path : str or path-like
        Any file :func:`core.io.read_table` reads.
    rows : int
        How many records to show.
    **read_options
        The keyword options of :func:`core.io.read_table_with_report` (``delimiter``,
        ``decimal``, ``thousands``, ``encoding``, ``skip_rows``, ``header_row``,
        ``sheet``); ``None`` means detect.

    Returns
    -------
    Preview
        Never raises :class:`~core.errors.MicroaggError`: its message is
        :attr:`Preview.error`.

    Examples
    --------
    >>> preview = preview_table("eu.csv", delimiter=",")  # doctest: +SKIP
    >>> preview.error  # doctest: +SKIP
    "With ',' as column separator every line of 'eu.csv' is one column; ..."
    """
    path = Path(path)
    kind = file_kind(path)
    options = {k: v for k, v in read_options.items() if v is not None}
    sheets: tuple[str, ...] = ()
    try:
        if kind == "workbook":
            sheets = tuple(sheet_names(path))
        if kind == "text" and path.is_file() and path.stat().st_size > _HEAD_BYTES:
            table, report = _read_head(path, options)
        else:
            table, report = read_table_with_report(path, rows=rows, **options)
        if kind == "text":
            _check_one_column(path, table, options)
    except MicroaggError as error:
        return Preview(None, {}, (), sheets, str(error), kind)
    except Exception as error:  # noqa: BLE001 - a preview shows, it never crashes
        return Preview(None, {}, (), sheets, f"Could not read '{path.name}': "
                       f"{first_line(error)}", kind)
    return Preview(table.iloc[:rows], report.settings, report.notes, sheets, None, kind)


def _read_head(path: Path, options: dict):
    """Read a copy of the file's head under the same name (messages name the file)."""
    with open(path, "rb") as handle:
        head = handle.read(_HEAD_BYTES)
    mark = b"\n\x00" if head.startswith((b"\xff\xfe", b"\xfe\xff")) else b"\n"
    if head.startswith(b"\xfe\xff"):
        mark = b"\x00\n"
    cut = head.rfind(mark)
    if mark == b"\n":
        cut = max(cut, head.rfind(b"\r"))
    head = head[:cut + len(mark)] if cut > 0 else head
    detected = None
    if options.get("encoding") is None:
        # The whole file decides between Latin-1 and Windows-1252 (a euro sign below the
        # head): read the head with what the whole read will use, and say so.
        detected = detect_encoding(path)
        options = {**options, "encoding": detected}
    with tempfile.TemporaryDirectory(prefix="microagg-preview-") as folder:
        copy = Path(folder) / path.name
        copy.write_bytes(head)
        table, report = read_table_with_report(copy, **options)
    if detected is not None:
        report.settings["encoding"] = {"value": report.settings["encoding"]["value"],
                                       "source": "detected"}
    return table, report


def _check_one_column(path: Path, table: pd.DataFrame, options: dict) -> None:
    """A given delimiter that leaves one column is most likely the wrong one: say so."""
    given = options.get("delimiter")
    if given is None or table.shape[1] != 1:
        return
    try:
        detected = sniff(path, encoding=options.get("encoding"),
                         skip_rows=_skip(options)).delimiter
    except MicroaggError:
        return
    if detected != given:
        raise MicroaggError(
            f"With {describe_separator(given)} as column separator every line of "
            f"'{path.name}' is one column; the file looks separated by "
            f"{describe_separator(detected)}. Choose that separator (or 'detect').")


def _skip(options: dict) -> int | None:
    if options.get("header_row") is not None:
        return options["header_row"] - 1
    return options.get("skip_rows")
