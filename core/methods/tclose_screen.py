"""The float32 screen of tc-merge's nearest-centroid search, on one thread or two.

Algorithm 1's merging (:mod:`core.methods.tclose_merge`) measures every live centroid
in float32 once per merge, then only the few near the smallest in float64. With
1,000,000 records there are 200,000 centroids at first and as many merges, so this pass
is most of the merging (about 45 s), and it grows with the square of the records.

Two threads
    The pass is cut into ``_CHUNKS`` runs of blocks which the run's thread and a helper
    thread claim one at a time (:mod:`core.methods.task_helper`), both writing into the
    shared buffers, each into its own places. The screen only reads the centroids, which
    change between merges, never during one, and the run's thread goes on only once
    every chunk is done, so the answer is the one-thread answer exactly (the tests
    compare the labels). A helper late by more than ``ctrl[PATIENCE]`` spins (taken off
    the processor mid-chunk): the run's thread screens every place itself into its own
    buffers and keeps to one thread until the end of the stretch (``ctrl[ON] = 0``), so
    the helper, whenever it finishes, writes only where nobody reads; the next stretch
    gets it back only once it is idle (:meth:`~core.methods.task_helper.TaskHelper.
    begin`). Whether two threads are faster is measured as the run goes (the helper's
    probes), and a pass of fewer than ``ctrl[FIRST]`` blocks (``SPLIT_FROM``) stays on
    one thread.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods import task_helper as helper
from core.methods.atomics import load, store

__all__ = ["LANES", "SPLIT_FROM", "compile_serve", "new_share", "screen_all", "screen_range",
           "serve"]

LANES = 16  # centroids screened together: the smallest of each block is kept
_CHUNKS = 4  # runs of blocks the two threads claim, per merge
SPLIT_FROM = 256  # blocks (4,096 centroids): a shorter pass is not shared

# Test settings (as tfirst_loop's): every chunk to the helper; spins before the run's
# thread gives up waiting; the helper held inside its _HOLD-th chunk until it has (0: not).
_LEAVE_TO_HELPER, _PATIENCE, _HOLD = False, None, 0


def screen_range(screen, first, last, q32, d32, block_min):
    """Float32 squared distances of the centroids in blocks ``first .. last − 1`` to
    ``q32`` into ``d32``, and the smallest of each block into ``block_min``.

    Two passes, each of which runs in vector registers: the distances attribute by
    attribute over every place, then the blocks' minima. (On views from place 0: a loop
    from another start checks every index for wraparound and is not vectorized, five
    times slower.)
    """
    places = (last - first) * LANES
    out = d32[first * LANES:last * LANES]
    for i in range(places):
        out[i] = np.float32(0.0)
    for j in range(screen.shape[0]):
        qj = q32[j]
        row = screen[j, first * LANES:last * LANES]
        for i in range(places):
            diff = row[i] - qj
            out[i] += diff * diff
    smallest_of = block_min[first:last]
    for b in range(last - first):
        smallest = out[b * LANES]
        for lane in range(1, LANES):
            value = out[b * LANES + lane]
            smallest = value if value < smallest else smallest
        smallest_of[b] = smallest


def serve(ctrl, screen, q32, bounds, d32, block_min, status):
    """The helper's loop: claim chunks of each new merge until ``ctrl[STOP]``."""
    last = 0  # step 0 is never published
    while not load(ctrl, helper.STOP):
        seq = load(ctrl, helper.SEQ)
        if seq == last:
            continue
        last = seq
        n_tasks = ctrl[helper.N_TASKS]
        while True:
            task = helper.claim(ctrl, seq, n_tasks)
            if task < 0:
                break
            helper.hold(ctrl)
            screen_range(screen, bounds[task], bounds[task + 1], q32, d32, block_min)
            ctrl[helper.SERVED] += 1  # written by the helper only
            store(status, task, seq)


def screen_all(blocks, screen, q32, share):
    """Every block screened (:func:`screen_range`), on two threads when ``ctrl[ON]``;
    returns the buffers ``(d32, block_min)`` that hold the answer."""
    ctrl, bounds, status, owner, d32, block_min, mine_d32, mine_min = share
    if not ctrl[helper.ON] or blocks < ctrl[helper.FIRST]:
        screen_range(screen, 0, blocks, q32, mine_d32, mine_min)
        return mine_d32, mine_min
    for task in range(_CHUNKS + 1):
        bounds[task] = task * blocks // _CHUNKS
    for task in range(_CHUNKS):
        owner[task] = 1
    seq = helper.publish(ctrl, _CHUNKS)
    while not ctrl[helper.LEAVE]:
        task = helper.claim(ctrl, seq, _CHUNKS)
        if task < 0:
            break
        screen_range(screen, bounds[task], bounds[task + 1], q32, d32, block_min)
        owner[task] = 0
    for task in range(_CHUNKS):
        if owner[task] == 0 or helper.wait(ctrl, status, task, seq):
            continue
        # The helper is late: this thread alone, into its own buffers (module notes).
        store(ctrl, helper.TRIED, ctrl[helper.TRIED] + 1)
        ctrl[helper.GAVE_UP] += 1
        ctrl[helper.ON] = 0
        screen_range(screen, 0, blocks, q32, mine_d32, mine_min)
        return mine_d32, mine_min
    return d32, block_min


for _name in ("screen_range", "serve", "screen_all"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled


def new_share(places: int) -> tuple:
    """The buffers and the control vector of a merging run's screen (``places`` a
    multiple of :data:`LANES`), one thread until a helper turns ``ctrl[ON]`` on."""
    ctrl = helper.new_control(_LEAVE_TO_HELPER, _PATIENCE, _HOLD)
    ctrl[helper.FIRST] = SPLIT_FROM  # the shortest pass shared, in blocks
    blocks = places // LANES
    # Buffers never written say that nothing is near (so a step that read one would
    # miss its answer, and the tests would see it).
    return (ctrl, np.zeros(_CHUNKS + 1, dtype=np.int64), np.zeros(_CHUNKS, dtype=np.int64),
            np.zeros(_CHUNKS, dtype=np.int64),
            np.full(places, np.inf, dtype=np.float32), np.full(blocks, np.inf, dtype=np.float32),
            np.full(places, np.inf, dtype=np.float32), np.full(blocks, np.inf, dtype=np.float32))


def compile_serve() -> None:
    """Compile the helper's loop ahead of a run large enough to have a helper (the
    engine's warm-up, :mod:`core.pipeline.warmup`): it returns at once, as a new
    control vector says stop."""
    ctrl, bounds, status, _, d32, block_min, _, _ = new_share(LANES)
    serve(ctrl, np.zeros((1, LANES), dtype=np.float32), np.zeros(1, dtype=np.float32),
          bounds, d32, block_min, status)
