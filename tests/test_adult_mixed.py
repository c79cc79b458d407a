"""Adult with every attribute but ``prediction`` as a quasi-identifier (issue: categorical QIs).

6 numeric attributes, ``education`` ordinal (in the order of ``education-num``) and 7
nominal ones. Each release is verified independently, also after a CSV round trip, and
must protect the categorical attributes an intruder knows best.
"""

from __future__ import annotations

import pandas as pd
import pytest

from core import RoleSpec, anonymize, read_table
from core.measures.measure import measure
from core.report.documents import export_result
from core.verify.kanonymity import verify_k_anonymity
from tests.conftest import shared_data

NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
NOMINAL = ("workclass", "marital-status", "occupation", "relationship", "race", "sex",
           "native-country")


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(shared_data("adult.csv"))


@pytest.fixture(scope="module")
def roles(adult) -> RoleSpec:
    # The order of education is the order of education-num, as the data define it.
    order = tuple(adult.groupby("education")["education-num"].first().sort_values().index)
    assert len(order) == 16 and order[0] == "Preschool" and order[-1] == "Doctorate"
    qi = tuple(c for c in adult.columns if c != "prediction")
    assert len(qi) == 14
    return RoleSpec(quasi_identifiers=qi, confidential=("prediction",),
                    levels={"education": "ordinal"}, orders={"education": order})


@pytest.fixture(scope="module")
def releases(adult, roles):
    return {k: anonymize(adult, roles, "mdav", k=k) for k in (3, 5, 10)}


@pytest.mark.parametrize("k", [3, 5, 10])
def test_adult_with_every_attribute_as_quasi_identifier_is_verified(adult, roles, releases, k):
    result = releases[k]
    assert result.passed and result.verification.smallest_class >= k
    levels = result.summary()["levels"]
    assert sorted(levels.values()).count("nominal") == 7
    assert [c for c, v in levels.items() if v == "ordinal"] == ["education"]
    assert [c for c, v in levels.items() if v == "numeric"] == list(NUMERIC)
    for column in NOMINAL + ("education",):
        assert set(result.masked[column]) <= set(adult[column]), column
        assert result.masked[column].dtype == adult[column].dtype
    check = verify_k_anonymity(adult, result.masked, roles, k)
    assert check.passed and check.il == pytest.approx(result.metrics.il, rel=1e-9)
    assert 0 < result.metrics.il < 100


def test_information_loss_grows_and_linkage_falls_with_k(releases):
    il = [releases[k].metrics.il for k in (3, 5, 10)]
    dld = [releases[k].measures.dld for k in (3, 5, 10)]
    assert il == sorted(il) and dld == sorted(dld, reverse=True)


def test_masking_the_categorical_attributes_protects_against_linkage(adult, roles, releases):
    """The numeric-only release keeps sex, race, occupation ... as they were."""
    numeric_only = anonymize(adult, RoleSpec(quasi_identifiers=NUMERIC,
                                             confidential=("prediction",)), "mdav", k=5)
    intruder = measure(adult, numeric_only.masked, roles)  # knows all 14 attributes
    assert intruder.k_prime < 2.0  # most records are unique again
    mixed = releases[5].measures
    assert mixed.k_prime == pytest.approx(5.0, abs=0.05)
    assert mixed.dld < intruder.dld / 2


def test_the_exported_release_verifies_after_a_csv_round_trip(tmp_path, adult, roles, releases):
    path = tmp_path / "adult_k5.csv"
    export_result(releases[5], path, source="adult.csv")
    back = read_table(path)
    check = verify_k_anonymity(adult, back, roles, 5)
    assert check.passed
    assert check.il == pytest.approx(releases[5].metrics.il, rel=1e-9)
