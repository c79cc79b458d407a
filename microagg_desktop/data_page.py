"""The Data tab: the table as read, a summary of every column (kind, missing values,
distinct values) and what a run does with records that have missing values."""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QFormLayout, QLabel, QSplitter, QVBoxLayout,
                               QWidget)

from microagg_desktop.column_summary_view import ColumnSummaryView
from microagg_desktop.table_model import DataFrameModel
from microagg_desktop.table_view import DataFrameView

__all__ = ["DataPage", "MISSING_CHOICES"]

MISSING_CHOICES = (
    ("stop", "Stop the run and tell me"),
    ("exclude", "Exclude those records: release them unmasked, flagged"),
)


class DataPage(QWidget):
    """The table, its column summary and the missing-value choice.

    Signals
    -------
    changed
        The missing-value choice changed (the shown result may no longer match).
    """

    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.info = QLabel("Open a table (CSV, XLSX, Stata, SPSS or SAS) with File ▸ Open…, "
                           "drop a file here, or try the bundled sample with Open sample.",
                           self)
        self.info.setWordWrap(True)
        self.view = DataFrameView(self)
        self.view.setAccessibleName("Data table")
        self.view.setToolTip("The table as read. Click a column header to sort; the row "
                             "numbers stay those of the file.")
        self.summary = ColumnSummaryView(self)
        self.missing_box = QComboBox(self)
        for value, text in MISSING_CHOICES:
            self.missing_box.addItem(text, value)
        self.missing_box.setAccessibleName("Records with missing values")
        self.missing_box.setToolTip(
            "A record with a missing value in a quasi-identifier, stratum or (for "
            "t-closeness) confidential column cannot be microaggregated. Stop: the run "
            "names the column and row. Exclude: those records are kept aside and put back "
            "unmasked with the flag column 'unmasked_missing'; the results, the report "
            "and Export warn about them. Nothing is dropped silently.")
        self.missing_box.currentIndexChanged.connect(lambda _: self.changed.emit())
        choice = QFormLayout()
        choice.addRow("Records with &missing values:", self.missing_box)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.view)
        splitter.addWidget(self.summary)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.info)
        layout.addWidget(splitter, 1)
        layout.addLayout(choice)

    def set_frame(self, table: pd.DataFrame, source: str = "") -> None:
        """Show ``table`` (not copied) and summarise its columns."""
        self.view.show_frame(DataFrameModel(table, parent=self.view))
        self.info.setText(f"{source or 'Table'}: {len(table):,} records × "
                          f"{table.shape[1]} columns.")
        self.summary.set_frame(table)

    def set_notes(self, notes) -> None:
        """Show what the reader noticed (a column read as text, cells read as missing)
        under the table's size, in full: the status bar would cut a long note."""
        if notes:
            first = self.info.text().split("\n")[0]
            self.info.setText(first + "\nRead: " + " ".join(notes))

    def missing(self) -> str:
        """``"stop"`` or ``"exclude"``."""
        return self.missing_box.currentData()

    def set_missing(self, value: str) -> None:
        position = self.missing_box.findData(value)
        if position < 0:
            raise ValueError(f"'{value}' is not a missing-value choice.")
        self.missing_box.setCurrentIndex(position)
