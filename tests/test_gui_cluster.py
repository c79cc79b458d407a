"""Method ▸ Advanced: a blocked run on a local Dask cluster from the window."""

from __future__ import annotations

import pandas as pd
import pytest

from microagg_desktop.cluster_panel import dask_available

pytestmark = [pytest.mark.gui,
              pytest.mark.skipif(not dask_available(), reason="the cluster extra is missing")]


def test_the_advanced_choice_runs_blocked_and_reports_the_written_release(qtbot, window,
                                                                          tmp_path):
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 3)
    box = window.method_panel.cluster_box
    assert box.isEnabled() and not box.isChecked() and box.options() is None
    box.setChecked(True)
    box.block_spin.setValue(100)
    assert box.options() == {"scheduler": None, "block_size": 100}
    output = tmp_path / "released_parts"
    window.ask_blocked_output = lambda: str(output)
    shown = []
    window.show_blocked = shown.append
    with qtbot.waitSignal(window.runner.signals.finished, timeout=120_000):
        assert window.run()
    assert window.errors == []
    (result,) = shown
    assert result.verification.passed and result.n_blocks > 1
    assert result.min_group_size >= 3
    parts = sorted(output.iterdir())
    released = pd.concat(pd.read_parquet(part) for part in parts)
    assert len(released) == len(window.table) == result.n_records
    assert "verified" in window.status_label.text() and str(output) in window.status_label.text()
    assert len(window.history) == 0  # a blocked release is not a run of the loaded table


def test_a_bad_scheduler_address_is_a_message_and_the_window_stays_usable(qtbot, window,
                                                                          tmp_path):
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    box = window.method_panel.cluster_box
    box.setChecked(True)
    box.scheduler_edit.setText("tcp://127.0.0.1:1")
    window.ask_blocked_output = lambda: str(tmp_path / "out")
    with qtbot.waitSignal(window.runner.signals.finished, timeout=120_000):
        assert window.run()
    assert len(window.errors) == 1 and "127.0.0.1:1" in window.errors[0]
    assert not (tmp_path / "out").exists()
    box.setChecked(False)
    with qtbot.waitSignal(window.runner.signals.finished, timeout=60_000):
        assert window.run()
    assert window.result is not None and window.result.passed


def test_the_memory_line_counts_a_block_when_the_run_is_blocked(window, monkeypatch):
    """Unblocked, a census run above three quarters of a 4 GiB computer is said to be
    refused; blocked, the line gives what one block needs, and no refusal."""
    import core.data.memory as memory
    from core.data.roles import RoleSpec
    from microagg_desktop.estimate import QuasiIdentifiers

    monkeypatch.setattr(memory, "physical_memory", lambda: 4 * 2**30)
    panel = window.method_panel
    panel.set_method("mdav")
    panel.set_context(5_000_000, RoleSpec(quasi_identifiers=tuple("abcdefg")),
                      QuasiIdentifiers(2, (2, 20, 30, 20, 50)))

    def memory_lines():
        return [line for line in panel.forecast_lines() if line.startswith("Memory")]

    assert "so the run will be refused: run in blocks (Advanced)" in memory_lines()[0]
    panel.cluster_box.setChecked(True)
    panel.cluster_box.block_spin.setValue(250_000)
    assert memory_lines() == ["Memory each block needs at its peak: about 1.0 GiB (blocks "
                              "of about 250,000 records; the categories make 124 "
                              "columns)."]


def test_a_blocked_run_is_refused_while_a_setting_it_does_not_apply_is_on(qtbot, window,
                                                                          tmp_path):
    """Noise, unmasked missing records and a partial intruder are settings a blocked run
    does not apply: it is refused, naming them, and nothing is written."""
    assert window.open_sample()
    window.role_editor.set_role("diagnosis", "non-confidential")
    window.method_panel.set_method("mdav")
    window.method_panel.set_noise(0.5, "health_spending=0:5000", seed=1)
    window.method_panel.cluster_box.setChecked(True)
    asked = []
    window.ask_blocked_output = lambda: asked.append(1) or str(tmp_path / "out")
    assert not window.run()
    assert asked == [] and not (tmp_path / "out").exists()
    (message,) = window.errors
    assert "does not apply Laplace noise on the confidential columns" in message
    assert "untick the blocked run" in message


def test_a_blocked_run_takes_the_attribute_blocks(qtbot, window, tmp_path, monkeypatch):
    from microagg_desktop import main_window
    seen = {}

    def recording(table, *, state, blocks=None, **options):
        seen.update(options, blocks=blocks)
        raise RuntimeError("stop here")

    monkeypatch.setattr(main_window, "run_blocked", recording)
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    window.method_panel.set_blocks("age,income;hours_worked,years_education,household_size")
    window.method_panel.cluster_box.setChecked(True)
    window.ask_blocked_output = lambda: str(tmp_path / "out")
    with qtbot.waitSignal(window.runner.signals.finished, timeout=60_000):
        assert window.run()
    assert seen["blocks"] == "age,income;hours_worked,years_education,household_size"


def test_an_in_memory_run_shown_beside_a_chosen_blocked_run_is_said_so(qtbot, window):
    from tests.gui_helpers import run_and_wait
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    run_and_wait(qtbot, window)
    assert not window.results_panel.is_stale
    window.method_panel.cluster_box.setChecked(True)
    assert window.results_panel.is_stale
    assert "Export writes this run, not a blocked release" in window.stale_text
    window.method_panel.cluster_box.setChecked(False)
    assert not window.results_panel.is_stale


def test_a_blocked_run_that_leaks_through_a_kept_column_says_so(qtbot, window, tmp_path):
    """A kept copy of income with a little noise, run blocked from the window: the
    summary begins with the warning, and the status bar counts it."""
    import numpy as np

    from microagg_desktop.cluster_panel import blocked_summary

    assert window.open_sample()
    table = window.table.copy()
    rng = np.random.default_rng(3)
    table["income_reported"] = table["income"] + rng.normal(
        0, 0.05 * table["income"].std(), len(table))
    roles = {c: window.role_editor.roles().role_of(c).value for c in window.table.columns}
    roles["income_reported"] = "confidential"
    window.set_table(table, "survey_copy.csv", roles=roles)
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 5)
    box = window.method_panel.cluster_box
    box.setChecked(True)
    box.block_spin.setValue(300)
    window.ask_blocked_output = lambda: str(tmp_path / "parts")
    shown = []
    window.show_blocked = shown.append
    with qtbot.waitSignal(window.runner.signals.finished, timeout=120_000):
        assert window.run()
    (result,) = shown
    assert [w.kind for w in result.warnings] == ["kept-column-follows"]
    summary = blocked_summary(result)
    assert summary.startswith("⚠ Read before publishing:\n⚠ Column 'income_reported', "
                              "released as it is, nearly follows quasi-identifier 'income'")
    assert "1 warning(s) to read before publishing" in window.status_label.text()
