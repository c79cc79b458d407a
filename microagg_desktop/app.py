"""The ``microagg-desktop`` entry point.

``microagg-desktop [FILE]`` opens the main window, and ``FILE`` in it if given;
``microagg-desktop --sample`` opens the bundled sample survey with its roles preset;
``microagg-desktop --self-test`` checks the installation without a display or network.
The application never uses the network.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QStandardPaths, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from microagg_desktop.engine_warmup import EngineWarmUp

__all__ = ["main"]

log = logging.getLogger("microagg_desktop")

APPLICATION_NAME = "MicroAgg Desktop"
ORGANIZATION_NAME = "MicroAgg"


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("microagg-desktop")
    except Exception:  # a plain checkout is not installed
        return "0.1.0"


def _setup_logging() -> Path | None:
    """Log warnings and errors to a file in the per-user application data folder."""
    folder = Path(QStandardPaths.writableLocation(
        QStandardPaths.StandardLocation.AppLocalDataLocation))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(folder / "microagg-desktop.log", encoding="utf-8")
    except OSError:
        handler, folder = logging.StreamHandler(), None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return folder


def _install_excepthook(window) -> None:
    """Log any exception that escapes a slot and show it as a message, not a crash."""
    def hook(kind, error, traceback):
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, error, traceback)
            return
        log.critical("uncaught exception", exc_info=(kind, error, traceback))
        try:
            window.show_error(f"Unexpected error ({kind.__name__}): {error}. "
                              "Details were written to the log.")
        except Exception:
            QMessageBox.critical(None, APPLICATION_NAME, f"Unexpected error: {error}")

    sys.excepthook = hook


def main(argv: Sequence[str] | None = None) -> int:
    """Start the application; return its exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        Command line (program name first); ``sys.argv`` by default. Qt's own options
        are removed by Qt; the first remaining argument is a table to open, and
        ``--sample`` opens the bundled sample instead; ``--self-test`` runs the offline,
        headless self-test (:mod:`microagg_desktop.selftest`) and exits; ``--warm-up``
        compiles the engine's kernels (:mod:`core.pipeline.warmup`) and exits.
    """
    if "--self-test" in list(sys.argv if argv is None else argv)[1:]:
        from microagg_desktop.selftest import run_self_test
        return run_self_test(gui=True)
    if "--warm-up" in list(sys.argv if argv is None else argv)[1:]:
        from core.pipeline.warmup import warm_up
        seconds = warm_up()
        print(f"The engine is ready ({seconds:.0f} s).")
        return 0
    from microagg_desktop.main_window import MainWindow

    QApplication.setApplicationName(APPLICATION_NAME)
    QApplication.setOrganizationName(ORGANIZATION_NAME)
    QApplication.setApplicationVersion(_version())
    argv = list(sys.argv if argv is None else argv)
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv)
        argv = app.arguments()  # Qt's own options removed
    _setup_logging()
    window = MainWindow()
    _install_excepthook(window)
    window.show()
    window.engine_warm_up = EngineWarmUp(window, _version())
    window.engine_warm_up.start()
    paths = [a for a in argv[1:] if not a.startswith("-")]
    if paths:
        QTimer.singleShot(0, lambda: window.open_file(paths[0]))
    elif "--sample" in argv[1:]:
        QTimer.singleShot(0, window.open_sample)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
