"""A dialog to say what a file is, with a live preview of its first rows.

A thin Qt binding of :class:`.import_options.ImportOptions` over
:func:`core.io.preview.preview_table`: each setting starts at what detection found
(``'semicolon ; (detected)'``); changing one reads the preview again after a short pause,
and a setting that does not read the file shows why in red and disables Open.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel,
                               QSpinBox, QVBoxLayout)

from core.io.preview import Preview, file_kind, preview_table
from microagg_desktop.import_options import (DECIMALS, DELIMITERS, DETECT, ENCODINGS,
                                             THOUSANDS, ImportOptions, detected_label)
from microagg_desktop.table_model import DataFrameModel
from microagg_desktop.table_view import DataFrameView

__all__ = ["ImportDialog", "PREVIEW_ROWS", "DEBOUNCE_MS"]

PREVIEW_ROWS = 50
DEBOUNCE_MS = 200
_KINDS = {"stata": "a Stata file", "spss": "an SPSS file", "sas": "a SAS file"}


class ImportDialog(QDialog):
    """Import settings for ``path`` with a preview; :meth:`options` gives the settings.

    Parameters
    ----------
    path : str or path-like
        The file to open. A file that cannot be read shows why in the preview.
    parent : QWidget, optional
    """

    def __init__(self, path, parent=None):
        super().__init__(parent)
        self.path = Path(path)
        self.kind = file_kind(self.path)
        self.preview: Preview | None = None
        self.setWindowTitle(f"Open with settings: {self.path.name}")
        self.intro = QLabel(self)
        self.intro.setWordWrap(True)
        form = QFormLayout()
        self.delimiter = self._choices(DELIMITERS, "Column separator",
                                       "The character between the columns of a line.")
        self.decimal = self._choices(DECIMALS, "Decimal mark",
                                     "The mark before the decimals: '1,5' or '1.5'.")
        self.thousands = self._choices(
            THOUSANDS, "Thousands separator",
            "The mark grouping thousands ('50.900' is fifty thousand nine hundred with "
            "decimal comma and thousands point).")
        self.encoding = self._choices(ENCODINGS, "Text encoding",
                                      "How the file's characters are stored.")
        self.skip_rows = QSpinBox(self)
        self.skip_rows.setRange(0, 10_000)
        self.skip_rows.setSpecialValueText(DETECT)
        self.skip_rows.setAccessibleName("Lines to skip before the header")
        self.skip_rows.setToolTip("Title lines above the header row.")
        self.header_row = QSpinBox(self)
        self.header_row.setRange(0, 10_000)
        self.header_row.setSpecialValueText(DETECT)
        self.header_row.setAccessibleName("Header line")
        self.header_row.setToolTip("The line (1 = first) that holds the column names.")
        self.sheet = QComboBox(self)
        self.sheet.setAccessibleName("Sheet")
        self.sheet.setToolTip("The worksheet of the workbook to open.")
        self._text_rows = []
        if self.kind in ("text", "unknown"):
            for label, widget in (("Column &separator:", self.delimiter),
                                  ("&Decimal mark:", self.decimal),
                                  ("&Thousands separator:", self.thousands),
                                  ("&Encoding:", self.encoding)):
                form.addRow(label, widget)
        if self.kind == "workbook":
            form.addRow("S&heet:", self.sheet)
        if self.kind in ("text", "workbook", "unknown"):
            form.addRow("Lines to s&kip before the header:", self.skip_rows)
            form.addRow("&Header line:", self.header_row)
        for widget in (self.delimiter, self.decimal, self.thousands, self.encoding,
                       self.sheet, self.skip_rows, self.header_row):
            if form.indexOf(widget) < 0:
                widget.hide()  # not a setting of this kind of file
        self.table = DataFrameView(self)
        self.table.setAccessibleName("Preview of the first rows")
        self.table.setToolTip(f"The first {PREVIEW_ROWS} rows as they will be read with "
                              "these settings.")
        self.table.setMinimumHeight(180)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00020;")
        self.error.setAccessibleName("Preview problem")
        self.error.setToolTip("Why the file does not read with these settings.")
        self.notes = QLabel(self)
        self.notes.setWordWrap(True)
        self.notes.setAccessibleName("Reader's notes")
        self.notes.setToolTip("What the reader noticed in these rows.")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel,
            self)
        self.open_button = self.buttons.button(QDialogButtonBox.StandardButton.Open)
        self.open_button.setAccessibleName("Open")
        self.open_button.setToolTip("Open the file with these settings.")
        cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        cancel.setAccessibleName("Cancel")
        cancel.setToolTip("Close without opening the file.")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(form)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.error)
        layout.addWidget(self.notes)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(560)
        self.resize(760, 560)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.refresh)
        self.refresh()
        if self.preview is not None and self.preview.sheets:
            self.sheet.blockSignals(True)
            self.sheet.addItems(list(self.preview.sheets))
            self.sheet.blockSignals(False)
        for box in (self.delimiter, self.decimal, self.thousands, self.encoding, self.sheet):
            box.currentIndexChanged.connect(self.schedule_refresh)
        for spin in (self.skip_rows, self.header_row):
            spin.valueChanged.connect(self.schedule_refresh)
        self.header_row.valueChanged.connect(self._one_header_option)
        self.skip_rows.valueChanged.connect(self._one_header_option)

    def _choices(self, mapping: dict, name: str, tip: str) -> QComboBox:
        box = QComboBox(self)
        for label, value in mapping.items():
            box.addItem(label, value)
        box.setAccessibleName(name)
        box.setToolTip(tip + " The first choice is what the tool detected.")
        return box

    # -- state ---------------------------------------------------------------------------

    def options(self) -> ImportOptions:
        """The settings chosen; a setting left at its detected choice is ``None``."""
        text = self.kind in ("text", "unknown")
        return ImportOptions(
            delimiter=self.delimiter.currentData() if text else None,
            decimal=self.decimal.currentData() if text else None,
            thousands=self.thousands.currentData() if text else None,
            encoding=self.encoding.currentData() if text else None,
            skip_rows=self.skip_rows.value(),
            header_row=self.header_row.value() or None,
            sheet=self.sheet.currentText() or None if self.kind == "workbook" else None)

    def schedule_refresh(self, *_) -> None:
        """Read the preview again once the settings stop changing for a moment."""
        self._timer.start()

    def refresh(self) -> Preview:
        """Read the preview now with the current settings and show it."""
        self._timer.stop()
        preview = preview_table(self.path, rows=PREVIEW_ROWS, **self.options().as_kwargs())
        self.preview = preview
        if preview.table is not None:
            self.table.show_frame(DataFrameModel(preview.table, parent=self.table))
        else:
            self.table.show_frame(DataFrameModel(parent=self.table))
        self.error.setText("" if preview.ok else preview.error)
        self.error.setVisible(not preview.ok)
        self.notes.setText(" ".join(preview.notes))
        self.notes.setVisible(bool(preview.notes))
        self.open_button.setEnabled(preview.ok)
        self._show_detected(preview.settings)
        self.intro.setText(self._intro_text(preview))
        return preview

    def _show_detected(self, settings: dict) -> None:
        if not settings:
            return  # the file did not read: keep what the last good read detected
        for name, box in (("delimiter", self.delimiter), ("decimal", self.decimal),
                          ("thousands", self.thousands), ("encoding", self.encoding)):
            entry = settings.get(name)
            if entry is None or entry.get("source") in ("detected", "default"):
                box.setItemText(0, detected_label(name, entry))
        line = settings.get("header_line") or {}
        if line.get("source") == "detected" and line.get("value"):
            self.header_row.setSpecialValueText(f"line {line['value']} (detected)")
            self.skip_rows.setSpecialValueText(f"{line['value'] - 1} (detected)")

    def _intro_text(self, preview: Preview) -> str:
        shape = ""
        if preview.table is not None:
            shape = (f" The first {len(preview.table)} rows and {preview.table.shape[1]} "
                     "columns are shown.")
        if self.kind in _KINDS:
            return (f"'{self.path.name}' is {_KINDS[self.kind]}: the columns, their types "
                    "and value labels come from the file; there are no separators to "
                    f"choose.{shape}")
        if self.kind == "workbook":
            return f"Choose the sheet and, if needed, the header line.{shape}"
        return ("Each setting starts at what was detected; change one if the preview "
                f"reads the file wrong.{shape}")

    def _one_header_option(self, _=None) -> None:
        # The reader takes the header line or the lines to skip, not both.
        sender = self.sender()
        other = self.skip_rows if sender is self.header_row else self.header_row
        if sender is not None and sender.value() and other.value():
            other.blockSignals(True)
            other.setValue(0)
            other.blockSignals(False)
