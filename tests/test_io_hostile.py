"""Hostile input files are refused with one line naming the file, or read right.

The cases a review found read wrongly or with a library's message:

1. a truncated SAS transport file (read partly, without a word)
2. Windows-1252 text (read as Latin-1, with control characters for € and curly quotes)
3. an integer too large for 64 bits in a CSV column
4. rows with fewer fields than the header (filled with missing values)
5. a text file named ``.dta`` (a pandas warning, then "truncated")
6. workbook formulas without a stored result (read as missing values)
"""

from __future__ import annotations

import warnings
import zipfile

import numpy as np
import openpyxl
import pandas as pd
import pyreadstat
import pytest

import core.io.csv_dialect as csv_dialect
import core.io.short_rows as short_rows
from core.errors import MicroaggError
from core.io import read_table, read_table_with_report
from core.io.preview import preview_table

ROWS = 60


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"id": np.arange(ROWS), "age": rng.integers(18, 80, ROWS),
                         "score": rng.uniform(0, 100, ROWS).round(2)})


def _refused(path, match: str, **options) -> str:
    with pytest.raises(MicroaggError, match=match) as caught:
        read_table(path, **options)
    message = str(caught.value)
    assert "\n" not in message and path.name in message
    return message


def _write(path, text: str, encoding: str = "utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


# -- 1. SAS transport ------------------------------------------------------------------

@pytest.mark.parametrize("version", [5, 8])
def test_a_complete_transport_file_is_whole_80_byte_records_and_reads(tmp_path, version):
    path = tmp_path / "full.xpt"
    pyreadstat.write_xport(_frame(), str(path), file_format_version=version)
    assert path.stat().st_size % 80 == 0
    assert len(read_table(path)) == ROWS
    assert len(preview_table(path, rows=5).table) == 5


@pytest.mark.parametrize("version", [5, 8])
def test_a_transport_file_cut_inside_a_record_is_refused(tmp_path, version):
    full = tmp_path / "full.xpt"
    pyreadstat.write_xport(_frame(), str(full), file_format_version=version)
    cut = tmp_path / "cut.xpt"
    cut.write_bytes(full.read_bytes()[:full.stat().st_size // 2 + 7])  # not 80-aligned
    _refused(cut, r"^'cut.xpt' is not a complete SAS transport file: it is truncated")


def test_a_version_8_file_cut_at_a_record_boundary_is_refused(tmp_path):
    full = tmp_path / "full.xpt"
    pyreadstat.write_xport(_frame(), str(full), file_format_version=8)
    cut = tmp_path / "cut.xpt"
    cut.write_bytes(full.read_bytes()[:full.stat().st_size - 800])
    _refused(cut, rf"truncated \(it declares {ROWS} records but holds \d+\)")


# -- 2. Windows-1252 -------------------------------------------------------------------

TEXT = "id,age,note\n" + "".join(f"{i},{20 + i % 30},Prix 5€ “ok”\n" for i in range(40))


def test_windows_1252_text_is_read_as_windows_1252(tmp_path):
    path = _write(tmp_path / "cp.csv", TEXT, "cp1252")
    table, report = read_table_with_report(path)
    assert table["note"].tolist() == ["Prix 5€ “ok”"] * 40
    assert report.settings["encoding"] == {"value": "cp1252", "source": "detected"}
    assert preview_table(path).settings["encoding"]["value"] == "cp1252"


def test_a_byte_windows_1252_leaves_undefined_keeps_latin_1(tmp_path):
    text = TEXT.replace("€", "é").replace("“", "«").replace("”", "»")
    path = tmp_path / "latin.csv"
    path.write_bytes(text.encode("latin-1") + b"40,20,a\x81b\n")
    table, report = read_table_with_report(path)
    assert report.settings["encoding"]["value"] == "latin-1"
    assert table["note"].iloc[-1] == "a\x81b" and table["note"].iloc[0] == "Prix 5é «ok»"


def test_a_euro_sign_below_the_sample_and_the_preview_head_decides(tmp_path):
    text = "id,age,note\n" + "".join(f"{i},{20 + i % 30},café\n" for i in range(80_000))
    path = _write(tmp_path / "late.csv", text + "80000,20,5€\n", "cp1252")
    assert path.stat().st_size > 2 * csv_dialect.SAMPLE_BYTES
    table, report = read_table_with_report(path)
    assert table["note"].iloc[-1] == "5€"
    assert report.settings["encoding"]["value"] == "cp1252"
    preview = preview_table(path)
    assert preview.settings["encoding"] == {"value": "cp1252", "source": "detected"}


# -- 3. integers beyond 64 bits --------------------------------------------------------

@pytest.mark.parametrize("row", [5, 3999])
@pytest.mark.parametrize("huge", ["123456789012345678901234", "-9223372036854775809"])
def test_an_integer_beyond_64_bits_keeps_its_digits_as_text_with_a_note(tmp_path, row, huge):
    values = [huge if i == row else str(1000 + i) for i in range(4000)]
    path = _write(tmp_path / "big.csv", "id,income,age\n" + "".join(
        f"{i},{v},{20 + i % 30}\n" for i, v in enumerate(values)))
    table, report = read_table_with_report(path)
    assert table["income"].tolist() == values
    assert (f"Column 'income' has {huge} (data row {row + 1}), a whole number too large "
            "for 64 bits; the column is read as text so that no digit is lost."
            in report.notes)


def test_an_integer_within_64_bits_stays_a_number(tmp_path):
    path = _write(tmp_path / "u.csv", "id,n\n0,18446744073709551615\n1,2\n2,3\n")
    table, report = read_table_with_report(path)
    assert table["n"].tolist() == [18446744073709551615, 2, 3] and not report.notes


# -- 4. short rows ---------------------------------------------------------------------

ROWS_OK = "".join(f"{i},{20 + i},{i * 3},\n" for i in range(30))


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_a_short_row_anywhere_is_refused_naming_the_line(tmp_path, line_end):
    text = "id,age,income,score\n" + ROWS_OK + "5,25,15\n" + ROWS_OK * 100
    path = _write(tmp_path / "short.csv", text.replace("\n", line_end))
    _refused(path, r"^'short.csv' line 32 has 3 fields but the header \(line 1\) has 4\.")


def test_a_short_row_in_the_sample_with_full_last_columns_elsewhere(tmp_path):
    rows = "".join(f"{i},{20 + i},{i * 3},{i}\n" for i in range(20))
    path = _write(tmp_path / "ragged.csv", "id,age,income,score\n" + rows + "5,25,15\n")
    _refused(path, r"line 22 has 3 fields but the header \(line 1\) has 4")


def test_semicolon_rows_in_a_comma_file_are_refused(tmp_path):
    rows = "".join(f"{i},{20 + i},{i * 3}\n" if i % 2 else f"{i};{20 + i};{i * 3}\n"
                   for i in range(20))
    path = _write(tmp_path / "mixed.csv", "id,age,income\n" + rows)
    _refused(path, r"line 2 has 1 field but the header \(line 1\) has 3")


def test_short_rows_are_found_with_quotes_and_across_scan_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(short_rows, "_CHUNK", 7)
    quoted = "".join(f'{i},"a, ""b""\nc",\n' for i in range(30))
    path = _write(tmp_path / "q.csv", 'id,note,x\n' + quoted + '"7,8",1\n' + quoted)
    _refused(path, r"line 62 has 2 fields but the header \(line 1\) has 3")
    stray = "".join(f'{i},5" pipe,\n' for i in range(30))  # a literal quote to pandas
    path = _write(tmp_path / "stray.csv", "id,note,x\n" + stray + "1,2\n")
    _refused(path, r"line 32 has 2 fields")


def test_short_row_in_utf16_text_is_refused(tmp_path):
    path = _write(tmp_path / "u16.csv", "id,age,income,score\n" + ROWS_OK + "5,25\n",
                  "utf-16")
    _refused(path, r"line 32 has 2 fields but the header \(line 1\) has 4")


def test_blank_lines_delimiter_rows_quoted_newlines_and_trailing_delimiters_read(tmp_path):
    blank = _write(tmp_path / "blank.csv", "id,age,income,score\r\n\r\n" + ROWS_OK.replace(
        "\n", "\r\n") + "\r\n  \r\n" + ROWS_OK + "\n\n")
    assert read_table(blank).shape == (60, 4)
    empty_row = _write(tmp_path / "empty_row.csv", "id,age,income,score\n" + ROWS_OK
                       + ",,\n" + ROWS_OK)
    assert read_table(empty_row).shape == (61, 4)
    trailing = read_table(_write(tmp_path / "trailing.csv", "id,age,income,\n" + ROWS_OK))
    assert trailing.shape == (30, 4) and trailing.iloc[:, 3].isna().all()
    notes = "".join(f'{i},{20 + i},"line1\nline2, more",\n' for i in range(30))
    quoted = read_table(_write(tmp_path / "qnl.csv", "id,age,note,x\n" + notes))
    assert quoted["note"].tolist() == ["line1\nline2, more"] * 30


# -- 5. a text file named .dta ---------------------------------------------------------

def test_a_text_file_named_dta_is_not_a_stata_file_and_warns_nothing(tmp_path):
    path = _write(tmp_path / "fake.dta", "id,age,income,region,score\r\n0,26,5662,a,25.5\r\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        message = _refused(path, r"^'fake.dta' is not a Stata file")
    assert "truncated" not in message


def test_a_stata_file_still_reads(tmp_path):
    path = tmp_path / "ok.dta"
    _frame().to_stata(path, write_index=False, version=114)
    assert read_table(path)["age"].tolist() == _frame()["age"].tolist()


# -- 6. formulas without a stored result -----------------------------------------------

def _formula_book(path, cached: bool):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "data"
    sheet.append(["id", "age", "income"])
    for i in range(30):
        sheet.append([i, 20 + i, f"=A{i + 2}*10+1000"])
    book.save(path)
    if cached:  # as Excel saves it: the result next to the formula
        with zipfile.ZipFile(path) as source:
            parts = {name: source.read(name) for name in source.namelist()}
        parts["xl/worksheets/sheet1.xml"] = parts["xl/worksheets/sheet1.xml"].replace(
            b"<v />", b"<v>1000</v>")
        with zipfile.ZipFile(path, "w") as target:
            for name, data in parts.items():
                target.writestr(name, data)
    return path


def test_formulas_without_a_stored_result_are_refused_naming_the_cell(tmp_path):
    path = _formula_book(tmp_path / "formula.xlsx", cached=False)
    _refused(path, r"^'formula.xlsx' sheet 'data' column 'income' holds formulas without "
             r"a stored result \(the first in cell C2\).*Open it in Excel \(or LibreOffice\)")


def test_formulas_with_a_stored_result_read_their_values(tmp_path):
    path = _formula_book(tmp_path / "saved.xlsx", cached=True)
    assert read_table(path)["income"].tolist() == [1000] * 30


def test_text_cells_read_as_missing_values_are_said(tmp_path):
    """'NA' and 'None' are pandas' marks of a missing value, and read as such; in a text
    column they may be values (North America), so the read says which and how many."""
    from core.io import read_table_with_report
    path = tmp_path / "regions.csv"
    path.write_text("id,age,region,score\n1,20,NA,3\n2,30,EU,4\n3,40,None,\n4,50,,5\n"
                    "5,60,NA,1\n", encoding="utf-8")
    table, report = read_table_with_report(path)
    assert table["region"].isna().sum() == 4 and table["score"].isna().sum() == 1
    (note,) = [n for n in report.notes if "read as missing values" in n]
    assert note.startswith("Column 'region': 3 cell(s) were read as missing values because "
                           "they say 'NA' (2), 'None' (1)")
    path.write_text("id,region\n1,EU\n2,\n3,US\n", encoding="utf-8")
    assert not [n for n in read_table_with_report(path)[1].notes if "missing" in n]


def test_a_column_of_missing_marks_alone_and_workbook_text_cells_are_said(tmp_path):
    """A column saying 'NA' in every cell (Namibia) is read as numbers with no value, and
    a workbook's text cells 'NA', 'None' were read as missing values: both silently."""
    from core.io import read_table_with_report
    path = tmp_path / "namibia.csv"
    path.write_text("age,country\n20,NA\n30,NA\n40,\n", encoding="utf-8")
    table, report = read_table_with_report(path)
    assert table["country"].isna().all()
    assert [n for n in report.notes if "read as missing values" in n] == [
        "Column 'country': 2 cell(s) were read as missing values because they say "
        "'NA' (2), the usual marks of a missing value. If they are values (NA for North "
        "America, say), recode them in the file and open it again."]
    book = openpyxl.Workbook()
    sheet = book.active
    for row in (["age", "region"], [20, "NA"], [30, "EU"], [40, "None"], [50, None],
                [60, "NA"]):
        sheet.append(row)
    book.save(tmp_path / "regions.xlsx")
    table, report = read_table_with_report(tmp_path / "regions.xlsx")
    assert table["region"].isna().sum() == 4
    (note,) = [n for n in report.notes if "read as missing values" in n]
    assert note.startswith("Column 'region': 3 cell(s) were read as missing values because "
                           "they say 'NA' (2), 'None' (1)")


def test_a_late_minus_zero_leaves_no_empty_format_note(tmp_path):
    """A column the sample shows as whole numbers and whose '-0.0' comes later is read
    again as text; its numbers need no separator, so no "uses ." note is left."""
    from core.io import read_table_with_report
    rows = [f"{i},{20 + i % 30},{1000 + i}" for i in range(2400)]
    rows[2000] = "2000,40,-0.0"
    path = tmp_path / "late.csv"
    path.write_text("id,age,income\n" + "\n".join(rows) + "\n", encoding="utf-8")
    table, report = read_table_with_report(path)
    assert table["income"].iloc[2000] == 0.0 and table["income"].dtype.kind == "f"
    assert not [n for n in report.notes if n.endswith("uses .")]


# ----------------------------------------------------------------- codes kept as written
def test_codes_written_with_leading_zeros_are_read_as_text(tmp_path):
    """A postcode column keeps its zeros (with a note naming the column and a row),
    even when the first such code comes long after the rows the reader samples; a
    column of plain whole numbers stays numeric."""
    n = 6000
    zips = [f"{10000 + i}" for i in range(n)]
    zips[5003] = "00094"
    frame = pd.DataFrame({"age": np.arange(n) % 90, "zip": zips,
                          "count": np.arange(n) % 7})
    path = tmp_path / "codes.csv"
    frame.to_csv(path, index=False)
    table, report = read_table_with_report(path)
    assert table["zip"].tolist() == zips
    assert pd.api.types.is_integer_dtype(table["age"]) and \
        pd.api.types.is_integer_dtype(table["count"])
    assert any("Column 'zip' has values written with leading zeros, such as '00094' "
               "(data row 5004)" in note for note in report.notes)


def test_a_code_with_leading_zeros_survives_a_release(tmp_path):
    from core import RoleSpec, anonymize
    from core.io import write_table
    frame = pd.DataFrame({"age": [20, 21, 22, 40, 41, 42],
                          "zip": ["00094", "02074", "12345", "00094", "02074", "55555"]})
    frame.to_csv(tmp_path / "in.csv", index=False)
    table = read_table(tmp_path / "in.csv")
    result = anonymize(table, RoleSpec(quasi_identifiers=("age",)), k=3)
    out = write_table(tmp_path / "out.csv", result.masked)
    assert out.read_text().splitlines()[1].endswith(",00094")


def test_text_codes_in_a_workbook_keep_their_zeros_and_stay_apart(tmp_path, capsys):
    """Text cells "01" and "1" of a workbook are two codes: the column is read as text,
    as written, with a note (the parser would make both the number 1); a column of
    number cells stays numeric. A release of such a column, written as XLSX, is read
    back the same by `microagg verify`, which then confirms it."""
    from core import RoleSpec, anonymize
    from core.cli.main import main
    from core.io import write_table

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["age", "region", "count"])
    codes = ["01", "1", "02", "01", "1", "02", "10", "10", "10"]
    for i, code in enumerate(codes):
        sheet.append([20 + i, code, i % 4])
    book.save(tmp_path / "in.xlsx")
    table, report = read_table_with_report(tmp_path / "in.xlsx")
    assert table["region"].tolist() == codes
    assert pd.api.types.is_integer_dtype(table["count"])
    assert any("Column 'region' has text cells written with leading zeros, such as "
               "'01' (data row 1)" in note for note in report.notes)
    roles = RoleSpec(quasi_identifiers=("age", "region"), levels={"region": "nominal"})
    result = anonymize(table, roles, k=3)
    assert result.passed and set(result.masked["region"]) <= set(codes)
    write_table(tmp_path / "out.xlsx", result.masked)
    assert main(["verify", str(tmp_path / "in.xlsx"), str(tmp_path / "out.xlsx"),
                 "--qi", "age", "region", "--nominal", "region", "--k", "3"]) == 0
    assert "PASSED" in capsys.readouterr().out


@pytest.mark.parametrize("suffix", [".dta", ".sav"])
def test_empty_text_in_stata_and_spss_files_is_missing(tmp_path, suffix):
    """Stata and SPSS write a missing string as empty text: it is read as missing, with
    a note, so a run stops on it naming the column (before, "" was a category that
    the verifier passed and an export wrote as an empty cell)."""
    from core import RoleSpec, anonymize

    frame = pd.DataFrame({"age": [20, 21, 22, 23, 24, 25], "sex": ["F", "", "M", "F", "M", "F"]})
    path = tmp_path / f"survey{suffix}"
    if suffix == ".dta":
        frame.to_stata(path, write_index=False)
    else:
        pyreadstat.write_sav(frame, str(path))
    table, report = read_table_with_report(path)
    assert table["sex"].isna().tolist() == [False, True, False, False, False, False]
    assert any("Column 'sex' has 1 empty text value(s) (the first at data row 2)" in note
               for note in report.notes)
    roles = RoleSpec(quasi_identifiers=("age", "sex"), levels={"sex": "nominal"})
    with pytest.raises(MicroaggError, match="'sex'"):
        anonymize(table, roles, k=3)


def test_large_whole_numbers_beside_empty_cells_keep_every_digit(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("age,code\n1,9007199254740993\n2,\n3,9007199254740995\n4,12\n")
    table = read_table(path)
    assert table["code"].dtype == "Int64"
    assert table["code"].tolist()[0] == 9007199254740993 and table["code"].isna()[1]


def test_whole_numbers_from_two_to_the_53_beside_empty_cells_keep_every_digit(tmp_path):
    """2**53 + 1 is the first integer a float cannot hold: as the largest of its column
    beside an empty cell it was read as the float 2**53."""
    path = tmp_path / "edge.csv"
    path.write_text("age,code\n1,9007199254740993\n2,\n3,12\n")
    assert read_table(path)["code"].tolist()[0] == 9007199254740993
    from core.io.xlsx_stream import write_xlsx  # openpyxl's writer rounds them itself

    codes = pd.Series([9007199254740993, None, 70300852664449794, 12], dtype=object)
    write_xlsx(str(tmp_path / "ids.xlsx"),
               [("data", pd.DataFrame({"age": [1, 2, 3, 4], "code": codes}), [8, 8])])
    table = read_table(tmp_path / "ids.xlsx")
    assert table["code"].dtype == "Int64"
    assert table["code"].isna().tolist() == [False, True, False, False]
    assert table["code"].dropna().tolist() == [9007199254740993, 70300852664449794, 12]
    # Identifiers stored as text cells of digits, as Excel users keep long numbers.
    book = openpyxl.Workbook()
    sheet = book.active
    for row in (["age", "household"], [1, "70300852664449794"], [2, None],
                [3, "70300852664449795"], [4, " 70300852664449796 "]):
        sheet.append(row)
    book.save(tmp_path / "text_ids.xlsx")
    assert read_table(tmp_path / "text_ids.xlsx")["household"].dropna().tolist() == [
        70300852664449794, 70300852664449795, 70300852664449796]


# Each byte screen of core.io.zero_screen: the bytes drawn from, how many at most, and
# the rule it stands for. zero_led: a 0 and a digit at a field's start. long_integer:
# whole numbers of 16 digits or more (the Dask engine reads such a column as text: a
# float64 rounds it), on bytes mostly digits. dotted_zero: codes with a leading zero and
# a dot (01.10): a 0, digits, a dot and digits up to the field's end (digits up to the
# end of the bytes count: the field may go on in the next chunk); a date such as
# 01.02.2020 is none.
SCREENS = {
    "zero_led": (b'0123456789,;\n\r" +-.a', 60, rb'(?:^|[,\n\r])[ +\-"]*0[0-9]'),
    "long_integer": (b'0123456789' * 8 + b',;\n\r" +-.eEa', 90,
                     rb'(?:^|[,\n\r])[ +\-"]*[0-9]{16,}(?:\Z|[^0-9.eE])'),
    "dotted_zero": (b'0123456789' * 2 + b',;\n\r" +-..a', 60,
                    rb'(?:^|[,\n\r])[ +\-"]*0[0-9]+(?:\.[0-9]*(?:[,\n\r" ]|\Z)|\Z)'),
}


@pytest.mark.parametrize("name", sorted(SCREENS))
@pytest.mark.parametrize("seed", range(30))
def test_the_byte_screens_agree_with_their_rule_and_never_miss(name, seed):
    """The compiled screen and the rule it stands for give the same answer on random
    bytes of digits, delimiters, signs, quotes and newlines; the coarser numpy screen
    (without the kernels) never misses a field the rule finds."""
    import re

    import core.io.zero_screen as screen
    alphabet, longest, rule = SCREENS[name]
    rng = np.random.default_rng(seed)
    data = rng.choice(np.frombuffer(alphabet, np.uint8),
                      int(rng.integers(0, longest))).astype(np.uint8)
    expected = re.search(rule, data.tobytes()) is not None
    assert getattr(screen, name)(data, ord(",")) == expected
    if getattr(screen, f"{name}_compiled") is not None:
        assert getattr(screen, f"{name}_compiled")(data, ord(",")) == expected
    assert getattr(screen, f"{name}_numpy")(data, ord(",")) or not expected  # may say more


def test_codes_with_a_leading_zero_and_a_dot_stay_apart(tmp_path):
    """NACE 01.10 and 01.1 are two codes (a class and its group); as numbers both were
    1.1, silently. A column holding one such field is read as text in a CSV and, for a
    text cell, in a workbook; fractions beside a zero-led whole field stay numbers."""
    codes = ["01.10", "01.1", "10.20", "10.2", "45.00", "001.9"]
    path = tmp_path / "industry.csv"
    path.write_text("age,nace,score\n" + "".join(
        f"{20 + i},{c},{s}\n" for i, (c, s) in enumerate(zip(codes, ["0012", "1.5"] * 3))))
    table, report = read_table_with_report(path)
    assert table["nace"].tolist() == codes
    assert table["score"].tolist() == [12.0, 1.5] * 3
    assert any("'01.10' (data row 1)" in note for note in report.notes)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["age", "nace"])
    for i, code in enumerate(codes):
        sheet.append([20 + i, code])  # text cells
    sheet.append([30, 86.1])  # a number cell: its digits
    book.save(tmp_path / "industry.xlsx")
    assert read_table(tmp_path / "industry.xlsx")["nace"].tolist() == codes + ["86.1"]


def test_value_labels_that_join_codes_are_said_and_unlabelled_stata_codes_are_text(tmp_path):
    """Codes 2 and 3 both labelled 'no' read as one category: said, in SPSS and in
    Stata files (Stata's was refused as damaged); a Stata code without a label is its
    text, '3', not '3.0', with the note SPSS files get."""
    frame = pd.DataFrame({"age": [20.0, 30.0, 40.0, 50.0, 60.0, 70.0],
                          "answer": [1.0, 2.0, 3.0, 1.0, 2.0, 7.0]})
    labels = {"answer": {1.0: "yes", 2.0: "no", 3.0: "no"}}
    pyreadstat.write_sav(frame, str(tmp_path / "a.sav"), variable_value_labels=labels)
    pyreadstat.write_dta(frame, str(tmp_path / "a.dta"), variable_value_labels=labels)
    for name in ("a.sav", "a.dta"):
        table, report = read_table_with_report(tmp_path / name)
        assert table["answer"].astype(str).tolist() == ["yes", "no", "no", "yes", "no", "7"]
        assert any("the codes 2 and 3 read as one category, 'no'" in n for n in report.notes)
        assert any("values without a label (7)" in n for n in report.notes)


def test_values_an_spss_file_declares_missing_are_said(tmp_path):
    """SPSS user-missing codes (9 'refused', -99) are missing values, as the file says;
    they were emptied without a word, like a blank."""
    frame = pd.DataFrame({"age": [20.0, 30.0, 40.0, 50.0], "sex": [1.0, 9.0, 2.0, 9.0],
                          "score": [3.5, -99.0, 4.0, 1.0]})
    pyreadstat.write_sav(frame, str(tmp_path / "m.sav"),
                         variable_value_labels={"sex": {1.0: "male", 2.0: "female",
                                                        9.0: "refused"}},
                         missing_ranges={"sex": [9.0], "score": [-99.0]})
    table, report = read_table_with_report(tmp_path / "m.sav")
    assert table["sex"].isna().tolist() == [False, True, False, True]
    assert table["score"].isna().tolist() == [False, True, False, False]
    assert "Column 'sex': 2 value(s) the file declares missing (9) are read as missing " \
           "values." in report.notes
    assert any(n.startswith("Column 'score': 1 value(s) the file declares missing (-99)")
               for n in report.notes)


def test_workbook_booleans_beside_empty_cells_stay_booleans(tmp_path, monkeypatch):
    """TRUE/FALSE cells beside empty ones were read as 1.0 and 0.0 and released so."""
    book = openpyxl.Workbook()
    sheet = book.active
    for row in (["age", "smoker"], [20, True], [30, False], [40, None], [50, True]):
        sheet.append(row)
    book.save(tmp_path / "flags.xlsx")
    column = read_table(tmp_path / "flags.xlsx")["smoker"]
    assert str(column.dtype) == "boolean"
    assert [None if v is pd.NA else v for v in column.tolist()] == [True, False, None, True]
    from core.io import write_table

    def refused(*args, **kwargs):
        raise AssertionError("pandas wrote a table of booleans and numbers")

    monkeypatch.setattr(pd.DataFrame, "to_csv", refused)  # the fast path writes them
    out = write_table(tmp_path / "out.csv", pd.DataFrame({"smoker": column, "n": [1] * 4}))
    assert out.read_text().splitlines() == ["smoker,n", "True,1", "False,1", ",1", "True,1"]


def test_workbook_numbers_beyond_int64_beside_empty_cells_are_read_not_refused(tmp_path):
    """Nullable integers hold no value from 2**63 on: number cells that large stay the
    floats they are, and text identifiers of 20 digits or more are their text (the file
    was refused, 'Python int too large to convert to C long')."""
    book = openpyxl.Workbook()
    sheet = book.active
    for row in (["age", "mole", "account"], [1, 6.02e23, "12345678901234567890123"],
                [2, None, None], [3, 1.5e22, " 70300852664449794 "]):
        sheet.append(row)
    book.save(tmp_path / "large.xlsx")
    table = read_table(tmp_path / "large.xlsx")
    assert table["mole"].tolist()[::2] == [6.02e23, 1.5e22] and table["mole"].isna()[1]
    assert table["account"].tolist() == ["12345678901234567890123", None,
                                         "70300852664449794"]


def test_stata_labels_pyreadstat_cannot_read_are_applied_by_pandas(tmp_path, monkeypatch):
    """The labels come from pyreadstat's reading of the file's metadata; should that
    fail, pandas' own conversion applies them (the codes were left as numbers)."""
    frame = pd.DataFrame({"age": [20.0, 30.0, 40.0], "sex": [1.0, 2.0, 1.0]})
    pyreadstat.write_dta(frame, str(tmp_path / "s.dta"),
                         variable_value_labels={"sex": {1: "male", 2: "female"}})

    def broken(*args, **kwargs):
        raise RuntimeError("unreadable metadata")

    monkeypatch.setattr(pyreadstat, "read_dta", broken)
    column = read_table(tmp_path / "s.dta")["sex"]
    assert isinstance(column.dtype, pd.CategoricalDtype) and column.cat.ordered
    assert column.astype(str).tolist() == ["male", "female", "male"]


def test_the_dotted_screen_finds_a_code_across_the_edge_of_two_chunks(tmp_path, monkeypatch):
    """The file is screened a chunk at a time, each after the last bytes of the one
    before: a code cut by the edge is found; a date is not a code (only a chunk's last
    digits may be, since the field may go on)."""
    import core.io.zero_screen as screen
    path = tmp_path / "edge.csv"
    path.write_bytes(b"x,01.02.2020\n" + b"1,2\n" * 8)
    assert not screen.may_have_dotted_codes(path, ",")
    monkeypatch.setattr(screen, "_CHUNK", 16)
    for cut in range(12, 20):  # the code at every place across the first edge
        path.write_bytes(b"x" * cut + b",01.10\n" + b"1,2\n" * 8)
        assert screen.may_have_dotted_codes(path, ",")
        path.write_bytes(b"x" * cut + b",1.10\n" + b"1,2\n" * 8)
        assert not screen.may_have_dotted_codes(path, ",")


def test_numbers_read_as_infinity_are_said(tmp_path):
    """'1e400' is beyond the largest float and was read as infinity, then released as
    'inf', without a word; '-inf' itself alike. A finite column gets no note."""
    path = tmp_path / "spend.csv"
    path.write_text("age,spend,score\n20,3.5,1.5\n30,1e400,2\n40,-inf,3\n50,1,4\n",
                    encoding="utf-8")
    table, report = read_table_with_report(path)
    assert np.isinf(table["spend"]).sum() == 2 and np.isfinite(table["score"]).all()
    assert [n for n in report.notes if "infinite" in n] == [
        "Column 'spend' has 2 infinite value(s) (the first at data row 2): a number "
        "beyond the largest a computer holds (about 1.8e308, such as 1e400), or 'inf'. "
        "Such values are kept as infinity; replace them if they are errors."]
