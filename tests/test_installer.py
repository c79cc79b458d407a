"""The packaging: the self-test, build.py's helpers and the PyInstaller spec (no build).

The full bundle is built and its launchers' ``--self-test`` run by ``.ci/run``; these
tests only check the pieces, quickly.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import importlib.metadata as metadata
import importlib.util
import io
import runpy
import socket
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from core.methods.registry import K, Interval, Method, Parameter, _REGISTRY, methods
from microagg_desktop import selftest

REPO = Path(__file__).resolve().parent.parent
INSTALLER = REPO / "installer"


def _load_build():
    spec = importlib.util.spec_from_file_location("microagg_installer_build",
                                                  INSTALLER / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


build = _load_build()


def _run(gui: bool) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = selftest.run_self_test(gui=gui, out=out)
    return code, out.getvalue().splitlines()


def _check_lines(lines: list[str]) -> None:
    assert lines[0].startswith("MicroAgg Desktop self-test")
    for line in lines[1:-1]:
        assert line.startswith(("ok: ", "skipped: ")), line
    assert lines[-1].startswith("self-test passed")


# -- the self-test ------------------------------------------------------------------------


def _line(lines: list[str], start: str) -> str:
    return next(line for line in lines if line.startswith(start))


def test_self_test_of_the_console_launcher_passes():
    code, lines = _run(gui=False)
    assert code == 0, "\n".join(lines)
    _check_lines(lines)
    assert any(line.startswith("ok: run MDAV") for line in lines)
    assert any(line.startswith("ok: export XLSX and read it back") for line in lines)
    assert "4 figures read back" in _line(lines, "ok: export the report and read it back")
    assert "'region' read as 5 labelled categories" in _line(lines, "ok: read an SPSS file")
    assert "the same release" in _line(lines, "ok: save, open and re-run a project")
    assert any(line.startswith("ok: run the command line") for line in lines)
    assert "the same release" in _line(lines, "ok: run microagg rerun on the project")
    assert "from the installed distributions" in _line(lines,
                                                       "ok: read the bill of materials")
    assert not any("PDF" in line or "main window" in line for line in lines)
    assert lines[-2] == "ok: offline: no network access was attempted"
    assert all(len(line) <= 140 for line in lines), "keep every step's line short"


@pytest.mark.gui
def test_self_test_of_the_windowed_launcher_builds_the_main_window(qapp):
    code, lines = _run(gui=True)
    assert code == 0, "\n".join(lines)
    _check_lines(lines)
    assert "4 images" in _line(lines, "ok: write the PDF report")
    walk = _line(lines, "ok: walk the main window offscreen")
    assert "runs k = 5, 10" in walk and "compared, back to run 1" in walk
    assert "2 licences" in _line(lines, "ok: open About and the guide")
    assert not any(line.startswith("ok: run the command line") for line in lines)


@pytest.mark.gui
def test_app_main_dispatches_the_flag(qapp, capsys):
    from microagg_desktop.app import main

    assert main(["microagg-desktop", "--self-test"]) == 0
    assert "self-test passed" in capsys.readouterr().out


def test_console_launcher_script_dispatches_the_flag(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["microagg", "--self-test"])
    with pytest.raises(SystemExit) as stopped:
        runpy.run_path(str(INSTALLER / "launch_cli.py"), run_name="__main__")
    assert stopped.value.code == 0
    assert "ok: run the command line" in capsys.readouterr().out


def test_self_test_says_when_no_tcloseness_method_is_registered(monkeypatch):
    for name in [m.name for m in methods() if m.name.startswith("tc-")]:
        monkeypatch.delitem(_REGISTRY, name)
    code, lines = _run(gui=False)
    assert code == 0
    assert any(line.startswith("skipped: t-closeness: no t-closeness method") for line in lines)


def test_self_test_runs_and_verifies_a_registered_tcloseness_method(monkeypatch):
    from core.methods.tcloseness import tc_merge

    def function(data, *, state, k, t):
        confidential = data.table[list(data.roles.confidential)]
        return tc_merge(data.X, confidential, k=k, t=t, state=state).labels

    method = Method(name="tc-selftest-probe", label="probe", function=function,
                    parameters=(K, Parameter("t", Interval(float, 0, 1), 0.3)),
                    description="Algorithm 1 for this test", family="t-closeness")
    for name in [m.name for m in methods() if m.name.startswith("tc-")]:
        monkeypatch.delitem(_REGISTRY, name)
    monkeypatch.setitem(_REGISTRY, method.name, method)
    code, lines = _run(gui=False)
    assert code == 0, "\n".join(lines)
    assert any(line.startswith("ok: run t-closeness (tc-selftest-probe)") for line in lines)
    verify = next(line for line in lines if line.startswith("ok: verify"))
    assert "tc-selftest-probe 5-anonymous" in verify and "tc-selftest-probe 0.3-close" in verify


def test_a_failing_step_is_reported_and_the_exit_code_is_one(monkeypatch):
    import microagg_desktop.paths

    def missing(name):
        raise FileNotFoundError(f"Resource '{name}' is missing")

    monkeypatch.setattr(microagg_desktop.paths, "resource_path", missing)
    code, lines = _run(gui=False)
    assert code == 1
    assert "FAILED: load the sample: FileNotFoundError: Resource 'sample_survey.csv' is " \
           "missing" in lines
    assert "FAILED: run MDAV (an earlier step it needs failed)" in lines
    assert lines[-1].startswith("self-test FAILED")


def test_without_pyreadstat_the_spss_step_and_the_steps_after_it_fail(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyreadstat", None)  # import pyreadstat fails
    code, lines = _run(gui=False)
    assert code == 1
    assert _line(lines, "FAILED: read an SPSS file").startswith(
        "FAILED: read an SPSS file: ModuleNotFoundError")
    assert "FAILED: save, open and re-run a project (an earlier step it needs failed)" \
        in lines
    assert "FAILED: run microagg rerun on the project (an earlier step it needs failed)" \
        in lines
    assert any(line.startswith("ok: run the command line") for line in lines)


def test_network_guard_refuses_internet_sockets_and_restores_them():
    original = socket.getaddrinfo
    with selftest._NoNetwork() as guard:
        with pytest.raises(selftest.NetworkBlocked):
            socket.create_connection(("198.51.100.1", 80), timeout=0.1)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            with pytest.raises(selftest.NetworkBlocked):
                sock.connect(("198.51.100.1", 80))
        left, right = socket.socketpair()  # local sockets still work
        left.close(), right.close()
    assert guard.attempts == ["socket.create_connection", "socket.connect"]
    assert socket.getaddrinfo is original


def test_html_report_round_trip(tmp_path, sample_path):
    from core import RoleSpec, anonymize, read_table
    from microagg_desktop.state import SAMPLE_ROLES

    result = anonymize(read_table(sample_path), RoleSpec.from_mapping(SAMPLE_ROLES), "mdav",
                       k=4)
    path = selftest.write_html_report(result, tmp_path / "r.html", source="a<b>.csv")
    rows = selftest.read_html_report(path)
    assert rows["Source file"] == "a<b>.csv"
    assert rows["Parameter k"] == "4" and rows["Verified"] == "yes"


def test_sample_sav_reads_back_with_its_value_labels_as_categories(tmp_path, sample_path):
    from core import read_table

    table = read_table(sample_path)
    path, labels = selftest.write_sample_sav(table, tmp_path / "s.sav")
    assert labels == sorted(set(table["region"]))
    import pyreadstat

    raw, meta = pyreadstat.read_sav(str(path), apply_value_formats=False)
    assert raw["region"].dtype.kind == "f"  # stored as codes ...
    assert meta.variable_value_labels["region"] == {float(i): label for i, label
                                                    in enumerate(labels, 1)}
    read = read_table(path)  # ... and read as the labels, in the order of the codes
    assert list(read["region"].cat.categories) == labels
    assert list(read["region"].astype(str)) == list(table["region"].astype(str))


def test_report_images_counts_png_figures_and_rejects_others():
    import base64

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n rest").decode()
    page = f'<p><img src="data:image/png;base64,{png}" width="5"></p>' * 2
    assert selftest.report_images(page) == 2
    assert selftest.report_images("<p>no figure</p>") == 0
    other = base64.b64encode(b"GIF89a").decode()
    with pytest.raises(AssertionError, match="not a PNG"):
        selftest.report_images(f'<img src="data:image/png;base64,{other}">')


def _frozen_at(monkeypatch, folder: Path) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(folder / "microagg-desktop"))


def test_frozen_bill_of_materials_is_read_where_build_writes_it(tmp_path, monkeypatch):
    """The About dialog looks beside the executable; build.py writes the CSV into the
    bundle folder, beside both launchers."""
    from microagg_desktop import about

    bundle = tmp_path / build.BUNDLE_NAME
    bundle.mkdir()
    assert build.BOM_NAME == about.BOM_FILE
    packages = build.bundled_packages(["numpy", "pyreadstat", "core", "microagg_desktop"])
    build.write_bill_of_materials(packages, bundle / build.BOM_NAME)
    _frozen_at(monkeypatch, bundle)
    assert about._bundle_file() == bundle / build.BOM_NAME
    detail, components = selftest._bill_of_materials()
    assert detail == f"{len(packages)} components, from {build.BOM_NAME}"
    assert [c.name for c in components] == [p.name for p in packages]


def test_frozen_bill_of_materials_must_be_there(tmp_path, monkeypatch):
    _frozen_at(monkeypatch, tmp_path)
    with pytest.raises(AssertionError, match="no BILL_OF_MATERIALS.csv beside"):
        selftest._bill_of_materials()


# -- build.py -----------------------------------------------------------------------------


@pytest.fixture()
def fake_bundle(tmp_path):
    bundle = tmp_path / "microagg"
    (bundle / "_internal" / "resources").mkdir(parents=True)
    (bundle / "microagg").write_bytes(b"\x7fELF launcher")
    (bundle / "_internal" / "resources" / "sample.csv").write_text("a,b\n1,2\n")
    return bundle


def test_checksums_match_hashlib_and_catch_a_change(fake_bundle):
    sums = build.write_checksums(fake_bundle)
    lines = sums.read_text().splitlines()
    sample = hashlib.sha256((fake_bundle / "_internal/resources/sample.csv").read_bytes())
    launcher = hashlib.sha256(b"\x7fELF launcher")
    assert lines == [f"{sample.hexdigest()}  _internal/resources/sample.csv",
                     f"{launcher.hexdigest()}  microagg"]
    assert build.verify_checksums(fake_bundle) == []
    (fake_bundle / "microagg").write_bytes(b"tampered")
    assert build.verify_checksums(fake_bundle) == ["microagg"]


@pytest.mark.parametrize("kind, suffix", [("gztar", ".tar.gz"), ("zip", ".zip")])
def test_archive_has_one_root_folder(fake_bundle, tmp_path, kind, suffix):
    archive = build.make_archive(fake_bundle, tmp_path / "out", root_name="app-1.0", kind=kind)
    assert archive.name == "out" + suffix
    if kind == "zip":
        names = zipfile.ZipFile(archive).namelist()
    else:
        names = [m.name for m in tarfile.open(archive).getmembers() if m.isfile()]
    assert sorted(names) == ["app-1.0/_internal/resources/sample.csv", "app-1.0/microagg"]


def test_bill_of_materials_lists_what_was_bundled_with_versions_and_licences(tmp_path):
    packages = build.bundled_packages(["numpy", "pandas", "PIL", "core", "microagg_desktop",
                                       "base_library", "libstdc++"])
    by_name = {p.name.lower(): p for p in packages}
    assert packages[0].name == "Python" and packages[0].licence == "PSF-2.0"
    assert by_name["microagg-desktop"].licence == "GPL-3.0-or-later"
    assert by_name["numpy"].version == metadata.version("numpy")
    assert by_name["pillow"].modules == ("PIL",)
    assert "pytest" not in by_name and "hypothesis" not in by_name
    assert by_name["pandas"].licence == "BSD-3-Clause"

    bom = build.write_bill_of_materials(packages, tmp_path / "bom.csv")
    rows = list(csv.DictReader(bom.open(encoding="utf-8")))
    assert {r["name"].lower() for r in rows} == set(by_name)
    assert all(r["version"] and r["licence"] for r in rows)

    notice = build.write_licence_notice(packages, tmp_path / "notice.txt").read_text("utf-8")
    assert f"numpy {metadata.version('numpy')}" in notice
    assert "GNU GENERAL PUBLIC LICENSE" in notice  # the application's own licence


def test_pyside_gets_the_lgpl_text_it_does_not_ship():
    (pyside,) = [p for p in build.bundled_packages(["PySide6"])
                 if p.name.lower().startswith("pyside6")]
    assert any("GNU LESSER GENERAL PUBLIC LICENSE" in text for _, text in pyside.licence_texts)


# -- the spec -----------------------------------------------------------------------------


def _spec_tree() -> ast.Module:
    return ast.parse((INSTALLER / "microagg.spec").read_text(encoding="utf-8"))


def _spec_constant(name: str):
    for node in _spec_tree().body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} is not assigned in the spec")


def test_spec_excludes_the_heavy_unused_modules():
    excludes = set(_spec_constant("QT_EXCLUDES")) | set(_spec_constant("PYTHON_EXCLUDES"))
    for module in ("PySide6.QtWebEngineCore", "PySide6.QtWebEngineWidgets",
                   "PySide6.Qt3DCore", "PySide6.QtQuick", "PySide6.QtQml",
                   "PySide6.QtMultimedia", "PySide6.QtNetwork", "PyQt5", "PyQt6",
                   "tkinter", "IPython", "pytest", "hypothesis", "scipy.optimize"):
        assert module in excludes, module
    # what the application and matplotlib's Qt backend import must stay
    for module in ("PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets", "PySide6.QtSvg",
                   "scipy.spatial", "scipy.sparse", "scipy.linalg", "scipy.special"):
        assert module not in excludes, module


def test_spec_has_a_windowed_and_a_console_launcher_and_no_fixed_paths():
    tree = _spec_tree()
    launchers = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "EXE":
            keywords = {k.arg: k.value for k in node.keywords}
            launchers[ast.literal_eval(keywords["console"])] = keywords["name"].id
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not (len(node.value) > 1 and node.value.startswith(("/", "C:\\"))), \
                node.value  # no fixed paths
    assert launchers == {False: "GUI_NAME", True: "CLI_NAME"}
    assert _spec_constant("GUI_NAME") == "microagg-desktop"
    assert _spec_constant("CLI_NAME") == "microagg"
    assert (INSTALLER / "launch_gui.py").is_file() and (INSTALLER / "launch_cli.py").is_file()


def _analysis_keywords() -> dict:
    for node in ast.walk(_spec_tree()):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Analysis":
            return {k.arg: k.value for k in node.keywords}
    raise AssertionError("the spec has no Analysis")


def test_spec_bundles_every_resource_the_application_reads():
    import fnmatch

    patterns = []
    for item in _analysis_keywords()["datas"].elts:  # (os.path.join(REPO, ..., glob), dest)
        source, destination = item.elts
        if ast.literal_eval(destination) == "resources":
            patterns.append(ast.literal_eval(source.args[-1]))
    for name in ("sample_survey.csv", "guide.md", "LICENSE-GPL-3.0.txt",
                 "LICENSE-LGPL-3.0.txt"):
        assert (REPO / "resources" / name).is_file(), name
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name


def test_spec_imports_what_is_loaded_lazily_and_excludes_none_of_it():
    hidden = _spec_constant("HIDDEN_IMPORTS")
    assert isinstance(_analysis_keywords()["hiddenimports"], ast.Name)
    for module in ("microagg_desktop.selftest", "core.io.read_stat",
                   "pyreadstat._readstat_parser", "pyreadstat._readstat_writer",
                   "microagg_desktop.pdf_report", "matplotlib.backends.backend_agg"):
        assert module in hidden, module
    excluded = _spec_constant("QT_EXCLUDES") + _spec_constant("PYTHON_EXCLUDES")
    for module in hidden + ["narwhals", "PySide6.QtGui"]:
        assert not any(module == e or module.startswith(e + ".") for e in excluded), module
    for module in hidden:
        assert importlib.util.find_spec(module) is not None, module


def test_spec_bundles_the_compiled_kernels_and_the_fast_xlsx_reader():
    """numba (with llvmlite) and python-calamine are collected; the engine as .py files,
    which numba's on-disk cache needs."""
    excluded = _spec_constant("QT_EXCLUDES") + _spec_constant("PYTHON_EXCLUDES")
    for module in ("numba", "llvmlite", "python_calamine", "core.methods.spatial_index"):
        assert not any(module == e or module.startswith(e + ".") for e in excluded), module
    assert "python_calamine" in _spec_constant("HIDDEN_IMPORTS")
    assert _spec_constant("MODULE_COLLECTION_MODE") == {"core": "py"}
    assert isinstance(_analysis_keywords()["module_collection_mode"], ast.Name)


def test_self_test_runs_the_compiled_kernels_against_the_reference():
    code, lines = _run(gui=False)
    assert code == 0, "\n".join(lines)
    assert "equals the reference" in _line(lines, "ok: run the compiled kernels")


_BLOCK_EXCLUDED = """
import importlib.abc, json, sys
excluded = json.loads(sys.argv[1])
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if any(name == e or name.startswith(e + ".") for e in excluded):
            raise ModuleNotFoundError(f"No module named {name!r} (excluded by the spec)")
sys.meta_path.insert(0, Block())
from microagg_desktop.selftest import run_self_test
sys.exit(run_self_test(gui=True))
"""


@pytest.mark.gui
def test_self_test_passes_without_the_modules_the_spec_excludes():
    """What the bundle leaves out is never imported (a fast stand-in for a build)."""
    import json
    import os
    import subprocess

    excluded = _spec_constant("QT_EXCLUDES") + _spec_constant("PYTHON_EXCLUDES")
    done = subprocess.run([sys.executable, "-c", _BLOCK_EXCLUDED, json.dumps(excluded)],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stdout + done.stderr
