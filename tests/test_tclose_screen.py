"""tc-merge's screen on two threads (core.methods.tclose_screen) gives the reference's
merges exactly: the helper's chunks, chunks left all to the helper, a helper given up on
at once, and a helper held inside its chunk until the run's thread has given up."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.compiled import COMPILED
from core.methods import tcloseness
from core.privacy.attributes import TCloseAttribute
from core.progress import TaskState

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")

if COMPILED:
    from core.methods import tclose_merge, tclose_screen
    from core.methods.tclose_screen import new_share, screen_all, screen_range


def _case(n, seed, *, rows="normal", d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if rows == "few rows":
        X = X[rng.integers(0, min(40, n), n)]
    attributes = [TCloseAttribute.from_values(X[:, 0] + rng.normal(size=n))]
    base = rng.permutation(n) // 2  # clusters of two, scattered: many merges
    return X, attributes, base


class _Recorder(tclose_merge.TaskHelper if COMPILED else object):
    """The merging run's helper, kept so a test can read what it did."""

    made: list = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _Recorder.made.append(self)


def _merge(X, attributes, base, t, patch, *, leave=False, patience=None, hold=0):
    """Compiled merging with a helper on tiny screens (every pass of 2 blocks or more
    shared), against the reference; returns the run's helper."""
    _Recorder.made = []
    patch.setattr(tclose_merge, "_two_threads", lambda groups: True)
    patch.setattr(tclose_merge, "TaskHelper", _Recorder)
    patch.setattr(tclose_screen, "SPLIT_FROM", 2)
    patch.setattr(tclose_screen, "_LEAVE_TO_HELPER", leave)
    patch.setattr(tclose_screen, "_PATIENCE", patience)
    patch.setattr(tclose_screen, "_HOLD", hold)
    labels, merges = tclose_merge.merge_until_close(X, attributes, base, t, TaskState(),
                                                    tcloseness._compact)
    expected, expected_merges = tcloseness._merge_until_close(X, attributes, base, t,
                                                              TaskState())
    np.testing.assert_array_equal(labels, expected)
    assert merges == expected_merges
    (runner,) = _Recorder.made
    return runner, merges


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 400), seed=st.integers(0, 10**6),
       t=st.sampled_from([0.0, 0.05, 0.1, 0.3]), rows=st.sampled_from(["normal", "few rows"]),
       leave=st.booleans(), patience=st.sampled_from([None, 0]))
def test_two_threads_merge_as_the_reference(n, seed, t, rows, leave, patience):
    X, attributes, base = _case(n, seed, rows=rows)
    with pytest.MonkeyPatch.context() as patch:
        _merge(X, attributes, base, t, patch, leave=leave, patience=patience)


@pytest.mark.parametrize("patience, hold", [(None, 0), (0, 0), (None, 1), (None, 200)])
def test_the_helpers_chunks_and_the_ones_taken_back_give_the_reference(patience, hold,
                                                                      monkeypatch):
    """Every chunk left to the helper: its answers are used (patience), or every place
    is screened again by the run's thread at once (no patience), or after the helper,
    held inside its first or its 200th chunk, has made the run's thread give up waiting
    (the shared buffers then hold an earlier merge's distances, which must not be
    read)."""
    X, attributes, base = _case(3000, 7, d=4)
    runner, merges = _merge(X, attributes, base, 0.05, monkeypatch, leave=True,
                            patience=patience, hold=hold)
    assert merges > 1000
    if patience == 0 or hold:
        assert runner.gave_up > 0
    else:  # (a busy machine may still take the helper off its processor past patience)
        assert runner.served > 0


def test_a_run_with_its_helper_at_scale_merges_as_the_reference(monkeypatch):
    """Both threads claim chunks, as in a real run (how many the helper gets depends on
    the machine: which chunks, the tests above force)."""
    X, attributes, base = _case(6000, 3, d=5)
    _merge(X, attributes, base, 0.1, monkeypatch)


def test_screen_range_is_the_whole_screen_in_pieces():
    """Any cut into runs of blocks gives the one pass's distances and minima."""
    rng = np.random.default_rng(2)
    screen = rng.normal(size=(4, 160)).astype(np.float32)
    q32 = rng.normal(size=4).astype(np.float32)
    whole_d, whole_min = np.empty(160, np.float32), np.empty(10, np.float32)
    screen_range(screen, 0, 10, q32, whole_d, whole_min)
    expected = ((screen - q32[:, None]) ** 2).sum(axis=0)
    np.testing.assert_allclose(whole_d, expected, rtol=1e-6)
    np.testing.assert_array_equal(whole_min, whole_d.reshape(10, 16).min(axis=1))
    parts_d, parts_min = np.empty(160, np.float32), np.empty(10, np.float32)
    for first, last in ((0, 3), (3, 4), (4, 10)):
        screen_range(screen, first, last, q32, parts_d, parts_min)
    np.testing.assert_array_equal(parts_d, whole_d)
    np.testing.assert_array_equal(parts_min, whole_min)


def test_one_thread_screens_into_its_own_buffers():
    """Without a helper (``ctrl[ON]`` off) the run's thread writes only its own buffers,
    never the ones a late helper may still be writing."""
    share = new_share(64)
    shared_d, shared_min = share[4], share[5]
    shared_d[:], shared_min[:] = -1.0, -1.0
    screen = np.ones((2, 64), dtype=np.float32)
    d32, block_min = screen_all(4, screen, np.zeros(2, np.float32), share)
    assert d32 is not shared_d and (d32 == 2.0).all() and (block_min == 2.0).all()
    assert (shared_d == -1.0).all() and (shared_min == -1.0).all()


def test_a_helper_given_up_on_leaves_the_answer_in_the_run_threads_buffers():
    """Chunks left to a helper that never comes (none runs here): after its patience the
    run's thread screens everything itself and answers from its own buffers, not from
    the shared ones, which still hold an earlier merge's distances; it then keeps to
    one thread (``ctrl[ON]`` off)."""
    from core.methods import task_helper as helper

    rng = np.random.default_rng(4)
    screen = rng.normal(size=(3, 320)).astype(np.float32)
    earlier, now = (rng.normal(size=3).astype(np.float32) for _ in range(2))
    share = new_share(320)
    ctrl = share[0]
    screen_range(screen, 0, 20, earlier, share[4], share[5])  # an earlier merge's answer
    ctrl[helper.ON], ctrl[helper.LEAVE], ctrl[helper.PATIENCE], ctrl[helper.FIRST] = 1, 1, 0, 2
    stale_d, stale_min = share[4].copy(), share[5].copy()
    d32, block_min = screen_all(20, screen, now, share)
    expected_d, expected_min = np.empty(320, np.float32), np.empty(20, np.float32)
    screen_range(screen, 0, 20, now, expected_d, expected_min)
    np.testing.assert_array_equal(d32, expected_d)
    np.testing.assert_array_equal(block_min, expected_min)
    assert d32.ctypes.data == share[6].ctypes.data  # the run thread's own buffers
    np.testing.assert_array_equal(share[4], stale_d)  # where a late helper may write
    np.testing.assert_array_equal(share[5], stale_min)
    assert ctrl[helper.ON] == 0 and ctrl[helper.GAVE_UP] == 1


def test_a_search_on_one_thread_leaves_the_shared_buffers_alone():
    """A merge searched on one thread (after a helper was given up on, it may still be
    writing the shared buffers) screens into the run thread's own buffers only."""
    rng = np.random.default_rng(6)
    live, d = 200, 3
    C = np.ascontiguousarray(rng.normal(size=(d, live)))
    places = -(-live // 16) * 16
    center = C.mean(axis=1)
    screen = np.full((d, places), np.inf, dtype=np.float32)
    screen[:, :live] = C - center[:, None]
    spread = float(((C - center[:, None]) ** 2).sum(axis=0).max())
    share = new_share(places)
    share[4][:], share[5][:] = 7.0, 7.0  # what a late helper might have left
    ties = np.empty(live, dtype=np.int64)
    count = tclose_merge._nearest_ties(3, live, C, screen, center, spread, np.empty(d),
                                       np.empty(d, dtype=np.float32), share, np.empty(live),
                                       ties)
    distance = ((C - C[:, [3]]) ** 2).sum(axis=0)
    distance[3] = np.inf
    assert count == 1 and ties[0] == np.argmin(distance)
    assert (share[4] == 7.0).all() and (share[5] == 7.0).all()


def test_a_helper_still_in_an_old_task_is_not_woken_for_the_next_stretch():
    """After a stretch whose helper was given up on, the next stretch stays on one
    thread (``ctrl[ON]`` off) until the helper has left its loop: only then may the run
    thread read the shared buffers again."""
    import threading

    from core.methods import task_helper as helper

    release = threading.Event()
    ctrl = helper.new_control()
    runner = helper.TaskHelper(ctrl, lambda: release.wait(10), ())
    try:
        runner.begin()  # wakes the helper, which then stays "in its task"
        first = ctrl[helper.ON]
        runner.end(0.1, 1)
        for _ in range(3):
            runner.begin()
            assert ctrl[helper.ON] == 0
            runner.end(0.1, 1)
        release.set()
        assert runner._idle.wait(5)
    finally:
        release.set()
        runner.close()
    assert first == 1


def test_no_helper_thread_is_left_after_a_run_or_a_cancel(monkeypatch):
    import threading

    from core.errors import Cancelled

    X, attributes, base = _case(3000, 9, d=4)
    _merge(X, attributes, base, 0.05, monkeypatch)
    state = TaskState()
    steps = []

    def step(fraction, message=""):
        steps.append(fraction)
        if len(steps) == 3:
            state.cancel()
        TaskState.step(state, fraction, message)

    monkeypatch.setattr(state, "step", step)
    with pytest.raises(Cancelled):
        tclose_merge.merge_until_close(X, attributes, base, 0.05, state, tcloseness._compact)
    assert not [t for t in threading.enumerate() if t.name == "microagg-merge-helper"]
