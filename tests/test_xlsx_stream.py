"""The streaming XLSX writer gives the cells the openpyxl writer gave, read by both readers."""

from __future__ import annotations

import datetime as dt
import zipfile

import numpy as np
import openpyxl
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl.utils.exceptions import IllegalCharacterError

from core.io.read import read_table
from core.io.write import _width, write_table
from core.io.xlsx_stream import write_xlsx
from tests.xlsx_reference import write_xlsx_reference


def tricky(finite: bool = False) -> pd.DataFrame:
    """Values a writer could get wrong; ``finite``: no infinity, which an export to XLSX
    refuses (``write_table``; the cell writer leaves it empty, as the reference does)."""
    return pd.DataFrame({
        "float": [0.1 + 0.2, 1e-300, -2.5, np.nan, 1.7e308 if finite else np.inf,
                  123456789.12345678],
        "int": [0, -1, 2**53 + 1, 10**18, 7, -(2**62)],
        "nullable": pd.array([1, None, 3, 4, 5, 6], dtype="Int64"),
        "bool": [True, False, True, True, False, False],
        "text": ["=1+1", " lead and trail ", "a\rb\x01c", "_x000D_ literal", "ünï & <x>",
                 None],
        "category": pd.Categorical(["a", "b", "a", None, "c", "b"]),
        "mixed": [1, 2.5, "three", None, True, np.int64(4)],
        "when": pd.to_datetime(["2024-01-02 03:04:05", None, "1999-12-31 00:00:00",
                                "2000-02-29 12:00:00",
                                "2026-11-22 00:00:00", "1970-01-01 00:00:00"]),
        '"quoted" <header>': ["x"] * 6,
    })


def cells(path) -> dict:
    """Every sheet's cells as (value, type); a missing value's type does not matter."""
    book = openpyxl.load_workbook(path)
    return {sheet.title: [[(c.value, c.data_type if c.value is not None else None)
                           for c in row] for row in sheet.iter_rows()]
            for sheet in book.worksheets}


def test_same_cells_as_the_openpyxl_writer(tmp_path):
    frame = tricky()
    summary = pd.DataFrame({"item": ["k", "IL %", "note"], "value": [5, 1.25, "=SUM(A1)"]})
    fast, slow = tmp_path / "fast.xlsx", tmp_path / "slow.xlsx"
    sheets = [("masked", frame), ("summary", summary)]
    write_xlsx(str(fast), [(n, f, [_width(f, c) for c in f.columns]) for n, f in sheets])
    write_xlsx_reference(str(slow), sheets)
    got, expected = cells(fast), cells(slow)
    assert list(got) == list(expected) == ["masked", "summary"]
    for name in got:
        assert len(got[name]) == len(expected[name])
        for row_got, row_expected in zip(got[name], expected[name]):
            for (value, kind), (value_ref, kind_ref) in zip(row_got, row_expected):
                assert kind == kind_ref
                if isinstance(value_ref, dt.datetime):
                    assert abs(value - value_ref) < dt.timedelta(milliseconds=1)
                else:
                    assert value == value_ref
    # Every text cell is text, never a formula; exact digits are kept.
    sheet = openpyxl.load_workbook(fast)["masked"]
    assert sheet["E2"].value == "=1+1" and sheet["E2"].data_type == "s"
    # Excel's escapes, which Excel (and our reader) decode; openpyxl shows them raw.
    assert sheet["E4"].value == "a_x000D_b_x0001_c"
    assert sheet["E5"].value == "_x005F_x000D_ literal"
    assert sheet["A2"].value == 0.1 + 0.2
    assert sheet.column_dimensions["E"].width == _width(frame, "text")


def test_calamine_reads_the_same_table_from_both(tmp_path):
    frame = tricky(finite=True).drop(columns=["when"])
    fast, slow = tmp_path / "fast.xlsx", tmp_path / "slow.xlsx"
    write_table(fast, frame)
    write_xlsx_reference(str(slow), [("masked", frame)])
    ours = read_table(fast)
    pd.testing.assert_frame_equal(ours, read_table(slow))


def test_the_package_is_a_valid_spreadsheet_zip(tmp_path):
    path = tmp_path / "t.xlsx"
    write_table(path, tricky(finite=True), extra_sheets=[("summary: [a]/b", pd.DataFrame({"x": [1]}))])
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        names = set(archive.namelist())
    assert {"[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/styles.xml",
            "xl/_rels/workbook.xml.rels", "xl/worksheets/sheet1.xml",
            "xl/worksheets/sheet2.xml"} <= names
    # Excel refuses \ * ? : / [ ] in a sheet name.
    assert openpyxl.load_workbook(path).sheetnames == ["masked", "summary_ _a__b"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(allow_nan=True, allow_infinity=True),
                          st.integers(-(2**63), 2**63 - 1),
                          st.text(max_size=12)), min_size=1, max_size=30))
def test_any_values_read_back_as_the_reference_writes_them(tmp_path_factory, rows):
    frame = pd.DataFrame(rows, columns=["f", "i", "s"])
    folder = tmp_path_factory.mktemp("x")
    fast, slow = folder / "fast.xlsx", folder / "slow.xlsx"
    write_xlsx(str(fast), [("masked", frame, [10.0] * 3)])
    try:
        write_xlsx_reference(str(slow), [("masked", frame)])
    except IllegalCharacterError:  # openpyxl refuses some characters; we escape them
        pytest.skip("the reference writer cannot write this text")
    assert cells(fast) == cells(slow)


def test_zip64_headers_only_where_a_sheet_could_need_them(tmp_path, monkeypatch):
    from core.io import xlsx_stream

    def zip64_entries(path):
        with zipfile.ZipFile(path) as archive:
            return [info.filename for info in archive.infolist()
                    if info.extract_version >= 45]  # 4.5: the version that reads ZIP64

    frame = pd.DataFrame({"x": range(50)})
    write_table(tmp_path / "small.xlsx", frame)
    assert zip64_entries(tmp_path / "small.xlsx") == []
    monkeypatch.setattr(xlsx_stream, "_ZIP64_CELLS", 10)
    write_table(tmp_path / "large.xlsx", frame)
    assert zip64_entries(tmp_path / "large.xlsx") == ["xl/worksheets/sheet1.xml"]
    assert openpyxl.load_workbook(tmp_path / "large.xlsx")["masked"]["A51"].value == 49


def test_dates_of_early_1900_and_before_are_written_as_they_are(tmp_path):
    """Excel's 1900 date system counts a 29 February 1900 that never was: the days of
    January and February 1900 were written one day late (1900-02-28 as that day), and a
    date before 1900 got a serial number below 1, which no Excel shows."""
    when = pd.to_datetime(["1850-06-01 00:00", "1899-12-31 12:00", "1900-01-01 00:00",
                           "1900-02-28 00:00", "1900-03-01 00:00", "1975-05-05 06:30"])
    path = tmp_path / "dates.xlsx"
    write_xlsx(str(path), [("data", pd.DataFrame({"born": when}), [12.0])])
    with zipfile.ZipFile(path) as archive:
        sheet = archive.read("xl/worksheets/sheet1.xml").decode()
    assert '<c r="A4" s="1"><v>1.0</v>' in sheet and '<c r="A5" s="1"><v>59.0</v>' in sheet
    column = [c.value for c in openpyxl.load_workbook(path)["data"]["A"]][1:]
    assert column[:2] == ["1850-06-01", "1899-12-31T12:00:00"]  # text: no serial holds them
    assert column[2:] == [w.to_pydatetime() for w in when[2:]]
