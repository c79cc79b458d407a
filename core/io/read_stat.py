"""Reading SPSS (``.sav``, ``.zsav``) and SAS (``.sas7bdat``, ``.xpt``) files with pyreadstat.

Vocabulary
----------
value labels
    SPSS and SAS store a categorical column as numeric (or short text) codes with a label
    for each code. A labelled column is read as a pandas ``Categorical`` of its labels;
    the categories are the labels in the order of their codes (``1 = 'male'``,
    ``2 = 'female'`` gives ``['male', 'female']``), as a Stata file read by
    :func:`core.io.read.read_table` gives its labels. A code present in the data without a
    label keeps its value as text (``'9'``) and is named in a note.
user-missing values
    SPSS codes declared missing (``9 = 'refused'``) and SAS special missing values
    (``.A`` .. ``.Z``) become missing values, as Stata's missing values do.

Numbers are float64, except a column whose SPSS/SAS format has no decimals and whose
values are all whole numbers, which is int64 (an identifier stays ``1042``, not
``1042.0``). Dates and times with a date format become ``datetime64``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.io.read_report import Recorder

__all__ = ["STAT_SUFFIXES", "read_stat", "describe_kind", "labelled"]

STAT_SUFFIXES = (".sav", ".zsav", ".sas7bdat", ".xpt")
_KIND = {".sav": "an SPSS file", ".zsav": "an SPSS file", ".sas7bdat": "a SAS file",
         ".xpt": "a SAS transport file"}
_HELP = {".sav": "Save it again from SPSS (File > Save As), or export it as CSV.",
         ".zsav": "Save it again from SPSS (File > Save As), or export it as CSV.",
         ".sas7bdat": "Export it again from SAS (PROC EXPORT), or as CSV.",
         ".xpt": "Write it again with SAS (PROC COPY to an XPORT library), or export CSV."}
_INT_LIMIT = 2 ** 53


def describe_kind(suffix: str) -> str:
    """``'an SPSS file'``, ``'a SAS file'`` ...: the file kind in a message."""
    return _KIND[suffix]


def _reader(suffix: str):
    import pyreadstat  # deferred: only a user of these formats pays for the import

    return {".sav": pyreadstat.read_sav, ".zsav": pyreadstat.read_sav,
            ".sas7bdat": pyreadstat.read_sas7bdat, ".xpt": pyreadstat.read_xport}[suffix]


def read_stat(path: Path, *, recorder: Recorder, rows: int | None = None) -> pd.DataFrame:
    """Read an SPSS or SAS file; value labels as categories, user-missing as missing.

    Parameters
    ----------
    path : Path
        A ``.sav``, ``.zsav``, ``.sas7bdat`` or ``.xpt`` file.
    recorder : Recorder
        Receives a note per column with codes that have no label, with codes that share
        a label, or with values the file declares missing.
    rows : int, optional
        Read only the first ``rows`` records (a preview).

    Returns
    -------
    DataFrame, shape (n_records, n_columns)

    Raises
    ------
    MicroaggError
        For a damaged file or one of another kind, naming the file and what to do.
    """
    suffix = path.suffix.lower()
    options = {"dates_as_pandas_datetime": True}
    if rows is not None:
        options["row_limit"] = max(int(rows), 1)
    spss = suffix in (".sav", ".zsav")
    if spss:  # read the declared missing codes too, to drop their labels below
        options["user_missing"] = True
    if suffix == ".xpt":
        _check_transport_size(path)
    try:
        frame, meta = _reader(suffix)(str(path), **options)
    except MemoryError:
        raise
    except Exception as error:  # noqa: BLE001 - pyreadstat raises plain Exceptions
        reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
        reason = f" ({reason})" if reason else ""
        raise MicroaggError(f"'{path.name}' could not be read as {_KIND[suffix]}: it is "
                            f"damaged or of another kind{reason}. {_HELP[suffix]}") from None
    if suffix == ".xpt":
        declared = _transport_rows(path)
        if declared is not None and len(frame) < (declared if rows is None
                                                  else min(declared, max(int(rows), 1))):
            raise _truncated(path, f"it declares {declared} records but holds "
                             f"{len(frame)}")
    labels = getattr(meta, "variable_value_labels", None) or {}
    formats = getattr(meta, "original_variable_types", None) or {}
    missing = (getattr(meta, "missing_ranges", None) or {}) if spss else {}
    columns = {}
    for name in frame.columns:
        column = frame[name]
        if missing.get(name):
            declared = column.map(lambda v, r=missing[name]: _in_ranges(v, r)).astype(bool)
            if declared.any():
                codes = sorted(column[declared].unique(), key=_sort_key)
                shown = ", ".join(_code_text(c) for c in codes[:3]) + (
                    ", ..." if len(codes) > 3 else "")
                recorder.note(f"Column '{name}': {int(declared.sum()):,} value(s) the file "
                              f"declares missing ({shown}) are read as missing values.")
            column = column.mask(declared)
        if labels.get(name):
            # A user-missing code is missing in the data: its label is no category.
            kept = {code: label for code, label in labels[name].items()
                    if not _in_ranges(code, missing.get(name, ()))}
            columns[name] = labelled(column, kept, name, recorder)
        else:
            columns[name] = _whole_numbers(column, formats.get(name, ""))
    return pd.DataFrame(columns, index=pd.RangeIndex(len(frame)))


_XPORT_RECORD = 80
_OBS_HEADER = b"HEADER RECORD*******OBS"
_LIBRARY_HEADER = b"HEADER RECORD*******LIB"


def _truncated(path: Path, why: str) -> MicroaggError:
    return MicroaggError(f"'{path.name}' is not a complete SAS transport file: it is "
                         f"truncated ({why}). Copy it again, or {_HELP['.xpt'][0].lower()}"
                         f"{_HELP['.xpt'][1:]}")


def _check_transport_size(path: Path) -> None:
    # XPORT is a sequence of 80-byte records, the last padded with blanks (SAS TS-140):
    # pyreadstat reads a cut file up to the cut and reports no error.
    # Only a file that starts as one: another kind is refused by pyreadstat as such.
    with open(path, "rb") as handle:
        transport = handle.read(len(_LIBRARY_HEADER)) == _LIBRARY_HEADER
    size = path.stat().st_size
    if transport and size % _XPORT_RECORD:
        raise _truncated(path, f"its {size} bytes are not whole {_XPORT_RECORD}-byte "
                         "records")


def _transport_rows(path: Path) -> int | None:
    """The record count a version 8 file's OBSV8 header declares (version 5 has none)."""
    with open(path, "rb") as handle:
        # Blocks of whole records: a header record never straddles two.
        for _ in range(64):
            block = handle.read(_XPORT_RECORD * 13_000)
            found = block.find(_OBS_HEADER)
            while found >= 0 and found % _XPORT_RECORD:
                found = block.find(_OBS_HEADER, found + 1)
            if found >= 0:
                record = block[found:found + _XPORT_RECORD]
                count = record[48:].strip()
                if record.startswith(_OBS_HEADER + b"V8") and count.isdigit():
                    return int(count) or None
                return None
            if len(block) < _XPORT_RECORD * 13_000:
                return None
    return None


def labelled(column: pd.Series, value_labels: dict, name: str,
             recorder: Recorder, *, ordered: bool = False) -> pd.Series:
    """The column's codes as their labels (categories in code order), an unlabelled code
    as its text; a note when two codes become one category (they share a label, or a
    code's text is another code's label), which the file itself says."""
    codes = sorted(value_labels, key=_sort_key)
    categories: list[str] = []
    owners: dict[str, list] = {}
    for code in codes:
        label = str(value_labels[code])
        owners.setdefault(label, []).append(code)
        if label not in categories:
            categories.append(label)
    present = column.dropna().unique()
    unlabelled = sorted((v for v in present if v not in value_labels), key=_sort_key)
    mapping = {code: str(value_labels[code]) for code in codes}
    for value in unlabelled:
        text = _code_text(value)
        mapping[value] = text
        if text in owners:
            owners[text].append(value)
        if text not in categories:
            categories.append(text)
    if unlabelled:
        shown = ", ".join(_code_text(v) for v in unlabelled[:3])
        recorder.note(f"Column '{name}' has values without a label ({shown}); they are kept "
                      "as text categories.")
    used = set(present)
    shared = [(label, [c for c in owned if c in used]) for label, owned in owners.items()]
    shared = [(label, owned) for label, owned in shared if len(owned) > 1]
    if shared:
        label, owned = shared[0]
        recorder.note(f"Column '{name}': the codes {' and '.join(_code_text(c) for c in owned)} "
                      f"read as one category, '{label}' (the file gives them that label"
                      f"{'' if len(shared) == 1 else f'; {len(shared) - 1} more such label(s)'})."
                      " If they are different answers, give each its own label in the file "
                      "and open it again.")
    values = column.map(mapping)
    return pd.Series(pd.Categorical(values, categories=categories, ordered=ordered),
                     name=column.name)


def _whole_numbers(column: pd.Series, display_format: str) -> pd.Series:
    if column.dtype != np.float64 or not _no_decimals(display_format):
        return column
    values = column.to_numpy()
    if (len(values) == 0 or not np.isfinite(values).all()
            or (np.abs(values) > _INT_LIMIT).any() or (values != np.round(values)).any()):
        return column
    return column.astype(np.int64)


def _no_decimals(display_format: str) -> bool:
    """``F8.0`` / ``BEST12.`` style formats: a whole number is what the author meant."""
    text = str(display_format).upper()
    if not text or text[0] not in "FNB" or text.startswith(("DATE", "DATETIME")):
        return False
    return text.endswith(".0") or (text.endswith(".") and text[:1] in "FN") or (
        "." not in text and text[:1] == "F")


def _in_ranges(code, ranges) -> bool:
    for span in ranges:
        try:
            if span["lo"] <= code <= span["hi"]:
                return True
        except (TypeError, KeyError):
            continue
    return False


def _code_text(value) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _sort_key(value):
    return (0, float(value), "") if isinstance(value, (int, float, np.number)) else (
        1, 0.0, str(value))
