"""Distance-based record linkage (DLD) on 100,000 synthetic records with 10 attributes.

    python benchmarks/bench_linkage.py [N]
    python benchmarks/bench_linkage.py --nominal [N]

:func:`core.measures.disclosure.record_linkage` (KD-tree over the distinct original points, one
nearest-neighbour query per distinct masked point, a ball search only where the own
record is tied nearest) against four maskings of ``benchmarks/synthetic.py``'s
``numeric_records(N, 10)``: the identity, a microaggregation (groups of 5 consecutive
records along the first principal component, replaced by their means), and additive
noise of 5% and 20% of each attribute's standard deviation. The time depends on the
masking: a KD-tree query in 10 dimensions is fast when the nearest original is close
(microaggregated or lightly perturbed records) and slower when heavy noise puts every
masked record far from all originals.

``--nominal``: the tables of ``bench_estimate.py --nominal`` with nominal attributes
(default N = 60,000), released by MDAV and by PCP (k = 5) through
:func:`core.anonymize`, their
DLD with every attribute known timed with the nominal attributes' indicator blocks kept
as one column each in the search tree (as a run does) and as their full width, three
times alternated; the figures must be equal.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic import numeric_records  # noqa: E402
from core import anonymize  # noqa: E402
from core.data.aggregate import group_means  # noqa: E402
from core.data.encoding import encode  # noqa: E402
from core.measures.ahead import known_blocks  # noqa: E402
from core.measures.disclosure import record_linkage  # noqa: E402
from core.methods.projection import pcp_projection  # noqa: E402


def main(n: int = 100_000, d: int = 10) -> None:
    X = numeric_records(n, d)
    mean, std = X.mean(axis=0), X.std(axis=0)
    Z = (X - mean) / std
    labels = np.empty(n, dtype=np.int64)
    labels[np.argsort(pcp_projection(Z), kind="stable")] = np.arange(n) // 5
    rng = np.random.default_rng(1)
    maskings = {
        "identity": X,
        "microaggregation, groups of 5": group_means(X, labels)[labels],
        "noise 5% of std": X + rng.normal(size=X.shape) * std * 0.05,
        "noise 20% of std": X + rng.normal(size=X.shape) * std * 0.20,
    }
    print(f"record linkage, {n} records x {d} attributes (all known to the intruder)")
    print(f"{'masking':32} {'DLD %':>8} {'seconds':>8}")
    for name, masked in maskings.items():
        started = time.perf_counter()
        dld = record_linkage(Z, (masked - mean) / std)
        print(f"{name:32} {dld:8.3f} {time.perf_counter() - started:8.2f}")


def nominal_main(n: int = 60_000, repeats: int = 3) -> None:
    from benchmarks.bench_estimate import nominal_frame

    print(f"record linkage of releases (k = 5), {n:,} records, every attribute known;"
          f" best of {repeats}, alternated")
    print(f"{'release':8} {'table':14} {'columns':>7} {'DLD %':>8} {'full width s':>12} "
          f"{'one column s':>12} {'ratio':>6}")
    for method, name in itertools.product(
            ("mdav", "pcp"), ("census", "few-categories", "one-large", "five-nominal")):
        table, roles = nominal_frame(n, name)
        result = anonymize(table, roles, method, k=5)
        encoding = encode(table, roles, strict=False)
        Z = encoding.X
        Z_masked = encoding.embed(encoding.values_of(result.masked)[0])
        blocks = known_blocks(encoding, roles.quasi_identifiers)
        best = {"full": np.inf, "blocks": np.inf}
        figures = set()
        for _ in range(repeats):
            for way, given in (("full", ()), ("blocks", blocks)):
                started = time.perf_counter()
                figures.add(record_linkage(Z, Z_masked, blocks=given))
                best[way] = min(best[way], time.perf_counter() - started)
        assert len(figures) == 1, f"{name}: the figures differ: {figures}"
        print(f"{method:8} {name:14} {Z.shape[1]:7} {figures.pop():8.3f} {best['full']:12.2f} "
              f"{best['blocks']:12.2f} {best['full'] / best['blocks']:6.2f}")


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if a.isdigit()]
    if "--nominal" in sys.argv:
        nominal_main(*numbers[:1])
    else:
        main(*numbers[:1])
