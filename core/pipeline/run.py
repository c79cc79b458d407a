"""Running a plan one way: partition, aggregate, post-process, then measure and verify.

:func:`run` takes a :class:`~core.pipeline.plan.RunPlan` and goes through these stages in order:

1. **partition** the records (per block and stratum), or let a value-masking method mask;
2. **aggregate** every group to its released quasi-identifiers;
3. **post-process**: merged strata get a combined label, Laplace noise is added to the
   confidential attributes, a bucketing method releases the confidential attribute as its
   bucket;
4. the released table is now **final**: nothing changes it afterwards;
5. **measure** it (disclosure risk and information loss, once) and **verify** it with the
   method's guarantee (independent verifiers that read only the original and the final
   table); a result that misses its guarantee raises :class:`GuaranteeNotMet`;
6. **warn** where the verified release should still not be published as it is
   (:mod:`core.pipeline.warnings`; the relations between columns of the original it
   looks for are found on the helper thread while the method runs);
7. with ``missing="exclude"``, **put back** the records set aside for missing values,
   unmasked and flagged (:mod:`core.pipeline.missing`). Steps 1-6 saw only the other
   records: the verifier checked the guarantee on them, the measures describe them.

:func:`anonymize` is the one-call convenience: :func:`core.pipeline.plan.prepare_run`, then
:func:`run`.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
import pandas as pd

from core.data.aggregate import aggregate
from core.privacy.noise import add_laplace_noise
from core.measures.ahead import Work
from core.measures.measure import measure
from core.measures.partition import partition_metrics
from core.pipeline.missing import flag_column_name, put_back
from core.pipeline.partition import dense_ranks, partition_blocks, recode_merged_strata
from core.pipeline.plan import RunPlan, prepare_run
from core.pipeline.original_work import OriginalWork
from core.pipeline.warnings import release_warnings, unmasked_missing_warning
from core.progress import TaskState
from core.methods.registry import MethodInput
from core.pipeline.result import AnonymizationResult, GuaranteeNotMet
from core.data.roles import RoleSpec
from core.verify.rows import distinct_rows, frame_classes

__all__ = ["run", "anonymize"]


METHOD_SHARE = 0.8
"""The share of a run's progress given to the method when the caller has no estimate;
the rest goes to the aggregation, the measures and the verifier (:func:`run`)."""


def _spans(method_share: float | None) -> tuple[float, float, float]:
    """Where the method's progress ends, the measures' begins and ends: the method
    takes ``method_share`` of the bar, clamped to [0.05, 0.95], and of the rest the
    aggregation a tenth, the measures (record linkage the longest) eight tenths, the
    verdict the last tenth. The measures' steps report their own progress; the
    aggregation and the wait for the verdict do not. At 100,000 × 20 (MDAV) the
    aggregation took 0.2 s of the 10.6 s after the method; at 1,000,000 × 10 (PCP)
    0.075 s of 1.1 s."""
    share = METHOD_SHARE if method_share is None else min(max(float(method_share), 0.05),
                                                         0.95)
    rest = 1.0 - share
    return share, share + 0.1 * rest, share + 0.9 * rest


def run(plan: RunPlan, state: TaskState | None = None, *,
        shared: OriginalWork | None = None,
        method_share: float | None = None) -> AnonymizationResult:
    """Run a prepared plan (module notes); return the verified result.

    ``method_share`` is the share of the run's time the caller expects the method to
    take (the window's time estimate, ``microagg_desktop.estimate``), so that the
    progress moves at about the pace of the clock: at 20 quasi-identifiers record
    linkage takes longer than MDAV itself. The progress is split by it (:func:`_spans`;
    :data:`METHOD_SHARE` without it); the result does not depend on it.

    ``shared`` is the work on the original alone made for an earlier plan of the same
    records (:class:`~core.pipeline.original_work.OriginalWork`, as a sweep shares it);
    it is taken when it serves this plan, and made anew otherwise. The figures are the
    same either way.

    Raises
    ------
    GuaranteeNotMet
        The verifier did not confirm the method's guarantee on the released table.
    Cancelled
        ``state.cancel()`` was called.
    """
    started = time.perf_counter()
    state = state or TaskState()
    state.step(0.0, f"{plan.method.label}: preparing")
    # One helper thread for the work on the original alone, beside the method, and
    # then for the verifier, beside the measures. A cancelled or failed run does not
    # wait for it.
    helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="run")
    try:
        adopted = shared.adopt(plan) if shared is not None else None
        if adopted is not None:
            plan, work = adopted, shared
        else:
            work = OriginalWork(plan, helper)
        result = _run(plan, state, started, work, helper, _spans(method_share))
    except BaseException:
        helper.shutdown(wait=False, cancel_futures=True)
        raise
    helper.shutdown(wait=True)
    return result


def _run(plan: RunPlan, state: TaskState, started: float, work: OriginalWork,
         helper: ThreadPoolExecutor,
         spans: tuple[float, float, float]) -> AnonymizationResult:
    """:func:`run`'s stages; ``work`` is the measures' and the warnings' work begun on
    the original, on ``helper``, which then verifies the release while the measures
    are taken and measures the warnings' pairs beside this thread; ``spans``: where
    the method's progress ends and the measures' begins and ends."""
    spec, table, roles = plan.method, plan.table, plan.roles
    method_end, measures_begin, measures_end = spans

    # 1. partition
    values, classes_of = None, None
    if spec.masks_values:
        values = np.asarray(spec.function(MethodInput(plan.encoding.X, table, roles),
                                          state=state.sub(0.0, method_end), **plan.parameters))
        found = distinct_rows(values)  # numbered as numpy.unique(axis=0)
        # The measures take these classes if the released values are these bit for bit.
        classes_of = (values, found)
        block_labels, details = found.inverse.reshape(-1, 1), {}
    else:
        block_labels, details = partition_blocks(spec, plan.encoding, table, roles,
                                                 plan.blocks, plan.strata, plan.parameters,
                                                 state.sub(0.0, method_end))
    if (block_labels < 0).any():
        raise GuaranteeNotMet(f"{spec.label} left records without a group (internal error).")
    state.check()
    # Numbered as numpy.unique(axis=0) does (with one block, the labels' ranks).
    labels = (dense_ranks(block_labels[:, 0]) if block_labels.shape[1] == 1 else
              distinct_rows(block_labels, checkpoint=state.check).inverse)
    state.check()

    # 2. aggregate (Cancel is taken between the blocks)
    if values is not None:
        released = table.drop(columns=list(roles.identifiers)).copy()
        for j, column in enumerate(roles.quasi_identifiers):
            released[column] = pd.Series(values[:, j], index=table.index, name=column)
    else:
        released = aggregate(table, block_labels, roles.quasi_identifiers,
                             drop=roles.identifiers, blocks=plan.blocks,
                             encoding=plan.encoding, checkpoint=state.check)

    # 3. post-process
    merges = recode_merged_strata(released, roles, plan.strata) if roles.strata else []
    noise = None
    if plan.noise is not None:
        noise = add_laplace_noise(released, plan.noise["bounds"],
                                  epsilon=plan.noise["epsilon"],
                                  quasi_identifiers=list(roles.quasi_identifiers)
                                  + list(roles.strata),
                                  confidential=roles.confidential,
                                  random_state=plan.noise["seed"])
        released = noise.frame
    buckets = details.pop("buckets", None)
    if buckets is not None:  # released as buckets (Section 6.2)
        for column in roles.confidential:
            released[column] = buckets.recode(table[column]).to_numpy()
    state.check()

    # 4. the released table is final; 5. verify it (on the helper, which has made the
    # work on the original by now) while it is measured here. Both only read the two
    # tables, so each gives what it gives alone; the verdict is waited for before the
    # result is made. Mic1D-k's k counts values: the record-level check is against the
    # smallest meaningful class size, 2. A per-attribute method promises nothing per
    # attribute that matters to an intruder who knows several: verify the whole table.
    # The release's values and classes are found once, for both (the classes first on
    # the helper, while the measures begin here). The groups only tell the classes'
    # search where to look: every record's released row is compared with its group's
    # first, and the classes are the table's whatever the groups were.
    values = plan.encoding.values_of(released)
    classes = partial(Work(helper, partial(frame_classes, candidates=labels), released,
                           list(roles.quasi_identifiers) + list(roles.strata)).result, state)
    verifying = Work(helper, partial(
        spec.guarantee.check, table, released, roles, k=2 if spec.masks_values else plan.k,
        t=plan.parameters.get("t"),
        blocks=None if spec.scope == "per-attribute" else plan.blocks,
        encoding=plan.encoding, checkpoint=state.check,
        classes=classes, values=values))
    state.step(measures_begin, "measuring disclosure risk and utility")
    measures = measure(table, released, roles, known=list(plan.scenarios),
                       seed=plan.seed, encoding=plan.encoding,
                       state=state.sub(measures_begin, measures_end),
                       ahead=work.ahead, classes_of=classes_of,
                       release_classes=classes,
                       released_values=values)
    state.step(measures_end, "verifying the released table")
    check = verifying.result(state)
    if not check.passed:
        raise GuaranteeNotMet(f"{spec.label} did not produce {check.failure} "
                              "Nothing was released.")
    state.check()
    metrics = partition_metrics(block_labels, measures)
    warnings = release_warnings(
        table, released, roles, group_sizes=measures.class_sizes,
        il=measures.il, k_prime=measures.k_prime,
        unique_records=measures.unique_records,
        record_level=spec.guarantee.record_level, constant=plan.encoding.constant,
        relations=work.relations.result(state),
        blocks=len(plan.blocks) if plan.blocks and spec.scope != "per-attribute" else 1,
        classes=classes().inverse, ranks=work.ranks, executor=helper, state=state)
    if len(plan.excluded):
        flag = flag_column_name([*plan.original.columns, *released.columns])
        released = put_back(plan.original, released, plan.excluded, flag)
        labels, block_labels = _with_put_back(labels, block_labels, plan.excluded)
        warnings = (unmasked_missing_warning(len(plan.excluded), flag), *warnings)
    state.step(1.0, f"{spec.label}: done")
    encoding = plan.encoding
    return AnonymizationResult(
        method=spec.name, parameters=plan.parameters, roles=roles, labels=labels,
        masked=released, metrics=metrics, warnings=warnings,
        verification=check.verification, seconds=time.perf_counter() - started,
        blocks=plan.blocks, block_labels=block_labels, guarantee=spec.guarantee,
        strata_merges=tuple(merges), tcloseness=check.closeness, details=details,
        measures=measures, noise=noise,
        levels={a.name: a.level.value for a in encoding.attributes},
        orders={a.name: tuple(a.categories) for a in encoding.attributes
                if a.level.value == "ordinal"},
        excluded=plan.excluded, missing=plan.options.get("missing", "stop"),
        options=dict(plan.options),
    )


def _with_put_back(labels: np.ndarray, block_labels: np.ndarray, excluded: np.ndarray):
    """The group ids over every record: −1 for a record put back unmasked."""
    n = len(labels) + len(excluded)
    kept = np.setdiff1d(np.arange(n), excluded)
    full = np.full(n, -1, dtype=np.int64)
    full[kept] = labels
    full_blocks = np.full((n, block_labels.shape[1]), -1, dtype=np.int64)
    full_blocks[kept] = block_labels
    return full, full_blocks


def anonymize(table: pd.DataFrame, roles: RoleSpec, method: str = "mdav", *,
              state: TaskState | None = None, blocks=None, merge_small_strata: bool = False,
              intruder: str = "all", known=None, seed: int = 0,
              dp_epsilon: float | None = None, confidential_bounds=None,
              noise_seed: int | None = None,
              missing: str = "stop", **params) -> AnonymizationResult:
    """Microaggregate ``table`` with a registered method and verify the result.

    :func:`core.pipeline.plan.prepare_run` followed by :func:`run`.

    Parameters
    ----------
    table : DataFrame
        The original data. Never modified.
    roles : RoleSpec
        Which columns are identifiers, quasi-identifiers (and their measurement levels),
        confidential; optional strata.
    method : str
        A name from :func:`core.methods.registry.methods` (``"mdav"``, ...).
    state : TaskState, optional
        Progress and cancellation.
    blocks : sequence of column-name sequences, or str, optional
        Attribute blocks (``"A,B;C,D"`` or ``[("A", "B"), ("C", "D")]``): the method
        runs on each block of quasi-identifiers separately, and k-anonymity then holds
        per block only. Default: one block of all quasi-identifiers.
    merge_small_strata : bool
        Merge a stratum with fewer than k records into its nearest stratum instead of
        stopping with an error.
    intruder : {"all", "singles", "pairs", "random"}
        What the intruder is assumed to know for the disclosure-risk measures: all
        quasi-identifiers, each one alone, every pair (two quasi-identifiers at least),
        or 10 random subsets of half of them (drawn with ``seed``). ``known``
        (``"A,B;C,D"``) overrides it.
    dp_epsilon, confidential_bounds : float, mapping or str
        After a k-anonymous microaggregation, add Laplace noise of scale (HI−LO)/ε to
        every confidential attribute (Domingo-Ferrer & Soria-Comas 2015, Proposition 1).
        The bounds ``{column: (LO, HI)}`` or ``"COL=LO:HI,..."`` are required for every
        confidential column; they are never taken from the data.
    noise_seed : int, optional
        The noise's seed. Default: a fresh one from the operating system for every run,
        recorded in ``result.noise.seed`` (a secret: whoever knows it can subtract the
        noise; no report states it). Give one only to repeat a run.
    missing : {"stop", "exclude"}
        What to do with records that have a missing value in a quasi-identifier, a
        stratum column, or a confidential column. "stop"
        refuses the run, naming the column and row. "exclude" masks the other records
        and releases these ones as they are, flagged 1 in the column
        ``unmasked_missing``; they are not protected (a release warning says so), and
        the verification and the measures cover the masked records only
        (:mod:`core.pipeline.missing`).
    **params
        The method's parameters, e.g. ``k=5``, ``growth="nc"``, ``refine="igd"``.

    Raises
    ------
    MicroaggError
        Bad roles, data or parameters (the message names the column or parameter).
    GuaranteeNotMet
        The verifier did not confirm the method's guarantee on the output.
    Cancelled
        ``state.cancel()`` was called.

    Examples
    --------
    >>> t = pd.DataFrame({"age": [20, 21, 40, 41], "wage": [1, 2, 9, 8]})
    >>> r = anonymize(t, RoleSpec(quasi_identifiers=("age", "wage")), k=2)
    >>> r.masked["age"].tolist()
    [20.5, 20.5, 40.5, 40.5]
    """
    plan = prepare_run(table, roles, method, blocks=blocks,
                       merge_small_strata=merge_small_strata, intruder=intruder,
                       known=known, seed=seed, dp_epsilon=dp_epsilon, noise_seed=noise_seed,
                       confidential_bounds=confidential_bounds, missing=missing, **params)
    return run(plan, state)
