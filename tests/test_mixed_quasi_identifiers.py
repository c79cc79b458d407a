"""Ordinal and nominal quasi-identifiers (core.data.encoding): distances, aggregation, every stage."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import MicroaggError, RoleSpec, anonymize
from core.data.encoding import encode, group_aggregate_codes
from core.measures.measure import measure
from core.data.prepare import standardize
from core.data.roles import Level
from core.verify.kanonymity import verify_k_anonymity

GRADES = ("low", "mid", "high", "top")


def mixed_table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "income": rng.lognormal(10, 1, n).round(2),
        "grade": rng.choice(GRADES, n, p=[0.4, 0.3, 0.2, 0.1]),
        "sex": rng.choice(["F", "M"], n),
        "region": rng.choice(["North", "South", "East", "West", "Island"], n),
        "tax": rng.normal(100, 20, n).round(1),
    })


MIXED = RoleSpec(quasi_identifiers=("age", "income", "grade", "sex", "region"),
                 confidential=("tax",), levels={"grade": "ordinal"},
                 orders={"grade": GRADES})


# --- the distance and its embedding -------------------------------------------------

def naive_distance(table: pd.DataFrame, encoding, i: int, j: int) -> float:
    """D(x_i, x_j)² from the module's definitions, attribute by attribute."""
    total = 0.0
    for a in encoding.attributes:
        x, y = table[a.name].iloc[i], table[a.name].iloc[j]
        if a.level is Level.NUMERIC:
            total += ((x - y) / a.std) ** 2
        elif a.level is Level.ORDINAL:
            order = list(a.categories)
            total += (a.scale * (order.index(x) - order.index(y))) ** 2
        else:
            total += a.scale ** 2 * (x != y)
    return total


def test_embedding_distance_equals_the_mixed_distance():
    table = mixed_table(60, 1)
    e = encode(table, MIXED)
    for i, j in itertools.combinations(range(0, 60, 7), 2):
        embedded = float(((e.X[i] - e.X[j]) ** 2).sum())
        assert embedded == pytest.approx(naive_distance(table, e, i, j), rel=1e-12, abs=1e-12)


def test_every_attribute_has_sst_n_around_its_global_aggregate():
    table = mixed_table(500, 2)
    e = encode(table, MIXED)
    n = len(table)
    for j, a in enumerate(e.attributes):
        if a.level is Level.NUMERIC:
            assert float((e.X[:, j] ** 2).sum()) == pytest.approx(n)
            continue
        one_group = np.zeros(n, dtype=np.int64)
        codes = e.values[:, j].astype(np.int64)
        released = group_aggregate_codes(codes, one_group, a.level, len(a.categories))
        whole = e.values.copy()
        whole[:, j] = released[0]
        assert e.squared_distances(whole)[:, j].sum() == pytest.approx(n)


def test_numeric_only_embedding_is_bit_for_bit_the_z_scores():
    table = mixed_table(300, 3)
    roles = RoleSpec(quasi_identifiers=("age", "income", "tax"))
    assert np.array_equal(encode(table, roles).X,
                          standardize(table, roles.quasi_identifiers).X)


def test_levels_default_from_the_data_and_follow_declarations():
    table = mixed_table(50, 4)
    e = encode(table, RoleSpec(quasi_identifiers=("age", "grade", "sex")))
    assert [a.level for a in e.attributes] == [Level.NUMERIC, Level.NOMINAL, Level.NOMINAL]
    e = encode(table, RoleSpec(quasi_identifiers=("age", "sex"),
                               levels={"age": "ordinal"}))
    assert e.attributes[0].level is Level.ORDINAL
    assert list(e.attributes[0].categories) == sorted(table["age"].unique())


def test_an_ordinal_order_must_cover_every_value():
    table = mixed_table(50, 5)
    roles = RoleSpec(quasi_identifiers=("grade",), orders={"grade": ("low", "mid", "high")})
    first = int(np.flatnonzero(table["grade"].to_numpy() == "top")[0]) + 1
    with pytest.raises(MicroaggError, match=rf"'grade' has the value 'top' \(data row {first}\)"):
        encode(table, roles)
    with pytest.raises(MicroaggError, match="lists 'mid' twice"):
        encode(table, RoleSpec(quasi_identifiers=("grade",),
                               orders={"grade": ("low", "mid", "mid", "high", "top")}))


def test_an_order_of_a_column_of_numbers_is_matched_by_value():
    """The order's "2.0" (as a file or the command line writes it) is the column's 2.0,
    and an order naming one value twice as 1 and 1.0 is refused by name, not by a
    pandas error; a value outside the order is named as the file shows it."""
    table = pd.DataFrame({"score": [1.0, 1.5, 2.0, 2.0, 1.5, 1.0],
                          "age": [20, 21, 22, 23, 24, 25]})
    levels = {"score": "ordinal"}
    for order in (("1.0", "1.5", "2.0"), ("1", "1.5", "2"), (1, 1.5, 2)):
        roles = RoleSpec(quasi_identifiers=("score", "age"), levels=levels,
                         orders={"score": order})
        assert list(encode(table, roles).attributes[0].categories) == [1.0, 1.5, 2.0]
    with pytest.raises(MicroaggError, match="lists '1.0' twice"):
        encode(table, RoleSpec(quasi_identifiers=("score",), levels=levels,
                               orders={"score": (1, 1.0, 1.5, 2)}))
    with pytest.raises(MicroaggError, match=r"has the value 2\.0 \(data row 3\)"):
        encode(table, RoleSpec(quasi_identifiers=("score",), levels=levels,
                               orders={"score": (1, 1.5)}))


def test_a_numeric_column_can_be_ordinal_with_an_order_given_as_text():
    table = pd.DataFrame({"size": [1, 2, 3, 3, 2, 1, 3, 3]})
    e = encode(table, RoleSpec(quasi_identifiers=("size",), orders={"size": ("3", "1", "2")}))
    assert list(e.attributes[0].categories) == [3, 1, 2]
    assert e.values[:, 0].tolist() == [1, 2, 0, 0, 2, 1, 0, 0]


def test_missing_and_constant_categorical_columns_are_refused():
    table = pd.DataFrame({"sex": ["F", None, "M", "F"], "one": ["a"] * 4, "x": [1, 2, 3, 4]})
    with pytest.raises(MicroaggError, match=r"'sex' has 1 missing value\(s\) \(first at data row 2\)"):
        encode(table, RoleSpec(quasi_identifiers=("sex",)))
    with pytest.raises(MicroaggError, match="'one' is constant"):
        encode(table, RoleSpec(quasi_identifiers=("x", "one")))


def test_text_that_is_all_numbers_is_nominal_by_default():
    table = pd.DataFrame({"zip": ["01234", "01234", "20500", "20500", "99501", "99501"],
                          "x": [1.0, 2, 3, 4, 5, 6]})
    e = encode(table, RoleSpec(quasi_identifiers=("zip", "x")))
    assert e.attributes[0].level is Level.NOMINAL
    assert list(e.attributes[0].categories) == ["01234", "20500", "99501"]


def test_a_number_column_with_a_stray_word_is_not_taken_for_categories():
    table = pd.DataFrame({"age": [str(20 + i) for i in range(30)]})
    table.loc[11, "age"] = "unknown"
    with pytest.raises(MicroaggError, match=r"'age' is not numeric \(data row 12: 'unknown'\)"):
        anonymize(table, RoleSpec(quasi_identifiers=("age",)), k=3)
    declared = RoleSpec(quasi_identifiers=("age",), levels={"age": "nominal"})
    assert anonymize(table, declared, k=3).passed


def test_categorical_dtype_gives_the_order_of_its_categories():
    """Stata value labels arrive as a categorical: its categories are the order."""
    labels = pd.Categorical(["mid", "low", "top", "mid", "high", "low"],
                            categories=["low", "mid", "high", "top"], ordered=True)
    table = pd.DataFrame({"grade": labels, "x": [1.0, 2, 3, 4, 5, 6]})
    e = encode(table, RoleSpec(quasi_identifiers=("grade", "x")))
    assert e.attributes[0].level is Level.NOMINAL  # categories are nominal by default
    e = encode(table, RoleSpec(quasi_identifiers=("grade", "x"), levels={"grade": "ordinal"}))
    assert list(e.attributes[0].categories) == ["low", "mid", "high", "top"]
    result = anonymize(table, RoleSpec(quasi_identifiers=("grade", "x"),
                                       levels={"grade": "ordinal"}), k=2)
    assert isinstance(result.masked["grade"].dtype, pd.CategoricalDtype)
    assert set(result.masked["grade"]) <= set(labels)


def test_stata_value_labels_are_read_as_ordered_categories(tmp_path):
    from core import read_table

    frame = pd.DataFrame({"edu": np.array([1, 2, 3, 2, 1, 3, 3, 2], dtype=np.int8),
                          "age": np.arange(8, dtype=np.float64) + 20})
    path = tmp_path / "labelled.dta"
    frame.to_stata(path, write_index=False,
                   value_labels={"edu": {1: "primary", 2: "secondary", 3: "tertiary"}})
    table = read_table(path)
    roles = RoleSpec(quasi_identifiers=("edu", "age"), levels={"edu": "ordinal"})
    e = encode(table, roles)
    assert list(e.attributes[0].categories) == ["primary", "secondary", "tertiary"]


# --- aggregation ----------------------------------------------------------------------

def naive_aggregate(codes, level, n_categories):
    codes = sorted(codes)
    if level is Level.NOMINAL:
        counts = [codes.count(c) for c in range(n_categories)]
        return counts.index(max(counts))
    low, high = codes[(len(codes) - 1) // 2], codes[len(codes) // 2]
    mean = sum(codes) / len(codes)
    return min((low, high), key=lambda c: (abs(c - mean), c))


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 5)), min_size=1, max_size=60),
       st.sampled_from([Level.ORDINAL, Level.NOMINAL]))
def test_group_aggregate_codes_against_a_naive_reference(pairs, level):
    from core.data import categories
    labels = np.array([g for g, _ in pairs])
    codes = np.array([c for _, c in pairs])
    chosen = group_aggregate_codes(codes, labels, level, 6)
    # both ways (a table of counts, sorting) give it, whichever the size picks
    counts = np.bincount(labels)
    for way in (categories._from_tallies, categories._from_sorted):
        assert np.array_equal(way(codes, labels, counts, level, 6), chosen)
    for g in range(labels.max() + 1):
        members = codes[labels == g].tolist()
        if not members:
            assert chosen[g] == -1
            continue
        assert chosen[g] == naive_aggregate(members, level, 6)
        assert chosen[g] in members  # never a category no member holds
        if level is Level.ORDINAL:  # a median: at most half on either side
            assert sum(c < chosen[g] for c in members) <= len(members) / 2
            assert sum(c > chosen[g] for c in members) <= len(members) / 2


# --- every stage with mixed quasi-identifiers ------------------------------------------

@st.composite
def mixed_tables(draw):
    n = draw(st.integers(8, 60))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    n_nominal = draw(st.integers(1, 3))
    columns = {}
    for j in range(draw(st.integers(0, 2))):
        columns[f"num{j}"] = rng.integers(0, draw(st.integers(2, 6)), n).astype(float)
    for j in range(n_nominal):
        m = draw(st.integers(2, 5))
        columns[f"nom{j}"] = rng.choice([f"c{i}" for i in range(m)], n)
    levels, orders = {}, {}
    if draw(st.booleans()):
        columns["ord"] = rng.choice(GRADES, n)
        levels["ord"] = "ordinal"
        orders["ord"] = GRADES
    table = pd.DataFrame(columns)
    # Every quasi-identifier must vary (a constant one is refused up front).
    for c in table.columns:
        first, second = {"num": (0.0, 1.0), "nom": ("c0", "c1"), "ord": ("low", "top")}[c[:3]]
        table.loc[0, c], table.loc[1, c] = first, second
    k = draw(st.integers(2, max(2, n // 3)))
    method = draw(st.sampled_from(["mdav", "cbfs", "tfrp", "gsms", "vmdav", "pcp"]))
    return table, RoleSpec(quasi_identifiers=tuple(table.columns), levels=levels,
                           orders=orders), k, method


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_tables())
def test_mixed_releases_are_k_anonymous_constant_per_class_and_keep_the_domain(case):
    table, roles, k, method = case
    before = table.copy()
    result = anonymize(table, roles, method, k=k)
    pd.testing.assert_frame_equal(table, before)  # the input is never modified
    masked = result.masked
    sizes = np.bincount(result.labels)
    assert sizes[sizes > 0].min() >= k
    for column in roles.quasi_identifiers:
        per_group = pd.Series(masked[column].to_numpy()).groupby(result.labels).nunique()
        assert (per_group == 1).all(), column  # constant on every class
        if not column.startswith("num"):
            assert set(masked[column]) <= set(table[column]), column
    check = verify_k_anonymity(table, masked, roles, k)
    assert check.passed
    assert check.il == pytest.approx(result.metrics.il, rel=1e-9, abs=1e-9)
    assert result.measures.il == pytest.approx(result.metrics.il, rel=1e-9, abs=1e-9)


def test_released_categories_outside_the_original_fail_verification():
    table = mixed_table(40, 6)
    result = anonymize(table, MIXED, k=4)
    forged = result.masked.copy()
    forged.loc[forged["sex"] == forged["sex"].iloc[0], "sex"] = "X"
    check = verify_k_anonymity(table, forged, MIXED, 4)
    assert not check.passed
    assert any("'sex' releases" in note for note in check.notes)


def test_strata_blocks_refinement_and_t_closeness_take_mixed_quasi_identifiers():
    table = mixed_table(400, 7)
    roles = RoleSpec(quasi_identifiers=("age", "income", "grade", "region"),
                     confidential=("tax",), strata=("sex",), levels={"grade": "ordinal"},
                     orders={"grade": GRADES})
    stratified = anonymize(table, roles, "mdav", k=5, refine="igd")
    assert stratified.passed
    for _, part in stratified.masked.groupby(list(roles.quasi_identifiers) + ["sex"]):
        assert len(part) >= 5
    blocked = anonymize(table, MIXED, "mdav", k=4, blocks="age,grade;income,sex,region")
    assert blocked.passed and blocked.verification.smallest_by_block[0] >= 4
    for method, t in (("tc-merge", 0.3), ("tc-kfirst", 0.3), ("tc-tfirst", 0.3),
                      ("tc-bucket", 3.0)):
        closed = anonymize(table, MIXED, method, k=5, t=t)
        assert closed.passed and closed.tcloseness.passed, method
        assert set(closed.masked["region"]) <= set(table["region"])


@pytest.mark.parametrize("method, params", [
    ("optimal-univariate", {}), ("individual-ranking", {}), ("zscores", {}),
    ("tc-merge", {"base": "zscores", "t": 0.3}),
])
def test_methods_that_need_an_order_refuse_nominal_attributes(method, params):
    table = mixed_table(60, 8)
    roles = RoleSpec(quasi_identifiers=("region",), confidential=("tax",))
    with pytest.raises(MicroaggError, match="'region' is nominal"):
        anonymize(table, roles, method, k=3, **params)


def test_ordered_methods_take_an_ordinal_attribute_and_mic1d_refuses_it():
    table = mixed_table(60, 9)
    roles = RoleSpec(quasi_identifiers=("grade",), orders={"grade": GRADES})
    result = anonymize(table, roles, "optimal-univariate", k=3)
    assert result.passed and set(result.masked["grade"]) <= set(GRADES)
    with pytest.raises(MicroaggError, match="'grade' is ordinal"):
        anonymize(table, roles, "mic1d", k=20)


# --- the measures -----------------------------------------------------------------------

def test_linkage_uses_the_mixed_distance_and_id_counts_kept_categories():
    table = mixed_table(80, 10)
    result = anonymize(table, MIXED, k=4)
    e = encode(table, MIXED)
    released, _ = e.values_of(result.masked)
    Z, Z_masked = e.X, e.embed(released)
    credit = 0.0
    for i in range(len(table)):  # brute-force record linkage, ties split the credit
        d = ((Z - Z_masked[i]) ** 2).sum(axis=1)
        nearest = np.flatnonzero(d <= d.min() * (1 + 1e-12) + 1e-300)
        credit += (i in nearest) / len(nearest)
    m = result.measures
    assert m.dld == pytest.approx(100 * credit / len(table))
    alone = measure(table, result.masked, RoleSpec(quasi_identifiers=("region",)))
    kept = (table["region"] == result.masked["region"]).mean()
    assert alone.id == pytest.approx(100 * kept)


def test_numeric_only_measures_are_unchanged_by_the_mixed_code():
    table = mixed_table(200, 11)
    roles = RoleSpec(quasi_identifiers=("age", "income"))
    result = anonymize(table, roles, k=5)
    assert result.measures.il == pytest.approx(result.metrics.il, rel=1e-12)
    assert result.verification.il == pytest.approx(result.metrics.il, rel=1e-12)


def _mostly_numbers_but_reference(series: pd.Series):
    """Every value parsed (the level check before it parsed the distinct values once)."""
    present = series.dropna()
    as_number = pd.to_numeric(present, errors="coerce")
    bad = np.flatnonzero(as_number.isna().to_numpy())
    if len(present) and bad.size and as_number.notna().mean() > 0.5:
        row = int(np.flatnonzero(series.notna().to_numpy())[bad[0]]) + 1
        return row, present.iloc[bad[0]]
    return None


_CELLS = st.sampled_from(["12", " 7", "1e3", "-0.5", "nan", "unknown", "", "x", "٣",
                          "0x10", "1,5", None])


@settings(max_examples=80, deadline=None)
@given(st.lists(_CELLS, min_size=0, max_size=40),
       st.sampled_from([object, "string[python]", "string[pyarrow]"]),
       st.lists(st.one_of(st.integers(-5, 5), st.floats(-1, 1), st.booleans()),
                max_size=5))
def test_the_level_check_parses_each_distinct_value_once_with_the_same_answer(
        cells, dtype, objects):
    from core.data.roles import mostly_numbers_but
    series = pd.Series(cells, dtype=dtype)
    assert mostly_numbers_but(series) == _mostly_numbers_but_reference(series)
    mixed = pd.Series(list(objects) + cells, dtype=object)  # numbers, booleans, text
    assert mostly_numbers_but(mixed) == _mostly_numbers_but_reference(mixed)


def _codes_reference(series: pd.Series, categories: np.ndarray) -> np.ndarray:
    """Every row looked up in the categories (the encoding's codes before)."""
    index = pd.Index(categories, dtype=object)
    return np.asarray(index.get_indexer(pd.Index(series.astype(object), dtype=object)),
                      dtype=np.int64)


_VALUES = st.one_of(st.sampled_from(["a", "b", "01", "1", "", "é"]), st.integers(-2, 2),
                    st.sampled_from([0.0, -0.0, 1.5, 2.0, True, False]), st.none(),
                    st.just(float("nan")))


@settings(max_examples=120, deadline=None)
@given(st.lists(_VALUES, max_size=30), st.lists(_VALUES, max_size=8),
       st.sampled_from(["object", "string", "numbers", "categorical"]))
def test_codes_look_up_each_distinct_value_once_with_every_rows_answer(values, extra, kind):
    from core.data.encoding import _codes
    series = pd.Series(values, dtype=object)
    if kind == "string":
        series = pd.Series([None if v is None else str(v) for v in values],
                           dtype="string[pyarrow]")
    elif kind == "numbers":
        series = pd.Series([v for v in values if isinstance(v, (int, float))],
                           dtype=np.float64)
    elif kind == "categorical":
        series = pd.Series([None if v is None else str(v) for v in values],
                           dtype="category")
    present = list(pd.unique(series.dropna()))
    given = present[::2] + [v for v in extra if v is not None and v == v]
    categories = pd.unique(np.asarray(given, dtype=object))  # as an encoding's: distinct
    assert np.array_equal(_codes(series, categories), _codes_reference(series, categories))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 400), st.integers(1, 40), st.integers(0, 10**6),
       st.sampled_from([Level.ORDINAL, Level.NOMINAL]))
def test_group_aggregate_codes_count_or_sort_alike_at_size(n, groups, m, seed, level):
    from core.data import categories
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, groups, n) * rng.integers(1, 3)  # some labels unused
    codes = np.minimum(rng.geometric(0.3, n) - 1, m - 1)  # skewed, many ties
    counts = np.bincount(labels)
    assert np.array_equal(categories._from_tallies(codes, labels, counts, level, m),
                          categories._from_sorted(codes, labels, counts, level, m))


@settings(max_examples=80, deadline=None)
@given(st.lists(_VALUES, min_size=1, max_size=25),
       st.sampled_from(["object", "string", "numbers", "integers", "categorical",
                        "booleans"]), st.integers(0, 10**6))
def test_a_released_category_column_is_the_one_made_value_by_value(values, kind, seed):
    from core.data.categories import _released_values, released_series
    from core.data.encoding import _categories
    if kind == "string":
        original = pd.Series([None if v is None else str(v) for v in values],
                             dtype="string[pyarrow]")
    elif kind == "numbers":
        original = pd.Series([float(v) for v in values if isinstance(v, (int, float))]
                             or [0.5], dtype=np.float64)
    elif kind == "integers":
        original = pd.Series([int(v) for v in values if isinstance(v, int)] or [3])
    elif kind == "categorical":
        original = pd.Series([None if v is None else str(v) for v in values],
                             dtype="category")
    elif kind == "booleans":
        original = pd.Series([bool(v) for v in values if v is not None] or [True])
    else:
        original = pd.Series(values, dtype=object)
    original.index = original.index * 3 + 7  # a released column keeps the table's index
    if original.dropna().empty:
        return
    categories = _categories(original, Level.NOMINAL, None)
    codes = np.random.default_rng(seed).integers(0, len(categories), len(original))
    made = released_series(original, categories, codes)
    reference = _released_values(original, categories, codes)  # value by value
    pd.testing.assert_series_equal(made, reference)
