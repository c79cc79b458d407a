"""The searches on two threads (core.methods.spatial_parallel) give the one-thread answers.

Each search is compared with an exact scan (distance, then input order) on tables with
ties, near-ties and records already grouped, three ways: the run's thread doing both
parts, a helper thread taking part 1, and a helper whose part is given up at once (the
run's thread then searches it itself). Whole runs of MDAV, CBFS and TFRP on two threads
must give the reference's labels.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from core import threads as core_threads
from core.compiled import COMPILED
from core.errors import Cancelled
from core.methods import atomics
from core.methods import spatial_index as index
from core.methods import spatial_parallel as parallel
from core.methods import spatial_tree
from core.methods.heuristics import FIRST_RECORD, GROWTH, fixed_size, fixed_size_reference
from core.progress import TaskState
from tests.spatial_helpers import KINDS, leaves_of, table

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba is switched off")


def _index(X, taken_out, rng):
    """The index of fixed_size_indexed over X with ``taken_out`` records already grouped
    (each from the front of its row's queue, as a group takes them); the live records."""
    members, starts, row_of = index.distinct_rows(X)
    P = X[members[starts[:-1]]]
    perm, start, stop, levels = index.build_tree(P, 48)  # a tree deep enough to split
    P = np.ascontiguousarray(P[perm])
    head, end = starts[:-1][perm].copy(), starts[1:][perm].copy()
    alive = np.ones(len(X), dtype=bool)
    for t in rng.permutation(len(P))[:taken_out]:
        alive[members[head[t]]] = False
        head[t] += 1
    n_nodes, d = len(start), X.shape[1]
    lo, hi = np.zeros((n_nodes, d)), np.zeros((n_nodes, d))
    cnt, top, rho2 = np.zeros(n_nodes, dtype=np.int64), np.zeros(n_nodes), np.zeros(len(P))
    first_leaf = (1 << levels) - 1
    anchor = X[alive].mean(axis=0)
    index._anchor_at(anchor, P, head, end, rho2)
    index._refresh_all(first_leaf, start, stop, head, end, P, rho2, lo, hi, cnt, top)
    screen = spatial_tree.screen_blocks(P, start, stop, levels, lo, hi)
    tree = (P, screen, head, end, members, np.zeros(1, dtype=np.int64),
            np.zeros(1, dtype=np.int64), start, stop, first_leaf, lo, hi, cnt, top, rho2)
    return tree, levels, anchor, alive


def _ready(helper):
    """Wait until the helper has entered and left its loop once (the first entry may
    compile it), then forget that stretch."""
    helper.begin()
    helper.end(0.0, 1)
    assert helper._idle.wait(300)
    helper._stretches.clear()
    helper._since = 0


def _scan(X, alive, q):
    d2 = ((X - q) ** 2).sum(axis=1)
    live = np.flatnonzero(alive)
    order = live[np.lexsort((live, d2[live]))]
    return order, live[np.lexsort((live, -d2[live]))][0]


@pytest.mark.parametrize("way", ["one thread does both parts", "helper", "helper given up"])
@pytest.mark.parametrize("case", ["normal", "ties", "near ties far out", "few rows"])
def test_two_thread_searches_equal_an_exact_scan(way, case):
    rng = np.random.default_rng(len(case) + len(way))
    if case == "normal":
        X = rng.normal(size=(4000, 5))
    elif case == "ties":
        X = rng.integers(0, 4, size=(4000, 3)).astype(float)
    elif case == "near ties far out":
        X = np.round(rng.normal(size=(4000, 3)) * 1e-3, 7)
        X[::2] += 1e4
    else:
        X = rng.normal(size=(100, 4))[rng.integers(0, 100, 3000)]  # a tree of 2 leaves
    tree, levels, anchor, alive = _index(X, len(X) // 4, rng)
    ctrl, query, shared = parallel.new_state(levels, X.shape[1])
    m = 7
    depth = 2 * levels + 8
    widest = int((tree[8] - tree[7]).max()) + 1
    mine, spare, helping = (parallel.part_scratch(len(tree[7]), depth, m, widest, X.shape[1])
                            for _ in range(3))
    taken = np.zeros(len(tree[0]), dtype=np.int64)
    helper = None
    if way != "one thread does both parts":
        helper = parallel.SearchHelper(ctrl, query, shared, tree, taken, anchor, helping)
        _ready(helper)
        ctrl[parallel._PATIENCE] = 0 if way == "helper given up" else parallel.PATIENCE
    best = np.zeros(m, dtype=np.int64)

    def search(function, *arguments):
        if helper is not None:
            helper.begin()  # two threads unless a probe or the helper is not back yet
        try:
            return function(*arguments)
        finally:
            if helper is not None:
                helper.end(1e-3, 1)

    try:
        for row in rng.integers(0, len(X), 40):
            q = X[row] + rng.normal(size=X.shape[1]) * 1e-4
            nearest, farthest = _scan(X, alive, q)
            size = search(parallel.nearest, q, m, ctrl, query, shared, tree, taken, anchor,
                          mine, spare, helping, best)
            assert best[:size].tolist() == nearest[:m].tolist()
            t = search(parallel.farthest, q, ctrl, query, shared, tree, taken, anchor, mine,
                       spare, helping)
            assert tree[4][tree[2][t]] == farthest
    finally:
        if helper is not None:
            helper.close()


if COMPILED:
    from numba import njit

    @njit(nogil=True)
    def _claim(ctrl, seq):
        """What the helper does first: claim part 1 of search ``seq``."""
        return atomics.swap(ctrl, parallel._CLAIM, 4 * seq, 4 * seq + 1)

    @njit(nogil=True)
    def _done(ctrl, seq):
        atomics.store(ctrl, parallel._DONE, seq)


@pytest.mark.parametrize("helper", ["absent", "claims and finishes", "claims and stalls"])
def test_each_handover_gives_the_exact_answer(helper):
    """The three ways part 1 reaches the run, step by step on one thread: the run takes
    it (no helper), the helper's finished part, and a helper that claimed it and stalls
    (the run waits ``ctrl[_PATIENCE]`` spins, then searches part 1 itself and leaves two
    threads off until the helper is back)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(5000, 4))
    tree, levels, anchor, alive = _index(X, 1000, rng)
    ctrl, query, shared = parallel.new_state(levels, 4)
    ctrl[parallel._PATIENCE] = 1000
    m = 6
    mine, spare, helping = (parallel.part_scratch(len(tree[7]), 2 * levels + 8, m,
                                                  int((tree[8] - tree[7]).max()) + 1, 4)
                            for _ in range(3))
    taken = np.zeros(len(tree[0]), dtype=np.int64)
    best = np.zeros(m, dtype=np.int64)
    for row in rng.integers(0, len(X), 20):
        q = X[row] + 1e-3
        ctrl[parallel.ON] = 1
        seq = parallel._publish(ctrl, query, shared, parallel._NEAREST, m, q)
        if helper != "absent":
            assert _claim(ctrl, seq)
        if helper == "claims and finishes":
            parallel._search(ctrl, query, shared, tree, taken, anchor, helping, 1)
            _done(ctrl, seq)
        parallel._search(ctrl, query, shared, tree, taken, anchor, mine, 0)
        gave_up = ctrl[parallel._GAVE_UP]
        other = parallel._finish(ctrl, query, shared, tree, taken, anchor, spare, helping,
                                 seq)
        size = parallel._merge(mine, other, m, best)
        assert best[:size].tolist() == _scan(X, alive, q)[0][:m].tolist()
        stalled = helper == "claims and stalls"
        assert ctrl[parallel._GAVE_UP] == gave_up + stalled
        assert ctrl[parallel.ON] == (not stalled)
        assert not _claim(ctrl, seq)  # claimed once only


@pytest.fixture
def two_threads_on_small_trees(monkeypatch):
    """Every run gets its helper, however small its tree, split two levels up; leaves
    of 16 rows at most make the trees as deep as a large table's."""
    monkeypatch.setattr(index, "LEAF_SIZE", 16)
    monkeypatch.setattr(parallel, "_MIN_LEVELS", 1)
    monkeypatch.setattr(parallel, "_SUBTREE_LEVELS", 2)
    monkeypatch.delenv("MICROAGG_SEARCH_THREADS", raising=False)


@pytest.mark.parametrize("data", KINDS)
def test_whole_runs_on_two_threads_equal_the_reference(two_threads_on_small_trees, data):
    """Rows of a few identical records as well: groups then span rows of copies, on
    either thread's side of the split."""
    X = table(data, np.random.default_rng(len(data)), 1500)
    for first in FIRST_RECORD:
        for growth in GROWTH:
            fast = fixed_size(X, k=4, first=first, growth=growth)
            slow = fixed_size_reference(X, k=4, first=first, growth=growth)
            assert np.array_equal(fast, slow), (first, growth)


def _ways(stretches, seconds_per_group):
    """The way ("2": two threads, "1": one) of each stretch of a run whose stretches
    take ``seconds_per_group(i, two)``."""
    X = np.random.default_rng(0).normal(size=(800, 3))
    tree, levels, anchor, alive = _index(X, 0, np.random.default_rng(1))
    ctrl, query, shared = parallel.new_state(levels, 3)
    helping = parallel.part_scratch(len(tree[7]), 2 * levels + 8, 3, 64, 3)
    helper = parallel.SearchHelper(ctrl, query, shared, tree,
                                   np.zeros(len(tree[0]), dtype=np.int64), anchor, helping)
    _ready(helper)
    ways = ""
    try:
        for i in range(stretches):
            helper.begin()
            two = bool(ctrl[parallel.ON])
            ways += "2" if two else "1"
            helper.end(seconds_per_group(i, two), 1)
    finally:
        helper.close()
    assert not any(t.name == "microagg-search-helper" for t in threading.enumerate())
    return ways


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(100, 400), st.integers(1, 3)),
              elements=st.sampled_from([-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, 1e-9])),
       st.integers(2, 5), st.sampled_from(FIRST_RECORD), st.sampled_from(GROWTH))
def test_any_small_tie_heavy_table_on_two_threads(X, k, first, growth):
    """Whatever the table (a handful of values, so ties everywhere), a run whose every
    search is split in two parts gives the reference's labels."""
    saved = parallel._MIN_LEVELS, parallel._SUBTREE_LEVELS
    parallel._MIN_LEVELS, parallel._SUBTREE_LEVELS = 1, 1
    try:
        with leaves_of(16):
            fast = fixed_size(X, k=k, first=first, growth=growth)
    finally:
        parallel._MIN_LEVELS, parallel._SUBTREE_LEVELS = saved
    assert np.array_equal(fast, fixed_size_reference(X, k=k, first=first, growth=growth))


def test_a_busy_helper_is_measured_and_left_out():
    """Two threads 15 % slower for 24 stretches (a busy machine), then 15 % faster. The
    third stretch probes one thread, which wins: the run keeps to one thread, probing
    two every 8th stretch, until the probe at stretch 26 finds two threads faster."""
    ways = _ways(48, lambda i, two: 1.15 if (two if i < 24 else not two) else 1.0)
    assert ways == "2212" "111111" "2" "1111111" "2" "1111111" "2" "1" \
        "222222" "1" "2222222" "1" "22222"


def test_one_noisy_probe_does_not_turn_the_run_around():
    """Two threads clearly faster (1.0 against 1.3 s per group): probes come every 32nd
    stretch; the second finds one thread a little faster (0.95), and the run stays on
    two threads, probing every 8th stretch again."""
    probes = []

    def seconds(i, two):
        if two:
            return 1.0
        probes.append(i)
        return 0.95 if len(probes) == 2 else 1.3

    ways = _ways(48, seconds)
    assert probes == [2, 34, 42]
    assert ways == "".join("1" if i in probes else "2" for i in range(48))


def test_a_clear_winner_is_probed_less_often():
    """One thread twice as fast: after the first probe the next comes 32 stretches on."""
    ways = _ways(80, lambda i, two: 2.0 if two else 1.0)
    assert [i for i, way in enumerate(ways) if way == "2"] == [0, 1, 3, 34, 66]


def test_who_gets_a_helper(monkeypatch):
    monkeypatch.delenv("MICROAGG_SEARCH_THREADS", raising=False)
    monkeypatch.setattr(core_threads.os, "cpu_count", lambda: 2)
    assert parallel.helper_wanted(12)
    assert not parallel.helper_wanted(parallel._MIN_LEVELS - 1)  # a small table
    with parallel.single_thread():  # a cluster worker
        assert not parallel.helper_wanted(12)
        done = []
        other = threading.Thread(target=lambda: done.append(parallel.helper_wanted(12)))
        other.start()
        other.join()
        assert done == [True]  # the switch is the calling thread's own
    assert parallel.helper_wanted(12)
    monkeypatch.setattr(core_threads.os, "cpu_count", lambda: 1)
    assert not parallel.helper_wanted(12)
    monkeypatch.setattr(core_threads.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("MICROAGG_SEARCH_THREADS", "1")
    assert not parallel.helper_wanted(12)


def test_cancel_leaves_no_helper_behind(monkeypatch):
    monkeypatch.delenv("MICROAGG_SEARCH_THREADS", raising=False)
    X = np.random.default_rng(0).normal(size=(120_000, 6))
    state = TaskState()
    timer = threading.Timer(0.3, state.cancel)
    timer.start()
    with pytest.raises(Cancelled):
        fixed_size(X, k=5, state=state)
    time.sleep(0.05)
    assert not any(t.name == "microagg-search-helper" for t in threading.enumerate())


@pytest.mark.parametrize("k", [3, 4])
def test_mdav_on_two_threads_with_rows_equally_far_from_r(two_threads_on_small_trees,
                                                           monkeypatch, k):
    """r = (5, 0) twice; B = (0, 1) and C = (0, −1), alternating in the input, are equally
    far from it. r's group takes B's first record; MDAV's s is then C's first record (the
    first of the farthest), not B's next, and the parts of the search, each holding
    rows of one side, must agree on it."""
    monkeypatch.setattr(index, "LEAF_SIZE", 1)  # a tree of three rows, split once
    X = np.array([[5.0, 0.0]] * 2 + [[0.0, 1.0], [0.0, -1.0]] * 8)
    assert np.array_equal(fixed_size(X, k=k, first="mdav"),
                          fixed_size_reference(X, k=k, first="mdav"))
