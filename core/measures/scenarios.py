"""The intruder scenarios: which quasi-identifiers the intruder is assumed to know."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from core.errors import MicroaggError

import itertools

__all__ = ["SCENARIO_PRESETS", "parse_known", "intruder_scenarios"]


SCENARIO_PRESETS = ("all", "singles", "pairs", "every", "random")


_MAX_EVERY = 16  # "every" subset: up to 2**16 − 1 scenarios


def parse_known(known, quasi_identifiers: Sequence[str]) -> list[tuple[str, ...]]:
    """Scenarios from ``"A,B;C,D"`` or a sequence of column sequences, checked against the QIs."""
    if isinstance(known, str):
        known = [[c.strip() for c in part.split(",") if c.strip()]
                 for part in known.split(";") if part.strip()]
    out = []
    for subset in known:
        if isinstance(subset, str):
            subset = [subset]
        subset = tuple(str(c) for c in subset)
        if not subset:
            raise MicroaggError("An intruder scenario names no attribute.")
        for column in subset:
            if column not in quasi_identifiers:
                raise MicroaggError(
                    f"Intruder scenario ({', '.join(subset)}): column '{column}' is not a "
                    "quasi-identifier. The intruder knows quasi-identifiers only.")
        if len(set(subset)) != len(subset):
            raise MicroaggError(f"Intruder scenario ({', '.join(subset)}) repeats a column.")
        out.append(subset)
    if not out:
        raise MicroaggError("Give at least one intruder scenario.")
    return out


def intruder_scenarios(quasi_identifiers: Sequence[str], preset: str = "all", *,
                       size: int | None = None, count: int = 10,
                       seed: int | None = 0) -> list[tuple[str, ...]]:
    """The attribute sets an intruder is assumed to know.

    Parameters
    ----------
    quasi_identifiers : sequence of str
    preset : {"all", "singles", "pairs", "every", "random"}
        ``all``: one scenario, every QI. ``singles``: each QI alone. ``pairs``: every
        pair. ``every``: every non-empty subset (2^p − 1, p ≤ 16; Section 4.4).
        ``random``: ``count`` distinct subsets of ``size`` QIs (fewer if fewer exist),
        drawn with ``numpy.random.default_rng(seed)``, each in the QI order.

    Examples
    --------
    >>> intruder_scenarios(["a", "b", "c"], "pairs")
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    """
    qi = tuple(quasi_identifiers)
    p = len(qi)
    if preset == "all":
        return [qi]
    if preset == "singles":
        return [(c,) for c in qi]
    if preset == "pairs":
        if p < 2:
            raise MicroaggError("The 'pairs' scenarios need at least two quasi-identifiers.")
        return list(itertools.combinations(qi, 2))
    if preset == "every":
        if p > _MAX_EVERY:
            raise MicroaggError(
                f"The 'every' scenarios need at most {_MAX_EVERY} quasi-identifiers "
                f"(2^p − 1 subsets); got {p}. Use 'random' instead.")
        return [s for r in range(1, p + 1) for s in itertools.combinations(qi, r)]
    if preset == "random":
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) \
                or not 1 <= size <= p:
            raise MicroaggError(
                f"The random scenarios need a 'size' that is an integer in [1, {p}] (the "
                f"number of quasi-identifiers). Got {size!r} instead.")
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise MicroaggError(
                f"The number of random scenarios must be an integer ≥ 1. Got {count!r}.")
        count = min(int(count), math.comb(p, int(size)))
        rng = np.random.default_rng(seed)
        chosen: list[tuple[str, ...]] = []
        seen: set[tuple[int, ...]] = set()
        while len(chosen) < count:
            pick = tuple(sorted(rng.choice(p, size=int(size), replace=False).tolist()))
            if pick not in seen:
                seen.add(pick)
                chosen.append(tuple(qi[i] for i in pick))
        return chosen
    raise MicroaggError(
        f"The 'scenarios' parameter must be one of {', '.join(repr(s) for s in SCENARIO_PRESETS)}."
        f" Got {preset!r} instead.")
