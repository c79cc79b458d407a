"""A helper thread that takes a share of the independent tasks of a compiled loop.

:mod:`core.methods.spatial_parallel` splits one search in two; some loops have several
independent searches per step instead (t-closeness-first: one per subset of the
confidential order, and the farthest record, :mod:`core.methods.tfirst_loop`). Here the
run's thread publishes a step's tasks and both threads claim them one at a time until
none is left, so the work is shared however unevenly the tasks cost.

Claims
    The claim word holds the step's sequence number in its high 32 bits and the next
    task in its low ones; a thread claims with an atomic compare-and-swap from v to
    v + 1 (:func:`claim`), so a helper still in an old step cannot claim a task of a
    new one. A task writes its answer into the claiming thread's own scratch; the
    helper then stores the step's number in the task's ``status`` with release order.
    Having run out of tasks to claim, the run's thread waits for the helper's. A wait
    longer than ``PATIENCE`` spins (a helper descheduled mid-task) is given up: the
    run's thread does the task itself in a spare scratch and runs on one thread until
    the end of the stretch (``ctrl[ON] = 0``), so the helper, whenever it finishes,
    writes only where nobody reads. A task that changes shared structures has the
    helper commit first (the loop's own compare-and-swap on the task's state, which
    the run's thread swaps too to take the task back: one of the two wins); a
    committed task is always waited for (:mod:`core.methods.tfirst_loop`).
Stretches
    The helper spins only while the run is inside its compiled loop (:meth:`TaskHelper.
    begin` / :meth:`~TaskHelper.end` around each stretch) and otherwise waits on an
    event. Whether two threads are faster depends on what else the machine runs, so it
    is measured as :class:`~core.methods.spatial_parallel.SearchHelper` measures it:
    now and then a stretch goes the other way (a probe), and its time per step is
    compared with its neighbours'.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from core.compiled import kernel
from core.methods.atomics import load, store, swap

__all__ = ["TaskHelper", "new_control", "claim", "publish", "wait", "hold", "ON", "SEQ", "STOP",
           "PATIENCE", "GAVE_UP", "SERVED", "N_TASKS", "FIRST", "LEAVE", "HOLD", "TRIED"]

# Slots of the control vector (int64). FIRST is free for the loop's own use; TRIED counts
# the run thread's attempts to take a task back. For tests: LEAVE, when set, has the
# run's thread claim nothing and leave every task to the helper; HOLD, when set, holds
# the helper inside a task until the run's thread has tried to take one back (which
# task, and for how long, each loop says: tfirst_tasks, tclose_screen, refine_sweep).
SEQ, CLAIM, STOP, ON, GAVE_UP, PATIENCE, SERVED, N_TASKS, FIRST, LEAVE, HOLD, TRIED = \
    range(12)
_PATIENCE = 20_000_000  # spins (about 5 ms here) before a task is taken back


def _claim(ctrl, seq, n_tasks):
    """The next unclaimed task of step ``seq`` (0 ≤ task < n_tasks), or −1."""
    while True:
        word = load(ctrl, CLAIM)
        task = word & 0xFFFFFFFF
        if word >> 32 != seq or task >= n_tasks:
            return -1
        if swap(ctrl, CLAIM, word, word + 1):
            return task


def _publish(ctrl, n_tasks):
    """Open a step of ``n_tasks`` tasks (its data written before); return its number."""
    seq = ctrl[SEQ] + 1
    ctrl[N_TASKS] = n_tasks
    store(ctrl, CLAIM, seq << 32)
    store(ctrl, SEQ, seq)
    return seq


def _wait(ctrl, status, task, seq):
    """Whether the helper has done task ``task`` of step ``seq``, waiting for it at most
    ``ctrl[PATIENCE]`` spins."""
    spins = 0
    while load(status, task) != seq and spins <= ctrl[PATIENCE]:
        spins += 1
    return load(status, task) == seq


def _hold(ctrl):
    """A test's helper (``ctrl[HOLD]`` = h > 0) waits inside its h-th task until the run's
    thread has given up waiting for it, and then until the stretch ends, so the task is
    never done in time for the step it belongs to (for loops whose tasks write shared
    buffers: tclose_screen, refine_sweep)."""
    if ctrl[HOLD] <= 0:
        return
    ctrl[HOLD] -= 1
    if ctrl[HOLD] > 0:
        return
    tried = load(ctrl, TRIED)
    spins = 0
    while load(ctrl, TRIED) == tried and spins < 1 << 34:
        spins += 1
    spins = 0
    while not load(ctrl, STOP) and spins < 1 << 30:
        spins += 1


for _name in ("_claim", "_publish", "_wait", "_hold"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled

claim, publish, wait, hold = _claim, _publish, _wait, _hold


def new_control(leave: bool = False, patience: int | None = None,
                hold: int = 0) -> np.ndarray:
    """A control vector: no step published, the helper stopped; with a loop's test
    settings (``LEAVE``, ``PATIENCE`` when given, ``HOLD``)."""
    ctrl = np.zeros(12, dtype=np.int64)
    ctrl[STOP], ctrl[LEAVE], ctrl[HOLD] = 1, leave, hold
    ctrl[PATIENCE] = _PATIENCE if patience is None else patience
    return ctrl


class TaskHelper:
    """The helper thread of one run: ``serve(*arguments)`` (a compiled loop that claims
    tasks until ``ctrl[STOP]``) is run during each stretch that goes on two threads.

    The run calls :meth:`begin` before each stretch of its compiled loop, :meth:`end`
    after it (also after an error) and :meth:`close` at the end. The stretches' ways
    are chosen by probes (module notes): the third stretch, then every ``_PROBE``-th
    (every ``_PROBE_CLEAR``-th once one way is faster by more than e^0.2), goes the
    other way; each probe gives an estimate of log(one thread / two threads) from its
    time per step against the mean of its two neighbours', and the running mean of the
    estimates (each new one weighing half) chooses the way.
    """

    _PROBE_FIRST, _PROBE, _PROBE_CLEAR, _CLEAR = 3, 8, 32, 0.2  # stretches per probe
    # Where the control vector holds: two threads now, stop, tasks served, given up.
    _ON, _STOP, _SERVED, _GAVE_UP = ON, STOP, SERVED, GAVE_UP

    def __init__(self, ctrl: np.ndarray, serve, arguments: tuple,
                 name: str = "microagg-task-helper"):
        self._ctrl = ctrl
        self._serve, self._arguments = serve, arguments
        self._wake, self._idle = threading.Event(), threading.Event()
        self._idle.set()
        self._closed = False
        self._woken = False
        self._two = True  # the way taken between probes
        self._gain = None  # running mean of log(one thread / two threads) from probes
        self._since = 0  # stretches since the last probe
        self._stretches: list[tuple[bool, float]] = []  # (two threads, seconds per step)
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                return
            self._serve(*self._arguments)
            self._idle.set()

    def begin(self, arguments: tuple | None = None) -> None:
        """Choose the next stretch's way; wake the helper for two threads (only when it
        is idle: after a given-up wait it may still be in an old task). ``arguments``,
        when given, replace ``serve``'s from this stretch on (a run whose structures were
        replaced): set only with the helper idle, so it never serves old ones."""
        clear = self._gain is not None and abs(self._gain) > self._CLEAR
        self._since += 1
        every = (self._PROBE_FIRST if self._gain is None else
                 self._PROBE_CLEAR if clear else self._PROBE)
        probe = self._since >= every
        if probe:
            self._since = 0
        if arguments is not None and self._idle.is_set():
            self._arguments = arguments
        two = (self._two != probe) and self._idle.is_set() and self._arguments is not None
        self._ctrl[self._ON] = int(two)
        self._woken = two
        if two:
            self._idle.clear()
            self._ctrl[self._STOP] = 0
            self._wake.set()

    def end(self, seconds: float, steps: int) -> None:
        """Stop the helper's spinning; weigh a probe once the stretch after it is done."""
        self._ctrl[self._STOP] = 1
        self._ctrl[self._ON] = 0
        if self._woken:
            self._idle.wait(0.01)  # it leaves its loop at once, unless it is stuck
        self._stretches.append((self._woken, seconds / max(steps, 1)))
        if len(self._stretches) >= 3:
            (two_before, before), (two, tried), (two_after, after) = self._stretches[-3:]
            # The stretch before last was a probe when it went the other way from both
            # of its neighbours (a stretch whose helper was not back went one thread).
            if two_before == two_after != two and min(before, tried, after) > 0:
                estimate = math.log(tried / (0.5 * (before + after)))
                if two:  # the probe had two threads, its neighbours one
                    estimate = -estimate
                self._gain = estimate if self._gain is None else \
                    0.5 * (self._gain + estimate)
                self._two = self._gain >= 0.0

    @property
    def two_threads(self) -> bool:
        """The way taken between probes (True: two threads)."""
        return self._two

    def release(self) -> None:
        """Let go of ``serve``'s arguments while the helper is idle (a loop about to build
        one of its structures again frees the old one first); until a :meth:`begin`
        gives new ones, the stretches run on one thread."""
        if not self._idle.is_set():
            raise RuntimeError("the helper is still serving: its arguments are in use")
        self._arguments = None

    def close(self) -> None:
        """Stop the helper (a daemon thread: never waited for beyond a few seconds)."""
        self._closed = True
        self._ctrl[self._STOP] = 1
        self._wake.set()
        self._thread.join(5.0)

    @property
    def idle(self) -> bool:
        """Whether the helper is out of its compiled loop (after a given-up wait it may
        still be in a task for a while): only then may shared structures be replaced."""
        return self._idle.is_set()

    @property
    def served(self) -> int:
        """Tasks the helper did."""
        return int(self._ctrl[self._SERVED])

    @property
    def gave_up(self) -> int:
        """Tasks the run's thread took back after waiting too long."""
        return int(self._ctrl[self._GAVE_UP])
