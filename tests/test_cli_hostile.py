"""The command line against hostile input: every mistake is refused before the run, on
one line with exit code 2, and a failed command leaves no output behind."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess

import pandas as pd
import pytest

from core.cli.main import main

QI = ["age", "income", "hours_worked"]


def run(*argv):
    return main([str(a) for a in argv])


def refused(capsys, *argv, before_any_output=True) -> str:
    """Run a command that must be refused; its one stderr line."""
    code = run(*argv)
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert captured.err.startswith("microagg: error: ") and captured.err.count("\n") == 1
    assert "Traceback" not in captured.err and "internal error" not in captured.err
    assert ".partial" not in captured.err and ".microagg-probe" not in captured.err
    assert captured.out == "" or not before_any_output
    return captured.err


@pytest.fixture
def never_read(monkeypatch):
    """Reading an input ends the test: an option must be refused before any work."""
    def fail(*args, **kwargs):
        raise AssertionError("the input was read before the options were checked")
    cli = importlib.import_module("core.cli.main")  # core.cli.main is also the function
    for name in ("read_table", "read_table_with_report"):
        monkeypatch.setattr(cli, name, fail)


@pytest.fixture
def locked(tmp_path):
    """A folder no file can be created in: immutable as root, read-only otherwise."""
    folder = tmp_path / "locked"
    folder.mkdir()
    as_root = getattr(os, "geteuid", lambda: -1)() == 0
    if as_root:
        if shutil.which("chattr") is None or \
                subprocess.run(["chattr", "+i", str(folder)]).returncode != 0:
            pytest.skip("chattr +i is not available here")
    else:
        folder.chmod(0o555)
    try:
        try:
            (folder / "probe").touch()
        except OSError:
            yield folder
        else:
            pytest.skip("this file system lets a read-only folder be written")
    finally:
        if as_root:
            subprocess.run(["chattr", "-i", str(folder)])
        else:
            folder.chmod(0o755)


@pytest.fixture
def income_unmasked(tmp_path, sample_path):
    """A release of ``age`` alone (k = 3), with ``income`` copied as it is."""
    masked = tmp_path / "age_only.csv"
    assert run("anonymize", sample_path, "-o", masked, "--k", 3, "--qi", "age",
               "--quiet") == 0
    return masked


# 1. verify --blocks: checked as anonymize checks them.

def test_verify_refuses_blocks_that_leave_a_quasi_identifier_out(income_unmasked, sample_path,
                                                                 capsys):
    assert run("verify", sample_path, income_unmasked, "--qi", "age", "income",
               "--k", 3) == 1
    capsys.readouterr()
    err = refused(capsys, "verify", sample_path, income_unmasked, "--qi", "age", "income",
                  "--k", 3, "--blocks", "age")
    assert "Quasi-identifier 'income' is in no block" in err


def test_verify_refuses_a_block_naming_an_unknown_column(income_unmasked, sample_path,
                                                         capsys):
    err = refused(capsys, "verify", sample_path, income_unmasked, "--qi", "age", "income",
                  "--k", 3, "--blocks", "age;nosuch")
    assert "names 'nosuch', which is not a quasi-identifier" in err


# 2. Unwritable destinations: refused before the run; a write that fails leaves nothing.

@pytest.mark.parametrize("option", ["--summary-json", "--report", "-o"])
def test_anonymize_refuses_an_unwritable_folder_before_the_run(tmp_path, sample_path, capsys,
                                                               locked, never_read, option):
    name = {"--summary-json": "s.json", "--report": "r.html", "-o": "m.csv"}[option]
    out = tmp_path / "out"
    out.mkdir()
    outputs = {"-o": out / "m.csv", option: locked / name}
    err = refused(capsys, "anonymize", sample_path, "--k", 3, "--qi", *QI,
                  *[str(a) for pair in outputs.items() for a in pair])
    assert f"Cannot write '{locked / name}'" in err and "not writable" in err
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("command", ["verify", "measure"])
def test_verify_and_measure_refuse_an_unwritable_summary_folder(income_unmasked, sample_path,
                                                                capsys, locked, command):
    k = ["--k", 3] if command == "verify" else []
    err = refused(capsys, command, sample_path, income_unmasked, "--qi", "age", *k,
                  "--summary-json", locked / "s.json")
    assert f"Cannot write '{locked / 's.json'}'" in err and "not writable" in err


def test_a_report_that_cannot_be_written_leaves_no_released_table(tmp_path, sample_path,
                                                                 capsys, monkeypatch):
    def full_disk(path, write):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("core.report.documents.atomic_write", full_disk)
    err = refused(capsys, "anonymize", sample_path, "-o", tmp_path / "m.csv",
                  "--summary-json", tmp_path / "s.json", "--report", tmp_path / "r.html",
                  "--k", 3, "--qi", *QI, "--quiet")
    assert f"Cannot write '{tmp_path / 'r.html'}': No space left on device" in err
    assert list(tmp_path.iterdir()) == []


def test_verify_summary_that_cannot_be_written_is_one_line(income_unmasked, sample_path,
                                                          capsys, monkeypatch):
    def denied(path, write):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr("core.cli.release.atomic_write", denied)
    summary = income_unmasked.parent / "v.json"
    err = refused(capsys, "verify", sample_path, income_unmasked, "--qi", "age", "--k", 3,
                  "--summary-json", summary, before_any_output=False)
    assert f"Cannot write '{summary}': Permission denied" in err


# 3. Output formats: checked before the run.

@pytest.mark.parametrize("option, name, message", [
    ("-o", "m.json", "use a .csv, .xlsx or .parquet file name"),
    ("--report", "r.pdf", "use a .html file name"),
])
def test_an_output_format_not_written_is_refused_before_the_run(tmp_path, sample_path,
                                                                capsys, never_read, option,
                                                                name, message):
    outputs = {"-o": tmp_path / "m.csv", option: tmp_path / name}
    err = refused(capsys, "anonymize", sample_path, "--k", 3, "--qi", *QI,
                  *[str(a) for pair in outputs.items() for a in pair])
    assert name in err and message in err
    assert list(tmp_path.iterdir()) == []


# 4. --seed: a whole number from 0.

def test_a_negative_seed_is_refused(tmp_path, sample_path, income_unmasked, capsys):
    err = refused(capsys, "anonymize", sample_path, "-o", tmp_path / "m2.csv", "--k", 3,
                  "--qi", *QI, "--seed", -1, "--intruder", "random")
    assert "--seed must be a whole number from 0; got '-1'" in err
    err = refused(capsys, "measure", sample_path, income_unmasked, "--qi", "age", "income",
                  "--seed", -1, "--scenarios", "random", "--scenario-size", 1)
    assert "--seed must be a whole number from 0; got '-1'" in err


# 5. measure --strata: the figures of a stratified release, from its file.

def test_measure_with_strata_reproduces_the_figures_of_a_stratified_run(tmp_path, capsys):
    # Both strata hold the same values: their groups release the same tuples, one class
    # of the file without the stratum, two with it.
    half = pd.DataFrame({"age": [20 + i % 7 for i in range(30)],
                         "income": [1000 + 10 * (i % 5) for i in range(30)]})
    table = pd.concat([half.assign(region="North"), half.assign(region="South")])
    original, masked = tmp_path / "o.csv", tmp_path / "m.csv"
    table.to_csv(original, index=False)
    run_summary, measured = tmp_path / "run.json", tmp_path / "measure.json"
    assert run("anonymize", original, "-o", masked, "--k", 3, "--qi", "age", "income",
               "--strata", "region", "--summary-json", run_summary, "--quiet") == 0
    assert run("measure", original, masked, "--qi", "age", "income", "--strata", "region",
               "--summary-json", measured) == 0
    expected, got = json.loads(run_summary.read_text()), json.loads(measured.read_text())
    assert got["k_prime"] == pytest.approx(expected["k_prime"])
    assert got["max_record_risk"] == pytest.approx(expected["max_record_risk"])
    assert run("measure", original, masked, "--qi", "age", "income", "--summary-json",
               tmp_path / "merged.json") == 0
    assert json.loads((tmp_path / "merged.json").read_text())["k_prime"] > got["k_prime"]
    capsys.readouterr()
    err = refused(capsys, "measure", original, masked, "--qi", "age", "--strata", "zone")
    assert "Stratum column 'zone' is not in the original table" in err


# 6. Messages and the order of the checks.

def test_a_column_listed_twice_is_named_as_such(tmp_path, sample_path, capsys):
    err = refused(capsys, "anonymize", sample_path, "-o", tmp_path / "m.csv", "--k", 3,
                  "--qi", "age", "age")
    assert "'age' is listed twice" in err and "two roles" not in err


OUT_OF_RANGE = "--t must be a number in the range (0, 1]"


@pytest.mark.parametrize("extra, message", [
    (["--confidential", "health_spending", "--t", 2], OUT_OF_RANGE),
    (["--confidential", "health_spending", "--t", 0], OUT_OF_RANGE),
    (["--t", 0.5], "needs both --t and --confidential"),
])
def test_verify_checks_t_before_verifying(income_unmasked, sample_path, capsys, extra,
                                          message):
    err = refused(capsys, "verify", sample_path, income_unmasked, "--qi", "age", "--k", 3,
                  *extra)
    assert message in err


def test_measure_random_scenarios_name_the_size_option(income_unmasked, sample_path, capsys):
    err = refused(capsys, "measure", sample_path, income_unmasked, "--qi", "age", "income",
                  "--scenarios", "random")
    assert "--scenarios random needs --scenario-size" in err


# 7. The run line counts the released table's classes when groups merged into one.

def test_the_run_line_gives_the_classes_when_groups_release_the_same_values(tmp_path,
                                                                           capsys):
    spread = pd.DataFrame({"age": range(20, 50), "income": range(1000, 4000, 100)})
    twins = pd.DataFrame({"age": [35] * 20, "income": [2500] * 20})
    table = pd.concat([spread, twins], ignore_index=True)
    original, masked = tmp_path / "o.csv", tmp_path / "m.csv"
    table.to_csv(original, index=False)
    assert run("anonymize", original, "-o", masked, "--k", 5, "--qi", "age", "income",
               "--quiet") == 0
    line = capsys.readouterr().out.splitlines()[0]
    sizes = pd.read_csv(masked).groupby(["age", "income"]).size()
    assert sizes.max() >= 20 and f"in {len(table) // 5} groups (sizes 5-5)" in line
    assert (f"; the released table has {len(sizes)} classes "
            f"(sizes {sizes.min()}-{sizes.max()})") in line
    spread.to_csv(original, index=False)  # no two groups alike: the line as before
    assert run("anonymize", original, "-o", tmp_path / "spread.csv", "--k", 5, "--qi",
               "age", "income", "--quiet") == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert "in 6 groups (sizes 5-5), IL = " in line and "classes" not in line
