"""The role editor: one row per column with its name, role, type and a summary.

A thin Qt binding of :class:`.state.RoleState`: :class:`RoleModel` shows the state and
writes role changes back to it; :class:`RoleDelegate` edits the role with a drop-down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from PySide6.QtCore import (QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt,
                            Signal)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHeaderView, QLabel,
                               QStyledItemDelegate, QTableView, QVBoxLayout, QWidget)

from core import Role, RoleSpec
from microagg_desktop.state import STRATUM, RoleState

__all__ = ["RoleModel", "RoleDelegate", "RoleEditor", "ROLE_LABELS"]

ROLE_LABELS = {
    Role.IDENTIFIER.value: "Identifier (dropped)",
    Role.QUASI_IDENTIFIER.value: "Quasi-identifier (aggregated)",
    Role.CONFIDENTIAL.value: "Confidential (kept)",
    Role.NON_CONFIDENTIAL.value: "Non-confidential (kept)",
    STRATUM: "Stratum (kept; groups stay within)",
}
"""What the drop-down shows for each choice: the role and what happens to the column."""

_ROLE_COLOURS = {
    Role.IDENTIFIER.value: QColor(250, 220, 220),
    Role.QUASI_IDENTIFIER.value: QColor(214, 230, 250),
    Role.CONFIDENTIAL.value: QColor(250, 236, 204),
    Role.NON_CONFIDENTIAL.value: QColor(255, 255, 255),
    STRATUM: QColor(222, 240, 222),
}

NAME, ROLE, KIND, SUMMARY = range(4)
_HEADERS = ("Column", "Role", "Type", "Summary")


class RoleModel(QAbstractTableModel):
    """Rows are the table's columns; the Role column is editable.

    ``setData(index, role)`` accepts a :class:`~core.Role` or its string value under
    ``EditRole``; ``rolesChanged`` is emitted after every change.
    """

    rolesChanged = Signal()

    def __init__(self, state: RoleState | None = None, parent=None):
        super().__init__(parent)
        self._state = state or RoleState()

    @property
    def state(self) -> RoleState:
        return self._state

    def set_state(self, state: RoleState) -> None:
        """Show another table's columns."""
        self.beginResetModel()
        self._state = state
        self.endResetModel()
        self.rolesChanged.emit()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._state.columns)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(_HEADERS)

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        info = self._state.columns[index.row()]
        column_role = self._state.choice(info.name)
        if role == Qt.ItemDataRole.DisplayRole:
            return (info.name, ROLE_LABELS[column_role], info.kind,
                    info.summary)[index.column()]
        if role == Qt.ItemDataRole.EditRole and index.column() == ROLE:
            return column_role
        if role == Qt.ItemDataRole.BackgroundRole and index.column() in (NAME, ROLE):
            return QBrush(_ROLE_COLOURS[column_role])
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == ROLE:
                return "Choose what happens to this column in the released table."
            if index.column() == SUMMARY:
                return info.summary
        return None

    def setData(self, index: QModelIndex | QPersistentModelIndex, value: Any,
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or index.column() != ROLE or \
                role != Qt.ItemDataRole.EditRole:
            return False
        value = value.value if isinstance(value, Role) else str(value)
        if value not in ROLE_LABELS:
            return False
        name = self._state.columns[index.row()].name
        if self._state.choice(name) == value:
            return True
        self._state.set_choice(name, value)
        self.dataChanged.emit(self.index(index.row(), NAME), self.index(index.row(), ROLE))
        self.rolesChanged.emit()
        return True

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or section < 0:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return _HEADERS[section] if section < len(_HEADERS) else None
        return str(section + 1) if section < self.rowCount() else None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == ROLE:
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def row_of(self, column: str) -> int:
        """The model row showing ``column``; raise ``KeyError`` if absent."""
        for row, info in enumerate(self._state.columns):
            if info.name == column:
                return row
        raise KeyError(f"Column '{column}' is not in the table.")


class RoleDelegate(QStyledItemDelegate):
    """A drop-down of the four roles; a choice is committed at once."""

    def createEditor(self, parent, option, index):
        editor = QComboBox(parent)
        for choice, label in ROLE_LABELS.items():
            editor.addItem(label, choice)
        editor.currentIndexChanged.connect(lambda _: self.commitData.emit(editor))
        return editor

    def setEditorData(self, editor: QComboBox, index) -> None:
        position = editor.findData(index.data(Qt.ItemDataRole.EditRole))
        if position >= 0 and position != editor.currentIndex():
            editor.blockSignals(True)
            editor.setCurrentIndex(position)
            editor.blockSignals(False)

    def setModelData(self, editor: QComboBox, model, index) -> None:
        model.setData(index, editor.currentData(), Qt.ItemDataRole.EditRole)


class RoleEditor(QWidget):
    """The Roles tab: an explanation line and the role table.

    Signals
    -------
    rolesChanged
        After any role changed or a new table was loaded.
    """

    rolesChanged = Signal()

    PERSISTENT_EDITOR_LIMIT = 300
    """Up to this many columns, every role drop-down is always visible."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = RoleModel(parent=self)
        self.model.rolesChanged.connect(self.rolesChanged)
        self.view = QTableView(self)
        self.view.setModel(self.model)
        self.view.setItemDelegateForColumn(ROLE, RoleDelegate(self.view))
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.AllEditTriggers)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setAlternatingRowColors(False)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.view.verticalHeader().setDefaultSectionSize(
            max(30, self.view.fontMetrics().height() + 14))
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(SUMMARY, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(ROLE, self._role_column_width())
        self.hint = QLabel(
            "Choose a role for every column. Quasi-identifiers (attributes an intruder "
            "could know, such as age or income) are replaced by group means; identifiers "
            "are dropped; confidential and non-confidential columns are released as they "
            "are. A stratum column (e.g. region) is released as it is, and records are "
            "only grouped with records of the same stratum.", self)
        self.hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.view)

    def _role_column_width(self) -> int:
        probe = QComboBox()
        for label in ROLE_LABELS.values():
            probe.addItem(label)
        return probe.sizeHint().width() + 24

    def set_table(self, table: pd.DataFrame,
                  roles: Mapping[str, Role | str] | None = None) -> None:
        """Describe ``table``'s columns; preset ``roles``, default the others."""
        self.model.set_state(RoleState(table, roles))
        if self.model.rowCount() <= self.PERSISTENT_EDITOR_LIMIT:
            for row in range(self.model.rowCount()):
                self.view.openPersistentEditor(self.model.index(row, ROLE))
        for column in (NAME, KIND):
            self.view.resizeColumnToContents(column)
            self.view.horizontalHeader().resizeSection(
                column, min(self.view.columnWidth(column) + 24, 320))

    def set_role(self, column: str, role: Role | str) -> None:
        """Give ``column`` a role (or ``"stratum"``), as if chosen in the drop-down."""
        value = role.value if isinstance(role, Role) else str(role)
        if not self.model.setData(self.model.index(self.model.row_of(column), ROLE), value):
            raise ValueError(f"'{role}' is not a role.")

    def role(self, column: str) -> Role:
        return self.model.state.role(column)

    def roles(self) -> RoleSpec:
        """The current role specification."""
        return self.model.state.roles()
