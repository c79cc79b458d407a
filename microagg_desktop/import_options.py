"""The import settings a user can give for a file (Qt-free; :mod:`.import_dialog` binds it).

Everything left at "detect" is detected by :func:`core.io.read_table_with_report`; a value
given here always wins over detection, so a user can always say what the file is. The
dialog's first choice of each setting shows what detection found
(:func:`detected_label`: ``'semicolon ; (detected)'``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["DECIMALS", "DELIMITERS", "DETECT", "ENCODINGS", "THOUSANDS", "ImportOptions",
           "describe_value", "detected_label"]

DETECT = "detect"
DELIMITERS = {DETECT: None, "comma ,": ",", "semicolon ;": ";", "tab": "\t", "bar |": "|"}
DECIMALS = {DETECT: None, "point .": ".", "comma ,": ","}
THOUSANDS = {DETECT: None, "none": "", "point .": ".", "comma ,": ",", "space": " ",
             "apostrophe '": "'"}
ENCODINGS = {DETECT: None, "UTF-8": "utf-8", "Latin-1 (ISO 8859-1)": "latin-1",
             "Windows-1252": "cp1252", "UTF-16": "utf-16"}
_CHOICES = {"delimiter": DELIMITERS, "decimal": DECIMALS, "thousands": THOUSANDS,
            "encoding": ENCODINGS}
_SOURCES = {"detected": "detected", "default": "default"}


def describe_value(setting: str, value) -> str:
    """The label of ``value`` among the choices of ``setting`` (the value itself if none).

    >>> describe_value("delimiter", ";")
    'semicolon ;'
    >>> describe_value("thousands", None)
    'none'
    """
    choices = _CHOICES.get(setting, {})
    if setting == "thousands" and value is None:
        value = ""
    for label, known in choices.items():
        if label != DETECT and known == value:
            return label
    return "none" if value in (None, "") else str(value)


def detected_label(setting: str, entry: dict | None) -> str:
    """The text of a setting's "detect" choice, given the read's ``settings[setting]``.

    >>> detected_label("delimiter", {"value": ";", "source": "detected"})
    'semicolon ; (detected)'
    >>> detected_label("decimal", None)
    'detect'
    """
    if not entry or entry.get("source") not in _SOURCES:
        return DETECT
    return f"{describe_value(setting, entry.get('value'))} ({_SOURCES[entry['source']]})"


@dataclass
class ImportOptions:
    """What the user says about a file; ``None`` (or 0 rows) means "detect".

    Attributes
    ----------
    delimiter, decimal, thousands, encoding : str or None
        ``thousands=""`` says the file has no thousands separator.
    skip_rows : int
        Lines to skip before the header (a title above it).
    header_row : int or None
        The 1-based line of the header; an alternative to ``skip_rows``.
    sheet : str or None
        The worksheet of a workbook.
    """

    delimiter: str | None = None
    decimal: str | None = None
    thousands: str | None = None
    encoding: str | None = None
    skip_rows: int = 0
    header_row: int | None = None
    sheet: str | None = None

    def as_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`core.io.read_table_with_report` (only given ones)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if getattr(self, f.name) is not None}
        if not out.get("skip_rows"):
            out.pop("skip_rows", None)
        if "header_row" in out:
            out.pop("skip_rows", None)  # the header line says it all
        return out
