"""The microagg command line: outputs, summary JSON, exit codes and atomic writes."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.cli.main import main
from tests.conftest import CENSUS_COLUMNS, shared_data

QI = ["age", "income", "hours_worked"]


def run(*argv):
    return main([str(a) for a in argv])


def test_anonymize_to_xlsx_with_summary(tmp_path, sample_path, capsys):
    out, summary = tmp_path / "masked.xlsx", tmp_path / "summary.json"
    code = run("anonymize", sample_path, "-o", out, "--method", "mdav", "--k", 5,
               "--qi", *QI, "--identifier", "person_id",
               "--confidential", "health_spending", "--summary-json", summary,
               "--report", tmp_path / "report.html")
    assert code == 0
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Verification passed" in page and "IL = 100·SSE/SST" in page
    assert hashlib.sha256(Path(sample_path).read_bytes()).hexdigest() in page  # the input
    assert "not recorded" not in page and "original table was not given" not in page
    assert "k-anonymity PASSED" in capsys.readouterr().out
    sheets = pd.read_excel(out, sheet_name=None, engine="openpyxl")
    assert list(sheets) == ["masked", "summary"]
    masked = sheets["masked"]
    assert len(masked) == 600 and "person_id" not in masked.columns
    assert masked.groupby(QI).size().min() >= 5
    items = dict(zip(sheets["summary"]["item"], sheets["summary"]["value"]))
    assert items["Verified"] == "yes" and items["Parameter k"] == 5  # numbers are numeric cells
    data = json.loads(summary.read_text())
    for key in ("method", "k", "n_records", "il", "sse", "sst", "min_group_size",
                "mean_group_size", "max_group_size", "k_prime", "verified"):
        assert key in data
    assert data["method"] == "mdav" and data["k"] == 5 and data["n_records"] == 600
    assert data["verified"] is True and data["min_group_size"] >= 5
    assert data["il"] == pytest.approx(100 * data["sse"] / data["sst"])


def test_a_release_too_long_for_excel_is_refused_before_the_method_runs(
        tmp_path, sample_path, capsys, monkeypatch):
    import core.io.write as write_module

    cli_main = sys.modules["core.cli.main"]
    monkeypatch.setattr(write_module, "EXCEL_MAX_ROWS", 100)
    monkeypatch.setattr(cli_main, "anonymize", lambda *a, **k: pytest.fail("it ran"))
    code = run("anonymize", sample_path, "-o", tmp_path / "m.xlsx", "--k", 5, "--qi", *QI)
    assert code == 2 and list(tmp_path.iterdir()) == []
    assert "Cannot export 600 records to 'm.xlsx'" in capsys.readouterr().err


def test_verify_and_measure_check_a_release_with_records_left_unmasked(tmp_path,
                                                                       sample_path, capsys):
    """With --missing exclude, verify and measure leave out the records the release
    flags as unmasked, as the run did, and give the run's figures; a flagged record
    without a missing value is refused (the run leaves out no other)."""
    table = pd.read_csv(sample_path)
    table.loc[[3, 17, 25], "income"] = np.nan
    source, out = tmp_path / "gaps.csv", tmp_path / "out.csv"
    table.to_csv(source, index=False)
    assert run("anonymize", source, "-o", out, "--k", 5, "--qi", *QI, "--identifier",
               "person_id", "--missing", "exclude", "--quiet") == 0
    capsys.readouterr()
    assert run("verify", source, out, "--qi", *QI, "--k", 5, "--missing", "exclude") == 0
    said = capsys.readouterr().out
    assert "3 record(s) flagged 1 in 'unmasked_missing' were released unmasked" in said
    assert "the check covers the other 597" in said and "k-anonymity PASSED" in said
    assert run("measure", source, out, "--qi", *QI, "--missing", "exclude") == 0
    assert "597 records" in capsys.readouterr().out
    assert run("verify", source, out, "--qi", *QI, "--k", 5) == 2  # NaN cannot be checked
    assert "add --missing exclude to check the others" in capsys.readouterr().err
    released = pd.read_csv(out)
    released.loc[0, "unmasked_missing"] = 1  # a complete record flagged
    released.to_csv(tmp_path / "changed.csv", index=False)
    assert run("verify", source, tmp_path / "changed.csv", "--qi", *QI, "--k", 5,
               "--missing", "exclude") == 2
    assert "Row 1 of 'changed.csv' is flagged as released unmasked" in \
        capsys.readouterr().err
    assert run("verify", sample_path, out, "--qi", *QI, "--k", 5, "--missing",
               "exclude") == 2  # against an original without the gaps: refused
    assert "Row 4 of 'out.csv' is flagged" in capsys.readouterr().err
    plain = tmp_path / "plain.csv"
    assert run("anonymize", sample_path, "-o", plain, "--k", 5, "--qi", *QI,
               "--quiet") == 0
    assert run("verify", sample_path, plain, "--qi", *QI, "--k", 5,
               "--missing", "exclude") == 2
    assert "has no column 'unmasked_missing'" in capsys.readouterr().err


def test_verify_reads_a_release_written_as_parquet(tmp_path, sample_path, capsys):
    pytest.importorskip("pyarrow")
    out = tmp_path / "out.parquet"
    assert run("anonymize", sample_path, "-o", out, "--k", 4, "--qi", *QI, "--quiet") == 0
    assert run("verify", sample_path, out, "--qi", *QI, "--k", 4) == 0
    assert run("measure", sample_path, out, "--qi", *QI) == 0
    (tmp_path / "bad.parquet").write_text("not parquet")
    assert run("verify", sample_path, tmp_path / "bad.parquet", "--qi", *QI, "--k", 4) == 2
    assert "Cannot read 'bad.parquet' as Parquet" in capsys.readouterr().err


def test_census_summary_reproduces_published_il(tmp_path):
    summary = tmp_path / "s.json"
    assert run("anonymize", shared_data("census.csv"), "-o", tmp_path / "m.csv", "--k", 10,
               "--qi", *CENSUS_COLUMNS, "--summary-json", summary) == 0
    assert round(json.loads(summary.read_text())["il"], 3) == 14.156


def test_verify_accepts_our_output_and_rejects_the_original(tmp_path, sample_path, capsys):
    out = tmp_path / "masked.csv"
    assert run("anonymize", sample_path, "-o", out, "--k", 4, "--qi", *QI,
               "--identifier", "person_id") == 0
    assert run("verify", sample_path, out, "--qi", *QI, "--k", 4) == 0
    assert "PASSED" in capsys.readouterr().out
    assert run("verify", sample_path, out, "--qi", *QI, "--k", 50) == 1
    assert run("verify", sample_path, sample_path, "--qi", *QI, "--k", 2) == 1
    assert "FAILED" in capsys.readouterr().out


def test_methods_lists_the_registry(capsys):
    assert run("methods") == 0
    out = capsys.readouterr().out
    assert "mdav" in out and "--k: an integer in the range [2, inf)" in out


@pytest.mark.parametrize("args, message", [
    (["--k", 5, "--qi", "age", "salary"], "'salary'"),
    (["--k", 1, "--qi", *QI], "'k' parameter of mdav"),
    (["--k", "five", "--qi", *QI], "--k needs an integer"),
    (["--k", 5, "--qi", "region", "--method", "optimal-univariate"], "'region' is nominal"),
    (["--k", 601, "--qi", *QI], "fewer than k = 601"),
    (["--k", 5, "--qi", *QI, "--method", "magic"], "invalid choice"),
])
def test_bad_input_exits_2_with_one_line_and_no_output(tmp_path, sample_path, capsys, args,
                                                       message):
    out = tmp_path / "out.xlsx"
    assert run("anonymize", sample_path, "-o", out, *args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert os.listdir(tmp_path) == []


def test_missing_input_and_bad_output_name(tmp_path, sample_path, capsys):
    assert run("anonymize", tmp_path / "nope.csv", "-o", tmp_path / "o.csv",
               "--qi", "a") == 2
    assert "does not exist" in capsys.readouterr().err
    assert run("anonymize", sample_path, "-o", tmp_path / "o.json", "--qi", *QI) == 2
    assert "use a .csv, .xlsx or .parquet" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


def test_refuses_to_overwrite_the_input(tmp_path, sample_path, capsys):
    copy = tmp_path / "data.csv"
    copy.write_bytes(sample_path.read_bytes())
    assert run("anonymize", copy, "-o", copy, "--qi", *QI) == 2
    assert "is the input file" in capsys.readouterr().err
    assert copy.read_bytes() == sample_path.read_bytes()


def test_console_script_runs_without_traceback(tmp_path, sample_path):
    """The real process: exit code 2 and a single stderr line on bad input."""
    proc = subprocess.run([sys.executable, "-m", "core.cli", "anonymize", str(sample_path),
                           "-o", str(tmp_path / "o.csv"), "--qi", "nope"],
                          capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    assert proc.returncode == 2
    assert proc.stderr.startswith("microagg: error: Column 'nope'")
    assert "Traceback" not in proc.stderr


def test_verify_checks_t_closeness_within_the_strata(tmp_path, capsys):
    """Classes are the released quasi-identifiers with the strata, for t-closeness as for
    k-anonymity: each region's classes hold one diagnosis (EMD 0.5), but the check
    grouped across regions and passed at t = 0.1 (largest EMD 0)."""
    source, out = tmp_path / "original.csv", tmp_path / "released.csv"
    pd.DataFrame({"age": np.tile(np.arange(20), 2) + 0.0, "region": ["A"] * 20 + ["B"] * 20,
                  "diag": [1] * 20 + [2] * 20}).to_csv(source, index=False)
    roles = ("--qi", "age", "--strata", "region", "--confidential", "diag", "--k", 5)
    assert run("anonymize", source, "-o", out, *roles) == 0
    capsys.readouterr()
    assert run("verify", source, out, *roles, "--t", 0.1) == 1
    printed = capsys.readouterr().out
    assert "k-anonymity PASSED" in printed and "8 classes" in printed
    assert "t-closeness FAILED at t = 0.1: 'diag' largest EMD 0.5000" in printed
    assert "8 equivalence classes" in printed


def test_verify_accepts_our_t_close_export_of_whole_number_floats(tmp_path, capsys):
    """The writer puts a float column of whole numbers as integers (59000.0 → 59000),
    read back as int64: the verifier compares the confidential column's values, not its
    dtype, so our own t-close export is not refused as 'changed'."""
    rng = np.random.default_rng(0)
    source = tmp_path / "original.csv"
    pd.DataFrame({"age": rng.integers(20, 60, 40), "height": rng.normal(170, 8, 40).round(1),
                  "salary": (rng.integers(20, 90, 40) * 1000).astype(float),
                  "kept": np.arange(40) * 2.0}).to_csv(source, index=False)
    out = tmp_path / "released.csv"
    arguments = ("--qi", "age", "height", "--confidential", "salary", "--k", 4, "--t", 0.3)
    assert run("anonymize", source, "-o", out, "--method", "tc-tfirst", *arguments) == 0
    assert "59000.0" not in out.read_text() and pd.read_csv(out)["salary"].dtype.kind == "i"
    capsys.readouterr()
    assert run("verify", source, out, *arguments) == 0
    printed = capsys.readouterr().out
    assert "t-closeness PASSED" in printed and "differs" not in printed
    changed = pd.read_csv(out)
    changed.loc[3, "salary"] += 1000.0  # a real change is still caught
    changed.to_csv(out, index=False)
    assert run("verify", source, out, *arguments) == 1
    assert "'salary' differs" in capsys.readouterr().out


def test_verify_accepts_our_csv_export_of_a_stata_float32_column(tmp_path, capsys):
    """A Stata ``float`` (float32) column is written as its shortest float32 text, which
    reads back as a float64 that is not the float32's value: compared at float32's
    precision, the product's own release verifies."""
    rng = np.random.default_rng(5)
    source = tmp_path / "original.dta"
    pd.DataFrame({"a": rng.normal(50, 10, 200).round(1), "b": rng.normal(0, 1, 200).round(2),
                  "w": rng.gamma(2, 1.3, 200).astype(np.float32)}).to_stata(
        source, write_index=False)
    out = tmp_path / "released.csv"
    arguments = ("--qi", "a", "b", "--confidential", "w", "--k", 5, "--t", 0.25)
    assert run("anonymize", source, "-o", out, "--method", "tc-merge", *arguments) == 0
    capsys.readouterr()
    assert run("verify", source, out, *arguments) == 0
    assert "differs" not in capsys.readouterr().out


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_verify_accepts_our_release_of_a_category_named_like_a_missing_mark(tmp_path,
                                                                            capsys, suffix):
    """A category 'NA' (from an SPSS file's labels) is released as the text NA, which
    the reader takes for a missing value: verify said the release held values that
    are not categories, and failed. A release that says NA where the original's column
    has no such category still fails."""
    import pyreadstat
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"age": rng.integers(18, 80, 200).astype(float),
                          "income": rng.normal(50, 10, 200).round(1),
                          "region": rng.integers(1, 4, 200).astype(float)})
    source = tmp_path / "original.sav"
    pyreadstat.write_sav(table, source, variable_value_labels={
        "region": {1.0: "NA", 2.0: "EU", 3.0: "AS"}})
    out = tmp_path / f"released{suffix}"
    arguments = ("--qi", "age", "income", "region", "--k", 5)
    assert run("anonymize", source, "-o", out, *arguments) == 0
    capsys.readouterr()
    assert run("verify", source, out, *arguments) == 0
    assert "PASSED" in capsys.readouterr().out
    pyreadstat.write_sav(table, source, variable_value_labels={
        "region": {1.0: "North", 2.0: "EU", 3.0: "AS"}})
    assert run("verify", source, out, *arguments) == 1
    assert "not categories of the original" in capsys.readouterr().out


@pytest.mark.parametrize("a, b, same", [
    (pd.Series([1.0, np.nan]), pd.Series([1, np.nan]), True),
    (pd.Series([59000.0, 3.0]), pd.Series([59000, 3]), True),
    (pd.Series([1.5]), pd.Series([1]), False),
    (pd.Series([2.0 ** 60]), pd.Series([2 ** 60 + 1]), False),
    (pd.Series([np.float32(2.7837927)]), pd.Series([2.7837927]), True),
    (pd.Series([np.float32(2.7837927)]), pd.Series([2.78379]), False),
    (pd.Series(["a", "b"], dtype="category"), pd.Series(["a", "b"]), True),
    (pd.Series(["a", "b"], dtype="category"), pd.Series(["a", "c"]), False),
    (pd.Series([1, 2], dtype="int16"), pd.Series([1, 2]), True),
    (pd.Series([True, False]), pd.Series([True, True]), False),
    (pd.Series([1.0, 2.0], index=[5, 6]), pd.Series([1.0, 2.0]), True),
])
def test_same_values_compares_values_not_dtypes(a, b, same):
    from core.verify.tcloseness import same_values
    assert same_values(a, b) is same and same_values(b, a) is same
