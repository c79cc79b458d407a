"""A dialog to say what a file is: separators, encoding, header line, sheet.

A thin Qt binding of :class:`.import_options.ImportOptions`; every field starts at
"detect", so a user only sets what detection got wrong.
"""

from __future__ import annotations

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel,
                               QSpinBox, QVBoxLayout)

from microagg_desktop.import_options import (DECIMALS, DELIMITERS, ENCODINGS, THOUSANDS,
                                             ImportOptions)

__all__ = ["ImportDialog"]


class ImportDialog(QDialog):
    """Ask for the import settings of ``file_name``; :meth:`options` gives them."""

    def __init__(self, file_name: str, sheets: list[str] | None = None, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Import settings: {file_name}")
        intro = QLabel(
            "Leave a setting at 'detect' to let the tool find it; set it when the "
            "file says otherwise (e.g. '50.900' meaning fifty thousand nine hundred "
            "needs decimal comma and thousands point).", self)
        intro.setWordWrap(True)
        form = QFormLayout()
        self.delimiter = self._choices(DELIMITERS, "Column separator")
        self.decimal = self._choices(DECIMALS, "Decimal mark")
        self.thousands = self._choices(THOUSANDS, "Thousands separator")
        self.encoding = self._choices(ENCODINGS, "Text encoding")
        self.skip_rows = QSpinBox(self)
        self.skip_rows.setRange(0, 10_000)
        self.skip_rows.setAccessibleName("Lines to skip before the header")
        self.skip_rows.setToolTip("Title lines above the header row.")
        self.header_row = QSpinBox(self)
        self.header_row.setRange(0, 10_000)
        self.header_row.setSpecialValueText("detect")
        self.header_row.setAccessibleName("Header line")
        self.header_row.setToolTip("The line (1 = first) that holds the column names.")
        form.addRow("Column &separator:", self.delimiter)
        form.addRow("&Decimal mark:", self.decimal)
        form.addRow("&Thousands separator:", self.thousands)
        form.addRow("&Encoding:", self.encoding)
        form.addRow("Lines to s&kip before the header:", self.skip_rows)
        form.addRow("&Header line:", self.header_row)
        self.sheet = None
        if sheets:
            self.sheet = QComboBox(self)
            self.sheet.addItems(sheets)
            self.sheet.setAccessibleName("Sheet")
            form.addRow("S&heet:", self.sheet)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel,
            self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.setMinimumWidth(460)

    def _choices(self, mapping: dict, name: str) -> QComboBox:
        box = QComboBox(self)
        for label, value in mapping.items():
            box.addItem(label, value)
        box.setAccessibleName(name)
        return box

    def options(self) -> ImportOptions:
        """The settings chosen."""
        return ImportOptions(
            delimiter=self.delimiter.currentData(), decimal=self.decimal.currentData(),
            thousands=self.thousands.currentData(), encoding=self.encoding.currentData(),
            skip_rows=self.skip_rows.value(),
            header_row=self.header_row.value() or None,
            sheet=self.sheet.currentText() if self.sheet is not None else None)
