"""What the parser of a workbook's cells would change, put back from the cells
(:mod:`core.io.read_xlsx`): pandas' ``TextParser`` types a column from its cells, and
beside an empty cell it makes whole numbers floats (which hold no integer from 2**53 on)
and TRUE/FALSE the numbers 1.0 and 0.0, and it reads text such as 'NA' as a missing
value without a word.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pandas as pd

from core.io.read_report import missing_marks_note

__all__ = ["booleans", "exact_integers", "missing_marks"]


def exact_integers(header: list[str], body: list[list], table: pd.DataFrame) -> None:
    """Whole numbers beside empty cells come back from the parser as floats, which hold
    no integer from 2**53 on exactly (70300852664449794 became 7.030085266444979e+16,
    three households one): such a column, every cell of it a whole number (a number
    cell, or a text cell of digits, as identifiers are often stored) or empty, is read
    as nullable integers from the cells, every digit kept, as the CSV reader does."""
    for j, name in enumerate(header):
        column = table[name]
        if not (pd.api.types.is_float_dtype(column) and bool((column.abs() >= 2.0 ** 53).any())):
            continue
        cells = [row[j] for row in body]
        if not all(type(value) is int or (type(value) is str and (
                not value.strip() or _DIGITS.fullmatch(value))) for value in cells):
            continue
        whole = [value if type(value) is int else int(value) if value.strip() else None
                 for value in cells]
        if all(value is None or -2 ** 63 <= value < 2 ** 63 for value in whole):
            table[name] = pd.array(whole, dtype="Int64")
        elif any(type(value) is str and value.strip() for value in cells):
            # Text cells beyond int64 (identifiers of 20 digits): as written, as the CSV
            # reader reads them; number cells that large stay the floats they are.
            table[name] = pd.Series([(value.strip() or None) if type(value) is str
                                     else str(value) for value in cells],
                                    index=table.index, dtype=object, name=name)


def booleans(header: list[str], body: list[list], table: pd.DataFrame) -> None:
    """A column of TRUE/FALSE cells beside empty cells came back from the parser as the
    numbers 1.0 and 0.0 (and was released so); it is read as booleans with missing
    values, as the cells say."""
    for j, name in enumerate(header):
        column = table[name]
        if not (pd.api.types.is_float_dtype(column) and column.isna().any()
                and column.dropna().isin((0.0, 1.0)).all()):  # the cells only when it may be
            continue
        cells = [row[j] for row in body]
        if any(type(value) is bool for value in cells) and all(
                type(value) is bool or (type(value) is str and not value.strip())
                for value in cells):
            table[name] = pd.array([value if type(value) is bool else None for value in cells],
                                   dtype="boolean")


_DIGITS = re.compile(r"\s*[+-]?[0-9]+\s*")  # a whole number in a text cell (an identifier)


def missing_marks(header: list[str], body: list[list], table: pd.DataFrame) -> list[str]:
    """A note for every text column (or column with no value at all) in which text cells
    that are not empty were read as missing values ('NA', 'None', 'null', ...: the
    parser's marks, which may also be a value, NA for North America), as the CSV reader
    notes them."""
    notes = []
    for j, name in enumerate(header):
        column = table[name]
        if not (column.dtype == object or pd.api.types.is_string_dtype(column)
                or column.isna().all()):  # as the CSV reader: 'NA' among numbers is missing
            continue
        marks = Counter(cell.strip() for cell in
                        (body[i][j] for i in np.flatnonzero(column.isna().to_numpy()))
                        if type(cell) is str and cell.strip())
        if marks:
            notes.append(missing_marks_note(name, dict(marks.most_common())))
    return notes
