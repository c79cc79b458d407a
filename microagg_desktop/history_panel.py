"""The History tab: every run of the session in a table, to select, compare or go back to.

A thin binding of :class:`~microagg_desktop.history.History`: the panel reads the
records, never computes a measure, and tells the window what the user asked through
signals. "Go back to this run" restores that run's settings (the window applies the
request); removing a run takes it out of the history.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QTableView, QVBoxLayout, QWidget)

from microagg_desktop.history import History, RunRecord

__all__ = ["HistoryModel", "HistoryPanel"]

_COLUMNS = ("Run", "Method", "Parameters", "IL %", "k′", "DLD %", "Verified", "Warnings")
_TIPS = ("Run number, in the order runs finished", "The method that ran",
         "Its key parameters (k, t, and those changed from the default)",
         "Information loss IL, percent (lower keeps more of the data)",
         "k′: records per distinct quasi-identifier tuple (higher is safer)",
         "Linkage disclosure DLD, percent of records an intruder links (lower is safer)",
         "Whether the verifier confirmed the method's guarantee",
         "Release warnings: reasons not to publish the release as it is")


def _number(value, digits=2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _verdict_mark(measures) -> str:
    """✓ verified, ✗ not verified, — for a method that promises no record-level
    guarantee (Mic1D-k, individual ranking): there is nothing to verify."""
    if not measures.get("record_level", True):
        return "—"
    return "✓" if measures["verified"] else "✗"


class HistoryModel(QAbstractTableModel):
    """The runs of a :class:`History`, one row each, oldest first."""

    def __init__(self, history: History | None = None, parent=None):
        super().__init__(parent)
        self._history = history or History()
        self._rows: tuple[RunRecord, ...] = self._history.records

    def set_history(self, history: History) -> None:
        self.beginResetModel()
        self._history = history
        self._rows = history.records
        self.endResetModel()

    def refresh(self) -> None:
        """Read the history again (after a run was added or removed)."""
        self.set_history(self._history)

    def record(self, row: int) -> RunRecord:
        return self._rows[row]

    def shows(self, history: History) -> bool:
        """True when the rows are ``history``'s runs as they are now."""
        return self._history is history and self._rows == history.records

    def row_of(self, number: int) -> int:
        return next((i for i, r in enumerate(self._rows) if r.number == number), -1)

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(_COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return _COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return _TIPS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        record, column = self._rows[index.row()], index.column()
        m = record.measures
        if role == Qt.ItemDataRole.DisplayRole:
            return (f"#{record.number}" + (" (exported)" if record.exported else ""),
                    record.method, record.parameters_text, _number(m["il"]),
                    _number(m["k_prime"]), _number(m["dld"], 1),
                    _verdict_mark(m), str(m["warnings"]))[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            when = record.created.strftime("%H:%M:%S")
            verdict = ("no record-level guarantee to verify"
                       if not m.get("record_level", True)
                       else "verified" if m["verified"] else "NOT verified")
            return (f"{record.label}, finished at {when} in {m['seconds']:.2f} s; "
                    f"{verdict}; {m['warnings']} warning(s).")
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter) \
                if column < 6 else int(Qt.AlignmentFlag.AlignCenter)
        if role == Qt.ItemDataRole.ForegroundRole and column == 6:
            if not m.get("record_level", True):
                return QBrush(QColor("#555555"))
            return QBrush(QColor("#1b5e20" if m["verified"] else "#b71c1c"))
        if role == Qt.ItemDataRole.ForegroundRole and column == 7 and m["warnings"]:
            return QBrush(QColor("#7a4f01"))
        return None


class HistoryPanel(QWidget):
    """A table of the session's runs with Compare, Go back and Remove.

    Signals
    -------
    run_selected(int)
        The current run changed (its number).
    compare_requested(list)
        The numbers of the two or more runs chosen for comparison.
    restore_requested(int)
        "Go back to this run": the window restores that run's settings.
    run_removed(int)
        A run was taken out of the history.
    """

    run_selected = Signal(int)
    compare_requested = Signal(list)
    restore_requested = Signal(int)
    run_removed = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.history = History()
        self.model = HistoryModel(self.history, self)
        self.view = QTableView(self)
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().setVisible(False)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.view.setAccessibleName("Run history")
        self.view.setToolTip("Every run of this session. Select two or more (Ctrl or Shift "
                             "+ click) to compare them.")
        self.view.selectionModel().selectionChanged.connect(self._selection_changed)
        self.view.selectionModel().currentRowChanged.connect(self._current_changed)
        self.view.doubleClicked.connect(lambda index: self.run_selected.emit(
            self.model.record(index.row()).number))

        self.hint = QLabel("No runs yet. Every run you make is kept here, so you can "
                           "compare runs and go back to one.", self)
        self.hint.setWordWrap(True)
        self.compare_button = self._button(
            "&Compare selected", "Compare the selected runs side by side (select two or "
            "more)", self._compare)
        self.restore_button = self._button(
            "&Go back to this run", "Restore the roles, method and parameters of the "
            "selected run", self._restore)
        self.remove_button = self._button(
            "&Remove", "Take the selected runs out of the history", self._remove)
        buttons = QHBoxLayout()
        for button in (self.compare_button, self.restore_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)
        self.refresh()

    def _button(self, text: str, tip: str, slot) -> QPushButton:
        button = QPushButton(text, self)
        button.setToolTip(tip)
        button.setAccessibleName(text.replace("&", ""))
        button.clicked.connect(slot)
        return button

    # -- binding ------------------------------------------------------------------------

    def set_history(self, history: History) -> None:
        """Show ``history`` (kept, not copied)."""
        self.history = history
        self.refresh()

    def refresh(self) -> None:
        """Read the history again and select its selected run."""
        self.model.set_history(self.history)
        self.hint.setVisible(len(self.history) == 0)
        selected = self.history.selected
        if selected is not None:
            row = self.model.row_of(selected.number)
            self.view.selectRow(row)
        self._selection_changed()

    def show_selected(self) -> None:
        """Follow the history's selected run without resetting the view (a reset would
        drop a selection a Ctrl+click is building); refresh only if runs came or went."""
        if not self.model.shows(self.history):
            self.refresh()
            return
        rows, columns = self.model.rowCount(), self.model.columnCount()
        if rows:
            self.model.dataChanged.emit(self.model.index(0, 0),
                                        self.model.index(rows - 1, columns - 1))
        selected = self.history.selected
        if selected is not None:
            row = self.model.row_of(selected.number)
            if self.view.currentIndex().row() != row:
                flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                         | QItemSelectionModel.SelectionFlag.Rows)
                self.view.selectionModel().setCurrentIndex(self.model.index(row, 0), flags)
        self._selection_changed()

    def selected_numbers(self) -> list[int]:
        """The numbers of the selected runs, in table order."""
        rows = sorted({index.row() for index in self.view.selectionModel().selectedRows()})
        return [self.model.record(row).number for row in rows]

    def select_numbers(self, numbers: list[int]) -> None:
        """Select the runs ``numbers`` (as a user would with Ctrl + click)."""
        self.view.clearSelection()
        mode = self.view.selectionMode()
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        for number in numbers:
            self.view.selectRow(self.model.row_of(number))
        self.view.setSelectionMode(mode)

    # -- reactions ----------------------------------------------------------------------

    def _selection_changed(self, *_) -> None:
        count = len(self.selected_numbers())
        self.compare_button.setEnabled(count >= 2)
        self.restore_button.setEnabled(count == 1)
        self.remove_button.setEnabled(count >= 1)

    def _current_changed(self, current: QModelIndex, _previous=None) -> None:
        if current.isValid():
            number = self.model.record(current.row()).number
            if self.history.selected is None or self.history.selected.number != number:
                self.history.select(number)
            self.run_selected.emit(number)

    def _compare(self) -> None:
        numbers = self.selected_numbers()
        if len(numbers) >= 2:
            self.compare_requested.emit(numbers)

    def _restore(self) -> None:
        numbers = self.selected_numbers()
        if len(numbers) == 1:
            self.history.select(numbers[0])
            self.restore_requested.emit(numbers[0])

    def _remove(self) -> None:
        for number in self.selected_numbers():
            self.history.remove(number)
            self.run_removed.emit(number)
        self.refresh()
