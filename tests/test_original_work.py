"""The work on the original alone, made once and shared by the runs of a sweep
(core.pipeline.original_work)."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from core import RoleSpec, anonymize, prepare_run
from core.data.encoding import encode
from core.pipeline.original_work import OriginalWork, same_encoding
from core.pipeline.stored import same_frame
from core.pipeline.sweep import sweep

ahead_code = sys.modules["core.measures.ahead"]
work_code = sys.modules["core.pipeline.original_work"]


def _table(n=600, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n).astype(float)
    table = pd.DataFrame({"age": age, "wage": rng.lognormal(10, 1, n).round(2),
                          "region": rng.choice(["N", "S", "E", "W"], n),
                          "spend": rng.normal(100, 20, n).round(1)})
    table["band"] = (age // 10).astype(int).astype(str)  # a coding of age, kept
    roles = RoleSpec(quasi_identifiers=("age", "wage", "region"), confidential=("spend",),
                     levels={"region": "nominal"})
    return table, roles


def _counting(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.parametrize("method", ["mdav", "pcp"])
def test_a_sweep_makes_the_original_work_once_and_gives_each_value_its_own_run(
        monkeypatch, method):
    table, roles = _table()
    alone = {k: anonymize(table, roles, method, k=k, intruder="pairs") for k in (3, 4, 6)}
    trees = _counting(monkeypatch, ahead_code, "linkage_originals")
    codings = _counting(monkeypatch, work_code, "column_relations")
    points = sweep(table, {"roles": roles, "method": method, "intruder": "pairs"}, "k",
                   [3, 4, 6])
    assert len(trees) == 1 and len(codings) == 1
    for point in points:
        swept, own = point.result, alone[point.value]
        assert same_frame(swept.masked, own.masked)
        assert swept.measures.summary() == own.measures.summary()
        assert swept.verification == own.verification
        assert [w.message for w in swept.warnings] == [w.message for w in own.warnings]
        assert "kept-column-reveals" in [w.kind for w in swept.warnings]


def test_the_work_serves_only_runs_of_the_same_records_roles_and_scenarios():
    table, roles = _table()
    plan = prepare_run(table, roles, "mdav", k=3)
    with ThreadPoolExecutor(max_workers=1) as executor:
        work = OriginalWork(plan, executor)
        again = prepare_run(table, roles, "pcp", k=5)  # measured afresh: equal, not same
        assert again.encoding is not plan.encoding
        adopted = work.adopt(again)
        assert adopted is not None and adopted.encoding is plan.encoding
        assert adopted.parameters == again.parameters and adopted.method == again.method
        other_roles = RoleSpec(quasi_identifiers=("age", "wage"), confidential=("spend",))
        assert work.adopt(prepare_run(table, other_roles, "mdav", k=3)) is None
        assert work.adopt(prepare_run(table, roles, "mdav", k=3, intruder="singles")) is None
        assert work.adopt(prepare_run(table.copy(), roles, "mdav", k=3)) is None
        changed = table.copy()
        changed.loc[5, "age"] += 1
        assert work.adopt(prepare_run(changed, roles, "mdav", k=3)) is None


def test_records_set_aside_are_the_same_records_only_from_the_same_table():
    table, roles = _table()
    table.loc[[4, 9], "wage"] = np.nan
    plan = prepare_run(table, roles, "mdav", k=3, missing="exclude")
    with ThreadPoolExecutor(max_workers=1) as executor:
        work = OriginalWork(plan, executor)
        assert work.adopt(prepare_run(table, roles, "mdav", k=4, missing="exclude"))
        other = table.copy()
        assert work.adopt(prepare_run(other, roles, "mdav", k=4, missing="exclude")) is None


def test_same_encoding_tells_apart_what_measures_differently():
    table, roles = _table(200)
    a, b = encode(table, roles, strict=False), encode(table, roles, strict=False)
    assert same_encoding(a, b) and same_encoding(a, a)
    shifted = table.assign(wage=table["wage"] + 1e-9)
    assert not same_encoding(a, encode(shifted, roles, strict=False))
    relabelled = table.assign(region=table["region"].replace("W", "X"))
    assert not same_encoding(a, encode(relabelled, roles, strict=False))
    ordinal = RoleSpec(quasi_identifiers=roles.quasi_identifiers, confidential=("spend",),
                       levels={"region": "ordinal"})
    assert not same_encoding(a, encode(table, ordinal, strict=False))
    # equal categories of another type are released as other text (1 against 1.0)
    numbers = table.assign(region=table["region"].map({"N": 1, "S": 2, "E": 3, "W": 4}))
    floats = numbers.assign(region=numbers["region"].astype(float))
    ints, reals = encode(numbers, roles, strict=False), encode(floats, roles, strict=False)
    assert np.array_equal(ints.X, reals.X) and not same_encoding(ints, reals)
