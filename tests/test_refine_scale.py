"""The compiled refinement (core.methods.refine_passes) against the numpy reference.

The same labels, bit for bit, on random data, tie-heavy integer grids, a few distinct rows
repeated, and hypothesis-drawn cases; the candidate lists answer as brute force does;
MICROAGG_NO_COMPILE=1 takes the reference with the same labels; progress comes often
and a large run stops promptly when cancelled.
"""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.compiled import COMPILED
from core.errors import Cancelled
from core.measures.partition import sse
from core.methods.heuristics import fixed_size
from core.methods.pool import squared_distances
from core.methods.refine import prepared, refine
from core.methods.refine_passes import refine_compiled
from core.progress import TaskState

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba switched off or missing")
REPO = Path(__file__).resolve().parent.parent


def _both(X, labels, k, method):
    """The reference's labels and the compiled ones; the compiled run on the lists alone,
    on the sweeps alone and looking at every group in every pass (no look skipped,
    core.methods.refine_track) must give the reference's labels too."""
    reference = refine(X, labels, k=k, method=method, compiled=False)
    compiled = refine(X, labels, k=k, method=method, compiled=True)
    Xc, sq, tolerance = prepared(X)
    dense = np.unique(labels, return_inverse=True)[1].reshape(-1).astype(np.int64)
    for ways in ("lists", "sweeps"):
        one_way = refine_compiled(Xc, sq, dense, k=k, method=method, max_rounds=1000,
                                  tolerance=tolerance, state=TaskState(), ways=ways)
        np.testing.assert_array_equal(one_way, reference, err_msg=ways)
    every_look = refine_compiled(Xc, sq, dense, k=k, method=method, max_rounds=1000,
                                 tolerance=tolerance, state=TaskState(), track=False)
    np.testing.assert_array_equal(every_look, reference, err_msg="every look")
    return reference, compiled


def _data(kind, rng, n):
    if kind == "normal":
        return rng.standard_normal((n, 4))
    if kind == "ties":  # an integer grid: many exactly equal distances
        return rng.integers(-2, 3, size=(n, 3)).astype(float)
    return np.repeat(rng.standard_normal((n // 30, 2)), 30, axis=0)  # few distinct rows


@pytest.mark.parametrize("method", ["tfrp2", "igd"])
@pytest.mark.parametrize("kind", ["normal", "ties", "duplicates"])
@pytest.mark.parametrize("first", ["cbfs", "mdav"])
def test_compiled_gives_the_reference_labels(method, kind, first):
    rng = np.random.default_rng(5)
    X = _data(kind, rng, 1500)
    k = 4
    labels = fixed_size(X, k=k, first=first)
    reference, compiled = _both(X, labels, k, method)
    np.testing.assert_array_equal(compiled, reference)
    assert np.bincount(compiled).min() >= k and sse(X, compiled) <= sse(X, labels)


def test_compiled_gives_the_reference_labels_on_many_groups_in_ten_dimensions():
    """Thousands of groups, as in the scale benchmark: anchors, drifted groups compared
    directly and records compared with every group all take part."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((6000, 10))
    labels = fixed_size(X, k=5, first="cbfs")
    reference, compiled = _both(X, labels, 5, "igd")
    np.testing.assert_array_equal(compiled, reference)


def test_a_poor_partition_of_a_small_grid_gives_the_reference_labels():
    """Groups in input order on a 5 × 5 grid: ties everywhere, many splits undone."""
    X = np.array([(a, b) for a in range(-2, 3) for b in range(-2, 3)] * 24, dtype=float)
    labels = np.repeat(np.arange(len(X) // 6), 6)
    for k in (3, 6):
        reference, compiled = _both(X, labels, k, "igd")
        np.testing.assert_array_equal(compiled, reference)


@st.composite
def partitions(draw):
    k = draw(st.integers(2, 5))
    n = draw(st.integers(2 * k, 60 * k))
    d = draw(st.integers(1, 3))
    X = draw(st.one_of(
        arrays(np.float64, (n, d), elements=st.integers(-2, 2).map(float)),
        arrays(np.float64, (n, d), elements=st.floats(-100, 100, allow_nan=False)),
    ))
    if draw(st.booleans()):  # a few distinct rows repeated
        X = np.repeat(X[:max(1, n // 6)], 6, axis=0)[:n]
    labels = fixed_size(X, k=k, first=draw(st.sampled_from(["mdav", "cbfs"])))
    return X, k, labels, draw(st.sampled_from(["tfrp2", "igd"]))


@settings(max_examples=150, deadline=None)
@given(partitions())
def test_compiled_equals_reference_property(case):
    X, k, labels, method = case
    reference, compiled = _both(X, labels, k, method)
    np.testing.assert_array_equal(compiled, reference)
    assert np.bincount(compiled).min() >= k
    assert sse(X, compiled) <= sse(X, labels) + 1e-9 * max(1.0, sse(X, labels))


@pytest.mark.parametrize("candidates", [1, 2, 4])
@pytest.mark.parametrize("kind", ["normal", "ties", "duplicates"])
def test_short_candidate_lists_give_the_reference_labels(kind, candidates):
    """With one to four groups listed per record the bounds decide most answers."""
    X = _data(kind, np.random.default_rng(8), 1200)
    labels = fixed_size(X, k=3, first="cbfs")
    Xc, sq, tolerance = prepared(X)
    _, labels = np.unique(labels, return_inverse=True)
    compiled = refine_compiled(Xc, sq, labels, k=3, method="igd", max_rounds=1000,
                               tolerance=tolerance, state=TaskState(),
                               candidates=candidates, ways="lists")
    np.testing.assert_array_equal(compiled, refine(X, labels, k=3, compiled=False))


@pytest.mark.parametrize("drift", [0.05, 0.3, 1.0])
@pytest.mark.parametrize("kind", ["normal", "ties"])
def test_candidate_lists_answer_as_brute_force_after_moves(kind, drift):
    """Short lists, and records moved to their nearest group: centroids creep by less
    than the drift, so the bounds, not the anchoring, must keep the answers exact."""
    from core.methods.refine_kernel import make_state
    from core.methods.refine_nearest import fill, nearest
    from core.methods.refine_chunks import _add, _remove

    rng = np.random.default_rng(2)
    X = _data(kind, rng, 1200)
    labels = fixed_size(X, k=3, first="cbfs")
    Xc, sq, _ = prepared(X)
    s = make_state(Xc, sq, labels, drift=drift, margin=1e-9, candidates=3)
    fill(s, 0, len(X), np.empty((4, len(s.count))))
    one = np.empty(1, dtype=np.int64)
    for round_ in range(6):
        for record in rng.choice(len(X), size=100, replace=False):
            g = int(s.rint[record, 2])
            if s.count[g] > 1:
                one[0] = record
                _remove(s, g, one, 1)
                _add(s, nearest(s, record, g), one, 1)
        live = np.flatnonzero(s.count[:s.meta[0]] > 0)
        centroids = s.sums[live] / s.count[live, None]
        for i in range(len(X)):
            own = int(s.rint[i, 2])
            others = live[live != own]
            expected = others[np.argmin(squared_distances(centroids[live != own], Xc[i]))]
            assert nearest(s, i, own) == expected, (round_, i)


def test_without_numba_the_reference_gives_the_same_labels(tmp_path):
    code = ("import numpy as np, sys; from core.compiled import COMPILED; "
            "from core.methods.heuristics import fixed_size; "
            "from core.methods.refine import refine; assert not COMPILED; "
            "X = np.random.default_rng(3).integers(-2, 3, size=(900, 3)).astype(float); "
            "np.save(sys.argv[1], refine(X, fixed_size(X, k=3), k=3))")
    out = tmp_path / "labels.npy"
    subprocess.run([sys.executable, "-c", code, str(out)], cwd=REPO, check=True,
                   env={**os.environ, "MICROAGG_NO_COMPILE": "1"})
    X = np.random.default_rng(3).integers(-2, 3, size=(900, 3)).astype(float)
    np.testing.assert_array_equal(np.load(out), refine(X, fixed_size(X, k=3), k=3))


@pytest.mark.parametrize("method", ["tfrp2", "igd"])
def test_progress_at_least_64_steps_and_in_order(method):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((3000, 5))
    calls = []
    refine(X, fixed_size(X, k=5), k=5, method=method,
           state=TaskState(lambda fraction, message: calls.append(fraction)))
    assert len(calls) >= 64
    assert calls == sorted(calls) and calls[-1] == 1.0


def test_a_large_compiled_run_stops_within_a_second_of_cancel():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20_000, 10))
    labels = np.repeat(np.arange(4_000), 5)  # a poor partition: much to refine
    refine(X[:50], labels[:50] // 5, k=5, method="igd")  # compiled
    state = TaskState()
    timer = threading.Timer(0.5, state.cancel)
    began = time.perf_counter()
    timer.start()
    with pytest.raises(Cancelled):
        refine(X, labels, k=5, method="igd", state=state)
    assert time.perf_counter() - began < 1.5


def _slabs(n, d, k):
    """Groups of k consecutive records along the first principal axis, as PCP makes:
    many groups lie at nearly the same distance from a record."""
    X = np.random.default_rng(6).standard_normal((n, d))
    order = np.argsort(X @ np.linalg.svd(X - X.mean(0), full_matrices=False)[2][0])
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.arange(n) // k
    return X, labels


def _refined(X, labels, k, method, **lists):
    """The compiled labels, and the list lengths it grew to."""
    from core.methods import refine_passes

    grown = []
    plain = refine_passes.longer_lists

    def counted(state, candidates):
        grown.append(candidates)
        return plain(state, candidates)

    Xc, sq, tolerance = prepared(X)
    refine_passes.longer_lists = counted
    try:
        out = refine_compiled(Xc, sq, labels, k=k, method=method, max_rounds=1000,
                              tolerance=tolerance, state=TaskState(), **lists)
    finally:
        refine_passes.longer_lists = plain
    return out, grown


def test_lists_grow_after_slabs_and_give_the_reference_labels(monkeypatch):
    """After a PCP-like partition IGD's short lists fail and grow (every record's list
    filled again, mid-pass); the labels stay the reference's, and kept short they are
    too."""
    from core.methods import refine_passes

    X, labels = _slabs(4000, 6, 4)
    reference = refine(X, labels, k=4, method="igd", compiled=False)
    monkeypatch.setattr(refine_passes, "_MANY_GROUPS", 0)
    filled = _watched_fills(monkeypatch)
    grown, sizes = _refined(X, labels, 4, "igd", candidates=2, longer=8, ways="lists")
    grown_fills = list(filled)
    short, none = _refined(X, labels, 4, "igd", candidates=2, longer=2, ways="lists")
    assert sizes == [8] and none == []
    assert grown_fills == [(2, 2), (8, 8)]  # every record's longer list filled at once
    np.testing.assert_array_equal(grown, reference)
    np.testing.assert_array_equal(short, reference)


def test_tfrp2_keeps_its_lists_short(monkeypatch):
    """One pass: filling longer lists would not pay back."""
    from core.methods import refine_passes

    monkeypatch.setattr(refine_passes, "_MANY_GROUPS", 0)
    X, labels = _slabs(4000, 6, 4)
    out, sizes = _refined(X, labels, 4, "tfrp2", candidates=2, longer=8, ways="lists")
    assert sizes == []
    np.testing.assert_array_equal(out, refine(X, labels, k=4, method="tfrp2",
                                              compiled=False))


def test_lists_stay_short_after_mdav():
    """After MDAV the lists almost always prove the nearest group: they do not grow
    (growing would cost time, each anchored group being measured against the records
    that list it), whichever way the run takes."""
    X = np.random.default_rng(7).standard_normal((6000, 10))
    labels = fixed_size(X, k=5, first="mdav")
    reference = refine(X, labels, k=5, method="igd", compiled=False)
    for ways in ("lists", "auto"):
        out, sizes = _refined(X, labels, 5, "igd", ways=ways)
        # (a run on the sweeps first makes room for its lists when it goes back to them)
        assert sizes == ([] if ways == "lists" else sizes[:1]) and set(sizes) <= {16}
        np.testing.assert_array_equal(out, reference)


def test_lists_grow_at_the_default_sizes_after_slabs():
    """From 16 to 64 groups once there are 2,000 live groups or more; below that a
    comparison with every group costs little, and the lists stay short."""
    X, labels = _slabs(11_000, 10, 5)
    _, sizes = _refined(X, labels, 5, "igd", ways="lists")
    assert sizes == [64]
    X, labels = _slabs(6000, 10, 5)
    _, sizes = _refined(X, labels, 5, "igd", ways="lists")
    assert sizes == []


def test_progress_stays_in_order_when_the_lists_grow(monkeypatch):
    from core.methods import refine_passes

    monkeypatch.setattr(refine_passes, "_MANY_GROUPS", 0)
    X, labels = _slabs(3000, 6, 4)
    calls = []
    state = TaskState(lambda fraction, message: calls.append((fraction, message)))
    Xc, sq, tolerance = prepared(X)
    refine_compiled(Xc, sq, labels, k=4, method="igd", max_rounds=1000,
                    tolerance=tolerance, state=state, candidates=2, longer=8, ways="lists")
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions)
    filling = [message.startswith("refining: nearest") for _, message in calls]
    passes = filling.index(False)  # the first fill ends where the passes begin
    refills = [f for (f, _), fill in zip(calls[passes:], filling[passes:]) if fill]
    assert refills and min(refills) > 0.0


def _watched_fills(monkeypatch):
    """(list length, fewest listed) at each fill of every record's list."""
    from core.methods import refine_passes

    filled = []
    fill_all = refine_passes._fill_all

    def watched(s, state, fraction):
        fill_all(s, state, fraction)
        filled.append((s.cand_g.shape[1], int(s.n_cand.min())))

    monkeypatch.setattr(refine_passes, "_fill_all", watched)
    return filled


def test_sweeps_first_then_the_lists_once_the_groups_settle(monkeypatch):
    """The run starts on the sweeps (nothing filled), goes back to the lists at the end
    of a round where they would have cost less (sweeps weighed dear here, so that it
    does so after the first round), and its labels are the reference's."""
    from core.methods import refine_way

    monkeypatch.setattr(refine_way, "SWEEP_PAIR", 100.0)  # sweeps weighed dear here
    X, labels = _slabs(4000, 6, 4)
    reference = refine(X, labels, k=4, method="igd", compiled=False)
    filled = _watched_fills(monkeypatch)
    out, _ = _refined(X, labels, 4, "igd", candidates=2, longer=8)
    assert filled and filled[0] == (2, 2)
    np.testing.assert_array_equal(out, reference)


@pytest.mark.parametrize("partition", ["slabs", "mdav"])
def test_the_sweeps_choose_the_lists_length(monkeypatch, partition):
    """After slabs the sweeps see that short lists would often fail, and the lists come
    back long at once; after MDAV they come back short (the return forced after the
    first round, as above)."""
    from core.methods import refine_passes, refine_way

    monkeypatch.setattr(refine_way, "SWEEP_PAIR", 100.0)
    monkeypatch.setattr(refine_passes, "_MANY_GROUPS", 0)
    if partition == "slabs":
        X, labels = _slabs(11_000, 10, 5)
    else:
        X = np.random.default_rng(7).standard_normal((8000, 10))
        labels = fixed_size(X, k=5, first="mdav")
    filled = _watched_fills(monkeypatch)
    _refined(X, labels, 5, "igd")
    assert filled[0] == ((64, 64) if partition == "slabs" else (16, 16))


def test_tfrp2_stays_on_the_sweeps(monkeypatch):
    """One pass: the lists would not repay their fill."""
    X, labels = _slabs(6000, 6, 4)
    filled = _watched_fills(monkeypatch)
    out, _ = _refined(X, labels, 4, "tfrp2")
    assert filled == []
    np.testing.assert_array_equal(out, refine(X, labels, k=4, method="tfrp2",
                                              compiled=False))


def test_split_passes_on_the_lists_are_held_and_settled(monkeypatch):
    """A split pass on the lists is answered by the sweeps and the groups it changed are
    anchored after it (core.methods.refine_nearest.settle); the labels stay the
    reference's."""
    from core.methods import refine_passes, refine_way

    settled = []
    plain = refine_passes.settle

    def counted(s, versions, n_groups):
        settled.append(int(s.meta[0]) - n_groups)  # groups formed in the pass
        plain(s, versions, n_groups)

    monkeypatch.setattr(refine_passes, "settle", counted)
    monkeypatch.setattr(refine_way, "SWEEP_PAIR", 100.0)  # back to the lists early
    X, labels = _slabs(6000, 6, 4)
    out, _ = _refined(X, labels, 4, "igd")
    assert len(settled) >= 2 and max(settled) > 0
    np.testing.assert_array_equal(out, refine(X, labels, k=4, method="igd",
                                              compiled=False))


@pytest.mark.parametrize("dead", [1.0, 1e9])
def test_renumbering_the_groups_keeps_the_labels(monkeypatch, dead):
    """Live groups numbered again before every pass (``_DEAD`` = 1), or never: the same
    labels, on a grid full of ties."""
    from core.methods import refine_kernel, refine_passes

    monkeypatch.setattr(refine_passes, "_DEAD", dead)
    compacted = []
    plain = refine_kernel.compact

    def counted(s, far):
        before = int(s.meta[0])
        plain(s, far)
        compacted.append(before - int(s.meta[0]))

    monkeypatch.setattr(refine_passes, "compact", counted)
    X = np.array([(a, b) for a in range(-2, 3) for b in range(-2, 3)] * 24, dtype=float)
    labels = np.repeat(np.arange(len(X) // 6), 6)
    reference = refine(X, labels, k=3, method="igd", compiled=False)
    for ways in ("auto", "lists", "sweeps"):
        out, _ = _refined(X, labels, 3, "igd", ways=ways)
        np.testing.assert_array_equal(out, reference, err_msg=ways)
    assert (sum(compacted) > 0) == (dead == 1.0)


@pytest.mark.parametrize("kind", ["normal", "ties", "duplicates"])
def test_sweeps_answer_as_brute_force(kind):
    """Every record against every live group, its own group left out, some groups dead:
    the nearest by the fixed form, the lower id on a tie, in batches of 1 to 9 records."""
    from core.methods.refine_kernel import make_state, members
    from core.methods.refine_nearest import nearest_all, to_sweeps
    from core.methods.refine_chunks import _remove
    from core.methods.refine_sweep import FAR

    rng = np.random.default_rng(12)
    X = _data(kind, rng, 1500)
    labels = fixed_size(X, k=3, first="cbfs")
    Xc, sq, _ = prepared(X)
    s = make_state(Xc, sq, labels, drift=0.1, margin=1e-9)
    to_sweeps(s)
    recs = np.empty(len(X), dtype=np.int64)
    for g in rng.choice(int(s.meta[0]), size=40, replace=False):  # dead groups
        m = members(s, g, recs)
        _remove(s, g, recs[:m].copy(), m)
    live = np.flatnonzero(s.count[:s.meta[0]] > 0)
    dead = np.flatnonzero(s.count[:s.meta[0]] <= 0)
    assert len(dead) == 40 and np.all(s.centT32[:, dead] == np.float32(FAR))
    centroids = s.sums[live] / s.count[live, None]
    out = np.empty(16, dtype=np.int64)
    for batch in range(1, 10):
        for p in rng.choice(live, size=30, replace=False):
            m = members(s, p, recs)
            m = min(m, batch)
            nearest_all(s, recs, m, p, out)
            for t in range(m):
                others = live != p
                d = squared_distances(centroids[others], Xc[recs[t]])
                assert out[t] == live[others][np.argmin(d)]
    assert np.array_equal(s.centT32[:, live].T, s.cent[live].astype(np.float32))


@pytest.mark.parametrize("candidates", [2, 16, 64])
@pytest.mark.parametrize("kind", ["normal", "ties", "duplicates", "slabs"])
def test_the_screened_fill_gives_fills_lists_and_bounds(kind, candidates):
    """The float32-screened fill (core.methods.refine_sweep) against the exact one: the
    same listed groups in the same order, distances, versions and bounds, with groups
    drifted from their anchors, compared directly, or dead."""
    from core.methods.refine_chunks import _remove
    from core.methods.refine_kernel import make_state, members
    from core.methods.refine_nearest import fill
    from core.methods.refine_sweep import screened_fill

    rng = np.random.default_rng(21)
    if kind == "slabs":
        X, labels = _slabs(3000, 6, 3)
    else:
        X = _data(kind, rng, 3000)
        labels = fixed_size(X, k=3, first="cbfs")
    Xc, sq, _ = prepared(X)
    states = []
    for _ in range(2):
        s = make_state(Xc, sq, labels.astype(np.int64), drift=0.05, margin=1e-9,
                       candidates=candidates)
        groups = int(s.meta[0])
        r = np.random.default_rng(3)
        s.rho[:groups] = r.uniform(0.0, 0.05, groups)
        s.extra[r.choice(groups, 7, replace=False)] = 1
        recs = np.empty(len(X), dtype=np.int64)
        for g in r.choice(groups, 9, replace=False):
            m = members(s, g, recs)
            _remove(s, g, recs[:m].copy(), m)
        states.append(s)
    exact, screened = states
    fill(exact, 0, len(X), np.empty((4, len(exact.count))))
    places = -(-int(screened.meta[0]) // 16) * 16
    screened_fill(screened, 0, len(X), np.empty((4, places), dtype=np.float32))
    np.testing.assert_array_equal(screened.n_cand, exact.n_cand)
    listed = np.arange(candidates)[None, :] < exact.n_cand[:, None]
    for name in ("cand_g", "cand_d", "cand_v"):
        np.testing.assert_array_equal(getattr(screened, name)[listed],
                                      getattr(exact, name)[listed], err_msg=name)
    np.testing.assert_array_equal(screened.beta, exact.beta)
