"""t-closeness-first's compiled cluster loop (core.methods.tfirst_loop) forms exactly the
reference's clusters (core.methods.tfirst._reference_labels, RecordPools), on one thread
and on two, with the helper's answers, with answers taken back from a helper that is
late, on deep trees, with the subsets' indexes built again, and on tie-heavy data
(duplicate rows, few distinct confidential values, nominal attributes)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.compiled import COMPILED
from core.errors import Cancelled
from core.methods import spatial_index, spatial_pool, spatial_subsets, tcloseness, tfirst
from core.privacy.attributes import TCloseAttribute
from core.progress import TaskState
from tests.test_spatial_pool import matrix

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")

if COMPILED:
    from core.methods import tfirst_loop


def confidential(X, seed, kind):
    """One or two confidential attributes; the first orders the subsets."""
    rng = np.random.default_rng(seed + 1)
    n = len(X)
    if kind == "tied to X":
        return [TCloseAttribute.from_values(X[:, 0] + rng.normal(size=n))]
    if kind == "few values":
        return [TCloseAttribute.from_values(rng.integers(0, 3, n).astype(float))]
    labels = rng.choice(["a", "b", "c"], size=n, p=(0.6, 0.3, 0.1))
    if kind == "nominal first":
        return [TCloseAttribute.from_values(labels),
                TCloseAttribute.from_values(X[:, 0] + rng.normal(size=n))]
    return [TCloseAttribute.from_values(np.round(X[:, 0])),  # "ties, then nominal"
            TCloseAttribute.from_values(labels)]


def small_indexes(patch, deep, reindex):
    """``deep``: leaves of a few rows, trees many levels deep at a few hundred records;
    ``reindex``: every subset index, and the pool of everyone, built again once half of
    it has emptied."""
    if deep:
        patch.setattr(spatial_index, "LEAF_SIZE", 4)
        patch.setattr(spatial_pool, "_LEAF_SIZE", 2)
    if reindex:
        patch.setattr(spatial_subsets, "_REINDEX_FROM", 1)
        patch.setattr(tfirst_loop, "_REBUILD_FROM", 1)


def both_labels(X, attributes, k, t):
    """Clusters before merging: (the compiled loop's run, the reference's labels)."""
    size = tfirst.tfirst_cluster_size(len(X), k, t)
    subsets, per, extra = tfirst._subsets(attributes, size)
    extras = -(-extra // per)
    compiled = tfirst_loop.tfirst_clusters(X, subsets, per, extras, TaskState())
    reference = tfirst._reference_labels(X, subsets, per, extras, TaskState())
    return compiled, reference


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 300), d=st.integers(1, 4), seed=st.integers(0, 10**6),
       k=st.integers(1, 6), t=st.sampled_from([0.0, 0.02, 0.1, 0.3, 1.0]),
       rows=st.sampled_from(["normal", "grid", "few rows", "signed zeros",
                             "indicators"]),
       values=st.sampled_from(["tied to X", "few values", "nominal first",
                               "ties, then nominal"]),
       deep=st.booleans(), threads=st.booleans(), leave=st.booleans(),
       patience=st.sampled_from([None, 0]), reindex=st.booleans())
def test_compiled_loop_equals_reference(n, d, seed, k, t, rows, values, deep, threads,
                                        leave, patience, reindex):
    X = matrix(n, d, seed, rows)
    attributes = confidential(X, seed, values)
    with pytest.MonkeyPatch.context() as patch:
        small_indexes(patch, deep, reindex)
        patch.setattr(tfirst_loop, "_two_threads", lambda levels, size: threads)
        patch.setattr(tfirst_loop, "_LEAVE_TO_HELPER", leave)
        patch.setattr(tfirst_loop, "_PATIENCE", patience)
        compiled, reference = both_labels(X, attributes, min(k, n), t)
    np.testing.assert_array_equal(compiled.labels, reference)


@pytest.mark.parametrize("rows, side_by_side", [("normal", False), ("few rows", False),
                                                ("normal", True)])
def test_tc_tfirst_on_the_loop_equals_the_reference_path(rows, side_by_side, monkeypatch):
    """The whole method, merging included, at a size where the helper and the
    rebuilt indexes are used as in a real run (and with the indexes built side by side,
    as from 20,000 records)."""
    if side_by_side:
        monkeypatch.setattr(tfirst_loop, "_SIDE_BY_SIDE_FROM", 0)
        monkeypatch.setattr(tfirst_loop, "second_thread_allowed", lambda: True)
    X = matrix(3000, 4, 11, rows)
    attributes = confidential(X, 11, "tied to X")
    compiled = tfirst.tc_tfirst(X, attributes, k=4, t=0.1)
    monkeypatch.setattr(tcloseness, "COMPILED", False)
    reference = tfirst.tc_tfirst(X, attributes, k=4, t=0.1)
    np.testing.assert_array_equal(compiled.labels, reference.labels)
    assert (compiled.merges, compiled.max_emd) == (reference.merges, reference.max_emd)


@pytest.mark.parametrize("patience, hold", [(None, False), (0, False), (None, True)])
def test_the_helpers_answers_and_the_ones_taken_back_are_the_reference(patience, hold,
                                                                       monkeypatch):
    """Every task left to the helper: its answers are used (patience), or taken back
    at once and done again in the spare scratch (no patience), unless the helper has
    begun to take its records out of the index: the run's thread then waits for it (a
    helper held inside a task until the run's patience has run out; taking that task
    back would take its records twice)."""
    X = matrix(2000, 3, 5, "few rows" if patience is None else "normal")
    attributes = confidential(X, 5, "few values")
    monkeypatch.setattr(tfirst_loop, "_two_threads", lambda levels, size: True)
    monkeypatch.setattr(tfirst_loop, "_LEAVE_TO_HELPER", True)
    monkeypatch.setattr(tfirst_loop, "_PATIENCE", patience)
    monkeypatch.setattr(tfirst_loop, "_HOLD", hold)
    compiled, reference = both_labels(X, attributes, 3, 0.2)
    np.testing.assert_array_equal(compiled.labels, reference)
    if patience == 0:
        assert compiled.gave_up > 0
    else:
        assert compiled.served > 0
    if hold:  # the helper was held, and the run's thread tried to take its task back
        assert compiled.tried > 0


@pytest.mark.parametrize("helper", [False, True])
def test_the_pool_of_everyone_built_again_gives_the_reference_clusters(helper, monkeypatch):
    """The pool of everyone is built again as its records halve (pool_on_live), between
    stretches of the loop; with every task left to the helper, whose farthest searches
    read that pool, the helper is handed the new one (an old pool no longer follows the
    removals: its farthest record would be one already taken)."""
    monkeypatch.setattr(tfirst_loop, "_REBUILD_FROM", 64)
    monkeypatch.setattr(tfirst_loop, "_STEPS", 256)  # short stretches: rebuilds between
    monkeypatch.setattr(tfirst_loop, "_two_threads", lambda levels, size: helper)
    monkeypatch.setattr(tfirst_loop, "_LEAVE_TO_HELPER", helper)
    X = matrix(3000, 3, 17, "normal")
    attributes = confidential(X, 17, "tied to X")
    compiled, reference = both_labels(X, attributes, 4, 0.1)
    np.testing.assert_array_equal(compiled.labels, reference)
    assert compiled.rebuilt >= 4
    assert (compiled.served > 0) == helper


def test_x1_taken_by_x0s_cluster_is_searched_again():
    """x₀ = record 0; its cluster takes record 2 from the second subset (the first of
    two copies), which is also the record farthest from x₀ before the cluster leaves:
    x₁ is then record 3, found by a second search."""
    X = np.array([[0.0], [1.0], [11.0], [11.0]])
    attributes = [TCloseAttribute.from_values(np.array([1.0, 2.0, 3.0, 4.0]))]
    compiled, reference = both_labels(X, attributes, 2, 1.0)
    assert compiled.labels.tolist() == reference.tolist() == [0, 1, 0, 1]
    assert compiled.again == 1


def test_progress_reaches_the_end_and_cancel_stops_the_helper(monkeypatch):
    X = matrix(4000, 3, 2, "normal")
    attributes = confidential(X, 2, "tied to X")
    size = tfirst.tfirst_cluster_size(len(X), 3, 0.1)
    subsets, per, extra = tfirst._subsets(attributes, size)
    monkeypatch.setattr(tfirst_loop, "_two_threads", lambda levels, size: True)
    fractions = []
    tfirst_loop.tfirst_clusters(X, subsets, per, -(-extra // per),
                              TaskState(lambda fraction, message: fractions.append(fraction)))
    most = -(-per // 64)  # clusters per call at most: about 64 reports
    assert len(fractions) >= per / most and fractions == sorted(fractions)
    assert fractions[-1] == 1.0
    state = TaskState(lambda fraction, message: state.cancel())
    with pytest.raises(Cancelled):
        tfirst_loop.tfirst_clusters(X, subsets, per, -(-extra // per), state)
    assert not [thread for thread in threading.enumerate()
                if thread.name == "microagg-task-helper"]


class _CancelAtCheck(TaskState):
    """A state that asks to cancel at its ``at``-th check (the builds' checks count, from
    one thread or two)."""

    def __init__(self, at: int):
        super().__init__()
        self.at, self.checks = at, 0
        self._lock = threading.Lock()

    def check(self) -> None:
        with self._lock:
            self.checks += 1
            if self.checks >= self.at:
                self.cancel()
        super().check()


@pytest.mark.parametrize("at, side_by_side", [(1, False), (2, False), (5, False),
                                              (12, False), (1, True), (3, True),
                                              (8, True)])
def test_cancel_is_honoured_while_the_indexes_are_built(at, side_by_side, monkeypatch):
    """Building the pool of every record and the subsets' indexes takes seconds at a
    million records: each build checks for Cancel between its steps, so a run
    cancelled then stops before forming any cluster. Built side by side (from 20,000
    records), the Cancel reaches both, and the run's thread raises it once the helper's
    build has stopped too."""
    if side_by_side:
        monkeypatch.setattr(tfirst_loop, "_SIDE_BY_SIDE_FROM", 0)
        monkeypatch.setattr(tfirst_loop, "second_thread_allowed", lambda: True)
    X = matrix(3000, 3, 4, "normal")
    attributes = confidential(X, 4, "tied to X")
    size = tfirst.tfirst_cluster_size(len(X), 3, 0.1)
    subsets, per, extra = tfirst._subsets(attributes, size)
    state = _CancelAtCheck(at)
    with pytest.raises(Cancelled):
        tfirst_loop.tfirst_clusters(X, subsets, per, -(-extra // per), state)
    assert state.fraction == 0.0
    assert state.checks == at or side_by_side  # two threads may both check once more
    assert not [t for t in threading.enumerate() if t.name.startswith("subset indexes")]


def test_the_subsets_typed_lists_are_made_in_cached_kernels(monkeypatch):
    """A typed list made or filled from Python compiles its methods again in every
    process (about 0.6 s before a process's first tc-tfirst or tc-bucket run); the
    subsets' lists are made inside kernels, which the on-disk cache keeps, and hold each
    subset's index and records in order."""
    from numba.typed import List

    def from_python(*args, **kwargs):
        raise AssertionError("a typed list filled from Python")

    X = np.random.default_rng(0).normal(size=(300, 3))
    subsets = [np.arange(0, 300, 3), np.arange(1, 300, 3), np.arange(2, 300, 3)]
    monkeypatch.setattr(List, "append", from_python)
    monkeypatch.setattr(List, "__setitem__", from_python)
    indexes = spatial_subsets.SubsetIndex(X, subsets)
    monkeypatch.undo()
    assert len(indexes.trees) == len(indexes.subsets) == 3
    for g, records in enumerate(subsets):
        assert np.array_equal(indexes.subsets[g], records)
        held, plain = indexes.trees[g], indexes.plain_trees[g]
        assert len(held) == len(plain)
        for a, b in zip(held, plain):  # the same arrays: the searches' removals show in both
            if isinstance(b, np.ndarray):
                assert np.shares_memory(a, b) and np.array_equal(a, b)
            else:
                assert a == b


_AUDIT = """
import json, sys
import numba.core.compiler as compiler
compiled = []
real = compiler.compile_extra
def spy(typingctx, targetctx, func, *args, **kwargs):
    compiled.append(getattr(func, "__module__", "?") + "." + getattr(func, "__qualname__", "?"))
    return real(typingctx, targetctx, func, *args, **kwargs)
compiler.compile_extra = spy
import numpy as np
from core.methods.bucket import tc_bucket
from core.methods.tfirst import tc_tfirst
rng = np.random.default_rng(0)
X = rng.normal(size=(3000, 4))
secret = X[:, 0] + rng.normal(size=3000)
tc_tfirst(X, secret, k=3, t=0.3)
tc_bucket(X, secret, k=3, t=1.5)
print(json.dumps(compiled))
"""


def test_a_new_process_compiles_nothing_for_tc_tfirst_and_tc_bucket():
    """What numba compiles is kept in its on-disk cache; what it compiles for a typed list
    filled from Python is not, and was paid again in every process (0.85 s before the
    first tc-tfirst, 0.72 s before the first tc-bucket). The first process may fill the
    cache; a second one must find everything there."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    runs = [subprocess.run([sys.executable, "-c", _AUDIT], cwd=root, capture_output=True,
                           text=True, timeout=600) for _ in range(2)]
    assert all(run.returncode == 0 for run in runs), runs[-1].stderr[-2000:]
    assert json.loads(runs[-1].stdout.strip().splitlines()[-1]) == []


def _structures(everyone, indexes):
    pool, scalars = everyone.hand_over()
    return list(pool) + list(scalars) + [a for tree in indexes.plain_trees for a in tree] + [
        indexes.scratch_shape]


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_the_indexes_built_side_by_side_are_the_ones_built_in_turn(monkeypatch):
    """The pool of everyone and the subsets' indexes are built on two threads from
    20,000 records (:func:`core.methods.tfirst_loop.build_indexes`); every array of
    both is the one the builds in turn give."""
    X = matrix(3000, 4, 5, "few rows")
    subsets = tfirst._subsets(confidential(X, 5, "tied to X"),
                              tfirst.tfirst_cluster_size(len(X), 3, 0.1))[0]
    in_turn = _structures(*tfirst_loop.build_indexes(X, subsets))
    monkeypatch.setattr(tfirst_loop, "_SIDE_BY_SIDE_FROM", 0)
    monkeypatch.setattr(tfirst_loop, "second_thread_allowed", lambda: True)
    started = []
    monkeypatch.setattr(threading.Thread, "start",
                        lambda self, start=threading.Thread.start: (started.append(self.name),
                                                                   start(self))[1])
    side_by_side = _structures(*tfirst_loop.build_indexes(X, subsets))
    assert len(started) == 1 and started[0].startswith("subset indexes")
    assert len(in_turn) == len(side_by_side)
    assert all(_same(a, b) for a, b in zip(in_turn, side_by_side))


def test_an_error_in_the_helpers_build_is_raised_on_the_runs_thread(monkeypatch):
    monkeypatch.setattr(tfirst_loop, "_SIDE_BY_SIDE_FROM", 0)
    monkeypatch.setattr(tfirst_loop, "second_thread_allowed", lambda: True)

    def broken(*args, **kwargs):
        raise MemoryError("no room for the subsets' indexes")

    monkeypatch.setattr(spatial_subsets, "SubsetIndex", broken)
    X = matrix(500, 3, 1, "normal")
    with pytest.raises(MemoryError, match="subsets' indexes"):
        tfirst_loop.build_indexes(X, [np.arange(250), np.arange(250, 500)])
