"""Everything checked before a run: :func:`prepare_run` returns a :class:`RunPlan`.

A plan holds the validated inputs of one run: the method and its resolved parameters,
the attribute blocks, the measured quasi-identifiers (:mod:`core.data.encoding`, computed
once), the strata, the intruder scenarios and the noise settings. Every mistake the
engine can know of before the algorithm starts (roles, parameters, levels, strata,
blocks, differential-privacy bounds, intruder scenarios) is raised here, as a
:class:`~core.errors.MicroaggError` naming what is at fault. A parameter the user gave is
either honoured or refused; never replaced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.privacy.noise import check_noise_inputs
from core.data.encoding import Encoding, encode
from core.errors import MicroaggError, TooLargeForMemory
from core.measures.scenarios import intruder_scenarios, parse_known
from core.pipeline.missing import (check_option, check_remaining, missing_rows,
                                   refuse_missing)
from core.pipeline.partition import parse_blocks, resolve_blocks, strata_of
from core.data.prepare import check_group_size
from core.methods.registry import Method, get_method
from core.data.roles import RoleSpec

__all__ = ["RunPlan", "prepare_run", "INTRUDER_PRESETS"]

INTRUDER_PRESETS = ("all", "singles", "pairs", "random")
N_RANDOM_SCENARIOS = 10


@dataclass(frozen=True)
class RunPlan:
    """The validated inputs of one run (:func:`prepare_run`); :func:`core.pipeline.run.run` runs it.

    Attributes
    ----------
    table : DataFrame
        The original table, never modified.
    roles : RoleSpec
    method : Method
    parameters : dict
        The method's parameters, checked, defaults filled in.
    blocks : tuple of column-name tuples
    k : int or None
    encoding : Encoding
        The quasi-identifiers measured once (``encoding.X`` is what the method sees).
    strata : list of ndarray
        Record indices of every stratum (small ones merged when asked).
    scenarios : tuple of column-name tuples
        What the intruder knows, for the disclosure-risk measures.
    seed : int
    noise : dict or None
        ``{"epsilon": ε, "bounds": {column: (LO, HI)}, "seed": s}`` when Laplace noise
        is asked; ``s`` None draws a fresh seed for the run (:mod:`core.privacy.noise`).
    options : dict
        The run options as given (blocks, merge_small_strata, intruder, known, seed,
        dp_epsilon, confidential_bounds, missing, noise_seed), so a plan can be
        described or re-run:
        ``anonymize(table, roles, method, **options, **parameters)`` runs it again.
    original : DataFrame or None
        With ``missing="exclude"`` and records set aside: the whole table given, of which
        ``table`` holds the records to mask (:mod:`core.pipeline.missing`). None otherwise.
    excluded : ndarray of int
        Positions in ``original`` of the set-aside records (empty when none).
    """

    table: pd.DataFrame
    roles: RoleSpec
    method: Method
    parameters: dict[str, Any]
    blocks: tuple[tuple[str, ...], ...]
    k: int | None
    encoding: Encoding
    strata: list[np.ndarray]
    scenarios: tuple[tuple[str, ...], ...]
    seed: int
    noise: dict[str, Any] | None
    options: dict[str, Any]
    original: pd.DataFrame | None = None
    excluded: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))


def prepare_run(table: pd.DataFrame, roles: RoleSpec, method: str = "mdav", *,
                blocks=None, merge_small_strata: bool = False, intruder: str = "all",
                known=None, seed: int = 0, dp_epsilon: float | None = None,
                confidential_bounds=None, missing: str = "stop",
                noise_seed: int | None = None, **params) -> RunPlan:
    """Check every input of a run and prepare it; see :func:`core.pipeline.run.anonymize`.

    Raises
    ------
    MicroaggError
        Anything wrong with the roles, data, parameters, strata, blocks, noise bounds or
        intruder scenarios, named in the message.
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
    given_blocks = blocks
    check_option(missing)
    original, excluded = None, np.empty(0, dtype=np.int64)
    needed = _needed_columns(roles)
    if missing == "exclude":
        excluded = missing_rows(table, needed)
        # Mic1D-k's k counts values, not records: it checks its own group sizes.
        check_remaining(len(table), len(excluded),
                        None if spec.masks_values else resolved.get("k"))
        if len(excluded):
            original = table
            table = table.iloc[np.setdiff1d(np.arange(len(table)), excluded)]
    else:  # strata with a missing value form a stratum of their own, as before
        refuse_missing(table, [c for c in needed if c not in roles.strata],
                       {**{c: "Quasi-identifier" for c in roles.quasi_identifiers},
                        **{c: "Confidential column" for c in roles.confidential}})
    if isinstance(blocks, str):
        blocks = parse_blocks(blocks)
    blocks = resolve_blocks(roles, blocks, spec)
    k = resolved.get("k")
    if k is not None and not spec.masks_values:  # Mic1D-k's k counts values; it checks
        check_group_size(len(table), k)
    noise = _noise_plan(table, roles, spec, dp_epsilon, confidential_bounds, noise_seed)
    scenarios = _scenarios(roles, intruder, known, seed)
    # A constant quasi-identifier is measured (scale 1, nothing to SST) and reported by
    # the release warnings, not refused: a file of identical records can be released.
    try:
        encoding = encode(table, roles, strict=False,
                          run=(spec.name, resolved.get("refine"), resolved.get("base")))
    except MicroaggError as error:
        if not len(excluded) or isinstance(error, TooLargeForMemory):
            raise
        raise MicroaggError(f"{error} (Data rows are counted among the {len(table):,} "
                            "records left after setting aside those with missing "
                            "values.)") from None
    _check_levels(spec, encoding)
    if "base" in resolved:  # tc-merge runs its base method on the same attributes
        _check_levels(get_method(resolved["base"]), encoding)
    strata = strata_of(table, roles, encoding.X, k, merge_small=merge_small_strata)
    options = {"blocks": given_blocks, "merge_small_strata": merge_small_strata,
               "intruder": intruder, "known": known, "seed": seed,
               "dp_epsilon": dp_epsilon, "confidential_bounds": confidential_bounds,
               "missing": missing, "noise_seed": noise_seed}
    return RunPlan(table, roles, spec, resolved, blocks, k, encoding, strata,
                   tuple(scenarios), seed, noise, options, original, excluded)


def _needed_columns(roles: RoleSpec) -> list[str]:
    """The columns whose every value the run needs: quasi-identifiers, strata, and the
    confidential columns (t-closeness, Laplace noise and the per-class EMD of the
    measures, which every run computes, need every confidential value)."""
    return [*roles.quasi_identifiers, *roles.strata, *roles.confidential]


def _noise_plan(table, roles, spec, epsilon, bounds, seed) -> dict[str, Any] | None:
    if epsilon is None:
        if bounds:
            raise MicroaggError("Confidential bounds are only used with a differential "
                                "privacy epsilon; give one, or leave the bounds out.")
        if seed is not None:
            raise MicroaggError("A noise seed is only used with a differential privacy "
                                "epsilon; give one, or leave the noise seed out.")
        return None
    if not spec.guarantee.accepts_noise:
        raise MicroaggError("Differential privacy noise is added after a k-anonymity "
                            "method; choose one of those (e.g. MDAV).")
    codes = [c for c, kind in (roles.confidential_kinds or {}).items() if kind == "nominal"]
    if codes:
        raise MicroaggError(
            f"Confidential column '{codes[0]}' is declared nominal (codes without an "
            "order): Laplace noise would release values that are no code. Leave the noise "
            "off, or declare the column numeric if its values are quantities.")
    bounds = check_noise_inputs(table, bounds, epsilon=epsilon,
                                confidential=list(roles.confidential), seed=seed)
    # None: a fresh seed from the operating system, drawn as the noise is added.
    return {"epsilon": float(epsilon), "bounds": bounds,
            "seed": None if seed is None else int(seed)}


def _scenarios(roles: RoleSpec, intruder: str, known, seed) -> list[tuple[str, ...]]:
    qi = list(roles.quasi_identifiers)
    if known is not None:
        return parse_known(known, qi)
    if intruder not in INTRUDER_PRESETS:
        raise MicroaggError(f"Unknown intruder scenario '{intruder}'. Use one of: "
                            f"{', '.join(INTRUDER_PRESETS)}.")
    return intruder_scenarios(qi, intruder, size=max(1, (len(qi) + 1) // 2),
                              count=N_RANDOM_SCENARIOS, seed=seed)


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
