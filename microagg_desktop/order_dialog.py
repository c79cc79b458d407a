"""The category-order dialog: the categories of an ordinal column in a list, lowest first.

The user moves the selected category with Up and Down (buttons, Alt+U / Alt+D, or
Ctrl+Up / Ctrl+Down in the list) or by dragging it; Reset restores the preset order.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QHBoxLayout,
                               QLabel, QListWidget, QListWidgetItem, QPushButton,
                               QVBoxLayout)

from microagg_desktop.state import format_number

__all__ = ["OrderDialog", "category_text"]


def category_text(value) -> str:
    """How a category is shown: numbers compactly (3.0 as 3), everything else as text."""
    if isinstance(value, float):
        return format_number(value)
    return str(value)


class OrderDialog(QDialog):
    """Edit the order of ``values`` (lowest first); :meth:`values` gives the result.

    Parameters
    ----------
    column : str
        Named in the title and the explanation.
    values : sequence
        The current order.
    preset : sequence, optional
        What Reset restores (default: ``values``).
    """

    def __init__(self, column: str, values: Sequence, *, preset: Sequence | None = None,
                 parent=None):
        super().__init__(parent)
        self._preset = tuple(values if preset is None else preset)
        self.setWindowTitle(f"Category order of '{column}'")
        self.explanation = QLabel(
            f"Order the categories of '{column}' from lowest (top) to highest (bottom). "
            "Groups are released with their median category in this order. Select a "
            "category and move it with Up and Down, Ctrl+Up and Ctrl+Down, or drag it.",
            self)
        self.explanation.setWordWrap(True)
        self.list = QListWidget(self)
        self.list.setAccessibleName(f"Categories of {column}, lowest first")
        self.list.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.explanation.setBuddy(self.list)
        self.up_button = QPushButton("Move &up", self)
        self.up_button.setAccessibleName("Move the selected category up (lower)")
        self.down_button = QPushButton("Move &down", self)
        self.down_button.setAccessibleName("Move the selected category down (higher)")
        self.reset_button = QPushButton("&Reset", self)
        self.reset_button.setAccessibleName("Reset to the preset order")
        self.reset_button.setToolTip("Restore the preset order (the column's categories, "
                                     "or its values sorted).")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel,
            self)

        side = QVBoxLayout()
        for button in (self.up_button, self.down_button, self.reset_button):
            side.addWidget(button)
        side.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.list, 1)
        row.addLayout(side)
        layout = QVBoxLayout(self)
        layout.addWidget(self.explanation)
        layout.addLayout(row, 1)
        layout.addWidget(self.buttons)

        self.up_button.clicked.connect(self.move_up)
        self.down_button.clicked.connect(self.move_down)
        self.reset_button.clicked.connect(lambda: self.set_values(self._preset))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.list.currentRowChanged.connect(self._update_buttons)
        for keys, slot in (("Ctrl+Up", self.move_up), ("Ctrl+Down", self.move_down)):
            shortcut = QShortcut(QKeySequence(keys), self.list)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
            shortcut.activated.connect(slot)

        self.set_values(values)
        self.list.setFocus()
        self.resize(max(380, self.sizeHint().width()), 420)

    def set_values(self, values: Sequence) -> None:
        """Show ``values`` in this order; the first is selected."""
        self._shown = tuple(values)  # items hold positions here, not the values themselves
        self.list.clear()
        for position, value in enumerate(self._shown):
            item = QListWidgetItem(category_text(value))
            item.setData(Qt.ItemDataRole.UserRole, position)
            self.list.addItem(item)
        self.list.setCurrentRow(0)
        self._update_buttons()

    def values(self) -> tuple:
        """The categories in the order shown, lowest first (the original values)."""
        return tuple(self._shown[self.list.item(row).data(Qt.ItemDataRole.UserRole)]
                     for row in range(self.list.count()))

    def move_up(self) -> None:
        """Move the selected category one place up (lower in the order)."""
        self._move(-1)

    def move_down(self) -> None:
        """Move the selected category one place down (higher in the order)."""
        self._move(+1)

    def _move(self, step: int) -> None:
        row = self.list.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.list.count():
            return
        item = self.list.takeItem(row)
        self.list.insertItem(target, item)
        self.list.setCurrentRow(target)
        self._update_buttons()

    def _update_buttons(self) -> None:
        row = self.list.currentRow()
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < self.list.count() - 1)
