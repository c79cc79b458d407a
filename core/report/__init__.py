"""What a person reads about a result: the summary sheet, the export and the HTML report."""

from core.report.documents import export_result, summary_frame, write_report

__all__ = ["export_result", "summary_frame", "write_report"]
