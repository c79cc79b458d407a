"""The pipeline's contract: every number a result carries describes the released file.

For every registered method, the measures in the result, in its JSON summary, in the
summary sheet and in the HTML report equal the measures recomputed from the exported
file alone; the guarantee re-verifies that file; a plan prepared and then run gives
exactly what :func:`core.anonymize` gives.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core import RoleSpec, anonymize, get_method, prepare_run, read_table, run
from core.measures import measure
from core.methods import methods
from core.report import export_result, summary_frame, write_report
from microagg_desktop.selftest import read_html_report

QI = ("age", "years_education", "income", "hours_worked", "household_size")
FIGURES = ("k_prime", "sse", "sst", "il", "il1", "dld", "id", "dr", "score")


def case(name: str):
    """Roles and parameters under which method ``name`` runs on the sample."""
    qi, confidential, params = QI, ("health_spending",), {"k": 5}
    if name in ("optimal-univariate",):
        qi = ("income",)
    if name == "mic1d":
        params = {"k": 300}
    if name.startswith("tc-"):
        params["t"] = 1.5 if name == "tc-bucket" else 0.3
    return RoleSpec(quasi_identifiers=qi, confidential=confidential,
                    identifiers=("person_id",), levels={}, orders={}), params


@pytest.fixture(scope="module")
def survey(sample_path) -> pd.DataFrame:
    return read_table(sample_path)


@pytest.mark.parametrize("name", [m.name for m in methods()])
def test_every_figure_describes_the_exported_file(tmp_path, survey, name):
    roles, params = case(name)
    result = anonymize(survey, roles, name, **params)
    path = export_result(result, tmp_path / "released.csv", source="sample_survey.csv")
    released = read_table(path)
    again = measure(survey, released, roles, known=[s.known for s in result.measures.scenarios])
    for figure in FIGURES:
        assert getattr(result.measures, figure) == pytest.approx(
            getattr(again, figure), rel=1e-9, abs=1e-12), figure
    assert result.measures.max_emd == pytest.approx(again.max_emd, rel=1e-9, abs=1e-12)
    assert result.metrics.il == pytest.approx(again.il, rel=1e-9, abs=1e-12)
    assert result.metrics.k_prime == pytest.approx(again.k_prime, rel=1e-9)

    summary = json.loads(json.dumps(result.summary(), default=float))
    for figure in ("il", "k_prime", "il1", "dld", "id", "dr", "score"):
        assert summary[figure] == pytest.approx(getattr(again, figure), rel=1e-9,
                                                abs=1e-12), figure
    assert summary["max_emd"] == pytest.approx(again.max_emd, rel=1e-9, abs=1e-12)

    sheet = dict(summary_frame(result).itertuples(index=False))
    html = read_html_report(write_report(result, tmp_path / "report.html"))
    for rows in (sheet, html):
        assert float(rows["IL = 100·SSE/SST (%)"]) == pytest.approx(round(again.il, 6))
        assert float(rows["DLD: distance-based record linkage (%)"]) == pytest.approx(
            round(again.dld, 6))
        assert float(rows["Largest class EMD of 'health_spending'"]) == pytest.approx(
            round(again.max_emd["health_spending"], 6))

    check = result.guarantee.check(
        survey, released, roles, k=result.verification.k_required,
        t=result.parameters.get("t"),
        blocks=None if get_method(name).scope == "per-attribute" else result.blocks)
    assert check.passed
    assert check.verification.il == pytest.approx(again.il, rel=1e-9, abs=1e-12)


def test_a_release_with_noise_is_measured_after_the_noise(tmp_path, survey):
    roles, _ = case("mdav")
    result = anonymize(survey, roles, "mdav", k=5, dp_epsilon=1.0, seed=7,
                       confidential_bounds="health_spending=0:5000")
    assert not np.allclose(result.masked["health_spending"], survey["health_spending"])
    again = measure(survey, result.masked, roles)
    assert result.measures.max_emd == pytest.approx(again.max_emd)
    raw = measure(survey, result.masked.assign(health_spending=survey["health_spending"]),
                  roles)
    assert result.measures.max_emd != pytest.approx(raw.max_emd)  # the noise counts


@pytest.mark.parametrize("name, extra", [
    ("mdav", {"refine": "igd"}), ("tc-tfirst", {"t": 0.3}), ("tc-bucket", {"t": 1.5}),
    ("individual-ranking", {}), ("mic1d", {}),
])
def test_a_prepared_plan_runs_to_exactly_what_anonymize_gives(survey, name, extra):
    roles, params = case(name)
    params.update(extra)
    options = {"intruder": "random", "seed": 3}
    plan = prepare_run(survey, roles, name, **options, **params)
    planned = run(plan)
    direct = anonymize(survey, roles, name, **options, **params)
    pd.testing.assert_frame_equal(planned.masked, direct.masked)
    assert np.array_equal(planned.labels, direct.labels)
    assert planned.metrics == direct.metrics
    first, second = planned.summary(), direct.summary()
    first.pop("seconds"), second.pop("seconds")
    assert first == second


def test_a_stratified_release_is_measured_with_its_merged_labels(survey):
    roles = RoleSpec(quasi_identifiers=QI, confidential=("health_spending",),
                     identifiers=("person_id",), strata=("region",))
    small = survey.copy()
    small.loc[small.index[:3], "region"] = "Island"
    result = anonymize(small, roles, "mdav", k=5, merge_small_strata=True)
    assert result.strata_merges and "Island" not in set(result.masked["region"])
    assert result.verification.passed


def test_ordinal_with_numeric_attributes_measures_il_against_sst_n_per_attribute():
    rng = np.random.default_rng(5)
    table = pd.DataFrame({"age": rng.normal(40, 10, 200),
                          "grade": rng.choice(list("abcde"), 200)})
    roles = RoleSpec(quasi_identifiers=("age", "grade"), levels={"grade": "ordinal"})
    result = anonymize(table, roles, k=5)
    assert result.metrics.sst == pytest.approx(400)
    assert result.metrics.il == pytest.approx(result.verification.il, rel=1e-9)


def test_released_classes_that_merge_count_for_the_dominant_group_warning():
    rng = np.random.default_rng(6)
    table = pd.DataFrame({"sex": rng.choice(["F", "M"], 1000, p=[0.9, 0.1]),
                          "region": rng.choice(list("NSEW"), 1000, p=[0.85, 0.05, 0.05, 0.05])})
    result = anonymize(table, RoleSpec(quasi_identifiers=("sex", "region")), k=5)
    assert result.measures.class_sizes.max() > 500
    assert "dominant-group" in [w.kind for w in result.warnings]


def test_strata_count_in_k_prime_as_the_verifier_counts_them(survey):
    roles = RoleSpec(quasi_identifiers=QI, identifiers=("person_id",), strata=("region",))
    result = anonymize(survey, roles, "mdav", k=3)
    assert result.metrics.k_prime == pytest.approx(result.verification.k_prime)


def test_t_closeness_fails_when_the_confidential_values_were_changed(survey):
    from core.verify.guarantees import T_CLOSENESS

    roles, params = case("tc-merge")
    result = anonymize(survey, roles, "tc-merge", **params)
    forged = result.masked.assign(health_spending=35.0)
    check = T_CLOSENESS.check(survey, forged, roles, k=5, t=0.0)
    assert not check.passed and "differs from the original" in check.failure
    assert T_CLOSENESS.check(survey, result.masked, roles, k=5, t=0.3).passed


def test_a_noised_column_is_not_taken_for_one_released_as_it_is():
    rng = np.random.default_rng(8)
    age = rng.integers(20, 70, 600)
    table = pd.DataFrame({"age": age, "income": rng.normal(100, 10, 600).round(1),
                          "band": age // 10})
    roles = RoleSpec(quasi_identifiers=("age", "income"), confidential=("band",))
    kept = anonymize(table, roles, k=5)
    assert "kept-column-reveals" in [w.kind for w in kept.warnings]
    noised = anonymize(table, roles, k=5, dp_epsilon=1.0, seed=1,
                       confidential_bounds="band=0:10")
    assert "kept-column-reveals" not in [w.kind for w in noised.warnings]
