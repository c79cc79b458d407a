"""SPSS and SAS files, the import preview, and progress and cancelling while reading.

The files are in ``tests/corpus/formats`` (made by ``tests/corpus/make_formats.py``).
pyreadstat cannot write ``.sas7bdat``: the SAS reader is exercised through ``.xpt``, which
takes the same path, and a damaged ``.sas7bdat`` checks the refusal.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.errors import Cancelled, MicroaggError
from core.io import READABLE_SUFFIXES, read_table, read_table_with_report
from core.io.preview import preview_table
from core.progress import TaskState

CORPUS = Path(__file__).resolve().parent / "corpus"
FORMATS = CORPUS / "formats"
EXPECTED = tomllib.loads((CORPUS / "expected.toml").read_text(encoding="utf-8"))
READABLE_CORPUS = sorted(
    [(CORPUS / spec.get("file", name), spec.get("options", {}))
     for name, spec in EXPECTED.items() if "error" not in spec]
    + [(path, {}) for path in FORMATS.iterdir()
       if path.suffix != ".sav" or path.name == "survey.sav"
       if path.name not in ("damaged.sav", "not_spss.sav")], key=lambda item: item[0].name)


# -- SPSS and SAS ------------------------------------------------------------------------

def test_new_suffixes_are_readable():
    assert {".sav", ".zsav", ".sas7bdat", ".xpt"} <= set(READABLE_SUFFIXES)


@pytest.mark.parametrize("name", ["survey.sav", "survey.zsav"])
def test_spss_value_labels_become_categories_in_code_order(name):
    table, report = read_table_with_report(FORMATS / name)
    assert list(table.columns) == ["id", "sex", "region", "income", "city"]
    assert isinstance(table["sex"].dtype, pd.CategoricalDtype)
    # Codes 1 = male, 2 = female (written in the other order); 9 = refused is declared
    # missing, so it is neither a value nor a category.
    assert list(table["sex"].cat.categories) == ["male", "female"]
    assert table["sex"].tolist()[:3] == ["male", "female", "female"]
    assert table["sex"].isna().tolist() == [False, False, False, True, False, True]
    # Code 7 has no label: kept as the text '7', after the labelled categories.
    assert list(table["region"].cat.categories) == ["north", "south", "east", "7"]
    assert table["region"].tolist() == ["east", "north", "south", "south", "7", "north"]
    assert any("'region'" in note and "(7)" in note for note in report.notes)


def test_spss_numbers_and_text_keep_their_values():
    table = read_table(FORMATS / "survey.sav")
    assert table["id"].dtype == np.int64 and table["id"].tolist() == list(range(101, 107))
    assert table["income"].dtype == np.float64
    np.testing.assert_array_equal(table["income"].to_numpy(),
                                  [1200.5, 980.25, 1500.0, np.nan, 2100.75, 0.1])
    assert table["city"].tolist()[:2] == ["Lyon", "Porto"]


def test_sas_transport_file_reads_numbers_and_text():
    table = read_table(FORMATS / "survey.xpt")
    assert table["id"].tolist() == list(range(101, 107))
    assert table["income"].iloc[0] == 1200.5 and math.isnan(table["income"].iloc[3])
    assert table["city"].iloc[0] == "Lyon"


@pytest.mark.parametrize("name, kind", [("damaged.sav", "an SPSS file"),
                                        ("not_spss.sav", "an SPSS file")])
def test_damaged_spss_file_is_refused_naming_it(name, kind):
    with pytest.raises(MicroaggError, match=f"'{name}' could not be read as {kind}") as info:
        read_table(FORMATS / name)
    assert "Save it again from SPSS" in str(info.value)


@pytest.mark.parametrize("suffix, kind", [(".sas7bdat", "a SAS file"),
                                          (".xpt", "a SAS transport file"),
                                          (".zsav", "an SPSS file")])
def test_damaged_sas_and_zsav_files_are_refused(tmp_path, suffix, kind):
    path = tmp_path / f"broken{suffix}"
    path.write_bytes(b"\x00\x01" * 300)
    with pytest.raises(MicroaggError, match=f"'broken{suffix}' could not be read as {kind}"):
        read_table(path)


def test_text_options_on_an_spss_file_are_noted_not_applied():
    table, report = read_table_with_report(FORMATS / "survey.sav", delimiter=";",
                                           skip_rows=2)
    assert len(table) == 6
    assert "The delimiter option does not apply to an SPSS file; ignored." in report.notes
    assert any("header row options do not apply to an SPSS file" in n for n in report.notes)


# -- progress and cancelling -------------------------------------------------------------

@pytest.mark.parametrize("path, options", READABLE_CORPUS, ids=lambda v: getattr(v, "name", ""))
def test_reading_with_a_state_gives_the_same_table(path, options):
    fractions = []
    plain, plain_report = read_table_with_report(path, **options)
    tracked, tracked_report = read_table_with_report(
        path, state=TaskState(lambda fraction, message: fractions.append(fraction)),
        **options)
    pd.testing.assert_frame_equal(tracked, plain, check_exact=True)
    assert tracked_report == plain_report
    assert fractions and fractions[-1] == 1.0
    assert fractions == sorted(fractions)


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    n = 200_000
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"id": np.arange(n), "x": rng.normal(size=n),
                          "town": [f"t{i % 97}" for i in range(n)]})
    path = tmp_path_factory.mktemp("big") / "big.csv"
    frame.to_csv(path, index=False, sep=";", decimal=",")
    return path


def test_large_csv_reports_bytes_read_and_is_identical(big_csv):
    fractions = []
    tracked = read_table(big_csv, state=TaskState(lambda f, m: fractions.append(f)))
    pd.testing.assert_frame_equal(tracked, read_table(big_csv), check_exact=True)
    assert len(fractions) >= 5  # several MiB: one step per MiB parsed
    assert 0 < fractions[2] < 1 and fractions[-1] == 1.0


def test_cancelling_a_csv_read_stops_it(big_csv):
    def cancel_past_a_third(fraction, message):
        if fraction > 0.3:
            state.cancel()

    state = TaskState(cancel_past_a_third)
    with pytest.raises(Cancelled):
        read_table(big_csv, state=state)
    assert state.fraction < 1.0


@pytest.mark.parametrize("name", ["survey.sav", "two_sheets.xlsx"])
def test_a_state_cancelled_before_the_read_stops_it(name):
    state = TaskState()
    state.cancel()
    with pytest.raises(Cancelled):
        read_table(FORMATS / name, state=state)


def test_cancelling_a_workbook_read_between_rows(tmp_path):
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["a", "b"])
    for i in range(3000):
        sheet.append([i, i / 2])
    workbook.save(tmp_path / "long.xlsx")
    seen = []
    state = TaskState(lambda f, m: (seen.append(f), state.cancel() if f > 0 else None))
    with pytest.raises(Cancelled):
        read_table(tmp_path / "long.xlsx", state=state)
    assert 0 < max(seen) < 1


# -- the preview -------------------------------------------------------------------------

def test_preview_shows_detected_settings_and_first_rows():
    preview = preview_table(FORMATS / "semicolon_decimal_comma.csv", rows=5)
    assert preview.ok and preview.kind == "text"
    assert preview.settings["delimiter"] == {"value": ";", "source": "detected"}
    assert preview.settings["decimal"] == {"value": ",", "source": "detected"}
    assert preview.table.shape == (5, 4)
    assert preview.table["income"].tolist() == [1000.0, 1037.5, 1075.0, 1112.5, 1150.0]


def test_preview_returns_a_wrong_delimiter_as_a_message():
    preview = preview_table(FORMATS / "semicolon_decimal_comma.csv", delimiter="|")
    assert not preview.ok and preview.table is None
    assert "'|'" in preview.error and "';'" in preview.error
    bad = preview_table(FORMATS / "semicolon_decimal_comma.csv", delimiter=",")
    assert bad.error and "semicolon_decimal_comma.csv" in bad.error


def test_preview_of_a_missing_file_or_bad_option_does_not_raise(tmp_path):
    assert "does not exist" in preview_table(tmp_path / "nothing.csv").error
    assert "decimal must be" in preview_table(FORMATS / "semicolon_decimal_comma.csv",
                                              decimal="x").error


def test_preview_of_a_workbook_lists_sheets_and_reads_the_chosen_one():
    first = preview_table(FORMATS / "two_sheets.xlsx", rows=3)
    assert first.sheets == ("persons", "households") and first.kind == "workbook"
    assert list(first.table.columns) == ["id", "age", "income"] and len(first.table) == 3
    second = preview_table(FORMATS / "two_sheets.xlsx", sheet="households")
    assert list(second.table.columns) == ["household", "size", "rent"]
    assert second.settings["sheet"] == {"value": "households", "source": "given"}


def test_preview_of_an_spss_file_reads_only_the_first_records():
    preview = preview_table(FORMATS / "survey.sav", rows=2)
    assert preview.ok and preview.kind == "spss" and len(preview.table) == 2
    assert list(preview.table["sex"].cat.categories) == ["male", "female"]
    assert "damaged" in preview_table(FORMATS / "damaged.sav").error


def test_preview_of_a_large_csv_reads_the_head_with_the_same_values(big_csv):
    preview = preview_table(big_csv, rows=40)
    assert preview.ok and big_csv.stat().st_size > 4 * 1024 * 1024
    whole = read_table(big_csv)
    pd.testing.assert_frame_equal(preview.table, whole.iloc[:40], check_exact=True)
    assert preview.settings["decimal"]["value"] == ","
