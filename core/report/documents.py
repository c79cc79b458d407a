"""Turning a result into rows a person reads: the export's summary sheet."""

from __future__ import annotations

import datetime as _dt
import html
from pathlib import Path

import numpy as np
import pandas as pd

from core.pipeline import AnonymizationResult
from core.errors import MicroaggError
from core.io.write import atomic_write, write_table
from core.methods.registry import get_method

__all__ = ["summary_frame", "export_result", "write_report"]


def summary_frame(result: AnonymizationResult, *, source: str = "") -> pd.DataFrame:
    """Parameters, metrics and verification as a two-column (item, value) table."""
    method = get_method(result.method)
    m, v, roles = result.metrics, result.verification, result.roles
    rows: list[tuple[str, object]] = [
        ("Method", f"{method.label} ({method.name})"),
        ("Reference", method.reference),
        ("Source file", source),
        ("Created", _dt.datetime.now().isoformat(timespec="seconds")),
    ]
    rows += [(f"Parameter {name}", value) for name, value in result.parameters.items()]
    rows += [
        ("Quasi-identifiers", ", ".join(
            f"{c} ({result.levels.get(c, 'numeric')})" for c in roles.quasi_identifiers)),
    ]
    rows += [(f"Order of ordinal '{c}' (lowest first)", " < ".join(map(str, order)))
             for c, order in result.orders.items()]
    rows += [
        ("Confidential", ", ".join(roles.confidential)),
        ("Identifiers (dropped)", ", ".join(roles.identifiers)),
        ("Strata", ", ".join(roles.strata)),
        ("Attribute blocks", " ; ".join(", ".join(b) for b in result.blocks)),
        ("Guarantee", result.guarantee_text),
        ("Records", m.n_records),
        ("Groups", m.n_groups),
        ("IL = 100·SSE/SST (%)", round(m.il, 6)),
        ("SSE (z-scored; mixed distance for categories)", m.sse),
        ("SST (z-scored; n per attribute)", m.sst),
        ("Smallest group", m.min_group_size),
        ("Mean group size", round(m.mean_group_size, 4)),
        ("Largest group", m.max_group_size),
        ("k' (real anonymity)", round(m.k_prime, 4)),
        ("Verified", "yes" if result.passed else "NO"),
        ("Verifier: smallest equivalence class", v.smallest_class),
        ("Verifier: IL recomputed from the tables (%)", round(v.il, 6)),
    ]
    if result.measures is not None:
        ms = result.measures
        rows += [
            ("IL1 (means of data, covariances, variances, correlations; %)", round(ms.il1, 6)),
            ("DLD: distance-based record linkage (%)", round(ms.dld, 6)),
            (f"ID: interval disclosure, ±{ms.interval:g} % of ranks (%)", round(ms.id, 6)),
            ("DR = 0.5·DLD + 0.5·ID (%)", round(ms.dr, 6)),
            ("Score = 0.5·IL1 + 0.5·DR (lower is better)", round(ms.score, 6)),
            ("Intruder scenarios", len(ms.scenarios)),
            ("Largest per-record risk (1 / class size)", round(float(ms.record_risk.max()), 6)),
            ("Mean per-record risk", round(float(ms.record_risk.mean()), 6)),
        ]
        rows += [(f"Largest class EMD of '{name}'", round(value, 6))
                 for name, value in ms.max_emd.items()]
        rows += [(f"Scenario {number}: intruder knows {', '.join(sc.known)}",
                  f"k' = {sc.k_prime:.4g}, DLD = {sc.dld:.4g} %, ID = {sc.id:.4g} %, "
                  f"DR = {sc.dr:.4g} %")
                 for number, sc in enumerate(ms.scenarios, start=1)]
    closeness = result.check.report_rows()
    rows += closeness
    if closeness:
        rows += [(f"Algorithm: {key.replace('_', ' ')}", value)
                 for key, value in result.details.items()]
    if result.noise is not None:
        rows += [("Differential privacy noise", result.noise.describe())]
        rows += [(f"Laplace scale of '{name}'", value)
                 for name, value in result.noise.summary().get("laplace_scale", {}).items()]
        rows += [("Noise seed", result.noise.seed)]
    rows += [("Warning", w.message) for w in result.warnings]
    rows += [("Strata merge", line) for line in result.strata_merges]
    rows += [("Verifier note", note) for note in v.notes]
    rows += [(f"Groups of size {size}", count)
             for size, count in sorted(m.group_size_counts.items())]
    # Numbers stay numbers (numeric cells in the XLSX summary sheet); the rest is text.
    return pd.DataFrame([(item, _cell(value)) for item, value in rows],
                        columns=["item", "value"], dtype=object)


def _cell(value):
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return value.item() if hasattr(value, "item") else value
    return "" if value is None else str(value)


def export_result(result: AnonymizationResult, path, *, source: str = "") -> Path:
    """Write the masked table (CSV or XLSX with a summary sheet), atomically.

    Refuses a result the verifier did not pass: a weaker table is never exported.
    """
    if not result.passed and get_method(result.method).guarantee.record_level:
        raise MicroaggError("This result did not pass verification; it cannot be exported.")
    return write_table(path, result.masked,
                       extra_sheets=[("summary", summary_frame(result, source=source))])


_REPORT_STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
table { border-collapse: collapse; } th, td { border: 1px solid #ccc; padding: 4px 8px; }
th { text-align: left; background: #f3f3f3; font-weight: normal; }
.passed { color: #1b5e20; font-weight: bold; } .failed { color: #b71c1c; font-weight: bold; }
.warning { color: #8a4b00; }
"""


def write_report(result: AnonymizationResult, path, *, source: str = "") -> Path:
    """Write a self-contained HTML report of ``result`` (no external files), atomically.

    It holds the guarantee in plain words, the verifier's verdict, and every row of
    :func:`summary_frame` (parameters, metrics, verification, group sizes).
    """
    summary = summary_frame(result, source=source)
    verdict = ("passed" if result.passed else "failed")
    rows = "\n".join(
        f"<tr><th>{html.escape(str(item))}</th><td>{html.escape(str(value))}</td></tr>"
        for item, value in summary.itertuples(index=False))
    title = f"MicroAgg Desktop report: {html.escape(source or result.method)}"
    page = (
        f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title>"
        f"<style>{_REPORT_STYLE}</style></head>\n<body><h1>{title}</h1>\n"
        f"<p class=\"{verdict}\">Verification {verdict}: "
        f"{html.escape(result.verification.describe())}</p>\n"
        f"<p>{html.escape(result.guarantee_text)}</p>\n"
        + (f"<h2 class=\"warning\">Read before publishing</h2>\n<ul class=\"warning\">"
           + "".join(f"<li>{html.escape(w.message)}</li>" for w in result.warnings)
           + "</ul>\n" if result.warnings else "") +
        f"<h2>Parameters, metrics and verification</h2>\n<table>\n{rows}\n</table>"
        f"</body></html>\n")

    def write(temporary):
        Path(temporary).write_text(page, encoding="utf-8")

    return atomic_write(path, write)
