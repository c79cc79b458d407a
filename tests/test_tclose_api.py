"""t-closeness methods through anonymize(), the CLI and the export."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import MicroaggError, RoleSpec, anonymize
from core.cli.main import main
from core.verify.tcloseness import verify_t_closeness

TC_METHODS = ["tc-merge", "tc-kfirst", "tc-tfirst"]
QI = ("age", "income", "hours_worked")


@pytest.fixture
def survey(sample_path):
    return pd.read_csv(sample_path)


@pytest.mark.parametrize("method", TC_METHODS)
def test_numeric_and_nominal_confidential_attributes(survey, method):
    roles = RoleSpec(quasi_identifiers=QI, confidential=("health_spending", "diagnosis"),
                     identifiers=("person_id",))
    result = anonymize(survey, roles, method, k=4, t=0.15)
    assert result.passed and result.verification.passed and result.tcloseness.passed
    assert result.tcloseness.kinds == ("numerical", "nominal")
    assert max(result.tcloseness.max_emd) <= 0.15 + 1e-12
    assert result.metrics.min_group_size >= 4
    # The verifier works from the masked table alone and agrees.
    again = verify_t_closeness(result.masked, QI, ("health_spending", "diagnosis"), 0.15)
    assert again.passed and again.max_emd == result.tcloseness.max_emd
    summary = result.summary()
    assert summary["t"] == 0.15 and summary["verified"] is True
    assert set(summary["max_emd"]) == {"health_spending", "diagnosis"}
    assert summary["cluster_size"] >= 4 and summary["merges"] >= 0
    assert "earth mover's distance t = 0.15" in result.guarantee_text


def test_tc_merge_accepts_any_base_method(survey):
    roles = RoleSpec(quasi_identifiers=QI, confidential=("health_spending",))
    for base in ("cbfs", "gsms", "pcp"):
        result = anonymize(survey, roles, "tc-merge", k=3, t=0.2, base=base)
        assert result.passed and result.parameters["base"] == base


def test_t_closeness_needs_a_confidential_column_and_no_strata(survey):
    with pytest.raises(MicroaggError, match="mark at least one column as confidential"):
        anonymize(survey, RoleSpec(quasi_identifiers=QI), "tc-tfirst", k=3, t=0.2)
    roles = RoleSpec(quasi_identifiers=QI, confidential=("diagnosis",), strata=("region",))
    with pytest.raises(MicroaggError, match="it takes no strata"):
        anonymize(survey, roles, "tc-merge", k=3, t=0.2)
    roles = RoleSpec(quasi_identifiers=QI, confidential=("diagnosis",))
    with pytest.raises(MicroaggError, match="takes no attribute blocks"):
        anonymize(survey, roles, "tc-merge", k=3, t=0.2, blocks="age;income,hours_worked")
    with pytest.raises(MicroaggError, match=r"'t' parameter of tc-merge"):
        anonymize(survey, roles, "tc-merge", k=3, t=1.5)
    gappy = survey.assign(diagnosis=survey["diagnosis"].where(survey.index > 2))
    with pytest.raises(MicroaggError, match="'diagnosis' has 3 missing"):
        anonymize(gappy, roles, "tc-merge", k=3, t=0.2)


def test_cli_summary_export_and_verify(tmp_path, sample_path, capsys):
    out, summary = tmp_path / "tc.xlsx", tmp_path / "tc.json"
    assert main(["anonymize", str(sample_path), "-o", str(out), "--method", "tc-tfirst",
                 "--k", "5", "--t", "0.1", "--qi", *QI, "--confidential", "health_spending",
                 "--summary-json", str(summary)]) == 0
    assert "t-closeness PASSED at t = 0.1" in capsys.readouterr().out
    data = json.loads(summary.read_text())
    for key in ("t", "cluster_size", "merges", "max_emd", "verified"):
        assert key in data
    assert data["max_emd"]["health_spending"] <= 0.1 + 1e-12
    items = dict(pd.read_excel(out, sheet_name="summary", engine="openpyxl").values)
    assert items["Verified"] == "yes" and "t-closeness PASSED" in items["t-closeness"]
    assert main(["verify", str(sample_path), str(out), "--qi", *QI, "--k", "5",
                 "--confidential", "health_spending", "--t", "0.1"]) == 0
    assert main(["verify", str(sample_path), str(out), "--qi", *QI, "--k", "5",
                 "--confidential", "health_spending", "--t", "0.001"]) == 1


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 5), st.floats(0.05, 0.5), st.integers(0, 10_000),
       st.sampled_from(TC_METHODS))
def test_every_tc_method_verifies_for_k_and_t(k, t, seed, method):
    rng = np.random.default_rng(seed)
    n = 80
    table = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 4, n),
                          "c": rng.integers(0, 6, n) + rng.normal(scale=0.1, size=n),
                          "d": rng.choice(["x", "y", "z"], n)})
    roles = RoleSpec(quasi_identifiers=("a", "b"), confidential=("c", "d"))
    result = anonymize(table, roles, method, k=k, t=t)
    assert result.passed and result.metrics.min_group_size >= k
    assert verify_t_closeness(result.masked, ("a", "b"), ("c", "d"), t).passed
