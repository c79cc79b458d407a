"""A confidential column's distance can be declared: nominal (equal distance) for codes
stored as numbers (diagnosis 1..5), numeric (ordered distance) otherwise; the default is
ordered for numbers and equal for text. The method, the verifier and the measures take
the same distance, so a release of codes is never verified under an order they lack."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import MicroaggError, RoleSpec, anonymize
from core.verify.guarantees import T_CLOSENESS


def _nominal_emd(released, qi, column):
    """Largest over classes of the equal-distance EMD, 0.5·Σ|p_class − p_whole|."""
    whole = released[column].value_counts(normalize=True)
    worst = 0.0
    for _, rows in released.groupby(qi):
        share = rows[column].value_counts(normalize=True).reindex(whole.index, fill_value=0)
        worst = max(worst, 0.5 * float((share - whole).abs().sum()))
    return worst


def _ordered_emd(released, qi, column):
    """Largest over classes of the ordered-distance EMD over the m distinct values."""
    values = np.sort(released[column].unique())
    m = len(values)
    whole = released[column].value_counts(normalize=True).reindex(values).to_numpy()
    worst = 0.0
    for _, rows in released.groupby(qi):
        share = rows[column].value_counts(normalize=True).reindex(values, fill_value=0)
        worst = max(worst, float(np.abs(np.cumsum(share.to_numpy() - whole))[:-1].sum()
                                 / (m - 1)))
    return worst


def test_codes_without_order_are_verified_with_the_equal_distance():
    table = pd.DataFrame({"q": [1.0] * 4 + [2.0] * 4, "dx": [1, 2, 1, 2, 3, 4, 3, 4]})
    ordered = T_CLOSENESS.check(table, table, RoleSpec(quasi_identifiers=("q",),
                                                       confidential=("dx",)), k=4, t=0.4)
    assert ordered.passed and ordered.closeness.kinds == ("numerical",)
    declared = RoleSpec(quasi_identifiers=("q",), confidential=("dx",),
                        levels={"dx": "nominal"})
    nominal = T_CLOSENESS.check(table, table, declared, k=4, t=0.4)
    assert nominal.closeness.kinds == ("nominal",)
    assert nominal.closeness.max_emd[0] == pytest.approx(_nominal_emd(table, ["q"], "dx"))
    assert nominal.closeness.max_emd[0] == pytest.approx(0.5) and not nominal.passed


@pytest.mark.parametrize("method", ["tc-merge", "tc-kfirst", "tc-tfirst"])
def test_a_method_builds_verifies_and_measures_with_the_declared_distance(method):
    rng = np.random.default_rng(1)
    n = 300
    table = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    # Diagnosis codes that follow a: in code order they are close, as categories not.
    table["dx"] = np.clip(np.round(table["a"] * 2 + 3 + rng.normal(0, 0.7, n)), 1, 6).astype(int)
    roles = RoleSpec(quasi_identifiers=("a", "b"), confidential=("dx",),
                     levels={"dx": "nominal"})
    result = anonymize(table, roles, method, k=5, t=0.25)
    assert result.passed and result.tcloseness.kinds == ("nominal",)
    released = result.masked
    independent = _nominal_emd(released, ["a", "b"], "dx")
    assert result.tcloseness.max_emd[0] == pytest.approx(independent)
    assert independent <= 0.25 + 1e-12
    assert result.measures.max_emd["dx"] == pytest.approx(independent)
    assert "(equal distance)" in result.tcloseness.describe()
    default = anonymize(table, RoleSpec(quasi_identifiers=("a", "b"), confidential=("dx",)),
                        method, k=5, t=0.25)
    assert default.tcloseness.kinds == ("numerical",)
    assert default.tcloseness.max_emd[0] == pytest.approx(
        _ordered_emd(default.masked, ["a", "b"], "dx"))


def test_levels_of_confidential_columns_are_checked():
    table = pd.DataFrame({"q": [1.0, 2.0], "dx": [1, 2], "note": ["x", "y"], "o": [3, 4]})
    with pytest.raises(MicroaggError, match="Confidential column 'dx' is declared ordinal"):
        RoleSpec(quasi_identifiers=("q",), confidential=("dx",),
                 levels={"dx": "ordinal"}).validate(table)
    with pytest.raises(MicroaggError, match="'note' is declared numeric but is not numeric"):
        RoleSpec(quasi_identifiers=("q",), confidential=("note",),
                 levels={"note": "numeric"}).validate(table)
    with pytest.raises(MicroaggError, match="neither a quasi-identifier nor a confidential"):
        RoleSpec(quasi_identifiers=("q",), non_confidential=("o",),
                 levels={"o": "nominal"}).validate(table)
    spec = RoleSpec.from_mapping({"q": "quasi-identifier", "dx": "confidential",
                                  "o": "non-confidential"},
                                 levels={"dx": "nominal", "o": "nominal", "q": "numeric"})
    assert spec.confidential_kinds == {"dx": "nominal"} and spec.level_of("o") is None
    assert RoleSpec(quasi_identifiers=("q",), confidential=("dx",)).confidential_kinds is None


def test_the_command_line_declares_codes_nominal_for_anonymize_verify_and_measure(tmp_path,
                                                                                  capsys):
    import json

    from core.cli.main import main
    rng = np.random.default_rng(1)
    n = 200
    table = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    table["dx"] = np.clip(np.round(table["a"] * 2 + 3 + rng.normal(0, 0.7, n)), 1, 6).astype(int)
    source, out = tmp_path / "original.csv", tmp_path / "released.csv"
    table.to_csv(source, index=False)
    common = ["--qi", "a", "b", "--confidential", "dx", "--nominal", "dx"]
    summary = tmp_path / "run.json"
    assert main(["anonymize", str(source), "-o", str(out), "--method", "tc-merge", "--k", "5",
                 "--t", "0.25", "--summary-json", str(summary), *common]) == 0
    run = json.loads(summary.read_text())
    assert run["emd_distance"] == {"dx": "nominal"}
    capsys.readouterr()
    assert main(["verify", str(source), str(out), "--k", "5", "--t", "0.25", *common]) == 0
    printed = capsys.readouterr().out
    assert "'dx' largest EMD" in printed and "(equal distance)" in printed
    measured = tmp_path / "measure.json"
    assert main(["measure", str(source), str(out), "--summary-json", str(measured),
                 *common]) == 0
    assert json.loads(measured.read_text())["max_emd"]["dx"] == pytest.approx(
        run["max_emd"]["dx"])
    assert run["max_emd"]["dx"] == pytest.approx(
        _nominal_emd(pd.read_csv(out), ["a", "b"], "dx"))


def test_laplace_noise_on_a_column_of_codes_is_refused():
    table = pd.DataFrame({"a": np.arange(20.0), "dx": np.arange(20) % 4 + 1})
    roles = RoleSpec(quasi_identifiers=("a",), confidential=("dx",), levels={"dx": "nominal"})
    with pytest.raises(MicroaggError, match="'dx' is declared nominal .* no code"):
        anonymize(table, roles, "mdav", k=4, dp_epsilon=1.0, confidential_bounds={"dx": (1, 4)})
