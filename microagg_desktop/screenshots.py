"""Drive the real window offscreen through the workflow and save one PNG per screen.

``python -m microagg_desktop.screenshots OUTDIR [--size 1366x768]`` opens the bundled
sample, sets its roles, runs three methods, compares them, sweeps k, and writes
``data.png``, ``import.png``, ``roles.png``, ``wizard.png``, ``running.png``,
``results.png``, ``history.png``, ``compare.png``, ``risk-utility.png``, ``sweep.png`` and
``report.png`` into OUTDIR. The README shows them; the tests run it at a small size.
Nothing here is special to screenshots: it clicks through the same methods a user's
clicks call.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["take_screenshots", "SCREENS", "main"]

SCREENS = ("data", "import", "roles", "wizard", "running", "results", "history",
           "compare", "risk-utility", "sweep", "report")


def _process(app, seconds: float = 0.2) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def _wait(app, condition, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError("the window did not finish in time")
        app.processEvents()
        time.sleep(0.02)


def _save(widget, folder: Path, name: str, app) -> Path:
    _process(app, 0.3)
    path = folder / f"{name}.png"
    if not widget.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    return path


def _run(window, app) -> None:
    assert window.run(), "the run did not start"
    _wait(app, lambda: not window.runner.running)
    _process(app)


def _big_table(rows: int = 200_000):
    """A synthetic table large enough for a run to be caught half-way."""
    import numpy as np
    import pandas as pd

    generator = np.random.default_rng(7)
    return pd.DataFrame({f"x{j}": generator.normal(size=rows) for j in range(6)})


def take_screenshots(folder: str | os.PathLike, size: tuple[int, int] = (1366, 768)
                     ) -> list[Path]:
    """Drive a new window through the workflow; return the PNGs written, in order."""
    from PySide6.QtWidgets import QApplication

    from core import RoleSpec
    from microagg_desktop.import_dialog import ImportDialog
    from microagg_desktop.main_window import MainWindow
    from microagg_desktop.paths import resource_path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(store={})
    window.show_error = lambda text: (_ for _ in ()).throw(RuntimeError(text))
    window.confirm_export = lambda warnings: True
    window.ask_to_close = lambda reasons: "discard"
    window.ask_to_replace = lambda reasons: "discard"
    window.resize(*size)
    window.show()
    written = []

    # Data and import: the sample, and the preview of its import settings.
    assert window.open_sample()
    window.tabs.setCurrentWidget(window.data_page)
    written.append(_save(window, folder, "data", app))
    dialog = ImportDialog(resource_path("sample_survey.csv"), window)
    dialog.resize(min(size[0] - 100, 900), min(size[1] - 80, 620))
    dialog.show()
    written.append(_save(dialog, folder, "import", app))
    dialog.close()

    window.tabs.setCurrentWidget(window.role_editor)
    written.append(_save(window, folder, "roles", app))

    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 5)
    window.tabs.setCurrentWidget(window.method_panel)
    written.append(_save(window, folder, "wizard", app))

    # A run caught half-way, on a larger synthetic table, then cancelled.
    sample, source, path = window.table, window.source, window.data_path
    big = _big_table()
    window.set_table(big, "synthetic_200000.csv",
                     roles={c: "quasi-identifier" for c in big.columns})
    window.method_panel.set_method("mdav")
    assert window.run()
    _wait(app, lambda: window.progress.value() >= 150 or not window.runner.running)
    window.tabs.setCurrentWidget(window.method_panel)
    written.append(_save(window, folder, "running", app))
    window.cancel()
    _wait(app, lambda: not window.runner.running)

    # Three runs on the sample: MDAV k=5, CBFS k=5, MDAV k=10.
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 5)
    _run(window, app)
    window.tabs.setCurrentWidget(window.results_panel)
    written.append(_save(window, folder, "results", app))
    window.method_panel.set_method("cbfs")
    _run(window, app)
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 10)
    _run(window, app)
    window.tabs.setCurrentWidget(window.history_page)
    window.history_panel.select_numbers([r.number for r in window.history.records])
    written.append(_save(window, folder, "history", app))
    window.compare_runs([r.number for r in window.history.records])
    written.append(_save(window, folder, "compare", app))
    window.compare_view.plots.setCurrentWidget(window.compare_view.map)
    written.append(_save(window, folder, "risk-utility", app))

    window.tabs.setCurrentWidget(window.sweep_panel)
    window.sweep_panel.set_range(2, 10, step=1)
    assert window.start_sweep(window.sweep_panel.parameter_box.currentData(),
                              window.sweep_panel.sweep_values())
    _wait(app, lambda: not window.runner.running)
    written.append(_save(window, folder, "sweep", app))

    # The report of run #1 as its reader sees it: the first page of the PDF's document.
    window.show_run(window.history.records[0].number)
    with tempfile.TemporaryDirectory() as scratch:
        assert window.export_report_to(Path(scratch) / "report.pdf")
    written.append(_render_report(window, folder / "report.png"))
    window.close()
    del sample, source, path
    return written


def _render_report(window, png: Path, width: int = 820, height: int = 1160) -> Path:
    """Paint the first page of the report as :mod:`.pdf_report` lays it out."""
    from PySide6.QtCore import QRectF, QSizeF
    from PySide6.QtGui import QColor, QImage, QPainter

    from microagg_desktop.pdf_report import report_document

    document = report_document(window.result, source=window.source,
                               input_path=window.data_path, original=window.table)
    document.setPageSize(QSizeF(width - 40, height - 40))
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.translate(20, 20)
    document.drawContents(painter, QRectF(0, 0, width - 40, height - 40))
    painter.end()
    if not image.save(str(png)):
        raise OSError(f"could not write {png}")
    return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m microagg_desktop.screenshots",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--size", default="1366x768", help="window size, WIDTHxHEIGHT")
    arguments = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    width, height = (int(v) for v in arguments.size.lower().split("x"))
    for path in take_screenshots(arguments.outdir, (width, height)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
