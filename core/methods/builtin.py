"""The built-in methods: one entry per method, in the order the CLI and GUI list them.

Nothing is registered at import: :data:`BUILTIN_METHODS` is a plain tuple that
:func:`core.methods.registry.load_builtin_methods` publishes. Which methods can be a tc-merge
base follows from their declared guarantee and scope (:func:`merge_bases`).
"""

from __future__ import annotations

from core.methods.bucket import tc_bucket
from core.methods.gsms import gsms
from core.methods.mic1d import masked_values
from core.methods.heuristics import fixed_size
from core.methods.projection import pcp, zscores
from core.methods.contract import GROWTH, K, REFINE, T, Interval, Method, Options, Parameter
from core.verify.guarantees import K_ANONYMITY
from core.methods.tcloseness import tc_kfirst, tc_merge
from core.methods.tfirst import tc_tfirst
from core.methods.univariate import optimal_univariate
from core.methods.vmdav import vmdav

__all__ = ["BUILTIN_METHODS", "DEFAULT_METHOD", "merge_bases"]

DEFAULT_METHOD = "mdav"
"""The method the GUI and the CLI start from."""

_ENTRIES: list[Method] = []


def register(method: Method) -> Method:
    _ENTRIES.append(method)
    return method


def merge_bases(entries) -> tuple[str, ...]:
    """Methods whose groups tc-merge can merge: k-anonymous partitions of whole records."""
    return tuple(m.name for m in entries
                 if m.guarantee == K_ANONYMITY and m.scope == "multivariate")

_ORDERED = ("numeric", "ordinal")  # methods that sort or rank by an attribute's values
_REFINEMENT_PAPER = "Khomnotai, Lin, Peng & Santra (2018), Section 3.1 and Figure 1"


def _fixed(first):
    def run(data, *, state, k, growth):
        return fixed_size(data.X, k=k, first=first, growth=growth, state=state)
    return run


register(Method(
    name="mdav", label="MDAV", function=_fixed("mdav"), parameters=(K, GROWTH, REFINE),
    description=(
        "Maximum Distance to Average Vector: groups of k records built in pairs around "
        "the record farthest from the centre and the record farthest from it. The "
        "reference heuristic for multivariate microaggregation."),
    reference="Domingo-Ferrer & Torra (2005); " + _REFINEMENT_PAPER,
))
register(Method(
    name="cbfs", label="CBFS", function=_fixed("cbfs"), parameters=(K, GROWTH, REFINE),
    description=(
        "Centroid-Based Fixed-Size: each group of k records is built around the record "
        "farthest from the centre of the records still unassigned."),
    reference="Laszlo & Mukherjee (2005); " + _REFINEMENT_PAPER,
))
register(Method(
    name="tfrp", label="TFRP", function=_fixed("tfrp"), parameters=(K, GROWTH, REFINE),
    description=(
        "Two Fixed Reference Points: groups of k records built alternately around the "
        "records farthest from the all-maximum and the all-minimum corners of the data."),
    reference="Chang, Li & Huang (2007); " + _REFINEMENT_PAPER,
))
register(Method(
    name="gsms", label="GSMS", function=lambda data, *, state, k, growth: gsms(
        data.X, k=k, state=state),
    parameters=(K, Parameter("growth", Options(("nn",)), "nn", label="Group growth",
                             help="GSMS grows groups by nearest neighbours only."), REFINE),
    description=(
        "Successive group selection: of every record's group of k nearest records, "
        "take the one that leaves the lowest total information loss, and repeat."),
    reference="Panagiotakis & Tziritas (2013); " + _REFINEMENT_PAPER,
))
register(Method(
    name="vmdav", label="V-MDAV",
    function=lambda data, *, state, k, gamma: vmdav(data.X, k=k, gamma=gamma, state=state),
    parameters=(K, Parameter("gamma", Interval(float, 0.0, 10.0), 0.2, label="γ (gain)",
                             help="Extend a group (up to 2k-1 records) while its nearest "
                                  "outside record is closer to it than γ times that "
                                  "record's distance to the rest. 0 = fixed size; about "
                                  "0.2 for scattered data, 1.1 for clustered data."),
                REFINE),
    description=(
        "Variable-size MDAV: groups of k to 2k-1 records, extended where the data are "
        "clustered so that fewer records are averaged with distant ones."),
    reference="Solanas & Martínez-Ballesté (2006)",
))
register(Method(
    name="optimal-univariate", label="Optimal univariate",
    function=lambda data, *, state, k: optimal_univariate(data.X[:, 0], k=k, state=state),
    parameters=(K,), scope="univariate", qi_levels=_ORDERED,
    description=(
        "Optimal microaggregation of one attribute: the groups of k to 2k-1 consecutive "
        "values with the least information loss (Hansen-Mukherjee shortest path)."),
    reference="Hansen & Mukherjee (2003); Nin, Mic1D-k, Section 2.2",
))
register(Method(
    name="individual-ranking", label="Individual ranking",
    function=lambda data, *, state, k: optimal_univariate(data.X[:, 0], k=k, state=state),
    parameters=(K,), scope="per-attribute", guarantee="none", qi_levels=_ORDERED,
    description=(
        "Optimal univariate microaggregation of each quasi-identifier on its own. Low "
        "information loss, but records are NOT k-anonymous: the verifier reports the "
        "real anonymity k'."),
    reference="Nin, Mic1D-k, Section 2.2",
))
register(Method(
    name="pcp", label="Projection: first principal component",
    function=lambda data, *, state, k: pcp(data.X, k=k, state=state),
    parameters=(K, REFINE),
    description=(
        "Sort the records by their first principal component, then cut the order into "
        "groups of k to 2k-1 with the least multivariate information loss."),
    reference="Nin, Mic1D-k, Algorithm 1",
))
register(Method(
    name="zscores", label="Projection: sum of z-scores",
    function=lambda data, *, state, k: zscores(data.X, k=k, state=state),
    parameters=(K, REFINE), qi_levels=_ORDERED,
    description=(
        "Sort the records by the sum of their z-scores, then cut the order into groups "
        "of k to 2k-1 with the least multivariate information loss."),
    reference="Nin, Mic1D-k, Algorithm 1",
))


# t-closeness through microaggregation -------------------------------------------------
_TCLOSE_PAPER = "Soria-Comas, Domingo-Ferrer, Sánchez & Martínez (2015)"
_BASES = merge_bases(_ENTRIES)


def _confidential(data):
    return data.table[list(data.roles.confidential)]


def _kinds(data):
    """The confidential columns' declared distances (:attr:`RoleSpec.confidential_kinds`)."""
    return data.roles.confidential_kinds


def _tc_merge(data, *, state, k, t, base):
    spec = next(m for m in _ENTRIES if m.name == base)
    defaults = {p.name: p.default for p in spec.parameters if p.name != "refine"}
    defaults["k"] = k
    base_labels = spec.function(data, state=state.sub(0.0, 0.5), **defaults)
    return tc_merge(data.X, _confidential(data), k=k, t=t, base_labels=base_labels,
                    kinds=_kinds(data), state=state.sub(0.5, 1.0))


register(Method(
    name="tc-merge", label="t-closeness: microaggregate, then merge (Algorithm 1)",
    function=_tc_merge,
    parameters=(K, T, Parameter("base", Options(_BASES), "mdav", label="Base method",
                                help="The k-anonymity method whose groups are merged.")),
    description=(
        "Microaggregate the quasi-identifiers with a k-anonymity method, then merge the "
        "group whose confidential distribution is farthest from the whole table's into "
        "its nearest group, until every group is within t."),
    family="t-closeness", guarantee="t-closeness", scope="whole-table",
    needs_confidential=True, reference=_TCLOSE_PAPER + ", Algorithm 1",
))
register(Method(
    name="tc-kfirst", label="t-closeness: k-anonymity first (Algorithm 2)",
    function=lambda data, *, state, k, t: tc_kfirst(data.X, _confidential(data), k=k, t=t,
                                                     kinds=_kinds(data), state=state),
    parameters=(K, T),
    description=(
        "Build MDAV-like groups and swap records in and out of each group while that "
        "brings its confidential distribution closer to the whole table's; merge what "
        "is still above t."),
    family="t-closeness", guarantee="t-closeness", scope="whole-table",
    needs_confidential=True, reference=_TCLOSE_PAPER + ", Algorithm 2",
))
register(Method(
    name="tc-tfirst", label="t-closeness: t-closeness first (Algorithm 3)",
    function=lambda data, *, state, k, t: tc_tfirst(data.X, _confidential(data), k=k, t=t,
                                                     kinds=_kinds(data), state=state),
    parameters=(K, T),
    description=(
        "Choose the group size from k and t (Expressions 3 and 4), split the records "
        "into that many subsets by the confidential attribute, and build every group "
        "from one record of each subset near an MDAV reference record."),
    family="t-closeness", guarantee="t-closeness", scope="whole-table",
    needs_confidential=True, reference=_TCLOSE_PAPER + ", Algorithm 3",
))


# Mic1D-k -----------------------------------------------------------------------------
register(Method(
    name="mic1d", label="Mic1D-k (one-dimension microaggregation)",
    function=masked_values,
    parameters=(Parameter("k", Interval(int, 2, None), 3000, label="k (values per run)",
                          help="Mic1D-k groups VALUES, not records: k counts values of all "
                               "quasi-identifiers together and may exceed the number of "
                               "records."),),
    description=(
        "All quasi-identifier values are put in one sorted vector, cut into runs of k "
        "values, normalized per run, re-sorted, averaged and put back in their cells. "
        "It does NOT guarantee k-anonymity of records: the real anonymity k' is the "
        "figure that counts."),
    guarantee="none", masks_values=True, scope="whole-table", reference="Nin, Mic1D-k",
    qi_levels=("numeric",),
))


# t-closeness by bucketization, multiplicative distance ---------------------------------
T_MULTIPLICATIVE = Parameter(
    "t", Interval(float, 1.0, 1000.0, low_open=True), 1.5,
    label="t (multiplicative level > 1, NOT an EMD bound)",
    help="In every class each bucket of the confidential attribute is at most t times and "
         "at least 1/t times as frequent as in the whole table (Definition 4). E.g. 1.5. "
         "By Proposition 3 this gives epsilon = 2 ln t.",
)
register(Method(
    name="tc-bucket", label="t-closeness by buckets (multiplicative distance)",
    function=lambda data, *, state, k, t: tc_bucket(
        data.X, _confidential(data), k=k, t=t, state=state,
        kind=(_kinds(data) or {}).get(data.roles.confidential[0])),
    parameters=(K, T_MULTIPLICATIVE),
    description=(
        "Cut the confidential attribute into about t+1 buckets of near-equal mass and "
        "build classes of nearby records whose bucket frequencies stay within a factor t "
        "of the whole table's. The confidential attribute is released as its bucket. "
        "Here t is a MULTIPLICATIVE level (> 1), not an earth mover's distance."),
    family="t-closeness", guarantee="t-closeness-multiplicative", scope="whole-table",
    needs_confidential=True,
    reference="Domingo-Ferrer & Soria-Comas (2015), Section 6 and Definition 4",
))

BUILTIN_METHODS: tuple[Method, ...] = tuple(_ENTRIES)
