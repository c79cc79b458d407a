"""The report as a PDF, printed by Qt's own PDF writer from the HTML report's page.

The page is :func:`core.report.html.report_html` with its figures given as named
resources (``QTextDocument`` does not load ``data:`` URIs); ``QPdfWriter`` paginates
it on A4. Offline, no web engine. Safe on a worker thread (no widget is created).

Qt objects made on a worker thread belong to it, so :func:`write_pdf` deletes its
document and writer there, before it returns. Left to Python, one could outlive the
thread: the figures' log-scale tick labels are parsed by matplotlib's mathtext, whose
parser caches the exceptions it raised, tracebacks and all, until its next parse, and
those tracebacks hold the frames that made the document. It was then destroyed later
from the GUI thread (at the next such plot, or at exit), which Qt reports as
"QBasicTimer::stop: Failed. Possibly trying to stop from a different thread": the
document's layout has timers of its thread.
"""

from __future__ import annotations

from pathlib import Path

import shiboken6
from PySide6.QtCore import QMarginsF, QSizeF, QUrl
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPdfWriter, QTextDocument

from core.errors import MicroaggError
from core.io.write import atomic_write
from core.report.html import report_html

__all__ = ["write_pdf", "report_document"]

_RESOLUTION = 300  # dots per inch of the PDF's coordinate system
_MARGIN_MM = 15.0


_FIGURE_WIDTH = 500  # points: the printable width of A4 less the margins is about 510


def report_document(result, **keywords) -> QTextDocument:
    """The report of ``result`` as a :class:`QTextDocument` with its figures loaded.

    ``keywords`` are those of :func:`core.report.documents.write_report`.
    """
    page, images = report_html(result, images="resources", image_width=_FIGURE_WIDTH,
                               **keywords)
    document = QTextDocument()
    for name, png in images.items():
        image = QImage.fromData(png, "PNG")
        if image.isNull():
            raise MicroaggError(f"The report's figure '{name}' could not be decoded; "
                                "write the HTML report instead.")
        document.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), image)
    document.setHtml(page)
    return document


def write_pdf(result, path, *, source: str = "", input_path=None,
              input_sha256: str | None = None, original=None, plots: bool = True,
              state=None, run: str | None = None) -> Path:
    """Write the report of ``result`` as an A4 PDF at ``path``, atomically.

    Same keywords as :func:`core.report.documents.write_report`; the figures are
    embedded as images. ``path`` is replaced only once the PDF is complete.

    Returns
    -------
    Path
        The written file.
    """
    document = report_document(result, source=source, input_path=input_path,
                               input_sha256=input_sha256, original=original, run=run,
                               plots=plots, state=state)

    def write(temporary):
        writer = QPdfWriter(str(temporary))
        try:
            writer.setResolution(_RESOLUTION)
            writer.setPageLayout(QPageLayout(
                QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                QMarginsF(_MARGIN_MM, _MARGIN_MM, _MARGIN_MM, _MARGIN_MM),
                QPageLayout.Unit.Millimeter))
            writer.setTitle(f"MicroAgg Desktop report: {source or result.method}")
            writer.setCreator("MicroAgg Desktop")
            # Lay the page out at the width of the printable area in points, so that
            # fonts and the figures' widths (in pixels) keep their screen proportions.
            printable = writer.pageLayout().paintRect(QPageLayout.Unit.Point)
            document.setPageSize(QSizeF(printable.width(), printable.height()))
            document.print_(writer)
        finally:
            shiboken6.delete(writer)  # on this thread (module notes)
        if Path(temporary).stat().st_size == 0:
            raise MicroaggError(f"Qt's PDF writer wrote nothing for '{path}'; check the "
                                "folder is writable, or write the HTML report instead.")

    try:
        return atomic_write(path, write)
    finally:
        shiboken6.delete(document)  # on this thread (module notes)
