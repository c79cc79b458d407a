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
verify`` compare a released CSV with its original exactly. (An original text that itself
began with an apostrophe followed by one of those characters would lose the apostrophe
there; such text is treated as neutralised.)
"""

from __future__ import annotations

import pandas as pd

__all__ = ["FORMULA_STARTS", "is_formula_text", "neutralise_text", "restore_text",
           "neutralise_frame", "restore_frame"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def is_formula_text(value) -> bool:
    """True for a ``str`` a spreadsheet would run as a formula."""
    return isinstance(value, str) and value.startswith(FORMULA_STARTS)


def neutralise_text(value):
    """``'`` + ``value`` for formula-like text; anything else unchanged.

    Examples
    --------
    >>> neutralise_text("=1+1"), neutralise_text("-5"), neutralise_text(-5)
    ("'=1+1", "'-5", -5)
    """
    return "'" + value if is_formula_text(value) else value


def restore_text(value):
    """Undo :func:`neutralise_text`.

    Examples
    --------
    >>> restore_text("'=1+1"), restore_text("'quoted"), restore_text(3)
    ('=1+1', "'quoted", 3)
    """
    if isinstance(value, str) and value.startswith("'") and value[1:2] and \
            value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return value


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
        out[column] = values.map(neutralise_text, na_action="ignore")
    out.columns = [neutralise_text(str(c)) for c in frame.columns]
    return out


def restore_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with neutralised text cells and headers restored (a released CSV read back)."""
    out = frame.copy()
    for column in _text_columns(frame):
        out[column] = frame[column].map(restore_text, na_action="ignore")
    out.columns = [restore_text(str(c)) for c in frame.columns]
    return out
