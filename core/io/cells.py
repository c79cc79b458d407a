"""Text a spreadsheet could execute, and how an export makes it inert.

A cell or a column header whose text begins with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return is run as a formula by spreadsheet programs (``=HYPERLINK(...)`` leaks
data, ``=cmd|' /C calc'!A0`` runs a program). The exports never let that happen:

XLSX
    Every text cell is written with the string type: the text is kept exactly and is
    never a formula (:mod:`core.io.write`).
CSV
    Such text gets a leading apostrophe (``'=HYPERLINK(...)``), the usual
    neutralisation; spreadsheet programs show the text and do not run it. Numbers are not
    text: ``-5`` in a numeric column stays ``-5``.

:func:`restore_text` undoes the CSV neutralisation, so the verifier and ``microagg
verify`` compare a released CSV with its original exactly. (Text that itself begins
with apostrophes followed by one of those characters gets one more apostrophe, so the
round trip is exact.)
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

__all__ = ["FORMULA_STARTS", "is_formula_text", "neutralise_text", "restore_text",
           "neutralise_frame", "restore_frame", "escape_control"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def is_formula_text(value) -> bool:
    """True for a ``str`` a spreadsheet would run as a formula."""
    return isinstance(value, str) and value.startswith(FORMULA_STARTS)


def _looks_neutralised(value: str) -> bool:
    return value.startswith("'") and value.lstrip("'").startswith(FORMULA_STARTS)


def neutralise_text(value):
    """``'`` + ``value`` for formula-like text; anything else unchanged.

    Text that already looks neutralised (``'=x``) gets one more apostrophe, so
    :func:`restore_text` gives back exactly the original.

    Examples
    --------
    >>> neutralise_text("=1+1"), neutralise_text("-5"), neutralise_text(-5)
    ("'=1+1", "'-5", -5)
    >>> neutralise_text("'=x")
    "''=x"
    """
    if isinstance(value, str) and (is_formula_text(value) or _looks_neutralised(value)):
        return "'" + value
    return value


def restore_text(value, kind: str = "csv"):
    """Undo :func:`neutralise_text` (``kind="csv"``) or :func:`escape_control` (``"xlsx"``).

    Examples
    --------
    >>> restore_text("'=1+1"), restore_text("'quoted"), restore_text(3)
    ('=1+1', "'quoted", 3)
    >>> restore_text("_x000D_=1", "xlsx"), restore_text("'=1", "xlsx")
    ('\\r=1', "'=1")
    """
    if not isinstance(value, str):
        return value
    if kind == "xlsx":
        return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), value) if "_x" in value \
            else value
    return value[1:] if _looks_neutralised(value) else value


_ESCAPED = re.compile(r"_x(00[01][0-9A-F]|005F)_")


def escape_control(value: str) -> str:
    """Excel's escape of control characters, ``_x000D_`` for a carriage return.

    XML would turn a carriage return into a line feed; Excel reads the escape back as
    the character. :func:`restore_text` decodes it for our own readers.
    """
    value = re.sub(r"_x([0-9A-Fa-f]{4})_", r"_x005F_x\1_", value)  # a literal escape
    return re.sub(r"[\x00-\x08\x0b-\x1f]", lambda m: f"_x{ord(m.group(0)):04X}_", value)


def _text_columns(frame: pd.DataFrame) -> list:
    return [c for c in frame.columns
            if not pd.api.types.is_numeric_dtype(frame[c])
            and not pd.api.types.is_bool_dtype(frame[c])
            and not pd.api.types.is_datetime64_any_dtype(frame[c])]


def neutralise_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with formula-like text cells and headers neutralised (for CSV)."""
    out = frame.copy()
    for column in _text_columns(frame):
        values = frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(object)
        out[column] = _neutralised(values)
    out.columns = [neutralise_text(str(c)) for c in frame.columns]
    return out


def _neutralised(values: pd.Series) -> pd.Series:
    """``values.map(neutralise_text, na_action="ignore")``; a column of text has each
    distinct text neutralised once (a released column repeats its categories)."""
    if pd.api.types.infer_dtype(values, skipna=True) != "string":
        return values.map(neutralise_text, na_action="ignore")
    # Text only: factorize's equality is the texts' own (no 1 == 1.0 == True merging).
    codes, distinct = pd.factorize(values, use_na_sentinel=True)
    texts = np.array([neutralise_text(text) for text in distinct], dtype=object)
    out = values.to_numpy(dtype=object, copy=True)
    found = codes >= 0
    out[found] = texts[codes[found]]
    return pd.Series(out, index=values.index, name=values.name, dtype=object)


def restore_frame(frame: pd.DataFrame, kind: str = "csv") -> pd.DataFrame:
    """A released file read back, with its text as it was released.

    ``kind`` is ``"csv"`` (neutralised text and headers restored) or ``"xlsx"`` (Excel's
    control-character escapes decoded).
    """
    out = frame.copy()
    for column in _text_columns(frame):
        out[column] = frame[column].map(lambda v: restore_text(v, kind), na_action="ignore")
    out.columns = [restore_text(str(c), kind) for c in frame.columns]
    return out
