"""Records with missing values: ``missing="stop"`` refuses, ``"exclude"`` releases them
unmasked and flagged, and the guarantee holds on the masked rest (independent verifier)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core import MicroaggError, RoleSpec, anonymize, prepare_run
from core.cli.main import main
from core.pipeline.missing import FLAG_COLUMN, MissingValuesError, flag_column_name
from core.verify.kanonymity import verify_k_anonymity
from core.verify.tcloseness import verify_t_closeness


def _masked_part(table, result, roles):
    """The original and released rows the verifier must cover: flag 0."""
    flag = result.masked[result.flag_column] if result.flag_column else \
        pd.Series(0, index=result.masked.index)
    keep = (flag == 0).to_numpy()
    released = result.masked.loc[keep].drop(columns=[result.flag_column] if
                                            result.flag_column else [])
    return table.loc[keep], released


def _assert_released_as_original(table, result, roles, expected_rows):
    flag = result.flag_column
    assert flag is not None
    flagged = np.flatnonzero(result.masked[flag].to_numpy() == 1)
    assert flagged.tolist() == list(expected_rows)
    assert result.excluded.tolist() == list(expected_rows)
    assert set(result.masked[flag].unique()) <= {0, 1}
    kept_columns = [c for c in table.columns if c not in roles.identifiers]
    assert list(result.masked.columns) == kept_columns + [flag]
    for column in kept_columns:
        released = result.masked[column].iloc[flagged].tolist()
        original = table[column].iloc[flagged].tolist()
        for r, o in zip(released, original):
            assert (pd.isna(r) and pd.isna(o)) or r == o, (column, r, o)
    kinds = [w.kind for w in result.warnings]
    assert "unmasked_missing" in kinds
    message = result.warnings[kinds.index("unmasked_missing")].message
    assert message.startswith(f"{len(flagged):,} records with missing values") and \
        f"'{flag}'" in message


values = st.one_of(st.none(), st.integers(0, 50).map(float))


@st.composite
def tables_with_gaps(draw):
    n = draw(st.integers(6, 30))
    a = draw(st.lists(values, min_size=n, max_size=n))
    b = draw(st.lists(values, min_size=n, max_size=n))
    other = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    return pd.DataFrame({"id": [f"P{i}" for i in range(n)],
                         "a": pd.Series(a, dtype=float), "b": pd.Series(b, dtype=float),
                         "other": other})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables_with_gaps(), k=st.integers(2, 3))
def test_exclude_releases_every_row_and_protects_the_masked_ones(table, k):
    gaps = table[["a", "b"]].isna().any(axis=1).to_numpy()
    complete = table.loc[~gaps]
    assume(gaps.any() and (~gaps).sum() >= k)
    assume(complete["a"].nunique() > 1 and complete["b"].nunique() > 1)
    roles = RoleSpec(quasi_identifiers=("a", "b"), identifiers=("id",))
    before = table.copy(deep=True)
    result = anonymize(table, roles, "mdav", k=k, missing="exclude")
    pd.testing.assert_frame_equal(table, before)
    assert len(result.masked) == len(table)
    assert result.masked.index.equals(table.index)
    assert int(result.masked[FLAG_COLUMN].sum()) == int(gaps.sum())
    _assert_released_as_original(table, result, roles, np.flatnonzero(gaps))
    original, released = _masked_part(table, result, roles)
    verdict = verify_k_anonymity(original, released, roles, k)
    assert verdict.passed and verdict.smallest_class >= k
    assert result.metrics.n_records == len(table) - int(gaps.sum())
    assert (result.labels[gaps] == -1).all() and (result.labels[~gaps] >= 0).all()
    summary = result.summary()
    assert summary["missing"] == "exclude"
    assert summary["n_unmasked_missing"] == int(gaps.sum())
    assert f"{result.metrics.n_records:,} masked records" in summary["measures_cover"]


def test_stop_is_the_default_and_names_column_and_row():
    table = pd.DataFrame({"a": [1.0, 2.0, 3.0, np.nan, 5.0, 6.0], "b": [6, 5, 4, 3, 2, 1]})
    roles = RoleSpec(quasi_identifiers=("a", "b"))
    before = table.copy()
    with pytest.raises(MissingValuesError,
                       match=r"'a' has 1 missing value\(s\) \(first at data row 4\).*"
                             "exclude those records") as caught:
        anonymize(table, roles, k=2)
    assert (caught.value.column, caught.value.count, caught.value.row) == ("a", 1, 4)
    with pytest.raises(MissingValuesError):
        anonymize(table, roles, k=2, missing="stop")
    pd.testing.assert_frame_equal(table, before)


def test_no_flag_column_when_nothing_is_missing():
    table = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [4, 3, 2, 1]})
    result = anonymize(table, RoleSpec(quasi_identifiers=("a", "b")), k=2, missing="exclude")
    assert FLAG_COLUMN not in result.masked.columns and result.flag_column is None
    assert result.excluded.size == 0 and result.summary()["n_unmasked_missing"] == 0
    assert "unmasked_missing" not in [w.kind for w in result.warnings]


def test_unknown_option_is_refused():
    table = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(MicroaggError, match="'missing' option must be one of 'stop', 'exclude'"):
        anonymize(table, RoleSpec(quasi_identifiers=("a",)), k=2, missing="drop")


def test_all_or_too_many_excluded_is_refused():
    table = pd.DataFrame({"a": [np.nan, 1.0, np.nan, 2.0], "b": [1.0, np.nan, 2.0, 3.0]})
    roles = RoleSpec(quasi_identifiers=("a", "b"))
    with pytest.raises(MicroaggError, match="leaving 1, fewer than k = 2"):
        anonymize(table, roles, k=2, missing="exclude")
    with pytest.raises(MicroaggError, match="Every one of the 3 records"):
        anonymize(table.iloc[:3], roles, k=2, missing="exclude")


def test_flag_name_does_not_overwrite_a_column():
    assert flag_column_name(["a", FLAG_COLUMN, f"{FLAG_COLUMN}_1"]) == f"{FLAG_COLUMN}_2"
    table = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0, 5.0], FLAG_COLUMN: [7, 7, 7, 7, 7]})
    result = anonymize(table, RoleSpec(quasi_identifiers=("a",)), k=2, missing="exclude")
    assert result.flag_column == f"{FLAG_COLUMN}_1"
    assert result.masked[FLAG_COLUMN].tolist() == [7] * 5
    assert result.masked[f"{FLAG_COLUMN}_1"].tolist() == [0, 0, 1, 0, 0]


def test_strata_with_missing_values_are_set_aside():
    table = pd.DataFrame({"region": ["N", "N", None, "S", "S", "N", "S", None],
                          "age": [20.0, 22, 30, 40, 41, 25, 45, 50],
                          "pay": [1.0, 2, 3, 4, 5, 6, 7, 8]})
    roles = RoleSpec(quasi_identifiers=("age", "pay"), strata=("region",))
    result = anonymize(table, roles, k=3, missing="exclude")
    _assert_released_as_original(table, result, roles, [2, 7])
    original, released = _masked_part(table, result, roles)
    assert verify_k_anonymity(original, released, roles, 3).passed
    assert set(released["region"]) == {"N", "S"}


def test_ordinal_and_nominal_quasi_identifiers_with_pandas_na():
    table = pd.DataFrame({
        "grade": pd.Series(["low", "mid", pd.NA, "high", "mid", "low", "high", "mid"],
                           dtype="string"),
        "sex": pd.Series(["F", "M", "F", pd.NA, "M", "F", "M", "F"], dtype="string"),
        "age": [20.0, 30, 40, 50, 60, 70, 80, 90]})
    roles = RoleSpec(quasi_identifiers=("grade", "sex", "age"),
                     levels={"sex": "nominal"}, orders={"grade": ("low", "mid", "high")})
    before = table.copy()
    with pytest.raises(MissingValuesError, match=r"'grade' has 1 missing value\(s\) "
                                                 r"\(first at data row 3\)"):
        anonymize(table, roles, k=2)
    result = anonymize(table, roles, k=2, missing="exclude")
    pd.testing.assert_frame_equal(table, before)
    _assert_released_as_original(table, result, roles, [2, 3])
    original, released = _masked_part(table, result, roles)
    assert verify_k_anonymity(original, released, roles, 2).passed
    assert set(released["grade"].dropna()) <= {"low", "mid", "high"}


def test_t_closeness_sets_aside_missing_confidential_values():
    rng = np.random.default_rng(3)
    table = pd.DataFrame({"age": rng.integers(20, 70, 40).astype(float),
                          "income": rng.integers(100, 900, 40).astype(float)})
    table.loc[[5, 17], "income"] = np.nan
    roles = RoleSpec(quasi_identifiers=("age",), confidential=("income",))
    with pytest.raises(MissingValuesError, match="Confidential column 'income' has 2"):
        anonymize(table, roles, "tc-merge", k=3, t=0.3)
    result = anonymize(table, roles, "tc-merge", k=3, t=0.3, missing="exclude")
    _assert_released_as_original(table, result, roles, [5, 17])
    original, released = _masked_part(table, result, roles)
    assert verify_t_closeness(released, ["age"], ["income"], 0.3, original=original).passed


def test_a_k_anonymity_method_sets_aside_missing_confidential_values_too():
    # The measures' per-class EMD needs every confidential value, whatever the method.
    table = pd.DataFrame({"age": [20.0, 21, 40, 41, 42], "income": [1.0, np.nan, 3, 4, 5]})
    roles = RoleSpec(quasi_identifiers=("age",), confidential=("income",))
    with pytest.raises(MissingValuesError, match="Confidential column 'income' has 1 "
                                                 r"missing value\(s\) \(first at data row 2\)"):
        anonymize(table, roles, k=2)
    result = anonymize(table, roles, k=2, missing="exclude")
    _assert_released_as_original(table, result, roles, [1])


def test_plan_holds_the_set_aside_records():
    table = pd.DataFrame({"a": [1.0, np.nan, 3.0, 4.0, 5.0]})
    plan = prepare_run(table, RoleSpec(quasi_identifiers=("a",)), k=2, missing="exclude")
    assert plan.excluded.tolist() == [1] and len(plan.table) == 4
    assert plan.original is table and plan.options["missing"] == "exclude"


def test_cli_missing_option(tmp_path, capsys):
    table = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0, 5.0, 6.0], "b": [6, 5, 4, 3, 2, 1]})
    source = tmp_path / "in.csv"
    table.to_csv(source, index=False)
    out = tmp_path / "out.csv"
    code = main(["anonymize", str(source), "-o", str(out), "--qi", "a", "b", "--k", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "'a' has 1 missing value(s) (first at data row 3)" in err
    assert "--missing exclude" in err and "Traceback" not in err and not out.exists()
    code = main(["anonymize", str(source), "-o", str(out), "--qi", "a", "b", "--k", "2",
                 "--missing", "exclude"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "released unmasked" in captured.err
    written = pd.read_csv(out)
    assert written[FLAG_COLUMN].tolist() == [0, 0, 1, 0, 0, 0]
    assert np.isnan(written["a"][2]) and written["b"][2] == 4


def test_a_later_error_says_how_rows_are_counted_after_setting_aside():
    table = pd.DataFrame({"a": [1, None, 3, 4, 5, 6, 7],
                          "b": ["1", "2", "3", "x", "5", "6", "7"]})
    with pytest.raises(MicroaggError, match=r"'b' is not numeric \(data row 3: 'x'\).*"
                                            "counted among the 6 records left"):
        anonymize(table, RoleSpec(quasi_identifiers=("a", "b")), k=2, missing="exclude")


def test_an_infinite_value_is_named_with_its_column_and_row():
    from core.data.prepare import numeric_matrix

    table = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, -np.inf, np.inf]})
    with pytest.raises(MicroaggError, match=r"Column 'b' has 2 infinite value\(s\) "
                                            r"\(first at data row 2\)"):
        numeric_matrix(table, ["a", "b"])
