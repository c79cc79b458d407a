"""The files a person gets about a result: the export (with its summary sheet) and the
HTML report.

The summary rows are built in :mod:`core.report.summary`, the report's page in
:mod:`core.report.html`; this module writes them, atomically.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import MicroaggError
from core.io.write import atomic_write, write_table
from core.methods.registry import get_method
from core.pipeline import AnonymizationResult
from core.progress import TaskState
from core.report.html import report_html
from core.report.summary import summary_frame

__all__ = ["REPORT_SUFFIXES", "summary_frame", "export_result", "write_report", "report_html"]

# What write_report writes: an HTML page (the window's PDF is microagg_desktop's).
REPORT_SUFFIXES = (".html", ".htm")


def export_result(result: AnonymizationResult, path, *, source: str = "",
                  state: TaskState | None = None) -> Path:
    """Write the masked table (CSV or XLSX with a summary sheet), atomically.

    Refuses a result the verifier did not pass: a weaker table is never exported.
    ``state`` gets the file's progress (:func:`core.io.write.write_table`).
    """
    if not result.passed and get_method(result.method).guarantee.record_level:
        raise MicroaggError("This result did not pass verification; it cannot be exported.")
    return write_table(path, result.masked,
                       extra_sheets=[("summary", summary_frame(result, source=source))],
                       state=state)


def write_report(result: AnonymizationResult, path, *, source: str = "",
                 input_path=None, input_sha256: str | None = None, original=None,
                 plots: bool = True, state: TaskState | None = None,
                 run: str | None = None) -> Path:
    """Write the self-contained HTML report of ``result`` (images inline), atomically.

    Parameters
    ----------
    result : AnonymizationResult
    path : path-like
        The ``.html`` file to write; replaced only once the page is complete.
    source : str
        The input's display name (default: the name of ``input_path``).
    input_path : path-like, optional
        The input file, named in the report with its SHA-256 (read in chunks).
    input_sha256 : str, optional
        The input's SHA-256 when it is already known (the file is then not read).
    original : DataFrame, optional
        The original table; without it the plots that compare with it are left out
        and the report says so.
    plots : bool
        Draw the figures (group sizes, closeness, changes, a scatter).
    state : TaskState, optional
        Progress figure by figure; cancelling raises :class:`core.Cancelled` and leaves
        ``path`` untouched.

    Returns
    -------
    Path
        The written file.

    Raises
    ------
    MicroaggError
        The file cannot be written (the message names it).
    """
    page = report_html(result, source=source, input_path=input_path,
                       input_sha256=input_sha256, original=original, plots=plots, run=run,
                       state=state, images="inline")

    def write(temporary):
        Path(temporary).write_text(page, encoding="utf-8")

    try:
        return atomic_write(path, write)
    except OSError as error:
        raise MicroaggError(f"Cannot write '{path}': {error.strerror or error}.") from None
