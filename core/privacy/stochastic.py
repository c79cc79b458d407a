"""Proposition 1 of Domingo-Ferrer & Soria-Comas (2015): the stochastic t-closeness
that Laplace noise of a given ε on the confidential attributes guarantees, with the
equivalence classes of a k-anonymous release (:mod:`core.privacy.noise` adds the noise;
its notes give the choice made where the printed statement and the proof differ)."""

from __future__ import annotations

import math

import numpy as np

from core.errors import MicroaggError

__all__ = ["stochastic_t", "stochastic_t_formula"]


def stochastic_t(epsilon: float, k: int, n_records: int) -> float:
    """The stochastic t that Proposition 1 guarantees.

    ``t = max_E (|E|/N)·(1 + (N − |E|)/|E|·exp(ε)) = (k + (N − k)·exp(ε)) / N``

    with N the number of records and k the size of the **smallest** equivalence class
    (the expression decreases as |E| grows). The distance is the multiplicative one of
    Definition 4 (a ratio >= 1); ``t = 1`` when one class holds every record.

    Parameters
    ----------
    epsilon : float
        ε of the noise on the confidential attribute(s), >= 0.
    k : int
        Size of the smallest equivalence class, ``1 <= k <= n_records``.
    n_records : int

    Examples
    --------
    >>> round(stochastic_t(1.0, 5, 100), 6)  # (5 + 95·e) / 100
    2.632368
    >>> stochastic_t(800.0, 5, 100)  # exp(800) is beyond floating point: no bound
    inf
    """
    epsilon, k, n = _check_t_inputs(epsilon, k, n_records)
    if k == n:
        return 1.0
    try:
        return (k + (n - k) * math.exp(epsilon)) / n
    except OverflowError:
        return math.inf


def stochastic_t_formula(epsilon: float, k: int, n_records: int) -> str:
    """The formula of :func:`stochastic_t` with the numbers filled in, for the report."""
    t = stochastic_t(epsilon, k, n_records)
    return (f"t = max over classes E of (|E| + (N − |E|)·exp(ε)) / N, reached at the "
            f"smallest class: ({k} + ({n_records} − {k})·exp({epsilon:g})) / {n_records} "
            f"= {t:.6g} (multiplicative distance, Definition 4; Proposition 1 of "
            "Domingo-Ferrer & Soria-Comas 2015)")


def _check_t_inputs(epsilon, k, n_records):
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer,
                                                             np.floating)) \
            or not math.isfinite(float(epsilon)) or float(epsilon) < 0:
        raise MicroaggError(f"ε must be a finite number >= 0. Got {epsilon!r}.")
    for label, value in (("n_records", n_records), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise MicroaggError(f"The '{label}' parameter must be an integer of at least 1. "
                                f"Got {value!r}.")
    if k > n_records:
        raise MicroaggError(f"The smallest class ({k}) cannot be larger than the table "
                            f"({n_records} records).")
    return float(epsilon), int(k), int(n_records)
