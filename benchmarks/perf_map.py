"""Profile the compiled kernels with Linux perf: a perf map names numba's machine code.

    NUMBA_CACHE_DIR=$(mktemp -d) perf record -o perf.data \\
        python benchmarks/perf_map.py tc-tfirst 100000 10 [--runs 3]
    perf report -i perf.data --sort sym

perf shows code it has no symbols for as bare addresses, and numba's kernels are such
code. After the runs, this script writes ``/tmp/perf-<pid>.map`` (the form perf reads
for code made at run time): each kernel's compiled functions with their addresses,
from the dispatchers' libraries. A library loaded from numba's cache keeps no module to
list its functions, so the kernels must be compiled in the process: hence the empty
``NUMBA_CACHE_DIR`` (the first run then compiles for a minute or two; perf's share of
it is the compiler's, below the kernels'). ``MICROAGG_SEARCH_THREADS=1`` keeps a run on
one thread. Data: standard normal columns, the confidential attribute x₀ + x₁/2 +
noise, k = 5, t = 0.1 (tc-bucket: the multiplicative t = 1.5).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402


def _runs():
    from core.methods.bucket import tc_bucket
    from core.methods.mdav import mdav
    from core.methods.tfirst import tc_tfirst
    return {"mdav": lambda X, y: mdav(X, k=5),
            "tc-tfirst": lambda X, y: tc_tfirst(X, y, k=5, t=0.1),
            "tc-bucket": lambda X, y: tc_bucket(X, y, k=5, t=1.5)}


def kernel_addresses(prefix: str = "core") -> list[tuple[int, str]]:
    """``(address, symbol)`` of every function compiled in this process by a kernel of a
    module under ``prefix``, sorted by address."""
    from numba.core.registry import CPUDispatcher

    found, seen = [], set()
    for name, module in list(sys.modules.items()):
        if not name.startswith(prefix):
            continue
        for value in list(vars(module).values()):
            if not isinstance(value, CPUDispatcher) or id(value) in seen:
                continue
            seen.add(id(value))
            for compiled in value.overloads.values():
                library = compiled.library
                module_ir = getattr(library, "_final_module", None)
                if module_ir is None:  # loaded from the cache (module notes)
                    continue
                for function in module_ir.functions:
                    if function.is_declaration:
                        continue
                    address = library.get_pointer_to_function(function.name)
                    if address:
                        found.append((address, function.name))
    return sorted(set(found))


def write_map(addresses: list[tuple[int, str]], path: Path) -> None:
    """perf's map: ``start size symbol`` in hex, each function reaching to the next."""
    with open(path, "w", encoding="ascii") as out:
        for (start, symbol), (following, _) in zip(addresses,
                                                    addresses[1:] + [(addresses[-1][0] + 4096, "")]):
            size = max(16, min(following - start, 1 << 20))
            out.write(f"{start:x} {size:x} {symbol}\n")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("method", choices=("mdav", "tc-tfirst", "tc-bucket"))
    parser.add_argument("records", type=int)
    parser.add_argument("columns", type=int)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.records, args.columns))
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=args.records)
    run = _runs()[args.method]
    run(X[:3000], y[:3000])  # compiles
    for _ in range(args.runs):
        began = time.perf_counter()
        run(X, y)
        print(f"{args.method} {args.records:,} × {args.columns}: "
              f"{time.perf_counter() - began:.2f} s", flush=True)
    addresses = kernel_addresses()
    if not addresses:
        sys.exit("no compiled kernel to name: run with an empty NUMBA_CACHE_DIR (module notes)")
    path = Path(f"/tmp/perf-{os.getpid()}.map")
    write_map(addresses, path)
    print(f"{len(addresses)} functions named in {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
