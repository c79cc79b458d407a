"""What a person reads about a result: the summary sheet, the export, the HTML report
and its figures (:mod:`core.report.plots`)."""

from core.report.documents import export_result, report_html, summary_frame, write_report

__all__ = ["export_result", "report_html", "summary_frame", "write_report"]
