"""Messy input files are read right or refused clearly, never misread.

The classes of messy input, each with corpus files in ``tests/corpus`` (what each must
give is in ``tests/corpus/expected.toml``) and generated files for the large cases:

1. locale numbers (decimal mark and thousands separator per column)
2. explicit reading options and the read report
3. old-Mac CR line ends; lines and fields over 128 KiB
4. UTF-16 with a byte-order mark
5. NUL bytes anywhere in a text file
6. empty rows at the end of a spreadsheet export
7. rows with more fields than the header
8. Excel error cells
9. encrypted workbook, empty first sheet, title row, truncated Stata file, a folder
10. no exception type but MicroaggError leaves the reader
11. the command line's reading options
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli.read_options import add_read_options, read_options_from_args
from core.cli.released import read_released
from core.errors import MicroaggError
from core.io.read import ReadReport, read_table, read_table_with_report

CORPUS = Path(__file__).resolve().parent / "corpus"
EXPECTED = tomllib.loads((CORPUS / "expected.toml").read_text(encoding="utf-8"))
CORPUS_FILES = sorted(p for p in CORPUS.iterdir()
                      if p.suffix not in (".py", ".toml") and not p.name.startswith(".")
                      and p.name != "__pycache__" and p.is_file())


def _same(actual, expected) -> bool:
    if expected == "nan":
        return isinstance(actual, float) and math.isnan(actual)
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        return isinstance(actual, (int, float, np.number)) and float(actual) == expected
    return actual == expected


# -- the corpus: every file gives exactly what expected.toml says ----------------------

@pytest.mark.parametrize("entry", sorted(EXPECTED), ids=str)
def test_corpus_file_reads_as_expected(entry):
    spec = EXPECTED[entry]
    path = CORPUS / spec.get("file", entry)
    options = spec.get("options", {})
    if "error" in spec:
        with pytest.raises(MicroaggError) as caught:
            read_table(path, **options)
        assert spec["error"] in str(caught.value)
        assert "\n" not in str(caught.value)
        return
    table, report = read_table_with_report(path, **options)
    for column, values in spec["values"].items():
        read = table[column].tolist()
        assert len(read) == len(values) and all(map(_same, read, values)), (column, read)
    for note in spec.get("notes", []):
        assert note in report.notes


def test_every_corpus_file_has_an_expectation():
    named = {spec.get("file", entry) for entry, spec in EXPECTED.items()}
    assert {p.name for p in CORPUS_FILES} == named


def test_reading_never_modifies_a_corpus_file():
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in CORPUS_FILES}
    for path in CORPUS_FILES:
        try:
            read_table_with_report(path)
        except MicroaggError:
            pass
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in CORPUS_FILES} == before
    assert sorted(p.name for p in CORPUS.iterdir() if p.name != "__pycache__") == sorted(
        [p.name for p in CORPUS_FILES] + [".gitattributes", "expected.toml", "make_corpus.py", "formats",
                                      "make_formats.py"])


# -- 1. locale numbers -----------------------------------------------------------------

def _write(tmp_path, name, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_thousands_beyond_the_sample_read_whole_column(tmp_path):
    # The decimal comma is known from 'rate'; '50.900' appears only after 30,000 rows.
    path = _write(tmp_path, "late.csv", b"income;rate\n" + b"500;1,5\n" * 30_000
                  + b"50.900;2\n")
    table, report = read_table_with_report(path)
    assert table["income"].iloc[-1] == 50_900 and table["income"].iloc[0] == 500
    assert "Column 'income' uses '.' as thousands separator." in report.notes


def test_unknown_decimal_mark_beyond_the_sample_is_refused(tmp_path):
    # Nothing tells the decimal mark; '1.000' after the sample could be 1 or 1000.
    path = _write(tmp_path, "late.csv", b"income;n\n" + b"500;1\n" * 30_000 + b"1.000;2\n")
    with pytest.raises(MicroaggError, match=r"Column 'income' .* '1\.000' \(data row "
                                            r"30001\) that read as 1 or 1000 .*--decimal"):
        read_table(path)
    assert read_table(path, decimal=",", thousands=".")["income"].iloc[-1] == 1000
    assert read_table(path, decimal=".")["income"].iloc[-1] == 1.0


def test_given_options_win_over_detection(tmp_path):
    path = _write(tmp_path, "eu.csv", b"a;b\n1,5;2.000\n2,25;3.500\n")
    table, report = read_table_with_report(path, decimal=",", thousands=".")
    assert table["a"].tolist() == [1.5, 2.25] and table["b"].tolist() == [2000, 3500]
    assert report.settings["decimal"] == {"value": ",", "source": "given"}
    assert report.settings["thousands"] == {"value": ".", "source": "given"}
    table, report = read_table_with_report(path)
    assert table["b"].tolist() == [2000, 3500]
    assert report.settings["decimal"] == {"value": ",", "source": "detected"}


def test_a_value_that_breaks_the_given_format_is_named(tmp_path):
    path = _write(tmp_path, "eu.csv", b"a;b\n1,5;2.000\n2,25;3.5\n")
    with pytest.raises(MicroaggError, match=r"Column 'b' in 'eu.csv' has '3.5' \(line 3\), "
                                            "which is not a number written with decimal "
                                            "mark ',' and thousands separator '.' as given"):
        read_table(path, decimal=",", thousands=".")


def test_text_after_numbers_stays_text_and_is_noted(tmp_path):
    path = _write(tmp_path, "codes.csv", b"code;n\n" + b"1000;1\n" * 3000 + b"L-1234;2\n")
    table, report = read_table_with_report(path)
    assert table["code"].iloc[-1] == "L-1234" and table["code"].iloc[0] == "1000"
    assert any("'L-1234' (data row 3001); it is read as text" in n for n in report.notes)


def _blocks_file(tmp_path, rows=300_000):
    """A file longer than pandas' blocks of rows: 'code' is text in the first rows and
    five digits (some zero-led) after; 'age' is numbers with one word near the end."""
    rng = np.random.default_rng(5)
    code = np.char.zfill(rng.integers(0, 100_000, rows).astype(str), 5).astype(object)
    code[:20] = "A1"
    age = rng.integers(18, 95, rows).astype(str).astype(object)
    age[rows - 1000] = "unknown"
    path = tmp_path / "blocks.csv"
    pd.DataFrame({"code": code, "age": age}).to_csv(path, index=False)
    return path, code, age


# The test run drops the reader module's warning filter (made at its import).
@pytest.mark.filterwarnings("ignore::pandas.errors.DtypeWarning")
def test_a_large_file_reads_every_block_of_rows_alike(tmp_path):
    # pandas infers each block of rows on its own: the code column came back as text in
    # the first block and numbers after ('00123' as 123, a second category beside the
    # '00123' of the first block), and 'age' as numbers, then text from the block with
    # the word, with pandas' warning on the console.
    path, code, age = _blocks_file(tmp_path)
    table, report = read_table_with_report(path)
    for name, written in (("code", code), ("age", age)):
        values = table[name].tolist()
        assert all(isinstance(v, str) for v in values), name
        assert values == written.tolist(), name
    assert table["code"].nunique() == len(set(code))
    assert any(f"'unknown' (data row {len(age) - 999}); it is read as text" in n
               for n in report.notes)


def test_pandas_warning_of_blocks_read_differently_is_not_shown(tmp_path):
    # The column is read right (above), so pandas' advice to "specify dtype option on
    # import or set low_memory=False" is not for the user. In a fresh interpreter: the
    # test run's own warning filters are not the application's.
    path, _, _ = _blocks_file(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from core.io.read import read_table; "
         "print(read_table(sys.argv[1])['age'].map(type).nunique())", str(path)],
        cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True,
        check=True)
    assert done.stdout.split() == ["1"] and "Warning" not in done.stderr, done.stderr


# The test run drops the reader module's warning filter (made at its import).
@pytest.mark.filterwarnings("ignore::pandas.errors.DtypeWarning")
def test_a_released_file_read_back_reads_every_block_alike(tmp_path):
    # The released file is read again with the original's text columns as text; the
    # other columns must not come back as numbers in some blocks and text in others.
    path, code, _ = _blocks_file(tmp_path)
    # 'zip' is released as digits (read back as numbers) but is text in the original.
    masked = pd.read_csv(path, dtype=str).assign(
        zip=np.random.default_rng(6).integers(1000, 10_000, len(code)).astype(str))
    masked.to_csv(path, index=False)
    original = masked.assign(age=np.arange(len(masked)))
    table = read_released(str(path), original=original)
    assert [type(v) for v in table["code"].unique()] == [str] * table["code"].nunique()
    assert table["code"].tolist() == code.tolist()
    assert table["zip"].tolist() == masked["zip"].tolist()


CONVENTIONS = [(".", ""), (".", ","), (",", "."), (",", " "), (".", " "), (".", "'"),
               (",", "")]


def _formatted(value: float, places: int, decimal: str, thousands: str) -> str:
    text = f"{value:,.{places}f}"
    return text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.floats(-1e9, 1e9, allow_nan=False), min_size=1, max_size=40),
       places=st.integers(0, 4), convention=st.sampled_from(CONVENTIONS))
def test_locale_numbers_read_back_or_are_refused(values, places, convention):
    decimal, thousands = convention
    cells = [_formatted(v, places, decimal, thousands) for v in values]
    expected = [float(f"{v:.{places}f}") for v in values]
    text = "id;x\n" + "".join(f"{i};{cell}\n" for i, cell in enumerate(cells))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "numbers.csv"
        path.write_text(text, encoding="utf-8")
        given_read = read_table(path, decimal=decimal, thousands=thousands)
        assert given_read["x"].astype(float).tolist() == expected
        try:
            detected = read_table(path)
        except MicroaggError as error:
            assert "Column 'x'" in str(error)
            return
        assert detected["x"].astype(float).tolist() == expected, cells


# -- 2. options and the report --------------------------------------------------------

def test_report_says_what_was_detected(tmp_path):
    path = _write(tmp_path, "t.csv", "Zoë;1,5\nJosé;2,5\n".encode("latin-1"))
    table, report = read_table_with_report(path, skip_rows=0)
    assert isinstance(report, ReadReport) and list(table.columns) == ["Zoë", "1,5"]
    assert report.settings == {
        "delimiter": {"value": ";", "source": "detected"},
        "decimal": {"value": ",", "source": "detected"},
        "thousands": {"value": None, "source": "detected"},
        "encoding": {"value": "latin-1", "source": "detected"},
        "header_line": {"value": 1, "source": "given"},
        "sheet": {"value": None, "source": "not applicable"},
    }
    with pytest.raises(AttributeError):
        report.notes = ()


def test_options_replace_detection(tmp_path):
    path = _write(tmp_path, "t.txt", "# exported\n\nid|name\n1|Zoë\n".encode("cp1252"))
    table = read_table(path, delimiter="|", encoding="cp1252", header_row=3)
    assert table.to_dict("list") == {"id": [1], "name": ["Zoë"]}
    assert read_table(path, delimiter="|", encoding="cp1252", skip_rows=2).equals(table)


@pytest.mark.parametrize("options, message", [
    ({"skip_rows": 1, "header_row": 2}, "Give skip_rows or header_row, not both"),
    ({"decimal": ";"}, "decimal must be '.' or ','; got ';'"),
    ({"thousands": "x"}, "thousands must be one of '.', ',', a space, \"'\", or '' for none"),
    ({"decimal": ".", "thousands": "."}, "decimal and thousands must differ"),
    ({"delimiter": "ab"}, "delimiter must be one character"),
    ({"encoding": "klingon"}, "encoding must be a known encoding"),
    ({"skip_rows": -1}, "skip_rows must be a whole number from 0; got -1"),
    ({"header_row": 0}, "header_row must be a whole number from 1; got 0"),
    ({"sheet": 1.5}, "sheet must be a sheet name or a position from 0"),
])
def test_bad_options_are_refused_with_what_is_allowed(tmp_path, options, message):
    path = _write(tmp_path, "t.csv", b"a,b\n1,2\n")
    with pytest.raises(MicroaggError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_table(path, **options)


def test_sheet_keyword_keeps_working_and_is_ignored_for_text(tmp_path, sample_path):
    table, report = read_table_with_report(sample_path, sheet="anything")
    assert len(table) > 0 and "The sheet option does not apply to a text file; ignored." \
        in report.notes


def test_text_options_do_not_apply_to_a_workbook_and_say_so(tmp_path):
    table, report = read_table_with_report(CORPUS / "empty_first_sheet.xlsx",
                                           sheet="survey data", decimal=",")
    assert table["age"].tolist() == [31, 45]
    assert "The decimal option does not apply to an Excel workbook; ignored." in report.notes
    assert report.settings["sheet"] == {"value": "survey data", "source": "given"}
    assert report.settings["delimiter"]["source"] == "not applicable"


# -- 3. line ends and long lines -------------------------------------------------------

def test_twenty_thousand_columns_and_a_huge_field(tmp_path):
    names = [f"household_variable_{i:05d}" for i in range(20_000)]
    header = ";".join(names).encode()
    assert len(header) > 128 * 1024 * 3
    rows = b"\r".join(";".join(f"{i},5" for _ in names).encode() for i in range(3))
    table = read_table(_write(tmp_path, "wide.csv", header + b"\r" + rows + b"\r"))
    assert table.shape == (3, 20_000) and table.iloc[2, 19_999] == 2.5
    field = b"x" * 300_000
    table = read_table(_write(tmp_path, "long.csv", b'id,note\n1,"' + field + b'"\n'))
    assert table["note"].iloc[0] == field.decode()


# -- 5. NUL bytes ----------------------------------------------------------------------

def test_nul_byte_far_below_the_sample_is_refused_with_its_line(tmp_path):
    path = _write(tmp_path, "nul.csv", b"a,b\n" + b"1,2\n" * 100_000 + b"3,\x004\n")
    with pytest.raises(MicroaggError, match="'nul.csv' is not a text file: it contains a "
                                            "NUL byte on line 100002"):
        read_table(path)


def test_nul_bytes_in_utf16_text_are_characters_not_bytes(tmp_path):
    path = _write(tmp_path, "u.csv", "a,b\n1,2\n3,\x004\n".encode("utf-16"))
    with pytest.raises(MicroaggError, match="NUL byte on line 3"):
        read_table(path)


# -- 6. trailing empty rows ------------------------------------------------------------

def test_only_trailing_empty_rows_are_dropped(tmp_path):
    body = b"a,b\n" + b"1,2\n" * 100_000 + b",\n" + b"3,4\n" + b",\n" * 5
    table, report = read_table_with_report(_write(tmp_path, "t.csv", body))
    assert len(table) == 100_002 and table["a"].isna().sum() == 1
    assert report.notes == ("Dropped 5 empty rows at the end of the file.",)


# -- 7. extra fields -------------------------------------------------------------------

def test_extra_fields_far_below_the_sample(tmp_path):
    path = _write(tmp_path, "t.csv", b"a,b\n" + b"1,2\n" * 100_000 + b"3,4,5\n")
    with pytest.raises(MicroaggError, match=r"^'t.csv' line 100002 has 3 fields but the "
                                            r"header \(line 1\) has 2\."):
        read_table(path)


# -- 9. messages in the user's terms ---------------------------------------------------

def test_a_folder_is_named_as_a_folder(tmp_path):
    (tmp_path / "data.csv").mkdir()
    with pytest.raises(MicroaggError, match="'.*data.csv' is a folder, not a table file"):
        read_table(tmp_path / "data.csv")


@pytest.mark.parametrize("version", [114, 118])
def test_complete_stata_files_still_read(tmp_path, version):
    frame = pd.DataFrame({"id": [1, 2, 3], "wage": [1200.5, 980.25, 1500.0]})
    frame.to_stata(tmp_path / "t.dta", version=version, write_index=False)
    assert read_table(tmp_path / "t.dta")["wage"].tolist() == [1200.5, 980.25, 1500.0]


def test_a_renamed_old_workbook_and_a_broken_one(tmp_path):
    old = _write(tmp_path, "old.xlsx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    with pytest.raises(MicroaggError, match=r"old Excel 97-2003 workbook \(.xls\)"):
        read_table(old)
    broken = _write(tmp_path, "broken.xlsx", b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(MicroaggError, match="'broken.xlsx' could not be opened as an Excel "
                                            "workbook: it is damaged"):
        read_table(broken)


# -- 10. only MicroaggError leaves the reader --------------------------------------------

@settings(max_examples=200, deadline=None)
@given(content=st.binary(max_size=400) | st.text(max_size=300).map(str.encode),
       suffix=st.sampled_from([".csv", ".txt", ".tsv", ".xlsx", ".dta"]))
def test_no_other_exception_type_leaves_the_reader(content, suffix):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"input{suffix}"
        path.write_bytes(content)
        try:
            read_table(path)
        except MicroaggError as error:
            assert "\n" not in str(error).strip()
        assert os.listdir(folder) == [path.name]


def test_corpus_raises_nothing_but_microagg_error():
    for path in CORPUS_FILES:
        for options in ({}, {"decimal": ","}, {"skip_rows": 3}, {"encoding": "ascii"}):
            try:
                read_table(path, **options)
            except MicroaggError:
                pass


# -- 11. command-line options ----------------------------------------------------------

def _parse(argv):
    parser = argparse.ArgumentParser()
    add_read_options(parser)
    return parser.parse_args(argv)


def test_command_line_options_become_read_table_arguments(tmp_path):
    args = _parse(["--delimiter", "tab", "--decimal", ",", "--thousands", "space",
                   "--encoding", "latin-1", "--header-row", "2"])
    assert read_options_from_args(args) == {"delimiter": "\t", "decimal": ",",
                                            "thousands": " ", "encoding": "latin-1",
                                            "header_row": 2}
    assert read_options_from_args(_parse([])) == {}
    assert read_options_from_args(_parse(["--thousands", "none"])) == {"thousands": ""}
    path = _write(tmp_path, "t.tsv", "title\nx\ty\n1,5\t2.000\n".encode("latin-1"))
    assert read_table(path, **read_options_from_args(
        _parse(["--skip-rows", "1", "--decimal", ",", "--thousands", "."]))).to_dict(
        "list") == {"x": [1.5], "y": [2000]}


@pytest.mark.parametrize("argv", [["--skip-rows", "1", "--header-row", "2"],
                                  ["--skip-rows", "-1"], ["--header-row", "0"],
                                  ["--decimal", ";"]])
def test_command_line_refuses_bad_reading_options(argv):
    with pytest.raises(SystemExit):
        _parse(argv)
