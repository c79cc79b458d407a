"""The data view: exact values, sorting off the GUI thread, a million rows without a
stall, and the column summary (kinds, missing and distinct values)."""

from __future__ import annotations

import gc
import math
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest.importorskip("PySide6")

from PySide6.QtCore import QElapsedTimer, Qt, QTimer  # noqa: E402

from core import Cancelled, TaskState  # noqa: E402
from microagg_desktop.column_summary import summarize_columns  # noqa: E402
from microagg_desktop.column_summary_view import ColumnSummaryView  # noqa: E402
from microagg_desktop.table_model import (DataFrameModel, format_value, sort_order,  # noqa: E402
                                          sort_order_reference)
from microagg_desktop.table_view import DataFrameView  # noqa: E402

DISPLAY = Qt.ItemDataRole.DisplayRole
VERTICAL = Qt.Orientation.Vertical


# -- exact values ------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (0.1, "0.1"), (1 / 3, "0.3333333333333333"), (2.0, "2.0"), (1e7 / 3, "3333333.3333333335"),
    (np.float64(-0.5), "-0.5"), (1e-7, "1e-07"), (float("nan"), "NA"), (float("inf"), "inf"),
    (2 ** 63 - 1, "9223372036854775807"), (np.int64(-7), "-7"),
    (pd.Timestamp("2021-06-30"), "2021-06-30"),
    (pd.Timestamp("2021-06-30 14:05:01"), "2021-06-30T14:05:01"), (pd.NaT, "NA"),
])
def test_values_are_shown_exactly(value, text):
    assert format_value(value) == text


@given(st.floats(allow_nan=False))
def test_a_shown_float_reads_back_to_the_same_float(value):
    assert float(format_value(value)) == value


# -- the sort order ----------------------------------------------------------------------

def _naive(values: list, ascending: bool) -> list[int]:
    """Python's stable sort on (kind, value), missing values last either way."""
    def missing(v):
        return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))

    def key(i):
        v = values[i]
        return (0, float(v), "") if isinstance(v, (int, float)) else (1, 0.0, str(v))

    present = [i for i in range(len(values)) if not missing(values[i])]
    absent = [i for i in range(len(values)) if missing(values[i])]
    if ascending:
        return sorted(present, key=key) + absent
    # Stable descending: equal keys keep their order.
    return sorted(present, key=key, reverse=True) + absent


_text = st.text(alphabet=st.characters(blacklist_characters="\x00",
                                       blacklist_categories=("Cs",)), max_size=4)
_number = st.one_of(st.integers(-10, 10), st.floats(-5, 5, allow_nan=False),
                    st.just(float("nan")))


@settings(max_examples=150, deadline=None)
@given(st.lists(_number, max_size=40), st.booleans())
def test_sort_order_of_numbers_matches_a_naive_sort(values, ascending):
    column = pd.Series([float(v) for v in values], dtype=float)
    assert sort_order(column, ascending=ascending).tolist() == _naive(
        column.tolist(), ascending)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_text, st.none()), max_size=40), st.booleans())
def test_sort_order_of_text_matches_a_naive_sort(values, ascending):
    column = pd.Series(values, dtype="str")
    naive = _naive([None if pd.isna(v) else v for v in column.tolist()], ascending)
    assert sort_order(column, ascending=ascending).tolist() == naive


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_text, _number, st.none()), max_size=40), st.booleans())
def test_sort_order_of_mixed_object_columns_matches_a_naive_sort(values, ascending):
    column = pd.Series(values, dtype=object)
    assert sort_order(column, ascending=ascending).tolist() == _naive(values, ascending)


_any_text = st.text(alphabet=st.characters(), max_size=5)  # NUL, surrogates, any plane
# A "str" column (stored by pyarrow when it is installed) holds UTF-8 text only: a lone
# surrogate cannot be put in one, and no file read as UTF-8 or Latin-1 gives one.
_utf8_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=5)
_text_or_missing = st.one_of(_any_text, st.sampled_from(["", "a", "b", "ab", "\u00e9", "\u00e9t\u00e9"]),
                             st.none(), st.just(float("nan")), st.just(pd.NA), st.just(pd.NaT))


@settings(max_examples=300, deadline=None)
@given(st.data(), st.booleans())
def test_the_stepwise_sort_matches_the_reference_sort(data, ascending):
    """The sort the GUI uses gives exactly the order of the plain one, whatever the column."""
    kind = data.draw(st.sampled_from(["text", "str", "mixed", "odd objects"]))
    if kind == "text":  # object column of text with duplicates and missing values
        values = data.draw(st.lists(_text_or_missing, max_size=60))
        column = pd.Series(values, dtype=object)
    elif kind == "str":
        values = data.draw(st.lists(st.one_of(_utf8_text, st.none()), max_size=60))
        column = pd.Series(values, dtype="str")
    elif kind == "mixed":
        values = data.draw(st.lists(st.one_of(_text_or_missing, _number, st.booleans()),
                                    max_size=60))
        column = pd.Series(values, dtype=object)
    else:  # missing values pandas knows but the sort shows as text, bytes, dates
        values = data.draw(st.lists(st.one_of(
            _text_or_missing, st.just(np.datetime64("NaT")), st.just(b"b"),
            st.just(pd.Timestamp("2021-01-01"))), max_size=60))
        column = pd.Series(values, dtype=object)
    assert (sort_order(column, ascending=ascending).tolist()
            == sort_order_reference(column, ascending=ascending).tolist())


@pytest.mark.parametrize("ascending", [True, False])
def test_the_stepwise_sort_matches_the_reference_across_chunks(ascending):
    rng = np.random.default_rng(5)
    n = 130_000  # more than two chunks
    words = np.array(["", "a", "b", "ab", "\u00e9", "zz", "Z", "a\u0301", None, np.nan],
                     dtype=object)
    text = pd.Series(words[rng.integers(0, len(words), n)], dtype=object)
    numbers = pd.Series(np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 50, n)))
    for column in (text, text.astype("str"), numbers,
                   pd.Series(pd.Categorical(text.astype("str")))):
        assert np.array_equal(sort_order(column, ascending=ascending),
                              sort_order_reference(column, ascending=ascending))


@pytest.mark.parametrize("ascending", [True, False])
def test_pyarrow_text_ending_in_nul_sorts_as_the_reference(ascending):
    # pyarrow (the sort of "str" columns) puts "a\0" after "a"; numpy text, the reference's
    # keys, does not see trailing NULs: such a column takes the numpy path.
    column = pd.Series(["a\x00", "b", None, "a", "", "a\x00b", "a"], dtype="str")
    assert (sort_order(column, ascending=ascending).tolist()
            == sort_order_reference(column, ascending=ascending).tolist())


def test_sort_order_of_categories_dates_and_integers():
    categories = pd.Series(pd.Categorical(["b", None, "a", "b"], categories=["b", "a"]))
    assert sort_order(categories).tolist() == [0, 3, 2, 1]
    dates = pd.Series(pd.to_datetime(["2021-01-02", None, "2020-05-01"]))
    assert sort_order(dates, ascending=False).tolist() == [0, 2, 1]
    big = pd.Series([2 ** 62 + 1, 2 ** 62, -3], dtype="int64")
    assert sort_order(big).tolist() == [2, 1, 0]  # exact, not via float


def test_sort_order_stops_when_cancelled():
    state = TaskState()
    state.cancel()
    with pytest.raises(Cancelled):
        sort_order(pd.Series(["a", 1, None] * 10, dtype=object), state=state)


# -- the model ---------------------------------------------------------------------------

@pytest.fixture
def small_frame():
    return pd.DataFrame({"name": ["c", "a", None, "b"], "income": [0.1, np.nan, 1 / 3, 2.0],
                         "when": pd.to_datetime(["2020-01-01", None, "2021-06-30",
                                                 "2019-03-04"])})


@pytest.mark.gui
def test_model_passes_qtmodeltester_sorted_and_unsorted(qtbot, qtmodeltester, small_frame):
    model = DataFrameModel(small_frame)
    qtmodeltester.check(model)
    with qtbot.waitSignal(model.sorted, timeout=5000):
        model.sort(1, Qt.SortOrder.DescendingOrder)
    qtmodeltester.check(model)


@pytest.mark.gui
def test_sorting_keeps_the_frame_and_the_file_row_numbers(qtbot, small_frame):
    before = small_frame.copy()
    model = DataFrameModel(small_frame)
    assert model.data(model.index(0, 1), DISPLAY) == "0.1"
    assert model.data(model.index(2, 1), DISPLAY) == "0.3333333333333333"
    with qtbot.waitSignal(model.sorted, timeout=5000) as blocker:
        model.sort(1, Qt.SortOrder.AscendingOrder)
    assert blocker.args == [1, True]
    shown = [model.data(model.index(r, 1), DISPLAY) for r in range(4)]
    assert shown == ["0.1", "0.3333333333333333", "2.0", "NA"]
    assert [model.headerData(r, VERTICAL, DISPLAY) for r in range(4)] == ["1", "3", "4", "2"]
    assert model.data(model.index(0, 2), DISPLAY) == "2020-01-01"
    with qtbot.waitSignal(model.sorted, timeout=5000):
        model.sort(0, Qt.SortOrder.DescendingOrder)
    assert [model.data(model.index(r, 0), DISPLAY) for r in range(4)] == ["c", "b", "a", "NA"]
    model.sort(-1)
    assert model.order is None and model.headerData(1, VERTICAL, DISPLAY) == "2"
    pd.testing.assert_frame_equal(small_frame, before)
    assert model.frame is small_frame


@pytest.mark.gui
def test_a_newer_sort_replaces_a_running_one(qtbot, small_frame):
    model = DataFrameModel(small_frame)
    keys = []
    model.sorted.connect(lambda column, ascending: keys.append((column, ascending)))
    model.sort(0)
    model.sort(1, Qt.SortOrder.DescendingOrder)
    qtbot.waitUntil(lambda: not model.sorting, timeout=5000)
    qtbot.wait(50)
    assert keys == [(1, False)] and model.sort_key == (1, False)


@pytest.mark.gui
def test_the_same_request_twice_is_computed_once(qtbot, small_frame):
    model = DataFrameModel(small_frame)
    keys = []
    model.sorted.connect(lambda column, ascending: keys.append((column, ascending)))
    model.sort(0)
    running = model._task
    model.sort(0)  # QTableView.sortByColumn asks twice
    assert model._task is running
    qtbot.waitUntil(lambda: not model.sorting, timeout=5000)
    qtbot.wait(50)
    assert keys == [(0, True)]


@pytest.mark.gui
def test_header_click_and_keyboard_sort_the_view(qtbot, small_frame):
    view = DataFrameView()
    qtbot.addWidget(view)
    model = DataFrameModel(small_frame, parent=view)
    view.show_frame(model)
    assert model.order is None  # a new table starts in the file's order
    with qtbot.waitSignal(model.sorted, timeout=5000):
        view.horizontalHeader().sectionClicked.emit(1)
        view.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    assert model.sort_key == (1, True)
    view.setCurrentIndex(model.index(0, 0))
    with qtbot.waitSignal(model.sorted, timeout=5000):
        view.sort_current(Qt.SortOrder.DescendingOrder)
    assert model.sort_key == (0, False)
    view.unsort()
    assert model.order is None
    assert all(a.shortcut().toString() for a in view.actions())


# -- a million rows ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def million():
    n, rng = 1_000_000, np.random.default_rng(11)
    columns = {f"x{i}": rng.normal(size=n) for i in range(15)}
    columns["age"] = rng.integers(18, 95, n)
    columns["weight"] = np.where(rng.random(n) < 0.05, np.nan, rng.random(n))
    towns = np.array([f"town {i}" for i in range(4000)], dtype=object)
    columns["town"] = pd.array(towns[rng.integers(0, 4000, n)], dtype="str")
    columns["code"] = pd.array(np.char.add("c", rng.integers(0, 10 ** 7, n).astype(str))
                               .astype(object), dtype="str")
    columns["sector"] = pd.Categorical.from_codes(rng.integers(0, 12, n),
                                                  [f"sector {i}" for i in range(12)])
    return pd.DataFrame(columns)


@pytest.mark.gui
def test_a_million_rows_scroll_and_sort_without_a_stall(qtbot, qtmodeltester, million):
    view = DataFrameView()
    qtbot.addWidget(view)
    view.resize(1366, 700)
    model = DataFrameModel(million, parent=view)
    view.show_frame(model)
    view.show()
    qtbot.waitExposed(view)
    # The view's first paints are not part of what is measured: on a loaded 2-core host
    # they held the thread for 104-122 ms at the measurement's start (two CI runs, both
    # before any scroll or sort), where scrolling and sorting stay within 100 ms.
    qtbot.wait(300)
    gc.collect()  # earlier tests' garbage is not part of what is measured
    clock, gaps = QElapsedTimer(), []
    clock.start()

    def tick():
        gaps.append(clock.restart())

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()
    qtbot.wait(50)
    bar = view.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    qtbot.wait(60)
    bar.setValue(bar.maximum())
    qtbot.wait(60)
    for column, order in ((million.columns.get_loc("town"), Qt.SortOrder.AscendingOrder),
                          (million.columns.get_loc("x3"), Qt.SortOrder.DescendingOrder)):
        view.sortByColumn(column, order)
        qtbot.waitUntil(lambda c=column: model.sort_key[0] == c and not model.sorting,
                        timeout=60_000)
        qtbot.wait(60)
    timer.stop()
    assert max(gaps[1:]) < 100, f"the GUI thread stalled {max(gaps[1:])} ms"
    x3 = million["x3"].to_numpy()
    shown = [float(model.data(model.index(r, million.columns.get_loc("x3")), DISPLAY))
             for r in range(5)]
    assert shown == sorted(x3, reverse=True)[:5]
    assert model.headerData(0, VERTICAL, DISPLAY) == str(int(np.argmax(x3)) + 1)
    qtmodeltester.check(DataFrameModel(million.iloc[:2000]))


# -- the column summary --------------------------------------------------------------------

def test_column_summary_kinds_missing_and_distinct(small_frame):
    frame = small_frame.assign(
        sector=pd.Categorical(["x", "y", "x", None]), age=[30, 30, 41, 52])
    summary = {c.name: c for c in summarize_columns(frame)}
    assert [c.kind for c in summary.values()] == ["text", "number", "date", "categorical",
                                                   "number"]
    assert (summary["income"].missing, summary["income"].distinct) == (1, 3)
    assert summary["income"].missing_percent == 25.0
    assert (summary["age"].missing, summary["age"].distinct) == (0, 3)
    assert (summary["sector"].missing, summary["sector"].distinct) == (1, 2)
    assert (summary["name"].missing, summary["name"].distinct) == (1, 3)


def test_column_summary_reports_progress_and_stops_when_cancelled(million):
    fractions = []
    summary = summarize_columns(million.iloc[:, :4],
                                state=TaskState(lambda f, m: fractions.append(f)))
    assert len(summary) == 4 and fractions[-1] == 1.0
    state = TaskState()
    state.cancel()
    with pytest.raises(Cancelled):
        summarize_columns(million, state=state)


@pytest.mark.gui
def test_column_summary_view_says_which_columns_have_missing_values(qtbot, small_frame):
    view = ColumnSummaryView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.ready, timeout=10_000):
        view.set_frame(small_frame)
    text = view.message.text()
    assert "3 columns have missing values" in text and "stop" in text
    table = view.table.model()
    assert table.rowCount() == 3
    assert table.data(table.index(1, 2), DISPLAY) == "1 (25%)"
    assert table.data(table.index(1, 2), Qt.ItemDataRole.BackgroundRole) is not None
    with qtbot.waitSignal(view.ready, timeout=10_000):
        view.set_frame(pd.DataFrame({"a": [1, 2]}))
    assert "No missing values" in view.message.text()
