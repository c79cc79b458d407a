"""Every control of the window has a name a screen reader can say, and the workflow's
tabs, menus and main actions are reachable from the keyboard."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QAbstractSpinBox,
                               QComboBox, QHeaderView, QLineEdit)

from tests.gui_helpers import run_and_wait

pytestmark = pytest.mark.gui

_CONTROLS = (QAbstractButton, QComboBox, QAbstractSpinBox, QLineEdit, QAbstractItemView)


def _is_qt_internal(widget) -> bool:
    """Parts Qt builds inside its own widgets (a spin box's editor, a combo box's popup
    list, a table's corner button, headers); the enclosing control carries the name."""
    return (widget.objectName().startswith("qt_") or isinstance(widget, QHeaderView)
            or widget.metaObject().className() == "QComboBoxListView")


def test_every_control_has_an_accessible_name(qtbot, window):
    assert window.open_sample()
    run_and_wait(qtbot, window)  # the results, history and plot controls exist now
    unnamed = []
    for kind in _CONTROLS:
        for widget in window.findChildren(kind):
            if _is_qt_internal(widget):
                continue
            text = widget.text() if isinstance(widget, QAbstractButton) else ""
            if not (widget.accessibleName() or text).strip():
                unnamed.append(f"{widget.metaObject().className()} in "
                               f"{type(widget.parent()).__name__}")
    assert unnamed == []


def test_tabs_and_main_actions_have_keyboard_access(window):
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert all("&" in title for title in titles), titles
    letters = [title[title.index("&") + 1].lower() for title in titles]
    assert len(set(letters)) == len(letters), titles  # no two tabs share a mnemonic
    for action in (window.open_action, window.run_action, window.cancel_action,
                   window.export_action, window.report_action, window.save_project_action,
                   window.copy_command_action, window.guide_action):
        assert action.shortcuts(), action.text()
    menus = [a.text() for a in window.menuBar().actions()]
    assert menus == ["&File", "&Edit", "&Run", "&Help"]
    menu_letters = {m[m.index("&") + 1].lower() for m in menus}
    assert not menu_letters & set(letters), titles  # Alt+letter opens one thing only
