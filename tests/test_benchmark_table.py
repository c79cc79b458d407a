"""``benchmarks/bench_scale.py`` builds its one table from every ``scale_<name>.py``: each
must give its rows through ``rows(quick)``, or a full run stops at that module."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

SCALE_SCRIPTS = sorted(p.stem for p in
                       (Path(__file__).resolve().parent.parent / "benchmarks").glob("scale_*.py"))


def test_there_are_scale_scripts():
    assert {"scale_mdav", "scale_cancel", "scale_tfirst_searches"} <= set(SCALE_SCRIPTS)


@pytest.mark.parametrize("name", SCALE_SCRIPTS)
def test_every_scale_script_gives_rows_of_quick(name):
    module = importlib.import_module(f"benchmarks.{name}")
    rows = getattr(module, "rows", None)
    assert callable(rows), f"benchmarks/{name}.py has no rows(quick)"
    inspect.signature(rows).bind(True)  # bench_scale calls rows(args.quick)
