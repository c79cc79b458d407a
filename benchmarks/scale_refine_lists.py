"""IGD and TFRP2 after PCP: candidate lists that grow when they fail, against lists kept
short.

The compiled refinement (:mod:`core.methods.refine_passes`) lists 16 candidate groups
per record and grows the lists to 64 once more than 1 in 20 questions fall back to
comparing the record with every group (after PCP or z-scores, whose groups are slabs).
This runs both ways on the same partition, in the same process and alternated, and
checks that they give the same labels; an MDAV partition shows that the rule leaves a
refinement that does not need longer lists alone.

    python benchmarks/scale_refine_lists.py [N ...]
    python benchmarks/bench_scale.py --only refine_lists [--quick]

Default sizes 20,000 and 50,000 × 10 (standard normal, k = 5); 100,000 takes about eight
minutes more.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from core.methods import refine_passes  # noqa: E402
from core.methods.mdav import mdav  # noqa: E402
from core.methods.projection import pcp  # noqa: E402
from core.methods.refine import prepared, refine  # noqa: E402
from core.methods.refine_kernel import CANDIDATES, LONG_CANDIDATES  # noqa: E402
from core.progress import TaskState  # noqa: E402


def _timed(Xc, sq, labels, tolerance, method, longer):
    grown = []
    plain = refine_passes.longer_lists

    def counted(state, candidates):
        grown.append(candidates)
        return plain(state, candidates)

    refine_passes.longer_lists = counted
    try:
        began = time.perf_counter()
        out = refine_passes.refine_compiled(
            Xc, sq, labels, k=5, method=method, max_rounds=1000, tolerance=tolerance,
            state=TaskState(), longer=longer)
        return out, time.perf_counter() - began, bool(grown)
    finally:
        refine_passes.longer_lists = plain


def measured(sizes) -> list[dict]:
    """One row per partition, refinement and size: both ways' seconds and labels."""
    refine(np.arange(200.0).reshape(100, 2), np.arange(100) // 5, k=5)  # compile first
    out = []
    for n in sizes:
        X = np.random.default_rng(0).standard_normal((n, 10))
        Xc, sq, tolerance = prepared(X)
        for name, method in (("pcp", "tfrp2"), ("pcp", "igd"), ("mdav", "igd")):
            labels = pcp(X, k=5) if name == "pcp" else mdav(X, k=5)
            labels = np.unique(labels, return_inverse=True)[1].reshape(-1).astype(np.int64)
            short, short_s, _ = _timed(Xc, sq, labels, tolerance, method, CANDIDATES)
            long_, long_s, grew = _timed(Xc, sq, labels, tolerance, method,
                                         LONG_CANDIDATES)
            out.append({"partition": name, "method": method, "n": n, "short_s": short_s,
                        "long_s": long_s, "grew": grew,
                        "same": bool(np.array_equal(short, long_))})
    return out


def rows(quick: bool) -> list[dict]:
    """For ``benchmarks/bench_scale.py``: the lists kept short are the peer."""
    return [{
        "task": f"{r['partition'].upper()} + {r['method'].upper()}, candidate lists "
                f"{'grown' if r['grew'] else 'kept short'}",
        "size": f"{r['n']:,} × 10", "before_s": r["short_s"], "after_s": r["long_s"],
        "target": "≤ 30 s at 100,000" if r["method"] == "igd" else "faster",
        "check": f"same labels: {r['same']}",
    } for r in measured([5_000] if quick else [20_000, 50_000])]


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [20_000, 50_000]
    header = ("partition", "refinement", "records", f"{CANDIDATES} listed s",
              "growing lists s", "ratio", "grew", "same labels", "load avg")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in measured(sizes):
        cells = (r["partition"], r["method"], f"{r['n']:,} × 10", f"{r['short_s']:.2f}",
                 f"{r['long_s']:.2f}", f"{r['short_s'] / r['long_s']:.2f}×",
                 "yes" if r["grew"] else "no", str(r["same"]), f"{os.getloadavg()[0]:.1f}")
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
