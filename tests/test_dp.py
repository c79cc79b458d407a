"""Laplace noise on confidential attributes and Proposition 1's stochastic t."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.privacy.noise import (add_laplace_noise, dp_confidential, parse_bounds, stochastic_t,
                     stochastic_t_formula)
from core.errors import MicroaggError


# --- Bounds ---------------------------------------------------------------------------

def test_parse_bounds():
    assert parse_bounds("income=0:200000") == {"income": (0.0, 200000.0)}
    assert parse_bounds(["a=-1.5:2", "b=1e-3:1e3"]) == {"a": (-1.5, 2.0), "b": (0.001, 1000.0)}
    assert parse_bounds("a=0:1, b=2:3") == {"a": (0.0, 1.0), "b": (2.0, 3.0)}
    assert parse_bounds("x=y=0:1") == {"x=y": (0.0, 1.0)}  # the last '=' separates


@pytest.mark.parametrize("text, message", [
    ("income", "COL=LO:HI"),
    ("=0:1", "COL=LO:HI"),
    ("income=0", "LO:HI"),
    ("income=a:b", "two numbers"),
    ("income=5:5", "LO < HI"),
    ("income=9:1", "LO < HI"),
    ("income=0:inf", "finite"),
    ("income=0:1,income=0:2", "twice"),
    ("", "empty"),
])
def test_parse_bounds_errors_name_the_problem(text, message):
    with pytest.raises(MicroaggError, match=message):
        parse_bounds(text)


# --- The noise ------------------------------------------------------------------------

def test_laplace_scale_is_range_over_epsilon():
    """Laplace(0, b): mean 0, variance 2b², mean absolute value b; b = (HI − LO)/ε = 5."""
    n, b = 400_000, 5.0
    noise = dp_confidential(np.full(n, 3.0), epsilon=2.0, lower=-2, upper=8,
                            random_state=11) - 3.0
    se_mean = math.sqrt(2) * b / math.sqrt(n)
    assert abs(noise.mean()) < 5 * se_mean
    assert noise.var() == pytest.approx(2 * b * b, rel=0.03)
    assert np.abs(noise).mean() == pytest.approx(b, rel=0.02)
    assert np.median(noise) == pytest.approx(0.0, abs=0.05)


def test_same_seed_same_noise():
    values = np.linspace(0, 1, 50)
    a = dp_confidential(values, epsilon=1, lower=0, upper=1, random_state=5)
    b = dp_confidential(values, epsilon=1, lower=0, upper=1, random_state=5)
    c = dp_confidential(values, epsilon=1, lower=0, upper=1, random_state=6)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    generator = dp_confidential(values, epsilon=1, lower=0, upper=1,
                                random_state=np.random.default_rng(5))
    assert np.array_equal(a, generator)


def test_values_outside_bounds_raise_naming_the_column_and_row():
    with pytest.raises(MicroaggError, match=r"'wage'.*1 value.*row 3"):
        dp_confidential([1, 2, 30], epsilon=1, lower=0, upper=10, random_state=0,
                        name="wage")


def test_clipping_is_explicit():
    noisy = dp_confidential([1, 2, 30], epsilon=1e9, lower=0, upper=10, random_state=0,
                            out_of_bounds="clip")
    assert noisy == pytest.approx([1, 2, 10], abs=1e-6)  # ε huge: noise negligible


@pytest.mark.parametrize("kwargs, message", [
    ({"epsilon": 0}, "epsilon"), ({"epsilon": -1}, "epsilon"),
    ({"epsilon": float("inf")}, "epsilon"), ({"lower": 5, "upper": 5}, "LO < HI"),
    ({"random_state": None}, "seed"), ({"random_state": -2}, "seed"),
    ({"out_of_bounds": "ignore"}, "out_of_bounds"),
])
def test_bad_parameters(kwargs, message):
    args = {"epsilon": 1.0, "lower": 0, "upper": 10, "random_state": 0, **kwargs}
    with pytest.raises(MicroaggError, match=message):
        dp_confidential([1, 2], **args)


def test_non_numeric_and_missing_values_raise():
    with pytest.raises(MicroaggError, match="not numeric"):
        dp_confidential(["a", "b"], epsilon=1, lower=0, upper=1, random_state=0, name="c")
    with pytest.raises(MicroaggError, match="row 2"):
        dp_confidential([0.5, np.nan], epsilon=1, lower=0, upper=1, random_state=0)


# --- Proposition 1 --------------------------------------------------------------------

def test_stochastic_t_by_hand():
    # (|E|/N)·(1 + (N − |E|)/|E|·exp(ε)) with N = 100, |E| = 5, ε = 1:
    # 0.05·(1 + 19·e) = 0.05 + 0.95·2.718281828 = 2.632367737
    assert stochastic_t(1.0, 5, 100) == pytest.approx(2.632367737, abs=1e-9)
    assert stochastic_t(0.0, 3, 10) == 1.0          # ε = 0 (unbounded noise): t = 1
    assert stochastic_t(2.0, 10, 10) == 1.0         # one class holds every record
    assert stochastic_t(math.log(2), 1, 2) == pytest.approx(1.5)  # (1 + 1·2)/2
    text = stochastic_t_formula(1.0, 5, 100)
    assert "(5 + (100 − 5)·exp(1)) / 100" in text and "2.63237" in text


@settings(max_examples=100, deadline=None)
@given(st.floats(0.0, 5.0), st.lists(st.integers(1, 40), min_size=1, max_size=8))
def test_stochastic_t_is_the_max_over_classes_of_both_directions(epsilon, sizes):
    n = sum(sizes)
    t = stochastic_t(epsilon, min(sizes), n)
    per_class = [(e / n) * (1 + (n - e) / e * math.exp(epsilon)) for e in sizes]
    other_direction = [(n / e) / (1 + (n - e) / e * math.exp(-epsilon)) for e in sizes]
    assert t == pytest.approx(max(per_class))
    assert max(other_direction) <= t * (1 + 1e-12)  # "the second term is always greater"
    assert t >= 1


def test_stochastic_t_checks_its_arguments():
    for args in ((-1, 2, 10), (1, 0, 10), (1, 11, 10), (1, 2.5, 10)):
        with pytest.raises(MicroaggError):
            stochastic_t(*args)


# --- A masked table -------------------------------------------------------------------

def masked_table():
    return pd.DataFrame({"age": [30.5, 30.5, 30.5, 50.0, 50.0], "sex": list("mfmfm"),
                         "wage": [10.0, 20.0, 30.0, 40.0, 50.0],
                         "tax": [1.0, 2.0, 3.0, 4.0, 5.0]})


def test_add_laplace_noise_to_a_masked_table():
    masked = masked_table()
    before = masked.copy(deep=True)
    r = add_laplace_noise(masked, parse_bounds("wage=0:100,tax=0:10"), epsilon=0.5,
                          quasi_identifiers=["age"], confidential=["wage", "tax"],
                          random_state=3)
    pd.testing.assert_frame_equal(masked, before)  # never mutated
    assert r.frame[["age", "sex"]].equals(masked[["age", "sex"]])
    assert not np.allclose(r.frame["wage"], masked["wage"])
    assert r.scale == {"wage": 200.0, "tax": 20.0}
    assert r.smallest_class == 2 and r.n_records == 5 and r.seed == 3
    assert r.stochastic_t == pytest.approx((2 + 3 * math.exp(0.5)) / 5)
    assert r.stochastic_t_joint == pytest.approx((2 + 3 * math.exp(1.0)) / 5)
    summary = r.summary()
    assert summary["epsilon"] == 0.5 and summary["stochastic_t"] == r.stochastic_t
    assert "multiplicative distance, not EMD" in r.describe()
    again = add_laplace_noise(masked, {"wage": (0, 100), "tax": (0, 10)}, epsilon=0.5,
                              quasi_identifiers=["age"], random_state=3)
    pd.testing.assert_frame_equal(again.frame, r.frame)


def test_each_column_has_its_own_stream():
    masked = masked_table()
    both = add_laplace_noise(masked, {"wage": (0, 100), "tax": (0, 10)}, epsilon=1,
                             quasi_identifiers=["age"], random_state=8)
    alone = add_laplace_noise(masked, {"wage": (0, 100)}, epsilon=1,
                              quasi_identifiers=["age"], random_state=8)
    assert np.array_equal(both.frame["wage"], alone.frame["wage"])


def test_a_seed_is_drawn_and_recorded_when_none_is_given():
    masked = masked_table()
    r = add_laplace_noise(masked, {"wage": (0, 100)}, epsilon=1, quasi_identifiers=["age"])
    repeat = add_laplace_noise(masked, {"wage": (0, 100)}, epsilon=1,
                               quasi_identifiers=["age"], random_state=r.seed)
    assert np.array_equal(r.frame["wage"], repeat.frame["wage"])


def test_bounds_are_required_for_every_confidential_column():
    masked = masked_table()
    with pytest.raises(MicroaggError, match=r"'tax' has no bounds.*never taken"):
        add_laplace_noise(masked, {"wage": (0, 100)}, epsilon=1, quasi_identifiers=["age"],
                          confidential=["wage", "tax"], random_state=0)
    with pytest.raises(MicroaggError, match="'age', which is not a confidential"):
        add_laplace_noise(masked, {"wage": (0, 100), "age": (0, 99)}, epsilon=1,
                          quasi_identifiers=["age"], confidential=["wage"], random_state=0)
    with pytest.raises(MicroaggError, match=r"'wage' has 1 value\(s\) outside"):
        add_laplace_noise(masked, {"wage": (0, 45)}, epsilon=1, quasi_identifiers=["age"],
                          random_state=0)
    clipped = add_laplace_noise(masked, {"wage": (0, 45)}, epsilon=1,
                                quasi_identifiers=["age"], random_state=0,
                                out_of_bounds="clip")
    assert clipped.clipped == {"wage": 1} and "clipped" in clipped.describe()
    with pytest.raises(MicroaggError, match="not numeric"):
        add_laplace_noise(masked, {"sex": (0, 1)}, epsilon=1, quasi_identifiers=["age"],
                          random_state=0)
