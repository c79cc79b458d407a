"""The kept-column follows check at census scale, beside the code it replaces.

    python benchmarks/scale_follows.py [--quick]
    python benchmarks/bench_scale.py --only follows

A PCP release (k = 5) of 1,000,000 × 10 standard-normal quasi-identifiers (100,000 with
``--quick``) with three kept columns: a copy of x0 with noise at a tenth of its
standard deviation (said), an unrelated column and a column of 50 codes. Rows:

- the attack on one pair (:func:`core.pipeline.tracks.picked_out`) beside the kernel of
  :data:`BASE`, which sorted and searched every class (median of five, alternated);
- every release warning after the method (the exact relations, a search of the
  original alone that a run makes ahead, given to both): the previous check of
  :data:`BASE` (ranks made after the method, one pair after another) beside today's
  with the original's ranks made ahead, as a run makes them while its method runs, and
  the pairs on two threads; the ranks' own time, which a run spends on its helper
  thread, is printed beside it;
- a whole ``anonymize`` run with the kept columns beside the bare method (medians of
  three, alternated).

Each row checks that the figures (or the warnings, word for word) are the previous
code's.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from core import anonymize  # noqa: E402
from core.data.encoding import encode  # noqa: E402
from core.data.roles import RoleSpec  # noqa: E402
from core.methods.projection import pcp  # noqa: E402
from core.pipeline import tracks  # noqa: E402
from core.pipeline.follows import OriginalRanks, rank_columns  # noqa: E402
from core.pipeline.warnings import column_relations, release_warnings  # noqa: E402
from benchmarks.peers import old_module, timed as _timed, whole_beside_bare  # noqa: E402

BASE = "8082467"  # the commit before the ranks made ahead and the pairwise attack


def _table(n: int) -> tuple[pd.DataFrame, RoleSpec]:
    rng = np.random.default_rng(0)
    columns = [f"x{j}" for j in range(10)]
    table = pd.DataFrame(rng.standard_normal((n, 10)), columns=columns)
    table["copy"] = table["x0"] + rng.normal(scale=0.1, size=n)
    table["unrelated"] = rng.standard_normal(n)
    table["codes"] = rng.integers(0, 50, n).astype(float)
    return table, RoleSpec(quasi_identifiers=tuple(columns),
                           confidential=("copy", "unrelated", "codes"))


def _follows(warnings) -> list[str]:
    return [w.message for w in warnings if w.kind == "kept-column-follows"]


def _said(warnings) -> list[tuple[str, str]]:
    return [(w.kind, w.message) for w in warnings]


def rows(quick: bool) -> list[dict]:
    n = 100_000 if quick else 1_000_000
    size = f"{n:,} × 10, 3 kept"
    table, roles = _table(n)
    anonymize(table.iloc[:2000], roles, "pcp", k=5)  # the kernels loaded
    result = anonymize(table, roles, "pcp", k=5)
    masked, m = result.masked, result.measures
    out = []

    old_tracks = old_module("core/pipeline/tracks.py", BASE)
    order, starts = tracks.class_blocks(m.classes)
    blocks = (np.arange(n), starts)
    kept = {c: tracks.ranks(table[c].to_numpy())[order] for c in roles.confidential}
    known = {q: tracks.ranks(table[q].to_numpy())[order] for q in roles.quasi_identifiers}
    if old_tracks is not None:
        small = tracks.class_blocks(np.arange(100) // 5)  # the previous kernel compiled
        old_tracks.picked_out(small, known["x0"][:100], kept["copy"][:100])
        befores, afters = [], []
        for _ in range(5):
            previous, before = _timed(old_tracks.picked_out, blocks, known["x0"], kept["copy"])
            found, after = _timed(tracks.picked_out, blocks, known["x0"], kept["copy"])
            befores.append(before)
            afters.append(after)
        # Every pair's figures to the last bit, the 50 codes' ties among them.
        differ = [(c, q) for c in kept for q in known
                  if tracks.picked_out(blocks, known[q], kept[c])
                  != old_tracks.picked_out(blocks, known[q], kept[c])]
        out.append({"task": "follows: the attack on one pair", "size": f"{n:,}",
                    "before_s": float(np.median(befores)),
                    "after_s": float(np.median(afters)), "target": "—",
                    "check": (f"the same figures, all {len(kept) * len(known)} pairs"
                              if not differ else f"DIFFERENT figures: {differ}")})

    # The exact relations, a search of the original alone, are made ahead by both.
    common = dict(group_sizes=m.class_sizes, il=m.il, k_prime=m.k_prime,
                  unique_records=m.unique_records, record_level=True, classes=m.classes,
                  relations=column_relations(table, roles))
    old_warnings = (old_module("core/pipeline/warnings.py", BASE, tracks=old_tracks)
                    if old_tracks is not None else None)
    before, previous = None, None
    if old_warnings is not None:
        previous, before = _timed(old_warnings.release_warnings, table, masked, roles,
                                  **common)
    ranks = OriginalRanks(table, rank_columns(table, roles))
    _, ahead = _timed(ranks.make, rank_columns(table, roles))
    with ThreadPoolExecutor(max_workers=1) as executor:
        found, after = _timed(release_warnings, table, masked, roles, ranks=ranks,
                              executor=executor, **common)
    said = _follows(found)
    check = (f"ranks ahead {ahead:.2f} s; {len(said)} said; "
             + ("no git: not compared" if previous is None else
                "same warnings" if _said(found) == _said(previous) else
                "DIFFERENT warnings"))
    out.append({"task": "follows: every release warning after the method", "size": size,
                "before_s": before, "after_s": after, "target": "—", "check": check})

    X = encode(table, roles, strict=False).X
    runs = 1 if quick else 3
    bare, whole, _, _ = whole_beside_bare(lambda: pcp(X, k=5),
                                          lambda: anonymize(table, roles, "pcp", k=5), runs)
    out.append({"task": "whole anonymize (pcp, 3 kept columns, no file IO) beside the "
                        "bare method", "size": size, "before_s": bare, "after_s": whole,
                "target": "whole ≤ 3 × bare",
                "check": f"medians of {runs}: whole / bare = {whole / bare:.1f}×"})
    return out


if __name__ == "__main__":
    for row in rows("--quick" in sys.argv):
        before = "—" if row["before_s"] is None else f"{row['before_s']:.3f}"
        print(f"{row['task']:<78} {row['size']:>24} before {before:>7} s  after "
              f"{row['after_s']:.3f} s  target {row['target']}  ({row['check']})")
