"""tc-tfirst and tc-bucket beside MDAV as the quasi-identifiers grow in number, this
checkout beside an earlier commit's code, on the same tables in the same run.

    python benchmarks/scale_tfirst_dims.py [--before REV] [N:D ...]

Data as ``scale_tcloseness.py`` makes it, with D standard normal quasi-identifiers
(the confidential attribute x₀ + x₁/2 + noise), k = 5; tc-tfirst at t = 0.1 and
tc-bucket at the multiplicative t = 1.5. Each method's run is a fresh process on the
same table (saved once), this checkout's and REV's (by default the commit before
tc-tfirst's and tc-bucket's pools of everyone took MDAV's leaves) alternated, the faster
of two shown. Every row checks that the two give the same labels; the last column is
this checkout's time over MDAV's in the same run. Cases on the command line
(``100000:20``) replace the default ones (100,000 × 3, 10 and 20).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks.scale_nominal import before_checkout, best_of_two  # noqa: E402

BEFORE = "12f4b22"
_RUN = """
import sys, time
sys.path.insert(0, {root!r})
import numpy as np
from core.methods.mdav import mdav
from core.methods.tfirst import tc_tfirst
from core.methods.bucket import tc_bucket
X, y = np.load({table!r}), np.load({values!r})
runs = {{"mdav": lambda X, y: mdav(X, k=5),
        "tc-tfirst": lambda X, y: tc_tfirst(X, y, k=5, t=0.1).labels,
        "tc-bucket": lambda X, y: tc_bucket(X, y, k=5, t=1.5).labels}}
run = runs[{method!r}]
run(X[:3000], y[:3000])  # compile, or load the cache, first
began = time.perf_counter()
labels = run(X, y)
print(time.perf_counter() - began)
np.save({out!r}, labels)
"""
METHODS = ("mdav", "tc-tfirst", "tc-bucket")


def _timed(root: Path, folder: Path, method: str, out: Path) -> float:
    code = _RUN.format(root=str(root), table=str(folder / "X.npy"),
                       values=str(folder / "y.npy"), method=method, out=str(out))
    done = subprocess.run([sys.executable, "-c", code], cwd=root, check=True,
                          capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def rows(quick: bool, rev: str = BEFORE, cases=None):
    """``benchmarks/bench_scale.py``'s rows: each method beside REV's code, ``check``
    saying whether the labels are the same and the time over MDAV's (``quick``: 20,000
    records)."""
    default = [(20_000, 3), (20_000, 20)] if quick else [(100_000, 3), (100_000, 10),
                                                          (100_000, 20)]
    for method, n, d, before_s, after_s, same, to_mdav in _runs(cases or default, rev):
        check = "" if same is None else "same labels; " if same else "LABELS DIFFER; "
        yield {"task": f"{method} by dimension (before = {rev})", "size": f"{n:,} × {d}",
               "before_s": before_s, "after_s": after_s, "target": "MDAV speed",
               "check": f"{check}{to_mdav:.2f}× MDAV"}


def _runs(cases, rev: str):
    """One tuple per case and method: ``(method, n, d, before_s, after_s, same, ratio
    to MDAV)``; ``before_s`` and ``same`` are None without git or REV."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        with before_checkout(rev, folder) as before_root:
            for n, d in cases:
                rng = np.random.default_rng(0)
                X = rng.normal(size=(n, d))
                np.save(folder / "X.npy", X)
                np.save(folder / "y.npy", X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n))
                mdav_s = None
                for method in METHODS:
                    after_s, before_s = best_of_two(
                        lambda: _timed(ROOT, folder, method, folder / "after.npy"),
                        None if before_root is None else
                        lambda: _timed(before_root, folder, method, folder / "before.npy"))
                    after = np.load(folder / "after.npy")
                    same = (None if before_s is None else
                            np.array_equal(after, np.load(folder / "before.npy")))
                    mdav_s = mdav_s or after_s
                    yield method, n, d, before_s, after_s, same, after_s / mdav_s


def main(argv: list[str]) -> None:
    rev = argv[argv.index("--before") + 1] if "--before" in argv else BEFORE
    cases = [tuple(map(int, a.split(":"))) for a in argv if a.count(":") == 1]
    cases = cases or [(100_000, 3), (100_000, 10), (100_000, 20)]
    print(f"before = {rev}; fresh processes, alternated, best of two")
    print(f"{'method':<11}{'size':>14}{'before s':>10}{'after s':>9}{'ratio':>7}"
          f"{'÷ MDAV':>8}  check")
    for method, n, d, before_s, after_s, same, to_mdav in _runs(cases, rev):
        before = f"{before_s:.2f}" if before_s is not None else "—"
        ratio = f"{after_s / before_s:.2f}" if before_s is not None else "—"
        check = "—" if same is None else "same labels" if same else "LABELS DIFFER"
        print(f"{method:<11}{f'{n:,} × {d}':>14}{before:>10}{after_s:>9.2f}{ratio:>7}"
              f"{to_mdav:>8.2f}  {check}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
