"""The Help menu's windows: About (version, licences, bill of materials) and the guide.

Everything shown is read from the installation (:mod:`.about`, ``resources/guide.md``);
nothing is fetched.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QLabel, QPlainTextEdit,
                               QTableWidget, QTableWidgetItem, QTabWidget, QTextBrowser,
                               QVBoxLayout, QWidget, QHeaderView, QAbstractItemView)

from microagg_desktop.about import (APPLICATION_LICENCE, application_version,
                                    bill_of_materials, licence_text)
from microagg_desktop.paths import resource_path

__all__ = ["AboutDialog", "GuideDialog"]


def _closing_buttons(dialog: QDialog) -> QDialogButtonBox:
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
    buttons.rejected.connect(dialog.reject)
    buttons.accepted.connect(dialog.accept)
    return buttons


class AboutDialog(QDialog):
    """Version, the licence, and every component with its version and licence."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("About MicroAgg Desktop")
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName("About")

        about = QLabel(
            f"<h2>MicroAgg Desktop {application_version()}</h2>"
            "<p>Releases microdata safely by microaggregation: k-anonymity, t-closeness "
            "and differential-privacy constructions, each result checked by an "
            "independent verifier before it is shown or exported.</p>"
            f"<p>Licence: {APPLICATION_LICENCE} (GNU General Public License, version 3 or "
            "later). Qt for Python is used under the GNU LGPL 3.</p>"
            "<p>The application never uses the network: no telemetry, no update checks; "
            "everything it needs is installed with it.</p>", self.tabs)
        about.setWordWrap(True)
        about.setAlignment(Qt.AlignmentFlag.AlignTop)
        about.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        about.setContentsMargins(12, 12, 12, 12)
        self.tabs.addTab(about, "&About")

        components = bill_of_materials()
        self.components = QTableWidget(len(components), 3, self.tabs)
        self.components.setAccessibleName("Bill of materials")
        self.components.setHorizontalHeaderLabels(["Component", "Version", "Licence"])
        self.components.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.components.verticalHeader().setVisible(False)
        for row, component in enumerate(components):
            for column, text in enumerate((component.name, component.version,
                                           component.licence)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.components.setItem(row, column, item)
        header = self.components.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.tabs.addTab(self.components, "&Bill of materials")

        for title, name in (("&GPL 3 (this application)", "LICENSE-GPL-3.0.txt"),
                            ("&LGPL 3 (Qt for Python)", "LICENSE-LGPL-3.0.txt")):
            text = QPlainTextEdit(self.tabs)
            text.setReadOnly(True)
            text.setPlainText(licence_text(name))
            text.setAccessibleName(title.replace("&", ""))
            self.tabs.addTab(text, title)

        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(_closing_buttons(self))
        self.resize(640, 460)


class GuideDialog(QDialog):
    """The short guide (``resources/guide.md``), readable without a browser."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("MicroAgg Desktop guide")
        self.browser = QTextBrowser(self)
        self.browser.setAccessibleName("Guide")
        self.browser.setOpenLinks(False)  # no link may leave the application
        self.browser.setMarkdown(resource_path("guide.md").read_text(encoding="utf-8"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(_closing_buttons(self))
        self.resize(700, 560)
