"""A ``QTableView`` set up for :class:`~.table_model.DataFrameModel`: compact rows,
columns fitted to their header and the first visible cells, never to the whole column.
"""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from microagg_desktop.table_model import DataFrameModel

__all__ = ["DataFrameView"]


class DataFrameView(QTableView):
    """Read-only table view of a DataFrame.

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
        rows = self.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.fontMetrics().height() + 8)
        columns = self.horizontalHeader()
        columns.setMinimumSectionSize(48)
        columns.setHighlightSections(False)
        # Fitting columns reads at most this many rows, whatever the table's length.
        columns.setResizeContentsPrecision(200)
        self.setModel(DataFrameModel(parent=self))

    def show_frame(self, model: DataFrameModel) -> None:
        """Show ``model`` and fit the columns; the previous model is scheduled for deletion."""
        old = self.model()
        self.setModel(model)
        if old is not None and old is not model and old.parent() is self:
            old.deleteLater()
        self.resizeColumnsToContents()
        header = self.horizontalHeader()
        for column in range(model.columnCount()):
            width = max(self.sizeHintForColumn(column),
                        header.sectionSizeHint(column)) + self.PADDING
            header.resizeSection(column, min(width, self.MAX_COLUMN_WIDTH))
