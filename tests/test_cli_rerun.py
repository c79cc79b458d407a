"""``microagg rerun``: a project saved through the API, re-run on the command line."""

from __future__ import annotations

import json

import pytest

from core import RoleSpec, anonymize, read_table
from core.cli.main import main
from core.project import Project, save_project
from core.report.documents import export_result

ROLES = RoleSpec(quasi_identifiers=("age", "income"), identifiers=("person_id",),
                 confidential=("health_spending",))


@pytest.fixture
def saved(tmp_path, sample_path):
    data = tmp_path / "survey.csv"
    data.write_bytes(sample_path.read_bytes())
    project = Project.for_data(data, roles=ROLES)
    table = read_table(data)
    results = [anonymize(table, ROLES, "mdav", k=4),
               anonymize(table, ROLES, "tc-merge", k=3, t=0.3, intruder="random", seed=5)]
    for result in results:
        project.add_run(result)
    path = save_project(project, tmp_path / "study.microagg")
    return path, data, results


@pytest.mark.parametrize("number", [1, 2])
def test_rerun_writes_what_the_api_released(saved, tmp_path, capsys, number):
    path, data, results = saved
    export_result(results[number - 1], tmp_path / "expected.csv", source=data.name)
    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    code = main(["rerun", str(path), "--run", str(number), "-o", str(out),
                 "--summary-json", str(summary)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"run {number}" in captured.out
    assert out.read_bytes() == (tmp_path / "expected.csv").read_bytes()
    assert json.loads(summary.read_text())["il"] == pytest.approx(results[number - 1].metrics.il)


def test_a_changed_data_file_exits_2_naming_it(saved, tmp_path, capsys):
    path, data, _ = saved
    data.write_bytes(data.read_bytes() + b"P999999,North,40,12,20000,40,2,100.0,none\r\n")
    code = main(["rerun", str(path), "--run", "1", "-o", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "survey.csv" in err and "has changed" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.csv").exists()


def test_a_data_file_changed_while_it_is_read_exits_2(saved, tmp_path, capsys,
                                                      monkeypatch):
    """The bytes checked against the project are the bytes read: a file written to
    between the check and the read is refused."""
    import sys
    rerun_code = sys.modules["core.project.rerun"]
    path, data, _ = saved
    real = rerun_code.read_table_with_report

    def read_then_edit(*args, **kwargs):
        out = real(*args, **kwargs)
        data.write_bytes(data.read_bytes() + b"\r\n")
        return out

    monkeypatch.setattr(rerun_code, "read_table_with_report", read_then_edit)
    code = main(["rerun", str(path), "--run", "1", "-o", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "changed while it was being read" in err
    assert not (tmp_path / "out.csv").exists()


def test_a_moved_data_file_is_found_with_data(saved, tmp_path, capsys):
    path, data, results = saved
    moved = tmp_path / "elsewhere.csv"
    data.rename(moved)
    code = main(["rerun", str(path), "--run", "1", "-o", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "--data" in err and "does not exist" in err
    code = main(["rerun", str(path), "--run", "1", "-o", str(tmp_path / "out.csv"),
                 "--data", str(moved)])
    assert code == 0, capsys.readouterr().err


def test_a_bad_run_number_exits_2_with_the_valid_numbers(saved, tmp_path, capsys):
    path, _, _ = saved
    code = main(["rerun", str(path), "--run", "7", "-o", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "no run 7" in err and "1, 2" in err
    code = main(["rerun", str(path), "--run", "two", "-o", str(tmp_path / "out.csv")])
    assert code == 2 and "--run needs a run number" in capsys.readouterr().err


@pytest.mark.parametrize("content", [b"{\"format\": \"microagg-project\", \"vers",
                                     b"\xff\xfe\x00garbage", b"{}"])
def test_a_corrupt_project_exits_2(tmp_path, capsys, content):
    path = tmp_path / "broken.microagg"
    path.write_bytes(content)
    code = main(["rerun", str(path), "--run", "1", "-o", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "broken.microagg" in err and "Traceback" not in err


def test_existing_output_needs_overwrite(saved, tmp_path, capsys):
    path, _, _ = saved
    out = tmp_path / "out.csv"
    out.write_text("keep me")
    code = main(["rerun", str(path), "--run", "1", "-o", str(out)])
    assert code == 2 and "--overwrite" in capsys.readouterr().err
    assert out.read_text() == "keep me"
    assert main(["rerun", str(path), "--run", "1", "-o", str(out), "--overwrite"]) == 0
