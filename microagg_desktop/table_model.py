"""A read-only Qt model over a DataFrame that reads only the cells a view asks for.

Like Spyder's DataFrame editor: the frame is never copied, sorted or modified; a cell is
read with ``DataFrame.iat`` when it is painted, so a million-row table opens instantly.
Values are shown in full (a float with the digits that give it back, ``repr`` style;
dates ISO), so what the user sees is what the engine computes with.

Sorting (a click on a column header) computes a permutation of the rows with
:func:`sort_order` on a pool thread and swaps it in between ``layoutAboutToBeChanged``
and ``layoutChanged``; the vertical header keeps each record's row number in the file.
The sort holds the interpreter lock only in short steps, so the GUI thread keeps running:
pandas' pyarrow-backed text is sorted by pyarrow without the lock; other text is turned
into fixed-width numpy strings a chunk at a time and then sorted by numpy without the lock
(:func:`sort_order_reference` is the plain version they match).
"""

from __future__ import annotations

import math
import numbers
import time
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import (QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex,
                            QRunnable, Qt, QThreadPool, Signal)
from PySide6.QtGui import QBrush, QColor

from core import Cancelled, TaskState

__all__ = ["DataFrameModel", "format_value", "sort_order", "sort_order_reference"]

_MISSING_BRUSH = QBrush(QColor(150, 150, 150))
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_DISPLAY, _TOOLTIP, _FOREGROUND, _ALIGNMENT = (int(role) for role in (
    Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole,
    Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.TextAlignmentRole))
_ROLES = frozenset({_DISPLAY, _TOOLTIP, _FOREGROUND, _ALIGNMENT})  # the roles data() provides
_CHUNK = 16_384  # rows handled per Python-level step: the GUI thread gets the GIL between
_TEXT_CHUNK = 50_000  # values turned into numpy text per step (about 2-5 ms with the GIL)


def _pause(state: TaskState | None) -> None:
    """Between two steps of a sort: stop if cancelled, and hand the GIL to the GUI thread."""
    if state is not None:
        state.check()
    time.sleep(0.0002)  # a real wait: a thread waiting for the GIL gets it


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NaT or value is pd.NA:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def format_value(value: Any) -> str:
    """The text of one cell, exact: ``0.1`` → ``'0.1'``, ``1/3`` → ``'0.3333333333333333'``.

    Floats as ``repr`` (the shortest text that reads back to the same float), integers
    exactly, dates ISO 8601 (the time only when there is one), ``NA`` for missing.
    """
    if _is_missing(value):
        return "NA"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, pd.Timestamp):
        if value.tz is None and value == value.normalize():
            return value.date().isoformat()
        return value.isoformat()
    return str(value)


def sort_order(column: pd.Series, *, ascending: bool = True,
               state: TaskState | None = None) -> np.ndarray:
    """The stable permutation that sorts ``column``, missing values last either way.

    Numbers compare as numbers, dates as dates, a categorical column in its category
    order, text in code-point order. A column mixing numbers and text (object dtype)
    puts the numbers first when ascending (text first when descending), as sorting on
    ``(0, number)`` / ``(1, str(value))`` would. Equal values keep their row order in
    both directions. Text values that differ only by trailing NUL characters compare
    equal (they are compared as fixed-width numpy strings, which lets the sort run
    without holding the interpreter lock).

    Made for a pool thread next to the GUI thread: the interpreter lock is held only in
    steps of a few milliseconds (numpy and pyarrow sort without it), so the GUI keeps
    running.

    Parameters
    ----------
    column : Series, shape (n_records,)
        Not modified, not copied beyond one array of keys.
    ascending : bool
    state : TaskState, optional
        Checked between chunks; :class:`~core.Cancelled` when cancelled.

    Returns
    -------
    ndarray of int64, shape (n_records,)
        ``column.iloc[order]`` is sorted.

    Examples
    --------
    >>> sort_order(pd.Series([2.0, None, 1.0])).tolist()
    [2, 0, 1]
    """
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        return _ordered([(codes, codes >= 0)], ascending, len(column), state)
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        missing = column.isna().to_numpy()
        kind = "i8" if pd.api.types.is_integer_dtype(dtype) else "f8"
        keys = column.to_numpy(dtype=kind, na_value=0)
        return _ordered([(keys, ~missing)], ascending, len(column), state)
    if pd.api.types.is_datetime64_any_dtype(dtype):
        missing = column.isna().to_numpy()
        keys = column.to_numpy(dtype="datetime64[ns]").view("i8")
        return _ordered([(keys, ~missing)], ascending, len(column), state)
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        order = _arrow_text_order(column, ascending, state)
        if order is not None:
            return order
    parts = _text_keys(column, state)
    if parts is None:  # not only text: numbers and text, or other objects
        parts = _mixed_keys(column, state)
    _pause(state)
    return _ordered(parts, ascending, len(column), state)


def sort_order_reference(column: pd.Series, *, ascending: bool = True,
                         state: TaskState | None = None) -> np.ndarray:
    """:func:`sort_order` computed the plain way, kept to check it against.

    The same order (the tests compare the two); text is turned into keys one Python object
    at a time, which holds the interpreter lock for most of a large column's sort, so the
    GUI does not use it.
    """
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        return _ordered([(codes, codes >= 0)], ascending, len(column), stepwise=False)
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        missing = column.isna().to_numpy()
        kind = "i8" if pd.api.types.is_integer_dtype(dtype) else "f8"
        keys = column.to_numpy(dtype=kind, na_value=0)
        return _ordered([(keys, ~missing)], ascending, len(column), stepwise=False)
    if pd.api.types.is_datetime64_any_dtype(dtype):
        missing = column.isna().to_numpy()
        keys = column.to_numpy(dtype="datetime64[ns]").view("i8")
        return _ordered([(keys, ~missing)], ascending, len(column), stepwise=False)
    return _ordered(_mixed_keys(column, state), ascending, len(column), stepwise=False)


def _arrow_text_order(column: pd.Series, ascending: bool,
                      state: TaskState | None) -> np.ndarray | None:
    """The order of a pyarrow-backed text column (pandas' ``"str"``), sorted by pyarrow.

    No Python object per value and no interpreter lock while pyarrow works: a million
    values in about 0.3 s, the GUI thread running meanwhile. pyarrow compares UTF-8 bytes,
    which is code-point order, keeps equal values in row order in both directions and puts
    missing values last in row order, as :func:`_ordered` does. None when a value ends
    with NUL: numpy text (what the other paths compare) drops trailing NULs, pyarrow not.
    """
    import pyarrow as pa  # present: the column is stored in it
    import pyarrow.compute as pc

    values = pa.array(column.array)  # the column's own buffers, not a copy
    if pc.any(pc.ends_with(values, "\x00")).as_py():
        return None
    _pause(state)
    order = pc.array_sort_indices(values, order="ascending" if ascending else "descending",
                                  null_placement="at_end")
    _pause(state)
    return order.to_numpy().astype(np.int64)


def _text_keys(column: pd.Series, state: TaskState | None):
    """The parts of :func:`_mixed_keys` when every present value is a ``str``, else None.

    Chunk by chunk (the lock is held for one chunk at a time): the missing values, a check
    that all others are text, and their fixed-width numpy text; the keys are the same as
    :func:`_mixed_keys` gives for such a column.
    """
    n = len(column)
    missing = np.zeros(n, dtype=bool)
    pieces = []
    for start in range(0, n, _TEXT_CHUNK):
        _pause(state)
        # The Python objects of one chunk only: pandas' "str" columns (pyarrow) make a new
        # str per value, and a whole million in one call held the lock for 60-135 ms
        # (freeing them held it another 20 ms).
        chunk = column.iloc[start:start + _TEXT_CHUNK].to_numpy(dtype=object)
        absent = pd.isna(chunk)
        present = chunk[~absent] if absent.any() else chunk
        if len(present) and pd.api.types.infer_dtype(present, skipna=False) != "string":
            return None
        if absent.any():
            # pd.isna also counts e.g. datetime64("NaT") and Decimal("NaN"), which the
            # plain sort shows as text: only the missing values it knows take this path.
            if not all(_is_missing(v) for v in chunk[absent]):
                return None
            chunk = chunk.copy()
            chunk[absent] = ""
        missing[start:start + len(chunk)] = absent
        pieces.append(chunk.astype(str))
    width = max((p.dtype.itemsize // 4 for p in pieces), default=1)
    keys = np.empty(n, dtype=f"U{max(width, 1)}")
    for start, piece in zip(range(0, n, _TEXT_CHUNK), pieces):
        _pause(state)
        keys[start:start + len(piece)] = piece
    return [(keys, ~missing)]


def _mixed_keys(column: pd.Series, state: TaskState | None):
    values = column.to_numpy(dtype=object)
    n = len(values)
    is_number = np.zeros(n, dtype=bool)
    missing = np.zeros(n, dtype=bool)
    numbers_part, texts = np.zeros(n), np.empty(n, dtype=object)
    for start in range(0, n, _CHUNK):
        _pause(state)
        chunk = values[start:start + _CHUNK]
        missing[start:start + len(chunk)] = [_is_missing(v) for v in chunk]
        for offset, value in enumerate(chunk):
            if isinstance(value, (numbers.Real, np.bool_)) and not _is_missing(value):
                is_number[start + offset] = True
                numbers_part[start + offset] = float(value)
            else:
                texts[start + offset] = "" if _is_missing(value) else str(value)
    is_text = ~(is_number | missing)
    text_keys = np.empty(n, dtype="U1")
    if is_text.any():
        pieces = [np.array(texts[s:s + _CHUNK].tolist(), dtype=str) for s in range(0, n, _CHUNK)]
        text_keys = np.concatenate(pieces) if pieces else text_keys
    return [(numbers_part, is_number), (text_keys, is_text)]


def _ordered(parts: list[tuple[np.ndarray, np.ndarray]], ascending: bool, n: int,
             state: TaskState | None = None, *, stepwise: bool = True) -> np.ndarray:
    """Rows of each part (keys, selected) sorted stably, parts in turn, the rest last.

    ``stepwise``: copies of the keys are made a chunk at a time (numpy copies a reversed
    array holding the interpreter lock, tens of milliseconds for a million text keys).
    """
    orders, chosen = [], np.zeros(n, dtype=bool)
    for keys, selected in (parts if ascending else parts[::-1]):
        rows = np.flatnonzero(selected)
        chosen |= selected
        part = keys if len(rows) == n else keys[rows]  # a take: numpy releases the lock
        if ascending:
            rows = rows[np.argsort(part, kind="stable")]
        else:
            # Stable descending: sort the reversed keys, then reverse back.
            backwards = _reversed(part, state) if stepwise else part[::-1]
            rows = rows[len(rows) - 1 - np.argsort(backwards, kind="stable")[::-1]]
        orders.append(rows)
    orders.append(np.flatnonzero(~chosen))
    return np.concatenate(orders).astype(np.int64, copy=False)


def _reversed(keys: np.ndarray, state: TaskState | None) -> np.ndarray:
    """A contiguous copy of ``keys[::-1]``, made a chunk at a time."""
    n = len(keys)
    out = np.empty_like(keys)
    step = max(_TEXT_CHUNK, (4 << 20) // max(keys.dtype.itemsize, 1))  # about 4 MB a chunk
    for start in range(0, n, step):
        _pause(state)
        stop = min(start + step, n)
        out[start:stop] = keys[n - stop:n - start][::-1]
    return out


class _SortSignals(QObject):
    # generation, (order, inverse) or None when cancelled or failed
    done = Signal(int, object)


class _SortTask(QRunnable):
    def __init__(self, column: pd.Series, ascending: bool, generation: int):
        super().__init__()
        self.signals = _SortSignals()
        self.state = TaskState()
        self._column, self._ascending, self._generation = column, ascending, generation

    def run(self) -> None:
        try:
            order = sort_order(self._column, ascending=self._ascending, state=self.state)
            # The inverse permutation (where each record is shown) is made here too, so
            # the GUI thread only swaps arrays in.
            inverse = np.empty_like(order)
            inverse[order] = np.arange(len(order), dtype=order.dtype)
            result = (order, inverse)
        except Cancelled:
            result = None
        except Exception:  # noqa: BLE001 - the table stays in its current order
            result = None
        self.signals.done.emit(self._generation, result)


class DataFrameModel(QAbstractTableModel):
    """Table model of ``frame`` for a ``QTableView``; read-only, sortable off-thread.

    Parameters
    ----------
    frame : DataFrame
        Shown as is; the model keeps a reference and never changes it.
    parent : QObject, optional

    Signals
    -------
    sorted(int, bool)
        A new row order is in place: the column (-1 for the file's order) and whether
        ascending.
    """

    sorted = Signal(int, bool)

    def __init__(self, frame: pd.DataFrame | None = None, parent=None):
        super().__init__(parent)
        self._frame = frame if frame is not None else pd.DataFrame()
        # Per-column alignment is derived from dtypes only: O(columns), not O(cells).
        self._numeric = [
            pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
            for dtype in self._frame.dtypes
        ]
        self._order: np.ndarray | None = None
        self._sort_key: tuple[int, bool] = (-1, True)
        self._generation = 0
        self._task: _SortTask | None = None
        self._pending: tuple[int, bool] | None = None
        self._last_read: tuple[int, int, Any] = (-1, -1, None)  # frame row, column, value

    @property
    def frame(self) -> pd.DataFrame:
        """The frame shown (not a copy)."""
        return self._frame

    @property
    def order(self) -> np.ndarray | None:
        """The shown row ``i`` is the frame's row ``order[i]``; ``None``: the file's order."""
        return self._order

    @property
    def sort_key(self) -> tuple[int, bool]:
        """(column, ascending) of the order shown; column -1 for the file's order."""
        return self._sort_key

    @property
    def sorting(self) -> bool:
        """True while a new order is being computed."""
        return self._pending is not None

    def source_row(self, row: int) -> int:
        """The frame's row (0-based position) shown at view row ``row``."""
        return int(self._order[row]) if self._order is not None else row

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._frame)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._frame.shape[1]

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Painting a cell asks for seven roles, a call into Python each: the roles not
        # provided return first, and the value read for the cell's colour is kept for its
        # text (a full repaint of a million-row table: about 9 ms instead of 11).
        if role not in _ROLES or not index.isValid():
            return None
        column = index.column()
        if role == _ALIGNMENT:
            return _RIGHT if self._numeric[column] else _LEFT
        value = self._value(self.source_row(index.row()), column)
        if role == _DISPLAY:
            return format_value(value)
        if role == _TOOLTIP:
            return "missing" if _is_missing(value) else repr(value)
        return _MISSING_BRUSH if _is_missing(value) else None

    def _value(self, row: int, column: int) -> Any:
        """The frame's value at ``(row, column)``; the last one read is kept."""
        if self._last_read[0] != row or self._last_read[1] != column:
            self._last_read = (row, column, self._frame.iat[row, column])
        return self._last_read[2]

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or section < 0:
            return None
        if orientation == Qt.Orientation.Horizontal:
            if section >= self._frame.shape[1]:
                return None
            return str(self._frame.columns[section])
        return str(self.source_row(section) + 1) if section < len(self._frame) else None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Start sorting by ``column`` on a pool thread; returns at once.

        Column -1 (or out of range) restores the file's order at once. A newer request
        cancels the one running; :attr:`sorted` is emitted when the order is in place.
        """
        ascending = order == Qt.SortOrder.AscendingOrder
        if self._task is not None and self._pending == (column, ascending):
            return  # already being computed (QTableView.sortByColumn asks twice)
        self._generation += 1
        if self._task is not None:
            self._task.state.cancel()
            self._task = None
        if not 0 <= column < self._frame.shape[1]:
            self._pending = None
            self._apply(None, None, (-1, True))
            return
        self._pending = (column, ascending)
        task = _SortTask(self._frame.iloc[:, column], ascending, self._generation)
        task.signals.done.connect(self._sorted)
        self._task = task
        QThreadPool.globalInstance().start(task)

    def _sorted(self, generation: int, result) -> None:
        if generation != self._generation or self._pending is None:
            return  # a newer request replaced this one
        key, self._pending, self._task = self._pending, None, None
        if result is not None:
            self._apply(*result, key)

    def _apply(self, order: np.ndarray | None, inverse: np.ndarray | None,
               key: tuple[int, bool]) -> None:
        """Show ``order`` (``inverse[order[i]] == i``); O(persistent indexes), not O(rows)."""
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        sources = [self.source_row(index.row()) for index in persistent]
        self._order, self._sort_key = order, key
        if persistent:
            # Selections follow their records: the inverse permutation maps them.
            self.changePersistentIndexList(persistent, [
                self.index(int(inverse[s]) if inverse is not None else s, index.column())
                for s, index in zip(sources, persistent)])
        self.layoutChanged.emit()
        self.sorted.emit(*key)
