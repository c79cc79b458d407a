"""The measures computed with helper threads: the same figures as each measure's own
function, every scenario given its own figures, and a cancel leaves no thread behind."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from core import Cancelled, TaskState
from core.data.roles import RoleSpec
from core.measures.disclosure import interval_disclosure, record_linkage
from core.measures.measure import measure
from core.measures.utility import information_loss_il1
from core.methods.mdav import mdav


def _release(n: int, seed: int):
    rng = np.random.default_rng(seed)
    columns = ["a", "b", "c"]
    original = pd.DataFrame(rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, -2.0],
                            columns=columns)
    X = original.to_numpy()
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    labels = mdav(Z, k=3)
    means = pd.DataFrame(X).groupby(labels).transform("mean").to_numpy()
    roles = RoleSpec(quasi_identifiers=tuple(columns))
    return original, pd.DataFrame(means, columns=columns), roles


@pytest.mark.parametrize("seed", [0, 1])
def test_every_scenario_gets_the_figures_of_its_own_attributes(seed):
    original, masked, roles = _release(300, seed)
    m = measure(original, masked, roles, known=[["c"], ["a", "b"], ["b"], ["a", "b", "c"]])
    X, Xm = original.to_numpy(), masked.to_numpy()
    mean, sd = X.mean(axis=0), X.std(axis=0)
    Z, Zm = (X - mean) / sd, (Xm - mean) / sd
    for scenario, columns in zip(m.scenarios, ([2], [0, 1], [1], [0, 1, 2])):
        assert scenario.dld == pytest.approx(record_linkage(Z[:, columns], Zm[:, columns]))
        assert scenario.id == pytest.approx(interval_disclosure(X[:, columns], Xm[:, columns]))
    assert m.il1 == pytest.approx(information_loss_il1(X, Xm)[0])
    assert m.dld == pytest.approx(np.mean([s.dld for s in m.scenarios]))


def test_a_cancel_during_the_measures_leaves_no_helper_thread():
    original, masked, roles = _release(3000, 2)
    state = TaskState()
    state.cancel()
    before = {t.ident for t in threading.enumerate()}
    with pytest.raises(Cancelled):
        measure(original, masked, roles, scenarios="singles", state=state)
    left = [t for t in threading.enumerate()
            if t.ident not in before and t.name.startswith("measures")]
    for thread in left:  # not waited for: a helper ends with its task, nothing queued
        thread.join(10)
        assert not thread.is_alive()
