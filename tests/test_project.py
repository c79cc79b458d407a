"""Project files: settings and roles survive JSON, a saved run re-runs exactly, the
"copy as command" line reproduces the release through the real command line."""

from __future__ import annotations

import hashlib
import inspect
import json
import shlex

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import MicroaggError, RoleSpec, anonymize, read_table
from core.cli.main import main
from core.io.read import read_table_with_report
from core.project import (Project, ReadSettings, RunSettings, command_line, file_sha256,
                          load_project, rerun, roles_from_dict, roles_to_dict, save_project)
from core.report.documents import export_result

QI = ("age", "years_education", "income")


@pytest.fixture
def data(tmp_path, sample_path):
    path = tmp_path / "survey.csv"
    path.write_bytes(sample_path.read_bytes())
    return path


def _roles(**extra):
    return RoleSpec(quasi_identifiers=QI, identifiers=("person_id",), **extra)


RUNS = {
    "k-anonymity": (_roles(), dict(method="mdav", k=4, growth="nc")),
    "t-closeness": (_roles(confidential=("health_spending",)),
                    dict(method="tc-merge", k=3, t=0.3)),
    "noise with a seed": (_roles(confidential=("health_spending",)),
                          dict(method="mdav", k=3, dp_epsilon=1.0, seed=7,
                               confidential_bounds="health_spending=0:20000")),
    "random intruder": (_roles(), dict(method="vmdav", k=3, intruder="random", seed=11)),
    "strata and blocks": (_roles(strata=("region",)),
                          dict(method="mdav", k=3, blocks="age,income;years_education",
                               merge_small_strata=True)),
}


def _with_gaps(path):
    table = pd.read_csv(path)
    table.loc[[3, 10, 42], "income"] = np.nan
    table.to_csv(path, index=False)


@pytest.mark.parametrize("name", [*RUNS, "missing excluded"])
def test_a_saved_run_reruns_exactly(data, tmp_path, name):
    roles, options = RUNS.get(name, RUNS["k-anonymity"])
    if name == "missing excluded":
        _with_gaps(data)
        options = {**options, "missing": "exclude"}
    table = read_table(data)
    first = anonymize(table, roles, **options)
    project = Project.for_data(data, roles=roles)
    project.add_run(first, label=name)
    saved = save_project(project, tmp_path / "study.microagg")
    loaded = load_project(saved)
    assert loaded.runs[0].settings == RunSettings.from_result(first)
    again = rerun(loaded, 1)
    pd.testing.assert_frame_equal(again.masked, first.masked)
    assert again.summary()["il"] == first.summary()["il"]
    if name == "missing excluded":
        assert again.excluded.tolist() == [3, 10, 42]


def test_rerun_refuses_a_changed_file_and_finds_a_moved_one(data, tmp_path):
    roles, options = RUNS["k-anonymity"]
    project = Project.for_data(data, roles=roles)
    project.add_run(anonymize(read_table(data), roles, **options))
    moved = tmp_path / "moved.csv"
    moved.write_bytes(data.read_bytes())
    data.write_bytes(data.read_bytes().replace(b"P100000,North,79", b"P100000,North,78"))
    with pytest.raises(MicroaggError, match=f"The data file {data} has changed since the "
                                            "project was saved .*cannot be reproduced"):
        rerun(project, 1)
    assert rerun(project, 1, data_path=moved).passed
    with pytest.raises(MicroaggError, match="no run 5. Its runs: 1"):
        rerun(project, 5, data_path=moved)


def test_settings_give_exactly_anonymize_keywords():
    s = RunSettings("mdav", {"k": 5, "growth": "nn", "refine": "none"}, blocks="a;b",
                    dp_epsilon=0.5, confidential_bounds="x=0.0:1.0", missing="exclude")
    accepted = set(inspect.signature(anonymize).parameters) - {"table", "roles", "state",
                                                               "params"}
    assert set(s.kwargs()) - {"k", "growth", "refine"} == accepted
    assert RunSettings.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    with pytest.raises(MicroaggError, match="no 'seed' key"):
        RunSettings.from_dict({k: v for k, v in s.to_dict().items() if k != "seed"})


def test_settings_from_the_windows_request():
    roles = _roles()
    request = {"roles": roles, "method": "mdav", "blocks": None, "merge_small_strata": False,
               "intruder": "pairs", "dp_epsilon": 2.0,
               "confidential_bounds": "income=0:200000", "seed": 3, "k": 5}
    s = RunSettings.from_request(request)
    assert s == RunSettings("mdav", {"k": 5, "growth": "nn", "refine": "none"},
                            intruder="pairs", seed=3, dp_epsilon=2.0,
                            confidential_bounds="income=0:200000")
    with pytest.raises(MicroaggError, match="no parameter 'gamma'"):
        RunSettings.from_request({**request, "gamma": 0.3})


def test_options_given_as_sequences_and_mappings_become_text():
    table = pd.DataFrame({"a": [1.0, 2, 3, 4, 5, 6], "b": [6.0, 5, 4, 3, 2, 1],
                          "c": [1.0, 1, 2, 2, 3, 3]})
    roles = RoleSpec(quasi_identifiers=("a", "b"), confidential=("c",))
    result = anonymize(table, roles, k=2, blocks=[("a",), ("b",)], known=[["a", "b"]],
                       dp_epsilon=1.0, confidential_bounds={"c": (0, 3.5)})
    s = RunSettings.from_result(result)
    assert (s.blocks, s.known, s.confidential_bounds) == ("a;b", "a,b", "c=0.0:3.5")
    pd.testing.assert_frame_equal(anonymize(table, roles, **s.kwargs()).masked,
                                  result.masked)


orders = st.lists(st.one_of(st.integers(-5, 99), st.floats(-3, 3, allow_nan=False),
                            st.text("abcxyz ", min_size=1, max_size=4)),
                  min_size=2, max_size=5, unique_by=str)


@settings(max_examples=40, deadline=None)
@given(order=orders, nominal=st.booleans())
def test_roles_survive_json(order, nominal):
    roles = RoleSpec(quasi_identifiers=("q", "n", "x"), confidential=("c",),
                     identifiers=("id",), non_confidential=("z",), strata=("s",),
                     levels={"n": "nominal" if nominal else "numeric"}, orders={"q": order})
    back = roles_from_dict(json.loads(json.dumps(roles_to_dict(roles))))
    assert back == roles
    assert [type(v) for v in back.order_of("q")] == [type(v) for v in order]


def test_project_file_round_trip_and_sha(data, tmp_path):
    roles, options = RUNS["t-closeness"]
    project = Project.for_data(data, read_settings=ReadSettings(delimiter=","), roles=roles)
    project.add_run(anonymize(read_table(data), roles, **options), label="first")
    project.add_run(anonymize(read_table(data), roles, **{**options, "t": 0.4}))
    path = save_project(project, tmp_path / "p.microagg")
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert (saved["format"], saved["version"]) == ("microagg-project", 1)
    assert load_project(path) == project
    assert [r.number for r in project.runs] == [1, 2] and project.selected == 2
    assert project.runs[1].label == "Run 2"
    assert set(project.runs[0].headline) == {"il", "k_prime", "dld", "passed", "n_records"}
    assert project.data_sha256 == hashlib.sha256(data.read_bytes()).hexdigest()
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(range(256)) * 9000)  # more than one chunk
    assert file_sha256(big) == hashlib.sha256(big.read_bytes()).hexdigest()


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ('{"format": "other", "version": 1, "data": {}, "roles": {}, "runs": [], '
     '"selected": null}', "not a MicroAgg project"),
    ('{"format": "microagg-project", "version": 9, "data": {}, "roles": {}, "runs": [], '
     '"selected": null}', "version 9"),
    ('{"format": "microagg-project", "version": 1, "roles": {}, "runs": [], '
     '"selected": null}', "no 'data' key"),
    ("[1, 2]", "expected a JSON object"),
])
def test_bad_project_files_are_refused_by_name(tmp_path, text, message):
    path = tmp_path / "bad.microagg"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(MicroaggError, match=message) as caught:
        load_project(path)
    assert "bad.microagg" in str(caught.value)


def test_a_run_without_a_key_is_named(data, tmp_path):
    roles, options = RUNS["k-anonymity"]
    project = Project.for_data(data, roles=roles)
    project.add_run(anonymize(read_table(data), roles, **options))
    content = project.to_dict()
    del content["runs"][0]["settings"]["missing"]
    path = tmp_path / "p.microagg"
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(MicroaggError, match="no 'missing' key"):
        load_project(path)


COMMAND_CASES = {
    **RUNS,
    "ordinal and nominal": (
        RoleSpec(quasi_identifiers=("age", "years_education", "region"),
                 identifiers=("person_id",), levels={"region": "nominal"},
                 orders={"years_education": tuple(range(0, 25))}),
        dict(method="mdav", k=3, known="age,region;years_education")),
    "missing excluded": (_roles(), dict(method="mdav", k=3, missing="exclude")),
}


@pytest.mark.parametrize("name", COMMAND_CASES)
def test_copied_command_reproduces_the_release(data, tmp_path, name, capsys):
    roles, options = COMMAND_CASES[name]
    read = ReadSettings()
    if name == "missing excluded":
        _with_gaps(data)
    if name == "noise with a seed":  # a file that needs read options
        frame = pd.read_csv(data)
        frame.to_csv(data, sep=";", decimal=",", index=False)
        read = ReadSettings(delimiter=";", decimal=",", encoding="utf-8")
    table, _ = read_table_with_report(data, **read.kwargs())
    expected = anonymize(table, roles, **options)
    export_result(expected, tmp_path / "expected.csv", source=data.name)
    command = command_line(RunSettings.from_result(expected), roles, data,
                           tmp_path / "out dir.csv", read_settings=read)
    argv = shlex.split(command)
    assert argv[:2] == ["microagg", "anonymize"]
    assert main(argv[1:]) == 0, capsys.readouterr().err
    assert (tmp_path / "out dir.csv").read_bytes() == (tmp_path / "expected.csv").read_bytes()


def test_command_line_quotes_and_spells_every_option():
    s = RunSettings("tc-merge", {"k": 3, "t": 0.25, "base": "mdav"}, seed=4,
                    merge_small_strata=True, missing="exclude", known="a;b c")
    roles = RoleSpec(quasi_identifiers=("a", "b c"), strata=("s",), confidential=("x",),
                     orders={"a": ("lo", "hi")})
    line = command_line(s, roles, "in file.csv", "out.csv",
                        read_settings=ReadSettings(delimiter="\t", thousands=""))
    argv = shlex.split(line)
    assert argv[2] == "in file.csv" and "'b c'" in line
    for pair in (["--t", "0.25"], ["--seed", "4"], ["--missing", "exclude"],
                 ["--ordinal", "a=lo,hi"], ["--strata", "s"], ["--delimiter", "tab"],
                 ["--thousands", "none"], ["--base", "mdav"], ["--known", "a;b c"]):
        assert any(argv[i:i + 2] == pair for i in range(len(argv))), pair
    assert "--merge-small-strata" in argv
    with pytest.raises(MicroaggError, match="comma"):
        command_line(s, RoleSpec(quasi_identifiers=("a",), orders={"a": ("x,y", "z")}),
                     "in.csv", "out.csv")


def test_a_history_record_becomes_a_run_and_gives_its_request_back(data):
    import datetime as dt
    from types import SimpleNamespace

    import core.project as projects

    roles, _ = RUNS["k-anonymity"]
    request = {"roles": roles, "method": "mdav", "blocks": None, "merge_small_strata": False,
               "intruder": "all", "k": 4}
    record = SimpleNamespace(number=3, request=request, created=dt.datetime(2024, 5, 1, 9),
                             measures={"il": np.float64(1.5), "k_prime": float("inf")})
    run = projects.ProjectRun.from_record(record)
    assert (run.number, run.label, run.created) == (3, "Run 3", "2024-05-01T09:00:00")
    assert run.headline == {"il": 1.5, "k_prime": None}
    back = run.request()
    assert back["roles"] == roles and back["k"] == 4 and back["method"] == "mdav"
    table = read_table(data)
    pd.testing.assert_frame_equal(anonymize(table, **back).masked,
                                  anonymize(table, **request).masked)
