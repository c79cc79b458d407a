"""The anonymize() contract: the typed result, the input untouched, progress and cancel."""

import numpy as np
import pandas as pd
import pytest

from core import Cancelled, MicroaggError, RoleSpec, TaskState, anonymize, get_method
from core.methods import methods
from core.verify.kanonymity import verify_k_anonymity
from tests.conftest import cancelled_at_step

SUMMARY_KEYS = {"method", "k", "n_records", "il", "sse", "sst", "min_group_size",
                "mean_group_size", "max_group_size", "k_prime", "verified"}


@pytest.fixture
def survey(sample_path):
    return pd.read_csv(sample_path)


ROLES = RoleSpec(quasi_identifiers=("age", "income", "hours_worked"),
                 confidential=("health_spending", "diagnosis"), identifiers=("person_id",))


def test_result_contract(survey):
    before = survey.copy(deep=True)
    result = anonymize(survey, ROLES, "mdav", k=4)
    pd.testing.assert_frame_equal(survey, before)
    assert result.method == "mdav"
    assert result.parameters == {"k": 4, "growth": "nn", "refine": "none"}
    assert result.roles == ROLES
    assert list(result.masked.columns) == [c for c in survey.columns if c != "person_id"]
    assert result.masked.index.equals(survey.index)
    for column in ("region", "health_spending", "diagnosis", "household_size"):
        assert result.masked[column].equals(survey[column])
    assert SUMMARY_KEYS <= set(result.summary())
    assert result.summary()["verified"] is True
    assert result.metrics.il == pytest.approx(100 * result.metrics.sse / result.metrics.sst)
    assert sum(s * c for s, c in result.metrics.group_size_counts.items()) == len(survey)


def test_k_prime_counts_distinct_masked_tuples(survey):
    result = anonymize(survey, ROLES, "mdav", k=4)
    n_distinct = len(result.masked[list(ROLES.quasi_identifiers)].drop_duplicates())
    assert result.metrics.k_prime == pytest.approx(len(survey) / n_distinct)


def test_progress_reported_at_least_64_times_or_once_per_group(survey):
    calls = []
    result = anonymize(survey, ROLES, "mdav", k=5,
                       state=TaskState(lambda f, m: calls.append(f)))
    assert len(calls) >= min(64, result.metrics.n_groups)
    assert calls == sorted(calls) and calls[-1] == 1.0


def test_cancel_stops_the_run(survey):
    state, calls = cancelled_at_step(3)
    with pytest.raises(Cancelled):
        anonymize(survey, ROLES, "mdav", k=5, state=state)
    assert len(calls) == 3


def test_parameters_are_validated_with_one_message_format(survey):
    with pytest.raises(MicroaggError, match=r"The 'k' parameter of mdav must be an integer "
                                            r"in the range \[2, inf\)\. Got 1 instead\."):
        anonymize(survey, ROLES, "mdav", k=1)
    with pytest.raises(MicroaggError, match="Got 2.5 instead"):
        anonymize(survey, ROLES, "mdav", k=2.5)
    with pytest.raises(MicroaggError, match="has no parameter 'kk'"):
        anonymize(survey, ROLES, "mdav", kk=3)
    with pytest.raises(MicroaggError, match="Unknown method 'nope'"):
        anonymize(survey, ROLES, "nope", k=3)


def test_registry_lists_mdav():
    names = [m.name for m in methods()]
    assert "mdav" in names
    assert [p.name for p in get_method("mdav").parameters] == ["k", "growth", "refine"]


def test_verifier_does_not_trust_labels(survey):
    result = anonymize(survey, ROLES, "mdav", k=3)
    tampered = result.masked.copy()
    tampered.loc[0, "age"] = tampered.loc[0, "age"] + 1  # one record leaves its class
    verdict = verify_k_anonymity(survey, tampered, ROLES, 3)
    assert not verdict.passed and verdict.smallest_class == 1
    assert "fewer than k = 3" in verdict.notes[0]


def test_verifier_flags_identifiers_left_in(survey):
    result = anonymize(survey, ROLES, "mdav", k=3)
    leaky = result.masked.assign(person_id=survey["person_id"])
    verdict = verify_k_anonymity(survey, leaky, ROLES, 3)
    assert not verdict.passed
    assert any("person_id" in note for note in verdict.notes)


def test_same_input_same_labels(survey):
    a = anonymize(survey, ROLES, "mdav", k=3).labels
    b = anonymize(survey, ROLES, "mdav", k=3).labels
    np.testing.assert_array_equal(a, b)
