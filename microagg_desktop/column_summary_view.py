"""A compact table of the columns' kinds, missing and distinct values, with a sentence
saying what a run does with missing values (a thin binding of :mod:`.column_summary`).

Big tables are summarised on a pool thread; :attr:`ColumnSummaryView.ready` says when the
summary is shown.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from microagg_desktop.column_summary import ColumnSummary, summarize_columns
from microagg_desktop.worker import TaskRunner

__all__ = ["ColumnSummaryView", "ColumnSummaryModel", "summary_message"]

_MISSING_BRUSH = QBrush(QColor(255, 236, 179))
_HEADERS = ("Column", "Kind", "Missing", "Distinct")
_IN_THREAD_CELLS = 200_000  # smaller tables are summarised at once


def summary_message(summary: list[ColumnSummary]) -> str:
    """The sentence under the table: which columns have missing values, and what then."""
    with_missing = [c.name for c in summary if c.missing]
    if not summary:
        return "No table open."
    if not with_missing:
        return "No missing values: every record can be used."
    names = ", ".join(f"'{n}'" for n in with_missing[:4]) + (", …" if len(with_missing) > 4
                                                              else "")
    count = (f"{len(with_missing)} columns have" if len(with_missing) > 1
             else "1 column has")
    return (f"⚠ {count} missing values ({names}). A run stops on a record with a missing "
            "value in a column it uses, unless you choose to exclude those records.")


class ColumnSummaryModel(QAbstractTableModel):
    """Read-only model of a list of :class:`ColumnSummary`; missing values highlighted."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._rows: list[ColumnSummary] = []

    def set_summary(self, rows: list[ColumnSummary]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(_HEADERS)

    def data(self, index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            if index.column() == 2:
                return (f"{row.missing:,} ({row.missing_percent:.3g}%)" if row.missing
                        else "0")
            return (row.name, row.kind, None, f"{row.distinct:,}")[index.column()]
        if role == Qt.ItemDataRole.BackgroundRole and row.missing:
            return _MISSING_BRUSH
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"'{row.name}': {row.kind}, {row.missing:,} of {row.records:,} records "
                    f"missing, {row.distinct:,} different values.")
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if (role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal
                and 0 <= section < len(_HEADERS)):
            return _HEADERS[section]
        return None


class ColumnSummaryView(QWidget):
    """The column summary of a table: :meth:`set_frame`, then :attr:`ready`."""

    ready = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.table = QTableView(self)
        self.table.setModel(ColumnSummaryModel(self.table))
        self.table.setAccessibleName("Column summary")
        self.table.setToolTip("Each column's kind, missing values and distinct values. "
                              "Highlighted columns have missing values.")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.message = QLabel(summary_message([]), self)
        self.message.setWordWrap(True)
        self.message.setAccessibleName("Missing values")
        self.message.setToolTip("What a run does with records that have missing values.")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message)
        self._runner = TaskRunner(self)
        self._runner.signals.returned.connect(self._show)
        self._runner.signals.errored.connect(self.message.setText)
        self.summary: list[ColumnSummary] = []

    def set_frame(self, frame: pd.DataFrame | None) -> None:
        """Summarise ``frame`` (off the GUI thread when it is big); ``None`` clears."""
        self._runner.cancel()
        if frame is None:
            self._show([])
        elif frame.size <= _IN_THREAD_CELLS:
            self._show(summarize_columns(frame))
        else:
            self.summary = []  # not the previous table's while this one is summarised
            self.message.setText(f"Summarising {frame.shape[1]} columns…")
            self._runner.start(summarize_columns, frame)

    def _show(self, summary: list[ColumnSummary]) -> None:
        self.summary = summary
        self.table.model().set_summary(summary)
        self.message.setText(summary_message(summary))
        self.ready.emit()
