"""Disclosure-risk and utility measures (Nin, Mic1D-k, Section 2.3): hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.pipeline import anonymize
from core.errors import MicroaggError
from core.measures.utility import information_loss_il1
from core.measures.disclosure import interval_disclosure, real_anonymity, record_linkage
from core.measures.scenarios import intruder_scenarios, parse_known
from core.measures.measure import measure
from core.data.roles import RoleSpec
from core.verify.tcloseness import verify_t_closeness
from core.verify.kanonymity import verify_k_anonymity

ROLES = RoleSpec(quasi_identifiers=("a", "b"), confidential=("c",))


def original6() -> pd.DataFrame:
    return pd.DataFrame({"a": [1.0, 2, 3, 4, 5, 6], "b": [2.0, 4, 6, 8, 10, 12],
                         "c": [1, 2, 1, 2, 3, 3]})


def masked6() -> pd.DataFrame:
    """``a`` averaged in pairs, ``b`` replaced by its mean 7."""
    masked = original6()
    masked["a"] = [1.5, 1.5, 3.5, 3.5, 5.5, 5.5]
    masked["b"] = 7.0
    return masked


def test_hand_computed_six_records():
    original, masked = original6(), masked6()
    before = (original.copy(), masked.copy())
    m = measure(original, masked, ROLES)
    pd.testing.assert_frame_equal(original, before[0])
    pd.testing.assert_frame_equal(masked, before[1])
    # k': three distinct masked tuples.
    assert m.k_prime == 2.0
    # SSE: a: 6 * 0.25 / (35/12) = 18/35; b: 70 / (35/3) = 6. SST = n * p = 12.
    assert m.sse == pytest.approx(18 / 35 + 6, rel=1e-12)
    assert m.sst == pytest.approx(12.0, rel=1e-12)
    assert m.il == pytest.approx(100 * (18 / 35 + 6) / 12, rel=1e-12)
    # IL1 terms. Data: |x - x'| / max(|x|, |x'|) over the 12 cells.
    data = (1 / 3 + 1 / 4 + 1 / 7 + 1 / 8 + 1 / 11 + 1 / 12
            + 5 / 7 + 3 / 7 + 1 / 7 + 1 / 8 + 3 / 10 + 5 / 12) / 12
    # V = (35/12, 35/6, 35/3) over (aa, ab, bb); V' = (8/3, 0, 0).
    covariances = (3 / 35 + 1 + 1) / 3
    variances = (3 / 35 + 1) / 2
    # R = (1, 1, 1); R' = (1, 0, 0) (b' is constant).
    correlations = 2 / 3
    assert m.il1_components["data"] == pytest.approx(data, rel=1e-12)
    assert m.il1_components["covariances"] == pytest.approx(covariances, rel=1e-12)
    assert m.il1_components["variances"] == pytest.approx(variances, rel=1e-12)
    assert m.il1_components["correlations"] == pytest.approx(correlations, rel=1e-12)
    assert m.il1_components["means"] == pytest.approx(0.0, abs=1e-15)
    il1 = 100 * (data + covariances + variances + correlations) / 4
    assert m.il1 == pytest.approx(il1, rel=1e-12)
    # DLD on (a, b): squared z-distances times 35 from (1.5, 7): 78, 30, 30, ...; from
    # (3.5, 7): records 2 and 3 at 6; from (5.5, 7): records 3 and 4 at 30. Credits:
    # 0, 1/2, 1/2, 1/2, 1/2, 0.
    assert m.dld == pytest.approx(100 * 2 / 6, rel=1e-12)
    # ID (w = ceil(0.06) = 1 rank): a: [1,3] [3,5] [5,6] hold all six; b: 7 -> rank 3,
    # interval [6, 10] holds 6, 8, 10.
    assert m.id == pytest.approx(75.0, rel=1e-12)
    assert m.dr == pytest.approx(0.5 * 100 / 3 + 0.5 * 75, rel=1e-12)
    assert m.score == pytest.approx(0.5 * il1 + 0.5 * m.dr, rel=1e-12)
    # Classes {0,1} {2,3} {4,5}; c has m = 3 values, F_T = (1/3, 2/3).
    # EMD {1,2}: (1/6 + 1/3)/2 = 1/4; {1,2}: 1/4; {3,3}: (1/3 + 2/3)/2 = 1/2.
    np.testing.assert_allclose(m.class_emd["c"], [0.25, 0.25, 0.5])
    assert m.max_emd == {"c": pytest.approx(0.5)}
    assert m.group_size_counts == {2: 3}
    np.testing.assert_allclose(m.record_risk, 0.5)
    summary = m.summary()
    for key in ("k_prime", "sse", "il", "il1", "dld", "id", "dr", "score", "max_emd"):
        assert key in summary
    assert summary["max_emd"] == {"c": pytest.approx(0.5)}


def test_hand_computed_single_attribute_scenarios():
    m = measure(original6(), masked6(), ROLES, scenarios="singles")
    a, b = m.scenarios
    assert (a.known, b.known) == (("a",), ("b",))
    # a: 1.5 ties originals 1 and 2, and so on: every record 1/2.
    assert (a.k_prime, a.dld, a.id) == (2.0, pytest.approx(50.0), 100.0)
    # b: 7 ties originals 6 and 8 (records 2 and 3): 1/2 each.
    assert (b.k_prime, b.dld, b.id) == (6.0, pytest.approx(100 / 6), 50.0)
    assert m.dld == pytest.approx((50 + 100 / 6) / 2)
    assert m.summary()["scenario_k_prime_mean"] == 4.0


def test_identity_masking():
    original = original6()
    m = measure(original, original.copy(), ROLES, scenarios="every")
    assert m.k_prime == 1.0 and m.il1 == 0.0 and m.sse == 0.0 and m.il == 0.0
    assert m.dld == 100.0 and m.id == 100.0 and m.dr == 100.0 and m.score == 50.0
    assert all(s.dld == 100.0 and s.k_prime == 1.0 for s in m.scenarios)
    np.testing.assert_allclose(m.record_risk, 1.0)


@pytest.mark.parametrize("n", [6, 7, 50])
def test_global_mean_masking(n):
    rng = np.random.default_rng(n)
    original = pd.DataFrame({"a": rng.normal(size=n), "b": rng.exponential(size=n),
                             "c": rng.integers(0, 3, size=n)})
    masked = original.copy()
    masked[["a", "b"]] = original[["a", "b"]].mean().to_numpy()
    m = measure(original, masked, ROLES)
    assert m.k_prime == n
    assert m.dld == pytest.approx(100 / n)   # exactly one record's worth of credit
    assert m.il == pytest.approx(100.0)
    assert m.max_emd == {"c": 0.0}             # one class: the whole table
    assert m.il1_components["variances"] == 1.0
    # Symmetric data: two originals tie with the mean; the credit is split, DLD stays 100/n.
    assert measure(original6(), original6().assign(a=3.5, b=7.0), ROLES).dld == \
        pytest.approx(100 / 6)


def test_agrees_with_the_engine_on_a_microaggregation(census):
    qi = ("TAXINC", "POTHVAL", "FICA")
    roles = RoleSpec(quasi_identifiers=qi, confidential=("FEDTAX",))
    result = anonymize(census, roles, "mdav", k=5)
    m = measure(census, result.masked, roles)
    assert m.sse == pytest.approx(result.metrics.sse, rel=1e-9)
    assert m.il == pytest.approx(result.metrics.il, rel=1e-9)
    assert m.k_prime == pytest.approx(result.metrics.k_prime)
    verification = verify_k_anonymity(census, result.masked, roles, 5)
    assert m.il == pytest.approx(verification.il, rel=1e-12)
    assert min(m.class_sizes) >= 5
    tc = verify_t_closeness(result.masked, qi, ["FEDTAX"], 1.0)
    assert m.max_emd["FEDTAX"] == pytest.approx(tc.max_emd[0], abs=1e-15)


def brute_force_dld(Z, Zm):
    distances = np.sqrt(((Zm[:, None, :] - Z[None, :, :]) ** 2).sum(axis=-1))
    nearest = distances.min(axis=1, keepdims=True)
    tied = distances <= nearest * (1 + 1e-12)
    own = tied[np.arange(len(Z)), np.arange(len(Z))]
    return 100 * np.mean(np.where(own, 1 / tied.sum(axis=1), 0))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_record_linkage_matches_brute_force(data):
    n = data.draw(st.integers(1, 25), label="n")
    d = data.draw(st.integers(1, 3), label="d")
    small = st.integers(-3, 3).map(float)  # small integers: many duplicates and ties
    Z = np.array(data.draw(st.lists(st.lists(small, min_size=d, max_size=d),
                                    min_size=n, max_size=n), label="Z"))
    Zm = np.array(data.draw(st.lists(st.lists(small, min_size=d, max_size=d),
                                     min_size=n, max_size=n), label="Zm")) / 2
    assert record_linkage(Z, Zm) == pytest.approx(brute_force_dld(Z, Zm), abs=1e-9)


def test_interval_disclosure_width_in_ranks():
    x = np.arange(1.0, 201.0)[:, None]
    # interval 1% of 200 records: +-2 ranks; a shift of 2 ranks is inside, 3 is not
    # (except near the top, where the interval stops at the largest original: 198..200).
    assert interval_disclosure(x, x + 2) == 100.0
    assert interval_disclosure(x, x + 3) == pytest.approx(100 * 3 / 200)
    # 10%: +-20 ranks.
    assert interval_disclosure(x, x + 20, interval=10) == 100.0
    assert interval_disclosure(x, x + 21, interval=10) == pytest.approx(100 * 21 / 200)
    # Below the smallest / above the largest original: the end of the ranking.
    assert interval_disclosure(x, x - 1000) == pytest.approx(100 * 3 / 200)
    assert interval_disclosure(x, x + 1000) == pytest.approx(100 * 3 / 200)


def test_il1_is_zero_for_the_identity_and_scale_free():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    masked = X + rng.normal(scale=0.1, size=X.shape)
    assert information_loss_il1(X, X)[0] == 0.0
    assert information_loss_il1(X * [1, 10, 1e5], masked * [1, 10, 1e5])[0] == \
        pytest.approx(information_loss_il1(X, masked)[0], rel=1e-10)


def test_real_anonymity():
    assert real_anonymity(np.array([[1.0, 2], [1, 2], [1, 3]])) == 1.5


def test_scenario_presets():
    qi = ["a", "b", "c", "d"]
    assert intruder_scenarios(qi, "all") == [tuple(qi)]
    assert intruder_scenarios(qi, "singles") == [("a",), ("b",), ("c",), ("d",)]
    assert len(intruder_scenarios(qi, "pairs")) == 6
    assert len(intruder_scenarios(qi, "every")) == 15
    drawn = intruder_scenarios(qi, "random", size=2, count=4, seed=7)
    assert drawn == intruder_scenarios(qi, "random", size=2, count=4, seed=7)
    assert len(set(drawn)) == 4 and all(len(s) == 2 for s in drawn)
    assert len(intruder_scenarios(qi, "random", size=3, count=99, seed=1)) == math.comb(4, 3)
    with pytest.raises(MicroaggError, match="'size'"):
        intruder_scenarios(qi, "random", size=5)
    with pytest.raises(MicroaggError, match="'scenarios' parameter"):
        intruder_scenarios(qi, "most")
    assert parse_known("a,b; c", qi) == [("a", "b"), ("c",)]
    with pytest.raises(MicroaggError, match="'e' is not a quasi-identifier"):
        parse_known("a,e", qi)


def test_known_scenarios_override_the_preset():
    m = measure(original6(), masked6(), ROLES, known=[["b"], ("a", "b")], scenarios="pairs")
    assert [s.known for s in m.scenarios] == [("b",), ("a", "b")]


@pytest.mark.parametrize("change, message", [
    (lambda o, m: (o, m.iloc[:5]), "5 rows but the original has 6"),
    (lambda o, m: (o, m.drop(columns="b")), "Column 'b' is not in the masked table"),
    (lambda o, m: (o.assign(a=["x"] * 6), m), "not categories of the original"),
    (lambda o, m: (o, m.assign(a=np.nan)), "Column 'a' has 6 missing"),
])
def test_bad_input(change, message):
    original, masked = change(original6(), masked6())
    with pytest.raises(MicroaggError, match=message):
        measure(original, masked, ROLES)


@pytest.mark.parametrize("interval", [0, -1, 101, "1", True])
def test_bad_interval(interval):
    with pytest.raises(MicroaggError, match="'interval' parameter"):
        measure(original6(), masked6(), ROLES, interval=interval)
