"""The import dialog: detected settings shown, a live preview, errors in red, Open only
when the settings read the file. Dialogs are never run modally: tests drive methods."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from microagg_desktop.import_dialog import DEBOUNCE_MS, ImportDialog  # noqa: E402
from microagg_desktop.import_options import (ImportOptions, describe_value,  # noqa: E402
                                             detected_label)

pytestmark = pytest.mark.gui

CORPUS = Path(__file__).resolve().parent / "corpus"
FORMATS = CORPUS / "formats"
DISPLAY = Qt.ItemDataRole.DisplayRole


# -- Qt-free options -----------------------------------------------------------------------

def test_detected_labels_name_the_value_and_its_source():
    assert detected_label("delimiter", {"value": ";", "source": "detected"}) == \
        "semicolon ; (detected)"
    assert detected_label("decimal", {"value": ".", "source": "default"}) == "point . (default)"
    assert detected_label("thousands", {"value": None, "source": "detected"}) == \
        "none (detected)"
    assert detected_label("encoding", {"value": "utf-8-sig", "source": "detected"}) == \
        "utf-8-sig (detected)"
    assert detected_label("delimiter", {"value": ",", "source": "given"}) == "detect"
    assert describe_value("delimiter", "\t") == "tab"


def test_header_row_given_drops_skip_rows():
    assert ImportOptions(skip_rows=2, header_row=4).as_kwargs() == {"header_row": 4}
    assert ImportOptions(skip_rows=2).as_kwargs() == {"skip_rows": 2}
    assert ImportOptions().as_kwargs() == {}


# -- the dialog ----------------------------------------------------------------------------

def _cells(dialog, column: int) -> list[str]:
    model = dialog.table.model()
    return [model.data(model.index(r, column), DISPLAY) for r in range(model.rowCount())]


def test_fields_start_at_what_was_detected(qtbot):
    dialog = ImportDialog(CORPUS / "locale_thousands_dot.csv")
    qtbot.addWidget(dialog)
    assert dialog.delimiter.currentText() == "semicolon ; (detected)"
    assert dialog.decimal.currentText() == "comma , (detected)"
    assert dialog.thousands.currentText() == "point . (detected)"
    assert dialog.encoding.currentText() == "UTF-8 (detected)"
    assert dialog.header_row.text() == "line 1 (detected)"
    assert _cells(dialog, 1) == ["50900", "500", "1250"]
    assert dialog.open_button.isEnabled() and not dialog.error.isVisibleTo(dialog)
    # Left at the detected choices, nothing is forced: the read detects as the preview did.
    assert dialog.options().as_kwargs() == {}


def test_changing_a_setting_updates_the_preview_after_a_pause(qtbot):
    dialog = ImportDialog(FORMATS / "semicolon_decimal_comma.csv")
    qtbot.addWidget(dialog)
    assert _cells(dialog, 2)[:2] == ["1000.0", "1037.5"]
    dialog.delimiter.setCurrentIndex(dialog.delimiter.findData("|"))
    assert dialog.open_button.isEnabled()  # not yet: the preview waits for a pause
    qtbot.waitUntil(lambda: not dialog.open_button.isEnabled(), timeout=DEBOUNCE_MS * 10)
    assert "'|'" in dialog.error.text() and dialog.error.isVisibleTo(dialog)
    assert "#b00020" in dialog.error.styleSheet()
    assert dialog.table.model().rowCount() == 0
    # The detected choice keeps saying what detection found.
    assert dialog.delimiter.itemText(0) == "semicolon ; (detected)"
    dialog.delimiter.setCurrentIndex(0)
    dialog.refresh()
    assert dialog.open_button.isEnabled() and _cells(dialog, 3)[1] == "0.25"


def test_a_decimal_point_that_the_file_does_not_use_is_shown_red(qtbot):
    dialog = ImportDialog(CORPUS / "locale_thousands_dot.csv")
    qtbot.addWidget(dialog)
    dialog.decimal.setCurrentIndex(dialog.decimal.findData("."))
    dialog.thousands.setCurrentIndex(dialog.thousands.findData(","))
    dialog.refresh()
    assert not dialog.open_button.isEnabled()
    assert "locale_thousands_dot.csv" in dialog.error.text()


def test_a_workbook_offers_its_sheets(qtbot):
    dialog = ImportDialog(FORMATS / "two_sheets.xlsx")
    qtbot.addWidget(dialog)
    assert [dialog.sheet.itemText(i) for i in range(dialog.sheet.count())] == \
        ["persons", "households"]
    assert not dialog.delimiter.isVisibleTo(dialog) and dialog.sheet.isVisibleTo(dialog)
    dialog.sheet.setCurrentIndex(1)
    dialog.refresh()
    assert dialog.table.model().headerData(0, Qt.Orientation.Horizontal, DISPLAY) == \
        "household"
    assert dialog.options().as_kwargs() == {"sheet": "households"}


def test_spss_file_shows_an_info_line_and_no_separators(qtbot):
    dialog = ImportDialog(FORMATS / "survey.sav")
    qtbot.addWidget(dialog)
    assert "an SPSS file" in dialog.intro.text() and "no separators" in dialog.intro.text()
    for widget in (dialog.delimiter, dialog.decimal, dialog.sheet, dialog.header_row):
        assert not widget.isVisibleTo(dialog)
    assert _cells(dialog, 1)[:2] == ["male", "female"]
    assert dialog.options().as_kwargs() == {}


def test_a_file_that_does_not_read_disables_open(qtbot, tmp_path):
    dialog = ImportDialog(tmp_path / "gone.csv")
    qtbot.addWidget(dialog)
    assert not dialog.open_button.isEnabled() and "does not exist" in dialog.error.text()


def test_every_control_has_a_name_and_a_tooltip(qtbot):
    from PySide6.QtWidgets import QAbstractButton, QComboBox, QSpinBox, QTableView

    dialog = ImportDialog(CORPUS / "locale_thousands_dot.csv")
    qtbot.addWidget(dialog)
    controls = [w for kind in (QComboBox, QSpinBox, QAbstractButton, QTableView)
                for w in dialog.findChildren(kind) if w.isVisibleTo(dialog)]
    assert controls
    for widget in controls:
        assert widget.accessibleName() and widget.toolTip(), widget
        if widget.objectName() != "qt_tableview_cornerbutton":  # that one is Ctrl+A
            assert widget.focusPolicy() != Qt.FocusPolicy.NoFocus, widget
