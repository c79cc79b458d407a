"""The one sentence a release's guarantee is said in (results banner, report, CLI, JSON)
says every part of it, and no more than holds for the released file: attribute blocks
with Laplace noise, and records released unmasked for missing values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import RoleSpec, anonymize


def _table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(50, 10, n).round(1), "b": rng.normal(0, 1, n),
                         "c": rng.normal(5, 2, n), "d": rng.normal(9, 3, n),
                         "w": rng.uniform(0, 100, n), "v": rng.uniform(0, 10, n)})


def _smallest_class(frame, columns):
    return int(frame.groupby(columns, dropna=False).size().min())


def test_blocks_with_noise_claim_k_anonymity_per_block_only():
    table = _table()
    roles = RoleSpec(quasi_identifiers=("a", "b", "c", "d"), confidential=("w", "v"))
    result = anonymize(table, roles, "mdav", k=5, blocks="a,b;c,d", dp_epsilon=1.0,
                       confidential_bounds={"w": (0, 100), "v": (0, 10)}, seed=3)
    assert result.passed
    # The file is not k-anonymous on all quasi-identifiers together...
    assert _smallest_class(result.masked, ["a", "b", "c", "d"]) < 5
    text = result.guarantee_text
    # ...so the sentence must not say every record is hidden among k.
    assert "Every released record" not in text
    assert text.startswith("5-anonymity holds within each of the 2 attribute blocks only")
    assert "Laplace noise with epsilon = 1 each" in text
    noise = result.noise
    assert f"all 2 together: epsilon = 2, stochastic t = {noise.stochastic_t_joint:.4g}" in text


def test_noise_on_one_column_says_no_joint_figures():
    table = _table()
    roles = RoleSpec(quasi_identifiers=("a", "b"), confidential=("w",))
    result = anonymize(table, roles, "mdav", k=5, dp_epsilon=0.5,
                       confidential_bounds={"w": (0, 100)}, seed=1)
    text = result.guarantee_text
    assert text.startswith("Every released record is indistinguishable from at least 4 "
                           "others; the confidential attributes carry Laplace noise")
    assert "together" not in text and text.endswith("Proposition 1).")


@pytest.mark.parametrize("method, parameters", [("mdav", {}), ("tc-merge", {"t": 0.4})])
def test_records_released_unmasked_are_said_to_be_outside_the_guarantee(method, parameters):
    table = _table(60)
    table.loc[[3, 17], "a"] = np.nan
    roles = RoleSpec(quasi_identifiers=("a", "b"), confidential=("w",))
    result = anonymize(table, roles, method, k=4, missing="exclude", **parameters)
    assert result.passed
    # The file holds records alone in their class: the flagged ones.
    assert _smallest_class(result.masked, ["a", "b"]) == 1
    text = result.guarantee_text
    assert "Every released record" not in text
    assert text.startswith("Every masked record is indistinguishable from at least 3 others")
    assert ("The 2 record(s) released unmasked for missing values (flag column "
            f"'{result.flag_column}' = 1) are not protected") in text
    if method == "tc-merge":
        assert "of all the masked records's" not in text
        assert "within earth mover's distance t = 0.4 of all the masked records'" in text
    assert result.summary()["guarantee_text"] == text


def test_a_release_with_no_record_set_aside_says_every_released_record():
    table = _table(60)
    result = anonymize(table, RoleSpec(quasi_identifiers=("a", "b")), "mdav", k=4,
                       missing="exclude")
    assert result.guarantee_text == ("Every released record is indistinguishable from at "
                                     "least 3 others.")
