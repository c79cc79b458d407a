"""What a run and a read were, as plain data that a project file stores.

:class:`RunSettings` holds the method, its resolved parameters and every run option, in
the text forms the command line uses (blocks ``"A,B;C,D"``, bounds
``"COL=LO:HI,..."``), so that ``anonymize(table, roles, **settings.kwargs())`` reproduces
the run. :class:`ReadSettings` holds the options a table was read with
(:func:`core.io.read.read_table_with_report`). :func:`roles_to_dict` and
:func:`roles_from_dict` write a :class:`~core.data.roles.RoleSpec` as JSON-ready data,
keeping the value types of ordinal orders (a numeric order comes back numeric).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from core.data.roles import RoleSpec
from core.errors import MicroaggError
from core.methods.registry import get_method
from core.pipeline.missing import check_option

__all__ = ["RunSettings", "ReadSettings", "roles_to_dict", "roles_from_dict", "plain",
           "blocks_text", "bounds_text"]

_OPTION_NAMES = ("blocks", "merge_small_strata", "intruder", "known", "seed", "dp_epsilon",
                 "confidential_bounds", "missing", "noise_seed")


def plain(value: Any) -> Any:
    """``value`` with numpy scalars, tuples and mappings turned into JSON types."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def blocks_text(blocks) -> str | None:
    """Blocks given as text or as column lists → the ``"A,B;C,D"`` text (None stays None)."""
    if blocks is None or isinstance(blocks, str):
        return blocks or None
    return ";".join(",".join(str(c) for c in (b if not isinstance(b, str) else (b,)))
                    for b in blocks) or None


def bounds_text(bounds) -> str | None:
    """Bounds given as text, a list of ``"COL=LO:HI"`` or a mapping → one ``"COL=LO:HI,..."``."""
    if bounds is None or isinstance(bounds, str):
        return bounds or None
    if isinstance(bounds, Mapping):
        return ",".join(f"{c}={float(lo)!r}:{float(hi)!r}" for c, (lo, hi) in bounds.items())
    return ",".join(str(b) for b in bounds) or None


@dataclass(frozen=True)
class RunSettings:
    """The method, its parameters and the options of one run.

    Attributes
    ----------
    method : str
        Registry name (``"mdav"``, ``"tc-merge"``, ...).
    parameters : dict
        The method's parameters as resolved (defaults filled in).
    blocks : str or None
        Attribute blocks as ``"A,B;C,D"``; None for the method's default.
    intruder : str
        ``"all"``, ``"singles"``, ``"pairs"`` or ``"random"``.
    known : str or None
        Explicit intruder scenarios ``"A,B;C,D"`` (override ``intruder``).
    seed : int
    dp_epsilon : float or None
    confidential_bounds : str or None
        ``"COL=LO:HI,..."``, with ``dp_epsilon``.
    merge_small_strata : bool
    missing : str
        ``"stop"`` or ``"exclude"``.
    noise_seed : int or None
        The seed of the differential-privacy noise: None draws a fresh one for the run;
        the settings of a finished run (:meth:`from_result`) hold the one it drew, so a
        project recomputes the same release. A secret (:mod:`core.privacy.noise`).
        Project files written before it existed used ``seed`` for the noise, and are
        read so.

    Examples
    --------
    >>> s = RunSettings("mdav", {"k": 5, "growth": "nn", "refine": "none"})
    >>> s.kwargs()["k"], RunSettings.from_dict(s.to_dict()) == s
    (5, True)
    """

    method: str
    parameters: dict[str, Any] = field(default_factory=dict)
    blocks: str | None = None
    intruder: str = "all"
    known: str | None = None
    seed: int = 0
    dp_epsilon: float | None = None
    confidential_bounds: str | None = None
    merge_small_strata: bool = False
    missing: str = "stop"
    noise_seed: int | None = None

    def kwargs(self) -> dict[str, Any]:
        """Exactly the keyword arguments of ``core.anonymize(table, roles, **kwargs)``."""
        return {"method": self.method, **self.parameters,
                **{name: getattr(self, name) for name in _OPTION_NAMES}}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data; :meth:`from_dict` reads it back equal."""
        return plain(asdict(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunSettings:
        """Read :meth:`to_dict`'s data back; a missing key is named in the error."""
        if not isinstance(data, Mapping):
            raise MicroaggError("Run settings must be a JSON object.")
        values = {}
        if "noise_seed" not in data:  # written before it existed: the noise used seed
            data = {**data, "noise_seed": data.get("seed")
                    if data.get("dp_epsilon") is not None else None}
        for f in fields(cls):
            if f.name not in data:
                raise MicroaggError(f"The run settings have no '{f.name}' key.")
            values[f.name] = data[f.name]
        if not isinstance(values["parameters"], Mapping):
            raise MicroaggError("The run settings' 'parameters' must be a JSON object.")
        values["parameters"] = dict(values["parameters"])
        check_option(values["missing"])
        return cls(**values)

    @classmethod
    def from_options(cls, method: str, parameters: Mapping[str, Any],
                     options: Mapping[str, Any]) -> RunSettings:
        """From a method, its parameters and run options as ``anonymize`` takes them."""
        epsilon = options.get("dp_epsilon")
        return cls(
            method=method, parameters=plain(dict(parameters)),
            blocks=blocks_text(options.get("blocks")),
            intruder=options.get("intruder", "all"),
            known=blocks_text(options.get("known")),
            seed=int(options.get("seed", 0)),
            dp_epsilon=None if epsilon is None else float(epsilon),
            confidential_bounds=bounds_text(options.get("confidential_bounds")),
            merge_small_strata=bool(options.get("merge_small_strata", False)),
            missing=check_option(options.get("missing", "stop")),
            noise_seed=None if options.get("noise_seed") is None
            else int(options["noise_seed"]))

    @classmethod
    def from_result(cls, result) -> RunSettings:
        """The settings that reproduce ``result`` (an :class:`~core.pipeline.AnonymizationResult`)."""
        options = dict(result.options)
        if getattr(result, "noise", None) is not None:  # the seed it drew
            options["noise_seed"] = result.noise.seed
        return cls.from_options(result.method, result.parameters, options)

    def request(self, roles: RoleSpec) -> dict[str, Any]:
        """The window's run request of these settings: ``{"roles", **kwargs()}``."""
        return {"roles": roles, **self.kwargs()}

    @classmethod
    def from_request(cls, request: Mapping[str, Any]) -> RunSettings:
        """From the window's run request: ``{"roles", "method", options..., parameters...}``.

        The method's parameters are resolved (checked, defaults filled in).
        """
        options = {name: request[name] for name in _OPTION_NAMES if name in request}
        params = {name: value for name, value in request.items()
                  if name not in _OPTION_NAMES and name not in ("roles", "method")}
        method = request["method"]
        return cls.from_options(method, get_method(method).resolve(params), options)


@dataclass(frozen=True)
class ReadSettings:
    """The options a table was read with: the keywords of
    :func:`core.io.read.read_table_with_report` (None: detected)."""

    sheet: str | int | None = None
    delimiter: str | None = None
    decimal: str | None = None
    thousands: str | None = None
    encoding: str | None = None
    skip_rows: int | None = None
    header_row: int | None = None

    def kwargs(self) -> dict[str, Any]:
        """Every option, for ``read_table_with_report(path, **kwargs)``."""
        return asdict(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReadSettings:
        """Read :meth:`to_dict`'s data back; unknown keys are refused by name."""
        if not isinstance(data, Mapping):
            raise MicroaggError("The read settings must be a JSON object.")
        known = {f.name for f in fields(cls)}
        unknown = [k for k in data if k not in known]
        if unknown:
            raise MicroaggError(f"The read settings have an unknown key '{unknown[0]}'; "
                                f"known keys: {', '.join(sorted(known))}.")
        return cls(**dict(data))


_ROLE_LISTS = ("quasi_identifiers", "confidential", "identifiers", "non_confidential",
               "strata")


def roles_to_dict(roles: RoleSpec) -> dict[str, Any]:
    """A :class:`RoleSpec` as JSON-ready data (levels as their names, orders as lists).

    Examples
    --------
    >>> r = RoleSpec(quasi_identifiers=("age", "grade"), orders={"grade": (1, 2, 3)})
    >>> roles_from_dict(roles_to_dict(r)) == r
    True
    """
    out: dict[str, Any] = {name: list(getattr(roles, name)) for name in _ROLE_LISTS}
    out["levels"] = {column: level.value for column, level in roles.levels}
    out["orders"] = {column: plain(list(order)) for column, order in roles.orders}
    return out


def roles_from_dict(data: Mapping[str, Any]) -> RoleSpec:
    """The :class:`RoleSpec` of :func:`roles_to_dict`'s data; a missing key is named."""
    if not isinstance(data, Mapping):
        raise MicroaggError("The roles must be a JSON object.")
    for name in (*_ROLE_LISTS, "levels", "orders"):
        if name not in data:
            raise MicroaggError(f"The roles have no '{name}' key.")
    return RoleSpec(**{name: tuple(data[name]) for name in _ROLE_LISTS},
                    levels=dict(data["levels"]),
                    orders={c: tuple(o) for c, o in dict(data["orders"]).items()})
