"""What the census-scale benchmarks share: timing a call, the code of an earlier commit
to time beside today's, and a whole run beside its bare method."""

from __future__ import annotations

import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def timed(function, *args, **kwargs):
    """``(function(*args, **kwargs), seconds)``."""
    began = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - began


def old_module(path: str, base: str, name: str | None = None, **replace):
    """The module at ``path`` as it was at commit ``base`` (None without git), its
    globals ``replace`` swapped in. Compiled under a name that is no file: the compiled
    kernels' cache is kept by file and function name, and the earlier kernels must not
    be taken for today's (or today's for them)."""
    try:
        source = subprocess.run(["git", "show", f"{base}:{path}"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType(name or "old_" + Path(path).stem)
    sys.modules[module.__name__] = module
    exec(compile(source, f"<{base}:{path}>", "exec"), module.__dict__)
    module.__dict__.update(replace)
    return module


def whole_beside_bare(bare, whole, runs: int) -> tuple[float, float, object, object]:
    """Medians of ``runs`` timings of ``bare()`` and ``whole()``, alternated so that the
    machine's load hits both, with the last results of each."""
    bare_times, whole_times = [], []
    for _ in range(runs):
        bare_result, seconds = timed(bare)
        bare_times.append(seconds)
        whole_result, seconds = timed(whole)
        whole_times.append(seconds)
    return (float(np.median(bare_times)), float(np.median(whole_times)), bare_result,
            whole_result)
