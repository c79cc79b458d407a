"""A verified release that should not be published as it is says so, everywhere."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from core import RoleSpec, anonymize, read_table
from core.cli.console import Progress, log_path
from core.cli.main import main
from core.report import summary_frame, write_report
from tests.conftest import CENSUS_COLUMNS, shared_data


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(shared_data("adult.csv"))


def kinds(result) -> list[str]:
    return [w.kind for w in result.warnings]


def test_a_kept_column_that_maps_one_to_one_to_a_masked_one_is_flagged(adult):
    roles = RoleSpec(quasi_identifiers=("age", "education-num", "hours-per-week"),
                     confidential=("prediction",))
    result = anonymize(adult, roles, k=5)
    assert result.passed and kinds(result) == ["kept-column-reveals"]
    assert "'education'" in result.warnings[0].message
    assert "one-to-one" in result.warnings[0].message
    # Masking education too removes the warning.
    both = RoleSpec(quasi_identifiers=("age", "education-num", "education",
                                       "hours-per-week"), confidential=("prediction",))
    assert "kept-column-reveals" not in kinds(anonymize(adult.head(3000), both, k=5))


def test_a_coarsening_of_a_masked_attribute_is_flagged_but_unique_values_are_not():
    n = 600
    table = pd.DataFrame({"age": [20 + i % 50 for i in range(n)],
                          "income": [1000.0 + 7 * i for i in range(n)]})
    table["age_band"] = (table["age"] // 10).astype(str)  # determined by age
    table["spend"] = table["income"] * 0.3               # unique per record: not a coding
    roles = RoleSpec(quasi_identifiers=("age", "income"), confidential=("spend",))
    found = anonymize(table, roles, k=5).warnings
    assert [w.kind for w in found] == ["kept-column-reveals"]
    assert "'age_band'" in found[0].message and "is determined by" in found[0].message


def test_tc_merge_into_one_group_is_verified_and_flagged():
    census = pd.read_csv(shared_data("census.csv"))
    qi = tuple(c for c in CENSUS_COLUMNS if c not in ("FICA", "FEDTAX"))
    result = anonymize(census, RoleSpec(quasi_identifiers=qi,
                                        confidential=("FICA", "FEDTAX")),
                       "tc-merge", k=5, t=0.15)
    assert result.passed and result.metrics.max_group_size == 1080
    assert kinds(result) == ["dominant-group", "high-information-loss"]


def test_a_method_without_a_guarantee_that_leaves_unique_records_is_flagged(sample_path):
    table = read_table(sample_path)
    roles = RoleSpec(quasi_identifiers=("age", "income", "hours_worked"),
                     identifiers=("person_id",), non_confidential=("region",))
    result = anonymize(table, roles, "individual-ranking", k=3)
    assert "unique-records" in kinds(result)
    assert "unique-records" not in kinds(anonymize(table, roles, "mdav", k=3))


def test_constant_quasi_identifiers_are_released_with_a_warning():
    table = pd.DataFrame({"a": [1.0] * 1000, "b": ["x"] * 1000, "c": range(1000)})
    result = anonymize(table, RoleSpec(quasi_identifiers=("a", "b", "c")), k=5)
    assert result.passed
    assert kinds(result).count("constant-quasi-identifier") == 2
    assert result.metrics.sst == pytest.approx(1000)  # only 'c' counts
    identical = anonymize(table[["a", "b"]], RoleSpec(quasi_identifiers=("a", "b")), k=5)
    assert identical.passed and identical.metrics.il == 0.0


def test_warnings_reach_the_summary_report_and_stderr(tmp_path, adult, capsys):
    source = tmp_path / "adult.csv"
    adult.head(2000).to_csv(source, index=False)
    out, summary, report = tmp_path / "o.csv", tmp_path / "s.json", tmp_path / "r.html"
    assert main(["anonymize", str(source), "-o", str(out), "--k", "5", "--qi", "age",
                 "education-num", "--confidential", "prediction", "--summary-json",
                 str(summary), "--report", str(report)]) == 0
    err = capsys.readouterr().err
    assert "microagg: warning: Column 'education'" in err
    data = json.loads(summary.read_text())
    assert "kept-column-reveals" in data["warning_kinds"]
    assert "Read before publishing" in report.read_text()
    result = anonymize(adult.head(2000), RoleSpec(quasi_identifiers=("age", "education-num"),
                                                  confidential=("prediction",)), k=5)
    rows = summary_frame(result)
    assert (rows["item"] == "Warning").sum() == len(result.warnings) >= 1
    assert "Read before publishing" in write_report(result, tmp_path / "x.html").read_text()


def test_an_existing_output_is_refused_without_overwrite(tmp_path, sample_path, capsys):
    out = tmp_path / "o.csv"
    out.write_text("keep me")
    args = ["anonymize", str(sample_path), "-o", str(out), "--k", "5", "--qi", "age",
            "income", "--identifier", "person_id"]
    assert main(args) == 2
    assert "already exists" in capsys.readouterr().err and out.read_text() == "keep me"
    assert main(args + ["--overwrite"]) == 0 and out.read_text() != "keep me"


def test_the_progress_line_says_what_is_done_and_what_is_left():
    progress = Progress(io.StringIO(), n_records=100_000)
    line = progress.line(0.25, "MDAV: grouping", 30.0)
    assert "25.0 %" in line and "25,000 of 100,000 records" in line
    assert "30 s elapsed" in line and "about 1 min 30 s left" in line
    quiet = io.StringIO()
    Progress(quiet, n_records=10)(0.5, "x")  # not a terminal: draws nothing
    assert quiet.getvalue() == ""


def test_an_internal_error_is_logged_with_its_traceback(tmp_path, monkeypatch, capsys,
                                                        sample_path):
    import importlib

    cli = importlib.import_module("core.cli.main")

    monkeypatch.setenv("MICROAGG_LOG_DIR", str(tmp_path / "logs"))

    def broken(*args, **kwargs):
        raise ZeroDivisionError("engine bug")

    monkeypatch.setattr(cli, "anonymize", broken)
    assert main(["anonymize", str(sample_path), "-o", str(tmp_path / "o.csv"), "--k", "5",
                 "--qi", "age"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(log_path()) in err
    logged = log_path().read_text()
    assert "Traceback" in logged and "ZeroDivisionError: engine bug" in logged
