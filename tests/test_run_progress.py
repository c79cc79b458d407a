"""A run's progress: split by the caller's estimate of the method's share, steady, and
never a change to what is released."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core import RoleSpec, TaskState, prepare_run, run
from core.pipeline.run import METHOD_SHARE

MEASURING = "measuring disclosure risk and utility"
VERIFYING = "verifying the released table"


@pytest.fixture(scope="module")
def plan():
    rng = np.random.default_rng(4)
    table = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    table["secret"] = rng.normal(size=300)
    roles = RoleSpec(quasi_identifiers=("a", "b", "c"), confidential=("secret",))
    return prepare_run(table, roles, "mdav", k=4)


def _steps(plan, share):
    seen = []
    result = run(plan, TaskState(lambda fraction, message: seen.append((fraction, message))),
                 method_share=share)
    return result, seen


def _at(seen, message):
    return next(fraction for fraction, said in seen if said == message)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
@example(0.7162472268615993, 0.2071907327336054, 0.0)  # the sum rounds below the end
def test_a_part_of_the_progress_never_reports_beyond_its_end(a, b, fraction):
    """A part's progress stays within its span and ends at its end exactly, so the step
    after it, at the span's end, never goes back (a method's share of 0.1875 put the
    measures at 0.26875 to 0.9187500000000001, and their last step at
    0.9187500000000002)."""
    start, stop = min(a, b), max(a, b)
    seen = []
    part = TaskState(lambda value, message: seen.append(value)).sub(start, stop)
    part.step(fraction)
    part.step(1.0)
    assert start <= seen[0] <= seen[1] == stop


def test_the_rounding_that_once_sent_the_bar_back():
    start, stop = 0.26875, 0.9187500000000001
    assert start + (stop - start) * 1.0 > stop
    seen = []
    TaskState(lambda value, message: seen.append(value)).sub(start, stop).step(1.0)
    assert seen == [stop]


@settings(max_examples=25, deadline=None)
@given(st.one_of(st.none(), st.floats(0.0, 1.0)))
def test_the_method_gets_the_share_given_and_the_rest_follows_in_order(plan, share):
    result, seen = _steps(plan, share)
    fractions = [fraction for fraction, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    expected = METHOD_SHARE if share is None else min(max(share, 0.05), 0.95)
    rest = 1.0 - expected
    assert _at(seen, MEASURING) == pytest.approx(expected + 0.1 * rest)
    assert _at(seen, VERIFYING) == pytest.approx(expected + 0.9 * rest)
    method = [fraction for fraction, said in seen if said.startswith("MDAV")
              and not said.endswith("done")]
    assert method and max(method) <= expected + 1e-12


def test_the_split_of_the_progress_changes_nothing_released(plan):
    default, _ = _steps(plan, None)
    for share in (0.1, 0.5, 0.9):
        other, _ = _steps(plan, share)
        pd.testing.assert_frame_equal(other.masked, default.masked)
        assert np.array_equal(other.labels, default.labels)
        assert other.metrics == default.metrics
