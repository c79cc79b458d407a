"""Roles remembered for tables with the same columns. No Qt.

A table's *column signature* is its column names in order with each column's kind
(numeric, date, text). When a table with a signature seen before is opened, the roles,
the measurement levels the user declared and the category orders chosen then are
offered again. Entries live in any ``MutableMapping[str, str]`` (a dict in tests, the
window's :class:`.settings_store.QSettingsStore`) as JSON under a hash of the signature.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import MutableMapping
from typing import Any

import pandas as pd

from microagg_desktop.state import RoleState, column_kind

__all__ = ["RoleMemory", "column_signature", "snapshot", "restore"]

_VERSION = 1


def column_signature(table: pd.DataFrame) -> str:
    """A short hash of the column names, in order, and their kinds.

    Examples
    --------
    >>> a = pd.DataFrame({"age": [1], "sex": ["f"]})
    >>> column_signature(a) == column_signature(a.iloc[:0]), len(column_signature(a))
    (True, 32)
    >>> column_signature(a) == column_signature(a[["sex", "age"]])
    False
    """
    described = [[str(name), column_kind(table.iloc[:, i])]
                 for i, name in enumerate(table.columns)]
    text = json.dumps(described, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def snapshot(state: RoleState) -> dict[str, Any]:
    """The roles, declared levels and category orders of ``state`` as plain JSON data.

    Category values are kept as their text (the way :meth:`RoleState.set_order` matches
    them), so numbers and strings both survive the trip through JSON.
    """
    names = [c.name for c in state.columns]
    orders = {}
    for name in names:
        order = state.order(name) if state.level(name).value == "ordinal" else None
        if order is not None:
            orders[name] = [_text(v) for v in order]
    return {"version": _VERSION,
            "roles": {name: state.choice(name) for name in names},
            "levels": {name: level.value for name, level in state.declared_levels().items()},
            "orders": orders}


def restore(state: RoleState, saved: dict[str, Any]) -> list[str]:
    """Apply a :func:`snapshot` to ``state``; return what could not be restored.

    A level or order that no longer fits the data (a category that disappeared, say)
    is skipped, and named in the returned notes, rather than stopping the rest.
    """
    notes = []
    for name, choice in saved.get("roles", {}).items():
        try:
            state.set_choice(name, choice)
        except (KeyError, ValueError):
            notes.append(f"the role of '{name}'")
    for name, level in saved.get("levels", {}).items():
        try:
            state.set_level(name, level)
        except (KeyError, ValueError):
            notes.append(f"the level of '{name}'")
    for name, order in saved.get("orders", {}).items():
        try:
            state.set_order(name, order)
        except (KeyError, ValueError):
            notes.append(f"the category order of '{name}'")
    return notes


def _text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class RoleMemory:
    """Remembers roles per column signature in ``store``.

    Parameters
    ----------
    store : MutableMapping[str, str]
        Where entries are kept; a value that is not valid JSON is ignored.
    prefix : str
        Prepended to every key, so the store can be shared.

    Examples
    --------
    >>> table = pd.DataFrame({"age": [20, 30], "sex": ["f", "m"]})
    >>> memory = RoleMemory({})
    >>> state = RoleState(table, {"age": "quasi-identifier"})
    >>> memory.remember(table, state)
    >>> again = RoleState(table)
    >>> memory.recall(table, again)
    True
    >>> again.role("age").value
    'quasi-identifier'
    """

    def __init__(self, store: MutableMapping[str, str], prefix: str = "roles-"):
        self.store = store
        self.prefix = prefix
        self.notes: list[str] = []

    def key(self, table: pd.DataFrame) -> str:
        return self.prefix + column_signature(table)

    def saved(self, table: pd.DataFrame) -> dict[str, Any] | None:
        """The entry for ``table``'s column signature, or None."""
        text = self.store.get(self.key(table))
        if not text:
            return None
        try:
            saved = json.loads(text)
        except (TypeError, ValueError):
            return None
        return saved if isinstance(saved, dict) and saved.get("version") == _VERSION \
            else None

    def remember(self, table: pd.DataFrame, state: RoleState) -> None:
        """Store ``state``'s roles, levels and orders for ``table``'s signature."""
        self.store[self.key(table)] = json.dumps(snapshot(state), ensure_ascii=False)

    def recall(self, table: pd.DataFrame, state: RoleState) -> bool:
        """Apply the remembered roles to ``state``; True if there were any.

        What could not be restored is listed in :attr:`notes`.
        """
        saved = self.saved(table)
        self.notes = []
        if saved is None:
            return False
        self.notes = restore(state, saved)
        return True

    def forget(self, table: pd.DataFrame) -> None:
        self.store.pop(self.key(table), None)
