"""The first start compiles the engine in the background, in a separate process.

A fresh installation has no compiled kernels yet (:mod:`core.pipeline.warmup`): the
first run would sit at 0 % for a minute while they compile, and could not be
cancelled. So the first time the window starts (for each version of the application
and of numba), it launches ``microagg-desktop --warm-up`` as a child process and shows
"Preparing the engine for first use…" in the status bar until the child is done. The
child has its own interpreter, so the window stays responsive; a run started meanwhile
simply compiles what it needs itself. A stamp file in the user's cache folder records a
successful warm-up so later starts skip it. Nothing here touches the network.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QStandardPaths
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

from core.compiled import COMPILED, numba_version

__all__ = ["EngineWarmUp", "warm_up_command"]

MESSAGE = "Preparing the engine for first use (about a minute, once)…"


def warm_up_command() -> tuple[str, list[str]]:
    """The program and arguments that run the warm-up (frozen bundle or Python)."""
    if getattr(sys, "frozen", False):
        return sys.executable, ["--warm-up"]
    return sys.executable, ["-m", "microagg_desktop", "--warm-up"]


def _stamp(version: str) -> Path:
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.CacheLocation)
    return Path(folder or Path.home() / ".cache") / f"warm-{version}-numba-{numba_version()}"


class EngineWarmUp(QObject):
    """Runs the warm-up child once per version; shows a status-bar note meanwhile."""

    def __init__(self, window: QMainWindow, version: str, command=None):
        super().__init__(window)
        self.stamp = _stamp(version)
        self.command = command or warm_up_command()
        self.process: QProcess | None = None
        self.label = QLabel(MESSAGE, window)
        self.label.setAccessibleName("Engine preparation")
        self.label.hide()
        window.statusBar().addPermanentWidget(self.label)

    def needed(self) -> bool:
        return (COMPILED and not self.stamp.exists()
                and os.environ.get("MICROAGG_NO_WARMUP", "") in ("", "0"))

    def start(self) -> bool:
        """Launch the child if the engine was never warmed up; return whether it was."""
        if not self.needed():
            return False
        self.process = QProcess(self)
        self.process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        self.process.finished.connect(self._finished)
        self.process.errorOccurred.connect(self._failed)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.stop)
        self.label.show()
        program, arguments = self.command
        self.process.start(program, arguments)
        return True

    def running(self) -> bool:
        return (self.process is not None
                and self.process.state() != QProcess.ProcessState.NotRunning)

    def stop(self) -> None:
        if self.running():
            self.process.kill()
            self.process.waitForFinished(2000)

    def _finished(self, code: int, status: QProcess.ExitStatus) -> None:
        self.label.hide()
        if code == 0 and status == QProcess.ExitStatus.NormalExit:
            try:
                self.stamp.parent.mkdir(parents=True, exist_ok=True)
                self.stamp.write_text("The engine's kernels were compiled.\n",
                                      encoding="utf-8")
            except OSError:
                pass  # a read-only cache folder: the next start warms up again

    def _failed(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self.label.hide()
