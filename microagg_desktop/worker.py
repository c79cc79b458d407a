"""Running an engine function off the GUI thread (Orange3's ``concurrent`` + superqt).

The computation is a plain function that accepts ``state=TaskState``; it reports
progress through the state and stops with :class:`core.Cancelled` when asked. A
:class:`Worker` runs it on a thread pool and reports only through the signals of its
:class:`WorkerSignals` (a separate ``QObject`` living in the GUI thread, so every signal
reaches the GUI as a queued call). Workers never touch widgets.

:class:`TaskRunner` owns the current worker: starting a new task cancels the old one,
and only the current task's signals are passed on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from core import Cancelled, MicroaggError, TaskState

__all__ = ["WorkerSignals", "Worker", "TaskRunner"]

log = logging.getLogger(__name__)

PROGRESS_INTERVAL = 0.05
"""Seconds between two progress signals; the engine may step thousands of times a second."""


class WorkerSignals(QObject):
    """What a worker reports. Exactly one of returned/errored/cancelled, then finished."""

    started = Signal()
    progress = Signal(float, str)
    returned = Signal(object)
    errored = Signal(str)
    cancelled = Signal()
    finished = Signal()


class Worker(QRunnable):
    """Run ``function(*args, state=TaskState, **kwargs)`` on a pool thread.

    Parameters
    ----------
    function : callable
        A plain function (no Qt) taking a ``state`` keyword argument.
    *args, **kwargs
        Passed to ``function``.

    Notes
    -----
    :class:`core.MicroaggError` becomes ``errored(message)``; any other exception is
    logged with its traceback and becomes ``errored`` with a short message, so the user
    sees a sentence, not a traceback.
    """

    def __init__(self, function: Callable[..., Any], *args, **kwargs):
        super().__init__()
        self.setAutoDelete(False)  # the owner keeps the Python object alive
        self.signals = WorkerSignals()
        self.state = TaskState(self._on_step)
        self._function, self._args, self._kwargs = function, args, kwargs
        self._last_emit = -1.0
        self._done = threading.Event()

    @property
    def done(self) -> bool:
        """True once ``finished`` has been emitted."""
        return self._done.is_set()

    def cancel(self) -> None:
        """Ask the function to stop at its next step (thread-safe, returns at once)."""
        self.state.cancel()

    def _on_step(self, fraction: float, message: str) -> None:
        now = time.monotonic()
        if fraction >= 1.0 or now - self._last_emit >= PROGRESS_INTERVAL:
            self._last_emit = now
            self._emit("progress", fraction, message)

    def _emit(self, name: str, *args) -> None:
        try:
            getattr(self.signals, name).emit(*args)
        except RuntimeError:
            # The receiving side is gone (the application is closing): nobody listens
            # any more, so stop computing.
            self.state.cancel()

    def run(self) -> None:
        try:
            self._emit("started")
            result = self._function(*self._args, state=self.state, **self._kwargs)
        except Cancelled:
            self._emit("cancelled")
        except MicroaggError as error:
            self._emit("errored", str(error))
        except MemoryError:
            log.exception("out of memory in %r", self._function)
            self._emit("errored", "Not enough memory for this run. Try fewer records or "
                                  "fewer quasi-identifiers.")
        except Exception as error:  # the GUI must survive any engine bug
            log.exception("unexpected error in %r", self._function)
            self._emit("errored", f"Unexpected error ({type(error).__name__}): {error}. "
                                  "Details were written to the log.")
        else:
            if self.state.cancelled:
                self._emit("cancelled")
            else:
                self._emit("returned", result)
        finally:
            self._done.set()
            self._emit("finished")


class TaskRunner(QObject):
    """Runs one task at a time; its ``signals`` carry only the current task's reports.

    Parameters
    ----------
    parent : QObject, optional
    """

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.signals = WorkerSignals(self)
        self._pool = QThreadPool(self)
        self._current: Worker | None = None
        self._workers: set[Worker] = set()  # alive until their ``finished``

    @property
    def running(self) -> bool:
        """True while the current task has not finished."""
        return self._current is not None and not self._current.done

    @property
    def current(self) -> Worker | None:
        return self._current

    def start(self, function: Callable[..., Any], *args, **kwargs) -> Worker:
        """Cancel the running task (if any) and start ``function`` on a pool thread."""
        self.cancel()
        worker = Worker(function, *args, **kwargs)
        self._current = worker
        self._workers.add(worker)
        # Bound slots of this QObject (not lambdas) so that Qt queues every report into
        # the GUI thread; sender() tells which worker a report came from.
        own = worker.signals
        own.started.connect(self._on_started)
        own.progress.connect(self._on_progress)
        own.returned.connect(self._on_returned)
        own.errored.connect(self._on_errored)
        own.cancelled.connect(self._on_cancelled)
        own.finished.connect(self._on_finished)
        self._pool.start(worker)
        return worker

    def abandon(self) -> None:
        """Cancel the current task and pass on none of its reports any more, not even
        one already queued (the window moved on to another table)."""
        self.cancel()
        self._current = None

    def cancel(self) -> None:
        """Ask the current task to stop; its ``cancelled`` signal follows."""
        if self._current is not None:
            self._current.cancel()

    def wait(self, milliseconds: int = -1) -> bool:
        """Block until every task finished (or the time ran out); True if all finished."""
        return self._pool.waitForDone(milliseconds)

    def _is_current(self) -> bool:
        return self._current is not None and self.sender() is self._current.signals

    @Slot()
    def _on_started(self) -> None:
        if self._is_current():
            self.signals.started.emit()

    @Slot(float, str)
    def _on_progress(self, fraction: float, message: str) -> None:
        if self._is_current():
            self.signals.progress.emit(fraction, message)

    @Slot(object)
    def _on_returned(self, result: object) -> None:
        if self._is_current():
            self.signals.returned.emit(result)

    @Slot(str)
    def _on_errored(self, text: str) -> None:
        if self._is_current():
            self.signals.errored.emit(text)

    @Slot()
    def _on_cancelled(self) -> None:
        if self._is_current():
            self.signals.cancelled.emit()

    @Slot()
    def _on_finished(self) -> None:
        sender = self.sender()
        self._workers = {w for w in self._workers if w.signals is not sender}
        if self._current is not None and sender is self._current.signals:
            self.signals.finished.emit()
