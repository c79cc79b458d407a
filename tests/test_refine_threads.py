"""The refinement's sweeps on two threads (core.methods.refine_sweep) give the reference's
labels exactly: the helper's runs of blocks, runs left all to the helper, a helper given
up on at once, and a helper held inside a run until the run's thread has given up."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from core.compiled import COMPILED
from core.methods.heuristics import fixed_size
from core.methods.refine import prepared, refine
from core.progress import TaskState
from core.threads import single_thread

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")

if COMPILED:
    from core.methods import refine_kernel, refine_passes, refine_sweep
    from core.methods import task_helper as helper
    from core.methods.refine_kernel import make_state, members
    from core.methods.refine_nearest import nearest_all, to_sweeps
    from tests.test_refine_scale import _slabs, partitions


class _Recorder(refine_passes.TaskHelper if COMPILED else object):
    """The refinement's helper, kept so a test can read what it did."""

    made: list = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _Recorder.made.append(self)


def _two(X, labels, k, method, patch, *, ways="sweeps", leave=False, patience=None,
         hold=0, shared_from=1):
    """Compiled refinement with a helper sharing every sweep of ``shared_from`` groups
    or more, against the reference; returns the run's helper."""
    _Recorder.made = []
    patch.setattr(refine_kernel, "SHARED_FROM", shared_from)
    patch.setattr(refine_passes, "second_thread_allowed", lambda: True)
    patch.setattr(refine_passes, "TaskHelper", _Recorder)
    patch.setattr(refine_sweep, "_LEAVE_TO_HELPER", leave)
    patch.setattr(refine_sweep, "_PATIENCE", patience)
    patch.setattr(refine_sweep, "_HOLD", hold)
    Xc, sq, tolerance = prepared(X)
    dense = np.unique(labels, return_inverse=True)[1].reshape(-1).astype(np.int64)
    out = refine_passes.refine_compiled(Xc, sq, dense, k=k, method=method, max_rounds=1000,
                                        tolerance=tolerance, state=TaskState(), ways=ways)
    np.testing.assert_array_equal(out, refine(X, labels, k=k, method=method,
                                              compiled=False))
    (runner,) = _Recorder.made
    return runner


@settings(max_examples=40, deadline=None)
@given(partitions())
def test_two_threads_refine_as_the_reference(case):
    X, k, labels, method = case
    with pytest.MonkeyPatch.context() as patch:
        _two(X, labels, k, method, patch)
    with pytest.MonkeyPatch.context() as patch:
        _two(X, labels, k, method, patch, leave=True, patience=0)


@pytest.mark.parametrize("patience, hold", [(None, 0), (0, 0), (None, 1), (None, 200)])
def test_the_helpers_runs_and_the_ones_taken_back_give_the_reference(patience, hold,
                                                                    monkeypatch):
    """Every run of blocks left to the helper: its answers are used (patience), or the
    run's thread sweeps everything again at once (no patience), or after the helper,
    held inside its first or its 200th run, has made the run's thread give up waiting
    (the shared rows then hold an earlier sweep's answers, which must not be read)."""
    X = np.random.default_rng(5).standard_normal((3000, 4))
    labels = fixed_size(X, k=4, first="cbfs")
    runner = _two(X, labels, 4, "igd", monkeypatch, leave=True, patience=patience,
                  hold=hold)
    if patience == 0 or hold:
        assert runner.gave_up > 0
    else:  # (a busy machine may still take the helper off its processor past patience)
        assert runner.served > 0


def test_a_run_with_its_helper_on_slabs_refines_as_the_reference(monkeypatch):
    """Both threads claim runs, as in a real run, through sweeps, lists and held split
    passes (groups enough for a helper at a lower threshold than the product's)."""
    X, labels = _slabs(6000, 6, 4)
    monkeypatch.setattr(refine_passes, "_MANY_GROUPS", 0)
    _two(X, labels, 4, "igd", monkeypatch, ways="auto", shared_from=256)


def test_a_helper_given_up_on_leaves_the_answer_in_the_run_threads_buffers():
    """Runs left to a helper that never comes (none runs here): after its patience the
    run's thread sweeps everything itself and answers from its own buffers, not from the
    shared rows, which still hold an earlier sweep's answers; it then keeps to one
    thread (``ctrl[ON]`` off)."""
    X = np.random.default_rng(3).standard_normal((2000, 3))
    labels = fixed_size(X, k=4, first="mdav")
    Xc, sq, _ = prepared(X)
    s = make_state(Xc, sq, labels.astype(np.int64), drift=0.1, margin=1e-9,
                   shared=refine_kernel.share(len(X), leave=True, patience=0))
    to_sweeps(s)
    s.ctrl[helper.FIRST] = 1
    s.jbest[:], s.jout[:] = -1.0, 0  # an earlier sweep's answers: nearer than any
    s.ctrl[helper.ON] = 1
    recs = np.empty(len(X), dtype=np.int64)
    m = members(s, 7, recs)
    out = np.empty(m, dtype=np.int64)
    nearest_all(s, recs, m, 7, out)
    assert s.ctrl[helper.ON] == 0 and s.ctrl[helper.GAVE_UP] == 1
    live = np.flatnonzero(s.count[:s.meta[0]] > 0)
    others = live[live != 7]
    centroids = s.sums[others] / s.count[others, None]
    for t in range(m):
        d = ((centroids - Xc[recs[t]]) ** 2).sum(axis=1)
        assert out[t] == others[np.argmin(d)]


def test_no_helper_in_a_single_thread_block(monkeypatch):
    """A cluster worker's refinement stays on its own thread (core.threads)."""
    _Recorder.made = []
    monkeypatch.setattr(refine_kernel, "SHARED_FROM", 1)
    monkeypatch.setattr(refine_passes, "TaskHelper", _Recorder)
    X = np.random.default_rng(1).standard_normal((600, 3))
    labels = fixed_size(X, k=3, first="mdav")
    with single_thread():
        alone = refine(X, labels, k=3, method="igd")
    assert _Recorder.made == []
    refine(X, labels, k=3, method="igd")
    assert len(_Recorder.made) == (1 if refine_passes.second_thread_allowed() else 0)
    np.testing.assert_array_equal(refine(X, labels, k=3, method="igd"), alone)
