"""The HTML report holds what a release board asks for, escaped and self-contained."""

import base64
import hashlib
import re
from html import escape
from dataclasses import replace

import pandas as pd
import pytest

from core import Cancelled, RoleSpec, anonymize, read_table
from core.methods.registry import get_method
from core.pipeline.warnings import ReleaseWarning
from core.report import report_html, write_report
from core.report.provenance import software_version
from core.report.summary import summary_frame
from tests.conftest import cancelled_at_step

QI = ("age", "years_education", "income", "hours_worked", "household_size")


@pytest.fixture(scope="module")
def survey(sample_path):
    return read_table(sample_path)


@pytest.fixture(scope="module")
def tfirst(survey):
    roles = RoleSpec(quasi_identifiers=QI, confidential=("health_spending",),
                     identifiers=("person_id",), non_confidential=("region",))
    return anonymize(survey, roles, "tc-tfirst", k=5, t=0.3, seed=7)


def test_the_report_holds_what_a_release_board_asks_for(tmp_path, sample_path, survey,
                                                        tfirst):
    path = write_report(tfirst, tmp_path / "report.html", input_path=sample_path,
                        original=survey)
    page = path.read_text(encoding="utf-8")
    assert hashlib.sha256(sample_path.read_bytes()).hexdigest() in page
    assert sample_path.name in page
    assert f"MicroAgg Desktop {software_version()}" in page
    for column in survey.columns:  # every column with its role
        role = tfirst.roles.role_of(column).value
        assert re.search(rf"<th>{column}</th><td>{role}", page), column
    assert "<td>quasi-identifier</td><td>numeric</td>" in page
    method = get_method("tc-tfirst")
    assert method.reference.replace("&", "&amp;") in page
    for name, value in tfirst.parameters.items():
        assert f"<th>{name}</th><td>{value}</td>" in page
    assert "<th>Random seed</th><td>7</td>" in page
    assert "Verification passed" in page
    assert escape(tfirst.guarantee_text) in page
    for key in ("IL1", "DLD", "DR", "k′", "EMD of &#x27;health_spending&#x27;",
                "Record risk"):
        assert f"<th>{key}" in page, key
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 4  # group sizes, closeness, changes, scatter
    assert all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)
    assert 'src="http' not in page and "<script" not in page


def test_the_roles_say_how_each_confidential_columns_emd_is_measured(survey):
    """A confidential column's level is the distance its EMD is measured by: ordered
    for numbers, equal for text, and the declared one (codes declared nominal)."""
    table = survey.assign(dx_code=survey["diagnosis"].astype("category").cat.codes)
    roles = RoleSpec(quasi_identifiers=QI, identifiers=("person_id",),
                     confidential=("health_spending", "diagnosis", "dx_code"),
                     non_confidential=("region",), levels={"dx_code": "nominal"})
    result = anonymize(table.drop(columns=[]), roles, "tc-merge", k=5, t=0.4)
    page = report_html(result, original=table)
    for column, level in (("health_spending", "numeric, ordered distance"),
                          ("diagnosis", "nominal, equal distance"),
                          ("dx_code", "nominal, equal distance, declared")):
        assert re.search(rf"<th>{column}</th><td>confidential</td><td>{level}</td>",
                         page), column
    summary = dict(summary_frame(result).itertuples(index=False, name=None))
    assert summary["Confidential"] == (
        "health_spending (numeric, ordered distance), diagnosis (nominal, equal "
        "distance), dx_code (nominal, equal distance, declared)")


def test_resources_mode_names_the_images(tfirst, survey):
    page, images = report_html(tfirst, original=survey, images="resources")
    assert set(images) == {"group-sizes.png", "closeness.png", "changes.png", "scatter.png"}
    for name, png in images.items():
        assert png.startswith(b"\x89PNG") and f'src="{name}"' in page
    assert "data:image" not in page


def test_without_the_original_the_comparing_plots_are_left_out_with_a_note(tfirst):
    page, images = report_html(tfirst, images="resources", input_sha256="ab" * 32)
    assert set(images) == {"group-sizes.png", "closeness.png"}
    assert "original table was not given" in page and "ab" * 32 in page


def test_a_failed_verification_is_said_in_words(tfirst):
    failed = replace(tfirst, verification=replace(
        tfirst.verification, passed=False, notes=("a class of 3 records",)))
    page = report_html(failed, plots=False)
    assert "Verification FAILED" in page and "Do not publish it" in page
    assert "a class of 3 records" in page


def test_warnings_and_unmasked_records_are_in_the_report(tfirst):
    warned = replace(tfirst, warnings=(
        ReleaseWarning("dominant-group", "One group holds 90 % of the records."),
        ReleaseWarning("high-il", "IL is 61 %.")))
    page = report_html(warned, plots=False)
    assert "Read before publishing" in page
    assert "One group holds 90 % of the records." in page and "IL is 61 %." in page


def test_records_released_unmasked_are_counted(survey):
    table = survey.copy()
    table.loc[[3, 10], "age"] = None
    roles = RoleSpec(quasi_identifiers=QI, identifiers=("person_id",))
    result = anonymize(table, roles, "mdav", k=5, missing="exclude")
    page = report_html(result, plots=False)
    assert "Records released unmasked" in page
    assert "2 records with missing values" in page and result.flag_column in page


def test_with_records_released_unmasked_no_figure_claims_the_whole_table(survey):
    """The figures describe the masked records: the summary and the report say so
    (records of the table and masked, classes of the masked records), and the noise
    paragraph says the records released unmasked carry no noise."""
    table = survey.copy()
    table.loc[[3, 10], "age"] = None
    roles = RoleSpec(quasi_identifiers=QI, identifiers=("person_id",),
                     confidential=("health_spending",))
    result = anonymize(table, roles, "mdav", k=5, missing="exclude", dp_epsilon=1.0,
                       confidential_bounds={"health_spending": (0, 20000)})
    summary = dict(summary_frame(result).itertuples(index=False, name=None))
    assert summary["Records in the released table"] == 600
    assert summary["Records masked (the figures below describe these only)"] == 598
    assert "Records" not in summary
    assert summary["Classes of the masked records (distinct quasi-identifier values)"] == \
        result.metrics.n_classes
    unnoised = ("The 2 record(s) released unmasked (missing values) carry their original "
                "values of these attributes, without noise")
    assert unnoised in summary["Differential privacy noise"]
    page = report_html(result, plots=False)
    assert "These figures describe the 598 masked records only; the 2 records released " \
           "unmasked are not counted." in page
    assert "<th>Classes of the masked records, number and size min / max</th>" in page
    assert "Classes in the released table" not in page and unnoised in page
    plain = anonymize(survey, roles, "mdav", k=5, dp_epsilon=1.0,
                      confidential_bounds={"health_spending": (0, 20000)})
    summary = dict(summary_frame(plain).itertuples(index=False, name=None))
    assert summary["Records"] == 600 and "without noise" not in \
        summary["Differential privacy noise"]
    assert "masked records only" not in report_html(plain, plots=False)


def test_hostile_column_names_are_escaped(tmp_path):
    table = pd.DataFrame({"<script>alert(1)</script>": range(20),
                          "b&c": [v % 7 for v in range(20)],
                          "<img src=x>": [v * 1.5 for v in range(20)]})
    roles = RoleSpec(quasi_identifiers=("<script>alert(1)</script>", "b&c"),
                     confidential=("<img src=x>",))
    result = anonymize(table, roles, "mdav", k=4)
    page = write_report(result, tmp_path / "r.html", source="<b>x.csv",
                        original=table).read_text(encoding="utf-8")
    assert "<script" not in page and "<img src=x>" not in page and "<b>x.csv" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_cancelling_leaves_no_report(tmp_path, tfirst, survey):
    state, steps = cancelled_at_step(3)  # at the second figure
    target = tmp_path / "r.html"
    with pytest.raises(Cancelled):
        write_report(tfirst, target, original=survey, state=state)
    assert not target.exists() and list(tmp_path.iterdir()) == []
    assert any("Drawing" in m for _, m in steps)


@pytest.mark.parametrize("method, blocks, expected", [
    ("mdav", None, "none"),
    ("mdav", "age,income;years_education,hours_worked,household_size",
     "age, income ; years_education, hours_worked, household_size"),
    ("individual-ranking", None, "none (the method masks each quasi-identifier on its own)"),
])
def test_the_attribute_blocks_are_listed_only_when_the_run_masked_blocks(survey, method,
                                                                        blocks, expected):
    roles = RoleSpec(quasi_identifiers=QI, identifiers=("person_id",),
                     non_confidential=("region", "health_spending"))
    result = anonymize(survey, roles, method, k=5, blocks=blocks)
    page = report_html(result)
    assert f"<th>Attribute blocks</th><td>{escape(expected)}</td>" in page
    summary = summary_frame(result)
    assert summary.loc[summary["item"] == "Attribute blocks", "value"].tolist() == [expected]
