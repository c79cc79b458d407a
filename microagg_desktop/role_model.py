"""The role table's model: one row per column with its name, role, level and suggestion.

:class:`RoleModel` shows a :class:`.state.RoleState` and writes changes back to it; the
*Suggestion* column shows the role :mod:`.role_suggestions` proposes, with its reason as
tooltip, and changes nothing until the user applies it (:mod:`.role_editor`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from PySide6.QtCore import (QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt,
                            Signal)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QApplication, QStyle

from core import Role
from core.data.roles import Level
from microagg_desktop.order_dialog import category_text
from microagg_desktop.role_suggestions import Suggestion
from microagg_desktop.state import STRATUM, RoleState

__all__ = ["RoleModel", "ROLE_LABELS", "LEVEL_LABELS", "LEVEL_CHOICES_ROLE", "LEVEL_LABELS_ROLE",
           "ORDER_SHORTCUT", "SUGGESTION_LABELS", "NAME", "ROLE", "LEVEL", "SUGGESTION",
           "KIND", "SUMMARY"]

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

SUGGESTION_LABELS = {
    Role.IDENTIFIER: "Identifier",
    Role.QUASI_IDENTIFIER: "Quasi-identifier",
    Role.CONFIDENTIAL: "Confidential",
    Role.NON_CONFIDENTIAL: "Non-confidential",
}
"""How the Suggestion column names a suggested role."""

_WARNING = QColor(255, 243, 205)
_AGREES = QColor(110, 110, 110)

_LEVEL_TIPS = {
    Level.NUMERIC.value: "Numeric: compared by standardised difference; released as the "
                         "group mean.",
    Level.ORDINAL.value: "Ordinal: ordered categories, compared by rank; released as the "
                         "group's median category.",
    Level.NOMINAL.value: "Nominal: unordered categories, same or different; released as "
                         "the group's most frequent category.",
}

_NOT_APPLICABLE = QColor(240, 240, 240)

_DISTANCE_LABELS = {
    Level.NUMERIC.value: "Numeric (ordered distance)",
    Level.NOMINAL.value: "Nominal (codes, equal distance)",
}
"""What the level drop-down of a confidential column shows: its t-closeness distance."""

_DISTANCE_TIP = (
    "How t-closeness compares this confidential column's distributions. Numeric: the "
    "ordered distance (values far apart in order count more). Nominal: the equal "
    "distance, for codes without an order (diagnosis 1, 2, 3...): choose it, or a class "
    "of codes 1 and 2 looks close to one of codes 3 and 4.")

ORDER_SHORTCUT = "Ctrl+Shift+O"
"""Opens the category order of the ordinal quasi-identifier whose level has focus."""

LEVEL_CHOICES_ROLE = Qt.ItemDataRole.UserRole + 1
"""Data role of a Level cell: the level values its column can have, as a list."""

LEVEL_LABELS_ROLE = Qt.ItemDataRole.UserRole + 2
"""Data role of a Level cell: what its drop-down shows for each level (a mapping)."""

NAME, ROLE, LEVEL, SUGGESTION, KIND, SUMMARY = range(6)
_HEADERS = ("Column", "Role", "Level", "Suggestion", "Type", "Summary")
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
        self._suggestions: dict[str, Suggestion] = {}

    @property
    def state(self) -> RoleState:
        return self._state

    def set_state(self, state: RoleState,
                  suggestions: Mapping[str, Suggestion] | None = None) -> None:
        """Show another table's columns (and their suggestions)."""
        self.beginResetModel()
        self._state = state
        self._suggestions = dict(suggestions or {})
        self.endResetModel()
        self.rolesChanged.emit()

    def suggestions(self) -> dict[str, Suggestion]:
        """The suggestion shown for each column that has one."""
        return dict(self._suggestions)

    def set_suggestions(self, suggestions: Mapping[str, Suggestion]) -> None:
        """Show ``suggestions`` (by column name) in the Suggestion column."""
        suggestions = dict(suggestions)
        if suggestions == self._suggestions:
            return
        self._suggestions = suggestions
        if self.rowCount():
            self.dataChanged.emit(self.index(0, SUGGESTION),
                                  self.index(self.rowCount() - 1, SUGGESTION))

    def pending(self, row: int) -> Suggestion | None:
        """The suggestion of ``row`` if it differs from the role chosen now, else None."""
        name = self._state.columns[row].name
        found = self._suggestions.get(name)
        if found is None or self._state.choice(name) == found.role.value:
            return None
        return found

    def _suggestion_data(self, row: int, role: int) -> Any:
        found = self._suggestions.get(self._state.columns[row].name)
        if found is None:
            if role == Qt.ItemDataRole.ToolTipRole:
                return "No suggestion for this column."
            return None
        pending = self.pending(row) is not None
        if role == Qt.ItemDataRole.DisplayRole:
            label = SUGGESTION_LABELS[found.role]
            if found.is_warning and pending:
                return f"⚠ {label}"
            return f"→ {label}" if pending else f"✓ {label}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return found.reason + ("" if pending else " (The column has this role.)")
        if role == Qt.ItemDataRole.BackgroundRole and found.is_warning and pending:
            return QBrush(_WARNING)
        if role == Qt.ItemDataRole.ForegroundRole and not pending:
            return QBrush(_AGREES)
        return None

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
        if index.column() == SUGGESTION:
            return self._suggestion_data(index.row(), role)
        info = self._state.columns[index.row()]
        column_role = self._state.choice(info.name)
        if role == Qt.ItemDataRole.DisplayRole:
            return (info.name, ROLE_LABELS[column_role], "", "", info.kind,
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

    def has_level(self, row: int) -> bool:
        """Whether ``row``'s Level cell has a choice (:meth:`RoleState.has_level`)."""
        return self._state.has_level(self._state.columns[row].name)

    def _level_data(self, row: int, role: int) -> Any:
        name = self._state.columns[row].name
        applies = self.has_level(row)
        level = self._state.shown_level(name).value
        if role == Qt.ItemDataRole.DisplayRole:
            if not applies:
                return ""
            return (_DISTANCE_LABELS[level] if self._state.role(name) is Role.CONFIDENTIAL
                    else LEVEL_LABELS[level])
        if role == Qt.ItemDataRole.EditRole:
            return level if applies else None
        if role == LEVEL_CHOICES_ROLE:
            return [lv.value for lv in self._state.level_choices(name)]
        if role == LEVEL_LABELS_ROLE:
            return (_DISTANCE_LABELS if self._state.role(name) is Role.CONFIDENTIAL
                    else LEVEL_LABELS)
        if role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(_ROLE_COLOURS[self._state.role(name).value] if applies
                          else _NOT_APPLICABLE)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.level_tooltip(row)
        return None

    def level_tooltip(self, row: int) -> str:
        """What the Level cell of ``row`` explains: the level and an ordinal's order."""
        name = self._state.columns[row].name
        if self._state.role(name) is Role.CONFIDENTIAL:
            return _DISTANCE_TIP if self.has_level(row) else (
                "A confidential text column is compared by the equal distance (nominal) "
                "for t-closeness.")
        if not self.is_quasi_identifier(row):
            return ("Measurement levels apply to quasi-identifiers, and to confidential "
                    "columns of numbers (their t-closeness distance).")
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
            if not self.has_level(index.row()):
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
        self.dataChanged.emit(self.index(index.row(), NAME),
                              self.index(index.row(), SUGGESTION))
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
        if orientation == Qt.Orientation.Horizontal and section == SUGGESTION and \
                role == Qt.ItemDataRole.ToolTipRole:
            return ("The role the column's name or data suggest (hover for the reason). "
                    "Nothing changes until you apply a suggestion.")
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
                                      self.has_level(index.row())):
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def row_of(self, column: str) -> int:
        """The model row showing ``column``; raise ``KeyError`` if absent."""
        for row, info in enumerate(self._state.columns):
            if info.name == column:
                return row
        raise KeyError(f"Column '{column}' is not in the table.")
