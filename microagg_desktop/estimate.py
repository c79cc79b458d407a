"""A rough time estimate of a run, from a cost model per method family. No Qt.

Each family's time is ``constant × cost(n, d, k, ...)`` plus the steps every run shares
after the method (aggregation, measures, verification), modelled as
``n · log2 n · (a + b·d + c·d²)`` (:func:`shared_seconds`). Their cost depends on the
release: record linkage against groups packed in space (the multivariate methods) grows
about as d², as a k-d tree search does in more dimensions, while against groups cut along
one order (projections, univariate cuts) it stays close to linear. With the
compiled kernels, MDAV, CBFS, TFRP, tc-merge and tc-tfirst search a spatial index
("indexed": about n·√n·d/√k), and so does GSMS through its neighbour lists; each
cluster of tc-kfirst looks through a share of the records left that grows as t shrinks
("swept"); V-MDAV still passes over the records left once per group ("quadratic");
without numba the numpy references scan every record per group ("quadratic"). The
constants were measured on a two-core machine with ``benchmarks/bench_estimate.py`` and
``benchmarks/bench_scale.py`` (random normal data); the estimate is meant to tell
seconds from minutes from hours, not to be exact, so it is shown as a range.

Nominal quasi-identifiers
    A nominal attribute of m categories is m indicator columns of the embedding
    (:mod:`core.data.encoding`), and the methods search and measure in that space, so it
    does not count as one attribute: :class:`QuasiIdentifiers` describes the
    attributes, :func:`dimensions` turns them into the ``d`` of the models. Measured
    (``benchmarks/bench_estimate.py --nominal``, MDAV, 100,000 and 300,000 records):
    an indicator column weighs less than a numeric one (a row's categories are one
    column each), more so the fewer nominal attributes there are (a search through one
    attribute's categories prunes well, through several of them combined it does not),
    and identical rows, which the spatial index stores once, make the search cheaper
    as the square root of the share of distinct rows. The methods whose searches bound
    each attribute's indicator block as one attribute (:data:`BLOCK_AWARE`) weigh an
    indicator column less again (:data:`BLOCK_WEIGHT`).

Wide tables
    The fits above are at 10 search columns and fewer. A k-d tree of 100,000 records
    splits on about 13 of its columns, so with more columns every search prunes less:
    MDAV at 100,000 records took 1.7, 3.9, 6.1 and 7.9 s for the method and 0.5, 3.0,
    10.6 and 21.8 s after it at 10, 15, 20 and 25 columns, where the model of 10 columns
    said 1.6, 2.5, 3.3 and 4.1 s and 0.6, 1.2, 2.0 and 3.0 s; from 100,000 to 300,000
    records at 20 columns the method grew as n^2.1 and record linkage as n^1.75. Above
    :data:`WIDE_FROM` columns the indexed methods' cost takes :func:`wide_method_factor`
    and the shared steps of a spatial release :func:`wide_linkage_seconds`. Columns are
    counted as the trees hold them, a nominal attribute as one
    (:attr:`QuasiIdentifiers.count`), so the tables with nominal attributes fitted above
    (at most 7 such columns) keep their figures. On a table of ten nominal attributes
    the growth per nominal attribute is held after four (:data:`NOMINAL_GROWTH_UPTO`),
    and V-MDAV takes the factor too (:data:`BALL_METHODS`).

Examples
--------
>>> estimate_seconds("mdav", 1_000, 5, k=3) < estimate_seconds("mdav", 100_000, 5, k=3)
True
>>> format_range(90.0)
'about 1–3 minutes'
"""

from __future__ import annotations

import math
from typing import NamedTuple

from core.compiled import COMPILED

__all__ = ["FAMILIES", "SHARED", "QuasiIdentifiers", "dimensions", "family_of",
           "BLOCK_AWARE", "shared_seconds", "estimate_seconds", "format_range", "estimate_text",
           "SHOW_ABOVE", "wide_method_factor", "wide_linkage_seconds", "estimate_parts",
           "method_share"]

SHOW_ABOVE = 2.0
"""Estimates below this many seconds are not worth showing."""

SHARED = 3.0e-8
"""Seconds per ``n · log2 n`` of the steps every run shares whatever the release (encoding,
the release's classes, verification), with the compiled measures."""

RELEASES: dict[str, tuple[float, float]] = {
    # name: (b, c) of the shared steps' n · log2 n · (SHARED + b·d + c·d²), from the time
    # after the method (benchmarks/bench_estimate.py, 1,000,000 records): PCP 0.98 s at
    # d = 3 and 2.0 s at d = 10, optimal univariate 0.74 s (d = 1), individual ranking
    # 3.0 s (d = 5) and 5.2 s (d = 10), Mic1D-k 2.6–2.7 s (d = 10; its classes are
    # found once)
    "pcp": (7.0e-9, 0.0), "zscores": (7.0e-9, 0.0), "optimal-univariate": (7.0e-9, 0.0),
    "individual-ranking": (2.2e-8, 0.0), "mic1d": (1.0e-8, 0.0),
}
"""The shared steps' terms per attribute for releases cut along an order; every other
method releases groups packed in space (:data:`SPATIAL_RELEASE`)."""

SPATIAL_RELEASE = (7.0e-9, 2.6e-9)
"""(b, c) for a release of groups packed in space (MDAV 200,000 × 10: 1.23 s after the
method; 300,000 × 3: 0.27 s)."""

FAMILIES: dict[str, tuple[str, float]] = {
    # name: (cost model, seconds per unit of cost), with the compiled kernels
    # (benchmarks/bench_scale.py, 100,000 to 1,000,000 records, d = 10). MDAV, CBFS and
    # TFRP search on two threads when the second processor is free (1,000,000 × 10:
    # about 50, 31 and 28 s, MDAV 70 s on one thread; 100,000: 1.8, 1.3 and 1.2 s)
    "mdav": ("indexed", 1.15e-8),
    "cbfs": ("indexed", 7.0e-9),
    "tfrp": ("indexed", 6.3e-9),
    "vmdav": ("quadratic", 3.0e-10),
    "gsms": ("indexed", 8.0e-8),
    "optimal-univariate": ("sorted", 1.0e-8),
    "individual-ranking": ("sorted", 1.4e-8),
    "pcp": ("sorted", 5.0e-9),
    "zscores": ("sorted", 4.0e-9),
    "tc-merge": ("indexed", 1.7e-8),  # 100,000, t = 0.1: 2.2–2.3 s (MDAV 1.9 s)
    "tc-kfirst": ("swept", 8.0e-10),  # 100,000, t = 0.1: 42 s; t = 0.2: 27 s
    "tc-tfirst": ("indexed", 2.2e-8),  # 100,000, t = 0.1: 3.2–3.3 s (MDAV 1.9 s)
    "tc-bucket": ("indexed", 2.2e-8),  # t = 2: 30,000: 0.58 s; 100,000: 3.3; 300,000: 14.8
    "mic1d": ("values", 1.3e-8),  # 1,000,000 × 10: 2.9–3.1 s (numpy steps: 4.9–5.9 s)
}
"""The cost model and constant of each built-in method; others use their scope's."""

REFERENCE_FAMILIES: dict[str, tuple[str, float]] = {
    **FAMILIES,
    "mdav": ("quadratic", 8.5e-9), "cbfs": ("quadratic", 8.5e-9),
    "tc-tfirst": ("quadratic", 1.9e-8),
    "tfrp": ("quadratic", 8.5e-9), "vmdav": ("quadratic", 2.5e-8),
    "optimal-univariate": ("sorted", 4.4e-7), "individual-ranking": ("sorted", 4.4e-7),
    "pcp": ("sorted", 2.0e-8), "zscores": ("sorted", 2.0e-8),
    "tc-merge": ("quadratic", 1.9e-8), "tc-kfirst": ("quadratic", 3.6e-8),
    "tc-bucket": ("quadratic", 3.0e-9),
    "mic1d": ("values", 1.2e-7),
}
"""The same without numba (``core.compiled.COMPILED`` False): the numpy reference paths."""

REFERENCE_SHARED = 1.5e-7
"""Seconds per ``n · log2 n · d`` of the shared steps without numba (one term)."""

REFINE: dict[str, tuple[float, float]] = {"tfrp2": (7.5e-11, 3.8e-10),
                                          "igd": (6.5e-10, 1.5e-9)}
"""Seconds per ``n² · d / k`` of a refinement after the partition, for groups packed in
space and for groups cut along one order (:data:`RELEASES`). A record's nearest group
is found by a sweep over every group (on two threads) or by candidate lists filled the
same way, as each pays (:mod:`core.methods.refine_way`), and after groups cut along one
order the refinement rebuilds nearly every group (PCP's SSE at 20,000 × 10 falls from
138,208 to 41,513 under TFRP2, MDAV's from 34,101 to 33,984). Measured at 20,000,
50,000 and 100,000 × 10, k = 5 (``benchmarks/scale_refine_ways.py``): MDAV + TFRP2
0.09, 0.41 and 1.27 s; MDAV + IGD 0.93, 3.9 and 11.8–12.3 s; PCP + TFRP2 0.45, 1.9 and
6.7 s; PCP + IGD 2.0, 8.6 and 25.5 s (z-scores + IGD 25.6 s), IGD skipping the looks
that still hold (:mod:`core.methods.refine_track`; 13.4–13.9 and 28.2–30.0 s at 100,000
looking at every group). Per ``n² · d / k`` PCP + IGD costs more at smaller sizes
(2.5e−9 at 20,000, 1.3e−9 at 100,000), so its coefficient stays at 1.5e−9: in the
window PCP + IGD on 30,000 × 10 took 5.0 s, inside "about 1–6 seconds". On the lists
alone they took 0.19–0.90 s, 0.95–5.4 s, 2.4–14.4 s and 5.5–27.6 s at 20,000 and
50,000. The model before
(``n · log2 n · d``) said 20 s for PCP + TFRP2 at 300,000, which did not end in ten
minutes."""

REFERENCE_REFINE: dict[str, tuple[float, float]] = {"tfrp2": (1.25e-8, 2.1e-7),
                                                    "igd": (2.9e-8, 2.3e-7)}
"""The same with the numpy reference passes (about 10 minutes for IGD at 100,000 after
MDAV); for groups cut along one order scaled by the compiled ratio, not measured."""


class QuasiIdentifiers(NamedTuple):
    """What the estimate needs to know of the quasi-identifiers.

    ``numeric``: the numeric and ordinal ones (one column each); ``nominal``: the
    categories of each nominal one; ``distinct``: at most this many distinct rows
    (the product of the attributes' distinct values, when it is below the records), or
    None when nothing bounds them.
    """

    numeric: int
    nominal: tuple[int, ...] = ()
    distinct: int | None = None

    @classmethod
    def of(cls, attributes: "int | QuasiIdentifiers") -> "QuasiIdentifiers":
        """``attributes`` as given, or a number of them as that many numeric ones."""
        return attributes if isinstance(attributes, cls) else cls(int(attributes))

    @property
    def count(self) -> int:
        """The quasi-identifiers."""
        return self.numeric + len(self.nominal)

    @property
    def width(self) -> int:
        """The embedded columns: one per numeric or ordinal attribute, one per category."""
        return self.numeric + sum(self.nominal)


NOMINAL_WEIGHT, NOMINAL_GROWTH = 0.22, 1.3
"""An indicator column weighs ``NOMINAL_WEIGHT · NOMINAL_GROWTH^(a − 1)`` numeric
attributes in a method's cost, a the number of nominal attributes. Fitted on MDAV,
k = 5 (``benchmarks/bench_estimate.py --nominal``): measured / model at 300,000 records
0.81 (two numeric, one ordinal and nominal attributes of 2, 5, 20 and 30 categories),
1.19 (four numeric, 300 categories), 1.31 (two numeric and five nominal of 2, 20, 30, 20
and 50 categories), 0.69 (one numeric and 2, 5 and 20 categories, 19,479 distinct rows);
at 100,000 within 0.6–1.4; CBFS alike (0.6–1.5). At 1,000,000 records the first table
took 120 s (0.74) but the five-nominal one 841 s (1.97, the top of the range shown):
with many nominal attributes the searches grow faster than n·√n, which a fit at 100,000
and 300,000 does not see."""

NOMINAL_GROWTH_UPTO = 4
"""The growth per nominal attribute stops after this many (the fit's tables had up to
five): on a table of four numeric or ordinal and ten nominal attributes (162
categories, ``census-wide`` in ``benchmarks/bench_estimate.py``) it put record linkage
and the other shared steps at 9.8 s where they took 2.7 s (MDAV, 100,000 records) and
PCP at 30 s where it took 7.3 s (300,000 records); held after four, the estimates came
to 0.66–1.25 times those runs."""


BLOCK_AWARE = frozenset({"mdav", "cbfs", "tfrp", "tc-merge", "tc-tfirst"})
"""The methods whose searches bound a nominal attribute's indicator columns as one
attribute (:mod:`core.methods.spatial_screen`'s notes, Block bounds)."""

BLOCK_WEIGHT, BLOCK_GROWTH = 0.065, 1.1
"""``NOMINAL_WEIGHT`` and ``NOMINAL_GROWTH`` for the :data:`BLOCK_AWARE` methods' own
cost. Fitted on whole runs (``benchmarks/bench_estimate.py --nominal``, k = 5) after the
searches learnt the blocks: MDAV on the tables above took 2.27, 7.54 and 33.5 s (census
table, 100,000, 300,000 and 1,000,000 records), 3.67, 18.8 and 112 s (five nominal),
7.27 and 25.5 s (300 categories), 0.56 and 1.43 s (few categories); tc-merge and
tc-tfirst at 100,000 records 5.69 and 6.41 s (five nominal), 2.70 and 2.65 s (census);
CBFS on the census table 2.09 s; measured / model 0.73–1.34. GSMS, which took the
same 7.0 and 14.4 s as before at 30,000 records, keeps the weights above."""


CODES_WEIGHT = 1.3
CODES_METHODS = frozenset({"vmdav", "gsms"})
"""The own cost of V-MDAV and GSMS weighs a nominal attribute of m categories
``CODES_WEIGHT · log2(m + 1)`` numeric attributes: they read a block as one column of
category codes (:mod:`core.methods.block_sums`), and read records by the hundred where
ties are many. Fitted on ``benchmarks/bench_estimate.py --nominal``, k = 5: V-MDAV at
100,000 records on the census table 12.1 s, five nominal 21.2 s, few categories 7.0 s,
300 categories 8.1 s, and the census table at 300,000 records 113 s; GSMS on the census
table 4.0 s at 30,000 and 17.8 s at 100,000, five nominal 4.9 s at 30,000, 300
categories 19.5 s and few categories 26.2 s at 100,000 (19,479 distinct rows: most of
the candidates tie, and cKDTree orders the ties); measured / model 0.80–1.91."""


def dimensions(attributes: "int | QuasiIdentifiers", method: str | None = None
               ) -> tuple[float, float]:
    """The ``d`` of a method's cost model and of the shared steps' d² term.

    A number is that many numeric attributes. The shared steps (record linkage above
    all) search the same embedding, but grow with it more slowly than the method. A
    :data:`BLOCK_AWARE` ``method``'s own cost weighs the indicator columns less
    (:data:`BLOCK_WEIGHT`); the shared steps' term is the same for every method.

    Examples
    --------
    >>> dimensions(10)
    (10.0, 10.0)
    >>> method, shared = dimensions(QuasiIdentifiers(4, (300,)))
    >>> round(method), round(shared)
    (70, 20)
    >>> round(dimensions(QuasiIdentifiers(4, (300,)), "mdav")[0])
    24
    >>> round(dimensions(QuasiIdentifiers(4, (300,)), "vmdav")[0])
    15
    """
    attributes = QuasiIdentifiers.of(attributes)
    indicators = sum(attributes.nominal)
    if not indicators:
        return float(attributes.numeric), float(attributes.numeric)
    growth = NOMINAL_GROWTH ** min(len(attributes.nominal) - 1, NOMINAL_GROWTH_UPTO)
    weighted = NOMINAL_WEIGHT * growth * indicators
    shared = attributes.numeric + 2.0 * math.sqrt(weighted)
    if method in BLOCK_AWARE:
        weighted = BLOCK_WEIGHT * BLOCK_GROWTH ** (len(attributes.nominal) - 1) * indicators
    elif method in CODES_METHODS:
        weighted = CODES_WEIGHT * sum(math.log2(m + 1) for m in attributes.nominal)
    return attributes.numeric + weighted, shared


PCP_COVARIANCE = 2.3e-10
"""Seconds per ``n · w²`` of PCP's covariance matrix over the w embedded columns
(:func:`core.methods.projection.pcp_projection`): negligible for ten numeric
attributes, most of the run with a nominal attribute of 300 categories (300,000
records, 304 columns: 8.8 s for the method, where the ordered cuts alone model 2.4 s)."""


def _distinct_share(attributes: QuasiIdentifiers, n: int) -> float:
    """The square root of the share of distinct rows (1 when nothing bounds them)."""
    if not attributes.distinct:
        return 1.0
    return math.sqrt(min(1.0, attributes.distinct / n))


WIDE_FROM = 10
"""From this many columns in the search trees (one per numeric or ordinal attribute and
one per nominal one, :attr:`QuasiIdentifiers.count`) the k-d trees prune less with every
column, and the fits above (at 10 columns and fewer) no longer hold."""

WIDE_METHOD_SCALE, WIDE_METHOD_GROWTH, WIDE_GROWTH_CAP = 5.0, 0.055, 0.5
"""An indexed method's cost above :data:`WIDE_FROM` columns is multiplied by
``(2 − exp(−e/WIDE_METHOD_SCALE)) · (max(n, 10⁵)/10⁵)^min(WIDE_METHOD_GROWTH·e,
WIDE_GROWTH_CAP)``, e the columns beyond :data:`WIDE_FROM`: per unit of cost MDAV
took 1.6, 1.9 and 1.95 times its 10-column constant at 15, 20 and 25 columns (100,000
records, k = 5), and from 100,000 to 300,000 records it grew as n^1.82 at 15 columns and
n^2.1 at 20 (n^1.5 at 10). The growth stops at n²: a search that prunes nothing reads
the records left, as the quadratic pass does (``benchmarks/bench_estimate.py``; module
notes, Wide tables)."""

WIDE_LINKAGE, WIDE_LINKAGE_GROWTH, WIDE_SCAN = 2.5e-9, 0.025, 1.0e-10
"""Record linkage's extra seconds against a release of groups packed in space, above
:data:`WIDE_FROM` columns: ``WIDE_LINKAGE · e² · n^1.5 · (max(n, 10⁵)/10⁵)^min(
WIDE_LINKAGE_GROWTH·e, WIDE_GROWTH_CAP)``, at most ``WIDE_SCAN · n² · d`` (every query
reading every original). A linked centroid's search must prove that no original lies
nearer than its own, and at 20 columns that reads about 29 % of the originals (100,000
records). Measured after MDAV, k = 5, minus the shared steps' model: 1.8, 8.6 and 18.8 s
at 15, 20 and 25 columns (100,000 records), 9.7 and 58.7 s at 15 and 20 (300,000); about
the same at k = 3 and less at k = 10 (10.0, 10.6 and 7.3 s in all after the method at
20 columns), so k is left out."""


BALL_METHODS = frozenset({"vmdav"})
"""Methods of another cost model that the width slows as it does the indexed ones, and
so take :func:`wide_method_factor` too: V-MDAV passes over every unassigned record per
group (quadratic), but its extension measures a ball around the group's first record
(:mod:`core.methods.vmdav_kernel`) that holds more records with every column. Its
method took 2.9 times the quadratic model at 30,000 × 20 (3.2 s) and 2.6 times on four
numeric and ten nominal attributes at 50,000 records (19.8 s); with the factor, 1.6 and
1.7 times."""


def _wide(n: int, columns: int, growth: float) -> tuple[float, float]:
    """``(e, (max(n, 10⁵)/10⁵)^min(growth·e, cap))`` for ``columns`` search columns."""
    extra = max(0, columns - WIDE_FROM)
    exponent = min(growth * extra, WIDE_GROWTH_CAP)
    return float(extra), (max(n, 100_000) / 100_000) ** exponent


def wide_method_factor(n: int, columns: int) -> float:
    """The factor on an indexed method's cost at ``columns`` search columns (1 up to
    :data:`WIDE_FROM`; :data:`WIDE_METHOD_SCALE`).

    Examples
    --------
    >>> wide_method_factor(100_000, 10), round(wide_method_factor(100_000, 20), 2)
    (1.0, 1.86)
    """
    extra, larger = _wide(n, columns, WIDE_METHOD_GROWTH)
    if not extra:
        return 1.0
    return (2.0 - math.exp(-extra / WIDE_METHOD_SCALE)) * larger


def wide_linkage_seconds(n: int, columns: int) -> float:
    """Record linkage's extra seconds above :data:`WIDE_FROM` columns against groups
    packed in space (0 up to it; :data:`WIDE_LINKAGE`).

    Examples
    --------
    >>> wide_linkage_seconds(100_000, 10), round(wide_linkage_seconds(100_000, 20))
    (0.0, 8)
    """
    extra, larger = _wide(n, columns, WIDE_LINKAGE_GROWTH)
    if not extra:
        return 0.0
    return min(WIDE_LINKAGE * extra * extra * n ** 1.5 * larger,
               WIDE_SCAN * float(n) * n * columns)


def family_of(method: str, scope: str = "multivariate") -> tuple[str, float]:
    """The (cost model, constant) of ``method``; a method not listed is taken as quadratic
    (multivariate) or sorted (univariate, per-attribute)."""
    families = FAMILIES if COMPILED else REFERENCE_FAMILIES
    if method in families:
        return families[method]
    if scope in ("univariate", "per-attribute"):
        return ("sorted", 4.4e-7)
    return ("quadratic", 2.5e-8)


# tc-kfirst's candidates per cluster grow as 1 + _SWEPT / t² of a share of the records
# left (30,000 × 10, k = 5: 1.9, 3.7, 5.0 and 19 s at t = 0.3, 0.2, 0.1 and 0.05).
_SWEPT = 0.0275


def _cost(model: str, n: int, d: int, k: int, t: float | None = None) -> float:
    if model == "quadratic":  # about n/k groups, each scanning the n records left
        return n * n * d / k
    if model == "swept":  # n/k clusters, each sweeping a share of the records left
        t = 0.2 if t is None else max(float(t), 0.01)
        return n * n * d / k * (1 + _SWEPT / (t * t))
    if model == "indexed":  # n/k groups, each searching a spatial index: about √n·k rows
        return n * math.sqrt(n) * d / math.sqrt(k)
    if model == "sorted":  # sort, then a shortest path over k to 2k-1 long runs
        return n * (math.log2(n) + k) * d
    if model == "values":  # one sorted vector of all n·d values
        values = n * d
        return values * math.log2(values)
    raise ValueError(f"unknown cost model {model!r}")


def shared_seconds(method: str, n: int, d: "int | QuasiIdentifiers") -> float:
    """Rough seconds of the steps after ``method``'s partition (aggregation, measures,
    verification) on ``n`` records and ``d`` quasi-identifiers (a number of numeric
    ones, or :class:`QuasiIdentifiers`).

    Against groups cut along one order the steps grow with the method's ``d``
    (:func:`dimensions`); against groups packed in space their d² term (record linkage's
    search) grows with the shared one, and above :data:`WIDE_FROM` search columns
    record linkage adds :func:`wide_linkage_seconds`.

    Examples
    --------
    >>> shared_seconds("pcp", 1_000_000, 10) < shared_seconds("mdav", 1_000_000, 10)
    True
    """
    method_d, shared_d = dimensions(d)
    if not COMPILED:
        return REFERENCE_SHARED * n * math.log2(n) * method_d
    if method in RELEASES:
        b, _ = RELEASES[method]
        return (SHARED + b * method_d) * n * math.log2(n)
    b, c = SPATIAL_RELEASE
    return ((SHARED + b * shared_d + c * shared_d * shared_d) * n * math.log2(n)
            + wide_linkage_seconds(n, QuasiIdentifiers.of(d).count))


def estimate_parts(method: str, n: int, d: "int | QuasiIdentifiers", *,
                   scope: str = "multivariate", **params) -> tuple[float, float] | None:
    """Rough seconds for ``method`` on ``n`` records and ``d`` quasi-identifiers:
    ``(method, shared)``, the method's own (preparation and partition) and the shared
    steps' after it (:func:`shared_seconds`: aggregation, measures, verifier).

    Parameters
    ----------
    method : str
        Registry name.
    n : int
        Records.
    d : int or QuasiIdentifiers
        The quasi-identifiers: a number of numeric ones, or what they are (nominal ones
        weigh by their categories, :func:`dimensions`).
    scope : str
        The method's scope, for a method without a calibrated constant.
    **params
        The method's parameters: ``k`` (default 3), ``refine`` and ``t`` (tc-kfirst)
        are used; for ``tc-tfirst`` pass ``cluster_size`` (its group size) in place of k.

    Returns
    -------
    (float, float) or None
        None when there is nothing to estimate (no records or no attribute).
    """
    d = QuasiIdentifiers.of(d)
    method_d, _ = dimensions(d, method)
    if n < 2 or d.count < 1:
        return None
    k = max(2, int(params.get("cluster_size") or params.get("k") or 3))
    if method == "mic1d":
        k = 2
    k = min(k, n)
    model, constant = family_of(method, scope)
    spatial, ordered = (REFINE if COMPILED else REFERENCE_REFINE).get(
        str(params.get("refine")), (0.0, 0.0))
    refine = ordered if method in RELEASES else spatial
    cost = _cost(model, n, method_d, k, params.get("t"))
    if model == "indexed" and method != "gsms":  # identical rows are stored once
        cost *= _distinct_share(d, n)  # (GSMS's tree holds every record; ties cost it)
    if model == "indexed" or method in BALL_METHODS:
        cost *= wide_method_factor(n, d.count)
    seconds = constant * cost + refine * n * n * method_d / k
    if method == "pcp":
        seconds += PCP_COVARIANCE * n * d.width ** 2
    return seconds, shared_seconds(method, n, d)


def estimate_seconds(method: str, n: int, d: "int | QuasiIdentifiers", *,
                     scope: str = "multivariate", **params) -> float | None:
    """Rough seconds for ``method`` on ``n`` records and ``d`` quasi-identifiers: the
    sum of :func:`estimate_parts` (its parameters), or None when there is nothing to
    estimate (no records or no attribute).

    Examples
    --------
    >>> census = QuasiIdentifiers(2, (2, 20, 30, 20, 50))
    >>> estimate_seconds("mdav", 300_000, census, k=5) > 2 * estimate_seconds(
    ...     "mdav", 300_000, 7, k=5)
    True
    """
    parts = estimate_parts(method, n, d, scope=scope, **params)
    return None if parts is None else parts[0] + parts[1]


def method_share(parts: "tuple[float, float] | None") -> float | None:
    """The share of a run's time its method is expected to take, from
    :func:`estimate_parts` (None for None): what the engine's progress gives the method
    (``core.pipeline.run.run``'s ``method_share``), so that the bar keeps the clock's
    pace where record linkage outlasts the method (wide tables) or the method is a
    fraction of the run (PCP).

    Examples
    --------
    >>> method_share(estimate_parts("mdav", 100_000, 10, k=5)) > 0.6
    True
    >>> method_share(estimate_parts("mdav", 100_000, 20, k=5)) < 0.5
    True
    """
    if parts is None or sum(parts) <= 0:
        return None
    return parts[0] / (parts[0] + parts[1])


def format_range(seconds: float) -> str:
    """An estimate as a range from half to twice, in the unit that suits it.

    Examples
    --------
    >>> format_range(5), format_range(40), format_range(600), format_range(20000)
    ('about 2–10 seconds', 'about 20–80 seconds', 'about 5–20 minutes', 'about 3–11 hours')
    >>> format_range(59.4)
    'about 30–120 seconds'
    """
    low, high = seconds / 2, seconds * 2
    if high <= 60:
        return f"about {max(1, round(low))}–{max(2, round(high))} seconds"
    if high < 120:  # to the ten seconds: "about 30–120 seconds", not "30–119"
        return f"about {round(low, -1):.0f}–{round(high, -1):.0f} seconds"
    if high < 120 * 60:
        return f"about {max(1, round(low / 60))}–{max(2, round(high / 60))} minutes"
    return f"about {max(1, round(low / 3600))}–{max(2, round(high / 3600))} hours"


def estimate_text(seconds: float | None) -> str:
    """"Expected time on this computer: about 1–3 minutes." or "" below :data:`SHOW_ABOVE`."""
    if seconds is None or seconds < SHOW_ABOVE:
        return ""
    return f"Expected time on this computer: {format_range(seconds)}."
