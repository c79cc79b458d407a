"""A ``QTableView`` set up for :class:`~.table_model.DataFrameModel`: compact rows,
columns fitted to their header and the first visible cells (never to the whole column),
and sorting by a click on a column header or from the keyboard.

Sorting never copies the frame: the model computes a row order off the GUI thread
(:meth:`.DataFrameModel.sort`); the row numbers on the left stay those of the file.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QHeaderView, QTableView

from microagg_desktop.table_model import DataFrameModel

__all__ = ["DataFrameView"]


class DataFrameView(QTableView):
    """Read-only, sortable table view of a DataFrame.

    Keyboard: Ctrl+Alt+Up / Ctrl+Alt+Down sort by the current cell's column,
    Ctrl+Alt+0 restores the file's order; the same actions are in the context menu.

    Parameters
    ----------
    parent : QWidget, optional
    """

    PADDING = 18
    """Extra pixels around the widest header or cell of a column."""

    MAX_COLUMN_WIDTH = 320

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)
        self.setAccessibleName("Table")
        self.setToolTip("Click a column header to sort (again to reverse); the row numbers "
                        "on the left stay those of the file. Ctrl+Alt+Up/Down sort by the "
                        "current column, Ctrl+Alt+0 restores the file's order.")
        rows = self.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.fontMetrics().height() + 8)
        columns = self.horizontalHeader()
        columns.setMinimumSectionSize(48)
        columns.setHighlightSections(False)
        columns.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        # Fitting columns reads at most this many rows, whatever the table's length.
        columns.setResizeContentsPrecision(40)
        self.setModel(DataFrameModel(parent=self))
        self.setSortingEnabled(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        corner = self.findChild(QAbstractButton, "qt_tableview_cornerbutton")
        if corner is not None:
            corner.setAccessibleName("Select all")
            corner.setToolTip("Select every cell (Ctrl+A).")
        for text, keys, slot in (
                ("Sort ascending by this column", "Ctrl+Alt+Up",
                 lambda: self.sort_current(Qt.SortOrder.AscendingOrder)),
                ("Sort descending by this column", "Ctrl+Alt+Down",
                 lambda: self.sort_current(Qt.SortOrder.DescendingOrder)),
                ("Show in the file's order", "Ctrl+Alt+0", self.unsort)):
            action = QAction(text, self)
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(slot)
            self.addAction(action)

    def show_frame(self, model: DataFrameModel) -> None:
        """Show ``model`` and fit the columns; the previous model is scheduled for deletion."""
        old = self.model()
        header = self.horizontalHeader()
        header.blockSignals(True)  # a new table starts in the file's order
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        header.blockSignals(False)
        self.setModel(model)
        if old is not None and old is not model and old.parent() is self:
            old.deleteLater()
        for column in range(model.columnCount()):
            width = max(self.sizeHintForColumn(column),
                        header.sectionSizeHint(column)) + self.PADDING
            header.resizeSection(column, min(width, self.MAX_COLUMN_WIDTH))

    def sort_current(self, order: Qt.SortOrder) -> None:
        """Sort by the current cell's column (the first column when there is none)."""
        column = max(self.currentIndex().column(), 0)
        if self.model() is not None and self.model().columnCount():
            self.sortByColumn(column, order)

    def unsort(self) -> None:
        """Show the rows in the file's order again."""
        self.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        model = self.model()
        if isinstance(model, DataFrameModel):
            model.sort(-1)
