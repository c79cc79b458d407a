"""Strata and attribute blocks, through anonymize() and the CLI."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import MicroaggError, RoleSpec, anonymize
from core.cli.main import main
from core.verify.kanonymity import verify_k_anonymity


@pytest.fixture
def survey(sample_path):
    return pd.read_csv(sample_path)


QI = ("age", "income", "hours_worked", "years_education")


@pytest.mark.parametrize("method", ["mdav", "cbfs", "gsms", "vmdav", "pcp"])
def test_strata_never_mix(survey, method):
    roles = RoleSpec(quasi_identifiers=QI, identifiers=("person_id",), strata=("region",))
    result = anonymize(survey, roles, method, k=5)
    regions = survey["region"].to_numpy()
    for g in np.unique(result.labels):
        assert len(set(regions[result.labels == g])) == 1
    assert result.verification.passed
    assert result.metrics.min_group_size >= 5
    assert "within strata of region" in result.guarantee_text


def test_small_stratum_is_named_with_the_nearest_and_can_be_merged(survey):
    table = survey.copy()
    table.loc[:2, "region"] = "Island"  # a stratum of 3 records
    roles = RoleSpec(quasi_identifiers=QI, strata=("region",))
    with pytest.raises(MicroaggError, match=r"Stratum 'Island' \(region\) has 3 record\(s\), "
                                            r"fewer than k = 5\. Merge it with the nearest "
                                            r"stratum '(North|South|East|West|Centre)'"):
        anonymize(table, roles, "mdav", k=5)
    result = anonymize(table, roles, "mdav", k=5, merge_small_strata=True)
    assert result.metrics.min_group_size >= 5
    # The merged strata are merged in the output too, so the verifier, which counts
    # classes of (masked QI values, region), finds every class of at least 5.
    merged = result.masked.loc[0, "region"]
    assert "Island" in merged and " + " in merged
    assert result.strata_merges == (f"Strata merged in column 'region': {merged}.",)
    assert verify_k_anonymity(table, result.masked, roles, 5).passed


@pytest.mark.parametrize("strata, columns", [
    ({"s1": ["North / East"] * 4 + ["North"] * 4, "s2": ["urban"] * 4 + ["East / urban"] * 4},
     ("s1", "s2")),
    ({"s": pd.Series([1] * 4 + ["1"] * 4, dtype=object)}, ("s",)),
    ({"s": pd.Series([np.nan] * 4 + ["nan"] * 4, dtype=object)}, ("s",)),
])
def test_strata_that_print_alike_are_still_two_strata(strata, columns):
    """Strata are told apart by their values, not by their printed names: 1 beside "1",
    NaN beside "nan", "a / b" beside "a" and "b" are two strata each of 4 records."""
    table = pd.DataFrame({"age": [20, 21, 22, 23, 60, 61, 62, 63], **strata})
    result = anonymize(table, RoleSpec(quasi_identifiers=("age",), strata=columns), k=2)
    assert result.verification.passed
    assert result.masked["age"].tolist() == [20.5, 20.5, 22.5, 22.5, 60.5, 60.5, 62.5, 62.5]


def test_merged_strata_that_print_alike_get_one_stratum_value():
    """A stratum of 1 merged into the stratum "1": every record of the merge releases
    one value, so the merged records form classes of k."""
    table = pd.DataFrame({"age": [20, 21, 22, 23, 24],
                          "s": pd.Series([1] + ["1"] * 4, dtype=object)})
    result = anonymize(table, RoleSpec(quasi_identifiers=("age",), strata=("s",)), k=2,
                       merge_small_strata=True)
    assert result.verification.passed and result.masked["s"].tolist() == ["1"] * 5
    assert result.strata_merges == ("Strata merged in column 's': 1.",)


@pytest.mark.parametrize("role, message", [
    ("identifiers", "both a stratum, released as it is, and an identifier"),
    ("confidential", "cannot be both a stratum and confidential"),
])
def test_a_stratum_that_is_an_identifier_or_confidential_is_refused(role, message):
    """An identifier is dropped, so it cannot be released as a stratum; a confidential
    stratum would be released in classes that all share its value (and merging strata
    would overwrite it)."""
    table = pd.DataFrame({"age": range(8), "dx": ["A"] * 7 + ["B"]})
    roles = RoleSpec(quasi_identifiers=("age",), strata=("dx",), **{role: ("dx",)})
    with pytest.raises(MicroaggError, match=message):
        anonymize(table, roles, k=2, merge_small_strata=True)


def test_blocks_are_k_anonymous_per_block_only(survey):
    roles = RoleSpec(quasi_identifiers=QI)
    result = anonymize(survey, roles, "mdav", k=5, blocks="age,income;hours_worked,years_education")
    assert result.blocks == (("age", "income"), ("hours_worked", "years_education"))
    assert result.block_labels.shape == (len(survey), 2)
    for block in result.blocks:
        assert result.masked.groupby(list(block)).size().min() >= 5
    assert result.verification.passed
    assert result.verification.smallest_by_block[0] >= 5
    assert "within each of the 2 attribute blocks only" in result.guarantee_text
    # k' of the whole table is reported and is far below k.
    assert result.metrics.k_prime < 5
    assert result.verification.smallest_whole_table < 5
    # SSE adds up over the blocks and equals the verifier's recomputation.
    assert result.verification.il == pytest.approx(result.metrics.il, rel=1e-9)


@pytest.mark.parametrize("blocks, message", [
    ("age,income;income,hours_worked,years_education", "'income' is in blocks 1 and 2"),
    ("age,income", "'hours_worked' is in no block"),
    ("age,income,salary;hours_worked,years_education", "'salary', which is not a quasi"),
])
def test_bad_blocks(survey, blocks, message):
    with pytest.raises(MicroaggError, match=message):
        anonymize(survey, RoleSpec(quasi_identifiers=QI), "mdav", k=5, blocks=blocks)


def test_individual_ranking_reports_real_anonymity(survey):
    result = anonymize(survey, RoleSpec(quasi_identifiers=QI), "individual-ranking", k=5)
    assert result.guarantee == "none"
    assert not result.verification.passed  # whole records are not 5-anonymous
    assert result.verification.k_prime == pytest.approx(result.metrics.k_prime)
    for column in QI:  # each attribute on its own is 5-anonymous
        assert result.masked.groupby(column).size().min() >= 5
    assert "No k-anonymity guarantee" in result.guarantee_text


def test_optimal_univariate_needs_one_attribute(survey):
    with pytest.raises(MicroaggError, match="individual-ranking"):
        anonymize(survey, RoleSpec(quasi_identifiers=QI), "optimal-univariate", k=5)
    result = anonymize(survey, RoleSpec(quasi_identifiers=("income",)),
                       "optimal-univariate", k=5)
    assert result.verification.passed
    assert result.metrics.il <= anonymize(survey, RoleSpec(quasi_identifiers=("income",)),
                                          "mdav", k=5).metrics.il + 1e-9


def test_cli_strata_blocks_and_growth(tmp_path, sample_path, capsys):
    out = tmp_path / "out.csv"
    assert main(["anonymize", str(sample_path), "-o", str(out), "--qi", *QI, "--k", "4",
                 "--method", "cbfs", "--growth", "nc", "--refine", "igd",
                 "--strata", "region"]) == 0
    assert "within strata of region" in capsys.readouterr().out
    assert main(["verify", str(sample_path), str(out), "--qi", *QI, "--k", "4",
                 "--strata", "region"]) == 0
    assert main(["anonymize", str(sample_path), "-o", str(out), "--qi", *QI, "--k", "4",
                 "--method", "gsms", "--growth", "nc", "--overwrite"]) == 2
    assert "must be one of 'nn'" in capsys.readouterr().err
    assert main(["anonymize", str(sample_path), "-o", str(out), "--qi", *QI, "--k", "4",
                 "--blocks", "age,income;hours_worked,years_education", "--overwrite"]) == 0
    assert main(["verify", str(sample_path), str(out), "--qi", *QI, "--k", "4",
                 "--blocks", "age,income;hours_worked,years_education", "--overwrite"]) == 0
    assert main(["verify", str(sample_path), str(out), "--qi", *QI, "--k", "4"]) == 1


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 4), st.integers(0, 10_000),
       st.sampled_from(["mdav", "cbfs", "tfrp", "gsms", "vmdav", "pcp", "zscores"]),
       st.sampled_from(["none", "tfrp2", "igd"]))
def test_every_method_with_strata_verifies(k, seed, method, refinement):
    rng = np.random.default_rng(seed)
    n = 60
    table = pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.normal(size=n),
                          "s": rng.choice(["x", "y", "z"], n)})
    roles = RoleSpec(quasi_identifiers=("a", "b"), strata=("s",))
    result = anonymize(table, roles, method, k=k, refine=refinement,
                       merge_small_strata=True)
    assert result.verification.passed
    assert np.bincount(result.labels).min() >= k
