"""What each column holds, before roles are chosen: kind, missing values, distinct values.

Qt-free (:mod:`.column_summary_view` shows it). A run stops on a record with a missing
value in a column it uses unless the user chooses to exclude those records, so the Data
tab shows the missing values per column first.

Vocabulary
----------
kind
    ``'number'``, ``'text'``, ``'date'`` or ``'categorical'`` (a pandas ``Categorical``,
    e.g. an SPSS or Stata column with value labels, or true/false).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core import TaskState

__all__ = ["ColumnSummary", "column_kind", "summarize_columns"]

_CHUNK = 65_536  # text values hashed per step: the GUI thread gets the GIL in between


@dataclass(frozen=True)
class ColumnSummary:
    """One column's summary.

    Attributes
    ----------
    name : str
    kind : str
        See the module's vocabulary.
    missing : int
        Records with no value in this column.
    records : int
        Records in the table.
    distinct : int
        Different values, missing not counted.
    """

    name: str
    kind: str
    missing: int
    records: int
    distinct: int

    @property
    def missing_percent(self) -> float:
        """``missing`` as a percentage of the records (0 for an empty table)."""
        return 100.0 * self.missing / self.records if self.records else 0.0


def column_kind(column: pd.Series) -> str:
    """The kind of ``column``: ``'number'``, ``'text'``, ``'date'`` or ``'categorical'``."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype):
        return "categorical"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "date"
    if pd.api.types.is_numeric_dtype(dtype):
        return "number"
    return "text"


def summarize_columns(frame: pd.DataFrame, *, state: TaskState | None = None
                      ) -> list[ColumnSummary]:
    """Summarise every column of ``frame`` (not modified).

    Parameters
    ----------
    frame : DataFrame, shape (n_records, n_columns)
    state : TaskState, optional
        Receives the fraction of columns done; :class:`~core.Cancelled` when cancelled.

    Returns
    -------
    list of ColumnSummary, one per column, in order

    Examples
    --------
    >>> summarize_columns(pd.DataFrame({"a": [1.0, None, 1.0]}))[0].distinct
    1
    """
    out, width = [], max(frame.shape[1], 1)
    for position in range(frame.shape[1]):
        if state is not None:
            state.step(position / width, f"Summarising column {position + 1} of {width}")
        column = frame.iloc[:, position]
        kind = column_kind(column)
        missing = column.isna().to_numpy()
        out.append(ColumnSummary(str(frame.columns[position]), kind, int(missing.sum()),
                                 len(column), _distinct(column, kind, missing, state)))
    if state is not None:
        state.step(1.0, "Columns summarised")
    return out


def _distinct(column: pd.Series, kind: str, missing: np.ndarray,
              state: TaskState | None) -> int:
    if kind == "categorical" and isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        return int(np.count_nonzero(np.bincount(codes[codes >= 0],
                                                minlength=len(column.cat.categories))))
    if kind in ("number", "date", "categorical"):
        return int(column.nunique(dropna=True))
    values = column.to_numpy(dtype=object)[~missing]
    seen: set = set()
    for start in range(0, len(values), _CHUNK):
        if state is not None:
            state.check()
        seen.update(values[start:start + _CHUNK].tolist())
    return len(seen)
