"""The report's page: what a release board asks for, in one self-contained HTML page.

Sections, in order: the verdict in plain words; the warnings ("Read before
publishing"); the records released unmasked; the input (file name, SHA-256, software
version, date); the roles of every column; the method, its parameters and paper; the
run options; the verification; the measures, each with its meaning; the figures
(:mod:`core.report.plots`); every figure of the export's summary sheet.

The page uses only the HTML and CSS that Qt's ``QTextDocument`` renders, so the PDF
writer (``microagg_desktop.pdf_report``) prints the same page.
"""

from __future__ import annotations

import base64
import datetime as _dt
import io
from html import escape
from pathlib import Path

import pandas as pd

from core.errors import MicroaggError
from core.methods.registry import get_method
from core.pipeline import AnonymizationResult
from core.progress import TaskState
from core.report import plots as _plots
from core.report.meanings import meaning
from core.report.provenance import file_sha256, software_version
from core.report.summary import (SECRET_OPTIONS, blocks_text, classes_of, distance_text,
                                 noise_text, option_label, option_text, summary_frame,
                                 unmasked_count)

__all__ = ["report_html", "report_figures"]

_STYLE = """
body { font-family: sans-serif; color: #222; }
h1 { font-size: 16pt; } h2 { font-size: 13pt; margin-top: 18px; }
table { border-collapse: collapse; margin-bottom: 8px; }
th, td { border: 1px solid #bbb; padding: 3px 6px; vertical-align: top; }
th { text-align: left; background: #eeeeee; font-weight: normal; }
.passed { color: #1b5e20; font-weight: bold; } .failed { color: #b71c1c; font-weight: bold; }
.nonguarantee { color: #7a4f01; font-weight: bold; }
.warning { color: #8a4b00; } .note { color: #555; font-style: italic; }
.mono { font-family: monospace; }
"""

_IMAGE_WIDTH = 640  # pixels on screen; the PNGs are drawn at about twice that
_DPI = 150


def _cells(values, tag="td") -> str:
    return "".join(f"<{tag}>{escape(str(v))}</{tag}>" for v in values)


def _table(rows, header=None) -> str:
    head = f"<tr>{_cells(header, 'th')}</tr>\n" if header else ""
    body = "".join(f"<tr><th>{escape(str(r[0]))}</th>{_cells(r[1:])}</tr>\n" for r in rows)
    return f"<table>\n{head}{body}</table>\n"


def report_figures(result: AnonymizationResult, original: pd.DataFrame | None):
    """The report's figures as (file name, caption, builder) triples, in order.

    ``builder()`` returns the :class:`~matplotlib.figure.Figure`; the figures that need
    the original table are left out without one.
    """
    out = [("group-sizes.png", "Group sizes, with k marked",
            lambda: _plots.group_size_figure(result))]
    if result.roles.confidential or getattr(result, "tcloseness", None) is not None:
        out.append(("closeness.png", "Closeness of every class to the whole table",
                    lambda: _plots.closeness_figure(result)))
    if original is not None:
        out.append(("changes.png", "Change in means, variances and correlations",
                    lambda: _plots.changes_figure(result, original)))
        numeric = [c for c in result.roles.quasi_identifiers
                   if _plots.numeric_view(result, original, c) is not None]
        if len(numeric) >= 2:
            x, y = numeric[:2]
            out.append(("scatter.png", f"Original against released: '{x}' and '{y}'",
                        lambda: _plots.scatter_figure(result, original, x, y)))
    return out


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI)
    return buffer.getvalue()


def _verdict(result: AnonymizationResult) -> str:
    lines = "".join(f"<li>{escape(line)}</li>" for line in result.check.lines())
    findings = f"<ul>{lines}</ul>\n" if lines else ""
    if not result.guarantee.record_level:
        return (f"<p class=\"nonguarantee\">No privacy guarantee: this method does not "
                f"promise one, so the verifier only measured the release. "
                f"{escape(result.guarantee_text)}</p>\n{findings}")
    if result.passed:
        read = ("the released table" if not unmasked_count(result) else
                "the masked records of the released table")
        return (f"<p class=\"passed\">Verification passed: the independent verifier re-read "
                f"{read} and confirmed the guarantee. "
                f"{escape(result.guarantee_text)}</p>\n{findings}")
    notes = " ".join(result.verification.notes)
    return (f"<p class=\"failed\">Verification FAILED: the released table does NOT meet the "
            f"{escape(str(result.guarantee))} guarantee its method promises. Do not publish "
            f"it. {escape(notes)}</p>\n{findings}")


def _input_rows(result, source, input_path, input_sha256, run=None) -> list[tuple[str, str]]:
    if input_sha256 is None and input_path is not None:
        input_sha256 = file_sha256(input_path)
    name = source or (Path(input_path).name if input_path is not None else "")
    return [("Input file", name or "not recorded"),
            *([("Run", run)] if run else []),
            ("Input SHA-256", input_sha256 or "not recorded (no input file given)"),
            ("Records released", f"{len(result.masked):,}"),
            ("Software", f"MicroAgg Desktop {software_version()}"),
            ("Report date", _dt.datetime.now().isoformat(timespec="seconds"))]


def _roles_rows(result, original) -> list[tuple[str, str, str, str]]:
    roles = result.roles
    columns = list(original.columns) if original is not None else list(dict.fromkeys(
        [*roles.identifiers, *result.masked.columns]))
    rows = []
    for column in map(str, columns):
        role = roles.role_of(column).value
        if column in roles.strata:
            role += " (stratum)"
        level, order = "", ""
        if column in roles.quasi_identifiers:
            level = result.levels.get(column, "numeric")
            order = " < ".join(map(str, result.orders.get(column, ())))
        elif column in roles.confidential:
            level = distance_text(result, column)
        rows.append((column, role, level, order))
    return rows


def _method_rows(result) -> tuple[list, list]:
    method = get_method(result.method)
    helps = {p.name: p.help for p in getattr(method, "parameters", ())}
    head = [("Method", f"{method.label} ({method.name})"), ("Reference", method.reference),
            ("Guarantee", result.guarantee_text)]
    parameters = [(name, value, helps.get(name, ""))
                  for name, value in result.parameters.items()]
    return head, parameters


def _option_rows(result) -> list[tuple[str, str]]:
    options = dict(getattr(result, "options", None) or {})
    rows = [("Attribute blocks", blocks_text(result)),
            ("Strata", ", ".join(result.roles.strata) or "none")]
    options.pop("blocks", None)  # the blocks used are the row above
    rows += [(option_label(name), option_text(value)) for name, value in options.items()
             if name not in SECRET_OPTIONS]
    if result.noise is not None:
        rows.append(("Differential privacy noise", noise_text(result)))
        rows.append(("Noise seed", result.noise.seed_text))
    rows += [("Strata merge", line) for line in result.strata_merges]
    return rows


def _measure_rows(result) -> list[tuple[str, str, str]]:
    m = result.metrics
    rows = [("IL", f"{m.il:.4f} %", meaning("il")),
            ("SSE / SST", f"{m.sse:.6g} / {m.sst:.6g}", meaning("sse")),
            ("Group size min / mean / max",
             f"{m.min_group_size} / {m.mean_group_size:.4g} / {m.max_group_size}",
             meaning("sizes")),
            (f"Classes {classes_of(result)}, number and size min / max",
             f"{m.n_classes:,} ({m.min_class_size} / {m.max_class_size})", meaning("classes")),
            ("k′", f"{m.k_prime:.4f}", meaning("k_prime"))]
    ms = result.measures
    if ms is not None:
        rows += [("IL1", f"{ms.il1:.4f} %", meaning("il1")),
                 ("DLD", f"{ms.dld:.4f} %", meaning("dld")),
                 (f"ID (±{ms.interval:g} % of ranks)", f"{ms.id:.4f} %", meaning("id")),
                 ("DR", f"{ms.dr:.4f} %", meaning("dr")),
                 ("Score", f"{ms.score:.4f}", meaning("score"))]
        rows += [(f"EMD of '{name}' (largest class)", f"{value:.4f}", meaning("emd"))
                 for name, value in ms.max_emd.items()]
        rows += [("Record risk, largest / mean",
                  f"{float(ms.record_risk.max()):.4g} / {float(ms.record_risk.mean()):.4g}",
                  meaning("risk")),
                 ("Unique records", f"{ms.unique_records:,}", meaning("unique"))]
    return rows


def _measures_scope(result) -> str:
    """A note above the measures when they leave out records released unmasked."""
    unmasked = unmasked_count(result)
    if not unmasked:
        return ""
    return (f"<p class=\"warning\">These figures describe the "
            f"{result.metrics.n_records:,} masked records only; the {unmasked:,} "
            f"records released unmasked are not counted.</p>\n")


def _unmasked(result) -> str:
    unmasked = unmasked_count(result)
    if not unmasked:
        return ""
    flag = getattr(result, "flag_column", None) or "unmasked_missing"
    return (f"<h2 class=\"warning\">Records released unmasked</h2>\n<p class=\"warning\">"
            f"{unmasked:,} records with missing values were released unmasked, flagged "
            f"1 in the column '{escape(str(flag))}'. They are not protected, and the "
            f"verification and the measures do not count them.</p>\n")


def report_html(result: AnonymizationResult, *, source: str = "", input_path=None,
                input_sha256: str | None = None, original: pd.DataFrame | None = None,
                plots: bool = True, state: TaskState | None = None,
                images: str = "inline", image_width: int = _IMAGE_WIDTH,
                run: str | None = None):
    """The report page of ``result``.

    Parameters are those of :func:`core.report.documents.write_report`, and:

    images : {"inline", "resources"}
        ``"inline"``: figures as ``data:`` URIs, one self-contained page. ``"resources"``:
        figures referred to by file name (``<img src="group-sizes.png">``), for a writer
        that supplies them itself (Qt's ``QTextDocument.addResource``).
    image_width : int
        Width of every figure on the page, in pixels (points for the PDF writer).
    run : str, optional
        Which run of the window's history this is ("#3 MDAV k=5"), so the report can be
        tied to the table exported from the same run.

    Returns
    -------
    str, or (str, dict of str to bytes)
        The page; with ``"resources"`` also the PNG bytes of every figure by name.
    """
    if images not in ("inline", "resources"):
        raise MicroaggError(f"images must be 'inline' or 'resources', not {images!r}.")
    state = state or TaskState()
    state.step(0.0, "Writing the report…")
    source = source or (Path(input_path).name if input_path is not None else "")
    title = f"MicroAgg Desktop report: {escape(source or result.method)}"
    head, parameters = _method_rows(result)
    parts = [f"<h1>{title}</h1>\n", _verdict(result)]
    if result.warnings:
        parts.append("<h2 class=\"warning\">Read before publishing</h2>\n<ul class=\"warning\">"
                     + "".join(f"<li>{escape(w.message)}</li>" for w in result.warnings)
                     + "</ul>\n")
    parts.append(_unmasked(result))
    parts += ["<h2>Input</h2>\n", _table(_input_rows(result, source, input_path,
                                                     input_sha256, run)),
              "<h2>Roles</h2>\n",
              _table(_roles_rows(result, original), ("Column", "Role", "Level",
                                                     "Order (lowest first)")),
              "<h2>Method</h2>\n", _table(head),
              _table(parameters, ("Parameter", "Value", "Meaning")) if parameters else "",
              "<h2>Run options</h2>\n", _table(_option_rows(result)),
              "<h2>Verification</h2>\n",
              _table([("Verdict", "passed" if result.passed else "FAILED")]
                     + [("Finding", line) for line in result.check.lines()]
                     + [("Verifier note", n) for n in result.verification.notes]),
              "<h2>Measures</h2>\n", _measures_scope(result),
              _table(_measure_rows(result), ("Measure", "Value", "Meaning"))]
    resources: dict[str, bytes] = {}
    if plots:
        parts.append("<h2>Figures</h2>\n")
        if original is None:
            parts.append("<p class=\"note\">The original table was not given, so the "
                         "figures that compare the release with it (changes, original "
                         "against released) are left out.</p>\n")
        figures = report_figures(result, original)
        for number, (name, caption, build) in enumerate(figures):
            state.step(0.05 + 0.9 * number / len(figures), f"Drawing {caption.lower()}…")
            png = _png(build())
            resources[name] = png
            source_attr = name if images == "resources" else \
                "data:image/png;base64," + base64.b64encode(png).decode("ascii")
            parts.append(f"<p><img src=\"{source_attr}\" width=\"{int(image_width)}\" "
                         f"alt=\"{escape(caption)}\"><br>{escape(caption)}</p>\n")
    rows = summary_frame(result, source=source).itertuples(index=False)
    parts += ["<h2>Every figure (as in the export's summary sheet)</h2>\n", _table(rows)]
    state.step(1.0, "Report written")
    page = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title>"
            f"<style>{_STYLE}</style></head>\n<body>\n" + "".join(parts)
            + "</body></html>\n")
    return (page, resources) if images == "resources" else page
