"""The role editor: the role table, the role suggestions and the remembered roles.

A thin Qt binding of :class:`.state.RoleState`: :class:`.role_model.RoleModel` shows the
state and writes changes back to it; :class:`RoleDelegate` edits the role with a
drop-down; :class:`LevelDelegate` edits a quasi-identifier's measurement level with a
drop-down and, for an ordinal one, an *Order…* button that opens
:class:`.order_dialog.OrderDialog`. Suggestions (:mod:`.role_suggestions`) are shown in
their own column and applied only when the user asks; roles are restored from
:class:`.role_memory.RoleMemory` for a table with columns seen before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView,
                               QLabel, QPushButton, QStyledItemDelegate, QTableView,
                               QToolButton, QVBoxLayout, QWidget)

from core import Role, RoleSpec
from core.data.roles import Level
from microagg_desktop.order_dialog import OrderDialog
from microagg_desktop.role_memory import RoleMemory
from microagg_desktop.role_model import (KIND, LEVEL, LEVEL_CHOICES_ROLE, LEVEL_LABELS,
                                        LEVEL_LABELS_ROLE,
                                        NAME, ORDER_SHORTCUT, ROLE, ROLE_LABELS,
                                        SUGGESTION, SUMMARY, RoleModel)
from microagg_desktop.role_suggestions import RoleSuggester, Suggestion
from microagg_desktop.state import STRATUM, RoleState

__all__ = ["prepare_roles", "RoleModel", "RoleDelegate", "LevelDelegate", "LevelEditor",
           "RoleEditor", "ROLE_LABELS", "LEVEL_LABELS", "LEVEL_CHOICES_ROLE", "ORDER_SHORTCUT",
           "RESTORED_TEXT", "NAME", "ROLE", "LEVEL", "SUGGESTION", "KIND", "SUMMARY"]

RESTORED_TEXT = ("Roles restored from the last time a table with these columns was "
                 "opened.")

class RoleDelegate(QStyledItemDelegate):
    """A drop-down of the four roles; a choice is committed at once."""

    def createEditor(self, parent, option, index):
        editor = QComboBox(parent)
        for choice, label in ROLE_LABELS.items():
            editor.addItem(label, choice)
        column = str(index.siblingAtColumn(NAME).data())
        editor.setAccessibleName(f"Role of {column}")
        editor.setToolTip(f"What happens to '{column}' in the released table.")
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

    def __init__(self, column: str, choices: Sequence[str], parent=None, labels=None):
        super().__init__(parent)
        self.combo = QComboBox(self)
        self.combo.setAccessibleName(f"Measurement level of {column}")
        for value in choices:
            self.combo.addItem((labels or LEVEL_LABELS)[value], value)
        self.order_button = QToolButton(self)
        self.order_button.setText("Order…")
        self.order_button.setAccessibleName(f"Category order of {column}")
        self.order_button.setToolTip(f"Edit the category order ({ORDER_SHORTCUT}).")
        self.combo.setToolTip("How this quasi-identifier is compared and released.")
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

    def choices(self) -> list[str]:
        """The levels the drop-down offers, in order."""
        return [self.combo.itemData(i) for i in range(self.combo.count())]

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
                             index.data(LEVEL_CHOICES_ROLE) or [], parent,
                             labels=index.data(LEVEL_LABELS_ROLE))
        where = QPersistentModelIndex(index)
        editor.levelChosen.connect(lambda: self.commitData.emit(editor))
        editor.orderRequested.connect(lambda: self.orderRequested.emit(where.row()))
        return editor

    def setEditorData(self, editor: LevelEditor, index) -> None:
        editor.show_level(index.data(Qt.ItemDataRole.EditRole),
                          index.data(Qt.ItemDataRole.ToolTipRole) or "")

    def setModelData(self, editor: LevelEditor, model, index) -> None:
        model.setData(index, editor.level(), Qt.ItemDataRole.EditRole)


def prepare_roles(table: pd.DataFrame, roles: Mapping[str, Role | str] | None = None
                  ) -> tuple[RoleState, RoleSuggester]:
    """The column descriptions and role suggestions of ``table`` (Qt-free, O(n·columns);
    the window computes them on its worker together with reading the file)."""
    return RoleState(table, roles), RoleSuggester(table)


class RoleEditor(QWidget):
    """The Roles tab: an explanation line and the role table.

    Signals
    -------
    rolesChanged
        After any role, level or order changed, or a new table was loaded.

    Attributes
    ----------
    restored : bool
        The roles shown were restored from a :class:`.role_memory.RoleMemory`.
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
            "released as they are (a confidential column of numbers that holds codes, "
            "such as diagnosis 1, 2, 3, is Nominal for t-closeness). A stratum column "
            "(e.g. region) is released as it is, and records are only grouped with "
            "records of the same stratum.", self)
        self.hint.setWordWrap(True)
        self.view.setAccessibleName("Roles of the columns")
        self.view.setToolTip("One row per column: choose its role and, for a "
                             "quasi-identifier, its measurement level.")
        self.restored = False
        self.restored_label = QLabel(RESTORED_TEXT, self)
        self.restored_label.setWordWrap(True)
        self.restored_label.setStyleSheet("color: #1a5e20;")
        self.restored_label.setAccessibleName("Roles restored")
        self.restored_label.setToolTip("Your roles, levels and category orders from the "
                                       "last run on a table with the same columns. "
                                       "Change any of them as usual.")
        self.restored_label.hide()
        self.suggester: RoleSuggester | None = None
        self.suggestion_label = QLabel(self)
        self.suggestion_label.setWordWrap(True)
        self.suggestion_label.setAccessibleName("Role suggestions")
        self.apply_selected_button = QPushButton("Apply to selected rows", self)
        self.apply_selected_button.setAccessibleName("Apply suggestions to selected rows")
        self.apply_selected_button.setToolTip(
            "Give the selected rows' columns the role in their Suggestion cell.")
        self.apply_all_button = QPushButton("Apply all suggestions", self)
        self.apply_all_button.setAccessibleName("Apply all suggestions")
        self.apply_all_button.setToolTip(
            "Give every column the role in its Suggestion cell (hover over a cell for "
            "the reason). Each can be changed back.")
        self.apply_selected_button.clicked.connect(
            lambda: self.apply_suggestions(self.selected_columns()))
        self.apply_all_button.clicked.connect(lambda: self.apply_suggestions())
        self.view.selectionModel().selectionChanged.connect(
            lambda *_: self._show_suggestion_summary())
        self.rolesChanged.connect(self._update_suggestions)
        bar = QHBoxLayout()
        bar.addWidget(self.suggestion_label, 1)
        bar.addWidget(self.apply_selected_button)
        bar.addWidget(self.apply_all_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.restored_label)
        layout.addLayout(bar)
        layout.addWidget(self.view)
        self._show_suggestion_summary()

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
                  roles: Mapping[str, Role | str] | None = None,
                  memory: RoleMemory | None = None,
                  prepared: tuple[RoleState, RoleSuggester] | None = None) -> None:
        """Describe ``table``'s columns; preset ``roles``, default the others.

        Without ``roles``, the roles ``memory`` holds for a table with the same columns
        (names, order and kinds) are applied, and a label says so. Suggestions are
        computed and shown, not applied. ``prepared`` is :func:`prepare_roles` of the
        table, computed off the GUI thread for a large table.
        """
        state, suggester = prepared if prepared is not None else prepare_roles(table, roles)
        self.restored = bool(roles is None and memory is not None
                             and memory.recall(table, state))
        text = RESTORED_TEXT
        if self.restored and memory.notes:
            text += " Not restored (the data changed): " + ", ".join(memory.notes) + "."
        self.restored_label.setText(text)
        self.restored_label.setVisible(self.restored)
        self.suggester = suggester
        self.model.set_state(state, self.suggester.suggestions(self._current_roles(state)))
        self._persistent = self.model.rowCount() <= self.PERSISTENT_EDITOR_LIMIT
        if self._persistent:
            for row in range(self.model.rowCount()):
                self.view.openPersistentEditor(self.model.index(row, ROLE))
            self._sync_level_editors(self.model.index(0, LEVEL),
                                     self.model.index(self.model.rowCount() - 1, LEVEL))
        for column in (NAME, SUGGESTION, KIND):
            self.view.resizeColumnToContents(column)
            self.view.horizontalHeader().resizeSection(
                column, min(self.view.columnWidth(column) + 24, 320))
        self._show_suggestion_summary()

    # -- suggestions and memory ----------------------------------------------------------

    @staticmethod
    def _current_roles(state: RoleState) -> dict[str, Role]:
        return {c.name: state.role(c.name) for c in state.columns
                if c.name not in state.strata}

    def _update_suggestions(self) -> None:
        if self.suggester is not None:
            self.model.set_suggestions(
                self.suggester.suggestions(self._current_roles(self.model.state)))
        self._show_suggestion_summary()

    def suggestions(self) -> dict[str, Suggestion]:
        """Every column's suggestion (by column name), agreeing or not with its role."""
        return self.model.suggestions()

    def pending_suggestions(self) -> dict[str, Suggestion]:
        """The suggestions that differ from the roles chosen now."""
        found = {}
        for row in range(self.model.rowCount()):
            suggestion = self.model.pending(row)
            if suggestion is not None:
                found[suggestion.column] = suggestion
        return found

    def selected_columns(self) -> list[str]:
        """The columns whose rows are selected, in table order."""
        rows = sorted({index.row() for index in self.view.selectionModel().selectedRows()})
        return [self.model.state.columns[row].name for row in rows]

    def apply_suggestions(self, columns: Iterable[str] | None = None) -> list[str]:
        """Give ``columns`` (default: all) their suggested role; return those changed.

        Applying one suggestion can raise another (a column that determines a new
        quasi-identifier), which is shown, not applied.
        """
        pending = self.pending_suggestions()
        wanted = list(pending) if columns is None else [c for c in columns if c in pending]
        for column in wanted:
            self.set_role(column, pending[column].role)
        return wanted

    def _show_suggestion_summary(self) -> None:
        pending = self.pending_suggestions()
        warnings = [s for s in pending.values() if s.is_warning]
        if not self.model.rowCount():
            text = "Open a table to see role suggestions."
        elif not pending:
            text = "No role suggestions beyond the roles chosen."
        else:
            text = (f"{len(pending)} column(s) have a suggested role different from the "
                    "chosen one (Suggestion column; hover for the reason).")
            if warnings:
                text += " ⚠ " + "; ".join(f"'{s.column}' would give '{s.related}' away"
                                          for s in warnings) + "."
        self.suggestion_label.setText(text)
        self.apply_all_button.setEnabled(bool(pending))
        self.apply_selected_button.setEnabled(
            any(c in pending for c in self.selected_columns()))

    def remember(self, memory: RoleMemory) -> None:
        """Store the current roles, levels and orders for tables with these columns."""
        table = self.model.state.table
        if table is not None:
            memory.remember(table, self.model.state)

    def _sync_level_editors(self, top_left: QModelIndex, bottom_right: QModelIndex,
                            roles=()) -> None:
        """Keep a level drop-down open on exactly the rows with a level to choose
        (quasi-identifiers, confidential columns of numbers), with that role's choices."""
        if not self._persistent or not top_left.isValid():
            return
        for row in range(top_left.row(), bottom_right.row() + 1):
            index = self.model.index(row, LEVEL)
            wanted = self.model.has_level(row)
            if self.view.isPersistentEditorOpen(index) and (not wanted or (
                    self.view.indexWidget(index).choices() != index.data(LEVEL_CHOICES_ROLE))):
                self.view.closePersistentEditor(index)  # (a new role, new choices)
            if wanted and not self.view.isPersistentEditorOpen(index):
                self.view.openPersistentEditor(index)

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

    def apply_roles(self, spec: RoleSpec) -> None:
        """Set every column's role, level and order from ``spec`` (going back to a run or
        opening a project); a column ``spec`` does not name becomes non-confidential."""
        choices = {c: Role.IDENTIFIER.value for c in spec.identifiers}
        choices.update({c: Role.QUASI_IDENTIFIER.value for c in spec.quasi_identifiers})
        choices.update({c: Role.CONFIDENTIAL.value for c in spec.confidential})
        choices.update({c: STRATUM for c in spec.strata})
        for info in self.model.state.columns:
            self.set_role(info.name, choices.get(info.name, Role.NON_CONFIDENTIAL.value))
        for column in spec.quasi_identifiers:
            level = spec.level_of(column)
            if level is not None:
                self.set_level(column, level)
            order = spec.order_of(column)
            if order is not None:
                self.set_order(column, order)
        for column in spec.confidential:  # its distance: nominal when declared so
            if self.model.state.has_level(column):
                self.set_level(column, spec.level_of(column) or Level.NUMERIC)

    def roles(self) -> RoleSpec:
        """The current role specification, with every quasi-identifier's level."""
        return self.model.state.roles()
