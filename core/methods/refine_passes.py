"""The compiled refinement's run: its passes in steps of about 0.1 s, the way it finds a
record's nearest group (:mod:`core.methods.refine_way`), its lists' fills, its helper
thread and its progress.

The passes themselves (Decompose, Shrink, SplitLargeGroups) are
:mod:`core.methods.refine_chunks`; each returns to this loop once it has looked at
about ``budget`` records, so progress is reported and Cancel honoured between calls.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from core.methods.refine_chunks import decompose_chunk, shrink_chunk, split_chunk
from core.methods.refine_kernel import (
    CANDIDATES,
    HELD,
    LISTS,
    LONG_CANDIDATES,
    N_GROUPS,
    N_LIVE,
    QUERIES,
    RECOMPUTES,
    SWEEPS,
    SWEPT,
    TRACK,
    WAY,
    compact,
    final_labels,
    longer_lists,
    make_state,
    reserve,
)
from core.methods.refine_nearest import settle, to_lists, to_sweeps
from core.methods.refine_sweep import FAR, new_share, screened_fill, serve
from core.methods.refine_way import Way
from core.methods.task_helper import FIRST, TaskHelper
from core.progress import TaskState
from core.threads import second_thread_allowed, threads_for

__all__ = ["compile_ways", "refine_compiled"]

_THREADS = 2  # at most (core.threads.threads_for)
_MANY_GROUPS = 2000  # live groups, at least, for IGD's lists to grow (_lists_fail)
_DEAD = 1.25  # group places per live group before the groups are numbered again


def refine_compiled(Xc, sq, labels, *, k, method, max_rounds, tolerance, state,
                    candidates=CANDIDATES, longer=LONG_CANDIDATES, ways="auto", track=True):
    """:func:`core.methods.refine.refine` with the compiled passes, on centred ``Xc``.

    ``candidates``: groups listed per record at first (fewer in tests, to exercise the
    bounds); ``longer``: how many IGD lists once they fail (:func:`_lists_fail`);
    ``ways``: ``"auto"`` (:mod:`core.methods.refine_way`), or, for tests,
    ``"lists"`` or ``"sweeps"`` throughout; ``track``: IGD skips the looks that still
    hold (:mod:`core.methods.refine_track`; ``False`` for tests: every group looked at).
    """
    s = make_state(Xc, sq, labels, drift=_drift(Xc, sq, labels), margin=_margin(sq),
                   candidates=candidates, shared=new_share(len(Xc)),
                   listed=candidates if ways == "lists" else 0)
    s.meta[TRACK] = method == "igd" and track
    runner = _helper(s)
    try:
        return _passes(s, runner, k, method, max_rounds, tolerance, state, candidates,
                       longer, ways)
    finally:
        if runner is not None:
            runner.close()


def _helper(s):
    """A helper thread for the sweeps (:mod:`core.methods.refine_sweep`), or None: a
    second thread allowed, and groups enough that sharing a sweep pays."""
    if s.meta[N_GROUPS] < s.ctrl[FIRST] or not second_thread_allowed():
        return None
    return TaskHelper(s.ctrl, serve, (s.ctrl, s), name="microagg-refine-helper")


def _passes(s, runner, k, method, max_rounds, tolerance, state, candidates, longer, ways):
    """:func:`refine_compiled`'s passes on the state ``s`` (module notes)."""
    Xc = s.X
    if ways == "lists":
        _fill_all(s, state, 0.0)
    else:
        to_sweeps(s)
    way = Way(s, runner)
    scratch = np.empty((len(Xc), 4), dtype=np.int64)
    most = max(16, len(Xc) // 64)
    budget = [min(256, most)]
    grow = method == "igd"

    def run(chunk, start, stop, message, split=False):
        nonlocal s
        if s.meta[N_GROUPS] > _DEAD * s.meta[N_LIVE]:
            compact(s, FAR)
        p, p_end, any_change = 0, int(s.meta[N_GROUPS]), False
        held = split and s.meta[WAY] == LISTS and ways == "auto"
        if held:  # a split pass asks few questions and forms many groups: sweeps
            versions = s.version.copy()
            s.meta[WAY] = HELD
        while p < p_end:
            if split:  # a split pass makes at most n/k groups
                s = reserve(s, len(Xc) // k + 1)
            began = time.perf_counter()
            two = runner is not None and s.meta[WAY] != LISTS and \
                s.meta[N_GROUPS] >= s.ctrl[FIRST]
            if two:
                swept = int(s.meta[SWEPT])
                runner.begin((s.ctrl, s))
            try:
                p, more = chunk(s, k, tolerance, p, p_end, budget[0], scratch)
            finally:
                if two:
                    runner.end(time.perf_counter() - began, int(s.meta[SWEPT]) - swept)
            any_change |= bool(more)
            if s.meta[WAY] == LISTS and ways == "auto" and way.to_sweeps(s):
                to_sweeps(s)
            elif grow and s.meta[WAY] == LISTS and longer > s.cand_g.shape[1] \
                    and _lists_fail(s):
                s = longer_lists(s, longer)
                _fill_all(s, state, start + (stop - start) * p / max(p_end, 1))
                way.restart(s)
                began = time.perf_counter()
            elapsed = time.perf_counter() - began
            # About 0.1 s per call, and at least 64 calls a pass: progress and Cancel
            # stay prompt at any size.
            budget[0] = int(min(max(budget[0] * 0.1 / max(elapsed, 1e-4), 16),
                                4 * budget[0], most))
            state.step(start + (stop - start) * p / max(p_end, 1), message)
        if held:
            settle(s, versions, p_end)
        return any_change

    def one_pass(chunk, name, start, stop):
        middle = start + 0.9 * (stop - start)
        any_change = run(chunk, start, middle, f"refining: {name}")
        return run(split_chunk, middle, stop, "refining: split", split=True) | any_change

    if method == "tfrp2":
        one_pass(decompose_chunk, "decompose", 0.0, 1.0)
    else:
        for round_ in range(max_rounds):
            span = 0.5 ** (round_ + 1)
            start = 1.0 - 2 * span
            any_change = one_pass(decompose_chunk, "decompose", start, start + span / 2)
            any_change |= one_pass(shrink_chunk, "shrink", start + span / 2, start + span)
            if not any_change:
                break
            if s.meta[WAY] == SWEEPS and ways == "auto" and way.to_lists(s):
                long = grow and way.crowded(s) and s.meta[N_LIVE] >= _MANY_GROUPS
                s = longer_lists(s, max(longer, candidates) if long else candidates)
                to_lists(s)
                _fill_all(s, state, start + span)
                way.restart(s)
    return final_labels(s)


def _lists_fail(s) -> bool:
    """Whether more than 1 in 20 of the questions so far (at least 2,000) had to compare
    the record with every group (on the lists; a run that starts on the sweeps mostly
    comes back to lists of the right length at once: :meth:`Way.crowded`).

    The figures below were measured on the lists alone (``ways="lists"``).

    That happens where many groups lie at nearly the same distance from a record, as
    after PCP or z-scores, whose groups are slabs across the data: 16 listed groups then
    seldom prove a nearest (IGD at 50,000 × 10: a third of the questions fell back to
    every group) and 64 mostly do, so IGD lengthens the lists as soon as this holds,
    within a pass (after PCP at 100,000 × 10 the refinement took 78–96 s, against
    113 s lengthening them only between two passes and 344 s keeping them short; the
    same labels). After MDAV almost no question falls back and the lists stay short:
    longer ones would only cost time, each group anchored being measured again against
    the four times as many records that list it. TFRP2 keeps them short too: its one
    pass is over before filling longer lists pays back (after PCP at 20,000 and 50,000,
    growing them within the pass made it 10–16 % slower). Nor do they grow below
    :data:`_MANY_GROUPS` live groups, where comparing a record with every group costs
    little (PCP + IGD at 5,000 × 10: 0.51–0.52 s grown against 0.43 s; at 10,000,
    1.46–1.54 s against 1.53–1.67 s)."""
    queries = int(s.meta[QUERIES])
    return (queries >= 2000 and s.meta[RECOMPUTES] > queries / 20
            and s.meta[N_LIVE] >= _MANY_GROUPS)


def _fill_all(s, state, fraction):
    """Every record's candidate list filled, in steps of ~0.1 s, on two threads where
    allowed (the kernel runs without the GIL; each thread fills its own records)."""
    n = len(s.X)
    threads = threads_for(_THREADS)
    places = -(-int(s.meta[N_GROUPS]) // 16) * 16  # lanes of 16 (refine_sweep)
    scratch = [np.empty((4, places), dtype=np.float32) for _ in range(threads)]
    step, i = 64, 0
    with ThreadPoolExecutor(threads) as pool:
        while i < n:
            began = time.perf_counter()
            stop = min(i + step, n)
            bounds = np.linspace(i, stop, threads + 1).astype(int)
            list(pool.map(screened_fill, [s] * threads, bounds[:-1], bounds[1:], scratch))
            i = stop
            step = int(min(max(step * 0.1 / max(time.perf_counter() - began, 1e-4), 16),
                           4 * step))
            state.step(fraction, f"refining: nearest groups {i:,} / {n:,}")


def _drift(Xc, sq, labels) -> float:
    """How far a centroid may move before it is anchored again: 0.1 of the
    records' root-mean-square distance to their group's centroid (smaller: more passes
    over the records to anchor groups; larger: looser bounds, more records compared with
    every group; with 16 candidates, 0.1 is about the fastest on standard-normal data)."""
    count = np.bincount(labels).astype(float)
    sums = np.zeros((len(count), Xc.shape[1]))
    np.add.at(sums, labels, Xc)
    live = count > 0
    sse = float(sq.sum() - ((sums[live] ** 2).sum(axis=1) / count[live]).sum())
    return 0.1 * float(np.sqrt(max(sse, 0.0) / len(Xc)))


def _margin(sq) -> float:
    """Rounding allowance of the bounds (distances, not squared): far above 1e−15·scale."""
    return 1e-9 * (1.0 + 2.0 * float(np.sqrt(sq.max(initial=0.0))))


def compile_ways() -> None:
    """Compile what a run reaches only on the lists, when it changes way or with a helper
    thread (for the engine's warm-up, :mod:`core.pipeline.warmup`: a small run stays on
    the sweeps, on one thread)."""
    Xc = np.random.default_rng(0).standard_normal((64, 3))
    Xc -= Xc.mean(axis=0)
    sq = (Xc ** 2).sum(axis=1)
    labels = np.arange(64, dtype=np.int64) // 4
    refine_compiled(Xc, sq, labels, k=4, method="igd", max_rounds=1000, tolerance=1e-12,
                    state=TaskState(), ways="lists")
    s = make_state(Xc, sq, labels, drift=0.1, margin=1e-9)
    to_sweeps(s)
    versions = s.version.copy()
    s.meta[WAY] = HELD
    settle(s, versions, int(s.meta[N_GROUPS]))
    to_lists(s)
    compact(s, FAR)
    serve(s.ctrl, s)  # the helper's loop: it returns at once, as a new state says stop
