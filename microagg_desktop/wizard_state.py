"""What the method wizard shows, computed from the registry alone. No Qt.

Methods are grouped by what they guarantee (:class:`core.verify.guarantees.Guarantee`);
the chosen method's guarantee is explained in plain words for a release board; the
parameter values carry over from one method to the next where they mean the same thing;
and a *What will happen* list says, for the table at hand, what the run will do.

Vocabulary
----------
parameter key
    ``(name, label)`` of a registry parameter: two methods' parameters with the same
    key mean the same thing (MDAV's ``k`` and CBFS's ``k``), while Mic1D-k's
    ``k (values per run)`` or the multiplicative ``t`` of t-closeness by buckets do not.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.data.memory import run_memory_limit, run_peak_bytes
from core.data.roles import Level, RoleSpec
from core.methods.contract import Method, Parameter
from core.methods.tfirst import tfirst_cluster_size
from core.verify.guarantees import GUARANTEES, Guarantee
from microagg_desktop.estimate import QuasiIdentifiers, estimate_parts, estimate_text

__all__ = ["MethodGroup", "group_methods", "parameter_key", "carry_values",
           "parameter_tooltip", "guarantee_text", "what_will_happen", "run_seconds",
           "run_parts", "quasi_identifiers", "memory_text", "GROUP_SIZE_RULES"]


@dataclass(frozen=True)
class MethodGroup:
    """The methods sharing one guarantee, in registry order."""

    guarantee: Guarantee
    methods: tuple[Method, ...]

    @property
    def title(self) -> str:
        label = self.guarantee.label or str(self.guarantee)
        return label[:1].upper() + label[1:]


def group_methods(registered: Iterable[Method]) -> list[MethodGroup]:
    """The methods grouped by guarantee: the known guarantees in their order, then others.

    A method registered later appears in its guarantee's group; a guarantee no group
    knows gets a group of its own after the others.
    """
    registered = list(registered)
    order: list[Guarantee] = list(GUARANTEES)
    for method in registered:
        if method.guarantee not in order:
            order.append(method.guarantee)
    groups = []
    for guarantee in order:
        members = tuple(m for m in registered if m.guarantee == guarantee)
        if members:
            groups.append(MethodGroup(guarantee, members))
    return groups


def parameter_key(parameter: Parameter) -> tuple[str, str]:
    """``(name, label)``: what makes two methods' parameters the same parameter."""
    return (parameter.name, parameter.label or parameter.name)


def carry_values(spec: Method, remembered: Mapping[tuple[str, str], Any]
                 ) -> tuple[dict[str, Any], list[str]]:
    """The starting values of ``spec``'s parameters, and notes on those not carried.

    A remembered value (one the user set, under :func:`parameter_key`) is kept when the
    parameter's constraint allows it; otherwise the parameter starts at its default and
    a note says why. A parameter with the same name but another meaning starts at its
    default with a note, so a value is never silently read in another sense.

    Examples
    --------
    >>> from core.methods.registry import get_method
    >>> values, notes = carry_values(get_method("cbfs"), {("k", "k (minimum group size)"): 7})
    >>> values["k"], notes
    (7, [])
    >>> values, notes = carry_values(get_method("gsms"), {("growth", "Group growth"): "nc"})
    >>> values["growth"], notes[0][:39]
    ('nn', "'growth' = 'nc' is not allowed by GSMS ")
    """
    values: dict[str, Any] = {}
    notes: list[str] = []
    by_name = {name: value for (name, _), value in remembered.items()}
    for parameter in spec.parameters:
        key = parameter_key(parameter)
        values[parameter.name] = parameter.default
        if key in remembered:
            value = remembered[key]
            if parameter.constraint.accepts(value):
                values[parameter.name] = value
            else:
                notes.append(f"'{parameter.name}' = {value!r} is not allowed by "
                             f"{spec.label} ({parameter.constraint.describe()}); it is "
                             f"back to its default, {parameter.default!r}.")
        elif parameter.name in by_name and by_name[parameter.name] != parameter.default:
            notes.append(f"'{parameter.name}' means something else for {spec.label} "
                         f"({parameter.label or parameter.name}); it starts at its "
                         f"default, {parameter.default!r}.")
    return values, notes


def parameter_tooltip(parameter: Parameter) -> str:
    """The parameter's meaning and its allowed range, for its widget and label."""
    meaning = parameter.help or parameter.label or parameter.name
    return (f"{parameter.label or parameter.name}: {meaning}\n"
            f"Allowed: {parameter.constraint.describe()}. Default: {parameter.default!r}.")


def _number(value: Any, default: float | None) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def guarantee_text(spec: Method, values: Mapping[str, Any]) -> str:
    """What the method promises, in words a release board reads without the paper."""
    guarantee = spec.guarantee
    k = _number(values.get("k"), None)
    t = _number(values.get("t"), None)
    if not guarantee.record_level:
        return ("No record-level promise. This method does not put whole records into "
                "groups, so a record may still be the only one with its combination of "
                "quasi-identifier values. After the run, the verifier reports the real "
                "anonymity k′ and the smallest group of identical records: read those "
                "figures before deciding to release.")
    kk = f"{int(k)}" if k is not None else "k"
    others = f"{int(k) - 1}" if k is not None else "k − 1"
    base = (f"Every released record shares its quasi-identifier values with at least "
            f"{others} other records (k = {kk}), so an intruder who knows a person's "
            f"quasi-identifiers finds at least {kk} records that match and cannot tell "
            "which one is that person's.")
    tt = f"{t:g}" if t is not None else "t"
    if guarantee.t_kind == "emd":
        return (base + f" In addition, within every group the distribution of each "
                f"confidential attribute is within earth mover's distance t = {tt} of its "
                "distribution in the whole table (0 would mean identical, 1 as different "
                "as possible): seeing a person's group tells an intruder little more "
                "about their confidential values than the whole table does.")
    if guarantee.t_kind == "multiplicative":
        epsilon = f" = {2 * math.log(t):.3g}" if t is not None and t > 1 else ""
        return (base + f" In addition, in every group each range (bucket) of the "
                f"confidential attribute is at most {tt} times and at least 1/{tt} times "
                "as frequent as in the whole table, which amounts to ε-differential "
                f"privacy of the confidential buckets with ε = 2·ln t{epsilon}.")
    return (base + " The confidential attributes are released as they are: if all the "
                   "records of a group share one confidential value, that value is "
                   "disclosed (k-anonymity alone does not prevent it).")


GROUP_SIZE_RULES = {"tc-tfirst": lambda n, k, t: tfirst_cluster_size(n, k, t)}
"""Methods whose group size follows from n, k and t by a published rule.

The registry does not (yet) let a method declare its group size, so the one such rule
is listed here, by method name.
"""


def what_will_happen(spec: Method, values: Mapping[str, Any], *, n_records: int = 0,
                     roles: RoleSpec | None = None, blocks: Sequence | str | None = None,
                     noise: Mapping[str, Any] | None = None,
                     attributes: QuasiIdentifiers | None = None,
                     block_size: int | None = None) -> list[str]:
    """Plain sentences on what a run of ``spec`` will do with this table and roles.

    Parameters
    ----------
    spec : Method
    values : mapping
        The parameter values as entered (possibly not yet valid).
    n_records : int
        Records in the table (0: no table yet).
    roles : RoleSpec, optional
    blocks : str or sequence, optional
        Attribute blocks as typed ("A,B;C") or as a sequence of column groups.
    noise : mapping, optional
        The differential-privacy options (``dp_epsilon``...), if chosen.
    attributes : QuasiIdentifiers, optional
        What the quasi-identifiers are (:func:`quasi_identifiers`), for the time
        estimate; without it each counts as one numeric attribute.
    block_size : int, optional
        Records per block of a run blocked on a Dask cluster (the memory then counts
        a block, and nothing is refused).
    """
    lines: list[str] = []
    k = _number(values.get("k"), None)
    t = _number(values.get("t"), None)
    guarantee = spec.guarantee
    qis = tuple(roles.quasi_identifiers) if roles is not None else ()
    confidential = tuple(roles.confidential) if roles is not None else ()
    if n_records <= 0:
        lines.append("Open a table to see what the run will do with it.")
    elif roles is not None:
        lines.append(f"{n_records:,} records; {len(qis)} quasi-identifier(s) "
                     f"({_names(qis) or 'none chosen yet'}); {len(confidential)} "
                     "confidential attribute(s).")
        if not qis:
            lines.append("Choose at least one quasi-identifier on the Roles tab.")
    if spec.needs_confidential and roles is not None and not confidential:
        lines.append(f"{spec.label} needs at least one confidential attribute: choose "
                     "one on the Roles tab.")
    record_level = guarantee.record_level
    if record_level and k is not None and n_records > 0:
        if k > n_records:
            lines.append(f"k = {int(k)} is more than the {n_records:,} records: the run "
                         "will stop. Lower k.")
        elif spec.name in GROUP_SIZE_RULES and t is not None and 0 < t <= 1:
            size = GROUP_SIZE_RULES[spec.name](n_records, int(k), t)
            lines.append(f"Groups of {size} records: the size this method derives from "
                         f"n = {n_records:,}, k = {int(k)} and t = {t:g}. Groups still "
                         "farther than t from the whole table are then merged, so some "
                         "may be larger.")
        else:
            lines.append(f"About {max(1, n_records // int(k)):,} groups of at least "
                         f"{int(k)} records each.")
    if guarantee.t_kind == "emd" and spec.name not in GROUP_SIZE_RULES:
        lines.append("To reach t, groups whose confidential distribution is too far from "
                     "the whole table's are merged, so groups may grow well beyond k "
                     "(the smaller t, the larger the groups).")
    if guarantee.t_kind == "emd" and confidential:
        declared = [c for c, kind in (roles.confidential_kinds or {}).items()
                    if kind == "nominal"]
        lines.append("t is measured on each confidential attribute by the ordered distance "
                     "for numbers and the equal distance for text and for codes declared "
                     "Nominal on the Roles tab"
                     + (f" (declared: {_names(declared)})." if declared else
                        " (none declared)."))
    if guarantee.t_kind == "multiplicative":
        lines.append("The confidential attribute is released as its bucket (a range), "
                     "not its exact value; groups may be larger than k.")
    if not record_level:
        lines.append(f"{spec.label} gives no record-level k-anonymity: records are not "
                     "grouped as a whole, and the verifier only measures k′.")
    block_count = _block_count(blocks)
    if record_level and block_count > 1 and spec.scope == "multivariate":
        lines.append(f"With {block_count} attribute blocks, k-anonymity holds within each "
                     "block only, not for the combination of all quasi-identifiers.")
    if roles is not None and roles.strata and spec.scope != "whole-table":
        lines.append(f"Records are grouped only with records of the same "
                     f"{_names(roles.strata)}.")
    if noise and guarantee.accepts_noise:
        epsilon = noise.get("dp_epsilon")
        lines.append(f"Laplace noise (ε = {epsilon:g}) is added to the confidential "
                     f"column(s) {_names(confidential) or '(none chosen)'} after "
                     "microaggregation.")
    text = estimate_text(run_seconds(spec, values, n_records,
                                     len(qis) if attributes is None else attributes))
    if text:
        lines.append(text)
    kept = (len(roles.kept((*roles.confidential, *roles.non_confidential)))
            if roles is not None else 0)  # as the run counts them (a stratum is not kept)
    memory = memory_text(n_records, len(qis) if attributes is None else attributes,
                         spec.name, values.get("refine"), values.get("base"), block_size,
                         kept)
    if memory:
        lines.append(memory)
    return lines


SHOW_MEMORY_ABOVE = 2**30
"""A run's peak memory below this is not worth a line."""


def memory_text(n_records: int, attributes: QuasiIdentifiers | int | None,
                method: str | None = None, refine: str | None = None,
                base: str | None = None, block_size: int | None = None,
                kept: int = 0) -> str:
    """"Memory the run needs at its peak: about 4.0 GiB (...)." for a large run, else "";
    with what to do instead when it is more than a run may take on this computer (the
    run is then refused: :func:`core.data.memory.check_run_memory`, the same model).
    A run blocked on a Dask cluster (``block_size``) holds a block at a time on a
    worker: the line counts one block, and says nothing of a refusal. ``kept`` columns
    released as they are count as the model counts them.

    Examples
    --------
    >>> memory_text(1_000_000, QuasiIdentifiers(2, (2, 20, 30, 20, 50)), "mdav")
    'Memory the run needs at its peak: about 4.0 GiB (the categories make 124 columns).'
    >>> memory_text(5_000_000, 10, "mdav")
    'Memory the run needs at its peak: about 4.0 GiB.'
    >>> memory_text(1_000_000, 10, "mdav")
    ''
    """
    if attributes is None or n_records <= 0:
        return ""
    attributes = QuasiIdentifiers.of(attributes)
    n = min(n_records, block_size) if block_size else n_records
    peak = run_peak_bytes(n, attributes.width, method, refine, base, kept)
    if peak < SHOW_MEMORY_ABOVE:
        return ""
    spread = (f" (the categories make {attributes.width:,} columns)" if attributes.nominal
              else "")
    if block_size:
        columns = (f"; the categories make {attributes.width:,} columns"
                   if attributes.nominal else "")
        return (f"Memory each block needs at its peak: about {peak / 2**30:.1f} GiB "
                f"(blocks of about {n:,} records{columns}).")
    text = f"Memory the run needs at its peak: about {peak / 2**30:.1f} GiB{spread}."
    limit, what = run_memory_limit()
    if peak > limit:
        text += (f" That is more than {what}, so the run will be refused: run in blocks "
                 "(Advanced)" + (", or recode the nominal attributes with the most "
                                 "categories into fewer" if attributes.nominal else "")
                 + ".")
    return text


def run_seconds(spec: Method, values: Mapping[str, Any], n_records: int,
                n_quasi_identifiers: int | QuasiIdentifiers) -> float | None:
    """The estimated seconds of one run of ``spec`` with these parameter values
    (:func:`~microagg_desktop.estimate.estimate_seconds`), or None when there is nothing
    to estimate yet (no table, no quasi-identifier, k larger than the table).
    ``n_quasi_identifiers``: how many (taken as numeric), or what they are
    (:func:`quasi_identifiers`)."""
    parts = run_parts(spec, values, n_records, n_quasi_identifiers)
    return None if parts is None else parts[0] + parts[1]


def run_parts(spec: Method, values: Mapping[str, Any], n_records: int,
              n_quasi_identifiers: int | QuasiIdentifiers) -> tuple[float, float] | None:
    """:func:`run_seconds` as the method's seconds and the shared steps' after it
    (:func:`~microagg_desktop.estimate.estimate_parts`)."""
    k = _number(values.get("k"), None)
    t = _number(values.get("t"), None)
    count = QuasiIdentifiers.of(n_quasi_identifiers).count
    if n_records <= 0 or count < 1 or (k is not None and k > n_records):
        return None
    extra = {}
    if spec.name in GROUP_SIZE_RULES and k is not None and t is not None and 0 < t <= 1:
        extra["cluster_size"] = GROUP_SIZE_RULES[spec.name](n_records, int(k), t)
    params = {name: value for name, value in values.items() if name in ("k", "refine", "t")}
    return estimate_parts(spec.name, n_records, n_quasi_identifiers, scope=spec.scope,
                          **params, **extra)


def quasi_identifiers(roles: RoleSpec | None, n_records: int,
                      columns: Mapping[str, tuple[str, int]]) -> QuasiIdentifiers | None:
    """What the time estimate needs of the quasi-identifiers of ``roles``
    (:class:`~microagg_desktop.estimate.QuasiIdentifiers`), from each column's kind and
    distinct values (``columns``: name → ``(kind, distinct)``, the data tab's summary,
    :func:`~microagg_desktop.column_summary.column_kind`). A quasi-identifier is nominal
    when declared so, or by default when its column holds no numbers (as
    :func:`core.data.encoding.resolve_level` decides); None when a quasi-identifier's
    column is not summarised (yet).

    Examples
    --------
    >>> roles = RoleSpec(quasi_identifiers=("age", "region", "sex"),
    ...                  levels={"sex": "nominal"})
    >>> quasi_identifiers(roles, 1000, {"age": ("number", 80), "region": ("text", 12),
    ...                                 "sex": ("number", 2)})
    QuasiIdentifiers(numeric=1, nominal=(12, 2), distinct=None)
    >>> quasi_identifiers(roles, 10_000, {"age": ("number", 80), "region": ("text", 12),
    ...                                   "sex": ("number", 2)}).distinct
    1920
    """
    if roles is None:
        return None
    numeric, nominal, product = 0, [], 1
    for column in roles.quasi_identifiers:
        if column not in columns:
            return None
        kind, distinct = columns[column]
        level = roles.level_of(column)
        if level == Level.NOMINAL or (level is None and kind != "number"):
            nominal.append(max(1, int(distinct)))
        else:
            numeric += 1
        product = min(product * max(1, int(distinct)), n_records + 1)
    return QuasiIdentifiers(numeric, tuple(nominal),
                            product if product < n_records else None)


def _names(columns: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(f"'{c}'" for c in columns[:limit])
    return shown + (f" and {len(columns) - limit} more" if len(columns) > limit else "")


def _block_count(blocks: Sequence | str | None) -> int:
    if not blocks:
        return 0
    if isinstance(blocks, str):
        return len([b for b in blocks.split(";") if b.strip()])
    return len(blocks)
