"""IGD's skipped looks (core.methods.refine_track) and the split not kept.

A split that does not lower the SSE leaves every group's statistics and members exactly
as they were, in the compiled passes and in the numpy reference; IGD skips the looks
that still hold, gives the labels of a run that looks at every group and of the
reference, and takes a look again when a group near it has changed.
"""

import numpy as np
import pytest

from core.compiled import COMPILED
from core.methods.heuristics import fixed_size
from core.methods.refine import prepared, refine
from core.methods.refine_passes import refine_compiled
from core.methods.refine_reference import _Partition
from core.progress import TaskState

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba switched off or missing")


def _converged(k=2):
    """An IGD partition of 3,000 normal records in the plane: its groups of 2k or more
    records are ones whose split did not pay."""
    X = np.random.default_rng(4).standard_normal((3000, 2))
    return X, refine(X, fixed_size(X, k=k, first="mdav"), k=k, method="igd",
                     compiled=False)


def _statistics(count, sums, sumsq, n_groups):
    return count[:n_groups].copy(), sums[:n_groups].copy(), sumsq[:n_groups].copy()


def _members_of(s, n_groups, recs):
    from core.methods.refine_kernel import members

    return [recs[:members(s, g, recs)].tolist() for g in range(n_groups)]


def test_a_compiled_split_not_kept_puts_everything_back_bit_for_bit():
    from core.methods.refine_chunks import _add, _remove, _split
    from core.methods.refine_kernel import N_GROUPS, N_LIVE, make_state, members, reserve
    from core.methods.refine_nearest import to_sweeps

    k = 2
    X, labels = _converged(k)
    Xc, sq, tolerance = prepared(X)
    s = reserve(make_state(Xc, sq, labels, drift=0.1, margin=1e-9), len(X) // k + 1)
    to_sweeps(s)
    scratch = np.empty((len(X), 4), dtype=np.int64)
    recs = np.empty(len(X), dtype=np.int64)
    undone = kept = recomputed_differs = 0
    for p in range(int(s.meta[N_GROUPS])):
        if s.count[p] < 2 * k:
            continue
        # a past: p's first record leaves and comes back, so p's Σx is no longer the sum
        # of its records in order (which a split undone by adding them again would give)
        members(s, p, recs)
        one = recs[:1].copy()
        _remove(s, p, one, 1)
        _add(s, p, one, 1)
        differs = not np.array_equal(
            np.cumsum(Xc[recs[:members(s, p, recs)]], axis=0)[-1], s.sums[p])
        n_groups, n_live = int(s.meta[N_GROUPS]), int(s.meta[N_LIVE])
        before = _statistics(s.count, s.sums, s.sumsq, n_groups)
        listed = _members_of(s, n_groups, recs)
        if _split(s, k, tolerance, p, scratch):
            kept += 1
            continue
        undone += 1
        recomputed_differs += differs
        assert (int(s.meta[N_GROUPS]), int(s.meta[N_LIVE])) == (n_groups, n_live)
        for old, new in zip(before, _statistics(s.count, s.sums, s.sumsq, n_groups)):
            assert np.array_equal(old, new)  # bit for bit, not recomputed
        assert _members_of(s, n_groups, recs) == listed
    assert undone >= 10 and recomputed_differs >= 1


def test_a_reference_split_not_kept_puts_everything_back_bit_for_bit():
    k = 2
    X, labels = _converged(k)
    Xc, sq, tolerance = prepared(X)
    partition = _Partition(Xc, sq, labels, k, tolerance)
    undone = kept = recomputed_differs = 0
    for p in range(len(partition.members)):
        if partition.members[p] is None or len(partition.members[p]) < 2 * k:
            continue
        first = partition.members[p][0]  # a past, as in the compiled test
        partition._remove(p, [first])
        partition._add(p, [first])
        differs = not np.array_equal(
            np.cumsum(Xc[partition.members[p]], axis=0)[-1], partition.sums[p])
        before = (partition.count.copy(), partition.sums.copy(), partition.sumsq.copy(),
                  [list(m) if m else m for m in partition.members], partition.n_live)
        if partition._split(p):
            kept += 1
            continue
        undone += 1
        recomputed_differs += differs
        assert np.array_equal(before[0], partition.count)
        assert np.array_equal(before[1], partition.sums)
        assert np.array_equal(before[2], partition.sumsq)
        assert before[3] == partition.members and before[4] == partition.n_live
    assert undone >= 10 and recomputed_differs >= 1


def _watched(monkeypatch):
    """Every state a compiled run makes (its counters are read after the run)."""
    from core.methods import refine_passes

    states = []
    make = refine_passes.make_state

    def watched(*args, **kwargs):
        states.append(make(*args, **kwargs))
        return states[-1]

    monkeypatch.setattr(refine_passes, "make_state", watched)
    return states


@pytest.mark.parametrize("kind", ["normal", "ties"])
def test_igd_skips_the_looks_that_hold_and_gives_the_labels_of_every_look(monkeypatch,
                                                                          kind):
    from core.methods.refine_kernel import CLOCK, LOG, SKIPPED

    rng = np.random.default_rng(17)
    X = (rng.standard_normal((4000, 5)) if kind == "normal" else
         rng.integers(-3, 4, size=(4000, 3)).astype(float))
    labels = fixed_size(X, k=4, first="cbfs")
    Xc, sq, tolerance = prepared(X)
    states = _watched(monkeypatch)
    runs = {}
    for track in (True, False):
        runs[track] = refine_compiled(Xc, sq, labels, k=4, method="igd", max_rounds=1000,
                                      tolerance=tolerance, state=TaskState(), track=track)
    tracked, every = states
    assert tracked.meta[SKIPPED] > 1000 and every.meta[SKIPPED] == 0
    if kind == "normal":  # the log wrapped: looks older than it were taken again
        assert tracked.meta[CLOCK] > LOG
    np.testing.assert_array_equal(runs[True], runs[False])
    np.testing.assert_array_equal(runs[True], refine(X, labels, k=4, compiled=False))


def test_tfrp2_keeps_no_looks(monkeypatch):
    from core.methods.refine_kernel import SKIPPED, TRACK

    X = np.random.default_rng(2).standard_normal((2000, 4))
    labels = fixed_size(X, k=3, first="mdav")
    states = _watched(monkeypatch)
    out = refine(X, labels, k=3, method="tfrp2")
    assert states[0].meta[TRACK] == 0 and states[0].meta[SKIPPED] == 0
    np.testing.assert_array_equal(out, refine(X, labels, k=3, method="tfrp2",
                                              compiled=False))


def test_a_look_is_taken_again_when_a_group_near_it_changes():
    """Group P's look holds while nothing near it changes; a group that is no record's
    answer moving nearer to one of P's records than its answer makes the look stale."""
    from core.methods.refine_chunks import _add, _remove, decompose_chunk
    from core.methods.refine_kernel import DECOMPOSE, TRACK, make_state, members
    from core.methods.refine_nearest import to_sweeps
    from core.methods.refine_track import unchanged

    column = [(0.0, -1.0), (0.0, 0.0), (0.0, 1.0)]
    groups = [[(x - 10, y) for x, y in column], column, [(x + 10, y) for x, y in column],
              [(0.0, 30.0), (0.0, 31.0), (0.0, 32.0)],  # C: no record's answer
              [(0.0, -60.0), (0.0, -61.0), (0.0, -62.0), (0.0, -63.0)]]  # E: far
    X = np.array([point for group in groups for point in group])
    labels = np.repeat(np.arange(5), [3, 3, 3, 3, 4])
    Xc, sq, tolerance = prepared(X)
    s = make_state(Xc, sq, labels, drift=0.1, margin=1e-9)
    to_sweeps(s)
    s.meta[TRACK] = 1
    scratch = np.empty((len(X), 4), dtype=np.int64)
    decompose_chunk(s, 3, tolerance, 0, 5, 10**9, scratch)  # every look: nothing to do
    recs = np.empty(len(X), dtype=np.int64)
    m = members(s, 1, recs)
    assert unchanged(s, 1, DECOMPOSE, recs, m)
    one = np.array([15], dtype=np.int64)  # (0, −63) leaves E and comes back: far away
    _remove(s, 4, one, 1)
    _add(s, 4, one, 1)
    assert unchanged(s, 1, DECOMPOSE, recs, m)
    one[0] = 12  # (0, −60) joins C, whose centroid comes to (0, 8.25): nearer than A, B
    _remove(s, 4, one, 1)
    _add(s, 3, one, 1)
    assert not unchanged(s, 1, DECOMPOSE, recs, m)
