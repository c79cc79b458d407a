"""Census scale: every timing target of the engine, one table with ratios.

    python benchmarks/bench_scale.py [--quick] [--only NAME ...]

Each ``benchmarks/scale_<name>.py`` contributes rows through ``rows(quick) -> list[dict]``;
a row has ``task``, ``size``, ``before_s`` (today's or a peer's time in the same run, or
None), ``after_s``, ``target`` (text such as "≤ 2 s") and ``check`` (what was compared,
for example "same partition"). The machine is shared and noisy, so every row that has a
peer is timed beside it in the same run and the ratio is printed; ``--quick`` uses
smaller sizes so the whole table takes a couple of minutes.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HERE = Path(__file__).resolve().parent


def _modules(only):
    names = sorted(p.stem[len("scale_"):] for p in HERE.glob("scale_*.py"))
    return [n for n in names if not only or n in only]


def _seconds(value):
    return "—" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--only", nargs="*", default=[], help="scale_<NAME>.py modules to run")
    args = parser.parse_args()
    header = ("task", "size", "before s", "after s", "ratio", "target", "check")
    table = []
    for name in _modules(args.only):
        module = importlib.import_module(f"benchmarks.scale_{name}")
        for row in module.rows(args.quick):
            before, after = row.get("before_s"), row["after_s"]
            ratio = f"{before / after:.1f}×" if before and after else "—"
            table.append((row["task"], row["size"], _seconds(before), _seconds(after), ratio,
                          row.get("target", ""), row.get("check", "")))
            print("  ".join(table[-1]), file=sys.stderr, flush=True)
    widths = [max(len(str(r[i])) for r in (header, *table)) for i in range(len(header))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |"
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in table:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")


if __name__ == "__main__":
    main()
