"""Writing a run's outputs and telling the user about it: shared by ``anonymize`` and ``rerun``.

:func:`write_outputs` writes the released table (CSV or XLSX with a summary sheet), and
the JSON summary and HTML report when asked; :func:`print_result` prints the figures,
the verification, the guarantee (stdout) and the release warnings (stderr).
"""

from __future__ import annotations

import json
import sys

from core.io.write import atomic_write
from core.pipeline import AnonymizationResult
from core.report.documents import export_result, write_report

__all__ = ["write_json", "write_outputs", "print_result"]


def write_json(path: str, payload: dict) -> None:
    """Write ``payload`` as indented JSON, atomically (numpy scalars as numbers)."""
    def write(temporary):
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2, default=_json_default)
            handle.write("\n")
    atomic_write(path, write)


def _json_default(value):
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def write_outputs(result: AnonymizationResult, output: str, *, source: str,
                  summary_json: str | None = None, report: str | None = None) -> None:
    """The released table to ``output``; the summary and report where asked."""
    export_result(result, output, source=source)
    if summary_json:
        write_json(summary_json, result.summary())
    if report:
        write_report(result, report, source=source)


def print_result(result: AnonymizationResult, output: str) -> None:
    """What a run did, on stdout; its release warnings on stderr."""
    m = result.metrics
    print(f"{result.method}: {m.n_records} records in {m.n_groups} groups "
          f"(sizes {m.min_group_size}-{m.max_group_size}), IL = {m.il:.4f}%, "
          f"k' = {m.k_prime:.3f}; wrote {output}")
    if len(result.excluded):
        print(f"{len(result.excluded)} records with missing values released unmasked "
              f"(flag column '{result.flag_column}'); the figures cover the "
              f"{m.n_records} masked records.")
    for line in result.check.lines():
        print(line)
    if result.noise is not None:
        print(result.noise.describe())
    print(result.guarantee_text)
    for warning in result.warnings:
        print(f"microagg: warning: {warning.message}", file=sys.stderr)
    if result.measures is not None:
        ms = result.measures
        print(f"IL1 = {ms.il1:.3f} %, DLD = {ms.dld:.3f} %, ID = {ms.id:.3f} %, "
              f"DR = {ms.dr:.3f} %, score = {ms.score:.3f}")
