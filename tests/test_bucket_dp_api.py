"""tc-bucket (multiplicative t) and Laplace noise (--dp-epsilon) through anonymize() and the CLI."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import MicroaggError, RoleSpec, anonymize
from core.verify.multiplicative import verify_multiplicative
from core.cli.main import main

QI = ("age", "income", "hours_worked")


@pytest.fixture
def survey(sample_path):
    return pd.read_csv(sample_path)


@pytest.mark.parametrize("confidential", ["health_spending", "diagnosis"])
def test_tc_bucket_releases_buckets_and_verifies_the_multiplicative_distance(survey,
                                                                             confidential):
    roles = RoleSpec(quasi_identifiers=QI, confidential=(confidential,))
    result = anonymize(survey, roles, "tc-bucket", k=5, t=1.5)
    assert result.passed and result.multiplicative
    assert result.metrics.min_group_size >= 5
    # What is released is the bucket, and the verifier reads only the released table.
    assert result.masked[confidential].nunique() == result.details["n_buckets"]
    again = verify_multiplicative(result.masked, QI, (confidential,), 1.5)
    assert again.passed and max(again.max_distance) <= 1.5 * (1 + 1e-9)
    summary = result.summary()
    assert summary["t_kind"] == "multiplicative"
    assert summary["max_multiplicative_distance"][confidential] <= 1.5 * (1 + 1e-9)
    assert summary["epsilon_prop3"] == pytest.approx(2 * np.log(1.5))
    assert "not an earth mover's distance" in result.guarantee_text


def test_tc_bucket_t_is_a_multiplicative_level(survey):
    roles = RoleSpec(quasi_identifiers=QI, confidential=("diagnosis",))
    with pytest.raises(MicroaggError, match=r"'t' parameter of tc-bucket must be a number "
                                            r"in the range \(1, 1000\]"):
        anonymize(survey, roles, "tc-bucket", k=5, t=0.2)


def test_laplace_noise_needs_bounds_and_is_reproducible(survey):
    roles = RoleSpec(quasi_identifiers=QI, confidential=("health_spending",))
    with pytest.raises(MicroaggError, match="never taken from the data"):
        anonymize(survey, roles, "mdav", k=5, dp_epsilon=1.0)
    with pytest.raises(MicroaggError, match="only used with a differential privacy"):
        anonymize(survey, roles, "mdav", k=5, confidential_bounds="health_spending=0:5000")
    with pytest.raises(MicroaggError, match="after a k-anonymity method"):
        anonymize(survey, roles, "tc-tfirst", k=5, t=0.2, dp_epsilon=1.0,
                  confidential_bounds="health_spending=0:5000")
    a = anonymize(survey, roles, "mdav", k=5, dp_epsilon=2.0,
                  confidential_bounds="health_spending=0:5000", noise_seed=11)
    b = anonymize(survey, roles, "mdav", k=5, dp_epsilon=2.0,
                  confidential_bounds={"health_spending": (0, 5000)}, noise_seed=11)
    pd.testing.assert_frame_equal(a.masked, b.masked)
    noise = a.masked["health_spending"] - survey["health_spending"]
    assert noise.abs().mean() == pytest.approx(2500, rel=0.25)  # Laplace: E|X| = scale
    summary = a.summary()
    n, k_min = len(survey), a.verification.smallest_class
    assert summary["epsilon"] == 2.0 and a.noise.seed == 11 and a.noise.seed_given
    assert "11" not in str(summary["noise_seed"]) and "given" in summary["noise_seed"]
    assert summary["stochastic_t"] == pytest.approx((k_min + (n - k_min) * np.exp(2.0)) / n)
    assert a.verification.passed  # the quasi-identifiers are untouched by the noise


def test_cli_bucket_and_dp(tmp_path, sample_path, capsys):
    summary = tmp_path / "s.json"
    assert main(["anonymize", str(sample_path), "-o", str(tmp_path / "b.csv"), "--method",
                 "tc-bucket", "--k", "5", "--t", "1.5", "--qi", *QI, "--confidential",
                 "diagnosis", "--summary-json", str(summary)]) == 0
    out = capsys.readouterr().out
    assert "multiplicative distance" in out and "ε = 2·ln(1.5)" in out
    assert json.loads(summary.read_text())["t_kind"] == "multiplicative"
    assert main(["anonymize", str(sample_path), "-o", str(tmp_path / "d.xlsx"), "--k", "5",
                 "--qi", *QI, "--confidential", "health_spending", "--dp-epsilon", "1",
                 "--confidential-bounds", "health_spending=0:5000", "--seed", "5",
                 "--summary-json", str(summary), "--overwrite"]) == 0
    data = json.loads(summary.read_text())
    assert data["epsilon"] == 1.0 and data["stochastic_t"] > 1
    items = dict(pd.read_excel(tmp_path / "d.xlsx", sheet_name="summary", engine="openpyxl").values)
    assert "Laplace noise" in items["Differential privacy noise"]
    assert main(["anonymize", str(sample_path), "-o", str(tmp_path / "e.csv"), "--k", "5",
                 "--qi", *QI, "--confidential", "health_spending", "--dp-epsilon", "1",
                 "--confidential-bounds", "health_spending=0:100"]) == 2
    assert "health_spending" in capsys.readouterr().err


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.floats(1.2, 3.0), st.integers(0, 10_000))
def test_tc_bucket_output_verifies_for_k_and_t(k, t, seed):
    rng = np.random.default_rng(seed)
    n = 120
    table = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 9, n),
                          "c": rng.gamma(2.0, size=n)})
    roles = RoleSpec(quasi_identifiers=("a", "b"), confidential=("c",))
    try:
        result = anonymize(table, roles, "tc-bucket", k=k, t=t)
    except MicroaggError as error:  # allowed: it says plainly that t cannot be met
        assert "t" in str(error)
        return
    assert result.passed and result.metrics.min_group_size >= k
    assert verify_multiplicative(result.masked, ("a", "b"), ("c",), t).passed


def test_the_noise_seed_is_fresh_for_every_run_and_never_reported(survey, tmp_path):
    """Whoever knows the noise's seed (and the bounds and ε, which the report states)
    can draw the same noise and subtract it. So by default every run draws a fresh one,
    the intruder scenarios' ``seed`` does not drive it, and no report, summary sheet or
    summary JSON states it; the settings of the run hold it, and repeat the release."""
    from core.project import RunSettings
    from core.report import report_html, summary_frame

    roles = RoleSpec(quasi_identifiers=QI, confidential=("health_spending",))
    options = dict(dp_epsilon=2.0, confidential_bounds="health_spending=0:5000")
    a = anonymize(survey, roles, "mdav", k=5, seed=0, **options)
    b = anonymize(survey, roles, "mdav", k=5, seed=0, **options)
    assert not a.noise.seed_given and a.noise.seed != b.noise.seed
    assert not np.array_equal(a.masked["health_spending"], b.masked["health_spending"])
    seed = str(a.noise.seed)
    sheet = summary_frame(a).to_string()
    page = report_html(a, source="survey.csv", plots=False)
    assert seed not in sheet and seed not in page and seed not in str(a.summary())
    assert "drawn afresh" in sheet and "drawn afresh" in page
    kept = RunSettings.from_result(a)  # what a project keeps: the drawn seed
    assert kept.noise_seed == a.noise.seed
    again = anonymize(survey, roles, **kept.kwargs())
    pd.testing.assert_frame_equal(again.masked, a.masked)
    # A project written before the noise had a seed of its own used 'seed' for it.
    old = {k: v for k, v in kept.to_dict().items() if k != "noise_seed"}
    assert RunSettings.from_dict({**old, "seed": 7}).noise_seed == 7
    with pytest.raises(MicroaggError, match="noise seed must be a whole number"):
        anonymize(survey, roles, "mdav", k=5, noise_seed=-1, **options)


def test_an_epsilon_beyond_floating_point_gives_no_bound_and_a_huge_scale_is_refused(survey):
    roles = RoleSpec(quasi_identifiers=QI, confidential=("health_spending",))
    result = anonymize(survey, roles, "mdav", k=5, dp_epsilon=800.0,
                       confidential_bounds="health_spending=0:5000")
    assert result.noise.stochastic_t == np.inf and result.passed
    with pytest.raises(MicroaggError, match="beyond floating point"):
        anonymize(survey, roles, "mdav", k=5, dp_epsilon=0.001,
                  confidential_bounds="health_spending=0:1e306")


def test_bucket_labels_keep_every_digit_and_a_nominal_column_is_bucketed_by_category():
    """Buckets of incomes 1234560.00 to 1234560.59 are three labels, not one (six
    significant digits named all three alike, and the release merged them); codes
    declared nominal are bucketed as sets of categories, not as ranges of numbers."""
    from core.privacy.multiplicative import Buckets

    rng = np.random.default_rng(4)
    n = 60
    table = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                          "income": 1234560 + np.arange(n) / 100,
                          "dx": rng.integers(1, 10, size=n)})
    result = anonymize(table, RoleSpec(quasi_identifiers=("a", "b"),
                                       confidential=("income",)), "tc-bucket", k=5, t=1.5)
    assert sorted(set(result.masked["income"])) == [
        "[1234560, 1234560.19]", "[1234560.2, 1234560.39]", "[1234560.4, 1234560.59]"]
    assert result.passed and result.tcloseness.n_buckets == (3,)
    roles = RoleSpec(quasi_identifiers=("a", "b"), confidential=("dx",),
                     levels={"dx": "nominal"})
    released = set(anonymize(table, roles, "tc-bucket", k=5, t=1.5).masked["dx"])
    assert all(label.startswith("{") for label in released), released
    with pytest.raises(MicroaggError, match="cannot be told apart"):
        Buckets("x", "numerical", upper_edges=(1.0,), ranges=((1.0, 1.0), (1.0, 1.0))).labels


def test_what_the_noise_cost_is_measured_on_the_released_column(survey):
    """IL, IL1 and the score measure the quasi-identifiers; the noise's cost on each
    noised column is measured on the released table beside them (mean absolute change,
    correlation with the original), and more noise costs more."""
    from core.report import summary_frame

    roles = RoleSpec(quasi_identifiers=QI, confidential=("health_spending",))
    costs = []
    for epsilon in (0.1, 10.0):
        result = anonymize(survey, roles, "mdav", k=5, dp_epsilon=epsilon,
                           confidential_bounds="health_spending=0:5000")
        change, correlation = result.noise.changes["health_spending"]
        released = result.masked["health_spending"].to_numpy()
        original = survey["health_spending"].to_numpy()
        assert change == pytest.approx(np.mean(np.abs(released - original)))
        assert correlation == pytest.approx(np.corrcoef(original, released)[0, 1])
        assert "What the noise cost" in summary_frame(result).to_string()
        costs.append((change, correlation))
    assert costs[0][0] > costs[1][0] and costs[0][1] < costs[1][1]
