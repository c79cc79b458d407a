"""The state of the compiled refinement and the arithmetic every step shares.

:class:`State` holds the partition in flat arrays (a named tuple, so one argument
carries it into every kernel): the records (``X``, centred, and ``XT32``, its transpose
in float32 for a fast first look), each group's members as a linked list, its count,
Σx, Σ|x|² and centroid, and each record's list of candidate groups
(:mod:`core.methods.refine_nearest`).

The arithmetic is the fixed form of :mod:`core.methods.refine`: a distance sums
``(x_j − c_j)²`` over the attributes in order, with the centroid ``c = Σx / n``
computed attribute by attribute; Σx grows by the records' sum added one after another;
a group's SSE is ``Σ|x|² − |Σx|² / n`` with ``|Σx|²`` summed in attribute order; a
split's SSE change adds the groups it touches in a fixed order
(:func:`core.methods.refine_chunks._split`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from core.compiled import COMPILED, kernel
from core.methods.task_helper import FIRST, new_control

__all__ = ["CANDIDATES", "LONG_CANDIDATES", "State", "final_labels", "longer_lists",
           "make_state", "reserve", "share"]

CANDIDATES = 16  # candidate groups listed per record (16 bytes each)
LONG_CANDIDATES = 64  # when the short lists fail (core.methods.refine_passes)
EXTRAS = 32  # groups compared directly before they are anchored
TASKS = 4  # runs of blocks the two threads claim, per shared sweep
SHARED_FROM = 4096  # groups: a sweep over fewer is not shared
SHARED_RECORDS = 4096  # records a shared sweep takes at most (a larger group: alone)
# meta[...] slots (int64), fmeta[...] slots (float64)
N_GROUPS, N_LIVE, N_EXTRAS, RECOMPUTES, SCANS, QUERIES, WAY, MOVED, SWEPT, SAMPLED, \
    CROWDED, SHORT, CLOCK, QUIET, TRACK, SKIPPED = range(16)
# meta[WAY]: how a nearest group is found (core.methods.refine_way)
LISTS, SWEEPS, HELD = range(3)
DRIFT, MARGIN, SLACK32 = range(3)
# rint[i, ...] and gint[g, ...] columns: the members of a group as a linked list
NXT, PRV, GROUP = range(3)
HEAD, TAIL = range(2)
# stamp[g, ...] columns (core.methods.refine_track): g's last change, and the clock of
# its last look by each pass that found nothing to do (reach[g, pass − 1] goes with it)
CHANGED, DECOMPOSE, SHRINK, SPLIT = range(4)
LOG = 1024  # the groups of the last LOG changes (core.methods.refine_track)

State = namedtuple("State", [
    "X", "XT32", "sq", "rint", "gint", "count", "sumsq", "sums", "cent", "centT", "centT32",
    "anchor", "rho", "extra", "extras", "version", "meta", "fmeta", "cand_g", "cand_d",
    "cand_v", "n_cand", "beta", "acc", "acc32",
    "near_g", "near_d", "split_g", "split_d", "since", "stamp", "reach", "log",
    "log_x", "log_live",
    "ctrl", "job", "jrecs", "bounds", "jbest", "jout", "status",
])


def _plain(function):
    return function


jit = kernel if COMPILED else _plain


def make_state(Xc: np.ndarray, sq: np.ndarray, labels: np.ndarray, *, drift: float,
               margin: float, candidates: int = CANDIDATES, extras: int = EXTRAS,
               shared: dict | None = None, listed: int | None = None) -> State:
    """The partition ``labels`` of centred ``Xc`` (``sq`` its rows' squared norms);
    ``candidates`` groups listed per record (fewer in tests, to exercise the bounds;
    ``meta[SHORT]``), room for ``listed`` of them now (by default ``candidates``; none
    for a run that starts on the sweeps: :func:`longer_lists` makes room on the way
    back), ``extras`` groups compared directly before they are anchored; ``shared``:
    what a sweep shares with a helper thread (:func:`share`; by default, no helper)."""
    n, d = Xc.shape
    n_groups = int(labels.max()) + 1
    capacity = n_groups + 16
    state = State(
        X=Xc, XT32=np.ascontiguousarray(Xc.T, dtype=np.float32), sq=sq,
        rint=np.full((n, 3), -1, dtype=np.int64),
        gint=np.full((capacity, 2), -1, dtype=np.int64),
        count=np.zeros(capacity), sumsq=np.zeros(capacity), sums=np.zeros((capacity, d)),
        cent=np.zeros((capacity, d)), centT=np.zeros((d, capacity)),
        centT32=np.zeros((d, capacity), dtype=np.float32),
        anchor=np.zeros((capacity, d)), rho=np.zeros(capacity),
        extra=np.zeros(capacity, dtype=np.int64),
        extras=np.zeros(extras, dtype=np.int64),
        version=np.zeros(capacity, dtype=np.int32),
        meta=np.zeros(16, dtype=np.int64),
        # float32 squared distances err by far less than SLACK32 (~1e−4·d·max|x|²)
        fmeta=np.array([drift, margin, 1e-4 * d * max(float(sq.max(initial=0.0)), 1e-300)]),
        acc=np.zeros(max(n, capacity)), acc32=np.zeros(max(n, capacity), dtype=np.float32),
        **_empty_lists(n, candidates if listed is None else listed), **(shared or share(n)),
        near_g=np.full(n, -1, dtype=np.int64), near_d=np.full(n, np.inf),
        split_g=np.full(n, -1, dtype=np.int64), split_d=np.full(n, -1.0),
        since=np.zeros(n, dtype=np.int64), stamp=np.full((capacity, 4), -1, dtype=np.int64),
        reach=np.zeros((capacity, 3)), log=np.full(LOG, -1, dtype=np.int64),
        log_x=np.zeros((LOG, d), dtype=np.float32), log_live=np.zeros(LOG, dtype=np.int64),
    )
    _init(state, labels.astype(np.int64), n_groups)
    state.meta[SHORT] = candidates
    return state


def share(n: int, leave: bool = False, patience: int | None = None, hold: int = 0) -> dict:
    """The fields of :class:`State` that a sweep shares with a helper thread
    (:mod:`core.methods.refine_sweep`): its control vector (one thread until a helper
    turns ``ON``; with a test's settings, :func:`core.methods.task_helper.new_control`),
    the sweep's records and their number, the runs' bounds, answers and status."""
    ctrl = new_control(leave, patience, hold)
    ctrl[FIRST] = SHARED_FROM
    records = min(n, SHARED_RECORDS)
    return dict(ctrl=ctrl, job=np.zeros(2, dtype=np.int64),
                jrecs=np.zeros(records, dtype=np.int64),
                bounds=np.zeros(TASKS + 1, dtype=np.int64),
                jbest=np.full((TASKS, records), np.inf),
                jout=np.full((TASKS, records), -1, dtype=np.int64),
                status=np.zeros(TASKS, dtype=np.int64))


def longer_lists(state: State, candidates: int) -> State:
    """``state`` with room for ``candidates`` groups on every record's list, every list
    empty (to be filled again: :func:`core.methods.refine_nearest.fill`)."""
    return state._replace(**_empty_lists(len(state.X), candidates))


def _empty_lists(n: int, candidates: int) -> dict:
    """``n`` records' candidate lists of ``candidates`` groups, empty, and their bounds
    not yet set."""
    return dict(cand_g=np.zeros((n, candidates), dtype=np.int32),
                cand_d=np.zeros((n, candidates)),
                cand_v=np.zeros((n, candidates), dtype=np.int32),
                n_cand=np.zeros(n, dtype=np.int64), beta=np.full(n, -np.inf))


def reserve(state: State, extra: int) -> State:
    """``state`` with room for ``extra`` more groups (a split pass makes at most n/k)."""
    need = int(state.meta[N_GROUPS]) + extra + 1
    capacity = len(state.count)
    if need <= capacity:
        return state
    capacity = max(need, 2 * capacity)
    grown = {}
    for name in ("gint", "count", "sumsq", "sums", "cent", "anchor", "rho", "extra",
                 "version", "stamp", "reach"):
        old = getattr(state, name)
        new = np.full((capacity, *old.shape[1:]), -1 if name in ("gint", "stamp") else 0,
                      dtype=old.dtype)
        new[:len(old)] = old
        grown[name] = new
    for name in ("centT", "centT32"):
        old = getattr(state, name)
        grown[name] = np.zeros((state.X.shape[1], capacity), dtype=old.dtype)
        grown[name][:, :len(state.count)] = old
    size = max(len(state.X), capacity)
    return state._replace(acc=np.zeros(size),
                          acc32=np.zeros(size, dtype=np.float32), **grown)


@jit
def _init(s, labels, n_groups):
    n, d = s.X.shape
    for i in range(n):
        g = labels[i]
        if s.count[g] == 0:
            s.meta[N_LIVE] += 1
        s.count[g] += 1.0
        for j in range(d):
            s.sums[g, j] += s.X[i, j]
        s.sumsq[g] += s.sq[i]
        append(s, g, i)
    s.meta[N_GROUPS] = n_groups
    for g in range(n_groups):
        if s.count[g] > 0:
            centre(s, g)
            for j in range(d):
                s.anchor[g, j] = s.cent[g, j]


@jit
def compact(s, far):
    """Number the live groups 0, 1, … in their order, so that no pass or sweep walks
    over dead ones (``far``: the float32 centroid coordinate of an empty place).

    The order of the live groups is kept, and every choice depends only on it (ties
    go to the lower id, passes visit groups in id order), so the labels do not
    change. Dead groups leave the lists and the extras.
    No group keeps a look that found nothing to do (:mod:`core.methods.refine_track`):
    the changes logged before name groups by their old numbers.
    """
    n_groups = s.meta[N_GROUPS]
    rank = np.full(n_groups, -1, dtype=np.int64)
    r = 0
    for g in range(n_groups):
        if s.count[g] <= 0:
            continue
        rank[g] = r
        if r < g:  # r ≤ g: moving forward in id order overwrites only what moved
            s.gint[r, :] = s.gint[g, :]
            s.count[r], s.sumsq[r], s.rho[r] = s.count[g], s.sumsq[g], s.rho[g]
            s.extra[r], s.version[r] = s.extra[g], s.version[g]
            s.stamp[r, CHANGED] = s.stamp[g, CHANGED]
            s.sums[r, :], s.cent[r, :], s.anchor[r, :] = s.sums[g, :], s.cent[g, :], \
                s.anchor[g, :]
            s.centT[:, r], s.centT32[:, r] = s.centT[:, g], s.centT32[:, g]
        r += 1
    s.stamp[:, DECOMPOSE:] = -1
    for g in range(r, n_groups):
        s.gint[g, :] = -1
        s.count[g], s.sumsq[g], s.extra[g] = 0.0, 0.0, 0
        s.sums[g, :] = 0.0
        s.centT32[:, g] = far
    s.meta[N_GROUPS] = r
    for i in range(s.X.shape[0]):
        s.rint[i, GROUP] = rank[s.rint[i, GROUP]]
        m = 0
        for t in range(s.n_cand[i]):
            g = s.cand_g[i, t]  # a split not kept may leave its groups' places listed
            g = rank[g] if g < n_groups else -1
            if g >= 0:
                s.cand_g[i, m], s.cand_d[i, m], s.cand_v[i, m] = g, s.cand_d[i, t], \
                    s.cand_v[i, t]
                m += 1
        s.n_cand[i] = m
    m = 0
    for e in range(s.meta[N_EXTRAS]):
        g = s.extras[e]
        g = rank[g] if g < n_groups else -1
        if g >= 0:
            s.extras[m] = g
            m += 1
    s.meta[N_EXTRAS] = m


# candidate lists -----------------------------------------------------------------
@jit
def keep_nearest(top_g, top_d, m, width, g, dist):
    """Group g at squared distance ``dist`` offered to the ``m`` nearest kept so far
    (at most ``width + 1``, nearest first; offered in id order, so equal distances keep
    the lower id first); their number after."""
    if m == width + 1 and not dist < top_d[m - 1]:
        return m
    if m < width + 1:
        m += 1
    t = m - 1
    while t > 0 and top_d[t - 1] > dist:
        top_g[t], top_d[t] = top_g[t - 1], top_d[t - 1]
        t -= 1
    top_g[t], top_d[t] = g, dist
    return m


@jit
def set_list(s, i, top_g, top_d, listed):
    """Record i lists the ``listed`` nearest of ``top_g`` (measured now)."""
    for t in range(listed):
        g = top_g[t]
        s.cand_g[i, t], s.cand_d[i, t], s.cand_v[i, t] = g, top_d[t], s.version[g]
    s.n_cand[i] = listed


# members ------------------------------------------------------------------------
@jit
def append(s, g, i):
    s.rint[i, GROUP] = g
    s.rint[i, NXT] = -1
    s.rint[i, PRV] = s.gint[g, TAIL]
    if s.gint[g, TAIL] >= 0:
        s.rint[s.gint[g, TAIL], NXT] = i
    else:
        s.gint[g, HEAD] = i
    s.gint[g, TAIL] = i


@jit
def unlink(s, g, i):
    before, after = s.rint[i, PRV], s.rint[i, NXT]
    if before >= 0:
        s.rint[before, NXT] = after
    else:
        s.gint[g, HEAD] = after
    if after >= 0:
        s.rint[after, PRV] = before
    else:
        s.gint[g, TAIL] = before
    s.rint[i, GROUP] = -1


@jit
def members(s, g, out):
    """Write group g's records (in the order they joined) to ``out``; their number."""
    m = 0
    i = s.gint[g, HEAD]
    while i >= 0:
        out[m] = i
        m += 1
        i = s.rint[i, NXT]
    return m


# arithmetic -----------------------------------------------------------------------
@jit
def centre(s, g):
    for j in range(s.X.shape[1]):
        c = s.sums[g, j] / s.count[g]
        s.cent[g, j] = c
        s.centT[j, g] = c
        s.centT32[j, g] = c


@jit
def distance(s, i, g):
    """Squared distance of record i to group g's centroid (attributes in order)."""
    total = 0.0
    for j in range(s.X.shape[1]):
        t = s.X[i, j] - s.cent[g, j]
        total += t * t
    return total


@jit
def distance_to(s, i, point):
    total = 0.0
    for j in range(s.X.shape[1]):
        t = s.X[i, j] - point[j]
        total += t * t
    return total


@jit
def dot(v):
    total = 0.0
    for j in range(v.shape[0]):
        total += v[j] * v[j]
    return total


@jit
def group_sse(s, g):
    return s.sumsq[g] - dot(s.sums[g]) / s.count[g]


@jit
def final_labels(s):
    """Group ids 0..G−1 in the order of the live groups' ids."""
    n_groups = s.meta[N_GROUPS]
    rank = np.full(n_groups, -1, dtype=np.int64)
    r = 0
    for g in range(n_groups):
        if s.count[g] > 0:
            rank[g] = r
            r += 1
    out = np.empty(s.X.shape[0], dtype=np.int64)
    for i in range(s.X.shape[0]):
        out[i] = rank[s.rint[i, GROUP]]
    return out
