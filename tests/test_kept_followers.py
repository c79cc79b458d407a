"""A kept column that nearly follows a masked quasi-identifier (a noisy copy, tax beside
earnings) is said after the run, with the attack's measured success."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata

from core import RoleSpec, anonymize
from core.pipeline import tracks
from tests.conftest import shared_data

QIS = ("age", "years_education", "income", "hours_worked")


@pytest.fixture(scope="module")
def survey(sample_path) -> pd.DataFrame:
    return pd.read_csv(sample_path)


def _follows(result) -> list[str]:
    return [w.message for w in result.warnings if w.kind == "kept-column-follows"]


def _with_copy(survey, noise: float, sign: float = 1.0, seed: int = 3) -> pd.DataFrame:
    table = survey.copy()
    rng = np.random.default_rng(seed)
    table["income_reported"] = sign * table["income"] + rng.normal(
        0, noise * table["income"].std(), len(table))
    return table


def _run(table, **roles):
    return anonymize(table, RoleSpec(quasi_identifiers=QIS, identifiers=("person_id",),
                                     **roles), "mdav", k=5)


def test_a_noisy_copy_of_a_quasi_identifier_is_said_with_its_measured_success(survey):
    result = _run(_with_copy(survey, 0.05), confidential=("income_reported",))
    assert result.passed
    (message,) = _follows(result)
    assert message.startswith("Column 'income_reported', released as it is, nearly follows "
                              "quasi-identifier 'income'")
    share, apart, chance = re.search(
        r"for (\d+) % of the ([\d,]+) records that 'income' tells apart in their class "
        r"\((\d+) % by chance\)", message).groups()
    assert int(share) >= 70 and 18 <= int(chance) <= 22 and int(apart.replace(",", "")) > 550
    # The figures are the attack's on the release, computed here the plain way.
    classes = result.measures.classes
    table = _with_copy(survey, 0.05)
    picked, told, measured = tracks.picked_out_reference(
        classes, tracks.ranks(table["income"].to_numpy(float)),
        tracks.ranks(table["income_reported"].to_numpy(float)))
    assert (int(share), int(apart.replace(",", "")), int(chance)) == (
        round(100 * picked / told), told, round(100 * measured / told))


def test_a_copy_that_falls_as_the_quasi_identifier_rises_is_said(survey):
    result = _run(_with_copy(survey, 0.05, sign=-1.0), non_confidential=("income_reported",))
    assert len(_follows(result)) == 1


def test_a_column_with_much_noise_is_not_said(survey):
    result = _run(_with_copy(survey, 0.5), confidential=("income_reported",))
    assert result.passed and _follows(result) == []


def test_the_sample_as_shipped_says_nothing_of_it(survey):
    kept = [c for c in survey.columns if c not in QIS and c != "person_id"]
    for method in ("mdav", "pcp", "vmdav"):
        result = anonymize(survey, RoleSpec(quasi_identifiers=QIS, identifiers=("person_id",),
                                            non_confidential=tuple(kept)), method, k=5)
        assert _follows(result) == [], method


def test_a_column_given_noise_or_made_a_quasi_identifier_is_not_said(survey):
    table = _with_copy(survey, 0.05)
    result = anonymize(table, RoleSpec(quasi_identifiers=QIS + ("income_reported",),
                                       identifiers=("person_id",)), "mdav", k=5)
    assert _follows(result) == []


def test_census_earnings_beside_masked_wages_are_said():
    """The module notes' measurement: PEARNVAL and FICA beside a masked WSALVAL, and
    the total income PTOTVAL beside masked wages and other income, its parts."""
    census = pd.read_csv(shared_data("census.csv"))
    qis = ("POTHVAL", "WSALVAL", "EMCONTRB", "FEDTAX")
    result = anonymize(census, RoleSpec(quasi_identifiers=qis, non_confidential=tuple(
        c for c in census.columns if c not in qis)), "mdav", k=5)
    said = {re.match(r"Column '([^']+)', released as it is, nearly follows (.*?):", m).groups()
            for m in _follows(result)}
    assert said == {("PEARNVAL", "quasi-identifier 'WSALVAL'"),
                    ("FICA", "quasi-identifier 'WSALVAL'"),
                    ("PTOTVAL", "'POTHVAL' + 'WSALVAL', a function of two quasi-identifiers")}


def test_ranks_are_average_ranks_over_the_present_values():
    values = np.array([3.0, np.nan, 1.0, 3.0, 2.0, np.nan, 3.0])
    present = ~np.isnan(values)
    expected = rankdata(values[present]) / present.sum()
    found = tracks.ranks(values)
    assert np.isnan(found[~present]).all()
    assert np.allclose(found[present], expected)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 80), st.integers(1, 8), st.integers(1, 8),
       st.floats(0.0, 0.3))
def test_the_compiled_attack_agrees_with_every_pair_compared(seed, n, q_values, c_values,
                                                              missing):
    rng = np.random.default_rng(seed)
    classes = rng.integers(0, max(1, n // 4), n)
    q = np.where(rng.random(n) < missing, np.nan, rng.integers(0, q_values, n).astype(float))
    c = np.where(rng.random(n) < missing, np.nan, rng.integers(0, c_values, n).astype(float))
    q_ranks, c_ranks = tracks.ranks(q), tracks.ranks(c)
    blocks = tracks.class_blocks(classes)
    found = tracks.picked_out(blocks, q_ranks, c_ranks)
    expected = tracks.picked_out_reference(classes, q_ranks, c_ranks)
    assert found[1:] == expected[1:] and found[0] == pytest.approx(expected[0], abs=1e-9)
    assert found[0] == _running_sum(blocks, q_ranks, c_ranks)  # to the last bit


def _running_sum(blocks, q, c) -> float:
    """The records' shares added one after another, classes in order and records in
    their class's order: the sum the attack reports, bit for bit, whatever way it
    searches a class (every pair compared here, in plain Python)."""
    order, starts = blocks
    picked = 0.0
    for b in range(len(starts) - 1):
        rows = [i for i in order[starts[b]:starts[b + 1]]
                if not (np.isnan(q[i]) or np.isnan(c[i]))]
        if len(rows) < 2 or len({q[i] for i in rows}) < 2:
            continue
        for i in rows:
            distances = [abs(c[j] - q[i]) for j in rows]
            own = abs(c[i] - q[i])
            if min(distances) == own:
                picked += 1.0 / distances.count(own)
    return picked


def test_a_class_of_equal_quasi_identifier_values_is_not_measured():
    classes = np.array([0, 0, 0, 1, 1, 1])
    q = tracks.ranks(np.array([5.0, 5.0, 5.0, 1.0, 2.0, 3.0]))
    c = tracks.ranks(np.array([7.0, 8.0, 9.0, 1.0, 2.0, 3.0]))
    # Class 0 tells nobody apart, whatever its kept values; class 1's three records are
    # each picked out.
    assert tracks.picked_out(tracks.class_blocks(classes), q, c) == (3.0, 3, 1)
    assert tracks.picked_out_reference(classes, q, c) == (3.0, 3, 1)


def test_the_threshold_is_halfway_from_chance_with_enough_classes():
    assert not tracks.tracks(picked=9.0, apart=9, classes=tracks.MIN_CLASSES - 1)
    # 20 classes of 5 told apart: chance 20, all 100; halfway is 60 (at least).
    assert tracks.tracks(60.0, 100, 20) and not tracks.tracks(59.0, 100, 20)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(33, 300), st.integers(1, 3))
def test_large_classes_and_the_numpy_path_agree_with_every_pair_compared(seed, n, n_classes):
    """Classes of more than 32 records (sorted by numpy in the kernel), and the path
    taken without the compiled kernels."""
    rng = np.random.default_rng(seed)
    classes = rng.integers(0, n_classes, n)
    q = tracks.ranks(np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 9, n) * 1.0))
    c = tracks.ranks(np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 3, n) * 1.0))
    expected = tracks.picked_out_reference(classes, q, c)
    blocks = tracks.class_blocks(classes)
    for found in (tracks.picked_out(blocks, q, c), tracks._picked_numpy(*blocks, q, c)):
        assert found[1:] == expected[1:] and found[0] == pytest.approx(expected[0], abs=1e-9)
    assert tracks.picked_out(blocks, q, c)[0] == _running_sum(blocks, q, c)


def test_without_the_compiled_kernels_the_same_warning_is_said(survey, monkeypatch):
    table = _with_copy(survey, 0.05)
    compiled = _follows(_run(table, confidential=("income_reported",)))
    monkeypatch.setattr(tracks, "_picked_compiled", None)
    assert _follows(_run(table, confidential=("income_reported",))) == compiled != []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 3).map(float), st.just(np.nan), st.just(-0.0),
                          st.floats(-1e6, 1e6)), min_size=0, max_size=60),
       st.integers(0, 2**32 - 1))
def test_one_sort_gives_the_ranks_each_way_in_any_order(values, seed):
    """Ranks read falling are the ranks of the values negated, and ranks read in another
    order are the ranks of the values in that order, bit for bit."""
    values = np.array(values, dtype=np.float64)
    order = np.random.default_rng(seed).permutation(len(values))
    made = tracks.Ranks(values)
    for found, expected in ((made.rising(), tracks.ranks(values)),
                            (made.falling(), tracks.ranks(-values)),
                            (made.rising(order), tracks.ranks(values[order])),
                            (made.falling(order), tracks.ranks(-values[order]))):
        assert found.tobytes() == expected.tobytes()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, tracks._FEW), st.integers(1, 6),
       st.integers(1, 6))
def test_a_small_class_compared_pairwise_gives_the_sorted_search_s_bits(seed, m, q_values,
                                                                        c_values):
    if tracks._picked_compiled is None:
        pytest.skip("the compiled kernels are off")
    rng = np.random.default_rng(seed)
    q = tracks.ranks(rng.integers(0, q_values, m).astype(float))
    c = tracks.ranks(rng.integers(0, c_values, m).astype(float))
    rows = np.arange(m)
    for before in (0.0, 0.1, 1234.5678):  # the running sum the class adds to
        pairwise = tracks._few_picked(q.copy(), c.copy(), m, before)
        searched = tracks._many_picked(q, c, rows, m, np.empty(m), before)
        assert pairwise == searched
    pairwise = tracks._few_picked(q.copy(), c.copy(), m, 0.0)
    expected = tracks.picked_out_reference(np.zeros(m, dtype=np.int64), q, c)
    assert pairwise[0] == pytest.approx(expected[0], abs=1e-12)


def test_ranks_made_ahead_and_pairs_on_two_threads_say_what_the_plain_check_says(survey):
    """A run makes the original's ranks on its helper thread while the method runs and
    measures the pairs on two threads; the plain call makes everything here, one pair
    after another. The warnings are the same, word for word."""
    from concurrent.futures import ThreadPoolExecutor

    from core.pipeline.warnings import release_warnings

    table = _with_copy(survey, 0.05)
    table["income_falling"] = -table["income_reported"]
    roles = RoleSpec(quasi_identifiers=QIS, identifiers=("person_id",),
                     confidential=("income_reported",),
                     non_confidential=("income_falling", "region"))
    result = anonymize(table, roles, "mdav", k=5)
    said = _follows(result)
    assert len(said) == 2
    m = result.measures
    plain = release_warnings(table, result.masked, roles, group_sizes=m.class_sizes,
                             il=m.il, k_prime=m.k_prime, unique_records=m.unique_records,
                             record_level=True, classes=m.classes)
    assert [w.message for w in plain if w.kind == "kept-column-follows"] == said
    with ThreadPoolExecutor(max_workers=1) as executor:
        threaded = release_warnings(table, result.masked, roles, group_sizes=m.class_sizes,
                                    il=m.il, k_prime=m.k_prime,
                                    unique_records=m.unique_records, record_level=True,
                                    classes=m.classes, executor=executor)
    assert threaded == plain


EDUCATION = ("none", "primary", "lower secondary", "upper secondary", "vocational",
             "bachelor", "master", "doctorate")


def _with_education(survey) -> pd.DataFrame:
    """The sample with an ordinal quasi-identifier of text (education, eight levels cut
    from the years of schooling) and a kept copy of the years with noise at a tenth of
    their standard deviation; the exact years left out."""
    table = survey.copy()
    cut = pd.qcut(table["years_education"].rank(method="first"), len(EDUCATION),
                  labels=False)
    table["education"] = [EDUCATION[i] for i in cut]
    rng = np.random.default_rng(1)
    table["years_reported"] = table["years_education"] + rng.normal(
        0, 0.1 * table["years_education"].std(), len(table))
    return table.drop(columns=["years_education"])


@pytest.mark.parametrize("k", [3, 5])
def test_a_kept_column_following_an_ordinal_quasi_identifier_of_text_is_said(survey, k):
    """Education is text: its ranks are its categories' order, which the numbers of the
    cells cannot give. The figures are the attack's on the categories' codes."""
    table = _with_education(survey)
    roles = RoleSpec(quasi_identifiers=("age", "income", "hours_worked", "education"),
                     identifiers=("person_id",), non_confidential=("years_reported",),
                     levels={"education": "ordinal"}, orders={"education": EDUCATION})
    result = anonymize(table, roles, "mdav", k=k)
    (message,) = _follows(result)
    assert message.startswith("Column 'years_reported', released as it is, nearly follows "
                              "quasi-identifier 'education'")
    codes = pd.Categorical(table["education"], categories=EDUCATION).codes.astype(float)
    picked, told, measured = tracks.picked_out_reference(
        result.measures.classes, tracks.ranks(codes),
        tracks.ranks(table["years_reported"].to_numpy()))
    assert f"for {round(100 * picked / told)} % of the {told:,} records" in message
    assert f"({round(100 * measured / told)} % by chance)" in message


def _with_rate(survey, noise: float = 0.0) -> pd.DataFrame:
    """The sample with a kept income per hour worked (with noise as a share of its
    standard deviation)."""
    table = survey.copy()
    rate = table["income"] / table["hours_worked"]
    rng = np.random.default_rng(5)
    table["income_per_hour"] = (rate + rng.normal(0, noise * rate.std(), len(table))).round(2)
    return table


def test_a_kept_function_of_two_quasi_identifiers_is_said_with_its_figures(survey):
    """Income per hour, kept beside a masked income and hours: an intruder who knows a
    record's two computes it and finds the record in its class. Neither alone is
    followed."""
    table = _with_rate(survey)
    result = _run(table, confidential=("income_per_hour",))
    (message,) = _follows(result)
    assert message.startswith(
        "Column 'income_per_hour', released as it is, nearly follows 'income' / "
        "'hours_worked', a function of two quasi-identifiers: within the released "
        "classes, whoever knows a record's original 'income' and 'hours_worked' picks it "
        "out by 'income_per_hour' for ")
    rate = (table["income"] / table["hours_worked"]).to_numpy()
    picked, told, measured = tracks.picked_out_reference(
        result.measures.classes, tracks.ranks(rate),
        tracks.ranks(table["income_per_hour"].to_numpy()))
    assert (f"for {round(100 * picked / told)} % of the {told:,} records that 'income' / "
            f"'hours_worked' tells apart in their class ({round(100 * measured / told)} % "
            "by chance)") in message
    assert round(100 * picked / told) >= 90


@pytest.mark.parametrize("noise", [0.0, 0.05, 0.08, 0.1, 0.2, 0.4])
def test_the_screen_loses_no_function_that_attacking_every_one_finds(survey, noise,
                                                                     monkeypatch):
    """The rank-correlation screen only spares work: attacking every function of every
    pair (no screen) says the same, for copies of income per hour from exact to so
    noisy that nothing is said."""
    from core.pipeline import follows

    table = _with_rate(survey, noise)
    screened = _follows(_run(table, confidential=("income_per_hour",)))
    monkeypatch.setattr(follows, "SCREEN", 0.0)
    assert _follows(_run(table, confidential=("income_per_hour",))) == screened
    assert (screened != []) == (noise <= 0.08)


def _with_parts(survey, noise: float = 0.0) -> pd.DataFrame:
    """The sample with income's parts kept: wages (30 to 70 % of it) and the rest,
    with noise as a share of income's standard deviation."""
    table = survey.copy()
    rng = np.random.default_rng(4)
    table["wages"] = (table["income"] * rng.uniform(0.3, 0.7, len(table))).round(0)
    table["other_income"] = (table["income"] - table["wages"] + rng.normal(
        0, noise * table["income"].std(), len(table))).round(0)
    return table


def test_two_kept_columns_that_give_a_masked_quasi_identifier_together_are_said(survey):
    """Income masked, its parts kept: an intruder who knows a record's income adds the
    parts of every record of its class. Neither part alone follows income."""
    table = _with_parts(survey)
    result = _run(table, confidential=("wages", "other_income"))
    (message,) = _follows(result)
    assert message.startswith(
        "Columns 'wages' and 'other_income', released as they are, nearly follow "
        "quasi-identifier 'income' together, as 'wages' + 'other_income': within the released "
        "classes, whoever knows a record's original 'income' picks it out by 'wages' + "
        "'other_income' for ")
    assert message.endswith("Make 'wages' and 'other_income' quasi-identifiers too, or "
                            "leave one of them out.")
    picked, told, measured = tracks.picked_out_reference(
        result.measures.classes, tracks.ranks(table["income"].to_numpy(float)),
        tracks.ranks((table["wages"] + table["other_income"]).to_numpy(float)))
    assert (f"for {round(100 * picked / told)} % of the {told:,} records that 'income' "
            f"tells apart in their class ({round(100 * measured / told)} % by chance)"
            ) in message
    assert picked == told  # the parts add up to income: every record picked out


@pytest.mark.parametrize("noise", [0.0, 0.02, 0.2])
def test_the_screen_of_two_kept_columns_loses_nothing(survey, noise, monkeypatch):
    from core.pipeline import follows

    table = _with_parts(survey, noise)
    screened = _follows(_run(table, confidential=("wages", "other_income")))
    monkeypatch.setattr(follows, "SCREEN", 0.0)
    assert _follows(_run(table, confidential=("wages", "other_income"))) == screened
    assert (screened != []) == (noise < 0.2)


@pytest.mark.parametrize("imputed", [0.15, 0.3, 0.45])
def test_a_function_kept_with_imputed_cells_is_not_lost_by_the_screen(survey, imputed,
                                                                      monkeypatch):
    """Income per hour with a share of its cells taken from other records (a hot-deck
    imputation): its rank correlation falls to about the share left, yet the attack
    still picks out records halfway from chance; the screen lets it through."""
    from core.pipeline import follows

    table = _with_rate(survey)
    rng = np.random.default_rng(9)
    donors = rng.random(len(table)) < imputed
    table.loc[donors, "income_per_hour"] = rng.permutation(
        table["income_per_hour"].to_numpy())[donors]
    screened = _follows(_run(table, confidential=("income_per_hour",)))
    monkeypatch.setattr(follows, "SCREEN", 0.0)
    assert _follows(_run(table, confidential=("income_per_hour",))) == screened
    if imputed <= 0.3:
        assert len(screened) == 1 and "'income' / 'hours_worked'" in screened[0]
