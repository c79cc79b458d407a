"""The one public entry point: :func:`anonymize`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from core.aggregate import aggregate
from core.errors import MicroaggError
from core.metrics import Metrics, compute_metrics
from core.pipeline import (parse_blocks, partition_blocks, recode_merged_strata,
                           resolve_blocks, strata_of)
from core.encoding import Encoding, encode
from core.prepare import check_group_size
from core.progress import TaskState
from core.measures import Measures, measure
from core.registry import Method, MethodInput, get_method
from core.roles import RoleSpec
from core.bucket import MultiplicativeVerification, verify_multiplicative
from core.dp import DPResult, add_laplace_noise, parse_bounds
from core.tcloseness import TClosenessVerification, verify_t_closeness
from core.verify import Verification, verify_k_anonymity

__all__ = ["AnonymizationResult", "anonymize", "check_inputs", "GuaranteeNotMet", "RunPlan"]


class GuaranteeNotMet(MicroaggError):
    """The verifier found that a result does not meet the guarantee its method promises."""


@dataclass(frozen=True)
class AnonymizationResult:
    """Everything one run produced.

    Attributes
    ----------
    method : str
        Registry name of the method.
    parameters : dict
        The parameters used, defaults filled in.
    roles : RoleSpec
    labels : ndarray of shape (n_records,)
        Group id of every record: records with the same id have the same masked
        quasi-identifiers (with attribute blocks: the same group in every block).
    masked : DataFrame
        The table to release: same rows in the same order, identifiers dropped (to keep
        a column, give it the non-confidential role), quasi-identifiers replaced by
        their group means.
    metrics : Metrics
    verification : Verification
        The independent verifier's findings on ``masked``; always ``passed`` for a
        method whose guarantee is k-anonymity (otherwise :func:`anonymize` raises).
    seconds : float
        Wall time of the algorithm, aggregation and verification.
    blocks : tuple of column-name tuples
        The attribute blocks (one block of every quasi-identifier by default).
    block_labels : ndarray of shape (n_records, n_blocks)
        Group ids per block.
    guarantee : str
        What the method promises: ``"k-anonymity"`` (per block with several blocks) or
        ``"none"`` (the verifier's k' is the figure that counts).
    levels : dict
        Quasi-identifier → measurement level used (``"numeric"``, ``"ordinal"``,
        ``"nominal"``); ``orders`` the category order of each ordinal one.
    """

    method: str
    parameters: dict[str, Any]
    roles: RoleSpec
    labels: np.ndarray
    masked: pd.DataFrame
    metrics: Metrics
    verification: Verification
    seconds: float = 0.0
    blocks: tuple[tuple[str, ...], ...] = ()
    block_labels: np.ndarray | None = None
    guarantee: str = "k-anonymity"
    strata_merges: tuple[str, ...] = ()
    tcloseness: TClosenessVerification | None = None
    details: dict[str, int] = field(default_factory=dict)
    measures: Measures | None = None
    noise: DPResult | None = None
    levels: dict[str, str] = field(default_factory=dict)
    orders: dict[str, tuple] = field(default_factory=dict)

    @property
    def multiplicative(self) -> bool:
        """True when ``tcloseness`` uses the multiplicative distance (t > 1)."""
        return isinstance(self.tcloseness, MultiplicativeVerification)

    @property
    def passed(self) -> bool:
        """True when every guarantee the method promises was verified on ``masked``."""
        closeness = self.tcloseness is None or self.tcloseness.passed
        return self.verification.passed and closeness

    def _measures_summary(self) -> dict[str, Any]:
        if self.measures is None:
            return {}
        out = self.measures.summary()
        keys = ("il1", "dld", "id", "dr", "score", "interval", "il1_components",
                "max_record_risk", "mean_record_risk", "unique_records", "max_emd")
        return {key: out[key] for key in keys if key in out}

    def _tcloseness_summary(self) -> dict[str, Any]:
        out: dict[str, Any] = self.noise.summary() if self.noise is not None else {}
        if self.tcloseness is None:
            return out
        c = self.tcloseness
        if self.multiplicative:
            return {**out,
                    "t": c.t, "t_kind": "multiplicative", "t_verified": c.passed,
                    "max_multiplicative_distance": c.max_distance_by_attribute,
                    "n_buckets": self.details.get("n_buckets"),
                    "cluster_size": self.details.get("cluster_size"),
                    "epsilon_prop3": c.epsilon,
                    "proposition3": c.proposition3_text()}
        return {
            **out,
            "t": c.t,
            "t_kind": "emd",
            "t_verified": c.passed,
            "max_emd": c.max_emd_by_attribute,
            "emd_distance": dict(zip(c.attributes, c.kinds)),
            "cluster_size": self.details.get("cluster_size"),
            "merges": self.details.get("merges", 0),
            "swaps": self.details.get("swaps", 0),
        }

    @property
    def guarantee_text(self) -> str:
        """One plain sentence on what this result guarantees."""
        k = self.parameters.get("k")
        if self.guarantee == "t-closeness-multiplicative":
            t = self.parameters["t"]
            return (f"Every released record is indistinguishable from at least {k - 1} "
                    f"others, and in every class each bucket of "
                    f"{', '.join(self.roles.confidential)} is at most {t:g} times and at "
                    f"least 1/{t:g} times as frequent as in the whole table (multiplicative "
                    f"distance, t = {t:g}; not an earth mover's distance).")
        if self.noise is not None:
            return (f"Every released record is indistinguishable from at least {k - 1} "
                    f"others; the confidential attributes carry Laplace noise with "
                    f"epsilon = {self.noise.epsilon:g} (stochastic t = "
                    f"{self.noise.stochastic_t:.4g}, Proposition 1).")
        if self.guarantee == "t-closeness":
            t = self.parameters["t"]
            return (f"Every released record is indistinguishable from at least {k - 1} "
                    f"others, and in every class the distribution of "
                    f"{', '.join(self.roles.confidential)} is within earth mover's distance "
                    f"t = {t:g} of the whole table's.")
        if self.guarantee == "none":
            return (f"No k-anonymity guarantee: this method does not group whole records. "
                    f"Real anonymity k' = {self.metrics.k_prime:.2f}; the smallest class "
                    f"has {self.verification.smallest_class} record(s).")
        if len(self.blocks) > 1:
            return (f"{k}-anonymity holds within each of the {len(self.blocks)} attribute "
                    f"blocks only, not for the combination of all quasi-identifiers "
                    f"(whole-table k' = {self.metrics.k_prime:.2f}).")
        strata = f" within strata of {', '.join(self.roles.strata)}" if self.roles.strata \
            else ""
        return f"Every released record is indistinguishable from at least {k - 1} others{strata}."

    def summary(self) -> dict[str, Any]:
        """A flat, JSON-ready summary (the CLI's ``--summary-json``)."""
        m, v = self.metrics, self.verification
        return {
            "method": self.method,
            **{name: value for name, value in self.parameters.items()},
            "n_records": m.n_records,
            "n_groups": m.n_groups,
            "quasi_identifiers": list(self.roles.quasi_identifiers),
            "levels": dict(self.levels),
            "ordinal_orders": {c: [str(v) for v in o] for c, o in self.orders.items()},
            "il": m.il,
            "sse": m.sse,
            "sst": m.sst,
            "min_group_size": m.min_group_size,
            "mean_group_size": m.mean_group_size,
            "max_group_size": m.max_group_size,
            "group_size_counts": {str(s): c for s, c in m.group_size_counts.items()},
            "k_prime": m.k_prime,
            "verified": self.passed,
            "guarantee": self.guarantee,
            "guarantee_text": self.guarantee_text,
            "blocks": [list(b) for b in self.blocks],
            "strata": list(self.roles.strata),
            "strata_merges": list(self.strata_merges),
            "smallest_class_by_block": list(v.smallest_by_block),
            **self._measures_summary(),
            **self._tcloseness_summary(),
            "smallest_class": v.smallest_class,
            "verifier_il": v.il,
            "verification_notes": list(v.notes),
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class RunPlan:
    """Everything :func:`check_inputs` established before a run."""

    method: Method
    parameters: dict[str, Any]
    blocks: tuple[tuple[str, ...], ...]
    k: int | None
    encoding: Encoding
    strata: list[np.ndarray]


def check_inputs(table: pd.DataFrame, roles: RoleSpec, method: str = "mdav", *,
                 blocks=None, merge_small_strata: bool = False, **params) -> RunPlan:
    """Run every check :func:`anonymize` makes before its algorithm starts.

    The GUI calls it before starting a worker, so a mistake (an unknown column, a
    constant quasi-identifier, k above the number of records, a stratum too small, ...)
    is reported at once. Raises :class:`MicroaggError`; returns the prepared inputs.
    """
    spec = get_method(method)
    resolved = spec.resolve(params)
    if not isinstance(table, pd.DataFrame):
        raise MicroaggError("The table must be a pandas DataFrame.")
    if not isinstance(roles, RoleSpec):
        raise MicroaggError("The roles must be a RoleSpec.")
    roles.validate(table)
    if spec.needs_confidential and not roles.confidential:
        raise MicroaggError(f"{spec.label} protects confidential attributes: mark at least "
                            "one column as confidential.")
    if spec.scope == "whole-table" and roles.strata:
        raise MicroaggError(f"{spec.label} works on the whole table at once; it takes no "
                            "strata. Give the stratum column another role.")
    for column in roles.confidential if spec.needs_confidential else ():
        missing = int(table[column].isna().sum())
        if missing:
            raise MicroaggError(f"Confidential column '{column}' has {missing} missing "
                                "value(s); t-closeness needs every value. Impute or remove "
                                "those rows.")
    if isinstance(blocks, str):
        blocks = parse_blocks(blocks)
    blocks = resolve_blocks(roles, blocks, spec)
    k = resolved.get("k")
    if k is not None and not spec.masks_values:  # Mic1D-k's k counts values; it checks
        check_group_size(len(table), k)
    encoding = encode(table, roles)
    _check_levels(spec, encoding)
    if "base" in resolved:  # tc-merge runs its base method on the same attributes
        _check_levels(get_method(resolved["base"]), encoding)
    strata = strata_of(table, roles, encoding.X, k, merge_small=merge_small_strata)
    return RunPlan(spec, resolved, blocks, k, encoding, strata)


_WHY_LEVEL = {
    "nominal": "a nominal attribute has no order to sort or rank by",
    "ordinal": "it computes with the attribute's values, which an ordinal attribute lacks",
}


def _check_levels(spec: Method, encoding: Encoding) -> None:
    """Refuse a quasi-identifier whose measurement level the method cannot handle."""
    for a in encoding.attributes:
        if a.level.value not in spec.qi_levels:
            raise MicroaggError(
                f"Quasi-identifier '{a.name}' is {a.level.value}, and {spec.label} takes "
                f"{' or '.join(spec.qi_levels)} quasi-identifiers only "
                f"({_WHY_LEVEL.get(a.level.value, 'see the method description')}). "
                "Choose a multivariate method such as MDAV, or give the column another "
                "role or level.")


INTRUDER_PRESETS = ("all", "singles", "pairs", "random")


def anonymize(table: pd.DataFrame, roles: RoleSpec, method: str = "mdav", *,
              state: TaskState | None = None, blocks=None, merge_small_strata: bool = False,
              intruder: str = "all", known=None, seed: int = 0,
              dp_epsilon: float | None = None, confidential_bounds=None,
              **params) -> AnonymizationResult:
    """Microaggregate ``table`` with a registered method and verify the result.

    Parameters
    ----------
    table : DataFrame
        The original data. Never modified.
    roles : RoleSpec
        Which columns are identifiers, quasi-identifiers, confidential; optional strata.
    method : str
        A name from :func:`core.registry.methods` (``"mdav"``, ...).
    state : TaskState, optional
        Progress and cancellation.
    blocks : sequence of column-name sequences, or str, optional
        Attribute blocks (``"A,B;C,D"`` or ``[("A", "B"), ("C", "D")]``): the method
        runs on each block of quasi-identifiers separately, and k-anonymity then holds
        per block only. Default: one block of all quasi-identifiers.
    merge_small_strata : bool
        Merge a stratum with fewer than k records into its nearest stratum instead of
        stopping with an error.
    intruder : {"all", "singles", "pairs", "random"}
        What the intruder is assumed to know for the disclosure-risk measures: all
        quasi-identifiers, each one alone, every pair, or 10 random subsets of half of
        them (drawn with ``seed``). ``known`` (``"A,B;C,D"``) overrides it.
    dp_epsilon, confidential_bounds : float, mapping or str
        After a k-anonymous microaggregation, add Laplace noise of scale (HI−LO)/ε to
        every confidential attribute (Domingo-Ferrer & Soria-Comas 2015, Proposition 1).
        The bounds ``{column: (LO, HI)}`` or ``"COL=LO:HI,..."`` are required for every
        confidential column; they are never taken from the data. ``seed`` drives the noise.
    **params
        The method's parameters, e.g. ``k=5``, ``growth="nc"``, ``refine="igd"``.

    Raises
    ------
    MicroaggError
        Bad roles, data or parameters (the message names the column or parameter).
    GuaranteeNotMet
        The verifier did not confirm the method's guarantee on the output.
    Cancelled
        ``state.cancel()`` was called.

    Examples
    --------
    >>> t = pd.DataFrame({"age": [20, 21, 40, 41], "wage": [1, 2, 9, 8]})
    >>> r = anonymize(t, RoleSpec(quasi_identifiers=("age", "wage")), k=2)
    >>> r.masked["age"].tolist()
    [20.5, 20.5, 40.5, 40.5]
    """
    started = time.perf_counter()
    plan = check_inputs(table, roles, method, blocks=blocks,
                        merge_small_strata=merge_small_strata, **params)
    spec, resolved, blocks, k = plan.method, plan.parameters, plan.blocks, plan.k
    state = state or TaskState()
    state.step(0.0, f"{spec.label}: preparing")
    encoding, strata = plan.encoding, plan.strata
    if spec.masks_values:
        values = np.asarray(spec.function(MethodInput(encoding.X, table, roles),
                                          state=state.sub(0.0, 0.8), **resolved))
        _, classes = np.unique(values, axis=0, return_inverse=True)
        block_labels, details = classes.reshape(-1, 1).astype(np.int64), {}
    else:
        block_labels, details = partition_blocks(spec, encoding, table, roles, blocks,
                                                 strata, resolved, state.sub(0.0, 0.8))
    if (block_labels < 0).any():
        raise GuaranteeNotMet(f"{spec.label} left records without a group (internal error).")
    state.check()
    _, labels = np.unique(block_labels, axis=0, return_inverse=True)
    labels = labels.reshape(-1).astype(np.int64)
    if spec.masks_values:
        masked = table.drop(columns=list(roles.identifiers)).copy()
        for j, column in enumerate(roles.quasi_identifiers):
            masked[column] = pd.Series(values[:, j], index=table.index, name=column)
    else:
        masked = aggregate(table, block_labels, roles.quasi_identifiers,
                           drop=roles.identifiers, blocks=blocks, encoding=encoding)
    merges = recode_merged_strata(masked, roles, strata) if roles.strata else []
    qi = list(roles.quasi_identifiers)
    metrics = compute_metrics(encoding, block_labels, blocks, masked)
    if spec.masks_values:  # the masked values are not group means: SSE from the values
        mean = np.array([a.mean for a in encoding.attributes])
        std = np.array([a.std for a in encoding.attributes])
        within = float(((encoding.X - (values - mean) / std) ** 2).sum())
        metrics = replace(metrics, sse=within, il=100.0 * within / metrics.sst)
    state.check()
    noise = None
    if dp_epsilon is not None:
        if spec.guarantee != "k-anonymity":
            raise MicroaggError("Differential privacy noise is added after a k-anonymity "
                                "method; choose one of those (e.g. MDAV).")
        if not roles.confidential:
            raise MicroaggError("Differential privacy protects confidential attributes: "
                                "mark at least one column as confidential.")
        if confidential_bounds is None:
            raise MicroaggError("Give the bounds of every confidential column (e.g. "
                                "'income=0:200000'); they are never taken from the data.")
        bounds = (parse_bounds(confidential_bounds) if isinstance(confidential_bounds, str)
                  else dict(confidential_bounds))
        noise = add_laplace_noise(masked, bounds, epsilon=dp_epsilon,
                                  quasi_identifiers=qi + list(roles.strata),
                                  confidential=roles.confidential, random_state=seed)
        masked = noise.frame
    elif confidential_bounds:
        raise MicroaggError("Confidential bounds are only used with a differential privacy "
                            "epsilon; give one, or leave the bounds out.")
    state.step(0.85, "measuring disclosure risk and utility")
    if intruder not in INTRUDER_PRESETS:
        raise MicroaggError(f"Unknown intruder scenario '{intruder}'. Use one of: "
                            f"{', '.join(INTRUDER_PRESETS)}.")
    if len(qi) == 1 and intruder in ("pairs",):
        intruder = "all"
    measures = measure(table, masked, roles, known=known, scenarios=intruder, encoding=encoding,
                       scenario_size=max(1, (len(qi) + 1) // 2), seed=seed)
    # A per-attribute method promises nothing per attribute that matters to an intruder
    # who knows several of them: verify the whole table.
    # Mic1D-k's k counts values: the record-level check is against the smallest
    # meaningful class size, 2, and its k' is the figure that counts.
    verification = verify_k_anonymity(table, masked, roles,
                                      2 if spec.masks_values else (k or 1),
                                      blocks=None if spec.scope == "per-attribute" else blocks)
    if spec.guarantee != "none" and not verification.passed:
        raise GuaranteeNotMet(
            f"{spec.label} did not produce a verified {k}-anonymous table: "
            + " ".join(verification.notes) + " Nothing was released."
        )
    closeness = None
    if spec.guarantee == "t-closeness-multiplicative":
        # Released as buckets (Section 6.2), and verified on what is released.
        for column in roles.confidential:
            masked[column] = details["buckets"].recode(table[column]).to_numpy()
        closeness = verify_multiplicative(masked, qi, roles.confidential, resolved["t"])
        if not closeness.passed:
            raise GuaranteeNotMet(f"{spec.label} did not produce a verified t-close table: "
                                  f"{closeness.describe()} Nothing was released.")
    if spec.guarantee == "t-closeness":
        closeness = verify_t_closeness(masked, qi, roles.confidential, resolved["t"])
        if not closeness.passed:
            raise GuaranteeNotMet(f"{spec.label} did not produce a verified t-close table: "
                                  f"{closeness.describe()} Nothing was released.")
    state.step(1.0, f"{spec.label}: done")
    return AnonymizationResult(
        method=spec.name, parameters=resolved, roles=roles, labels=labels,
        masked=masked, metrics=metrics, verification=verification,
        seconds=time.perf_counter() - started, blocks=blocks,
        block_labels=block_labels, guarantee=spec.guarantee, strata_merges=tuple(merges),
        tcloseness=closeness, details={key: value for key, value in details.items()
                                       if key != "buckets"},
        measures=measures, noise=noise,
        levels={a.name: a.level.value for a in encoding.attributes},
        orders={a.name: tuple(a.categories) for a in encoding.attributes
                if a.level.value == "ordinal"},
    )
