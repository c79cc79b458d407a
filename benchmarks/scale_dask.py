"""Blocked MDAV on Dask: information loss against unblocked MDAV, and a partitioned run.

    python benchmarks/scale_dask.py [--quick] [--sweep] [--partitioned N]
    python benchmarks/bench_scale.py --only dask [--quick]

Rows:

* IL of blocked MDAV (blocks of the default size cut across the principal axis,
  :mod:`core.cluster.blocking`, after Solé, Muntés-Mulero & Nin 2012) against unblocked
  MDAV (the compiled one) on the same records with the same standardization,
  1,000,000 × 10 (``--quick``: 200,000 × 10); ``before_s`` is the unblocked run,
  ``after_s`` the blocked one (local cluster of two worker processes, start-up
  included). Both ILs are printed with the relative gap (target: within 2 %).
* ``--sweep``: the trade-off behind the default block size: at 200,000 × 10, blocked IL
  and time for N = 12,500, 25,000, 50,000 and 100,000 against one unblocked run (one
  local cluster serves every N).
* 10,000,000 × 10 records (``--quick``: 1,000,000; ``--partitioned N``: N) read from a
  folder of Parquet parts (250,000 records each) under /tmp, released as a folder of
  Parquet parts and verified over the whole table; records per second, and the peak
  resident memory of the client and of each worker process (``ru_maxrss``; the input
  alone is 88 bytes a record). The folders are deleted afterwards.

Wall-clock times on a shared machine are noisy: the load average is printed with
every row.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks.synthetic import numeric_records  # noqa: E402
from core.cluster import DEFAULT_BLOCK_SIZE, anonymize_blocked  # noqa: E402
from core.data.prepare import standardize  # noqa: E402
from core.data.roles import RoleSpec  # noqa: E402
from core.measures.partition import sse, sst  # noqa: E402
from core.methods.mdav import mdav  # noqa: E402

D, K = 10, 5
PARTS = Path("/tmp/microagg_scale_dask")
COLUMNS = [f"x{j}" for j in range(D)]
ROLES = RoleSpec(quasi_identifiers=tuple(COLUMNS))


def _unblocked(n: int):
    table = pd.DataFrame(numeric_records(n, D, random_state=0), columns=COLUMNS)
    X = standardize(table, COLUMNS).X
    mdav(np.ascontiguousarray(X[:1000]), k=K)  # compiled (or loaded) outside the timing
    started = time.perf_counter()
    labels = mdav(X, k=K)
    return table, 100.0 * sse(X, labels) / sst(X), time.perf_counter() - started


def _il_row(table, unblocked: float, unblocked_s: float | None, block_size: int,
            scheduler=None) -> dict:
    result = anonymize_blocked(table, ROLES, "mdav", k=K, block_size=block_size,
                               n_workers=2, scheduler=scheduler)
    gap = 100.0 * (result.il - unblocked) / unblocked
    low, mean, high = result.block_sizes
    return {"task": f"blocked MDAV IL vs unblocked (k={K}, N={block_size:,})",
            "size": f"{len(table):,} × {D}", "before_s": unblocked_s,
            "after_s": result.seconds, "target": "IL within 2 % (relative)",
            "check": f"IL blocked {result.il:.3f} % vs unblocked {unblocked:.3f} % "
                     f"({gap:+.2f} %); {result.n_blocks} blocks of {low:,}-{high:,} "
                     f"(mean {mean:,}); verified k={K}: {result.passed}; load {_load()}"}


def _sweep_rows(n: int = 200_000) -> list[dict]:
    from core.cluster.session import open_session
    table, unblocked, unblocked_s = _unblocked(n)
    with open_session(n_workers=2) as session:
        return [_il_row(table, unblocked, unblocked_s, size, scheduler=session.address)
                for size in (12_500, 25_000, 50_000, 100_000)]


def _parts(n: int, n_parts: int) -> Path:
    folder = PARTS / f"in_{n}"
    if folder.exists() and len(list(folder.glob("*.parquet"))) == n_parts:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    rows = n // n_parts
    for i in range(n_parts):
        chunk = pd.DataFrame(numeric_records(rows, D, random_state=i), columns=COLUMNS)
        chunk.insert(0, "rec", np.arange(i * rows, (i + 1) * rows))
        chunk.to_parquet(folder / f"part-{i:03d}.parquet", index=False)
    return folder


def _peak_mb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _partitioned_row(n: int) -> dict:
    import shutil

    from core.cluster.session import open_session
    source = _parts(n, max(1, n // 250_000))
    output = PARTS / f"out_{n}"
    try:
        with open_session(n_workers=2) as session:
            result = anonymize_blocked(str(source), ROLES, "mdav", k=K,
                                       scheduler=session.address, output=str(output),
                                       overwrite=True)
            workers = sorted(session.client.run(_peak_mb).values())
    finally:
        shutil.rmtree(PARTS, ignore_errors=True)
    return {"task": f"blocked MDAV (N={result.block_size:,}), Parquet parts in and out, "
                    "local cluster of two workers",
            "size": f"{n:,} × {D}", "before_s": None, "after_s": result.seconds,
            "target": "≤ 600 s" if n >= 10_000_000 else "—",
            "check": f"k-anonymous over the whole release: {result.passed} "
                     f"(smallest class {result.verification.smallest_class}); "
                     f"IL {result.il:.3f} %; {result.n_blocks:,} blocks; "
                     f"{n / result.seconds:,.0f} records/s; peak memory: client "
                     f"{_peak_mb():,.0f} MB, workers "
                     f"{', '.join(f'{w:,.0f}' for w in workers)} MB; "
                     f"load {_load()}"}


def _load() -> str:
    import os
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def rows(quick: bool, *, sweep: bool = False, partitioned: int | None = None) -> list[dict]:
    out = _sweep_rows() if sweep else []
    n = 200_000 if quick else 1_000_000
    table, unblocked, unblocked_s = _unblocked(n)
    # 200,000 records would be one block of the default size: --quick cuts four.
    out.append(_il_row(table, unblocked, unblocked_s, 50_000 if quick else DEFAULT_BLOCK_SIZE))
    out.append(_partitioned_row(partitioned or (1_000_000 if quick else 10_000_000)))
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sweep", action="store_true",
                        help="blocked IL and time for several block sizes at 200,000")
    parser.add_argument("--partitioned", type=int, metavar="N",
                        help="records of the partitioned run (default 10,000,000)")
    arguments = parser.parse_args()
    for row in rows(arguments.quick, sweep=arguments.sweep,
                    partitioned=arguments.partitioned):
        print(row, flush=True)
