"""A read-only Qt model over a DataFrame that reads only the cells a view asks for.

Like Spyder's DataFrame editor: the frame is never copied, sorted or modified; a cell is
read with ``DataFrame.iat`` when it is painted, so a million-row table opens instantly.
Rows are numbered from 1 in the vertical header (the frame's index is not shown).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from microagg_desktop.state import format_number

__all__ = ["DataFrameModel", "format_value"]

_MISSING_BRUSH = QBrush(QColor(150, 150, 150))
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NaT or value is pd.NA:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def format_value(value: Any) -> str:
    """The text of one cell: floats compact (see :func:`.state.format_number`), NA for missing."""
    if _is_missing(value):
        return "NA"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return format_number(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


class DataFrameModel(QAbstractTableModel):
    """Table model of ``frame`` for a ``QTableView``; read-only.

    Parameters
    ----------
    frame : DataFrame
        Shown as is; the model keeps a reference and never changes it.
    parent : QObject, optional
    """

    def __init__(self, frame: pd.DataFrame | None = None, parent=None):
        super().__init__(parent)
        self._frame = frame if frame is not None else pd.DataFrame()
        # Per-column alignment is derived from dtypes only: O(columns), not O(cells).
        self._numeric = [
            pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
            for dtype in self._frame.dtypes
        ]

    @property
    def frame(self) -> pd.DataFrame:
        """The frame shown (not a copy)."""
        return self._frame

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._frame)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._frame.shape[1]

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return format_value(self._frame.iat[row, column])
        if role == Qt.ItemDataRole.ToolTipRole:
            value = self._frame.iat[row, column]
            return "missing" if _is_missing(value) else repr(value)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if self._numeric[column] else _LEFT
        if role == Qt.ItemDataRole.ForegroundRole:
            return _MISSING_BRUSH if _is_missing(self._frame.iat[row, column]) else None
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or section < 0:
            return None
        if orientation == Qt.Orientation.Horizontal:
            if section >= self._frame.shape[1]:
                return None
            return str(self._frame.columns[section])
        return str(section + 1) if section < len(self._frame) else None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
