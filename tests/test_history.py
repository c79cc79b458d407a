"""The run history (microagg_desktop.history), tested without Qt, and the risk–utility map."""

from __future__ import annotations

import math

import pytest

from core import MicroaggError, RoleSpec, anonymize, read_table
from core.report.run_plots import RunPoint, comparison_bars, risk_utility_figure
from microagg_desktop.history import (MEASURES, History, best_columns, describe_changes,
                                      headline_measures)
from tests.test_sweep import ROLES
from core.pipeline.stored import same_result


@pytest.fixture(scope="module")
def sample(sample_path):
    return read_table(sample_path)


def _request(method="mdav", roles=ROLES, **parameters):
    return {"roles": roles, "method": method, "blocks": None, "merge_small_strata": False,
            "intruder": "all", **parameters}


def _run(table, request):
    options = dict(request)
    return anonymize(table, options.pop("roles"), options.pop("method"), **options)


@pytest.fixture(scope="module")
def runs(sample):
    requests = [_request("mdav", k=3), _request("cbfs", k=5),
                _request("individual-ranking", k=3), _request("tc-kfirst", k=3, t=0.3)]
    return [(r, _run(sample, r)) for r in requests]


@pytest.fixture
def history(runs):
    history = History()
    for request, result in runs:
        history.add(request, result)
    return history


def test_records_carry_the_results_own_measures(history, runs):
    assert [r.number for r in history.records] == [1, 2, 3, 4]
    assert [r.label for r in history.records] == [
        "#1 MDAV k=3", "#2 CBFS k=5", "#3 Individual ranking k=3", "#4 tc-kfirst k=3 t=0.3"]
    for record, (_, result) in zip(history.records, runs):
        m = record.measures
        assert m["il"] == result.metrics.il and m["k_prime"] == result.metrics.k_prime
        assert m["dld"] == result.measures.dld and m["dr"] == result.measures.dr
        assert m["il1"] == result.measures.il1
        assert m["max_emd"] == max(result.measures.summary()["max_emd"].values())
        assert m["verified"] is result.passed and m["warnings"] == len(result.warnings)
        assert m["seconds"] == result.seconds
        assert same_result(record.result, result) and not record.exported
    assert history.records[2].measures["verified"] is False  # individual ranking


def test_numbers_are_never_reused_and_the_last_run_is_selected(history, runs):
    assert history.selected.number == 4
    history.remove(4)
    assert history.selected is None
    record = history.add(*runs[0])
    assert record.number == 5 and history.selected is record
    with pytest.raises(MicroaggError, match="no run #4.*#1, #2, #3, #5"):
        history.select(4)


def test_going_back_to_a_run_gives_back_its_settings(history, runs, sample):
    record = history.select(2)
    assert history.selected is record
    assert record.request == runs[1][0]
    assert record.request["roles"] == ROLES and record.request["k"] == 5
    # the request is the run: running it again gives the same release
    again = _run(sample, record.request)
    assert again.masked.equals(record.result.masked)
    # it is a copy: changing the caller's dict later does not rewrite history
    request = _request("mdav", k=7)
    added = history.add(request, runs[0][1])
    request["k"] = 9
    assert added.request["k"] == 7


def test_compare_shows_measures_and_only_the_differing_settings(history):
    frame = history.compare([1, 2, 4])
    assert list(frame.columns) == ["#1 MDAV k=3", "#2 CBFS k=5", "#4 tc-kfirst k=3 t=0.3"]
    assert list(frame.index[:len(MEASURES)]) == [m.name for m in MEASURES]
    settings = list(frame.index[len(MEASURES):])
    assert settings == ["Setting: method", "Setting: k", "Setting: t"]
    assert list(frame.loc["Setting: k"]) == ["3", "5", "3"]
    assert list(frame.loc["Setting: t"]) == ["—", "—", "0.3"]
    assert frame.loc["Information loss IL (%)"].iloc[1] == history.get(2).measures["il"]
    with pytest.raises(MicroaggError, match="at least one run"):
        history.compare([])


def test_best_value_per_row(history):
    frame = history.compare([1, 2, 3])
    best = best_columns(frame)
    # Run 3 (individual ranking) promises no record-level guarantee: the best is
    # chosen among runs 1 and 2, and its Verified cell is empty ("—").
    il = [history.get(n).measures["il"] for n in (1, 2)]
    assert best["Information loss IL (%)"] == [frame.columns[il.index(min(il))]]
    assert best["k′ (records per QI tuple)"] == ["#2 CBFS k=5"]
    assert list(frame.loc["Verified"]) == [True, True, None]
    assert "Verified" not in best  # both guaranteed runs verified: nothing to choose
    assert "Time (s)" not in best and "Setting: method" not in best


@pytest.mark.parametrize("change, reason", [
    ({"intruder": "singles"}, "their intruder scenarios differ"),
    ({"roles": RoleSpec(quasi_identifiers=ROLES.quasi_identifiers[:-1],
                        identifiers=ROLES.identifiers)}, "their roles differ"),
])
def test_runs_measured_differently_get_no_best_value(sample, change, reason):
    """Runs measured against another intruder, or on other attributes, are not ranked:
    the same release (another intruder) would otherwise look safer by its DLD alone."""
    from microagg_desktop.history import incomparable
    history = History()
    for request in (_request("mdav", k=3), {**_request("mdav", k=3), **change}):
        history.add(request, _run(sample, request))
    frame = history.compare([1, 2])
    assert reason in incomparable(frame)
    assert best_columns(frame) == {}
    same = History()
    for request in (_request("mdav", k=3), _request("mdav", k=5)):
        same.add(request, _run(sample, request))
    assert incomparable(same.compare([1, 2])) is None and best_columns(same.compare([1, 2]))


def test_exported_runs_and_the_close_question(history):
    assert [r.number for r in history.unexported()] == [1, 2, 3, 4]
    history.mark_exported(3)
    assert [r.number for r in history.unexported()] == [1, 2, 4]


def test_describe_changes_in_words():
    a = _request("mdav", k=5)
    roles = RoleSpec.from_mapping({**ROLES.as_mapping(), "age": "confidential"},
                                  strata=["region"])
    b = {**_request("cbfs", roles=roles, k=7), "dp_epsilon": 1.0, "missing": "exclude"}
    changes = describe_changes(a, b)
    assert changes == [
        "'age' is now confidential (was quasi-identifier)",
        "'region' is now non-confidential, stratum (was non-confidential)",
        "method: MDAV → CBFS", "k: 5 → 7", "differential privacy ε: none → 1",
        "missing values: none → exclude"]
    assert describe_changes(a, dict(a)) == []
    levels = RoleSpec.from_mapping(ROLES.as_mapping(), levels={"household_size": "ordinal"})
    assert describe_changes(a, _request("mdav", roles=levels, k=5)) == [
        "'household_size' is now quasi-identifier, ordinal (was quasi-identifier)"]


def test_headline_measures_without_confidential_columns(sample):
    roles = RoleSpec(quasi_identifiers=("age", "income"))
    measures = headline_measures(anonymize(sample, roles, "mdav", k=4))
    assert measures["max_emd"] is None and measures["k_prime"] >= 4


def test_map_places_every_run_and_marks_unverified_and_selected(history):
    history.select(2)
    points = history.points()
    figure = risk_utility_figure(points, "dr")
    axes = figure.axes[0]
    verified, unverified, selected = axes.collections[:3]
    assert len(verified.get_offsets()) == 3 and len(unverified.get_offsets()) == 1
    assert tuple(selected.get_offsets()[0]) == (points[1].il, points[1].dr)
    assert sorted(t.get_text() for t in axes.texts) == sorted(p.label for p in points)
    assert axes.get_ylabel() == "Disclosure risk DR (%)"
    x_low, x_high = axes.get_xlim()
    assert x_low <= 0 and x_high > max(p.il for p in points)


def test_map_with_one_run_and_overlapping_runs():
    one = risk_utility_figure([RunPoint("#1 MDAV k=3", 8.0, 30.0, 39.0)])
    axes = one.axes[0]
    assert axes.get_xlim()[1] > 8.0 and axes.get_ylim()[1] > 30.0
    same = [RunPoint(f"#{i} MDAV k=3", 8.0, 30.0, 39.0) for i in range(1, 4)]
    axes = risk_utility_figure(same).axes[0]
    offsets = [t.xyann for t in axes.texts]
    assert len(set(offsets)) == 3  # labels of coinciding runs do not sit on each other
    empty = risk_utility_figure([]).axes[0]
    assert "Run a method" in empty.texts[0].get_text()
    with pytest.raises(MicroaggError, match="Unknown risk measure 'il'"):
        risk_utility_figure(same, "il")


def test_comparison_bars_one_panel_per_measure(history):
    records = history.records[:3]
    figure = comparison_bars([r.label for r in records],
                             {"IL (%)": [r.measures["il"] for r in records],
                              "k′": [r.measures["k_prime"] for r in records]})
    assert [a.get_title() for a in figure.axes] == ["IL (%)", "k′"]
    heights = [p.get_height() for p in figure.axes[0].patches]
    assert all(math.isclose(h, r.measures["il"]) for h, r in zip(heights, records))


def test_runs_of_one_method_and_k_are_told_apart_by_what_else_made_them(sample):
    """The history's Parameters name the noise's ε, the attribute blocks and an
    intruder who knows less, read from each result: two MDAV k=3 runs that released
    different tables or were measured differently never look alike there."""
    noise_roles = RoleSpec(quasi_identifiers=ROLES.quasi_identifiers,
                           identifiers=ROLES.identifiers, confidential=("health_spending",))
    requests = [
        _request("mdav", k=3),
        _request("mdav", roles=noise_roles, k=3, dp_epsilon=2.0,
                 confidential_bounds="health_spending=0:5000", noise_seed=1),
        {**_request("mdav", k=3), "blocks": "age,years_education;income,hours_worked,"
                                             "household_size"},
        {**_request("mdav", k=3), "intruder": "singles"},
        {**_request("mdav", k=3), "known": "age,income"},
    ]
    history = History()
    for request in requests:
        history.add(request, _run(sample, request))
    assert [r.parameters_text for r in history.records] == [
        "k=3", "k=3 ε=2", "k=3 blocks=age,years_education;income,hours_worked,household_size",
        "k=3 intruder: singles", "k=3 intruder knows age,income"]
    # The label stays short for the compare view's column heads and the plots' legends,
    # where the settings that differ have rows of their own.
    assert history.records[1].label == "#2 MDAV k=3"
    assert "Setting: differential privacy ε" in history.compare([1, 2]).index
