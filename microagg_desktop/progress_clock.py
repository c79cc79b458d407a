"""Elapsed and remaining time of a running task, from its progress fraction. No Qt.

The remaining time is extrapolated from the rate of progress so far and smoothed (an
exponential moving average), so it does not jump with every uneven step; it is only
given once the task has run long enough (≥ 5 % and ≥ 1 s) for the rate to mean
something.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["ProgressClock", "format_clock"]


def format_clock(seconds: float) -> str:
    """``m:ss`` (or ``h:mm:ss`` from an hour on).

    Examples
    --------
    >>> format_clock(12), format_clock(75.4), format_clock(3725)
    ('0:12', '1:15', '1:02:05')
    """
    whole = max(0, int(round(seconds)))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressClock:
    """Time a task from :meth:`start` and estimate what is left from its progress.

    Parameters
    ----------
    now : callable
        Seconds from a monotonic clock (a fake one in tests).
    smoothing : float
        Weight of the newest estimate in the moving average (0 < smoothing ≤ 1).

    Examples
    --------
    >>> now = [0.0]
    >>> clock = ProgressClock(now=lambda: now[0])
    >>> clock.start(); now[0] = 10.0; clock.update(0.25); clock.text()
    '0:10 elapsed · about 0:30 left'
    """

    MIN_FRACTION = 0.05
    MIN_SECONDS = 1.0

    def __init__(self, now: Callable[[], float] = time.monotonic, smoothing: float = 0.3):
        if not 0 < smoothing <= 1:
            raise ValueError(f"smoothing must be in (0, 1]; got {smoothing!r}.")
        self._now = now
        self._smoothing = smoothing
        self._started: float | None = None
        self._stopped: float | None = None
        self._fraction = 0.0
        self._remaining: float | None = None
        self._at: float = 0.0  # when the last estimate was made

    def start(self) -> None:
        """Start (or restart) timing from zero progress."""
        self._started = self._now()
        self._stopped = None
        self._fraction = 0.0
        self._remaining = None
        self._at = self._started

    def stop(self) -> None:
        """Freeze the elapsed time (the task ended)."""
        if self._started is not None and self._stopped is None:
            self._stopped = self._now()

    @property
    def running(self) -> bool:
        return self._started is not None and self._stopped is None

    @property
    def elapsed(self) -> float:
        """Seconds since :meth:`start` (0 before), up to :meth:`stop` if stopped."""
        if self._started is None:
            return 0.0
        end = self._stopped if self._stopped is not None else self._now()
        return max(0.0, end - self._started)

    @property
    def fraction(self) -> float:
        return self._fraction

    def update(self, fraction: float) -> None:
        """Record progress (0 to 1; values outside are clipped, going back is ignored)."""
        if self._started is None:
            self.start()
        fraction = min(1.0, max(0.0, float(fraction)))
        if fraction < self._fraction:
            return
        self._fraction = fraction
        elapsed = self.elapsed
        self._at = self._started + elapsed
        if fraction >= 1.0:
            self._remaining = 0.0
            return
        if fraction < self.MIN_FRACTION or elapsed < self.MIN_SECONDS:
            return
        fresh = elapsed * (1.0 - fraction) / fraction
        if self._remaining is None:
            self._remaining = fresh
        else:
            self._remaining += self._smoothing * (fresh - self._remaining)

    @property
    def remaining(self) -> float | None:
        """Seconds left, or None until ≥ 5 % and ≥ 1 s of progress.

        Counts down between updates from the time of the last estimate.
        """
        if self._remaining is None:
            return None
        since = max(0.0, (self._started + self.elapsed) - self._at)
        return max(0.0, self._remaining - since)

    def text(self) -> str:
        """"0:12 elapsed · about 0:30 left" (without the second part until known)."""
        shown = f"{format_clock(self.elapsed)} elapsed"
        remaining = self.remaining
        if remaining is not None and self.running and self._fraction < 1.0:
            shown += f" · about {format_clock(remaining)} left"
        return shown
