"""Census scale, t-closeness (Soria-Comas et al. 2015, Algorithms 1–3): rows for bench_scale.

    python benchmarks/scale_tcloseness.py [--quick]

Data: d = 10 standard normal quasi-identifiers and one confidential attribute tied to
them (x₀ + x₁/2 + noise), k = 5, t = 0.1. Rows:

* tc-kfirst, numpy reference against the compiled path at 30,000 records (5,000 with
  ``--quick``), same labels, swaps and merges checked;
* tc-kfirst at 100,000 (20,000), compiled path only (the reference does not finish);
* Algorithm 1's merging after MDAV, reference against compiled, same labels checked;
* tc-merge and tc-tfirst at 100,000 (20,000) beside MDAV on the same data in the same
  run (MDAV is the "before" column: the target is MDAV's speed);
* tc-bucket (multiplicative t = 1.5), the reference's passes over the records against
  the compiled loop at 20,000 (5,000), same labels checked, and at 100,000 (20,000)
  beside MDAV;
* Algorithm 1's merging after MDAV at 300,000 (100,000) on one thread and with its
  screen shared with a helper thread, same labels checked.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from core.methods import tcloseness  # noqa: E402
from core.methods.mdav import mdav  # noqa: E402
from core.methods.tcloseness import tc_kfirst, tc_merge  # noqa: E402
from core.methods.tfirst import tc_tfirst  # noqa: E402
from core.privacy.attributes import tclose_attributes  # noqa: E402
from core.progress import TaskState  # noqa: E402

K, T = 5, 0.1


def _data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 10))
    confidential = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n)
    return X, tclose_attributes(confidential)


def _timed(function, *args, **kwargs):
    started = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - started


def _reference(function, *args, **kwargs):
    """Run with the numpy reference paths (as without numba)."""
    saved = tcloseness.COMPILED
    tcloseness.COMPILED = False
    try:
        return _timed(function, *args, **kwargs)
    finally:
        tcloseness.COMPILED = saved


def _same(a, b) -> bool:
    return bool(np.array_equal(a.labels, b.labels) and a.swaps == b.swaps
                and a.merges == b.merges)


def rows(quick: bool) -> list[dict]:
    small, large = (5_000, 20_000) if quick else (30_000, 100_000)
    out = []
    X, attributes = _data(small)
    _timed(tc_kfirst, X[:200], [tclose_attributes(np.arange(200.0))[0]], k=K, t=T)  # compile
    reference, before = _reference(tc_kfirst, X, attributes, k=K, t=T)
    compiled, after = _timed(tc_kfirst, X, attributes, k=K, t=T)
    out.append(dict(task="tc-kfirst (reference → compiled)", size=f"{small:,}",
                    before_s=before, after_s=after, target="≤ 60 s at 100,000",
                    check=f"same labels, swaps ({compiled.swaps}), merges "
                          f"({compiled.merges}): {_same(reference, compiled)}"))
    X, attributes = _data(large)
    part, after = _timed(tc_kfirst, X, attributes, k=K, t=T)
    out.append(dict(task="tc-kfirst (compiled)", size=f"{large:,}", before_s=None,
                    after_s=after, target="≤ 60 s",
                    check=f"{part.swaps} swaps, {part.merges} merges, max EMD "
                          f"{max(part.max_emd):.4f} ≤ {T}"))
    base, mdav_s = _timed(mdav, X, k=K)
    (labels_ref, merges_ref), before = _timed(
        tcloseness._merge_until_close, X, attributes, base, T, TaskState())
    from core.compiled import COMPILED
    if COMPILED:
        from core.methods.tclose_merge import merge_until_close
        (labels, merges), after = _timed(merge_until_close, X, attributes, base, T,
                                         TaskState(), tcloseness._compact)
        out.append(dict(task="Algorithm 1 merging after MDAV (reference → compiled)",
                        size=f"{large:,}", before_s=before, after_s=after,
                        target="small beside MDAV",
                        check=f"same labels and merges ({merges}): "
                              f"{bool(np.array_equal(labels, labels_ref)) and merges == merges_ref}"))
    part, after = _timed(tc_merge, X, attributes, k=K, t=T)
    out.append(dict(task="tc-merge (before = MDAV alone)", size=f"{large:,}", before_s=mdav_s,
                    after_s=after, target="MDAV speed",
                    check=f"{part.merges} merges; max EMD {max(part.max_emd):.4f} ≤ {T}"))
    part, after = _timed(tc_tfirst, X, attributes, k=K, t=T)
    out.append(dict(task="tc-tfirst (before = MDAV alone)", size=f"{large:,}",
                    before_s=mdav_s, after_s=after, target="MDAV speed",
                    check=f"cluster size {part.cluster_size}, {part.merges} merges; max "
                          f"EMD {max(part.max_emd):.4f} ≤ {T}"))
    from core.methods import bucket
    from core.methods.bucket import tc_bucket
    y = attributes[0].codes
    middle = large // 5
    saved = bucket.COMPILED
    bucket.COMPILED = False
    try:
        reference, before = _timed(tc_bucket, X[:middle], y[:middle], k=K, t=1.5)
    finally:
        bucket.COMPILED = saved
    part, after = _timed(tc_bucket, X[:middle], y[:middle], k=K, t=1.5)
    out.append(dict(task="tc-bucket (reference → compiled)", size=f"{middle:,}",
                    before_s=before, after_s=after, target="every method at 100,000",
                    check=f"same labels: {bool(np.array_equal(part.labels, reference.labels))}"))
    part, after = _timed(tc_bucket, X, y, k=K, t=1.5)
    out.append(dict(task="tc-bucket (before = MDAV alone)", size=f"{large:,}",
                    before_s=mdav_s, after_s=after, target="every method at 100,000",
                    check=f"{part.n_classes:,} classes, largest distance "
                          f"{part.max_distance:.4f} ≤ 1.5"))
    if COMPILED:
        out.append(_merging_threads(100_000 if quick else 300_000))
    return out


def _merging_threads(n: int) -> dict:
    """Algorithm 1's merging after MDAV on one thread and with the screen shared with a
    helper (tclose_screen), same labels checked."""
    from core.methods.tclose_merge import merge_until_close
    from core.threads import single_thread

    X, attributes = _data(n)
    base = mdav(X, k=K)
    with single_thread():
        (one, merges), before = _timed(merge_until_close, X, attributes, base, T,
                                       TaskState(), tcloseness._compact)
    (two, merges_two), after = _timed(merge_until_close, X, attributes, base, T, TaskState(),
                                      tcloseness._compact)
    return dict(task="Algorithm 1 merging after MDAV (one thread → two)", size=f"{n:,}",
                before_s=before, after_s=after, target="MDAV speed at 1,000,000",
                check=f"same labels and merges ({merges}): "
                      f"{bool(np.array_equal(one, two)) and merges == merges_two}")


if __name__ == "__main__":
    for row in rows("--quick" in sys.argv):
        print(row)
