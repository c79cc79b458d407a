"""Reading tables (delimiters, encodings, sheets) and atomic writing."""

import os

import numpy as np
import pandas as pd
import pytest

from core import MicroaggError, read_table, write_table
from core.io.write import atomic_write
from core.io.read import sheet_names

ROWS = [("Zoë", 31, 1200.5), ("José", 45, 980.25), ("Ådne", 29, 1500.0)]


def _write(path, text, encoding):
    path.write_bytes(text.encode(encoding))
    return path


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "latin-1"])
@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_csv_encodings_and_delimiters(tmp_path, encoding, delimiter):
    text = delimiter.join(["name", "age", "wage"]) + "\n" + "".join(
        delimiter.join(map(str, row)) + "\n" for row in ROWS)
    table = read_table(_write(tmp_path / "t.csv", text, encoding))
    assert list(table.columns) == ["name", "age", "wage"]
    assert table["name"].tolist() == [r[0] for r in ROWS]
    assert pd.api.types.is_integer_dtype(table["age"])
    assert table["wage"].tolist() == [r[2] for r in ROWS]


def test_semicolon_with_decimal_comma(tmp_path):
    text = "region;income;rate\nNorth;1200,5;0,25\nSouth;980,75;0,5\n"
    table = read_table(_write(tmp_path / "eu.csv", text, "utf-8"))
    assert table["income"].tolist() == [1200.5, 980.75]
    assert pd.api.types.is_float_dtype(table["rate"])


def test_input_file_is_not_modified(tmp_path, sample_path):
    before = sample_path.read_bytes()
    read_table(sample_path)
    assert sample_path.read_bytes() == before


def test_xlsx_sheets(tmp_path):
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path) as writer:
        pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5]}).to_excel(writer, sheet_name="first",
                                                              index=False)
        pd.DataFrame({"c": ["x", "y", "z"]}).to_excel(writer, sheet_name="second",
                                                      index=False)
    assert sheet_names(path) == ["first", "second"]
    first = read_table(path)
    assert list(first.columns) == ["a", "b"] and first["a"].dtype.kind == "i"
    assert read_table(path, sheet="second")["c"].tolist() == ["x", "y", "z"]
    with pytest.raises(MicroaggError, match="no sheet 'third'. Its sheets: first, second"):
        read_table(path, sheet="third")


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"),
    (b"", "is empty"),
    (b"a,b\n", "no data rows"),
    (b"\x00\x01\x02garbage", "not a text file"),
    (b"a,a\n1,2\n", "two columns named 'a'"),
])
def test_bad_files_name_the_file(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(MicroaggError, match=message):
        read_table(path)


def test_unsupported_and_broken_files(tmp_path):
    (tmp_path / "t.por").write_bytes(b"x")
    with pytest.raises(MicroaggError, match="unsupported file type '.por'"):
        read_table(tmp_path / "t.por")
    (tmp_path / "t.xlsx").write_bytes(b"not a zip")
    with pytest.raises(MicroaggError, match="'t.xlsx'"):
        read_table(tmp_path / "t.xlsx")


def test_write_round_trip_keeps_float_values(tmp_path):
    table = pd.DataFrame({"x": np.random.default_rng(0).normal(size=50), "s": ["a"] * 50})
    write_table(tmp_path / "out.csv", table)
    back = read_table(tmp_path / "out.csv")
    np.testing.assert_array_equal(back["x"].to_numpy(), table["x"].to_numpy())
    # XLSX stores 16 significant digits (Excel itself keeps 15).
    write_table(tmp_path / "out.xlsx", table)
    back = read_table(tmp_path / "out.xlsx")
    np.testing.assert_allclose(back["x"].to_numpy(), table["x"].to_numpy(), rtol=1e-15)
    assert sorted(os.listdir(tmp_path)) == ["out.csv", "out.xlsx"]


def test_failed_write_leaves_no_partial_file_and_keeps_the_old_one(tmp_path):
    target = tmp_path / "result.csv"
    target.write_text("previous export\n")

    def failing(temporary):
        with open(temporary, "w") as handle:
            handle.write("half a tab")
        raise OSError("disk full")

    with pytest.raises(OSError):
        atomic_write(target, failing)
    assert target.read_text() == "previous export\n"
    assert os.listdir(tmp_path) == ["result.csv"]


def test_write_errors_are_clear(tmp_path):
    table = pd.DataFrame({"x": [1]})
    with pytest.raises(MicroaggError, match="use a .csv, .xlsx or .parquet"):
        write_table(tmp_path / "out.json", table)
    with pytest.raises(MicroaggError, match="does not exist"):
        write_table(tmp_path / "missing" / "out.csv", table)


def test_parquet_export_round_trips_when_pyarrow_is_installed(tmp_path):
    pytest.importorskip("pyarrow")
    table = pd.DataFrame({"x": [1.5, 2.25], "region": ["North", "South"]})
    written = write_table(tmp_path / "out.parquet", table)
    pd.testing.assert_frame_equal(pd.read_parquet(written), table)
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]
