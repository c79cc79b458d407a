"""Blocked microaggregation on Dask: :func:`anonymize_blocked`.

The stages of one run, each a Dask computation on the cluster; no worker, nor the
client, ever holds the whole table:

1. **read** the table (:mod:`core.cluster.partitioned`) and count every partition's
   records (for a Parquet part, one column is read), which numbers the rows;
2. **measure** it in one pass (:mod:`core.cluster.standardize`): the whole table's
   means, standard deviations, categories, strata and SST, no missing value in a needed
   column, and a sample of about 200,000 records chosen by a hash of the row number;
3. **block** it (:mod:`core.cluster.blocking`): a tree built on the sample on the
   client; every partition routes its records and cuts itself into one piece per
   blocking key (:mod:`core.cluster.stages`); from the exact counts, small leaves are
   merged, so every block has at least k records; strata are natural blocks;
4. **run** every block as one task, largest first, fed by the pieces of the
   partitions that hold its records (:mod:`core.cluster.blockrun`): the registered
   method through the normal engine, measured with the whole table's parameters;
5. **write** every input partition back from its released pieces, in row order, into
   a temporary folder;
6. **verify** the parts as written (:mod:`core.cluster.verify`): k-anonymity over the
   whole table, from the released values alone; IL = 100·SSE/SST over all blocks; then
   the release warnings (:mod:`core.cluster.findings`): every one for a table held in
   memory, those its class figures give for a table read in parts, with a warning that
   its kept columns were not checked;
7. only then the folder is **renamed** onto the output. A release that fails its
   guarantee raises :class:`~core.pipeline.GuaranteeNotMet` and leaves nothing.

Records travel between workers only as pieces (task results), never through the
scheduler or the client, and are not shuffled by hash: a hash shuffle of a few blocks
into as many partitions leaves some workers idle and others with several blocks.

Block size, the trade-off. A record near a cut is grouped with neighbours from its own
side only, so blocked MDAV loses more information than unblocked MDAV. With ten
attributes a group of five reaches far across a block, so most records are "near" a
cut, and the gap depends mostly on the number of cuts (blocks), little on their size.
Relative IL gap to unblocked MDAV (k = 5), 1,000,000 × 10 ``scale_dask`` records
(correlated, skewed; same standardization):

==========================================  ========  =========  =========
blocks                                      8 × 125k  5 × 200k   4 × 250k
==========================================  ========  =========  =========
cut one attribute at its median (paper)      +5.2 %    —          +3.4 %
cut the first principal axis (here)          +2.9 %    +1.9 %     +1.4 %
==========================================  ========  =========  =========

(4 × 250k, median cuts: the former rule's blocks of up to √2·N for N = 200,000;
+1.4 %: the engine itself, the others the same cuts made on the whole table.) Cutting the principal axis halves the gap
(:mod:`core.cluster.blocking`). MDAV's time per block grows as about N^1.5 (compiled:
about 4 s for 100,000 × 10 on an idle core; 125,000 and 250,000 records measured 8 s
and 22 s side by side on a busy one), so the time per record grows as √N. The default, :data:`DEFAULT_BLOCK_SIZE` = 250,000, keeps the gap
under 2 % at 1,000,000 records and a 10,000,000-record run (40 blocks) within ten
minutes on two cores; a smaller N is faster and loses more. A repair that re-grouped
the records of the groups nearest each cut, across it, and kept the new groups only
where they lowered the SSE, never did: the records it frees are grouped one-sided
again at the edges of the freed band.

Methods whose guarantee is t-closeness are refused: closeness compares every class with
the whole table's distribution of the confidential attribute, which a block does not
see. Laplace noise and ``missing="exclude"`` belong to the local engine as well.
"""

from __future__ import annotations

import time
import warnings
from operator import itemgetter
from pathlib import Path

import numpy as np
import pandas as pd

from core.cluster.blocking import SUBS, build_tree, finish_blocking
from core.cluster.findings import blocked_warnings
from core.cluster.blockrun import BlockJob, run_pieces, warm_up
from core.cluster.partitioned import (OutputFolder, output_format, read_error,
                                      read_partitioned)
from core.cluster.result import BlockedResult
from core.cluster.session import open_session, wait
from core.cluster.stages import (assemble_part, pieces_of, route, stratum_codes,
                                 survey_part, write_part)
from core.cluster.standardize import encoding_of, merge, resolve_levels
from core.cluster.verify import verify_blocked
from core.data.roles import Level, RoleSpec
from core.errors import MicroaggError
from core.methods.registry import get_method
from core.pipeline import GuaranteeNotMet
from core.pipeline.partition import parse_blocks, resolve_blocks
from core.progress import TaskState

__all__ = ["anonymize_blocked", "DEFAULT_BLOCK_SIZE"]

DEFAULT_BLOCK_SIZE = 250_000
_SAMPLE = 200_000  # sample points the tree is built on, about
_HEAD = 2_000  # first records, to check the roles and resolve default levels


def anonymize_blocked(source, roles: RoleSpec, method: str = "mdav", *,
                      output=None, overwrite: bool = False, output_format_: str | None = None,
                      scheduler: str | None = None, n_workers: int | None = None,
                      processes: bool = True, block_size: int = DEFAULT_BLOCK_SIZE,
                      blocks=None, seed: int = 0, state: TaskState | None = None,
                      **params) -> BlockedResult:
    """Microaggregate a table too large for one machine, block by block, on Dask.

    Solé, Muntés-Mulero & Nin, "A 2d-tree-based blocking method for microaggregating
    very large data sets" (2012): the records are cut into spatial blocks of at most
    ``block_size`` records by a 2^d-tree, and every block is microaggregated on its own
    (module notes for the stages).

    Parameters
    ----------
    source : DataFrame, or path of a CSV/Parquet file or of a folder of them
        The original records (never modified).
    roles : RoleSpec
    method : str
        A registered method without a t-closeness guarantee (``"mdav"``, ...).
    output : path, optional
        The folder to write the release to (parts in the input's row order). Required
        for a file or folder ``source``; for a DataFrame the release is also returned.
    overwrite : bool
        Replace an existing output folder.
    output_format_ : {"parquet", "csv"}, optional
        The parts' format (default: from the folder name, else the input's).
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``). Without it a local
        cluster of worker processes is started on 127.0.0.1 and closed at the end.
    n_workers, processes : int, bool
        The local cluster's workers, as processes or threads.
    block_size : int
        Records per block, at most (N of the paper); at least 2k. Larger blocks lose
        less information and take longer (module notes).
    blocks : str or sequence, optional
        Attribute blocks, as for :func:`core.pipeline.anonymize`.
    seed : int
        Seed of the sample the tree is built on.
    state : TaskState, optional
        Progress (per block task) and cancellation.
    **params
        The method's parameters (``k=5``, ...).

    Returns
    -------
    BlockedResult

    Raises
    ------
    MicroaggError
        Dask missing, bad roles, parameters, block size, scheduler address, input or
        output (the message names what is at fault).
    GuaranteeNotMet
        The global verification did not confirm k-anonymity; nothing is written.
    Cancelled
        ``state.cancel()`` was called; nothing is written.

    Examples
    --------
    >>> r = anonymize_blocked("census_parts/", RoleSpec(quasi_identifiers=("AGI", "TAXINC")),
    ...                       k=5, output="released/", block_size=5000)  # doctest: +SKIP
    >>> r.verification.passed, r.il  # doctest: +SKIP
    """
    started = time.perf_counter()
    state = state or TaskState()
    spec = get_method(method)
    resolved = spec.resolve(params)
    _refuse(spec, roles, block_size, resolved.get("k"))
    k = int(resolved.get("k") or 2)
    if output is None and not isinstance(source, pd.DataFrame):
        raise MicroaggError("Give an output folder: a file or folder is released as a "
                            "folder of parts.")
    if output is not None and not isinstance(source, pd.DataFrame) and \
            _holds(output, source):
        raise MicroaggError(f"'{output}' is or holds the input '{source}'; choose another "
                            "output folder.")
    folder = OutputFolder(output, overwrite=overwrite) if output is not None else None
    state.step(0.0, "connecting to the Dask cluster")
    with open_session(scheduler, n_workers=n_workers, processes=processes) as session, \
            session.client.as_current():
        frame, kind = read_partitioned(source)
        if kind == "memory":  # sent to the workers once, not with every computation
            frame = frame.persist()
        fmt = output_format(output, source_format=kind, given=output_format_) \
            if output is not None else None
        head = _head(frame, source)
        roles.validate(head)
        attribute_blocks = resolve_blocks(
            roles, parse_blocks(blocks) if isinstance(blocks, str) else blocks, spec)
        state.step(0.02, "measuring the whole table")
        levels = resolve_levels(roles, head)
        try:
            first_rows = _first_rows(session.client, frame, roles)
            measured = _survey(session.client, frame, roles, levels, first_rows, seed,
                               source="the table" if kind == "memory" else str(source))
        except MicroaggError:
            raise
        except (ValueError, TypeError, OSError) as error:
            raise read_error(error, source) from None
        n = int(first_rows[-1])
        if n < k:
            raise MicroaggError(f"The table has {n} records, fewer than k = {k}.")
        encoding = encoding_of(measured, roles, levels, head)
        keys, sizes = _strata(measured.strata, roles, k)
        job = BlockJob(method, roles, resolved, blocks, seed, encoding, session.stop_name)
        warming = _warm_up(session, head, job)
        state.step(0.05, "building the blocks")
        strata = list(roles.strata)
        tree = build_tree(encoding.encode(measured.sample).X,
                          stratum_codes(measured.sample, strata, keys),
                          sizes if sizes is not None else np.array([n]),
                          block_size=block_size)
        from dask import delayed
        routed = session.client.compute([
            delayed(route)(part, number=i, first_row=int(first_rows[i]),
                           encoding=encoding, tree=tree, keys=keys, strata=strata)
            for i, part in enumerate(frame.to_delayed())])
        wait(session, routed, state, start=0.05, stop=0.09, message="routing the records",
             gather=False)
        counts = session.client.gather([session.client.submit(itemgetter(1), r, pure=False)
                                        for r in routed])
        blocking = finish_blocking(tree, _key_counts(counts, tree.n_leaves),
                                   block_size=block_size, min_size=k)
        wait(session, warming, state, start=0.09, stop=0.1, message="preparing the workers")
        runs, parts_of_block = _run_blocks(session, routed, counts, blocking, job)
        del routed  # the pieces are held by the blocks that need them, no longer here
        wait(session, runs, state, start=0.1, stop=0.8, message="microaggregating blocks",
             gather=False)
        figures = session.client.gather([session.client.submit(itemgetter(1), r, pure=False)
                                         for r in runs])
        sse = float(sum(f["sse"] for f in figures))
        il = 100.0 * sse / encoding.sst if encoding.sst > 0 else 0.0
        released = _released_by_part(session, runs, parts_of_block, len(first_rows) - 1)
        del runs
        masked = None
        try:
            if folder is not None:
                path = str(folder.create())
                writes = [session.client.submit(write_part, path, fmt, number, *pieces,
                                                 pure=False)
                          for number, pieces in released.items()]
                wait(session, writes, state, start=0.8, stop=0.9,
                     message="writing the release")
                del released
                written, _ = read_partitioned(path)
            else:
                assembled = session.client.gather([
                    session.client.submit(assemble_part, *pieces, pure=False)
                    for pieces in released.values()])
                del released
                masked = pd.concat(assembled, ignore_index=True)
                masked.index = source.index
                written = _as_dask(masked, frame.npartitions)
            state.step(0.9, "verifying the release over the whole table")
            check_k = 2 if spec.masks_values else k
            verification, whole = verify_blocked(
                written, roles, check_k, il=il, n_records=n,
                blocks=(tuple(roles.quasi_identifiers),) if spec.scope == "per-attribute"
                else attribute_blocks)
            if spec.guarantee.record_level and not verification.passed:
                raise GuaranteeNotMet(f"{spec.label} (blocked) did not produce a "
                                      f"k-anonymous release: {verification.notes[0]} "
                                      "Nothing was released.")
            state.check()
            state.step(0.95, "looking for what the release still gives away")
            found = blocked_warnings(
                source if kind == "memory" else None,
                masked if masked is not None else written, roles, il=il, whole=whole,
                record_level=spec.guarantee.record_level,
                blocks=1 if spec.scope == "per-attribute" else len(attribute_blocks),
                columns=list(head.columns), encode=encoding.encode, state=state)
            state.check()
            if folder is not None:
                folder.commit()
        except BaseException:
            if folder is not None:
                folder.discard()
            raise
        address = session.address
    state.step(1.0, f"{spec.label} (blocked): done")
    return BlockedResult.from_figures(
        method=method, parameters=resolved, roles=roles, figures=figures,
        n_records=n, sse=sse, sst=encoding.sst, verification=verification,
        guarantee=spec.guarantee, masked=masked,
        output=str(folder.target) if folder is not None else None,
        output_format=fmt, block_size=block_size, scheduler=scheduler or address,
        warnings=found,
        local_cluster=scheduler is None, seconds=time.perf_counter() - started)


def _head(frame, source) -> pd.DataFrame:
    """The first records (from the first partitions only; a short one is no error)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return frame.head(_HEAD, npartitions=min(frame.npartitions, 4))
    except (ValueError, TypeError, OSError) as error:
        raise read_error(error, source) from None


def _first_rows(client, frame, roles: RoleSpec) -> np.ndarray:
    """The global number of every partition's first row, and the table's length last."""
    from dask import delayed
    column = frame[[roles.quasi_identifiers[0]]]  # a Parquet part reads one column
    lengths = client.gather(client.compute([delayed(len)(p) for p in column.to_delayed()]))
    return np.r_[0, np.cumsum(lengths)].astype(np.int64)


def _survey(client, frame, roles: RoleSpec, levels, first_rows, seed: int, *, source):
    """One pass over the table (:func:`core.cluster.standardize.survey`), merged."""
    from dask import delayed
    strata = list(roles.strata)
    needed = list(dict.fromkeys([*roles.quasi_identifiers, *strata, *roles.confidential]))
    columns = {"numeric": [c for c, v in levels.items() if v is Level.NUMERIC],
               "categorical": [c for c, v in levels.items() if v is not Level.NUMERIC],
               "needed": needed, "strata": strata}
    rate = min(1.0, _SAMPLE / max(1, int(first_rows[-1])))
    futures = client.compute([
        delayed(survey_part)(part, first_row=int(first_rows[i]), rate=rate, seed=seed,
                             source=source, **columns)
        for i, part in enumerate(frame[needed].to_delayed())])
    return merge(client.gather(futures))


def _key_counts(counts: list[dict], n_leaves: int) -> np.ndarray:
    total = np.zeros(n_leaves * SUBS, dtype=np.int64)
    for part in counts:
        for key, count in part.items():
            total[key] += count
    return total


def _run_blocks(session, routed, counts, blocking, job):
    """Submit every block (largest first) with the pieces of the partitions holding it;
    the block futures, and the partitions every block has records of."""
    client = session.client
    keys_of = [np.flatnonzero(blocking.block_of_key == b).tolist()
               for b in range(blocking.n_blocks)]
    parts_of_block: list[list[int]] = [[] for _ in range(blocking.n_blocks)]
    for number, part in enumerate(counts):
        for block in sorted({int(blocking.block_of_key[key]) for key in part}):
            parts_of_block[block].append(number)
    runs = [None] * blocking.n_blocks
    for block in np.argsort(-blocking.sizes, kind="stable"):
        pieces = [client.submit(pieces_of, routed[number], keys_of[block], pure=False,
                                priority=int(blocking.sizes[block]))
                  for number in parts_of_block[block]]
        runs[block] = client.submit(run_pieces, job, *pieces, pure=False,
                                    priority=int(blocking.sizes[block]))
    return runs, parts_of_block


def _released_by_part(session, runs, parts_of_block, n_parts: int) -> dict[int, list]:
    """Per input partition (in order, empty ones left out), the futures of its released
    pieces, one per block that holds some of its records."""
    by_part: dict[int, list] = {}
    for block, numbers in enumerate(parts_of_block):
        for number in numbers:
            by_part.setdefault(number, []).append(
                session.client.submit(_piece, runs[block], number, pure=False))
    return {number: by_part[number] for number in range(n_parts) if number in by_part}


def _piece(run, number: int) -> pd.DataFrame:
    return run[0][number]


def _as_dask(masked: pd.DataFrame, n_partitions: int):
    import dask.dataframe as dd
    return dd.from_pandas(masked.reset_index(drop=True), npartitions=max(1, n_partitions),
                          sort=False)


def _warm_up(session, sample: pd.DataFrame, job: BlockJob) -> list:
    """Start one warm-up block (:func:`core.cluster.blockrun.warm_up`) on one worker of
    every machine; the futures, awaited before the blocks are sent."""
    workers = session.client.scheduler_info(n_workers=-1).get("workers", {})
    first_of_host: dict[str, str] = {}
    for address, info in workers.items():
        first_of_host.setdefault(info.get("host", address), address)
    table = session.client.scatter(sample, broadcast=False) if first_of_host else None
    return [session.client.submit(warm_up, table, job, workers=[address], pure=False,
                                  allow_other_workers=False)
            for address in first_of_host.values()]


def _refuse(spec, roles: RoleSpec, block_size, k) -> None:
    if spec.guarantee.t_kind is not None:
        raise MicroaggError(
            f"{spec.label} guarantees t-closeness, which compares every class with the "
            "whole table's distribution of the confidential attribute; a block does not "
            "see it. Run it with the local engine, or choose a k-anonymity method.")
    if not isinstance(block_size, (int, np.integer)) or isinstance(block_size, bool):
        raise MicroaggError(f"Block size must be an integer, got {block_size!r}.")
    least = 2 * int(k or 2)
    if block_size < least:
        raise MicroaggError(f"Block size must be at least 2k = {least} records, got "
                            f"{block_size}.")


def _strata(counted, roles: RoleSpec, k: int):
    """The whole table's strata (a MultiIndex, or None) and their sizes, from the
    survey's counts; a stratum with fewer than k records is refused."""
    if not roles.strata:
        return None, None
    counted = counted.sort_index()
    index = counted.index if isinstance(counted.index, pd.MultiIndex) else \
        pd.MultiIndex.from_arrays([counted.index], names=list(roles.strata))
    small = counted[counted.to_numpy() < k]
    if len(small):
        name = small.index[0]
        name = " / ".join(map(str, name)) if isinstance(name, tuple) else str(name)
        raise MicroaggError(
            f"Stratum '{name}' ({', '.join(roles.strata)}) has {int(small.iloc[0])} "
            f"record(s), fewer than k = {k}. Recode the stratum column or choose a "
            "smaller k (the Dask engine does not merge strata).")
    return index, counted.to_numpy(dtype=np.int64)


def _holds(folder, path) -> bool:
    """Whether ``folder`` is ``path`` or one of its parents."""
    try:
        folder, path = Path(folder).resolve(), Path(path).resolve()
    except OSError:
        return False
    return folder == path or folder in path.parents
