"""A verified release that should not be published as it is says so, everywhere."""

from __future__ import annotations

import importlib
import io
import json
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import RoleSpec, anonymize, read_table
from core.cli.console import Progress, log_path
from core.cli.main import main
from core.pipeline.warnings import column_relations
from core.report import summary_frame, write_report
from tests.conftest import CENSUS_COLUMNS, shared_data


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(shared_data("adult.csv"))


def kinds(result) -> list[str]:
    return [w.kind for w in result.warnings]


def test_a_kept_column_that_maps_one_to_one_to_a_masked_one_is_flagged(adult):
    roles = RoleSpec(quasi_identifiers=("age", "education-num", "hours-per-week"),
                     confidential=("prediction",))
    result = anonymize(adult, roles, k=5)
    assert result.passed and kinds(result) == ["kept-column-reveals"]
    assert "'education'" in result.warnings[0].message
    assert "one-to-one" in result.warnings[0].message
    # Masking education too removes the warning.
    both = RoleSpec(quasi_identifiers=("age", "education-num", "education",
                                       "hours-per-week"), confidential=("prediction",))
    assert "kept-column-reveals" not in kinds(anonymize(adult.head(3000), both, k=5))


def test_a_coarsening_of_a_masked_attribute_is_flagged_but_unique_values_are_not():
    n = 600
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"age": [20 + i % 50 for i in range(n)],
                          "income": [1000.0 + 7 * i for i in range(n)]})
    table["age_band"] = (table["age"] // 10).astype(str)  # determined by age
    table["spend"] = rng.permutation(table["income"].to_numpy()) * 0.3  # unique, unrelated
    roles = RoleSpec(quasi_identifiers=("age", "income"), confidential=("spend",))
    found = anonymize(table, roles, k=5).warnings
    assert [w.kind for w in found] == ["kept-column-reveals"]
    assert "'age_band'" in found[0].message and "is determined by" in found[0].message


@pytest.mark.parametrize("relation", ["increasing", "decreasing"])
def test_a_kept_column_in_the_order_of_a_masked_one_is_flagged(relation):
    """Two columns of distinct values are one-to-one trivially, but not in order: a kept
    column that is a strictly monotone function of a quasi-identifier gives its original
    order (and values, to whoever knows the function) however many values both have."""
    rng = np.random.default_rng(2)
    table = pd.DataFrame({"age": rng.integers(20, 70, 30).astype(float),
                          "h": rng.normal(170, 8, 30).round(1)})
    table["birth_year"] = (2024 - table["age"] if relation == "decreasing"
                           else table["age"] * 12)
    assert table["age"].nunique() > 15  # more than half the records: not a coding
    result = anonymize(table, RoleSpec(quasi_identifiers=("age", "h")), "mdav", k=5)
    assert result.passed
    found = [w for w in result.warnings if w.kind == "kept-column-reveals"]
    assert len(found) == 1 and found[0].message.startswith(
        "Column 'birth_year', released as it is, is a monotone function of "
        "quasi-identifier 'age' in the original table: whoever reads 'birth_year' learns "
        "the original order of 'age'")


@pytest.mark.parametrize("column, flagged", [
    (lambda q: q ** 3, True),                  # strictly increasing
    (lambda q: -q.round(6), True),             # reversed
    (lambda q: q.where(q.index != 7), True),   # a gap hides nothing of the other rows
    (lambda q: q.abs(), False),                # not monotone
    (lambda q: q.rank().astype(str), True),    # text of numbers, in order
    (lambda q: q.rank().map(lambda r: f"r{r:04.0f}").sample(frac=1, random_state=0)
     .to_numpy(), False),                      # text of numbers, in no order
])
def test_monotone_functions_of_a_quasi_identifier(column, flagged):
    rng = np.random.default_rng(5)
    table = pd.DataFrame({"q": rng.normal(size=200)})
    table["c"] = column(table["q"])
    with mock.patch("core.pipeline.relations._SAMPLE", 50):  # the first rows, then all
        found = column_relations(table, RoleSpec(quasi_identifiers=("q",)))
    assert bool(found) is flagged
    if flagged:
        assert found[0].relation == "is a monotone function of"


def test_an_order_shared_by_chance_in_a_tiny_table_is_not_flagged():
    """Seven distinct values in the same order happen by chance 1 time in 2,520."""
    table = pd.DataFrame({"q": np.arange(7.0), "c": np.arange(7.0) ** 2})
    assert column_relations(table, RoleSpec(quasi_identifiers=("q",))) == ()
    table = pd.DataFrame({"q": np.arange(8.0), "c": np.arange(8.0) ** 2})
    assert len(column_relations(table, RoleSpec(quasi_identifiers=("q",)))) == 1


def test_a_rounded_copy_of_a_masked_attribute_is_flagged_with_what_it_undoes(sample_path):
    """Income masked in groups of five, and income in thousands kept beside it: the
    release verifies, and the kept column leaves most records alone in their class."""
    table = read_table(sample_path)
    table["income_k"] = (table["income"] / 1000).round()
    roles = RoleSpec(quasi_identifiers=("age", "income", "hours_worked"),
                     identifiers=("person_id",), confidential=("income_k",))
    result = anonymize(table, roles, "mdav", k=5)
    assert result.passed and table["income"].nunique() > len(table) / 2
    found = [w.message for w in result.warnings if w.kind == "kept-column-reveals"]
    keys = ["age", "income", "hours_worked"]
    alone = int((result.masked.groupby([*keys, "income_k"]).size() == 1).sum())
    assert alone > len(table) / 2
    assert found == [
        "Column 'income_k', released as it is, is a rounding or banding of "
        "quasi-identifier 'income' in the original table: whoever reads 'income_k' learns "
        "each record's band of the original 'income', and can tell apart records whose "
        f"'income' was masked together. Read beside the released quasi-identifiers, it "
        f"leaves {alone:,} of the {len(table):,} records alone in their class (0 without "
        "it). Make 'income_k' a quasi-identifier too, or leave it out."]
    shuffled = table.assign(income_k=table["income_k"].sample(frac=1, random_state=0)
                            .to_numpy())  # the same values, unrelated to income
    assert "kept-column-reveals" not in kinds(anonymize(shuffled, roles, "mdav", k=5))


@pytest.mark.parametrize("column, flagged", [
    (lambda q: (q / 10).round(), True),                   # rounding
    (lambda q: -(q // 25), True),                         # bands, reversed
    (lambda q: q.clip(upper=q.quantile(0.9)), True),      # top-coding
    (lambda q: pd.cut(q, [-1, 30, 60, 999]).astype(str), True),  # text bands
    (lambda q: (q > 50).map({True: "b", False: "a"}), True),     # a yes/no flag
    (lambda q: pd.Series(np.where(q > 50, "x", "y")).where(q.index != 3), True),  # gap
    (lambda q: (q // 25) % 2, False),                     # two bands, four intervals
    (lambda q: pd.Series(np.random.default_rng(1).integers(0, 3, len(q))), False),
])
def test_roundings_and_bands_of_a_quasi_identifier(column, flagged):
    rng = np.random.default_rng(4)
    table = pd.DataFrame({"q": rng.permutation(200) * 0.5})
    table["c"] = column(table["q"])
    with mock.patch("core.pipeline.relations._SAMPLE", 50):  # the first rows, then all
        found = column_relations(table, RoleSpec(quasi_identifiers=("q",)))
    assert [r.relation for r in found] == (["is a rounding or banding of"] if flagged else [])


@pytest.mark.parametrize("kept, relation", [
    (lambda t: t["income"].astype(str), "is a monotone function of"),
    (lambda t: t["income"].map("${:,.0f}".format), "is a monotone function of"),
    (lambda t: t["income"].astype("category"), "is a monotone function of"),
    (lambda t: (t["income"] / 1000).round().where(t.index % 100 != 7),  # non-response
     "is a rounding or banding of"),
    (lambda t: t["age"].map("{} years".format), None),  # few ages: a coding, see below
    (lambda t: pd.Timestamp("2024-06-30") - pd.to_timedelta(
        t["age"] * 365.25 + t.index % 300, unit="D"), "is a finer measure of"),
    (lambda t: t["income"] + np.random.default_rng(0).normal(0, 50, len(t)), None),
])
def test_copies_of_a_quasi_identifier_in_other_forms_are_flagged(sample_path, kept,
                                                                 relation):
    """Income as text ('$102,300') or categories, income in thousands with a few cells
    left empty, and a date of birth beside age give the quasi-identifier away as the
    plain copies do; only exact relations count (a copy with noise is left alone)."""
    table = read_table(sample_path)
    table["kept"] = kept(table)
    qis = ("age", "years_education", "income", "hours_worked")
    found = {(r.quasi_identifier, r.relation) for r in column_relations(
        table, RoleSpec(quasi_identifiers=qis, identifiers=("person_id",)))
        if r.column == "kept"}
    if relation is None:
        assert not {r for r in found if r[1] not in ("determines", "maps one-to-one to")}
    else:
        assert found == {("age" if "finer" in relation else "income", relation)}


def test_a_date_of_birth_beside_age_is_flagged_with_what_it_undoes(sample_path):
    table = read_table(sample_path)
    table["born"] = pd.Timestamp("2024-06-30") - pd.to_timedelta(
        table["age"] * 365.25 + np.arange(len(table)) % 300, unit="D")
    roles = RoleSpec(quasi_identifiers=("age", "income", "hours_worked"),
                     identifiers=("person_id",), non_confidential=("born",))
    result = anonymize(table, roles, "mdav", k=5)
    (message,) = [w.message for w in result.warnings if w.kind == "kept-column-reveals"]
    alone = int((result.masked.groupby(["age", "income", "hours_worked", "born"]).size()
                 == 1).sum())
    assert alone > len(table) / 2
    assert message == (
        "Column 'born', released as it is, is a finer measure of quasi-identifier 'age' "
        "in the original table: whoever reads 'born' learns the original 'age'. Read "
        f"beside the released quasi-identifiers, it leaves {alone:,} of the "
        f"{len(table):,} records alone in their class (0 without it). Make 'born' a "
        "quasi-identifier too, or leave it out.")


@pytest.mark.parametrize("text, expected", [
    (["42 years", "$1,200", None, "-3.5 kg", "\u22125"], [42.0, 1200.0, np.nan, -3.5, -5.0]),
    (["\u0663\u0664"], None),        # digits of another script: not read as numbers
    (["1,5", "2"], None),            # a decimal comma is not taken for thousands
    (["1982-04-03", "1990"], None),  # a date beside a number
    (["North", "12"], None),
])
def test_numbers_in_text_for_the_order_checks(text, expected):
    from core.pipeline.relations import numbers
    found = numbers(pd.Series(text, dtype=object))
    assert found is None if expected is None else np.array_equal(found, expected,
                                                                  equal_nan=True)


def test_iso_dates_in_text_are_read_as_instants_for_the_order_checks():
    from core.pipeline.relations import numbers
    found = numbers(pd.Series(["1982-04-03", "1979-01-01", None, "1982-04-04"]))
    assert found[0] > found[1] and np.isnan(found[2]) and found[3] > found[0]
    assert numbers(pd.Series(["1982-04-03", "1982-13-45"])) is None  # not a date


def test_a_coding_with_a_few_cells_left_empty_is_flagged(adult):
    """Two empty cells of 'education' on different levels made Adult's one-to-one
    coding invisible: a missing value counted as a value of its own."""
    table = adult[["education", "education-num"]].head(1000).copy()
    table.loc[table.index[table["education-num"] == 9][:1], "education"] = np.nan
    table.loc[table.index[table["education-num"] == 13][:1], "education"] = np.nan
    found = column_relations(table, RoleSpec(quasi_identifiers=("education-num",)))
    assert [(r.column, r.relation) for r in found] == [("education", "maps one-to-one to")]


def test_bands_in_order_take_the_order_s_bound():
    """Three bands in order (4, 4 and 5 of 13 values): 1 in 45,045 by chance in order,
    flagged, as is the other way round (a finer measure); in no order (1 in 15,015),
    not."""
    values = [*range(13), *range(7)]  # 20 records, 13 distinct values
    band = [0 if v < 4 else 1 if v < 8 else 2 for v in values]
    roles = RoleSpec(quasi_identifiers=("q",))
    assert [r.relation for r in column_relations(pd.DataFrame({"q": values, "b": band}),
                                                 roles)] == ["is a rounding or banding of"]
    assert [r.relation for r in column_relations(pd.DataFrame({"b": values, "q": band}),
                                                 roles)] == ["is a finer measure of"]
    shuffled = [{0: 1, 1: 0, 2: 2}[b] for b in band]  # bands 1, 0, 2: not in order
    assert column_relations(pd.DataFrame({"q": values, "b": shuffled}), roles) == ()


def test_bands_by_chance_in_a_small_table_are_not_flagged():
    """A yes/no column falls into two intervals of 20 distinct values (10 and 10) by
    chance 1 time in 92,378: flagged; three bands of three over nine values, 1 time in
    280: not, nor two bands in order over seven values (1 in 35 for 3 and 4)."""
    q = np.arange(20.0)
    found = column_relations(pd.DataFrame({"q": q, "c": q >= 10}),
                             RoleSpec(quasi_identifiers=("q",)))
    assert [r.relation for r in found] == ["is a rounding or banding of"]
    nine = pd.DataFrame({"q": np.arange(9.0), "c": ["a"] * 3 + ["b"] * 3 + ["c"] * 3})
    assert column_relations(nine, RoleSpec(quasi_identifiers=("q",))) == ()
    seven = pd.DataFrame({"q": np.arange(7.0), "c": [0.0] * 3 + [1.0] * 4})
    assert column_relations(seven, RoleSpec(quasi_identifiers=("q",))) == ()


def _bands_by_groupby(column: pd.Series, qi: pd.Series) -> bool:
    """The banding rule of :mod:`core.pipeline.relations`, plainly: m distinct values in
    ``column``, u in ``qi`` (missing values not counted), m ≤ u, and m < u unless
    ``column`` holds numbers; then on the rows with both present: ``column`` a function
    of ``qi``, each of its values on an interval of ``qi`` (no other value's ``qi``
    between its smallest and largest), two bands or more, and chance at most 2/8! (in
    order, for numbers, 2·∏u_i!/u!; else m!·∏u_i!/u!), as a fraction."""
    from fractions import Fraction
    from math import factorial, prod
    numbers = (pd.api.types.is_numeric_dtype(column)
               and not pd.api.types.is_bool_dtype(column))
    m, u = column.nunique(), qi.nunique()
    if m > u or m == u and not numbers:
        return False
    keep = qi.notna() & column.notna()
    frame = pd.DataFrame({"q": qi[keep].to_numpy(), "c": column[keep].to_numpy()})
    if frame.empty or (frame.groupby("q")["c"].nunique() > 1).any():
        return False
    per_value = frame.drop_duplicates("q").sort_values("q")
    spans = per_value.groupby("c")["q"].agg(["min", "max"])
    for band, (low, high) in spans.iterrows():
        between = per_value[(per_value["q"] >= low) & (per_value["q"] <= high)]
        if (between["c"] != band).any():
            return False
    if len(spans) < 2:
        return False
    sizes = per_value.groupby("c").size().tolist()
    labels = per_value["c"].to_numpy(dtype=float) if numbers else None
    steps = np.diff(labels[np.r_[True, labels[1:] != labels[:-1]]]) if numbers else None
    ordered = numbers and ((steps > 0).all() or (steps < 0).all())
    chance = Fraction((2 if ordered else factorial(len(sizes))) * prod(map(factorial, sizes)),
                      factorial(len(per_value)))
    return chance <= Fraction(2, factorial(8))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_banding_agrees_with_a_plain_reading(data):
    """Bands found as the plain rule finds them, on columns made to be bands (cut
    points over values with ties and gaps), perturbed ones and unrelated ones, also
    when a first stretch of rows is looked at before the whole."""
    n = data.draw(st.integers(2, 80))
    top = data.draw(st.sampled_from([10, 1000, 1000]))  # values with many ties, or few
    q = data.draw(st.lists(st.one_of(st.integers(0, top), st.none()), min_size=n,
                           max_size=n))
    qi = pd.Series([np.nan if v is None else float(v) for v in q])
    cuts = sorted(data.draw(st.lists(st.integers(0, top), min_size=1, max_size=4)))
    band = pd.Series(np.searchsorted(cuts, qi.fillna(0).to_numpy()), dtype=float)
    kind = data.draw(st.sampled_from(["bands", "bands", "text", "flip one", "gaps",
                                      "unrelated"]))
    if kind == "text":
        band = band.map(lambda b: "xyz"[int(b) % 3])  # names that may join intervals
    elif kind == "gaps":
        band[data.draw(st.lists(st.integers(0, n - 1), max_size=3))] = np.nan
    elif kind == "flip one":
        band.iloc[data.draw(st.integers(0, n - 1))] += 1
    elif kind == "unrelated":
        band = pd.Series(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
                         dtype=float)
    table = pd.DataFrame({"q": qi, "c": band})
    sample = data.draw(st.sampled_from([5, 50_000]))
    with mock.patch("core.pipeline.relations._SAMPLE", sample):
        found = [r.relation for r in column_relations(table, RoleSpec(quasi_identifiers=("q",)))]
    distinct = table.nunique(dropna=False)
    if distinct["q"] <= n / 2 or found and found[0] != "is a rounding or banding of":
        return  # a coding, the strict order or a finer measure: not the bands
    assert (found == ["is a rounding or banding of"]) is _bands_by_groupby(table["c"], qi)


def test_tc_merge_into_one_group_is_verified_and_flagged():
    census = pd.read_csv(shared_data("census.csv"))
    qi = tuple(c for c in CENSUS_COLUMNS if c not in ("FICA", "FEDTAX"))
    result = anonymize(census, RoleSpec(quasi_identifiers=qi,
                                        confidential=("FICA", "FEDTAX")),
                       "tc-merge", k=5, t=0.15)
    assert result.passed and result.metrics.max_group_size == 1080
    assert kinds(result) == ["dominant-group", "high-information-loss"]


def test_a_method_without_a_guarantee_that_leaves_unique_records_is_flagged(sample_path):
    table = read_table(sample_path)
    roles = RoleSpec(quasi_identifiers=("age", "income", "hours_worked"),
                     identifiers=("person_id",), non_confidential=("region",))
    result = anonymize(table, roles, "individual-ranking", k=3)
    assert "unique-records" in kinds(result)
    assert "unique-records" not in kinds(anonymize(table, roles, "mdav", k=3))


def test_blocks_that_leave_records_unique_across_them_are_flagged(sample_path):
    """k-anonymity per attribute block verifies, yet across the blocks nearly every
    record is unique on all the quasi-identifiers: flagged, with the share; one block,
    or blocks whose classes stay large across them, are not."""
    table = read_table(sample_path)
    qi = ("age", "years_education", "income", "hours_worked", "household_size")
    roles = RoleSpec(quasi_identifiers=qi, identifiers=("person_id",),
                     non_confidential=("region", "health_spending", "diagnosis"))
    blocked = anonymize(table, roles, "mdav", k=3,
                        blocks="age,years_education;income,hours_worked,household_size")
    assert blocked.passed and kinds(blocked) == ["unique-across-blocks"]
    unique = blocked.measures.unique_records
    assert unique > 0.9 * len(table)
    message = next(w.message for w in blocked.warnings if w.kind == "unique-across-blocks")
    assert "each of the 2 attribute blocks" in message and f"{unique:,} records" in message
    assert "unique-across-blocks" not in kinds(anonymize(table, roles, "mdav", k=3))
    one = RoleSpec(quasi_identifiers=("age", "income"), identifiers=("person_id",),
                   non_confidential=("region", "years_education", "hours_worked",
                                     "household_size", "health_spending", "diagnosis"))
    coarse = anonymize(table.assign(age=table["age"] // 40, income=table["income"] > 5e4),
                       one, "mdav", k=3, blocks="age;income")
    assert coarse.measures.k_prime >= 2 and "unique-across-blocks" not in kinds(coarse)


def test_constant_quasi_identifiers_are_released_with_a_warning():
    table = pd.DataFrame({"a": [1.0] * 1000, "b": ["x"] * 1000, "c": range(1000)})
    result = anonymize(table, RoleSpec(quasi_identifiers=("a", "b", "c")), k=5)
    assert result.passed
    assert kinds(result).count("constant-quasi-identifier") == 2
    assert result.metrics.sst == pytest.approx(1000)  # only 'c' counts
    identical = anonymize(table[["a", "b"]], RoleSpec(quasi_identifiers=("a", "b")), k=5)
    assert identical.passed and identical.metrics.il == 0.0


def test_warnings_reach_the_summary_report_and_stderr(tmp_path, adult, capsys):
    source = tmp_path / "adult.csv"
    adult.head(2000).to_csv(source, index=False)
    out, summary, report = tmp_path / "o.csv", tmp_path / "s.json", tmp_path / "r.html"
    assert main(["anonymize", str(source), "-o", str(out), "--k", "5", "--qi", "age",
                 "education-num", "--confidential", "prediction", "--summary-json",
                 str(summary), "--report", str(report)]) == 0
    err = capsys.readouterr().err
    assert "microagg: warning: Column 'education'" in err
    data = json.loads(summary.read_text())
    assert "kept-column-reveals" in data["warning_kinds"]
    assert "Read before publishing" in report.read_text()
    result = anonymize(adult.head(2000), RoleSpec(quasi_identifiers=("age", "education-num"),
                                                  confidential=("prediction",)), k=5)
    rows = summary_frame(result)
    assert (rows["item"] == "Warning").sum() == len(result.warnings) >= 1
    assert "Read before publishing" in write_report(result, tmp_path / "x.html").read_text()


def test_an_existing_output_is_refused_without_overwrite(tmp_path, sample_path, capsys):
    out = tmp_path / "o.csv"
    out.write_text("keep me")
    args = ["anonymize", str(sample_path), "-o", str(out), "--k", "5", "--qi", "age",
            "income", "--identifier", "person_id"]
    assert main(args) == 2
    assert "already exists" in capsys.readouterr().err and out.read_text() == "keep me"
    assert main(args + ["--overwrite"]) == 0 and out.read_text() != "keep me"


def test_the_progress_line_says_what_is_done_and_what_is_left():
    progress = Progress(io.StringIO(), n_records=100_000)
    line = progress.line(0.25, "MDAV: grouping", 30.0)
    assert "25.0 %" in line and "25,000 of 100,000 records" in line
    assert "30 s elapsed" in line and "about 1 min 30 s left" in line
    quiet = io.StringIO()
    Progress(quiet, n_records=10)(0.5, "x")  # not a terminal: draws nothing
    assert quiet.getvalue() == ""


def test_an_internal_error_is_logged_with_its_traceback(tmp_path, monkeypatch, capsys,
                                                        sample_path):
    import importlib

    cli = importlib.import_module("core.cli.main")

    monkeypatch.setenv("MICROAGG_LOG_DIR", str(tmp_path / "logs"))

    def broken(*args, **kwargs):
        raise ZeroDivisionError("engine bug")

    monkeypatch.setattr(cli, "anonymize", broken)
    assert main(["anonymize", str(sample_path), "-o", str(tmp_path / "o.csv"), "--k", "5",
                 "--qi", "age"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(log_path()) in err
    logged = log_path().read_text()
    assert "Traceback" in logged and "ZeroDivisionError: engine bug" in logged


def _relations_by_groupby(table: pd.DataFrame, roles: RoleSpec) -> list[tuple[str, str, str]]:
    """The codings rule of :mod:`core.pipeline.relations` with pandas: A determines B
    when every value of A goes with one value of B on the rows where both have one
    (and there is such a row); the half-the-records bound counts a missing value as a
    value, one-to-one and the two values each side needs do not."""
    n = len(table)

    def determines(a: str, b: str) -> bool:
        both = table[[a, b]].dropna()
        return len(both) > 0 and bool((both.groupby(a)[b].nunique() <= 1).all())

    found = []
    for column in table.columns:
        if column in roles.quasi_identifiers:
            continue
        for qi in roles.quasi_identifiers:
            a = table[column].nunique(dropna=False)
            b = table[qi].nunique(dropna=False)
            present_a, present_b = table[column].nunique(), table[qi].nunique()
            if a < 2 or b < 2 or present_a < 2 or present_b < 2:
                continue
            if a <= n / 2 and determines(column, qi):
                found.append((column, qi, "maps one-to-one to" if present_a == present_b
                              and determines(qi, column) else "determines"))
            elif b <= n / 2 and determines(qi, column):
                found.append((column, qi, "is determined by"))
    return found


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_column_relations_agree_with_groupby(data):
    """Codings found as pandas finds them, also when a first stretch of rows is looked
    at before the whole (the sample is cut to 5 rows here)."""
    n = data.draw(st.integers(2, 40))
    values = st.lists(st.one_of(st.integers(0, 3), st.none()), min_size=n, max_size=n)
    a, b, c = data.draw(values), data.draw(values), data.draw(values)
    table = pd.DataFrame({"a": a, "b": pd.Series(b, dtype="Int64"),
                          "c": [None if v is None else f"t{v}" for v in c]})
    table["d"] = table["a"].map({0: "x", 1: "x", 2: "y", 3: "z"})  # a coding of a
    roles = RoleSpec(quasi_identifiers=("a", "b"))
    with mock.patch("core.pipeline.relations._SAMPLE", 5):
        found = [(r.column, r.quasi_identifier, r.relation)
                 for r in column_relations(table, roles)]
    assert found == _relations_by_groupby(table, roles)


def test_a_coding_with_half_as_many_values_as_records_counts():
    """The bound is inclusive: two values over four records are a coding."""
    table = pd.DataFrame({"q": [0.0, 0.0, 1.0, 1.0], "c": ["u", "u", "v", "v"],
                          "r": ["a", "b", "c", "c"]})  # three values: too many
    found = column_relations(table, RoleSpec(quasi_identifiers=("q",)))
    assert [(r.column, r.relation) for r in found] == [("c", "maps one-to-one to")]


def test_run_finds_the_relations_once_on_the_records_it_masks(monkeypatch):
    """run() looks for codings once (on its helper, while the method runs), on the
    records it masks: those set aside for missing values are not among them."""
    run_module = importlib.import_module("core.pipeline.original_work")
    seen = []

    def recording(table, roles):
        seen.append(len(table))
        return column_relations(table, roles)

    monkeypatch.setattr(run_module, "column_relations", recording)
    rng = np.random.default_rng(3)
    age = rng.integers(20, 70, 600).astype(float)
    table = pd.DataFrame({"age": age, "income": rng.normal(100, 10, 600).round(1)})
    table["band"] = (age // 10).astype(int).astype(str)
    table.loc[:19, "income"] = np.nan
    roles = RoleSpec(quasi_identifiers=("age", "income"), confidential=("band",))
    result = anonymize(table, roles, k=5, missing="exclude")
    assert seen == [580]
    assert "kept-column-reveals" in kinds(result)
    assert "'band'" in next(w.message for w in result.warnings
                            if w.kind == "kept-column-reveals")


def test_a_column_read_back_with_other_types_is_still_the_column_released_as_it_is():
    """Whole numbers back as floats and text back as strings (CSV parts of a blocked
    run) are the same values; a changed value, a moved gap or numbers against words are
    not."""
    from core.pipeline.warnings import same_values

    whole = pd.Series([1, 2, 3, 40], dtype="int64")
    assert same_values(whole, whole.astype("float64"))
    text = pd.Series(["a", None, "c", "d"], dtype=object)
    assert same_values(text, text.astype("string"))
    assert not same_values(whole, pd.Series([1.0, 2.0, 3.0, 40.5]))
    assert not same_values(text, pd.Series(["a", "b", None, "d"], dtype="string"))
    assert same_values(whole, whole.astype(str))  # digits as text: the same numbers
    assert not same_values(whole, pd.Series(["1", "2", "3", "forty"]))
    assert same_values(pd.Series([1.0, np.nan]), pd.Series([1.0, np.nan], index=[5, 6]))


def _identifies(result) -> list[str]:
    return [w.message for w in result.warnings if w.kind == "kept-column-identifies"]


def test_a_record_number_released_as_it_is_is_said():
    """The sample's person numbers, or a serial, given a kept role by mistake: the
    verifier passes (they are not quasi-identifiers), and the warning says they tell
    every record apart."""
    from core.io import read_table
    from tests.conftest import REPO

    survey = read_table(REPO / "resources" / "sample_survey.csv")
    qis = ("age", "years_education", "income", "hours_worked")
    result = anonymize(survey, RoleSpec(quasi_identifiers=qis,
                                        non_confidential=("person_id",)), "mdav", k=5)
    assert result.passed
    assert _identifies(result) == [
        "Column 'person_id', released as it is, has a different value for each of the 600 "
        "records, like a record or case number: read beside the release it tells every "
        "record apart, and wherever else the number is kept it links the record there. "
        "Give it the identifier role (it is then left out of the release), or leave it out."]
    table = survey.drop(columns=["person_id"]).assign(
        serial=np.arange(len(survey)) + 1000,
        spread=np.random.default_rng(0).choice(10**6, len(survey), replace=False))
    table.loc[3, "serial"] = np.nan  # a gap: 599 of 600 still have one, all different
    result = anonymize(table, RoleSpec(quasi_identifiers=qis,
                                       confidential=("spread", "health_spending")), k=5)
    (said,) = _identifies(result)
    assert said.startswith("Column 'serial', released as it is, has a different value for "
                           "each of the 599 records that have one")


def test_measured_values_all_different_are_not_said_to_identify():
    """Decimals, whole numbers spread wide, a column with two equal values, dates, and
    a table too small to tell."""
    rng = np.random.default_rng(1)
    n = 200
    base = pd.DataFrame({"q": rng.normal(size=n), "r": rng.normal(size=n)})
    kept = base.assign(decimals=rng.normal(size=n),
                       wide=rng.choice(10**6, n, replace=False),
                       twice=np.r_[np.arange(n - 1), 0],
                       when=pd.date_range("2020-01-01", periods=n))
    roles = RoleSpec(quasi_identifiers=("q", "r"),
                     non_confidential=("decimals", "wide", "twice", "when"))
    assert _identifies(anonymize(kept, roles, k=5)) == []
    small = base.iloc[:49].assign(code=[f"c{i}" for i in range(49)])
    assert _identifies(anonymize(small, RoleSpec(quasi_identifiers=("q", "r"),
                                                 non_confidential=("code",)), k=3)) == []


def test_same_values_across_types_and_beyond_two_to_the_53():
    """A category or object column of whole numbers back as floats, a household number
    beyond 2**53 back as text: the same values; integers beyond 2**53 that differ by
    one are not."""
    from core.pipeline.warnings import same_values

    ints = pd.Series([3, 1, 2, 3])
    assert same_values(ints.astype("category"), ints.astype(float))
    assert same_values(ints.astype(object), ints.astype(float))
    big = pd.Series([2**53, 2**60], dtype="int64")
    assert same_values(big, big.astype(str).astype(object))
    assert not same_values(big, pd.Series([2**53 + 1, 2**60 + 1], dtype="int64"))


def test_numbers_stored_as_text_or_categories_are_judged_as_numbers():
    """An object column of decimals or of widely spread whole numbers is no record
    number; a column of dates read back as text is judged on the original's dates."""
    from core.pipeline.warnings import _looks_like_a_number_of_records

    rng = np.random.default_rng(2)
    assert not _looks_like_a_number_of_records(pd.Series(rng.normal(size=600), dtype=object))
    assert not _looks_like_a_number_of_records(
        pd.Series(rng.choice(10**6, 600, replace=False)).astype("category"))
    assert _looks_like_a_number_of_records(pd.Series(np.arange(600) + 7, dtype=object))
    assert _looks_like_a_number_of_records(pd.Series([f"P{i}" for i in range(600)]))
