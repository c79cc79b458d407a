"""A parameter sweep: the same run for several values of one numeric parameter.

Vocabulary. A *request* is the dictionary that describes one run: ``roles`` (a
:class:`~core.data.roles.RoleSpec`), ``method`` (a registry name) and every other keyword
of :func:`core.pipeline.plan.prepare_run` (``blocks``, ``merge_small_strata``,
``intruder``, ``seed``, ``dp_epsilon``, ``missing``, ... and the method's parameters such
as ``k`` or ``t``). A *sweep* runs the request once per value of one parameter and gives
one :class:`SweepPoint` per value, in order, so that information loss and disclosure risk
can be read against the parameter.

A value whose run fails with a :class:`~core.errors.MicroaggError` (k larger than a
stratum, a guarantee not met) gives a point carrying the error message; the other values
still run. Cancelling stops the sweep between runs and inside a run. The work on the
original alone (the record-linkage search tree, IL1's moments, the codings the warnings
look for) is made once for the sweep and shared by its runs
(:mod:`core.pipeline.original_work`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pandas as pd

from core.errors import MicroaggError
from core.methods.contract import Interval, Parameter
from core.methods.registry import get_method
from core.pipeline.original_work import OriginalWork
from core.pipeline.plan import prepare_run
from core.pipeline.result import AnonymizationResult
from core.pipeline.run import run
from core.pipeline.stored import StoredResult
from core.progress import TaskState

__all__ = ["SweepPoint", "sweep", "sweepable_parameters", "sweep_values", "default_range",
           "MAX_POINTS"]

MAX_POINTS = 50
"""The most values one sweep runs: each is a full run with its measures."""

_UNBOUNDED_INT_HIGH = 1000  # what a range without an upper end is capped at


@dataclass(frozen=True)
class SweepPoint:
    """The outcome of one value of a sweep.

    Attributes
    ----------
    value : int or float
        The parameter's value.
    stored : StoredResult or None
        The verified result, kept compactly while the sweep waits for a choice
        (:mod:`core.pipeline.stored`: nine points of 1,000,000 × 10 would otherwise hold
        about 1 GB), or None when the run failed.
    error : str or None
        Why the run failed (the engine's message), or None.
    """

    value: int | float
    stored: StoredResult | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the value produced a result."""
        return self.stored is not None

    @property
    def result(self) -> AnonymizationResult | None:
        """The verified result with its released table (rebuilt, about 0.05 s at
        1,000,000 × 10), or None when the run failed."""
        return None if self.stored is None else self.stored.result()

    @property
    def summary(self) -> AnonymizationResult | None:
        """The result's figures, verification and settings without its table
        (:attr:`StoredResult.summary`), or None when the run failed."""
        return None if self.stored is None else self.stored.summary


def sweepable_parameters(method: str) -> tuple[Parameter, ...]:
    """The parameters of ``method`` a sweep can vary: integers or reals in an interval.

    Examples
    --------
    >>> [p.name for p in sweepable_parameters("tc-kfirst")]
    ['k', 't']
    """
    return tuple(p for p in get_method(method).parameters
                 if isinstance(p.constraint, Interval))


def _parameter(method: str, name: str) -> Parameter:
    found = {p.name: p for p in sweepable_parameters(method)}
    if name not in found:
        spec = get_method(method)
        allowed = ", ".join(found) or "none"
        raise MicroaggError(f"The parameter '{name}' of {spec.label} cannot be swept: a sweep "
                            f"varies a numeric parameter. Sweepable: {allowed}.")
    return found[name]


def sweep_values(parameter: Parameter, start: float, stop: float, *,
                 step: float | None = None, count: int | None = None) -> list[int | float]:
    """The values from ``start`` to ``stop`` (both included) by ``step`` or in ``count`` points.

    Integer parameters give distinct integers; every value is checked against the
    parameter's interval, and at most :data:`MAX_POINTS` values are allowed.

    Raises
    ------
    MicroaggError
        A value outside the parameter's range, ``stop < start``, a step that is not
        positive, neither or both of ``step`` and ``count``, or too many points.

    Examples
    --------
    >>> from core.methods.contract import K
    >>> sweep_values(K, 2, 10, step=2)
    [2, 4, 6, 8, 10]
    >>> sweep_values(K, 2, 10, count=3)
    [2, 6, 10]
    """
    constraint = parameter.constraint
    name = parameter.name
    if (step is None) == (count is None):
        raise MicroaggError("Give either a step or a number of points for the sweep.")
    if not (math.isfinite(start) and math.isfinite(stop)) or stop < start:
        raise MicroaggError(f"The sweep of '{name}' must go from a number to a larger one; "
                            f"got from {start:g} to {stop:g}.")
    for end in (start, stop):
        if not constraint.accepts(end):
            raise MicroaggError(f"The sweep of '{name}' must stay within "
                                f"{constraint.describe()}; {end:g} is outside it.")
    if step is not None:
        if not step > 0:
            raise MicroaggError(f"The step of the sweep of '{name}' must be positive; "
                                f"got {step:g}.")
        n = int(math.floor((stop - start) / step + 1e-9)) + 1
        if n > MAX_POINTS:
            raise MicroaggError(f"The sweep of '{name}' would run {n} values; at most "
                                f"{MAX_POINTS} are allowed. Use a larger step.")
        raw = [start + i * step for i in range(n)]
    else:
        if not 1 <= count <= MAX_POINTS:
            raise MicroaggError(f"A sweep runs 1 to {MAX_POINTS} values; got {count}.")
        raw = [start] if count == 1 else \
            [start + (stop - start) * i / (count - 1) for i in range(count)]
    if constraint.kind is int:
        values = sorted({int(round(v)) for v in raw})
    else:
        values = [round(float(v), 10) for v in raw]
    bad = [v for v in values if not constraint.accepts(v)]
    if bad:
        raise MicroaggError(f"The sweep of '{name}' must stay within "
                            f"{constraint.describe()}; {bad[0]:g} is outside it.")
    return values


def default_range(parameter: Parameter) -> tuple[float, float]:
    """A starting range for the sweep form: the interval, closed and capped."""
    interval = parameter.constraint
    low = interval.low if interval.low is not None else 0
    high = interval.high if interval.high is not None else _UNBOUNDED_INT_HIGH
    if interval.kind is int:
        return float(low + (1 if interval.low_open else 0)), float(high)
    return float(low + (0.01 if interval.low_open else 0)), float(high)


class _ValueState(TaskState):
    """The progress of one value's run, mapped onto its slice of the sweep.

    Shares the sweep's cancellation flag, so cancelling the sweep stops the run at its
    next step; messages say which value is running.
    """

    def __init__(self, parent: TaskState, start: float, stop: float, prefix: str):
        super().__init__()
        self._cancel = parent._cancel  # one flag for the sweep and every run in it
        self._parent, self._start, self._stop, self._prefix = parent, start, stop, prefix

    def step(self, fraction: float, message: str = "") -> None:
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        self._parent.step(self._start + (self._stop - self._start) * self.fraction,
                          f"{self._prefix}: {message}" if message else self._prefix)


def sweep(table: pd.DataFrame, request: Mapping[str, Any], parameter: str,
          values: Sequence[int | float], *, state: TaskState | None = None
          ) -> list[SweepPoint]:
    """Run ``request`` once for every value of ``parameter``.

    Parameters
    ----------
    table : DataFrame
        The original data; never modified.
    request : mapping
        ``roles``, ``method`` and the other keywords of
        :func:`core.pipeline.plan.prepare_run` (module notes). Its own value of
        ``parameter``, if any, is ignored.
    parameter : str
        A numeric parameter of the method (:func:`sweepable_parameters`).
    values : sequence of numbers
        1 to :data:`MAX_POINTS` values, run in this order.
    state : TaskState, optional
        Overall progress: value ``i`` of ``n`` fills ``i/n`` to ``(i+1)/n``.

    Returns
    -------
    list of SweepPoint
        One per value, in order; a failed value carries its error message.

    Raises
    ------
    MicroaggError
        No method or roles in the request, a parameter that cannot be swept, no values
        or too many.
    Cancelled
        ``state.cancel()`` was called (between runs or inside one).

    Examples
    --------
    >>> from core.data.roles import RoleSpec
    >>> t = pd.DataFrame({"age": [20, 21, 40, 41, 60, 61], "wage": [1, 2, 9, 8, 5, 5]})
    >>> points = sweep(t, {"roles": RoleSpec(quasi_identifiers=("age", "wage")),
    ...                    "method": "mdav"}, "k", [2, 3, 7])
    >>> [(p.value, p.ok) for p in points]
    [(2, True), (3, True), (7, False)]
    """
    if "roles" not in request or "method" not in request:
        raise MicroaggError("A sweep needs a run request with 'roles' and 'method'.")
    options = dict(request)
    roles, method = options.pop("roles"), options.pop("method")
    _parameter(method, parameter)
    values = list(values)
    if not 1 <= len(values) <= MAX_POINTS:
        raise MicroaggError(f"A sweep runs 1 to {MAX_POINTS} values; got {len(values)}.")
    state = state or TaskState()
    n = len(values)
    points = []
    # The work on the original alone is made once, for the first value that prepares,
    # and shared by the runs of the others (core.pipeline.original_work).
    helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sweep")
    shared = None
    try:
        for i, value in enumerate(values):
            prefix = f"{parameter} = {value:g} ({i + 1} of {n})"
            state.step(i / n, prefix)
            try:
                plan = prepare_run(table, roles, method, **{**options, parameter: value})
                if shared is None:
                    shared = OriginalWork(plan, helper)
                result = run(plan, _ValueState(state, i / n, (i + 1) / n, prefix),
                             shared=shared)
            except MicroaggError as error:
                points.append(SweepPoint(value, error=str(error)))
            else:
                points.append(SweepPoint(value, StoredResult(result)))
    except BaseException:
        helper.shutdown(wait=False, cancel_futures=True)
        raise
    helper.shutdown(wait=True, cancel_futures=True)
    state.step(1.0, f"Sweep of {parameter}: {sum(p.ok for p in points)} of {n} values ran")
    return points
