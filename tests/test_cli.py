"""The microagg command line: outputs, summary JSON, exit codes and atomic writes."""

import json
import os
import subprocess
import sys
from pathlib import Path

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
