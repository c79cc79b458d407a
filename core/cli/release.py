"""Writing a run's outputs and telling the user about it: shared by ``anonymize`` and ``rerun``.

:func:`write_outputs` writes the released table (CSV or XLSX with a summary sheet), and
the JSON summary and HTML report when asked; :func:`print_result` prints the figures,
the verification, the guarantee (stdout) and the release warnings (stderr).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.errors import MicroaggError
from core.io.write import atomic_write
from core.pipeline import AnonymizationResult
from core.report.documents import export_result, write_report
from core.report.summary import noise_text

__all__ = ["write_json", "write_outputs", "print_result"]


def write_json(path: str, payload: dict) -> Path:
    """Write ``payload`` as indented JSON, atomically (numpy scalars as numbers)."""
    def write(temporary):
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2, default=_json_default)
            handle.write("\n")
    try:
        return atomic_write(path, write)
    except OSError as error:
        raise MicroaggError(f"Cannot write '{path}': {error.strerror or error}.") from None


def _json_default(value):
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def write_outputs(result: AnonymizationResult, output: str, *, source: str,
                  summary_json: str | None = None, report: str | None = None,
                  input_path: str | None = None, original=None) -> None:
    """The summary and report where asked, then the released table to ``output``.

    The report records ``input_path``'s SHA-256 and, given the ``original`` table, its
    plots comparing the release with it.

    The table comes last, and a failure removes what this call wrote before it: a
    failed command leaves no released table, and no summary of a table not written.
    """
    written = []
    try:
        if summary_json:
            written.append(write_json(summary_json, result.summary()))
        if report:
            written.append(write_report(result, report, source=source,
                                        input_path=input_path, original=original))
        export_result(result, output, source=source)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise


def _classes(result: AnonymizationResult) -> str:
    """The released table's classes, for the run line, when they are not the method's
    groups: groups that released the same values are one class of the file."""
    m = result.metrics
    if not m.classes_differ:
        return ""
    return (f"; the released table has {m.n_classes} classes "
            f"(sizes {m.min_class_size}-{m.max_class_size})")


def print_result(result: AnonymizationResult, output: str) -> None:
    """What a run did, on stdout; its release warnings on stderr."""
    m = result.metrics
    print(f"{result.method}: {m.n_records} records in {m.n_groups} groups "
          f"(sizes {m.min_group_size}-{m.max_group_size}){_classes(result)}, "
          f"IL = {m.il:.4f}%, k' = {m.k_prime:.3f}; wrote {output}")
    if len(result.excluded):
        print(f"{len(result.excluded)} records with missing values released unmasked "
              f"(flag column '{result.flag_column}'); the figures cover the "
              f"{m.n_records} masked records.")
    for line in result.check.lines():
        print(line)
    if result.noise is not None:
        print(noise_text(result))
    print(result.guarantee_text)
    for warning in result.warnings:
        print(f"microagg: warning: {warning.message}", file=sys.stderr)
    if result.measures is not None:
        ms = result.measures
        print(f"IL1 = {ms.il1:.3f} %, DLD = {ms.dld:.3f} %, ID = {ms.id:.3f} %, "
              f"DR = {ms.dr:.3f} %, score = {ms.score:.3f}")
