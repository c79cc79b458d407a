"""The role editor: one row per column with its name, role, level, type and a summary.

A thin Qt binding of :class:`.state.RoleState`: :class:`RoleModel` shows the state and
writes changes back to it; :class:`RoleDelegate` edits the role with a drop-down;
:class:`LevelDelegate` edits a quasi-identifier's measurement level with a drop-down and,
for an ordinal one, an *Order…* button that opens :class:`.order_dialog.OrderDialog`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
from PySide6.QtCore import (QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt,
                            Signal)
from PySide6.QtGui import QAction, QBrush, QColor, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QComboBox, QHBoxLayout,
                               QHeaderView, QLabel, QStyle, QStyledItemDelegate,
                               QTableView, QToolButton, QVBoxLayout, QWidget)

from core import Role, RoleSpec
from core.data.roles import Level
from microagg_desktop.order_dialog import OrderDialog, category_text
from microagg_desktop.state import STRATUM, RoleState

__all__ = ["RoleModel", "RoleDelegate", "LevelDelegate", "LevelEditor", "RoleEditor",
           "ROLE_LABELS", "LEVEL_LABELS", "LEVEL_CHOICES_ROLE", "ORDER_SHORTCUT"]

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

LEVEL_LABELS = {
    Level.NUMERIC.value: "Numeric",
    Level.ORDINAL.value: "Ordinal (ordered categories)",
    Level.NOMINAL.value: "Nominal (categories)",
}
"""What the level drop-down shows for each measurement level."""

_LEVEL_TIPS = {
    Level.NUMERIC.value: "Numeric: compared by standardised difference; released as the "
                         "group mean.",
    Level.ORDINAL.value: "Ordinal: ordered categories, compared by rank; released as the "
                         "group's median category.",
    Level.NOMINAL.value: "Nominal: unordered categories, same or different; released as "
                         "the group's most frequent category.",
}

_NOT_APPLICABLE = QColor(240, 240, 240)

ORDER_SHORTCUT = "Ctrl+Shift+O"
"""Opens the category order of the ordinal quasi-identifier whose level has focus."""

LEVEL_CHOICES_ROLE = Qt.ItemDataRole.UserRole + 1
"""Data role of a Level cell: the level values its column can have, as a list."""

NAME, ROLE, LEVEL, KIND, SUMMARY = range(5)
_HEADERS = ("Column", "Role", "Level", "Type", "Summary")
_ORDER_SHOWN = 15
"""At most this many categories of an order are listed in a tooltip."""


class RoleModel(QAbstractTableModel):
    """Rows are the table's columns; Role is editable, and Level on quasi-identifier rows.

    ``setData(index, value)`` under ``EditRole`` accepts a :class:`~core.Role` or its
    string value in the Role column, a :class:`~core.data.roles.Level` or its string value in
    the Level column; ``rolesChanged`` is emitted after every change.
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

    def is_quasi_identifier(self, row: int) -> bool:
        return self._state.role(self._state.columns[row].name) is Role.QUASI_IDENTIFIER

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.column() == LEVEL:
            return self._level_data(index.row(), role)
        info = self._state.columns[index.row()]
        column_role = self._state.choice(info.name)
        if role == Qt.ItemDataRole.DisplayRole:
            return (info.name, ROLE_LABELS[column_role], "", info.kind,
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
            if index.column() == NAME:
                return self._warning(index.row())
        if role == Qt.ItemDataRole.DecorationRole and index.column() == NAME and \
                self._warning(index.row()):
            return QApplication.style().standardIcon(
                QStyle.StandardPixmap.SP_MessageBoxWarning)
        return None

    def _level_data(self, row: int, role: int) -> Any:
        name = self._state.columns[row].name
        qi = self.is_quasi_identifier(row)
        level = self._state.level(name).value
        if role == Qt.ItemDataRole.DisplayRole:
            return LEVEL_LABELS[level] if qi else ""
        if role == Qt.ItemDataRole.EditRole:
            return level if qi else None
        if role == LEVEL_CHOICES_ROLE:
            return [lv.value for lv in self._state.level_choices(name)]
        if role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(_ROLE_COLOURS[Role.QUASI_IDENTIFIER.value] if qi
                          else _NOT_APPLICABLE)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.level_tooltip(row)
        return None

    def level_tooltip(self, row: int) -> str:
        """What the Level cell of ``row`` explains: the level and an ordinal's order."""
        name = self._state.columns[row].name
        if not self.is_quasi_identifier(row):
            return "Measurement levels apply to quasi-identifiers only."
        level = self._state.level(name).value
        lines = [_LEVEL_TIPS[level]]
        order = self._state.order(name)
        if order is not None:
            shown = " < ".join(category_text(v) for v in order[:_ORDER_SHOWN])
            more = len(order) - _ORDER_SHOWN
            lines.append(f"Order, lowest first: {shown}"
                         + (f" < … ({more} more)" if more > 0 else ""))
            lines.append(f"Change it with Order…, {ORDER_SHORTCUT} or the context menu.")
        warning = self._warning(row)
        if warning:
            lines.append(warning)
        return "\n".join(lines)

    def _warning(self, row: int) -> str | None:
        if not self.is_quasi_identifier(row):
            return None
        return self._state.level_warning(self._state.columns[row].name)

    def setData(self, index: QModelIndex | QPersistentModelIndex, value: Any,
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        if index.column() == LEVEL:
            if not self.is_quasi_identifier(index.row()):
                return False
            try:
                self.set_level(index.row(), value)
            except ValueError:
                return False
            return True
        if index.column() != ROLE:
            return False
        value = value.value if isinstance(value, Role) else str(value)
        if value not in ROLE_LABELS:
            return False
        name = self._state.columns[index.row()].name
        if self._state.choice(name) == value:
            return True
        self._state.set_choice(name, value)
        self.dataChanged.emit(self.index(index.row(), NAME), self.index(index.row(), LEVEL))
        self.rolesChanged.emit()
        return True

    def set_level(self, row: int, level: Level | str) -> None:
        """Declare the level of ``row``'s column (errors as :meth:`RoleState.set_level`)."""
        name = self._state.columns[row].name
        before = self._state.level(name)
        self._state.set_level(name, level)
        if self._state.level(name) is not before:
            self.dataChanged.emit(self.index(row, LEVEL), self.index(row, LEVEL))
            self.rolesChanged.emit()

    def set_order(self, row: int, values: Iterable) -> None:
        """Order ``row``'s ordinal column (errors as :meth:`RoleState.set_order`)."""
        self._state.set_order(self._state.columns[row].name, values)
        self.dataChanged.emit(self.index(row, LEVEL), self.index(row, LEVEL))
        self.rolesChanged.emit()

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if section < 0:
            return None
        if orientation == Qt.Orientation.Horizontal and section == LEVEL and \
                role == Qt.ItemDataRole.ToolTipRole:
            return ("How a quasi-identifier is compared and released: numeric, ordinal "
                    "(ordered categories) or nominal (categories).")
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return _HEADERS[section] if section < len(_HEADERS) else None
        return str(section + 1) if section < self.rowCount() else None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == ROLE or (index.column() == LEVEL and
                                      self.is_quasi_identifier(index.row())):
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


class LevelEditor(QWidget):
    """A level drop-down and, for an ordinal level, an *Order…* button.

    The order can also be opened from the drop-down's context menu (right-click, or the
    Menu key / Shift+F10) or with :data:`ORDER_SHORTCUT` while the drop-down has focus.
    """

    levelChosen = Signal()
    orderRequested = Signal()

    def __init__(self, column: str, choices: Sequence[str], parent=None):
        super().__init__(parent)
        self.combo = QComboBox(self)
        self.combo.setAccessibleName(f"Measurement level of {column}")
        for value in choices:
            self.combo.addItem(LEVEL_LABELS[value], value)
        self.order_button = QToolButton(self)
        self.order_button.setText("Order…")
        self.order_button.setAccessibleName(f"Category order of {column}")
        self.order_action = QAction("Edit category &order…", self)
        self.order_action.setShortcut(QKeySequence(ORDER_SHORTCUT))
        self.order_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.combo.addAction(self.order_action)
        self.combo.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.combo, 1)
        layout.addWidget(self.order_button)
        self.setFocusProxy(self.combo)
        self.combo.currentIndexChanged.connect(self._chosen)
        self.order_button.clicked.connect(self.orderRequested)
        self.order_action.triggered.connect(self.orderRequested)
        self._show_order(False)

    def level(self) -> str:
        return self.combo.currentData()

    def show_level(self, level: str, tooltip: str = "") -> None:
        """Show ``level`` without emitting :attr:`levelChosen`."""
        position = self.combo.findData(level)
        if position >= 0 and position != self.combo.currentIndex():
            self.combo.blockSignals(True)
            self.combo.setCurrentIndex(position)
            self.combo.blockSignals(False)
        self._show_order(level == Level.ORDINAL.value)
        for widget in (self.combo, self.order_button):
            widget.setToolTip(tooltip)

    def _chosen(self) -> None:
        self._show_order(self.level() == Level.ORDINAL.value)
        self.levelChosen.emit()

    def _show_order(self, ordinal: bool) -> None:
        self.order_button.setVisible(ordinal)
        self.order_action.setVisible(ordinal)


class LevelDelegate(QStyledItemDelegate):
    """Edits a Level cell with a :class:`LevelEditor`; a choice is committed at once.

    Signals
    -------
    orderRequested(int)
        The model row whose category order the user wants to edit.
    """

    orderRequested = Signal(int)

    def createEditor(self, parent, option, index):
        editor = LevelEditor(str(index.siblingAtColumn(NAME).data()),
                             index.data(LEVEL_CHOICES_ROLE) or [], parent)
        where = QPersistentModelIndex(index)
        editor.levelChosen.connect(lambda: self.commitData.emit(editor))
        editor.orderRequested.connect(lambda: self.orderRequested.emit(where.row()))
        return editor

    def setEditorData(self, editor: LevelEditor, index) -> None:
        editor.show_level(index.data(Qt.ItemDataRole.EditRole),
                          index.data(Qt.ItemDataRole.ToolTipRole) or "")

    def setModelData(self, editor: LevelEditor, model, index) -> None:
        model.setData(index, editor.level(), Qt.ItemDataRole.EditRole)


class RoleEditor(QWidget):
    """The Roles tab: an explanation line and the role table.

    Signals
    -------
    rolesChanged
        After any role, level or order changed, or a new table was loaded.
    """

    rolesChanged = Signal()

    PERSISTENT_EDITOR_LIMIT = 300
    """Up to this many columns, every role (and quasi-identifier level) drop-down is
    always visible."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = RoleModel(parent=self)
        self.model.rolesChanged.connect(self.rolesChanged)
        self.model.dataChanged.connect(self._sync_level_editors)
        self.order_dialog: OrderDialog | None = None
        self._persistent = False
        self.view = QTableView(self)
        self.view.setModel(self.model)
        self.view.setItemDelegateForColumn(ROLE, RoleDelegate(self.view))
        self.level_delegate = LevelDelegate(self.view)
        self.level_delegate.orderRequested.connect(
            lambda row: self.edit_order(self.model.state.columns[row].name))
        self.view.setItemDelegateForColumn(LEVEL, self.level_delegate)
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
        header.resizeSection(LEVEL, self._level_column_width())
        self.hint = QLabel(
            "Choose a role for every column. Quasi-identifiers (attributes an intruder "
            "could know, such as age, income or region) are aggregated in groups of at "
            "least k records, according to their level: numeric ones are replaced by the "
            "group mean, ordinal ones (ordered categories; set their order with Order…) "
            "by the median category, nominal ones by the most frequent category. "
            "Identifiers are dropped; confidential and non-confidential columns are "
            "released as they are. A stratum column (e.g. region) is released as it is, "
            "and records are only grouped with records of the same stratum.", self)
        self.hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.view)

    def _role_column_width(self) -> int:
        probe = QComboBox()
        for label in ROLE_LABELS.values():
            probe.addItem(label)
        return probe.sizeHint().width() + 24

    def _level_column_width(self) -> int:
        probe = LevelEditor("", list(LEVEL_LABELS))
        probe.show_level(Level.ORDINAL.value)
        return (probe.combo.sizeHint().width() + probe.order_button.sizeHint().width()
                + probe.layout().spacing() + 24)

    def set_table(self, table: pd.DataFrame,
                  roles: Mapping[str, Role | str] | None = None) -> None:
        """Describe ``table``'s columns; preset ``roles``, default the others."""
        self.model.set_state(RoleState(table, roles))
        self._persistent = self.model.rowCount() <= self.PERSISTENT_EDITOR_LIMIT
        if self._persistent:
            for row in range(self.model.rowCount()):
                self.view.openPersistentEditor(self.model.index(row, ROLE))
            self._sync_level_editors(self.model.index(0, LEVEL),
                                     self.model.index(self.model.rowCount() - 1, LEVEL))
        for column in (NAME, KIND):
            self.view.resizeColumnToContents(column)
            self.view.horizontalHeader().resizeSection(
                column, min(self.view.columnWidth(column) + 24, 320))

    def _sync_level_editors(self, top_left: QModelIndex, bottom_right: QModelIndex,
                            roles=()) -> None:
        """Keep a level drop-down open on exactly the quasi-identifier rows."""
        if not self._persistent or not top_left.isValid():
            return
        for row in range(top_left.row(), bottom_right.row() + 1):
            index = self.model.index(row, LEVEL)
            wanted = self.model.is_quasi_identifier(row)
            if wanted != self.view.isPersistentEditorOpen(index):
                if wanted:
                    self.view.openPersistentEditor(index)
                else:
                    self.view.closePersistentEditor(index)

    def set_role(self, column: str, role: Role | str) -> None:
        """Give ``column`` a role (or ``"stratum"``), as if chosen in the drop-down."""
        value = role.value if isinstance(role, Role) else str(role)
        if not self.model.setData(self.model.index(self.model.row_of(column), ROLE), value):
            raise ValueError(f"'{role}' is not a role.")

    def role(self, column: str) -> Role:
        return self.model.state.role(column)

    def set_level(self, column: str, level: Level | str) -> None:
        """Declare the measurement level of ``column``, as if chosen in its drop-down.

        Raises ``KeyError`` for an unknown column and ``ValueError`` for an unknown level
        or numeric for a column that does not hold numbers.
        """
        self.model.set_level(self.model.row_of(column), level)

    def level(self, column: str) -> Level:
        return self.model.state.level(column)

    def set_order(self, column: str, values: Iterable) -> None:
        """Give the ordinal column ``column`` a category order, lowest first.

        Raises ``ValueError`` unless ``column`` is ordinal and ``values`` names each of
        its categories once.
        """
        self.model.set_order(self.model.row_of(column), values)

    def order(self, column: str) -> tuple | None:
        """The category order of ``column`` if it is ordinal, else None."""
        return self.model.state.order(column)

    def edit_order(self, column: str) -> OrderDialog:
        """Open the order dialog of the ordinal column ``column`` (window-modal).

        Returns the dialog at once; its order is applied when the user presses OK.
        """
        order = self.order(column)
        if order is None:
            raise ValueError(f"Column '{column}' is not ordinal; only an ordinal column "
                             "has a category order.")
        if self.order_dialog is not None:
            self.order_dialog.deleteLater()
        dialog = OrderDialog(column, order, preset=self.model.state.categories(column),
                             parent=self)
        dialog.accepted.connect(lambda: self.set_order(column, dialog.values()))
        self.order_dialog = dialog
        dialog.open()
        return dialog

    def roles(self) -> RoleSpec:
        """The current role specification, with every quasi-identifier's level."""
        return self.model.state.roles()
