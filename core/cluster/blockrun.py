"""What a worker does with its blocks: the normal engine, one block at a time.

A worker receives one block, as the pieces of the input partitions that hold its records
(with their row number ``ROW`` and partition ``PART``), and runs the registered method through the engine's own steps: :func:`core.pipeline.prepare_run`
checks the block's inputs (roles, parameters, levels, group size), the block is
measured with the whole table's parameters (:class:`~core.cluster.standardize.GlobalEncoding`,
so distances and SSE are the unblocked run's), :func:`core.pipeline.partition.partition_blocks`
forms the groups (refinement included) or a value-masking method masks, and
:func:`core.data.aggregate.aggregate` releases every group's aggregate.

It returns the released records cut by input partition, for the writers, and the
block's figures (records, groups, smallest and largest group, SSE). Group ids are only
counted, never released, so they need no global numbering. Before a block the worker
checks the run's stop event (:func:`core.cluster.session.stop_requested`).

:func:`warm_up` runs one small block first, on one worker per machine. The compiled
kernels (:mod:`core.compiled`) are cached on disk, but only after a process compiled
them; worker processes started together on a machine whose cache is cold (a fresh
install, a changed source file) would each compile the same kernels at the same time,
tens of seconds apiece on a busy machine. After the warm-up they load them from the
cache instead.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from core.cluster.session import stop_requested
from core.cluster.standardize import GlobalEncoding
from core.data.aggregate import aggregate
from core.data.roles import RoleSpec
from core.errors import Cancelled
from core.methods.registry import MethodInput, get_method
from core.methods.spatial_parallel import single_thread
from core.pipeline import prepare_run
from core.pipeline.partition import partition_blocks
from core.progress import TaskState

__all__ = ["BlockJob", "ROW", "PART", "run_pieces", "run_block", "warm_up"]

ROW, PART = "_microagg_row", "_microagg_part"
"""Working columns: global row number, input partition number."""
_WARM_UP_ROWS = 1_000  # records of the warm-up block: every kernel runs, none for long


@dataclass(frozen=True)
class BlockJob:
    """Everything a worker needs to run blocks: picklable and small."""

    method: str
    roles: RoleSpec
    parameters: dict[str, Any]
    blocks: Any
    seed: int
    encoding: GlobalEncoding
    stop_name: str | None = None


def run_pieces(job: BlockJob, *pieces: pd.DataFrame | None
               ) -> tuple[dict[int, pd.DataFrame], dict]:
    """Run one block, given as pieces of routed partitions (module notes).

    The records are put in row order first, so a block releases the same groups however
    the table was partitioned.

    Returns
    -------
    released : dict of int to DataFrame
        The released records per input partition, identifiers dropped, with ``ROW`` and
        ``PART``.
    figures : dict
        ``n``, ``n_groups``, ``min_group``, ``max_group``, ``sse``, ``group_sizes``
        (size → count) and ``seconds``.
    """
    if stop_requested(job.stop_name):
        raise Cancelled("cancelled by the user")
    block = pd.concat([p for p in pieces if p is not None], ignore_index=True)
    order = np.argsort(block[ROW].to_numpy(), kind="stable")
    block = block.take(order).reset_index(drop=True)
    masked, figures = run_block(block.drop(columns=[ROW, PART]), job)
    masked[ROW] = block[ROW].to_numpy()
    parts = block[PART].to_numpy()
    masked[PART] = parts
    released = {int(number): masked[parts == number] for number in np.unique(parts)}
    return released, figures


def warm_up(table: pd.DataFrame, job: BlockJob) -> float:
    """Run the first records of ``table`` as a block, to compile (or load) the kernels
    in this process and leave them in the machine's cache; the seconds it took.

    A table the method refuses (too few records, a stratum below k) warms nothing: the
    real blocks report their own errors.
    """
    from core.errors import MicroaggError

    began = time.perf_counter()
    try:
        run_block(table.head(_WARM_UP_ROWS), job)
    except MicroaggError:
        pass
    return time.perf_counter() - began


def run_block(table: pd.DataFrame, job: BlockJob) -> tuple[pd.DataFrame, dict]:
    """Microaggregate one block; its released table (same rows and order) and figures.

    The block's searches stay on the worker's thread (no helper thread,
    :mod:`core.methods.spatial_parallel`): the cluster's workers already fill the
    machine's processors, and a second thread per worker would only compete with them.
    """
    with single_thread():
        return _run_block(table, job)


def _run_block(table: pd.DataFrame, job: BlockJob) -> tuple[pd.DataFrame, dict]:
    began = time.perf_counter()
    table = table.reset_index(drop=True)
    roles = job.roles
    plan = prepare_run(table, roles, job.method, blocks=job.blocks, seed=job.seed,
                       **job.parameters)
    encoding = job.encoding.encode(table)
    plan = replace(plan, encoding=encoding)
    spec = get_method(job.method)
    if spec.masks_values:
        values = np.asarray(spec.function(MethodInput(encoding.X, table, roles),
                                          state=TaskState(), **plan.parameters))
        released = table.drop(columns=list(roles.identifiers)).copy()
        for j, column in enumerate(roles.quasi_identifiers):
            released[column] = values[:, j]
        _, labels = np.unique(values, axis=0, return_inverse=True)
    else:
        block_labels, _ = partition_blocks(spec, encoding, table, roles, plan.blocks,
                                           plan.strata, plan.parameters, TaskState())
        released = aggregate(table, block_labels, roles.quasi_identifiers,
                             drop=roles.identifiers, blocks=plan.blocks, encoding=encoding)
        _, labels = np.unique(block_labels, axis=0, return_inverse=True)
    sizes = np.bincount(np.asarray(labels).reshape(-1))
    sizes = sizes[sizes > 0]
    masked_values, _ = encoding.values_of(released)
    sse = float(encoding.squared_distances(masked_values).sum())
    counted = np.unique(sizes, return_counts=True)
    return released, {
        "n": len(table), "n_groups": int(sizes.size), "min_group": int(sizes.min()),
        "max_group": int(sizes.max()), "sse": sse,
        "group_sizes": {int(s): int(c) for s, c in zip(*counted)},
        "seconds": time.perf_counter() - began,
    }
