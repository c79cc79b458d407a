"""The first start compiles the engine in a child process; later starts skip it."""

from __future__ import annotations

import sys

import pytest

from core.compiled import COMPILED
from core.methods import registry
from core.pipeline import warmup

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")


def test_warm_up_runs_every_option_of_every_method_it_is_given(monkeypatch):
    mdav = registry.get_method("mdav")
    univariate = registry.get_method("optimal-univariate")
    monkeypatch.setattr(warmup, "methods", lambda: (mdav, univariate))
    from core.methods import spatial_parallel, task_helper
    started = []
    original = task_helper.TaskHelper.__init__
    monkeypatch.setattr(task_helper.TaskHelper, "__init__",
                        lambda self, *a, **kw: started.append(type(self).__name__)
                        or original(self, *a, **kw))
    reports = []
    assert warmup.warm_up(report=reports.append) > 0
    # MDAV: 2 growths × 3 refinements; the univariate method refuses three attributes
    # and runs on the single one; the refinement on its lists; then MDAV and tc-tfirst
    # on 10,000 records, for the helper threads (each must start one, whatever other
    # tests compiled before), tc-merge's helper loop, compiled directly, and the CSV
    # reader's screen for leading zeros.
    assert len(reports) == 12
    assert sum(r.startswith("optimal-univariate") for r in reports) == 1
    assert reports[-5:] == ["refinement on its lists: compiled",
                            "mdav on two threads: compiled",
                            "tc-tfirst on two threads: compiled",
                            "tc-merge on two threads: compiled",
                            "reading: compiled"]
    from core.io.zero_screen import zero_led_compiled
    assert zero_led_compiled is None or zero_led_compiled.signatures
    if spatial_parallel.helper_wanted(6):
        assert started[-2:] == ["SearchHelper", "TaskHelper"]
    from core.methods.tclose_screen import serve
    assert serve.signatures  # compiled (the real run's argument types: tests below)


def test_tc_merges_helper_loop_is_compiled_for_the_types_a_run_gives_it():
    """compile_serve's arguments have the types merge_until_close gives the helper, so
    the warm-up's compiled loop is the one a large run uses (no compiling mid-run)."""
    import numpy as np

    from core.methods.tclose_screen import compile_serve, new_share, serve

    compile_serve()
    before = list(serve.signatures)
    places = 64
    share = new_share(places)
    screen = np.full((3, places), np.inf, dtype=np.float32)
    scratch_q32 = np.empty(3, dtype=np.float32)
    ctrl, bounds, status, _, d32, block_min, _, _ = share
    serve(ctrl, screen, scratch_q32, bounds, d32, block_min, status)  # as _helper passes
    assert list(serve.signatures) == before


def test_every_method_is_warmed_up_with_values_it_accepts():
    """Small values where the method takes them (k = 3, t = 0.5); tc-bucket's
    multiplicative t must be above 1 and keeps its default, so its compiled loop is
    warmed up too (with t = 0.5 it was refused and skipped)."""
    for method in registry.methods():
        for settings in warmup._settings(method):
            for parameter in method.parameters:
                assert parameter.constraint.accepts(settings[parameter.name]), (
                    method.name, parameter.name)
    assert warmup._settings(registry.get_method("tc-bucket")) == [{"k": 3, "t": 1.5}]
    assert warmup._settings(registry.get_method("tc-tfirst")) == [{"k": 3, "t": 0.5}]


def test_the_command_line_flag_warms_up_and_exits(monkeypatch, capsys):
    from microagg_desktop.app import main

    called = []
    monkeypatch.setattr(warmup, "warm_up", lambda: called.append(1) or 1.0)
    assert main(["microagg-desktop", "--warm-up"]) == 0
    assert called == [1] and "The engine is ready" in capsys.readouterr().out


@pytest.mark.gui
def test_the_window_shows_the_preparation_until_the_child_is_done(qtbot, window, tmp_path,
                                                                  monkeypatch):
    from microagg_desktop import engine_warmup

    monkeypatch.setattr(engine_warmup, "_stamp", lambda version: tmp_path / f"w-{version}")
    child = (sys.executable, ["-c", "import time; time.sleep(0.5)"])
    warm = engine_warmup.EngineWarmUp(window, "9.9", command=child)
    assert warm.needed()
    assert warm.start()
    assert warm.label.isVisibleTo(window) and warm.running()
    window.grab().save(str(tmp_path / "preparing.png"))
    with qtbot.waitSignal(warm.process.finished, timeout=20_000):
        pass
    assert not warm.label.isVisibleTo(window)
    assert (tmp_path / "w-9.9").exists()
    # Later starts skip it; a failed child leaves no stamp, so the next start tries again.
    assert not engine_warmup.EngineWarmUp(window, "9.9", command=child).start()
    failing = engine_warmup.EngineWarmUp(window, "10.0",
                                         command=(sys.executable, ["-c", "raise SystemExit(3)"]))
    assert failing.start()
    with qtbot.waitSignal(failing.process.finished, timeout=20_000):
        pass
    assert not (tmp_path / "w-10.0").exists() and not failing.label.isVisibleTo(window)


def test_the_switch_turns_it_off(monkeypatch, tmp_path, qtbot, window):
    from microagg_desktop import engine_warmup

    monkeypatch.setattr(engine_warmup, "_stamp", lambda version: tmp_path / "w")
    monkeypatch.setenv("MICROAGG_NO_WARMUP", "1")
    assert not engine_warmup.EngineWarmUp(window, "1").start()
