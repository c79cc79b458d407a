"""The method contract: what a registered algorithm declares about itself.

An entry names the algorithm, describes it, and declares its parameters with their
constraints next to them (the scikit-learn ``_param_validation`` habit), its
:class:`~core.verify.guarantees.Guarantee`, its scope and the measurement levels of
quasi-identifier it accepts. Validation produces one message format: the parameter,
what is allowed, what was received. The registry (:mod:`core.methods.registry`) holds the
entries; the CLI options and the GUI's parameter form are built from them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.verify.guarantees import K_ANONYMITY, Guarantee, guarantee_named
from core.data.roles import RoleSpec

__all__ = ["Interval", "Options", "Parameter", "Method", "MethodInput", "K", "GROWTH", "T",
           "REFINE"]


@dataclass(frozen=True)
class Interval:
    """Numbers of ``kind`` (int or float) between ``low`` and ``high`` (``None``: unbounded).

    Each end is closed (included) unless ``low_open`` / ``high_open`` says it is open:
    ``Interval(float, 0, 1, low_open=True)`` is 0 < t <= 1.

    Examples
    --------
    >>> Interval(float, 0, 1, low_open=True).describe()
    'a number in the range (0, 1]'
    """

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def describe(self) -> str:
        name = "an integer" if self.kind is int else "a number"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        left = "(" if self.low is None or self.low_open else "["
        right = ")" if self.high is None or self.high_open else "]"
        return f"{name} in the range {left}{low}, {high}{right}"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool):
            return False
        if self.kind is int:
            if isinstance(value, (int, np.integer)):
                pass
            elif isinstance(value, (float, np.floating)) and float(value).is_integer():
                pass
            else:
                return False
        elif not isinstance(value, (int, float, np.integer, np.floating)) or \
                not math.isfinite(float(value)):
            return False
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        below = self.high is None or (value < self.high if self.high_open
                                      else value <= self.high)
        return above and below

    def convert(self, value: Any):
        return int(value) if self.kind is int else float(value)


@dataclass(frozen=True)
class Options:
    """One of a fixed set of string values."""

    values: tuple[str, ...]
    kind: type = str

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)

    def accepts(self, value: Any) -> bool:
        return value in self.values

    def convert(self, value: Any):
        return value


@dataclass(frozen=True)
class Parameter:
    """A parameter of a method: its name, constraint, default and a line of help."""

    name: str
    constraint: Interval | Options
    default: Any
    label: str = ""
    help: str = ""

    def check(self, method: str, value: Any):
        if not self.constraint.accepts(value):
            raise MicroaggError(
                f"The '{self.name}' parameter of {method} must be "
                f"{self.constraint.describe()}. Got {value!r} instead."
            )
        return self.constraint.convert(value)


@dataclass(frozen=True)
class MethodInput:
    """What an algorithm may use.

    ``X`` (n_records × n_quasi_identifiers) is the z-scored quasi-identifier matrix;
    ``table`` and ``roles`` are there for methods that need the confidential columns.
    """

    X: np.ndarray
    table: pd.DataFrame
    roles: RoleSpec


@dataclass(frozen=True)
class Method:
    """A registered algorithm.

    ``function(data: MethodInput, *, state, **params)`` returns ``labels``, one group id
    per record. ``guarantee`` names what the verifier must confirm before the result is
    returned: ``"k-anonymity"``, ``"t-closeness"`` (k-anonymity and t-closeness of
    every confidential attribute) or ``"none"``. ``scope`` says what the function sees:
    ``"multivariate"`` (all quasi-identifiers of a block), ``"univariate"`` (exactly one
    attribute), ``"per-attribute"`` (called once per quasi-identifier) or
    ``"whole-table"`` (all records and quasi-identifiers at once: no strata, no blocks).
    A ``refine`` parameter, where declared, is applied by the engine after the function
    returns. With ``masks_values`` the function returns the masked quasi-identifier
    matrix itself (original units) instead of a partition; groups are then the
    equivalence classes of its rows. ``qi_levels`` lists the measurement levels of
    quasi-identifier it accepts (a method that needs an order refuses nominal ones; see
    :mod:`core.data.encoding`). The function may return an object with ``labels`` (and ``cluster_size``,
    ``merges``, ``swaps``) instead of bare labels; those details reach the result.
    """

    name: str
    label: str
    function: Callable[..., np.ndarray]
    parameters: tuple[Parameter, ...]
    description: str
    family: str = "k-anonymity"
    guarantee: Guarantee = K_ANONYMITY
    qi_levels: tuple[str, ...] = ("numeric", "ordinal", "nominal")
    reference: str = ""
    scope: str = "multivariate"
    needs_confidential: bool = False
    masks_values: bool = False

    def __post_init__(self):
        if not isinstance(self.guarantee, Guarantee):
            object.__setattr__(self, "guarantee", guarantee_named(self.guarantee))

    def resolve(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``params`` against the declared parameters; fill in defaults."""
        known = {p.name: p for p in self.parameters}
        for name in params:
            if name not in known:
                allowed = ", ".join(known) or "none"
                raise MicroaggError(
                    f"Method '{self.name}' has no parameter '{name}'. Its parameters: "
                    f"{allowed}."
                )
        resolved = {}
        for p in self.parameters:
            resolved[p.name] = p.check(self.name, params.get(p.name, p.default))
        return resolved


K = Parameter(
    "k", Interval(int, 2, None), 3, label="k (minimum group size)",
    help="Every group of released records has at least k members.",
)
GROWTH = Parameter(
    "growth", Options(("nn", "nc")), "nn", label="Group growth",
    help="nn: the first record and its k-1 nearest neighbours; nc: repeatedly add the "
         "record nearest to the group's centroid.",
)
T = Parameter(
    "t", Interval(float, 0.0, 1.0, low_open=True), 0.2, label="t (EMD bound)",
    help="In every class, the distribution of each confidential attribute is within "
         "earth mover's distance t of its distribution in the whole table (0 < t <= 1; "
         "smaller is stricter).",
)
REFINE = Parameter(
    "refine", Options(("none", "tfrp2", "igd")), "none", label="Refinement",
    help="none; tfrp2: one Decompose pass; igd: Decompose and Shrink until nothing "
         "changes (lowest information loss, slower).",
)
