"""Decompose, Shrink and SplitLargeGroups compiled, over :class:`refine_kernel.State`.

Khomnotai, Lin, Peng & Santra (2018), Figures 2, 4 and 3, with the choices documented in
:mod:`core.methods.refine`, step for step as the numpy reference
(:mod:`core.methods.refine_reference`). Each pass works on groups ``p .. p_end − 1`` and
returns ``(next p, changed)`` once it has looked at about ``budget`` records, so the
caller reports progress and honours Cancel between calls (about every 0.1 s); calling
again from ``next p`` continues the same pass exactly.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from core.methods.refine_kernel import (
    CANDIDATES,
    HEAD,
    HELD,
    LISTS,
    LONG_CANDIDATES,
    N_GROUPS,
    N_LIVE,
    QUERIES,
    RECOMPUTES,
    SWEEPS,
    TAIL,
    WAY,
    append,
    compact,
    distance,
    distance_to,
    dot,
    final_labels,
    group_sse,
    jit,
    longer_lists,
    make_state,
    members,
    reserve,
    total_sse,
    unlink,
)
from core.methods.refine_nearest import (
    changed,
    fill,
    nearest,
    nearest_all,
    settle,
    to_sweeps,
    to_lists,
)
from core.methods.refine_sweep import FAR
from core.methods.refine_way import Way
from core.progress import TaskState
from core.threads import threads_for

__all__ = ["compile_ways", "refine_compiled"]

_THREADS = 2  # at most (core.threads.threads_for)
_MANY_GROUPS = 2000  # live groups, at least, for IGD's lists to grow (_lists_fail)
_DEAD = 1.25  # group places per live group before the groups are numbered again


@jit
def _add(s, g, recs, m):
    """Records ``recs[:m]`` join group g (Σx grows by their sum, added in order)."""
    d = s.X.shape[1]
    part = s.X[recs[0]].copy()
    part_sq = s.sq[recs[0]]
    for t in range(1, m):
        for j in range(d):
            part[j] += s.X[recs[t], j]
        part_sq += s.sq[recs[t]]
    formed = s.count[g] == 0
    if formed:
        s.meta[N_LIVE] += 1
    s.count[g] += m
    for j in range(d):
        s.sums[g, j] += part[j]
    s.sumsq[g] += part_sq
    for t in range(m):
        append(s, g, recs[t])
    changed(s, g, formed)


@jit
def _remove(s, g, recs, m):
    d = s.X.shape[1]
    s.count[g] -= m
    if s.count[g] == 0:
        s.meta[N_LIVE] -= 1
        s.sums[g, :] = 0.0
        s.sumsq[g] = 0.0
    else:
        part = s.X[recs[0]].copy()
        part_sq = s.sq[recs[0]]
        for t in range(1, m):
            for j in range(d):
                part[j] += s.X[recs[t], j]
            part_sq += s.sq[recs[t]]
        for j in range(d):
            s.sums[g, j] -= part[j]
        s.sumsq[g] -= part_sq
    for t in range(m):
        unlink(s, g, recs[t])
    changed(s, g, False)


@jit
def _going_to(recs, targets, m, g, out):
    """The records among ``recs[:m]`` whose target is g, in order; their number."""
    n_moving = 0
    for t in range(m):
        if targets[t] == g:
            out[n_moving] = recs[t]
            n_moving += 1
    return n_moving


@jit
def decompose_chunk(s, k, tol, p, p_end, budget, scratch):
    """Figure 2: dissolve group p into the groups nearest to its records if SSE drops."""
    d = s.X.shape[1]
    recs, targets, moving = scratch[:, 0], scratch[:, 1], scratch[:, 2]
    new_sums = np.empty(d)
    any_change = False
    done = 0
    while p < p_end and done < budget:
        if s.count[p] == 0 or s.meta[N_LIVE] < 2:
            p += 1
            continue
        m = members(s, p, recs)
        done += m
        nearest_all(s, recs, m, p, targets)
        receivers = np.unique(targets[:m])
        delta = -group_sse(s, p)
        for g in receivers:
            n_moving = _going_to(recs, targets, m, g, moving)
            part = s.X[moving[0]].copy()
            part_sq = s.sq[moving[0]]
            for t in range(1, n_moving):
                for j in range(d):
                    part[j] += s.X[moving[t], j]
                part_sq += s.sq[moving[t]]
            for j in range(d):
                new_sums[j] = s.sums[g, j] + part[j]
            new_count = s.count[g] + n_moving
            new_sumsq = s.sumsq[g] + part_sq
            delta += (new_sumsq - dot(new_sums) / new_count) - group_sse(s, g)
        if delta < -tol:
            everyone = recs[:m].copy()
            _remove(s, p, everyone, m)
            for g in receivers:
                _add(s, g, moving, _going_to(everyone, targets, m, g, moving))
            any_change = True
        p += 1
    return p, any_change


@jit
def shrink_chunk(s, k, tol, p, p_end, budget, scratch):
    """Figure 4: move p's best record to its nearest group while that lowers the SSE."""
    recs, targets, one = scratch[:, 0], scratch[:, 1], scratch[:1, 2]
    any_change = False
    done = 0
    while p < p_end and done < budget:
        while s.count[p] > k and s.meta[N_LIVE] > 1:
            m = members(s, p, recs)
            done += m
            n_p = s.count[p]
            best, best_target, best_gain = -1, -1, np.inf
            nearest_all(s, recs, m, p, targets)
            for t in range(m):
                g = targets[t]
                n_t = s.count[g]
                leave = n_p / (n_p - 1) * distance(s, recs[t], p)
                join = n_t / (n_t + 1) * distance(s, recs[t], g)
                gain = join - leave
                if gain < best_gain:
                    best, best_target, best_gain = t, g, gain
            if not best_gain < -tol:
                break
            one[0] = recs[best]
            _remove(s, p, one, 1)
            _add(s, best_target, one, 1)
            any_change = True
        p += 1
    return p, any_change


@jit
def split_chunk(s, k, tol, p, p_end, budget, scratch):
    """Figure 3 on every group of 2k or more records; a split is kept if SSE drops."""
    any_change = False
    done = 0
    while p < p_end and done < budget:
        if s.count[p] >= 2 * k:
            done += int(s.count[p])
            if _split(s, k, tol, p, scratch):
                any_change = True
        p += 1
    return p, any_change


@jit
def _farthest_or_nearest(s, remaining, left, point, farthest):
    """Position in ``remaining[:left]`` of the record farthest from (or nearest to)
    ``point``; the first one on ties."""
    best, best_d = 0, -1.0 if farthest else np.inf
    for t in range(left):
        dist = distance_to(s, remaining[t], point)
        if (dist > best_d) if farthest else (dist < best_d):
            best, best_d = t, dist
    return best


@jit
def _pop(values, length, at):
    value = values[at]
    for t in range(at, length - 1):
        values[t] = values[t + 1]
    return value


@jit
def _split(s, k, tol, p, scratch):
    d = s.X.shape[1]
    saved, remaining, group, receiver = scratch[:, 0], scratch[:, 1], scratch[:, 2], \
        scratch[:, 3]
    before = total_sse(s)
    m = members(s, p, saved)
    saved_groups = s.meta[N_GROUPS]
    left = m
    remaining[:m] = saved[:m]
    _remove(s, p, saved, m)
    point = np.empty(d)
    while True:
        point[:] = s.X[remaining[0]]
        for t in range(1, left):
            for j in range(d):
                point[j] += s.X[remaining[t], j]
        for j in range(d):
            point[j] /= left
        group[0] = _pop(remaining, left, _farthest_or_nearest(s, remaining, left, point,
                                                               True))
        left -= 1
        size = 1
        total = s.X[group[0]].copy()
        while size < k:
            for j in range(d):
                point[j] = total[j] / size
            record = _pop(remaining, left, _farthest_or_nearest(s, remaining, left, point,
                                                                False))
            left -= 1
            group[size] = record
            size += 1
            for j in range(d):
                total[j] += s.X[record, j]
        g = s.meta[N_GROUPS]
        s.meta[N_GROUPS] += 1
        s.count[g], s.sumsq[g], s.sums[g, :] = 0.0, 0.0, 0.0
        s.gint[g, HEAD], s.gint[g, TAIL] = -1, -1
        _add(s, g, group, size)
        if left <= k:
            break
    one = group[:1]
    for t in range(left):
        one[0] = remaining[t]
        receiver[t] = nearest(s, remaining[t], -1)
        _add(s, receiver[t], one, 1)
    if total_sse(s) < before - tol:
        return True
    for t in range(left):  # undo: the split did not lower the SSE
        one[0] = remaining[t]
        _remove(s, receiver[t], one, 1)
    for g in range(saved_groups, s.meta[N_GROUPS]):
        _remove(s, g, group, members(s, g, group))
    s.meta[N_GROUPS] = saved_groups
    _add(s, p, saved, m)
    return False


def refine_compiled(Xc, sq, labels, *, k, method, max_rounds, tolerance, state,
                    candidates=CANDIDATES, longer=LONG_CANDIDATES, ways="auto"):
    """:func:`core.methods.refine.refine` with the compiled passes, on centred ``Xc``.

    ``candidates``: groups listed per record at first (fewer in tests, to exercise the
    bounds); ``longer``: how many IGD lists once they fail (:func:`_lists_fail`);
    ``ways``: ``"auto"`` (:mod:`core.methods.refine_way`), or, for tests,
    ``"lists"`` or ``"sweeps"`` throughout.
    """
    s = make_state(Xc, sq, labels, drift=_drift(Xc, sq, labels), margin=_margin(sq),
                   candidates=candidates)
    if ways == "lists":
        _fill_all(s, state, 0.0)
    else:
        to_sweeps(s)
    way = Way(s)
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
            p, more = chunk(s, k, tolerance, p, p_end, budget[0], scratch)
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
                if grow and longer > s.cand_g.shape[1] and way.crowded(s) \
                        and s.meta[N_LIVE] >= _MANY_GROUPS:
                    s = longer_lists(s, longer)
                to_lists(s)
                _fill_all(s, state, start + span)
                way.restart(s, back=True)
    return final_labels(s)


def _lists_fail(s) -> bool:
    """Whether more than 1 in 20 of the questions so far (at least 2,000) had to compare
    the record with every group.

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
    scratch = [np.empty((4, len(s.count))) for _ in range(threads)]
    step, i = 64, 0
    with ThreadPoolExecutor(threads) as pool:
        while i < n:
            began = time.perf_counter()
            stop = min(i + step, n)
            bounds = np.linspace(i, stop, threads + 1).astype(int)
            list(pool.map(fill, [s] * threads, bounds[:-1], bounds[1:], scratch))
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
    """Compile what a run reaches only on the lists or when it changes way (for the
    engine's warm-up, :mod:`core.pipeline.warmup`: a small run stays on the sweeps)."""
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
