"""Progress reporting and cancellation for long computations.

An algorithm receives a :class:`TaskState` and calls :meth:`TaskState.step` often: at
least every tenth of a second or so, and at least 64 times per run (once per group when
it forms fewer). Compiled loops return to Python that often. ``step`` records the fraction done and raises
:class:`~core.errors.Cancelled` if cancellation was requested. The state object holds no
Qt: the GUI's worker passes a callback and calls :meth:`TaskState.cancel` from another
thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from core.errors import Cancelled

__all__ = ["TaskState", "next_budget"]


def next_budget(budget: int, spent: float, most: int) -> int:
    """The units (groups, clusters, classes) a compiled loop does in its next call: as
    many as take about a tenth of a second at the pace of the last call (``budget`` in
    ``spent`` seconds), growing at most fourfold, never more than ``most``.

    >>> [next_budget(16, spent, 1000) for spent in (0.05, 0.001, 1.0)]
    [32, 65, 1]
    """
    return int(min(max(budget * (0.1 / max(spent, 1e-4)), 1), 4 * budget + 1, most))


class TaskState:
    """Thread-safe progress and cancellation flag shared by a task and its owner.

    Parameters
    ----------
    callback : callable, optional
        Called as ``callback(fraction, message)`` on every :meth:`step`. It must be cheap;
        the GUI throttles what it displays.
    """

    def __init__(self, callback: Callable[[float, str], None] | None = None):
        self._callback = callback
        self._cancel = threading.Event()
        self.fraction = 0.0
        self.message = ""

    def cancel(self) -> None:
        """Ask the running task to stop at its next :meth:`step`."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if cancellation was requested."""
        if self._cancel.is_set():
            raise Cancelled("cancelled by the user")

    def step(self, fraction: float, message: str = "") -> None:
        """Record progress (``0 <= fraction <= 1``) and check for cancellation."""
        self.check()
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        if message:
            self.message = message
        if self._callback is not None:
            self._callback(self.fraction, self.message)

    def sub(self, start: float, stop: float) -> "TaskState":
        """A view of this state that maps its own 0..1 onto ``start..stop`` of this one."""
        return _SubState(self, start, stop)


class _SubState(TaskState):
    """Progress of one part of a task, mapped onto a span of its parent's."""

    def __init__(self, parent: TaskState, start: float, stop: float):
        self._parent, self._start, self._stop = parent, start, stop
        self._cancel = parent._cancel
        self._callback = None
        self.fraction = 0.0
        self.message = ""

    def step(self, fraction: float, message: str = "") -> None:
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        # At most stop, and stop itself at the end: start + (stop − start) · 1 may round
        # above it (0.26875 to 0.9187500000000001 gives 0.9187500000000002), and the
        # parent's next step, at stop, would go back; or below it (0.2071907327336054
        # to 0.7162472268615993 gives 0.7162472268615991).
        self._parent.step(self._stop if self.fraction == 1.0 else
                          min(self._start + (self._stop - self._start) * self.fraction,
                              self._stop), message)


