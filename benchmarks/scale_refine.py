"""IGD and TFRP2 refinement: compiled passes against the numpy implementation.

Labels: CBFS fixed-size groups (k = 5) of standard-normal data, cached under /tmp.
``python benchmarks/scale_refine.py [--quick]`` prints the rows alone.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from core.measures.partition import sse  # noqa: E402
from core.methods.heuristics import fixed_size  # noqa: E402
from core.methods.refine import refine  # noqa: E402


def _case(n):
    X = np.random.default_rng(0).standard_normal((n, 10))
    cache = Path(f"/tmp/microagg_refine_cbfs_{n}.npy")
    if cache.exists():
        return X, np.load(cache)
    labels = fixed_size(X, k=5, first="cbfs")
    np.save(cache, labels)
    return X, labels


def rows(quick: bool) -> list[dict]:
    out = []
    for n in ([5_000] if quick else [20_000]):
        X, labels = _case(n)
        refine(X[:100], np.arange(100) // 5, k=5, compiled=True)  # compile first
        for method in ("tfrp2", "igd"):
            began = time.perf_counter()
            old = refine(X, labels, k=5, method=method, compiled=False)
            before = time.perf_counter() - began
            began = time.perf_counter()
            new = refine(X, labels, k=5, method=method, compiled=True)
            after = time.perf_counter() - began
            out.append(dict(task=f"refine {method} (compiled vs numpy)", size=f"{n:,} × 10",
                            before_s=before, after_s=after,
                            target="≤ 30 s at 100,000" if method == "igd" else "faster",
                            check=f"same labels: {bool(np.array_equal(old, new))}, "
                                  f"same SSE: {sse(X, old) == sse(X, new)}"))
    return out


if __name__ == "__main__":
    for row in rows("--quick" in sys.argv):
        print(row)
