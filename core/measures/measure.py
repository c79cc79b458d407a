"""Disclosure-risk and utility measures of any pair of original and masked tables.

Nin, *One dimension microaggregation (Mic1D-k)*, Section 2.3, after Domingo-Ferrer &
Torra (2001) (the paper's [6]) and Nin et al. (its [19]). The tables must hold the same
records in the same order; the masked one may come from any method or tool.

Vocabulary and exact definitions (n records, p quasi-identifiers):

z-scores
    Every quasi-identifier of BOTH tables is z-scored with the ORIGINAL's mean and
    population standard deviation (``ddof=0``; a constant original column is divided by
    1 instead of 0, as in :func:`core.verify.kanonymity.verify_k_anonymity`). Ordinal and nominal
    quasi-identifiers are measured by :mod:`core.data.encoding` (rank and 0/1 distances in
    an embedding where the mixed record distance is Euclidean); "z-scores" below means
    that embedding.
k′ (real anonymity)
    ``n / number of distinct masked quasi-identifier tuples`` (Section 2.3). Each
    intruder scenario also has its own k′ on the attributes it knows (Table 4).
SSE, SST, IL
    ``SSE = Σ_i Σ_j (z_ij − z′_ij)²``, ``SST = Σ_i Σ_j z_ij²`` (= n·p for non-constant
    columns), ``IL = 100·SSE/SST``. For a microaggregation, SSE is the within-group sum
    of squares of :mod:`core.measures.partition`. An ordinal or nominal attribute adds its squared
    distance to SSE and n to SST.
IL1 (the paper's "IL" of the score)
    ``IL1 = 100 · (MV(X, X′) + MV(V, V′) + MV(S, S′) + MAE(R, R′)) / 4`` on the raw
    quasi-identifiers, with V the covariance matrix (population), S its diagonal (the
    variances), R the correlation matrix, and, for entries a (original) and a′ (masked):
    ``MV = mean over the entries of |a − a′| / max(|a|, |a′|)`` (a term is 0 where both
    are 0), ``MAE = mean over the entries of |a − a′|``. V and R are taken over their
    upper triangle including the diagonal (p(p+1)/2 entries). A column that is constant
    has correlation 0 with every column, itself included. Ordinal attributes enter as
    their category ranks. A nominal attribute has no covariance: it enters the data term
    only, as the fraction of records whose category changed (the entry-wise mean
    variation of a 0/1 mismatch); with only nominal attributes the other three terms are
    undefined and IL1 is 100 × the data term. The four terms are the four
    the paper lists; the mean variation of the means (X̄ − X̄′), which the paper
    defines but does not list, is reported as ``il1_components["means"]`` and not
    averaged in.
DLD (distance-based record linkage)
    For every masked record, the original records nearest to it (Euclidean distance on
    the z-scores of the attributes the intruder knows). If its own original is among
    the t records at the minimum distance it scores 1/t, else 0 (exact ties split the
    credit; distances within a relative 1e-12 of the minimum count as ties, float noise
    only). ``DLD = 100 · mean score``. A KD-tree over the DISTINCT original points
    (with multiplicities), searched once per distinct masked point within the distance
    of its records' own originals, stopping at the first nearer original
    (:mod:`core.measures.linkage`): never n × n.
ID (interval disclosure)
    For each known attribute, sort the n original values, ``o_(0) ≤ … ≤ o_(n−1)``. A
    masked value x′ has rank position ``ρ = min(searchsorted_left(o, x′), n − 1)``; its
    interval is ``[o_(max(0, ρ − w)), o_(min(n − 1, ρ + w))]`` with
    ``w = ceil(interval/100 · n)`` ranks (default ``interval = 1``: ±1% of the records
    in rank terms). ID is 100 × the fraction of (record, known attribute) pairs whose
    original value lies in the interval of its masked value. Ordinal attributes use
    their category ranks; a nominal attribute has no interval, so its pair counts as
    disclosed when the masked category equals the original one.
DR and score
    Per scenario ``DR = 0.5·DLD + 0.5·ID``; the reported DLD, ID and DR are the means
    over the scenarios, and ``score = 0.5·IL1 + 0.5·DR`` (lower is better).
Scenarios
    The sets of quasi-identifiers the intruder knows (:func:`intruder_scenarios`):
    ``"all"`` (one scenario, every QI; the default), ``"singles"``, ``"pairs"``,
    ``"every"`` (every non-empty subset, as in Section 4.4) and ``"random"`` (``count``
    subsets of ``size`` attributes drawn with a seed), or an explicit list.
Equivalence classes, risk and EMD
    Classes are the distinct masked quasi-identifier tuples, together with the stratum
    columns when there are strata (as in :func:`core.verify.kanonymity.verify_k_anonymity`). Per-record risk is
    ``1 / size of its class``. For every confidential attribute, the EMD of each class's
    distribution to the whole masked table's (ordered distance for numeric columns,
    equal distance otherwise; :mod:`core.privacy.emd`) and its maximum, the t the
    release happens to reach.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.errors import MicroaggError

from core.data.bits import same_bits
from core.data.encoding import Encoding, encode
from core.data.memory import MEASURING
from core.data.roles import RoleSpec
from core.measures.ahead import (ItemWorks, MeasuresAhead, Work, known_blocks,
                                 known_columns, nominal_mask, ordered_columns)
from core.measures.disclosure import inside_counts, linkage_originals, record_linkage
from core.measures.scenarios import intruder_scenarios, parse_known
from core.measures.utility import il1_mixed
from core.privacy.attributes import class_emds, tclose_attributes
from core.progress import TaskState
from core.verify.rows import distinct_rows, numbered_as_sorted

__all__ = ["Measures", "MeasuresAhead", "ScenarioFigures", "measure"]


@dataclass(frozen=True)
class ScenarioFigures:
    """The figures of one intruder scenario (the attributes it knows)."""

    known: tuple[str, ...]
    k_prime: float
    dld: float
    id: float

    @property
    def dr(self) -> float:
        return 0.5 * self.dld + 0.5 * self.id

    def as_dict(self) -> dict[str, Any]:
        return {"known": list(self.known), "k_prime": self.k_prime, "dld": self.dld,
                "id": self.id, "dr": self.dr}


@dataclass(frozen=True)
class Measures:
    """Every measure of one (original, masked) pair; see the module notes for formulas.

    Attributes
    ----------
    n_records : int
    quasi_identifiers, confidential : tuple of str
    k_prime : float
        Real anonymity on all quasi-identifiers.
    sse, sst, il : float
        On the z-scored quasi-identifiers; ``il = 100·sse/sst``.
    il1 : float
        The paper's information loss (percent).
    il1_components : dict
        ``data``, ``covariances``, ``variances``, ``correlations`` (the four averaged
        terms, as fractions) and ``means`` (reported only).
    scenarios : tuple of ScenarioFigures
    dld, id, dr, score : float
        Means over the scenarios (percent); ``score = 0.5·il1 + 0.5·dr``.
    interval : float
        ID interval half-width, percent of the records in rank terms.
    classes : ndarray of shape (n_records,)
        Equivalence class id of every record (distinct masked QI tuples).
    class_sizes : ndarray of shape (n_classes,)
    record_risk : ndarray of shape (n_records,)
        ``1 / size of the record's class``.
    class_emd : dict
        Confidential column → ndarray of shape (n_classes,), EMD of every class.
    max_emd : dict
        Confidential column → largest class EMD.
    """

    n_records: int
    quasi_identifiers: tuple[str, ...]
    confidential: tuple[str, ...]
    k_prime: float
    sse: float
    sst: float
    il: float
    il1: float
    il1_components: dict[str, float]
    scenarios: tuple[ScenarioFigures, ...]
    dld: float
    id: float
    dr: float
    score: float
    interval: float
    classes: np.ndarray = field(repr=False)
    class_sizes: np.ndarray = field(repr=False)
    record_risk: np.ndarray = field(repr=False)
    class_emd: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    max_emd: dict[str, float] = field(default_factory=dict)

    @property
    def unique_records(self) -> int:
        """Records alone in their class (risk 1)."""
        return int((self.record_risk == 1.0).sum())

    @property
    def group_size_counts(self) -> dict[int, int]:
        """Class size → number of classes of that size."""
        values, counts = np.unique(self.class_sizes, return_counts=True)
        return {int(v): int(c) for v, c in zip(values, counts)}

    def summary(self) -> dict[str, Any]:
        """A flat, JSON-ready dict (the ``--summary-json`` of ``measure``)."""
        out = {
            "n_records": self.n_records,
            "quasi_identifiers": list(self.quasi_identifiers),
            "k_prime": self.k_prime, "sse": self.sse, "sst": self.sst, "il": self.il,
            "il1": self.il1, "dld": self.dld, "id": self.id, "dr": self.dr,
            "score": self.score, "interval": self.interval,
            "il1_components": dict(self.il1_components),
            "scenario_k_prime_mean": float(np.mean([s.k_prime for s in self.scenarios])),
            "scenarios": [s.as_dict() for s in self.scenarios],
            "n_classes": int(self.class_sizes.size),
            "group_size_counts": {str(s): c for s, c in self.group_size_counts.items()},
            "class_size_counts": {str(s): c for s, c in self.group_size_counts.items()},
            "max_record_risk": float(self.record_risk.max()),
            "mean_record_risk": float(self.record_risk.mean()),
            "unique_records": self.unique_records,
        }
        if self.confidential:
            out["confidential"] = list(self.confidential)
            out["max_emd"] = {name: float(v) for name, v in self.max_emd.items()}
        return out


def measure(original: pd.DataFrame, masked: pd.DataFrame, roles: RoleSpec, *,
            known=None, scenarios: str = "all", scenario_size: int | None = None,
            n_scenarios: int = 10, interval: float = 1.0, seed: int | None = 0,
            kinds=None, encoding: Encoding | None = None,
            state: TaskState | None = None,
            ahead: MeasuresAhead | None = None,
            classes_of: tuple[np.ndarray, DistinctRows] | None = None,
            release_classes=None, released_values=None) -> Measures:
    """Compute every measure of Section 2.3 for ``masked`` against ``original``.

    Parameters
    ----------
    original, masked : DataFrame of n_records rows
        The same records in the same order. Neither is modified.
    roles : RoleSpec
        ``quasi_identifiers`` (measured) and ``confidential`` (EMD per class).
    known : sequence of column sequences, or str ``"A,B;C,D"``, optional
        The intruder scenarios; overrides ``scenarios``.
    scenarios : {"all", "singles", "pairs", "every", "random"}
        Preset used when ``known`` is not given (see :func:`intruder_scenarios`).
    scenario_size, n_scenarios, seed
        For ``"random"``: subsets of ``scenario_size`` attributes, ``n_scenarios`` of
        them, drawn with ``numpy.random.default_rng(seed)``.
    interval : float
        ID interval half-width in percent of the records, in rank terms (0 < interval ≤ 100).
    kinds : optional
        Distance kind per confidential column, as in :func:`core.privacy.attributes.tclose_attributes`;
        by default the distances ``roles`` declares (:attr:`RoleSpec.confidential_kinds`).
    encoding : Encoding, optional
        ``original``'s quasi-identifiers measured (:func:`core.data.encoding.encode`); made
        here when not given.
    state : TaskState, optional
        Progress (one span per scenario's record linkage) and cancellation.
    ahead : MeasuresAhead, optional
        The work on the original alone, started ahead for this ``encoding`` and these
        scenarios (ignored otherwise). The figures are the same.
    classes_of : (matrix, DistinctRows), optional
        The classes a caller already found of a matrix (``distinct_rows(matrix)``, in
        its sorted numbering): taken for the release's classes when the release's
        measured quasi-identifiers (and no stratum) are that matrix bit for bit, found
        afresh otherwise. The figures are the same.
    release_classes : callable, optional
        Gives the classes of ``masked`` (:func:`~core.verify.rows.frame_classes` of its
        quasi-identifiers and strata), when the caller finds them once for the verifier
        too; taken (renumbered as ``numpy.unique(axis=0)`` numbers them) unless a
        measured value is NaN, where ``numpy.unique`` keeps rows apart that a grouping
        puts together. The figures are the same.
    released_values : (ndarray, dict), optional
        ``encoding.values_of(masked)``, when the caller has made it for the verifier
        too.

    Returns
    -------
    Measures

    Raises
    ------
    MicroaggError
        Different row counts, a missing or non-numeric column, a bad scenario or interval.

    Examples
    --------
    >>> t = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0]})
    >>> m = measure(t, t, RoleSpec(quasi_identifiers=("a",)))
    >>> (m.k_prime, m.il1, m.dld)
    (1.0, 0.0, 100.0)
    """
    if not isinstance(original, pd.DataFrame) or not isinstance(masked, pd.DataFrame):
        raise MicroaggError("The original and masked tables must be pandas DataFrames.")
    if not isinstance(roles, RoleSpec):
        raise MicroaggError("The roles must be a RoleSpec.")
    qi = list(roles.quasi_identifiers)
    if not qi:
        raise MicroaggError("Name at least one quasi-identifier to measure.")
    if len(original) != len(masked):
        raise MicroaggError(
            f"The masked table has {len(masked)} rows but the original has "
            f"{len(original)}. Compare tables with the same records in the same order.")
    if len(original) < 1:
        raise MicroaggError("The tables have no records.")
    for name, frame in (("original", original), ("masked", masked)):
        for column in qi + list(roles.confidential):
            if column not in frame.columns:
                raise MicroaggError(f"Column '{column}' is not in the {name} table.")
    if not (isinstance(interval, (int, float, np.integer, np.floating))
            and not isinstance(interval, bool) and 0 < float(interval) <= 100):
        raise MicroaggError(
            f"The 'interval' parameter must be a number in (0, 100] (percent of the "
            f"records, in rank terms). Got {interval!r} instead.")
    scenario_sets = (parse_known(known, qi) if known is not None else
                     intruder_scenarios(qi, scenarios, size=scenario_size,
                                        count=n_scenarios, seed=seed))
    if encoding is None:
        encoding = encode(original, roles, strict=False, run=(MEASURING, None))
    raw = encoding.values
    raw_masked, unknown = (released_values if released_values is not None else
                           encoding.values_of(masked))
    for column, count in unknown.items():
        raise MicroaggError(
            f"Column '{column}' of the masked table has {count} value(s) that are not "
            "categories of the original; measure a release of the same table.")
    Z = encoding.X
    # The work on the original alone (the first scenario's search tree, the longest
    # single step, and IL1's moments) comes made ahead or is started here on a helper
    # thread; the ID counts and IL1 run there too, while this thread measures the
    # release. Each figure is computed by the same function either way, so the results
    # do not depend on the threads.
    helpers = ThreadPoolExecutor(max_workers=max(1, min(2, (os.cpu_count() or 2) - 1)),
                                 thread_name_prefix="measures")
    try:
        if ahead is None or not ahead.serves(encoding, scenario_sets):
            ahead = MeasuresAhead(encoding, scenario_sets, helpers)
        figures = _measure(original, masked, roles, qi, scenario_sets, encoding, raw,
                           raw_masked, Z, interval,
                           roles.confidential_kinds if kinds is None else kinds, state,
                           helpers, ahead,
                           classes_of, release_classes)
    except BaseException:  # cancelled or failed: the helpers' work is not waited for
        helpers.shutdown(wait=False, cancel_futures=True)
        raise
    helpers.shutdown(wait=True, cancel_futures=True)  # work never asked for is dropped
    return figures


def _measure(original, masked, roles, qi, scenario_sets, encoding, raw, raw_masked, Z,
             interval, kinds, state, helpers, ahead, classes_of=None,
             release_classes=None) -> Measures:
    """The figures of :func:`measure` from its checked, encoded inputs."""
    # A categorical embedding is wide: record linkage then takes the classes' rows alone.
    Z_masked = encoding.embed(raw_masked) if encoding.numeric else None
    nominal = nominal_mask(encoding)
    if not encoding.numeric:  # ordinal or nominal: distances to the released category
        sse = float(encoding.squared_distances(raw_masked).sum())
        sst = encoding.total_sum_of_squares()
    else:  # the z-score formula of before, so numeric files give the same figures
        diff = Z - Z_masked
        sse = float(np.einsum("ij,ij->", diff, diff))
        sst = float(np.einsum("ij,ij->", Z, Z))
    # An intruder who knows a record's stratum (released as it is) tells strata apart:
    # classes are the released quasi-identifier tuples together with the stratum columns.
    strata = _stratum_codes(masked, roles)

    state = state or TaskState()
    # IL1 first on the helpers: it needs no classes, so it runs while they are found.
    il1_done = Work(helpers, _il1_ahead, raw, raw_masked, nominal, ahead.moments)
    n = len(original)
    keys = np.column_stack([raw_masked, strata]) if strata.shape[1] else raw_masked
    if classes_of is not None and same_bits(keys, classes_of[0]):
        found = classes_of[1]  # what distinct_rows(keys, order="sorted") gives
    elif release_classes is not None and not np.isnan(keys).any():
        found = numbered_as_sorted(keys, release_classes())  # the same classes
    else:
        found = distinct_rows(keys, order="sorted")  # numbered as numpy.unique(axis=0)
    state.check()
    if Z_masked is None:  # one row per class, its records' (record_linkage's per_class)
        Z_masked = encoding.embed(raw_masked[found.first])
    # ID counts per attribute, shared by the scenarios, on the helpers after IL1, while
    # record linkage, the longest step, starts here (this thread then makes IL1 if no
    # helper has started it, and the attributes' counts no helper has begun).
    strata_columns = list(range(len(qi), keys.shape[1]))
    inside_done = ItemWorks(helpers, inside_counts, ordered_columns(qi, scenario_sets, nominal),
                            (raw, raw_masked[found.first]), (found.inverse, float(interval)))
    prepared = ahead.linkage if ahead.linkage is not None else Work(
        helpers, linkage_originals, known_columns(Z, encoding, scenario_sets[0]),
        known_blocks(encoding, scenario_sets[0]))
    figures = []
    for number, subset in enumerate(scenario_sets):
        columns = [qi.index(c) for c in subset]
        ordered = [j for j in columns if not nominal[j]]
        unordered = [j for j in columns if nominal[j]]
        if number == 0 and not prepared.done():  # IL1 here while the tree is built
            il1_done.result(state)
        originals = prepared.result(state)
        if number + 1 < len(scenario_sets):  # the next scenario's tree, ahead
            prepared = Work(helpers, linkage_originals,
                            known_columns(Z, encoding, scenario_sets[number + 1]),
                            known_blocks(encoding, scenario_sets[number + 1]))
        dld = record_linkage(known_columns(Z, encoding, subset),
                             known_columns(Z_masked, encoding, subset),
                             classes=found, originals=originals,
                             per_class=not encoding.numeric,
                             state=state.sub(number / len(scenario_sets),
                                             (number + 1) / len(scenario_sets)))
        if not inside_done.done():  # IL1 here while the counts end, if no helper has it
            il1_done.result(state)
        # = interval_disclosure(raw[:, ordered], raw_masked[:, ordered]), per attribute once
        disclosed = 0.0
        if ordered:
            inside = inside_done.result(state)
            disclosed = float(100.0 * (sum(inside[j] for j in ordered) / (n * len(ordered))))
        if unordered:
            same = 100.0 * float((raw[:, unordered] == raw_masked[:, unordered]).mean())
            disclosed = (disclosed * len(ordered) + same * len(unordered)) / len(columns)
        figures.append(ScenarioFigures(
            known=tuple(subset),
            # Records of one class release equal values: a scenario's distinct rows are
            # found among the classes' first rows (only its columns gathered).
            k_prime=(n / found.n_classes if columns == list(range(len(qi))) else
                     n / distinct_rows(keys[np.ix_(found.first, columns + strata_columns)],
                                       order="any").n_classes),
            dld=dld, id=disclosed,
        ))
    il1, components = il1_done.result(state)
    dld = float(np.mean([f.dld for f in figures]))
    idisc = float(np.mean([f.id for f in figures]))
    dr = float(np.mean([f.dr for f in figures]))

    classes = found.inverse
    class_sizes = np.bincount(classes)
    class_emd: dict[str, np.ndarray] = {}
    confidential = list(roles.confidential)
    if confidential:
        for attribute in tclose_attributes(masked[confidential].reset_index(drop=True),
                                           kinds):
            class_emd[attribute.name] = class_emds(attribute, classes)
    return Measures(
        n_records=len(original), quasi_identifiers=tuple(qi),
        confidential=tuple(confidential), k_prime=len(keys) / found.n_classes,
        sse=sse, sst=sst, il=100.0 * sse / sst if sst > 0 else 0.0,
        il1=il1, il1_components=components, scenarios=tuple(figures), dld=dld, id=idisc,
        dr=dr, score=0.5 * il1 + 0.5 * dr, interval=float(interval), classes=classes,
        class_sizes=class_sizes, record_risk=1.0 / class_sizes[classes],
        class_emd=class_emd,
        max_emd={name: float(v.max()) for name, v in class_emd.items()},
    )


def _il1_ahead(raw, raw_masked, nominal, moments):
    """:func:`il1_mixed` with the original's moments made ahead (a ``Work``)."""
    return il1_mixed(raw, raw_masked, nominal, moments=moments.result())


def _stratum_codes(masked: pd.DataFrame, roles: RoleSpec) -> np.ndarray:
    """The released stratum columns as codes, shape (n_records, n_strata)."""
    columns = [c for c in roles.strata if c in masked.columns]
    if not columns:
        return np.empty((len(masked), 0))
    return np.column_stack([
        pd.factorize(masked[c].reset_index(drop=True), use_na_sentinel=False)[0]
        for c in columns]).astype(np.float64)
