"""Mic1D-k and the measures through anonymize(), the CLI and the export."""

import json

import numpy as np
import pandas as pd
import pytest

from core import MicroaggError, RoleSpec, anonymize
from core.cli.main import main
from core.measures.measure import measure
from core.methods.mic1d import mic1d_values
from tests.conftest import shared_data

SUMMARY_KEYS = {"k_prime", "sse", "il", "il1", "dld", "id", "dr", "score"}
QI = ("age", "income", "hours_worked")


@pytest.fixture
def survey(sample_path):
    return pd.read_csv(sample_path)


def test_every_result_carries_the_measures(survey):
    roles = RoleSpec(quasi_identifiers=QI, confidential=("health_spending", "diagnosis"))
    result = anonymize(survey, roles, "mdav", k=5)
    summary = result.summary()
    assert SUMMARY_KEYS <= set(summary)
    assert set(summary["max_emd"]) == {"health_spending", "diagnosis"}
    independent = measure(survey, result.masked, roles)
    assert summary["dld"] == pytest.approx(independent.dld)
    assert summary["il1"] == pytest.approx(independent.il1)
    assert result.measures.il == pytest.approx(result.metrics.il, rel=1e-9)
    assert summary["score"] == pytest.approx(0.5 * summary["il1"] + 0.5 * summary["dr"])


def test_mic1d_through_anonymize_counts_values_and_reports_real_anonymity():
    census = pd.read_csv(shared_data("census.csv"))
    qi = ("AGI", "FICA", "INTVAL", "EMCONTRB", "TAXINC", "WSALVAL", "ERNVAL", "PEARNVAL",
          "POTHVAL")
    result = anonymize(census, RoleSpec(quasi_identifiers=qi), "mic1d", k=3000)
    assert result.guarantee == "none"
    assert "No k-anonymity guarantee" in result.guarantee_text
    expected = mic1d_values(census[list(qi)].to_numpy(float), k=3000)
    np.testing.assert_allclose(result.masked[list(qi)].to_numpy(), expected)
    n_distinct = len(result.masked[list(qi)].drop_duplicates())
    assert result.metrics.k_prime == pytest.approx(len(census) / n_distinct)
    # SSE is measured from the masked values (they are not group means).
    assert result.metrics.il == pytest.approx(result.verification.il, rel=1e-9)
    with pytest.raises(MicroaggError):
        anonymize(census, RoleSpec(quasi_identifiers=qi), "mic1d", k=10_000)


def test_cli_measure_and_anonymize_summaries(tmp_path, sample_path, capsys):
    out, summary = tmp_path / "m.csv", tmp_path / "s.json"
    assert main(["anonymize", str(sample_path), "-o", str(out), "--k", "4", "--qi", *QI,
                 "--confidential", "diagnosis", "--summary-json", str(summary)]) == 0
    assert "DLD =" in capsys.readouterr().out
    data = json.loads(summary.read_text())
    assert SUMMARY_KEYS <= set(data) and "diagnosis" in data["max_emd"]
    measured = tmp_path / "measured.json"
    assert main(["measure", str(sample_path), str(out), "--qi", *QI, "--confidential",
                 "diagnosis", "--known", "age,income;hours_worked",
                 "--summary-json", str(measured)]) == 0
    again = json.loads(measured.read_text())
    assert SUMMARY_KEYS <= set(again)
    assert again["k_prime"] == pytest.approx(data["k_prime"])
    assert [s["known"] for s in again["scenarios"]] == [["age", "income"], ["hours_worked"]]
    assert main(["measure", str(sample_path), str(out), "--qi", "nope"]) == 2
