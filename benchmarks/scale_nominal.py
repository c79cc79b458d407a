"""Exact MDAV, CBFS, V-MDAV and GSMS on tables of nominal quasi-identifiers: this
checkout beside an earlier commit's code, on the same tables in the same run.

    python benchmarks/scale_nominal.py [--quick] [--before REV] [METHOD:N:TABLE ...]

The tables are ``bench_estimate.NOMINAL_TABLES`` (``census``: age, education, sex,
marital status, region and occupation, 59 embedded columns; ``five-nominal``: two
numbers and five nominal attributes of 2 to 50 categories, 124 columns; ...), embedded
as a run embeds them (:meth:`core.data.encoding.Encoding.embed`), k = 5, the searches on
two threads where the machine has two processors. ``before`` is REV's code (by default
the commit before the spatial index bounded a nominal attribute's block as one
attribute), checked out in a temporary git worktree; each run, before or after, is a
fresh process on the same table (saved once), the two alternated, and the faster of two
runs of each is shown. Every row checks that the two give the same labels. Without git,
only this checkout is timed. Cases on the command line (``vmdav:100000:census``) replace
the default ones.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

BEFORE = "a45eff4"  # the last commit before the block bounds
_RUN = """
import sys, time
sys.path.insert(0, {root!r})
import numpy as np
from core.methods.heuristics import fixed_size
from core.methods.gsms import gsms
from core.methods.vmdav import vmdav
run = {{"gsms": gsms, "vmdav": vmdav}}.get({method!r})
if run is None:
    def run(X, k, first={method!r}):
        return fixed_size(X, k=k, first=first)
X = np.load({table!r})
run(X[:2000], k=5)  # compile, or load the cache, first
began = time.perf_counter()
labels = run(X, k=5)
print(time.perf_counter() - began)
np.save({out!r}, labels)
"""


def _table(n: int, name: str) -> np.ndarray:
    from benchmarks.bench_estimate import nominal_frame
    from core.data.encoding import encode

    table, roles = nominal_frame(n, name)
    encoding = encode(table, roles)
    return encoding.embed(encoding.values)


def _timed(root: Path, table: Path, method: str, out: Path) -> float:
    code = _RUN.format(root=str(root), table=str(table), method=method, out=str(out))
    done = subprocess.run([sys.executable, "-c", code], cwd=root, check=True,
                          capture_output=True, text=True)
    return float(done.stdout.split()[-1])


@contextlib.contextmanager
def before_checkout(rev: str, folder: Path):
    """REV checked out in a git worktree under ``folder`` for the ``with`` block (None
    without git or REV), removed afterwards."""
    where = folder / "before"
    done = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                           str(where), rev], capture_output=True, text=True)
    if done.returncode:
        yield None
        return
    try:
        yield where
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                        str(where)], capture_output=True)


def best_of_two(after, before=None) -> tuple[float, float | None]:
    """``after()`` and ``before()`` (seconds each) run twice, alternated: the faster of
    each (``before``'s None without it)."""
    after_s, before_s = [], []
    for _ in range(2):
        after_s.append(after())
        if before is not None:
            before_s.append(before())
    return min(after_s), min(before_s) if before_s else None


def rows(quick: bool, rev: str = BEFORE, cases=None):
    cases = cases or _cases(quick)
    with tempfile.TemporaryDirectory() as folder:
        yield from _rows(cases, rev, Path(folder))


def _cases(quick: bool) -> list:
    cases = [("mdav", 100_000, "census"), ("mdav", 100_000, "five-nominal"),
             ("mdav", 100_000, "few-categories"), ("mdav", 100_000, "one-large"),
             ("mdav", 100_000, "numeric")]
    if not quick:
        cases += [("cbfs", 100_000, "census"), ("mdav", 300_000, "census"),
                  ("mdav", 300_000, "five-nominal"), ("vmdav", 100_000, "census"),
                  ("gsms", 100_000, "census"), ("gsms", 100_000, "five-nominal")]
    return cases


def _rows(cases, rev: str, folder: Path):
    with before_checkout(rev, folder) as before_root:
        for method, n, name in cases:
            X = _table(n, name)
            table = folder / "table.npy"
            np.save(table, X)
            after_s, before_s = best_of_two(
                lambda: _timed(ROOT, table, method, folder / "after.npy"),
                None if before_root is None else
                lambda: _timed(before_root, table, method, folder / "before.npy"))
            labels = np.load(folder / "after.npy")
            assert np.bincount(labels).min() >= 5
            row = {"task": f"{method.upper()} {name}", "size": f"{n:,}×{X.shape[1]}",
                   "after_s": round(after_s, 2)}
            if before_s is not None:
                same = np.array_equal(labels, np.load(folder / "before.npy"))
                row.update(before_s=round(before_s, 2), ratio=round(after_s / before_s, 2),
                           check="same labels" if same else "LABELS DIFFER")
            yield row


def main(argv: list[str]) -> None:
    rev = argv[argv.index("--before") + 1] if "--before" in argv else BEFORE
    print(f"{'task':<22}{'size':>16}{'before s':>10}{'after s':>9}{'ratio':>7}  check")
    cases = [(m, int(n), t) for m, n, t in (a.split(":") for a in argv if a.count(":") == 2)]
    for row in rows("--quick" in argv, rev, cases):
        print(f"{row['task']:<22}{row['size']:>16}{row.get('before_s', '—'):>10}"
              f"{row['after_s']:>9}{row.get('ratio', '—'):>7}  {row.get('check', '')}",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
