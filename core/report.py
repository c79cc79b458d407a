"""Turning a result into rows a person reads: the export's summary sheet."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pandas as pd

from core.api import AnonymizationResult
from core.io import write_table
from core.registry import get_method

__all__ = ["summary_frame", "export_result"]


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
        ("Quasi-identifiers", ", ".join(roles.quasi_identifiers)),
        ("Confidential", ", ".join(roles.confidential)),
        ("Identifiers (dropped)", ", ".join(roles.identifiers)),
        ("Strata", ", ".join(roles.strata)),
        ("Attribute blocks", " ; ".join(", ".join(b) for b in result.blocks)),
        ("Guarantee", result.guarantee_text),
        ("Records", m.n_records),
        ("Groups", m.n_groups),
        ("IL = 100·SSE/SST (%)", round(m.il, 6)),
        ("SSE (z-scored)", m.sse),
        ("SST (z-scored)", m.sst),
        ("Smallest group", m.min_group_size),
        ("Mean group size", round(m.mean_group_size, 4)),
        ("Largest group", m.max_group_size),
        ("k' (real anonymity)", round(m.k_prime, 4)),
        ("Verified", "yes" if result.passed else "NO"),
        ("Verifier: smallest equivalence class", v.smallest_class),
        ("Verifier: IL recomputed from the tables (%)", round(v.il, 6)),
    ]
    if result.tcloseness is not None:
        c = result.tcloseness
        rows += [("t-closeness", c.describe())]
        rows += [(f"Largest EMD of '{name}' ({kind} distance)", round(emd, 6))
                 for name, kind, emd in zip(c.attributes, c.kinds, c.max_emd)]
        rows += [(f"Algorithm: {key.replace('_', ' ')}", value)
                 for key, value in result.details.items()]
    rows += [("Strata merge", line) for line in result.strata_merges]
    rows += [("Verifier note", note) for note in v.notes]
    rows += [(f"Groups of size {size}", count)
             for size, count in sorted(m.group_size_counts.items())]
    return pd.DataFrame(rows, columns=["item", "value"]).astype({"value": str})


def export_result(result: AnonymizationResult, path, *, source: str = "") -> Path:
    """Write the masked table (CSV or XLSX with a summary sheet), atomically.

    Refuses a result the verifier did not pass: a weaker table is never exported.
    """
    if not result.passed and get_method(result.method).guarantee != "none":
        from core.errors import MicroaggError
        raise MicroaggError("This result did not pass verification; it cannot be exported.")
    return write_table(path, result.masked,
                       extra_sheets=[("summary", summary_frame(result, source=source))])
