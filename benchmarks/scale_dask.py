"""Blocked MDAV on Dask: information loss against unblocked MDAV, and a partitioned run.

    python benchmarks/scale_dask.py [--quick]
    python benchmarks/bench_scale.py --only dask [--quick]

Rows:

* IL of blocked MDAV (2^d-tree blocks of 5,000, Solé, Muntés-Mulero & Nin 2012) against
  unblocked MDAV on the same records with the same standardization, 1,000,000 × 10
  (``--quick``: 200,000 × 10); ``before_s`` is the unblocked run, ``after_s`` the
  blocked one (local cluster of two worker processes, start-up included).
* 10,000,000 × 10 records (``--quick``: 1,000,000) read from a folder of Parquet parts
  under /tmp, released as a folder of Parquet parts and verified over the whole table.
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
from core.cluster import anonymize_blocked  # noqa: E402
from core.data.prepare import standardize  # noqa: E402
from core.data.roles import RoleSpec  # noqa: E402
from core.measures.partition import sse, sst  # noqa: E402
from core.methods.mdav import mdav  # noqa: E402

D, K, BLOCK = 10, 5, 5_000
PARTS = Path("/tmp/microagg_scale_dask")
COLUMNS = [f"x{j}" for j in range(D)]


def _il_row(n: int) -> dict:
    table = pd.DataFrame(numeric_records(n, D, random_state=0), columns=COLUMNS)
    X = standardize(table, COLUMNS).X
    started = time.perf_counter()
    labels = mdav(X, k=K)
    unblocked_s = time.perf_counter() - started
    unblocked = 100.0 * sse(X, labels) / sst(X)
    result = anonymize_blocked(table, RoleSpec(quasi_identifiers=tuple(COLUMNS)), "mdav",
                               k=K, block_size=BLOCK, n_workers=2)
    gap = 100.0 * (result.il - unblocked) / unblocked
    return {"task": f"blocked MDAV IL vs unblocked (k={K}, N={BLOCK})",
            "size": f"{n:,} × {D}", "before_s": unblocked_s, "after_s": result.seconds,
            "target": "IL within 2 % (relative)",
            "check": f"IL {result.il:.3f} % vs {unblocked:.3f} % ({gap:+.2f} %); "
                     f"verified k={K}: {result.passed}"}


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


def _partitioned_row(n: int) -> dict:
    source = _parts(n, max(1, n // 250_000))
    output = PARTS / f"out_{n}"
    result = anonymize_blocked(str(source), RoleSpec(quasi_identifiers=tuple(COLUMNS)),
                               "mdav", k=K, block_size=BLOCK, n_workers=2,
                               output=str(output), overwrite=True)
    return {"task": "blocked MDAV, Parquet parts in and out, local cluster",
            "size": f"{n:,} × {D}", "before_s": None, "after_s": result.seconds,
            "target": "≤ 600 s" if n >= 10_000_000 else "—",
            "check": f"k-anonymous over the whole release: {result.passed} "
                     f"(smallest class {result.verification.smallest_class}); "
                     f"IL {result.il:.3f} %; {result.n_blocks:,} blocks"}


def rows(quick: bool) -> list[dict]:
    return [_il_row(200_000 if quick else 1_000_000),
            _partitioned_row(1_000_000 if quick else 10_000_000)]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    for row in rows(parser.parse_args().quick):
        print(row)
