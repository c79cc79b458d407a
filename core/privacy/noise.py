"""Laplace noise on the confidential attributes, and the stochastic t it guarantees.

Domingo-Ferrer & Soria-Comas, "From t-closeness to differential privacy and vice versa
in data anonymization", Knowledge-Based Systems 74 (2015) 151–158, Sections 3–4.

Vocabulary:

bounds
    Each noised attribute has a public range ``[LO, HI]`` given by the user. The noise
    ``Laplace(0, (HI − LO)/ε)`` added to one record's value makes the released value
    ε-differentially private for that record: for any two values c, c' in ``[LO, HI]``
    and any set B, ``Pr(c + noise ∈ B) <= exp(ε)·Pr(c' + noise ∈ B)``, which is the
    inequality Proposition 1's proof starts from. The bounds are never taken from the
    data (that would leak the extreme values): they are required.
stochastic t-closeness (Definition 3)
    t-closeness of the distribution the noise induces (not of one noisy realization),
    under the multiplicative distance of Definition 4 (a ratio >= 1; see
    :mod:`core.privacy.multiplicative`). It is not comparable with the EMD t of tc-merge and its kin.
Proposition 1
    k-anonymous classes of the quasi-identifiers plus ε-differential privacy of the
    confidential attributes give stochastic t-closeness with
    ``t = max_E (|E| + (N − |E|)·exp(ε)) / N`` (:func:`stochastic_t`).

Choices (each is tested):

* **Values outside their bounds raise** :class:`MicroaggError` naming the column, the
  number of such values and the first data row. They are not clipped silently: the
  bounds are then wrong, and the user must say so (``out_of_bounds="clip"`` clips and
  reports how many values were clipped per column in the result).
* **Noisy values are not clipped back into [LO, HI]** afterwards. That would be
  harmless for privacy (post-processing) but would bias the values near the bounds.
* **One ε per attribute.** Each noised attribute gets noise of scale ``(HI − LO)/ε``,
  so each attribute alone is ε-differentially private and t-close in the stochastic
  sense with :func:`stochastic_t` of ε (Section 4, approach (ii), one attribute at a
  time). Together, p attributes are ``p·ε``-differentially private (sequential
  composition), so the joint distribution (approach (i), the one Proposition 1 is
  stated for) gets ``stochastic_t(p·ε, ...)``. Both are reported.
* **Proposition 1's formula.** The proof ends with
  ``t >= (|E|/N)·(1 + (N − |E|)/|E|·exp(ε))``; the statement as printed reads
  ``N − |E| − 1`` in place of ``N − |E|``. We use what the proof establishes
  (``N − |E|``), which is the larger, i.e. the safer, of the two. It is largest for the
  smallest class, so only the smallest class size is needed. The other direction of
  the proof, ``N / (|E| + (N − |E|)·exp(−ε))``, is never larger (tested).
* **Randomness**: ``numpy.random.default_rng``; attribute j (in the order given) uses
  the j-th child of ``SeedSequence(seed)``, so adding a column does not change the noise
  of the others and the same seed gives the same output. Without a seed, one is drawn
  from the operating system and recorded in the result so the run can be repeated.
* **The seed is a secret.** Whoever knows the seed (and the bounds and ε, which the
  report states) can draw the same noise and subtract it: the release would then be
  the microaggregated table alone. So the engine draws a fresh seed for every run
  unless one is given on purpose (``noise_seed``), and no report, summary sheet or
  summary JSON states it; a saved project keeps it, to recompute its runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.privacy.stochastic import stochastic_t, stochastic_t_formula

__all__ = ["check_noise_inputs", "parse_bounds", "dp_confidential", "stochastic_t",
           "stochastic_t_formula", "DPResult", "add_laplace_noise"]

_OUT_OF_BOUNDS = ("raise", "clip")


def parse_bounds(text: str | Sequence[str]) -> dict[str, tuple[float, float]]:
    """Parse ``"COL=LO:HI"`` bounds (the CLI's ``--confidential-bounds``).

    Parameters
    ----------
    text : str or sequence of str
        One or more ``COL=LO:HI`` separated by commas (or given as separate strings,
        for column names that contain a comma). The column name is everything before
        the last ``=``.

    Returns
    -------
    dict column → (LO, HI)

    Examples
    --------
    >>> parse_bounds("income=0:200000, tax=-50:1e4")
    {'income': (0.0, 200000.0), 'tax': (-50.0, 10000.0)}
    """
    items = [text] if isinstance(text, str) else list(text)
    entries = [part.strip() for item in items for part in str(item).split(",")]
    entries = [e for e in entries if e]
    if not entries:
        raise MicroaggError("--confidential-bounds is empty; give COL=LO:HI for every "
                            "confidential column, e.g. income=0:200000.")
    bounds: dict[str, tuple[float, float]] = {}
    for entry in entries:
        column, equals, interval = entry.rpartition("=")
        column = column.strip()
        if not equals or not column:
            raise MicroaggError(f"Confidential bounds '{entry}' must look like COL=LO:HI "
                                "(e.g. income=0:200000).")
        low_text, colon, high_text = interval.partition(":")
        if not colon:
            raise MicroaggError(f"Confidential bounds of '{column}' must be LO:HI; got "
                                f"'{interval}'.")
        try:
            low, high = float(low_text), float(high_text)
        except ValueError:
            raise MicroaggError(f"Confidential bounds of '{column}' must be two numbers "
                                f"LO:HI; got '{interval}'.") from None
        _check_bounds(column, low, high)
        if column in bounds:
            raise MicroaggError(f"Confidential bounds of '{column}' are given twice.")
        bounds[column] = (low, high)
    return bounds


def dp_confidential(values, *, epsilon: float, lower: float, upper: float, random_state,
                    name: str = "confidential", out_of_bounds: str = "raise") -> np.ndarray:
    """Add ``Laplace(0, (upper − lower)/epsilon)`` noise to every value (Section 2.3).

    Parameters
    ----------
    values : array-like of shape (n_records,)
        Numeric, finite, within ``[lower, upper]``.
    epsilon : float
        The differential privacy parameter, > 0.
    lower, upper : float
        The public bounds of the attribute (``lower < upper``); required.
    random_state : int or numpy.random.Generator
        The seed (or generator); the same seed gives the same noise.
    name : str
        The column name, for messages.
    out_of_bounds : {"raise", "clip"}
        What to do with a value outside the bounds: raise (default) or clip it first.

    Returns
    -------
    ndarray of shape (n_records,), float64

    Examples
    --------
    >>> noisy = dp_confidential([10.0, 20.0], epsilon=1.0, lower=0, upper=100,
    ...                         random_state=7)
    >>> noisy.shape
    (2,)
    """
    noisy, _ = _noise_column(values, epsilon=epsilon, lower=lower, upper=upper,
                             rng=_generator(random_state), name=name,
                             out_of_bounds=out_of_bounds)
    return noisy


@dataclass(frozen=True)
class DPResult:
    """A table whose confidential attributes carry Laplace noise, and what it guarantees.

    Attributes
    ----------
    frame : DataFrame
        A new frame: the noised columns replaced, everything else unchanged.
    epsilon : float
        ε per attribute.
    bounds : dict column → (LO, HI)
    scale : dict column → float
        The Laplace scale (HI − LO)/ε.
    clipped : dict column → int
        Values clipped into the bounds before the noise (only with ``out_of_bounds="clip"``).
    seed : int
        The seed used (drawn and recorded when none was given). A secret (module notes):
        never written into a report or summary.
    seed_given : bool
        Whether the seed was given rather than drawn for this run.
    changes : dict column → (float, float)
        What the noise cost each noised column of the released table: the mean absolute
        difference from the original values, and the correlation with them (NaN for a
        constant column). The information-loss figures (IL, IL1, the score) measure the
        quasi-identifiers only.
    n_records, smallest_class : int
        N and the smallest equivalence class of the masked quasi-identifiers.
    stochastic_t : float
        Proposition 1's t for each attribute on its own (ε per attribute).
    stochastic_t_joint : float
        Proposition 1's t for all noised attributes together (``p·ε``).
    formula_text : str
    """

    frame: pd.DataFrame
    epsilon: float
    bounds: dict[str, tuple[float, float]]
    scale: dict[str, float]
    clipped: dict[str, int]
    seed: int
    n_records: int
    smallest_class: int
    stochastic_t: float
    stochastic_t_joint: float
    formula_text: str
    notes: tuple[str, ...] = field(default_factory=tuple)
    seed_given: bool = False
    changes: dict[str, tuple[float, float]] = field(default_factory=dict)

    def summary(self) -> dict:
        """JSON-ready fields for ``--summary-json``."""
        return {"epsilon": self.epsilon, "stochastic_t": self.stochastic_t,
                "stochastic_t_joint": self.stochastic_t_joint,
                "confidential_bounds": {c: list(b) for c, b in self.bounds.items()},
                "laplace_scale": dict(self.scale), "noise_seed": self.seed_text,
                "noise_mean_absolute_change": {c: v[0] for c, v in self.changes.items()},
                "noise_correlation_with_original": {c: v[1]
                                                    for c, v in self.changes.items()},
                "dp_clipped": dict(self.clipped)}

    @property
    def seed_text(self) -> str:
        """Where the noise's seed came from, without the seed (a secret, module notes)."""
        if self.seed_given:
            return ("given in the run's settings and not stated here; whoever learns it "
                    "can remove the noise, so keep those settings (project file, command "
                    "line) as confidential as the original data")
        return ("drawn afresh from the operating system for this run and not stated here "
                "(a saved project keeps it: keep the project file as confidential as the "
                "original data)")

    def describe(self) -> str:
        """The report paragraph."""
        columns = ", ".join(f"'{c}' (scale {s:g})" for c, s in self.scale.items())
        text = (f"Laplace noise with scale (HI − LO)/ε, ε = {self.epsilon:g}, was added to "
                f"{columns}. Each of these attributes is "
                f"{self.epsilon:g}-differentially private; with the {self.smallest_class}-"
                f"record smallest class of {self.n_records} records, Proposition 1 gives "
                f"stochastic t-closeness (multiplicative distance, not EMD) with "
                f"{self.formula_text}.")
        if len(self.scale) > 1:
            text += (f" All {len(self.scale)} attributes together are "
                     f"{len(self.scale) * self.epsilon:g}-differentially private, giving "
                     f"stochastic t = {self.stochastic_t_joint:.6g} for their joint "
                     "distribution.")
        if self.changes:
            text += (" What the noise cost (the information-loss figures measure the "
                     "quasi-identifiers only): " + "; ".join(
                         f"'{c}' changed by {change:.6g} on average, correlation with the "
                         f"original {correlation:.3f}"
                         for c, (change, correlation) in self.changes.items()) + ".")
        return " ".join([text, *self.notes])


def add_laplace_noise(masked: pd.DataFrame, bounds: Mapping[str, tuple[float, float]], *,
                      epsilon: float, quasi_identifiers: Sequence[str],
                      confidential: Sequence[str] | None = None, random_state=None,
                      out_of_bounds: str = "raise") -> DPResult:
    """Noise the confidential columns of a k-anonymous masked table (Section 4).

    Run after the quasi-identifiers have been microaggregated (the engine does that):
    the equivalence classes are the distinct masked quasi-identifier tuples, read from
    ``masked`` itself, and give the smallest class for Proposition 1.

    Parameters
    ----------
    masked : DataFrame
        The masked table. Never modified.
    bounds : mapping column → (LO, HI)
        Required for every column to noise (see :func:`parse_bounds`).
    epsilon : float
        ε per attribute, > 0.
    quasi_identifiers : column names
    confidential : column names, optional
        The confidential columns; each must have bounds, and each bounded column must be
        one of them. Default: the columns of ``bounds``.
    random_state : int or None
        The seed. None draws one from the operating system and records it.
    out_of_bounds : {"raise", "clip"}

    Returns
    -------
    DPResult

    Examples
    --------
    >>> masked = pd.DataFrame({"age": [30.5, 30.5, 50.0, 50.0], "wage": [10, 20, 30, 40]})
    >>> r = add_laplace_noise(masked, {"wage": (0, 100)}, epsilon=1.0,
    ...                       quasi_identifiers=["age"], random_state=1)
    >>> r.scale, round(r.stochastic_t, 4)
    ({'wage': 100.0}, 1.8591)
    """
    if not isinstance(masked, pd.DataFrame):
        raise MicroaggError("The masked table must be a pandas DataFrame.")
    bounds = dict(bounds)
    confidential = list(bounds) if confidential is None else list(confidential)
    if not confidential:
        raise MicroaggError("Differential privacy noise needs at least one confidential "
                            "column with bounds COL=LO:HI.")
    for column in confidential:
        if column not in bounds:
            raise MicroaggError(
                f"Confidential column '{column}' has no bounds. Give "
                f"--confidential-bounds {column}=LO:HI: the bounds are never taken from the "
                "data.")
    for column in bounds:
        if column not in confidential:
            raise MicroaggError(f"Bounds are given for '{column}', which is not a "
                                "confidential column.")
    qi = list(quasi_identifiers)
    for column in qi + confidential:
        if column not in masked.columns:
            raise MicroaggError(f"Column '{column}' is not in the masked table.")
    if not qi:
        raise MicroaggError("Equivalence classes come from the quasi-identifiers; none "
                            "was given.")
    _check_epsilon(epsilon)
    given = random_state is not None
    seed = _seed(random_state)
    children = np.random.SeedSequence(seed).spawn(len(confidential))
    frame = masked.copy()
    scale, clipped = {}, {}
    for column, child in zip(confidential, children):
        low, high = bounds[column]
        noisy, n_clipped = _noise_column(masked[column], epsilon=epsilon, lower=low,
                                         upper=high, rng=np.random.default_rng(child),
                                         name=column, out_of_bounds=out_of_bounds)
        frame[column] = pd.Series(noisy, index=masked.index, name=column)
        scale[column] = (float(high) - float(low)) / float(epsilon)
        clipped[column] = n_clipped
    changes = {c: _change(masked[c], frame[c]) for c in confidential}
    sizes = masked.groupby(qi, dropna=False, sort=False).size().to_numpy()
    n, smallest = len(masked), int(sizes.min())
    notes = tuple(f"{c}: {v} value(s) outside the bounds were clipped to them before the "
                  "noise." for c, v in clipped.items() if v)
    return DPResult(
        frame=frame, epsilon=float(epsilon),
        bounds={c: (float(bounds[c][0]), float(bounds[c][1])) for c in confidential},
        scale=scale, clipped=clipped, seed=seed, n_records=n, smallest_class=smallest,
        stochastic_t=stochastic_t(epsilon, smallest, n),
        stochastic_t_joint=stochastic_t(len(confidential) * float(epsilon), smallest, n),
        formula_text=stochastic_t_formula(epsilon, smallest, n), notes=notes,
        seed_given=given, changes=changes)


def _change(before: pd.Series, after: pd.Series) -> tuple[float, float]:
    """(mean |after − before|, correlation of after with before; NaN when constant)."""
    a = before.to_numpy(dtype=np.float64)
    b = after.to_numpy(dtype=np.float64)
    change = float(np.mean(np.abs(b - a))) if len(a) else 0.0
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return change, float("nan")
    return change, float(np.corrcoef(a, b)[0, 1])


# --- Helpers --------------------------------------------------------------------------

def check_noise_inputs(table: pd.DataFrame, bounds, *, epsilon,
                       confidential: Sequence[str], seed=None) -> dict[str, tuple[float, float]]:
    """Every check :func:`add_laplace_noise` makes, on the original table, before a run.

    ``bounds`` is a mapping or the ``"COL=LO:HI,..."`` text; returns it as a mapping.
    ``seed`` is the noise's seed (None: drawn for the run). Raises
    :class:`MicroaggError` naming the column at fault.
    """
    if seed is not None:
        _seed(seed, required=True, name="noise seed")
    if bounds is None:
        raise MicroaggError("Give the bounds of every confidential column (e.g. "
                            "'income=0:200000'); they are never taken from the data.")
    bounds = parse_bounds(bounds) if isinstance(bounds, (str, list, tuple)) else dict(bounds)
    _check_epsilon(epsilon)
    if not confidential:
        raise MicroaggError("Differential privacy protects confidential attributes: mark "
                            "at least one column as confidential.")
    for column in bounds:
        if column not in confidential:
            raise MicroaggError(f"Bounds are given for '{column}', which is not a "
                                "confidential column.")
    for column in confidential:
        if column not in bounds:
            raise MicroaggError(
                f"Confidential column '{column}' has no bounds. Give "
                f"--confidential-bounds {column}=LO:HI: the bounds are never taken from the "
                "data.")
        low, high = bounds[column]
        _noise_column(table[column], epsilon=epsilon, lower=low, upper=high,
                      rng=np.random.default_rng(0), name=column, out_of_bounds="raise",
                      draw=False)
    return bounds


def _noise_column(values, *, epsilon, lower, upper, rng, name, out_of_bounds, draw=True):
    _check_epsilon(epsilon)
    _check_bounds(name, lower, upper, epsilon)
    if out_of_bounds not in _OUT_OF_BOUNDS:
        raise MicroaggError(f"The 'out_of_bounds' parameter must be one of "
                            f"{', '.join(map(repr, _OUT_OF_BOUNDS))}. Got {out_of_bounds!r}.")
    series = pd.Series(values).reset_index(drop=True)
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise MicroaggError(f"Confidential column '{name}' is not numeric; Laplace noise "
                            "needs numbers.")
    array = series.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(array)
    if bad.any():
        raise MicroaggError(f"Confidential column '{name}' has {int(bad.sum())} missing or "
                            f"infinite value(s) (first at data row "
                            f"{int(np.flatnonzero(bad)[0]) + 1}).")
    outside = (array < lower) | (array > upper)
    if outside.any() and out_of_bounds == "raise":
        first = int(np.flatnonzero(outside)[0])
        raise MicroaggError(
            f"Confidential column '{name}' has {int(outside.sum())} value(s) outside its "
            f"bounds [{lower:g}, {upper:g}] (first at data row {first + 1}: "
            f"{array[first]:g}). Widen the bounds; they must hold every possible value.")
    if not draw:
        return array, int(outside.sum())
    array = np.clip(array, lower, upper)
    noise = rng.laplace(0.0, (float(upper) - float(lower)) / float(epsilon), len(array))
    return array + noise, int(outside.sum())


def _generator(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(_seed(random_state, required=True))


def _seed(random_state, required: bool = False, name: str = "seed ('random_state')") -> int:
    if random_state is None and not required:
        return int(np.random.SeedSequence().entropy)
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) \
            or random_state < 0:
        raise MicroaggError(f"The {name} must be a whole number >= 0. Got "
                            f"{random_state!r}.")
    return int(random_state)


def _check_epsilon(epsilon) -> None:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer,
                                                             np.floating)) \
            or not math.isfinite(float(epsilon)) or float(epsilon) <= 0:
        raise MicroaggError(f"The 'epsilon' parameter must be a finite number greater than "
                            f"0. Got {epsilon!r}.")


def _check_bounds(column, low, high, epsilon=None) -> None:
    if not (math.isfinite(low) and math.isfinite(high)):
        raise MicroaggError(f"Confidential bounds of '{column}' must be finite; got "
                            f"{low:g}:{high:g}.")
    if not low < high:
        raise MicroaggError(f"Confidential bounds of '{column}' must have LO < HI; got "
                            f"{low:g}:{high:g}.")
    if epsilon is not None and not math.isfinite((float(high) - float(low)) / float(epsilon)):
        raise MicroaggError(f"Confidential bounds of '{column}' ({low:g}:{high:g}) with "
                            f"ε = {float(epsilon):g} give a noise scale (HI − LO)/ε beyond "
                            "floating point: every released value would be infinite. "
                            "Give the bounds in smaller units, or a larger ε.")
