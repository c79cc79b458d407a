"""The parameter sweep (core.pipeline.sweep) and its figure (core.report.run_plots)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import Cancelled, MicroaggError, RoleSpec, TaskState, prepare_run, read_table, run
from core.methods.contract import K, T
from core.pipeline.stored import same_frame
from core.pipeline.sweep import (MAX_POINTS, SweepPoint, default_range, sweep, sweep_values,
                                 sweepable_parameters)
from core.report.run_plots import sweep_figure

# The sample survey's preset roles (microagg_desktop.state.SAMPLE_ROLES), without Qt.
ROLES = RoleSpec.from_mapping({
    "person_id": "identifier", "region": "non-confidential", "age": "quasi-identifier",
    "years_education": "quasi-identifier", "income": "quasi-identifier",
    "hours_worked": "quasi-identifier", "household_size": "quasi-identifier",
    "health_spending": "confidential", "diagnosis": "confidential"})


@pytest.fixture(scope="module")
def sample(sample_path) -> pd.DataFrame:
    return read_table(sample_path)


@pytest.fixture(scope="module")
def k_sweep(sample):
    request = {"roles": ROLES, "method": "mdav", "blocks": None, "merge_small_strata": False,
               "intruder": "all", "k": 99}
    return sweep(sample, request, "k", list(range(2, 7)))


def test_each_point_equals_the_individual_run(sample, k_sweep):
    before = sample.copy()
    assert [p.value for p in k_sweep] == [2, 3, 4, 5, 6]
    for point in k_sweep:
        assert point.ok and point.error is None
        alone = run(prepare_run(sample, ROLES, "mdav", intruder="all", k=point.value))
        assert point.result.parameters["k"] == point.value  # the request's k=99 is ignored
        pd.testing.assert_frame_equal(point.result.masked, alone.masked)
        np.testing.assert_array_equal(point.result.labels, alone.labels)
        assert point.result.measures.dld == alone.measures.dld
        # kept compactly while the sweep waits: the figures without the table
        assert point.stored.compact and point.summary.measures.dld == alone.measures.dld
        assert same_frame(point.result.masked, alone.masked)
    pd.testing.assert_frame_equal(sample, before)


def test_information_loss_grows_and_linkage_falls_with_k_on_the_sample(k_sweep):
    # Checked on the sample for MDAV, k = 2..11: larger groups lose more information and
    # leave fewer records linkable; every k' is at least k.
    il = [p.result.metrics.il for p in k_sweep]
    dld = [p.result.measures.dld for p in k_sweep]
    assert all(a < b for a, b in zip(il, il[1:]))
    assert all(a >= b for a, b in zip(dld, dld[1:]))
    assert all(p.result.metrics.k_prime >= p.value for p in k_sweep)


def test_a_failing_value_is_reported_and_the_others_still_run(sample):
    points = sweep(sample, {"roles": ROLES, "method": "cbfs"}, "k", [3, 601, 5])
    assert [p.ok for p in points] == [True, False, True]
    assert "601" in points[1].error and "fewer than k" in points[1].error
    assert points[1].result is None
    assert points[2].result.parameters["k"] == 5


def test_progress_is_overall_and_increasing(sample):
    seen: list[tuple[float, str]] = []
    sweep(sample, {"roles": ROLES, "method": "mdav"}, "k", [3, 4, 5],
          state=TaskState(lambda f, m: seen.append((f, m))))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    # the second run's own progress lands in the middle third, with its value named
    second = [f for f, m in seen if m.startswith("k = 4 (2 of 3)")]
    assert second and all(1 / 3 <= f <= 2 / 3 for f in second)


def test_cancel_between_runs(sample):
    state = TaskState()
    messages = []

    def callback(fraction, message):
        messages.append(message)
        if message.startswith("k = 4"):
            state.cancel()

    state._callback = callback
    with pytest.raises(Cancelled):
        sweep(sample, {"roles": ROLES, "method": "mdav"}, "k", [3, 4, 5, 6], state=state)
    assert not any(m.startswith("k = 5") for m in messages)


def test_cancel_inside_a_run(sample):
    state = TaskState()
    fractions = []

    def callback(fraction, message):
        fractions.append(fraction)
        if 0.0 < fraction < 0.5 and "MDAV" in message and "preparing" not in message:
            state.cancel()  # from the algorithm's own progress, within run 1 of 2

    state._callback = callback
    with pytest.raises(Cancelled):
        sweep(sample, {"roles": ROLES, "method": "mdav"}, "k", [3, 4], state=state)
    assert max(fractions) < 0.5


def test_refused_sweeps(sample):
    with pytest.raises(MicroaggError, match="'growth'.*cannot be swept.*Sweepable: k"):
        sweep(sample, {"roles": ROLES, "method": "mdav"}, "growth", ["nn"])
    with pytest.raises(MicroaggError, match="roles"):
        sweep(sample, {"method": "mdav"}, "k", [3])
    with pytest.raises(MicroaggError, match="at most|1 to 50"):
        sweep(sample, {"roles": ROLES, "method": "mdav"}, "k", list(range(2, 60)))


def test_sweepable_parameters_are_the_numeric_ones():
    assert [p.name for p in sweepable_parameters("mdav")] == ["k"]
    assert [p.name for p in sweepable_parameters("vmdav")] == ["k", "gamma"]
    assert [p.name for p in sweepable_parameters("tc-merge")] == ["k", "t"]
    assert default_range(T) == (0.01, 1.0)
    assert default_range(K)[0] == 2


@settings(max_examples=60, deadline=None)
@given(start=st.integers(2, 40), span=st.integers(0, 60), step=st.integers(1, 10))
def test_integer_values_stay_in_range_and_are_distinct(start, span, step):
    stop = start + span
    try:
        values = sweep_values(K, start, stop, step=step)
    except MicroaggError as error:
        assert "at most" in str(error)
        assert span // step + 1 > MAX_POINTS
        return
    assert values[0] == start and values[-1] <= stop
    assert values == sorted(set(values)) and len(values) <= MAX_POINTS
    assert all(b - a == step for a, b in zip(values, values[1:]))


@settings(max_examples=60, deadline=None)
@given(start=st.floats(0.01, 1.0), stop=st.floats(0.01, 1.0), count=st.integers(1, 50))
def test_real_values_by_count_stay_in_the_open_interval(start, stop, count):
    start, stop = min(start, stop), max(start, stop)
    values = sweep_values(T, start, stop, count=count)
    assert len(values) == count
    assert all(0 < v <= 1 for v in values)
    assert values == sorted(values)


def test_values_outside_the_constraint_are_refused():
    with pytest.raises(MicroaggError, match="'t'.*range \\(0, 1\\].*0 is outside"):
        sweep_values(T, 0, 0.5, count=5)
    with pytest.raises(MicroaggError, match="'k'.*1 is outside"):
        sweep_values(K, 1, 5, step=1)
    with pytest.raises(MicroaggError, match="larger one"):
        sweep_values(K, 6, 5, step=1)
    with pytest.raises(MicroaggError, match="positive"):
        sweep_values(K, 2, 5, step=0)
    with pytest.raises(MicroaggError, match="either a step or a number"):
        sweep_values(K, 2, 5)


def test_sweep_figure_draws_every_successful_value_and_marks_failures(k_sweep):
    points = [*k_sweep, SweepPoint(700, error="too large")]
    values = [p.value for p in points]
    figure = sweep_figure("k", values, points, selected=4)
    axes = figure.axes[0]
    il_line, risk_line, failed = axes.get_lines()[:3]
    assert list(il_line.get_xdata()) == [2, 3, 4, 5, 6]
    assert list(il_line.get_ydata()) == [p.result.metrics.il for p in k_sweep]
    assert list(risk_line.get_ydata()) == [p.result.measures.dld for p in k_sweep]
    assert list(failed.get_xdata()) == [700]
    assert axes.get_xlabel() == "k"
    with pytest.raises(MicroaggError, match="one point per value"):
        sweep_figure("k", values[:-1], points)
