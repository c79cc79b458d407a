"""The summary sheet: every parameter, figure and finding of a result as (item, value) rows."""

from __future__ import annotations

import datetime as _dt

import numpy as np
import pandas as pd

from core.methods.registry import get_method
from core.pipeline import AnonymizationResult
from core.report.provenance import software_version

__all__ = ["summary_frame", "option_text", "distance_text", "classes_of", "noise_text",
           "unmasked_count"]


def summary_frame(result: AnonymizationResult, *, source: str = "") -> pd.DataFrame:
    """Parameters, metrics and verification as a two-column (item, value) table."""
    method = get_method(result.method)
    m, v, roles = result.metrics, result.verification, result.roles
    rows: list[tuple[str, object]] = [
        ("Method", f"{method.label} ({method.name})"),
        ("Reference", method.reference),
        ("Source file", source),
        ("Created", _dt.datetime.now().isoformat(timespec="seconds")),
        ("Software version", f"MicroAgg Desktop {software_version()}"),
    ]
    rows += [(f"Parameter {name}", value) for name, value in result.parameters.items()]
    rows += [
        ("Quasi-identifiers", ", ".join(
            f"{c} ({result.levels.get(c, 'numeric')})" for c in roles.quasi_identifiers)),
    ]
    rows += [(f"Order of ordinal '{c}' (lowest first)", " < ".join(map(str, order)))
             for c, order in result.orders.items()]
    rows += [
        ("Confidential", ", ".join(f"{c} ({distance_text(result, c)})"
                                   for c in roles.confidential)),
        ("Identifiers (dropped)", ", ".join(roles.identifiers)),
        ("Strata", ", ".join(roles.strata)),
        ("Attribute blocks", blocks_text(result)),
        ("Guarantee", result.guarantee_text),
        *_records_rows(result),
        ("Groups", m.n_groups),
        ("IL = 100·SSE/SST (%)", round(m.il, 6)),
        ("SSE (z-scored; mixed distance for categories)", m.sse),
        ("SST (z-scored; n per attribute)", m.sst),
        ("Smallest group", m.min_group_size),
        ("Mean group size", round(m.mean_group_size, 4)),
        ("Largest group", m.max_group_size),
        (f"Classes {classes_of(result)} (distinct quasi-identifier values)", m.n_classes),
        ("Smallest class", m.min_class_size),
        ("Largest class", m.max_class_size),
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
        rows += [("Differential privacy noise", noise_text(result))]
        rows += [(f"Laplace scale of '{name}'", value)
                 for name, value in result.noise.summary().get("laplace_scale", {}).items()]
        rows += [("Noise seed", result.noise.seed_text)]
    rows += [(f"Run option: {option_label(name)}", option_text(value))
             for name, value in (getattr(result, "options", None) or {}).items()
             if name not in SECRET_OPTIONS]
    excluded = getattr(result, "excluded", None)
    if excluded is not None and len(excluded):
        rows += [("Records released unmasked (missing values)", len(excluded)),
                 ("Flag column of the unmasked records", result.flag_column)]
    rows += [("Warning", w.message) for w in result.warnings]
    rows += [("Strata merge", line) for line in result.strata_merges]
    rows += [("Verifier note", note) for note in v.notes]
    rows += [(f"Groups of size {size}", count)
             for size, count in sorted(m.group_size_counts.items())]
    rows += [(f"Classes of size {size}", count)
             for size, count in sorted(m.class_size_counts.items())]
    # Numbers stay numbers (numeric cells in the XLSX summary sheet); the rest is text.
    return pd.DataFrame([(item, _cell(value)) for item, value in rows],
                        columns=["item", "value"], dtype=object)


def _cell(value):
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return value.item() if hasattr(value, "item") else value
    return "" if value is None else str(value)


SECRET_OPTIONS = frozenset({"noise_seed"})
"""Run options no report or summary states: whoever knows the noise's seed can
subtract the noise (:mod:`core.privacy.noise`); the "Noise seed" row says where it
came from instead."""

OPTION_LABELS = {
    "blocks": "Attribute blocks asked for",
    "merge_small_strata": "Merge strata smaller than k",
    "intruder": "Intruder scenario for the risk measures",
    "known": "Attributes the intruder knows",
    "seed": "Random seed",
    "dp_epsilon": "Differential privacy ε",
    "confidential_bounds": "Bounds of the confidential attributes",
    "missing": "Records with missing values",
}


def blocks_text(result) -> str:
    """A run's attribute blocks in words: "none" unless it masked blocks on their own.

    ``result.blocks`` always holds the blocks used: one block of every quasi-identifier
    for a run without blocks, one block per attribute for a per-attribute method. Listing
    their columns would read as if blocks had been asked for, so those say so in words.
    """
    if getattr(get_method(result.method), "scope", "") == "per-attribute":
        return "none (the method masks each quasi-identifier on its own)"
    if len(result.blocks) <= 1:
        return "none"
    return " ; ".join(", ".join(b) for b in result.blocks)


def option_label(name: str) -> str:
    """The words a report uses for the run option ``name``."""
    return OPTION_LABELS.get(name, name.replace("_", " ").capitalize())


def option_text(value) -> str:
    """A run option as text: "default" for None, sequences joined."""
    if value is None:
        return "not used"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {option_text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, (list, tuple)) for v in value):
        return " ; ".join(option_text(v) for v in value)
    if isinstance(value, (list, tuple)):
        return ", ".join(option_text(v) for v in value)
    return str(value)


def distance_text(result, column: str) -> str:
    """How the EMD of a confidential column of ``result`` is measured: by the distance
    declared for it, or by the default that the t-closeness methods, the verifier and
    the measures take of its released values (ordered for numbers, equal otherwise;
    :meth:`core.privacy.attributes.TCloseAttribute.from_values`)."""
    declared = (result.roles.confidential_kinds or {}).get(column)
    masked = result.masked
    kind = declared or ("numerical" if column in masked.columns
                        and pd.api.types.is_numeric_dtype(masked[column]) else "nominal")
    text = ("numeric, ordered distance" if kind == "numerical" else
            "nominal, equal distance")
    return text + (", declared" if declared else "")


def unmasked_count(result) -> int:
    """Records released unmasked beside the masked ones (missing values), 0 if none."""
    excluded = getattr(result, "excluded", None)
    return 0 if excluded is None else len(excluded)


def _records_rows(result) -> list[tuple[str, object]]:
    """The records the figures describe: all of the released table's, or, with records
    released unmasked (missing values), the masked ones beside the table's total."""
    n, unmasked = result.metrics.n_records, unmasked_count(result)
    if not unmasked:
        return [("Records", n)]
    return [("Records in the released table", n + unmasked),
            ("Records masked (the figures below describe these only)", n)]


def classes_of(result) -> str:
    """Whose classes the figures count: the released table's, or its masked records'
    when some were released unmasked (they are not counted)."""
    return ("of the masked records" if unmasked_count(result) else
            "in the released table")


def noise_text(result) -> str:
    """The noise paragraph, saying which records carry no noise."""
    text = result.noise.describe()
    unmasked = unmasked_count(result)
    if unmasked:
        text += (f" The {unmasked:,} record(s) released unmasked (missing values) carry "
                 "their original values of these attributes, without noise: the "
                 "differential privacy above does not cover them.")
    return text
