"""What the command line shows on a terminal, and where it logs what went wrong.

:class:`Progress` writes one self-updating line on stderr while a run works (its stage,
the share of records grouped, the time elapsed and an estimate of what remains), only
when stderr is a terminal and ``--quiet`` is not given, so scripts and pipes get nothing.
:func:`log_internal_error` appends the traceback of an unexpected error to the log file
(:func:`log_path`), so the user sees one line and where the details are.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
import time
import traceback
from pathlib import Path
from typing import TextIO

__all__ = ["Progress", "log_path", "log_internal_error"]

_INTERVAL = 0.25  # seconds between two updates of the line


class Progress:
    """A ``TaskState`` callback that draws a progress line on a terminal.

    Parameters
    ----------
    stream : text stream
        Usually ``sys.stderr``; nothing is drawn unless it is a terminal.
    quiet : bool
        Draw nothing.
    n_records : int, optional
        Shown as "records grouped" (the share of the run times this number).
    """

    def __init__(self, stream: TextIO = sys.stderr, *, quiet: bool = False,
                 n_records: int | None = None):
        self.stream = stream
        self.enabled = not quiet and hasattr(stream, "isatty") and stream.isatty()
        self.n_records = n_records
        self.started = time.monotonic()
        self._last = 0.0
        self._width = 0

    def __call__(self, fraction: float, message: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < _INTERVAL and fraction < 1.0:
            return
        self._last = now
        self._draw(self.line(fraction, message, now - self.started))

    def line(self, fraction: float, message: str, elapsed: float) -> str:
        """The text of the line (tested without a terminal)."""
        fraction = min(max(fraction, 0.0), 1.0)
        parts = [f"{100 * fraction:5.1f} %"]
        if self.n_records:
            parts.append(f"{round(fraction * self.n_records):,} of {self.n_records:,} "
                         "records")
        parts.append(f"{_duration(elapsed)} elapsed")
        if 0.02 <= fraction < 1.0 and elapsed >= 1.0:
            parts.append(f"about {_duration(elapsed * (1 - fraction) / fraction)} left")
        if message:
            parts.append(message)
        return "  ".join(parts)

    def _draw(self, text: str) -> None:
        padding = " " * max(0, self._width - len(text))
        self.stream.write("\r" + text + padding)
        self.stream.flush()
        self._width = len(text)

    def done(self) -> None:
        """End the line so what follows starts on a fresh one."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def log_path() -> Path:
    """The command line's log file: ``$MICROAGG_LOG_DIR/microagg.log`` or the user's
    application-data folder (the GUI logs beside it)."""
    override = os.environ.get("MICROAGG_LOG_DIR")
    if override:
        folder = Path(override)
    elif sys.platform.startswith("win"):
        folder = Path(os.environ.get("LOCALAPPDATA", Path.home())) / "MicroAgg Desktop"
    elif sys.platform == "darwin":
        folder = Path.home() / "Library" / "Logs" / "MicroAgg Desktop"
    else:
        base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
        folder = Path(base) / "microagg-desktop"
    return folder / "microagg.log"


def log_internal_error(error: BaseException, argv: list[str]) -> Path | None:
    """Append ``error``'s traceback and the command to the log; its path, or None."""
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"--- {_dt.datetime.now().isoformat(timespec='seconds')} "
                         f"microagg {' '.join(argv)}\n")
            handle.write("".join(traceback.format_exception(error)))
    except OSError:
        return None
    return path
