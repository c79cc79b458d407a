"""Role validation and preparation: every bad input is a clear error naming the column."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from core import MicroaggError, Role, RoleSpec, anonymize
from core.data.prepare import standardize


@pytest.fixture
def table():
    return pd.DataFrame({
        "id": ["a", "b", "c", "d"],
        "age": [20, 30, 40, 50],
        "wage": [1.0, 2.0, 4.0, 8.0],
        "town": ["x", "y", "x", "y"],
    })


def test_unknown_column_is_named(table):
    with pytest.raises(MicroaggError, match="'salary'.*not in the table"):
        RoleSpec(quasi_identifiers=("age", "salary")).validate(table)


def test_column_with_two_roles_is_named(table):
    with pytest.raises(MicroaggError, match="'age' has two roles"):
        RoleSpec(quasi_identifiers=("age",), confidential=("age",)).validate(table)


def test_no_quasi_identifier(table):
    with pytest.raises(MicroaggError, match="No quasi-identifier"):
        RoleSpec(confidential=("wage",)).validate(table)


def test_non_numeric_quasi_identifier_is_named(table):
    with pytest.raises(MicroaggError, match=r"'town' is not numeric \(data row 1: 'x'\)"):
        RoleSpec(quasi_identifiers=("age", "town")).validate(table, numeric_qi=True)
    with pytest.raises(MicroaggError, match=r"'town' is not numeric \(data row 1: 'x'\)"):
        RoleSpec(quasi_identifiers=("age", "town"), levels={"town": "numeric"}).validate(table)
    # Without a declared level a text column is a nominal quasi-identifier.
    RoleSpec(quasi_identifiers=("age", "town")).validate(table)


def test_from_mapping_round_trip():
    spec = RoleSpec.from_mapping({"a": "identifier", "b": Role.QUASI_IDENTIFIER,
                                  "c": "confidential"})
    assert spec.identifiers == ("a",) and spec.quasi_identifiers == ("b",)
    assert spec.as_mapping() == {"a": Role.IDENTIFIER, "b": Role.QUASI_IDENTIFIER,
                                 "c": Role.CONFIDENTIAL}
    with pytest.raises(MicroaggError, match="unknown role 'secret'"):
        RoleSpec.from_mapping({"a": "secret"})


def test_spec_is_frozen():
    spec = RoleSpec(quasi_identifiers=("a",))
    with pytest.raises(AttributeError):
        spec.quasi_identifiers = ("b",)


def test_constant_column_is_released_with_a_warning(table):
    table = table.assign(flat=7)
    result = anonymize(table, RoleSpec(quasi_identifiers=("age", "flat")), k=2)
    assert result.passed and (result.masked["flat"] == 7).all()
    assert [w.kind for w in result.warnings] == ["constant-quasi-identifier"]
    assert "'flat'" in result.warnings[0].message


def test_missing_values_say_column_and_count(table):
    table = table.assign(wage=[1.0, np.nan, np.nan, 3.0])
    with pytest.raises(MicroaggError, match=r"'wage' has 2 missing value\(s\) \(first at data row 2\)"):
        anonymize(table, RoleSpec(quasi_identifiers=("age", "wage")), k=2)


def test_infinite_values(table):
    table = table.assign(wage=[1.0, np.inf, 2.0, 3.0])
    with pytest.raises(MicroaggError, match="'wage' has 1 infinite"):
        anonymize(table, RoleSpec(quasi_identifiers=("wage",)), k=2)


def test_fewer_records_than_k(table):
    with pytest.raises(MicroaggError, match="4 record.*fewer than k = 5"):
        anonymize(table, RoleSpec(quasi_identifiers=("age",)), k=5)


def test_standardize_uses_population_std(table):
    z = standardize(table, ("age", "wage"))
    np.testing.assert_allclose(z.X.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(z.X.std(axis=0, ddof=0), 1)
    assert z.std[0] == pytest.approx(np.sqrt(125.0))


def test_a_stray_text_value_in_a_numeric_column_is_located(tmp_path):
    from core import read_table

    rows = "\n".join(f"{i},{20 + i % 50}" for i in range(100)).splitlines()
    rows[56] = "56,unknown"  # data row 57
    path = tmp_path / "ages.csv"
    path.write_text("id,age\n" + "\n".join(rows) + "\n")
    table = read_table(path)
    with pytest.raises(MicroaggError, match=r"'age' is not numeric \(data row 57: 'unknown'\)"):
        anonymize(table, RoleSpec(quasi_identifiers=("age",), identifiers=("id",)), k=3)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3000), st.integers(1, 12),
       st.sampled_from("CF"), st.sampled_from([1.0, 1e-6, 1e9]))
def test_centred_and_std_are_numpys_mean_std_and_deviations(seed, n, d, order, scale):
    """One subtraction serves the standard deviation and the z-scores: the mean, the
    population standard deviation and (raw − mean) / std are numpy's, bit for bit,
    in either memory order, for columns far from 0 and constant ones."""
    from core.data.prepare import centred_and_std
    rng = np.random.default_rng(seed)
    raw = rng.standard_normal((n, d)) * scale + rng.standard_normal(d) * 1e3 * scale
    raw[:, rng.random(d) < 0.2] = 7.25  # constant columns
    raw = np.asarray(raw, order=order)
    mean, centred, std = centred_and_std(raw)
    assert mean.tobytes() == raw.mean(axis=0).tobytes()
    assert std.tobytes() == raw.std(axis=0).tobytes()
    assert centred.tobytes() == (raw - raw.mean(axis=0)).tobytes()
    safe = np.where(std > 0, std, 1.0)
    assert (centred / safe).tobytes() == ((raw - raw.mean(axis=0)) / safe).tobytes()
